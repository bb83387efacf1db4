//! How each level is measured: the settings the runner and the level's end both read, apart
//! from either so neither imports the other.

use std::time::Duration;

use super::worker::SessionNumbers;
use crate::result::RunMode;
use crate::workload::LevelLength;

/// How each level is measured.
#[derive(Debug, Clone)]
pub struct LevelSettings {
    /// Batches per level (each worker runs one job per batch).
    pub repeat: u32,
    /// Keep adding batches until the CV of job times (rates, for fixed-time) is at most this...
    pub precision: Option<f64>,
    /// ...but never more than this many batches.
    pub max_repeat: u32,
    /// Fixed-time jobs of this length instead of fixed-work jobs.
    pub duration: Option<Duration>,
    /// An unmeasured first window of this length (`--warmup`).
    pub warmup: Option<Duration>,
    /// Fixed-time levels: per-interval figures this far apart (`--interval`).
    pub interval: Duration,
    /// Whether each interval's responses are kept in the result (`--interval` given): the
    /// lines of `-o run.hlog`, and a campaign's merged percentiles per interval.
    pub interval_histograms: bool,
    /// A campaign's part: when the level's first window starts, by this host's clock (its
    /// sessions connect and warm up before).
    pub start_at: Option<std::time::SystemTime>,
    /// A campaign's part: its sessions' numbers among all the parts' (None: 0..workers).
    pub sessions: Option<SessionNumbers>,
    /// A campaign's part: the campaign's name, by which its other parts on this host are
    /// found (their load is the campaign's, not a disturbance).
    pub campaign: Option<String>,
    /// A level's timed window where the workload sets it (its plan's), over `duration`.
    pub length: LevelLength,
    /// Whether each worker needs a CPU of its own (the workload's plan says).
    pub cpu_bound: bool,
}

impl LevelSettings {
    pub fn mode(&self) -> RunMode {
        if self.duration.is_some() {
            RunMode::FixedTime
        } else {
            RunMode::FixedWork
        }
    }
}
