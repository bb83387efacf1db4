//! What one session records over a level: every answered statement's latency, the open
//! loop's figures, late statements and the timeline, merged over the level's sessions.

use super::{Arrivals, Intervals, Latency, MeasuredFrom, OpenLoop, RateFigures, ResponseTimes};
use std::time::Duration;

/// What one session recorded over a level: latency of every answered statement, from its
/// send (closed loop) or from when it was due (open loop), and statements later than a limit.
#[derive(Debug, Clone)]
pub struct SessionLatency {
    /// What one response is: "statement", "job".
    pub unit: &'static str,
    pub response: ResponseTimes,
    pub open: Option<OpenLoop>,
    pub limit: Option<Duration>,
    pub late: u64,
    /// Per interval of each window (fixed-time levels), allocated before the window.
    pub intervals: Option<Intervals>,
}

impl SessionLatency {
    pub fn closed(unit: &'static str, limit: Option<Duration>) -> Self {
        Self {
            unit,
            response: ResponseTimes::default(),
            open: None,
            limit,
            late: 0,
            intervals: None,
        }
    }

    /// Keeps per-interval figures of each window (allocated now, before any window).
    pub fn with_intervals(mut self, width: Duration, window: Duration) -> Self {
        self.intervals = Some(Intervals::new(width, window));
        self
    }

    pub fn open(
        unit: &'static str,
        limit: Option<Duration>,
        rate_per_s: f64,
        arrivals: Arrivals,
    ) -> Self {
        Self {
            open: Some(OpenLoop {
                service: ResponseTimes::default(),
                lag: ResponseTimes::default(),
                rate_per_s,
                arrivals,
                due: 0,
                sent: 0,
                window_s: 0.0,
                sessions: 1,
            }),
            ..Self::closed(unit, limit)
        }
    }

    /// The same recorder with nothing recorded (a warm-up forgotten).
    pub fn emptied(&self) -> Self {
        let empty = match &self.open {
            Some(open) => Self::open(self.unit, self.limit, open.rate_per_s, open.arrivals),
            None => Self::closed(self.unit, self.limit),
        };
        match &self.intervals {
            Some(intervals) => empty.with_intervals(intervals.width, intervals.window),
            None => empty,
        }
    }

    /// One answered statement: `sent` and `answered` from one clock, `due` the time it was
    /// due in an open loop (None: closed loop, latency from the send).
    #[inline]
    pub fn answered(&mut self, due: Option<Duration>, sent: Duration, answered: Duration) {
        let from = due.unwrap_or(sent);
        let response = answered.saturating_sub(from);
        self.response.record(response);
        if let Some(intervals) = self.intervals.as_mut() {
            intervals.record(answered, response);
        }
        if self.limit.is_some_and(|limit| response > limit) {
            self.late += 1;
        }
        if let (Some(open), Some(due)) = (self.open.as_mut(), due) {
            open.service.record(answered.saturating_sub(sent));
            open.lag.record(sent.saturating_sub(due));
        }
    }

    /// A window of `length` ended with `behind` statements due and not sent, after `sent`
    /// were; the first unsent one was due at `first_unsent`. Each unsent statement counts as
    /// a response that waited until the window's end (its least wait), spread evenly from
    /// the first to the end: a backlog is the tail of the distribution, not a gap in it.
    pub fn window_ended(
        &mut self,
        sent: u64,
        behind: u64,
        first_unsent: Duration,
        length: Duration,
    ) {
        let Some(open) = self.open.as_mut() else {
            return;
        };
        open.sent += sent;
        open.due += sent + behind;
        open.window_s += length.as_secs_f64();
        if behind == 0 {
            return;
        }
        let span = length.saturating_sub(first_unsent);
        let chunks = behind.min(1000);
        for chunk in 0..chunks {
            let count = behind / chunks + u64::from(chunk < behind % chunks);
            // The chunk's middle: waits from `span` (the first unsent) down to 0.
            let wait = span.mul_f64(1.0 - (chunk as f64 + 0.5) / chunks as f64);
            self.response.record_n(wait, count);
            if self.limit.is_some_and(|limit| wait > limit) {
                self.late += count;
            }
        }
    }

    /// Adds another session's record (same unit and loop).
    pub fn merge(&mut self, other: &Self) {
        self.response.merge(&other.response);
        self.late += other.late;
        match (self.intervals.as_mut(), other.intervals.as_ref()) {
            (Some(mine), Some(theirs)) => mine.merge(theirs),
            (None, Some(theirs)) => self.intervals = Some(theirs.clone()),
            _ => {}
        }
        match (self.open.as_mut(), other.open.as_ref()) {
            (Some(mine), Some(theirs)) => {
                mine.service.merge(&theirs.service);
                mine.lag.merge(&theirs.lag);
                mine.rate_per_s += theirs.rate_per_s;
                mine.due += theirs.due;
                mine.sent += theirs.sent;
                mine.window_s += theirs.window_s;
                mine.sessions += theirs.sessions;
            }
            (None, Some(theirs)) => self.open = Some(theirs.clone()),
            _ => {}
        }
    }

    /// The level's figures; `elapsed_s` the time its windows took.
    pub fn figures(&self, elapsed_s: f64) -> Option<Latency> {
        let response = self.response.percentiles()?;
        let rate = self.open.as_ref().map(|open| {
            // Over the windows' own time (the level's elapsed time also holds the waits
            // between batches).
            let windows_s = if open.window_s > 0.0 {
                open.window_s / open.sessions.max(1) as f64
            } else {
                elapsed_s
            };
            let achieved = if windows_s > 0.0 {
                open.sent as f64 / windows_s
            } else {
                0.0
            };
            let backlog = open.due.saturating_sub(open.sent);
            RateFigures {
                target_per_s: open.rate_per_s,
                achieved_per_s: achieved,
                arrivals: open.arrivals,
                due: open.due,
                sent: open.sent,
                // One late statement per window is the pacing's grain; beyond 1% of those
                // due, the sessions could not keep up.
                sustained: backlog as f64 <= (0.01 * open.due as f64).max(1.0),
                share: None,
            }
        });
        Some(Latency {
            unit: self.unit.to_string(),
            measured_from: if self.open.is_some() {
                MeasuredFrom::Due
            } else {
                MeasuredFrom::Send
            },
            response,
            service: self
                .open
                .as_ref()
                .and_then(|open| open.service.percentiles()),
            schedule_lag: self.open.as_ref().and_then(|open| open.lag.percentiles()),
            rate,
            limit_ms: self.limit.map(|limit| limit.as_secs_f64() * 1e3),
            late: self.limit.map(|_| self.late),
            histogram: Some(self.response.encode()),
        })
    }
}
