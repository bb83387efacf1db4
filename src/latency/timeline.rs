//! The timeline of a window: responses by the interval they were answered in, and what a
//! timeline shows (a stall, a level that slowed).

use std::time::Duration;

use super::ResponseTimes;
use serde::{Deserialize, Serialize};

/// The width of a window's intervals: `--interval`, widened so that a window holds at most
/// `MOST_INTERVALS`.
pub fn interval_width(width: Duration, window: Duration) -> Duration {
    width
        .max(window / MOST_INTERVALS as u32)
        .max(Duration::from_millis(1))
}

/// Responses by the interval of its window they were answered in: the i-th interval of every
/// batch goes to slot i (one batch, the usual long run: the level's timeline).
#[derive(Debug, Clone)]
pub struct Intervals {
    pub width: Duration,
    /// The windows' length, so the last interval's rate counts over its own width.
    pub window: Duration,
    pub slots: Vec<ResponseTimes>,
}

impl Intervals {
    /// Slots for a window of `window` at `width` each, at most `MOST_INTERVALS` (wider
    /// intervals beyond), each histogram coarse (2 significant digits: a timeline's grain).
    pub fn new(width: Duration, window: Duration) -> Self {
        let width = interval_width(width, window);
        let count = (window.as_secs_f64() / width.as_secs_f64()).ceil().max(1.0) as usize;
        Self {
            width,
            window,
            slots: (0..count).map(|_| ResponseTimes::coarse()).collect(),
        }
    }

    #[inline]
    pub(super) fn record(&mut self, answered: Duration, response: Duration) {
        // Answers drained just after the window's end belong to its last interval.
        let index = (answered.as_nanos() / self.width.as_nanos().max(1)) as usize;
        let last = self.slots.len().saturating_sub(1);
        if let Some(slot) = self.slots.get_mut(index.min(last)) {
            slot.record(response);
        }
    }

    pub(super) fn merge(&mut self, other: &Self) {
        for (mine, theirs) in self.slots.iter_mut().zip(&other.slots) {
            mine.merge(theirs);
        }
    }

    /// Each interval's rate and percentiles over `windows` windows.
    pub fn figures(&self, windows: u32) -> Vec<IntervalFigures> {
        self.slots
            .iter()
            .enumerate()
            .map(|(index, slot)| {
                let start = self.width * index as u32;
                let length = self.width.min(self.window.saturating_sub(start));
                let seconds = length.as_secs_f64() * windows.max(1) as f64;
                let percentiles = slot.percentiles();
                IntervalFigures {
                    start_s: start.as_secs_f64(),
                    length_s: length.as_secs_f64(),
                    responses: slot.count(),
                    rate_per_s: if seconds > 0.0 {
                        slot.count() as f64 / seconds
                    } else {
                        0.0
                    },
                    p50_ms: percentiles.map(|p| p.p50_ms),
                    p99_ms: percentiles.map(|p| p.p99_ms),
                    server_lio_per_s: None,
                    server_pio_per_s: None,
                }
            })
            .collect()
    }
}

/// Seconds as a person writes them: 2, 12.5, 0.25.
fn seconds(value: f64) -> String {
    format!("{}", (value * 1000.0).round() / 1000.0)
}

/// Most intervals kept per window: longer windows get wider intervals.
const MOST_INTERVALS: usize = 600;

/// One interval of a fixed-time level: `levels[].intervals[]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IntervalFigures {
    /// From the start of the window, and the interval's length (the last may be shorter).
    pub start_s: f64,
    pub length_s: f64,
    /// Responses answered in it (over all batches), and per second.
    pub responses: u64,
    pub rate_per_s: f64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    /// The server's own logical and physical reads per second in the interval (db levels:
    /// the database's counters, read by a thread of their own at each interval's edge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_lio_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_pio_per_s: Option<f64>,
}

/// What a level's timeline shows beyond its noise: a warm-up (its first intervals off the
/// rest) and stalls (an interval far below the rest, as a checkpoint would cause). `unit` is
/// what the intervals count, plural: "statements".
pub fn timeline_warnings(intervals: &[IntervalFigures], unit: &str) -> Vec<String> {
    let full: Vec<&IntervalFigures> = intervals
        .iter()
        .filter(|interval| interval.length_s > 0.0)
        .collect();
    if full.len() < 5 {
        return Vec::new();
    }
    let rates: Vec<f64> = full.iter().map(|interval| interval.rate_per_s).collect();
    let median = crate::stats::median(&rates);
    if median <= 0.0 {
        return Vec::new();
    }
    // Beyond 4 robust deviations and 10% of the median: off the level's own noise.
    let band = (4.0 * crate::stats::robust_sigma(&rates)).max(0.1 * median);
    let off = |interval: &IntervalFigures| (interval.rate_per_s - median).abs() > band;
    let mut warnings = Vec::new();
    let warm: Vec<&IntervalFigures> = full
        .iter()
        .copied()
        .take_while(|interval| off(interval))
        .collect();
    if let Some(last) = warm.last()
        && warm.len() < full.len() / 2
    {
        let until = last.start_s + last.length_s;
        warnings.push(format!(
            "warm-up: the first {} s ran at {:.0}% of the level's median {} {unit}/s: --warmup {}s leaves it out",
            seconds(until),
            100.0 * warm.iter().map(|i| i.rate_per_s).sum::<f64>() / warm.len() as f64 / median,
            crate::format::significant(median),
            until.ceil()
        ));
    }
    for interval in full.iter().skip(warm.len()) {
        if interval.rate_per_s < 0.5 * median && interval.rate_per_s < median - band {
            warnings.push(format!(
                "a stall at {}-{} s: {} {unit}/s against the level's median {} (a checkpoint, autovacuum, or the host)",
                seconds(interval.start_s),
                seconds(interval.start_s + interval.length_s),
                crate::format::significant(interval.rate_per_s),
                crate::format::significant(median)
            ));
        }
    }
    warnings
}
