//! The options every SLOB-method workload shares (lio, pio, db): what one statement visits,
//! how many statements update, and the pause between them.

use std::time::Duration;

use clap::Args;

use crate::values::{Share, parse_pause, parse_share};

/// Keys one statement visits unless --work-unit says otherwise (SLOB's WORK_UNIT).
pub(crate) const DEFAULT_WORK_UNIT: u64 = 64;
/// SLOB-method workloads run fixed-time jobs of this length unless --duration or --job-size
/// says otherwise, as SLOB runs for RUN_TIME.
pub(crate) const DEFAULT_DURATION: Duration = Duration::from_secs(5);
/// Statements of a fixed-work job when a caller builds one without a job size (the command
/// line always gives one for fixed work: --job-size).
pub(crate) const DEFAULT_JOB_STATEMENTS: u64 = 2000;

/// The line `run lio|pio|db --help` ends with.
pub(crate) fn job_help() -> String {
    crate::workload::job_size_help(
        "statements and makes fixed-work jobs",
        &format!(
            "fixed-time jobs of {}",
            humantime::format_duration(DEFAULT_DURATION)
        ),
    )
}

#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "SLOB method (lio, pio, db)")]
pub struct SlobArgs {
    /// Keys visited per statement (default 64).
    #[arg(long, value_name = "N", value_parser = crate::values::parse_positive)]
    pub work_unit: Option<u64>,

    /// Share of statements that update the rows they visit (e.g. 20%).
    #[arg(long, value_name = "PCT", value_parser = parse_share)]
    pub update_pct: Option<Share>,

    /// Pause between statements (SLOB's THINK_TM), e.g. 1ms.
    #[arg(long, value_name = "TIME", value_parser = parse_pause)]
    pub think_time: Option<Duration>,
}

impl SlobArgs {
    pub fn work_unit(&self) -> u64 {
        self.work_unit.unwrap_or(DEFAULT_WORK_UNIT)
    }

    pub fn update_share(&self) -> f64 {
        self.update_pct.unwrap_or_default().0
    }
}
