//! What a workload tells the sweep about its levels: whose sessions they run, how long each
//! lasts, the rates it is offered at and whether its workers need a CPU each. One plain value,
//! returned once by [`super::Workload::plan`] and read by the run command, which turns it into
//! the levels' steps and settings: the sweep asks the workload nothing else about its levels.

use std::time::Duration;

use crate::latency::OfferedRate;

/// What a workload tells the sweep about its levels. The default is a closed loop on the
/// user's worker counts, of the run's length, with a CPU for each worker.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelPlan {
    /// Whose sessions each level runs: the user's worker counts, or the workload's own.
    pub sessions: LevelSessions,
    /// The open-loop rates (`--rate`) each worker count is measured at, in order; empty for
    /// a closed loop only. A share needs the closed-loop level measured just before it.
    pub rates: Vec<OfferedRate>,
    /// Fixed-time jobs of this length unless the user chose otherwise (rate workloads).
    pub default_duration: Option<Duration>,
    /// A level's timed window, where the workload sets it.
    pub length: LevelLength,
    /// Whether each worker needs a CPU of its own: then workers crowded onto fewer CPUs than
    /// they could have make a level disturbed. Workloads that wait (for reads, for a server)
    /// say no.
    pub cpu_bound: bool,
}

impl Default for LevelPlan {
    fn default() -> Self {
        Self {
            sessions: LevelSessions::Given,
            rates: Vec::new(),
            default_duration: None,
            length: LevelLength::Run,
            cpu_bound: true,
        }
    }
}

/// Whose sessions a level runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelSessions {
    /// The user's worker counts (`--workers`, `--sweep`, the automatic plan).
    Given,
    /// This many of the workload's own (a capture's lanes): the run's only worker count, and
    /// each level one batch of them.
    Own(usize),
}

/// How long a level's timed window is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LevelLength {
    /// The run's: `--duration`, else the plan's default, else fixed work.
    Run,
    /// One pass over `span`, recorded at `rate_1x` operations per second: offered `rate`, it
    /// lasts `span` over the speed `rate / rate_1x` (1x in a closed loop), and `grace` more.
    Pass {
        span: Duration,
        rate_1x: f64,
        grace: Duration,
    },
}

impl LevelLength {
    /// The window of a level offered `rate` (None: a closed loop); None: the run's length.
    pub fn at(self, rate: Option<f64>) -> Option<Duration> {
        match self {
            Self::Run => None,
            Self::Pass {
                span,
                rate_1x,
                grace,
            } => {
                let speed = rate.map_or(1.0, |rate| rate / rate_1x);
                Some(span.mul_f64(1.0 / speed) + grace)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_lasts_its_span_over_the_speed() {
        let span = Duration::from_secs(10);
        let grace = Duration::from_millis(5);
        let pass = LevelLength::Pass {
            span,
            rate_1x: 200.0,
            grace,
        };
        assert_eq!(pass.at(None), Some(span + grace));
        assert_eq!(pass.at(Some(400.0)), Some(span / 2 + grace));
        assert_eq!(pass.at(Some(100.0)), Some(span * 2 + grace));
        assert_eq!(LevelLength::Run.at(Some(400.0)), None);
    }
}
