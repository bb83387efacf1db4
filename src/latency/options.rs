//! The command-line option groups of the paced workloads, written once and flattened into
//! each workload's options: the open loop (`--rate`, `--arrivals`), the response-time limit
//! (`--latency-limit`) and the search for the largest rate at an objective (`--find`). A
//! workload words their help in its own unit (statements, transactions) with clap's
//! `mut_arg`; their names, values and checks are these.

use std::time::Duration;

use super::{Arrivals, Objectives, RateSteps};

/// `--rate` and `--arrivals`: the open loop. The `paced` group (a rate, or a search's probes)
/// is what `--arrivals` and a workload's pacing options require.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(group(clap::ArgGroup::new("paced").args(["rate", "find"]).multiple(true)))]
pub struct PacingArgs {
    /// Open loop: operations per second for the whole level, shared by its sessions, each
    /// timed from when it was due. A list (1000,2000,5000) measures each worker count at
    /// each rate; shares (50%,90%) take the throughput of a closed-loop level measured first
    /// at that worker count.
    #[arg(
        long,
        value_name = "PER_S",
        conflicts_with = "find",
        help_heading = "Response time"
    )]
    pub rate: Option<RateSteps>,

    /// How --rate spaces operations: evenly, or at random as independent users arrive.
    #[arg(long, value_enum, default_value_t = Arrivals::Uniform, requires = "paced",
          help_heading = "Response time")]
    pub arrivals: Arrivals,
}

impl PacingArgs {
    /// The rates each worker count is measured at, in order; empty for a closed loop.
    pub fn rates(&self) -> Vec<super::OfferedRate> {
        self.rate.clone().map(|steps| steps.0).unwrap_or_default()
    }
}

/// `--rate`'s words for the workloads that pace transactions (script, tpcc).
pub const TRANSACTIONS_RATE_HELP: &str = "Open loop: transactions per second for the whole level, shared by its sessions, each timed from when it was due. A list measures each worker count at each rate; shares (50%) take a closed-loop level's throughput measured first";
/// `--arrivals`' words for the workloads that pace transactions.
pub const TRANSACTIONS_ARRIVALS_HELP: &str =
    "How --rate spaces transactions: evenly, or at random as independent users arrive";

/// `--latency-limit`: responses later than this are counted (and still sent and timed).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LatencyLimitArgs {
    /// Count the responses answered later than this (e.g. 50ms).
    #[arg(long, value_name = "TIME", help_heading = "Response time",
          value_parser = crate::values::parse_latency_limit)]
    pub latency_limit: Option<Duration>,
}

/// The default of `--find-precision`: the kept and broken rates within 5%.
pub const FIND_PRECISION: f64 = 0.05;
/// The default of `--max-time`: every measurement of the search included.
pub const FIND_MAX_TIME: std::time::Duration = std::time::Duration::from_secs(600);

/// The search's options, on the workloads that take `--rate` (which refuses `--find`) and
/// on a replay (its `--speed` does).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct FindArgs {
    /// Search the largest rate that holds this objective ('p99<=5ms'; a class's
    /// 'statement-2:p99<=1ms'; several with ',', all to hold): open-loop probes, each judged
    /// by the percentile's 95% confidence interval. -w caps the sessions (default 32).
    #[arg(long, value_name = "OBJECTIVE", help_heading = "Search")]
    pub find: Option<Objectives>,

    /// End the search when the smallest broken rate is within this of the largest kept one
    /// [default: 5%].
    #[arg(long, value_name = "PCT", value_parser = crate::values::parse_percent,
          requires = "find", help_heading = "Search")]
    pub find_precision: Option<f64>,

    /// End the search after this long, every probe included [default: 10m].
    #[arg(long, value_name = "TIME", value_parser = crate::values::parse_duration,
          requires = "find", help_heading = "Search")]
    pub max_time: Option<std::time::Duration>,
}
