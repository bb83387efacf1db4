//! The whole sweep: every level of the plan in order (each worker count closed-loop, or at
//! each `--rate` step after the closed-loop level its share needs), each measured by the
//! runner, summarised into the run's document and handed to an observer, which keeps it (the
//! command writes the files); a stop request ends the sweep after the current level. The
//! command only builds the plan and wires the observer.

use anyhow::Result;
use chrono::Utc;

use super::campaign::Campaign;
use super::progress::Progress;
use super::runner::{LevelSettings, SessionNumbers, SessionsReady, measure_level};
use super::steps::LevelStep;
use super::stop;
use crate::format::{significant, workers_text};
use crate::host::counters::CounterStatus;
use crate::host::pinning::{self, Pin};
use crate::latency::OfferedRate;
use crate::result::summary::summarize_document;
use crate::result::{Level, RunDocument};
use crate::workload::Workload;

/// How late a campaign part's level may start before it is said (a sleep's wake-up on a busy
/// host takes a few milliseconds).
const LATE_START_MS: i64 = 100;

/// What the user must know about a level as soon as it ends: interference, missed precision.
pub(super) fn level_troubles(level: &Level, settings: &LevelSettings) -> Vec<String> {
    let mut troubles = Vec::new();
    let disturbances = level.disturbances();
    if !disturbances.is_empty() {
        troubles.push(format!("disturbed: {}", disturbances.join("; ")));
    }
    if level.precision_reached == Some(false) {
        troubles.push(format!(
            "precision target {:.1}% missed: CV {:.1}% after {} batches",
            100.0 * settings.precision.unwrap_or_default(),
            100.0 * level.summary.cv,
            level.batches
        ));
    }
    troubles
}

/// Who runs a sweep and keeps its levels.
pub(crate) trait SweepObserver {
    /// A level is measured and in the document, summarised with the others: keep it.
    fn level_done(&mut self, document: &RunDocument) -> Result<()>;
}

/// A campaign part's level: the other parts' sessions are in the server's counts (`report`
/// checks the server's blocks against every part's sessions together), and a start later
/// than the campaign's time for it is said.
fn as_campaign_part(level: &mut Level, settings: &LevelSettings) {
    level
        .warnings
        .retain(|warning| !warning.starts_with(crate::workload::db::COUNTED_OTHERS));
    if let Some(due) = settings.start_at {
        // The first batch follows the warm-up; later than that by more than a blink, the
        // other parts ran part of the level without this one.
        let planned = chrono::DateTime::<Utc>::from(due) + settings.warmup.unwrap_or_default();
        let late_ms = (level.started_at - planned).num_milliseconds();
        if late_ms > LATE_START_MS {
            level.warnings.push(format!(
                "started {late_ms} ms after the campaign's time for it (its sessions took longer to connect and warm up than --level-gap leaves): the other parts ran that long without this one"
            ));
        }
    }
}

/// Measures `steps` on `workload`, in order, adding each level to `document` and handing the
/// document to `observer` after each. A failed level ends the sweep: the document's
/// `stop_reason` says why, and the error names the level. A stop request ends it after the
/// level under way, which is kept unless it was cut short. `sessions_ready` runs once, when
/// the first level's sessions are ready.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_sweep(
    workload: &dyn Workload,
    steps: &[LevelStep],
    settings: &LevelSettings,
    campaign: Option<&Campaign>,
    pin: Pin,
    progress: &Progress,
    document: &mut RunDocument,
    observer: &mut dyn SweepObserver,
    mut sessions_ready: Option<SessionsReady<'_>>,
) -> Result<()> {
    // Statements per second of the closed-loop level just measured, for `--rate 50%` steps.
    let mut closed_rate: Option<(usize, f64)> = None;
    for (index, step) in steps.iter().enumerate() {
        // Stopped during setup, the pre-flight or the previous level.
        if stop::stop_requested() {
            break;
        }
        let workers = step.workers;
        let rate = step.rate_per_s(closed_rate);
        let offered = rate.as_ref().ok().copied().flatten();
        let label = match offered {
            Some(at) => format!("{} at {}/s", workers_text(workers), significant(at)),
            None => workers_text(workers),
        };
        progress.level(index, steps.len(), workers, offered);
        let placement = pinning::placement(&document.host.topology, pin, workers);
        // A campaign's part: its clock checked against the server's, its start scheduled.
        let mut in_campaign = None;
        let mut level_settings = settings.clone();
        if let Some(length) = settings.length.at(offered) {
            level_settings.duration = Some(length);
        }
        let scheduled = match campaign {
            Some(campaign) => campaign
                .before_level(workload, index, step.campaign_workers.unwrap_or(workers))
                .map(|(record, local)| {
                    level_settings.start_at = local;
                    level_settings.campaign = Some(campaign.record.name.clone());
                    level_settings.sessions = Some(SessionNumbers {
                        first: campaign.record.part - 1,
                        step: campaign.record.parts,
                        of: record.workers,
                    });
                    in_campaign = Some(record);
                }),
            None => Ok(()),
        };
        // A share with no closed-loop rate to take it of ends the run as a failed level does.
        let measured = scheduled.and(rate).and_then(|rate| {
            measure_level(
                workload,
                workers,
                rate,
                &placement,
                &level_settings,
                progress,
                sessions_ready.take(),
            )
        });
        let mut outcome = match measured {
            Ok(Some(outcome)) => outcome,
            // Stopped while the level's sessions prepared: nothing was measured.
            Ok(None) => break,
            Err(error) => {
                document.stop_reason = Some(format!("failed at {label}: {error:#}"));
                document.updated_at = Utc::now();
                return Err(error.context(format!("measuring {label}")));
            }
        };
        match step.offered {
            None => closed_rate = outcome.level.response_rate().map(|rate| (workers, rate)),
            Some(OfferedRate::Share(share)) => {
                if let Some(figures) = outcome
                    .level
                    .latency
                    .as_mut()
                    .and_then(|latency| latency.rate.as_mut())
                {
                    figures.share = Some(share);
                }
            }
            Some(OfferedRate::PerSecond(_)) => {}
        }
        document.hw_counters = CounterStatus {
            available: outcome.counter_problem.is_none(),
            reason: outcome.counter_problem,
        };
        if in_campaign.is_some() {
            as_campaign_part(&mut outcome.level, &level_settings);
        }
        outcome.level.campaign = in_campaign;
        document.levels.push(outcome.level);
        summarize_document(document);
        let level = document.levels.last().expect("pushed just now");
        progress.level_done(index, level);
        for problem in outcome
            .pin_problems
            .iter()
            .chain(&level.warnings)
            .chain(level_troubles(level, settings).iter())
        {
            progress.note(&format!("corescale: warning: {label}: {problem}"));
        }
        document.updated_at = Utc::now();
        if stop::stop_requested() {
            break;
        }
        observer.level_done(document)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::RunMode;
    use crate::sweep::steps::level_steps;
    use crate::workload::cpu::CpuWorkload;

    use crate::sweep::tests::Kept;

    /// A small sweep through the library, without the binary: two levels of the cpu
    /// workload, each summarised into the document and handed to the observer in turn.
    #[test]
    fn a_sweep_runs_through_the_library() {
        let workload = CpuWorkload::new(Some(2_000_000));
        let mut document: RunDocument =
            serde_json::from_str(include_str!("../../tests/fixtures/engines/pg.json")).unwrap();
        document.levels.clear();
        document.workload = workload.info();
        document.settings.mode = RunMode::FixedWork;
        document.settings.duration_s = None;
        let settings = LevelSettings {
            repeat: 2,
            precision: None,
            max_repeat: 2,
            duration: None,
            warmup: None,
            interval: std::time::Duration::from_secs(1),
            interval_histograms: false,
            start_at: None,
            sessions: None,
            campaign: None,
            length: crate::workload::LevelLength::Run,
            cpu_bound: true,
        };
        let steps = level_steps(&[1, 2], &[]);
        let progress = Progress::new(4, true, None);
        let mut kept = Kept::default();
        run_sweep(
            &workload,
            &steps,
            &settings,
            None,
            Pin::None,
            &progress,
            &mut document,
            &mut kept,
            None,
        )
        .unwrap();
        assert_eq!(kept.0, vec![vec![1], vec![1, 2]]);
        assert_eq!(document.levels.len(), 2);
        for level in &document.levels {
            assert_eq!(level.samples.len(), 2 * level.workers);
            assert!(level.summary.speedup.is_some());
        }
        assert_eq!(document.levels[0].summary.speedup, Some(1.0));
    }
}
