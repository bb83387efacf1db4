//! A run's settings and the result document it starts from, as its options give them.

use chrono::Utc;

use crate::cli::SweepArgs;
use crate::host::HostInfo;
use crate::host::counters::CounterStatus;
use crate::result::{RunDocument, RunSettings, SCHEMA, Tool};
use crate::sweep::runner::LevelSettings;
use crate::workload::{LevelLength, WorkloadInfo};

/// The width of the intervals a fixed-time level keeps unless `--interval` says.
const DEFAULT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// The levels' settings: batches, precision, fixed time, warm-up and intervals.
pub(super) fn level_settings(args: &SweepArgs) -> LevelSettings {
    LevelSettings {
        repeat: args.repeat(),
        precision: args.precision,
        max_repeat: args.max_repeat().max(args.repeat()),
        duration: args.duration,
        warmup: args.warmup,
        interval: args.interval.unwrap_or(DEFAULT_INTERVAL),
        interval_histograms: args.interval.is_some(),
        start_at: None,
        sessions: None,
        campaign: None,
        length: LevelLength::Run,
        cpu_bound: true,
    }
}

/// The document a run starts with, before its first level: no level, not complete.
pub(super) fn new_document(
    args: &SweepArgs,
    settings: &LevelSettings,
    command_line: Vec<String>,
    host: HostInfo,
    workload: WorkloadInfo,
    plan: &[usize],
) -> RunDocument {
    let now = Utc::now();
    RunDocument {
        schema: SCHEMA.to_string(),
        tool: Tool {
            name: "corescale".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        },
        command_line,
        tags: args.tags.iter().cloned().collect(),
        complete: false,
        stop_reason: None,
        started_at: now,
        updated_at: now,
        host,
        workload,
        campaign: None,
        settings: RunSettings {
            mode: settings.mode(),
            plan: plan.to_vec(),
            rates: Vec::new(),
            repeat: settings.repeat,
            precision_target_pct: settings.precision.map(|fraction| fraction * 100.0),
            max_repeat: settings.max_repeat,
            duration_s: settings.duration.map(|duration| duration.as_secs_f64()),
            warmup_s: settings.warmup.map(|warmup| warmup.as_secs_f64()),
            pin: args.pin,
        },
        hw_counters: CounterStatus {
            available: false,
            reason: Some("no level measured yet".to_string()),
        },
        levels: Vec::new(),
        checked_after_run: None,
        search: None,
    }
}
