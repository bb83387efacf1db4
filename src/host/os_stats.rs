//! OS figures for one load level: CPU time split (with steal), context switches and run queue,
//! from /proc/stat read before and after the level and sampled while it runs.

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Sender, bounded};
use procfs_core::{ExplicitSystemInfo, FromReadSI, KernelStats};
use serde::{Deserialize, Serialize};

use super::interference::{other_runnable, own_runnable};
use super::sysfs::FsRoot;

/// Only ratios of tick counts are used, so the tick rate given to the parser does not matter.
const PARSE_INFO: ExplicitSystemInfo = ExplicitSystemInfo {
    boot_time_secs: 0,
    ticks_per_second: 100,
    page_size: 4096,
    is_little_endian: cfg!(target_endian = "little"),
};

/// How often the run queue is sampled while a level runs.
const RUN_QUEUE_PERIOD: Duration = Duration::from_millis(100);
/// Fewest readings of the run queue that judge a level (a level of 0.2 s or more).
const MIN_RUN_QUEUE_READINGS: u32 = 3;

/// Host-wide figures over one level, as percentages of all CPU time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OsFigures {
    pub user_pct: f64,
    pub system_pct: f64,
    pub idle_pct: f64,
    pub iowait_pct: f64,
    pub steal_pct: f64,
    pub ctx_switches_per_s: f64,
    /// Mean number of runnable tasks, not counting the sampler itself.
    pub run_queue: Option<f64>,
}

/// One reading of the cumulative counters of /proc/stat.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StatSnapshot {
    at: Instant,
    user: u64,
    system: u64,
    idle: u64,
    iowait: u64,
    steal: u64,
    context_switches: u64,
}

impl StatSnapshot {
    pub(crate) fn read(root: &FsRoot) -> Option<Self> {
        let stats = KernelStats::from_file(root.path("proc/stat"), &PARSE_INFO).ok()?;
        let total = stats.total;
        Some(Self {
            at: Instant::now(),
            user: total.user + total.nice,
            system: total.system + total.irq.unwrap_or(0) + total.softirq.unwrap_or(0),
            idle: total.idle,
            iowait: total.iowait.unwrap_or(0),
            steal: total.steal.unwrap_or(0),
            context_switches: stats.ctxt,
        })
    }

    /// Figures from `self` to `later`; guest time is already inside user time in /proc/stat.
    pub(crate) fn figures_until(&self, later: &StatSnapshot) -> OsFigures {
        let delta = |before: u64, after: u64| after.saturating_sub(before) as f64;
        let user = delta(self.user, later.user);
        let system = delta(self.system, later.system);
        let idle = delta(self.idle, later.idle);
        let iowait = delta(self.iowait, later.iowait);
        let steal = delta(self.steal, later.steal);
        let total = (user + system + idle + iowait + steal).max(1.0);
        let pct = |part: f64| 100.0 * part / total;
        let seconds = later.at.duration_since(self.at).as_secs_f64().max(1e-9);
        OsFigures {
            user_pct: pct(user),
            system_pct: pct(system),
            idle_pct: pct(idle),
            iowait_pct: pct(iowait),
            steal_pct: pct(steal),
            ctx_switches_per_s: delta(self.context_switches, later.context_switches) / seconds,
            run_queue: None,
        }
    }
}

/// Samples `procs_running`, and the runnable tasks that are not corescale's, in a background
/// thread that sleeps between reads, so it costs the measured workers a few microseconds per
/// second.
pub(crate) struct RunQueueSampler {
    stop: Sender<()>,
    handle: JoinHandle<RunQueue>,
}

/// Means over a level's samples.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RunQueue {
    /// Runnable tasks, not counting the sampler.
    pub all: Option<f64>,
    /// Runnable tasks that are not this process's threads.
    pub others: Option<f64>,
}

impl RunQueueSampler {
    pub(crate) fn start(root: FsRoot) -> Self {
        let (stop, stopped) = bounded::<()>(1);
        let handle = std::thread::spawn(move || {
            let (mut sum, mut count) = (0.0, 0u32);
            let (mut others, mut others_count) = (0.0, 0u32);
            loop {
                // One read of /proc/stat serves both figures; this process's running threads
                // are counted on both sides of it.
                let own_before = own_runnable(&root);
                if let Ok(stats) = KernelStats::from_file(root.path("proc/stat"), &PARSE_INFO)
                    && let Some(running) = stats.procs_running
                {
                    sum += f64::from(running.saturating_sub(1));
                    count += 1;
                    if let Some(other) =
                        own_before.and_then(|own| other_runnable(&root, u64::from(running), own))
                    {
                        others += other;
                        others_count += 1;
                    }
                }
                if stopped.recv_timeout(RUN_QUEUE_PERIOD).is_ok() {
                    break;
                }
            }
            RunQueue {
                all: (count > 0).then(|| sum / f64::from(count)),
                // One reading of a briefly runnable task is not a load: a level too short
                // for a few readings is not judged by them.
                others: (others_count >= MIN_RUN_QUEUE_READINGS)
                    .then(|| others / f64::from(others_count)),
            }
        });
        Self { stop, handle }
    }

    /// Stops sampling and returns the means.
    pub(crate) fn finish(self) -> RunQueue {
        let _ = self.stop.send(());
        self.handle.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steal_and_idle_are_shares_of_the_interval() {
        let before = StatSnapshot {
            at: Instant::now(),
            user: 100,
            system: 50,
            idle: 800,
            iowait: 0,
            steal: 10,
            context_switches: 1000,
        };
        let after = StatSnapshot {
            at: before.at + Duration::from_secs(2),
            user: 160,
            system: 60,
            idle: 820,
            iowait: 0,
            steal: 20,
            context_switches: 3000,
        };
        let figures = before.figures_until(&after);
        assert!((figures.user_pct - 60.0).abs() < 1e-9);
        assert!((figures.system_pct - 10.0).abs() < 1e-9);
        assert!((figures.idle_pct - 20.0).abs() < 1e-9);
        assert!((figures.steal_pct - 10.0).abs() < 1e-9);
        assert!((figures.ctx_switches_per_s - 1000.0).abs() < 1e-9);
    }
}
