//! A database session's clock over a level's windows, shared by the db and script sessions:
//! when the current window began, the open loop's schedule (`--rate`), and what the session
//! recorded. Nothing in it is shared with other sessions.

use std::time::{Duration, Instant};

use super::{Arrivals, LiveSlot, Pacer, Schedule, SessionLatency, session_seed};

/// The longest an open loop's session sleeps at once, so a fixed-time window ends on time.
const LONGEST_NAP: Duration = Duration::from_millis(1);

/// Whether an open loop's next request is due.
pub enum Turn {
    /// Not yet: the session slept a little and should look at its window again.
    NotYet,
    /// Now: when it was due (None in a closed loop, where every request goes at once).
    Due(Option<Duration>),
}

pub struct SessionClock {
    /// What the session recorded since the level (or its warm-up) began.
    pub latency: SessionLatency,
    pacer: Option<Pacing>,
    window_start: Instant,
    /// A fixed-time level's length: sleeps (keying, think, a script's `sleep`) end with it.
    window_length: Option<Duration>,
    /// With `--report-interval`: where the interval lines read this session's responses.
    live: Option<LiveSlot>,
}

/// How an open loop's session spaces its requests: its share of a rate, or a schedule.
enum Pacing {
    Rate(Pacer),
    Schedule(Schedule),
}

impl Pacing {
    fn due_s(&self) -> f64 {
        match self {
            Self::Rate(pacer) => pacer.due_s(),
            Self::Schedule(schedule) => schedule.due_s(),
        }
    }

    fn advance(&mut self) {
        match self {
            Self::Rate(pacer) => pacer.advance(),
            Self::Schedule(schedule) => schedule.advance(),
        }
    }

    fn restart(&mut self) {
        match self {
            Self::Rate(pacer) => pacer.restart(),
            Self::Schedule(schedule) => schedule.restart(),
        }
    }

    fn sent(&self) -> u64 {
        match self {
            Self::Rate(pacer) => pacer.sent(),
            Self::Schedule(schedule) => schedule.sent(),
        }
    }

    fn behind_at(&self, elapsed_s: f64) -> u64 {
        match self {
            Self::Rate(pacer) => pacer.behind_at(elapsed_s),
            Self::Schedule(schedule) => schedule.behind_at(elapsed_s),
        }
    }
}

/// An open loop's share of a level for one session.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    /// The level's rate, per second, for all its sessions.
    pub level_rate_per_s: f64,
    pub arrivals: Arrivals,
    /// The run's seed, from which each session's own is derived.
    pub seed: u64,
}

impl SessionClock {
    /// Worker `worker` of `workers`: a closed loop, or its even share of the level's rate,
    /// its first request placed by its number so the sessions interleave.
    pub fn new(
        unit: &'static str,
        limit: Option<Duration>,
        pace: Option<Pace>,
        (worker, workers): (usize, usize),
    ) -> Self {
        let sessions = workers.max(1) as f64;
        let latency = match pace {
            Some(pace) => {
                SessionLatency::open(unit, limit, pace.level_rate_per_s / sessions, pace.arrivals)
            }
            None => SessionLatency::closed(unit, limit),
        };
        if pace.is_some() {
            // This worker's thread sleeps to each due time: Linux's default 50 us timer slack
            // would add itself to every request's schedule lag. Best effort.
            let _ = nix::sys::prctl::set_timerslack(1);
        }
        let pacer = pace.map(|pace| {
            Pacing::Rate(Pacer::new(
                pace.level_rate_per_s / sessions,
                pace.arrivals,
                worker as f64 / sessions,
                session_seed(pace.seed, worker),
            ))
        });
        Self {
            latency,
            pacer,
            window_start: Instant::now(),
            window_length: None,
            live: None,
        }
    }

    /// An open loop on a schedule of its own (`due_s`, seconds from each window's start,
    /// in order), `rate_per_s` its mean rate: a captured workload's session.
    pub fn scheduled(
        unit: &'static str,
        limit: Option<Duration>,
        due_s: std::sync::Arc<[f64]>,
        rate_per_s: f64,
    ) -> Self {
        let _ = nix::sys::prctl::set_timerslack(1);
        Self {
            latency: SessionLatency::open(unit, limit, rate_per_s, Arrivals::Captured),
            pacer: Some(Pacing::Schedule(Schedule::new(due_s))),
            window_start: Instant::now(),
            window_length: None,
            live: None,
        }
    }

    /// Requests sent since the window began (an open loop's; 0 in a closed loop).
    pub fn sent(&self) -> u64 {
        self.pacer.as_ref().map_or(0, Pacing::sent)
    }

    /// Windows of a fixed-time level end `length` after they start.
    pub fn ending_after(mut self, length: Option<Duration>) -> Self {
        self.window_length = length;
        self
    }

    /// When the current window ends, in a fixed-time level: a sleep stops there.
    pub fn window_end(&self) -> Option<Instant> {
        self.window_length
            .and_then(|length| self.window_start.checked_add(length))
    }

    /// Whether a schedule's next request is due within the fixed-time window's length, its
    /// last instant included: such a request is sent even once the window's clock has run
    /// out (a replay's statements due at the capture's end).
    pub fn next_due_in_window(&self) -> bool {
        match (&self.pacer, self.window_length) {
            (Some(Pacing::Schedule(schedule)), Some(length)) => {
                schedule.due_s() <= length.as_secs_f64()
            }
            _ => false,
        }
    }

    /// A response answered at `answered` (since the window began), sent at `sent`, due at
    /// `due` in an open loop: recorded, and counted for the interval lines.
    #[inline]
    pub fn answered(&mut self, due: Option<Duration>, sent: Duration, answered: Duration) {
        self.latency.answered(due, sent, answered);
        if let Some(live) = &self.live {
            live.record(answered.saturating_sub(due.unwrap_or(sent)));
        }
    }

    /// Counts every response for the `--report-interval` lines too.
    pub fn report_to(&mut self, live: LiveSlot) {
        self.live = Some(live);
    }

    /// Time since the current window began.
    pub fn elapsed(&self) -> Duration {
        self.window_start.elapsed()
    }

    /// Whether the next request may go: in an open loop, sleeps towards its due time (a
    /// millisecond at most, then `NotYet`), and takes it off the schedule when due.
    pub fn turn(&mut self) -> Turn {
        let Some(pacer) = self.pacer.as_mut() else {
            return Turn::Due(None);
        };
        let due = Duration::try_from_secs_f64(pacer.due_s()).unwrap_or(Duration::MAX);
        let wait = due.saturating_sub(self.window_start.elapsed());
        if !wait.is_zero() {
            std::thread::sleep(wait.min(LONGEST_NAP));
            if wait > LONGEST_NAP {
                return Turn::NotYet;
            }
        }
        pacer.advance();
        Turn::Due(Some(due))
    }

    /// A timed window begins now: an open loop schedules its requests from this instant.
    pub fn window_started(&mut self, began: Instant) {
        self.window_start = began;
        if let Some(pacer) = self.pacer.as_mut() {
            pacer.restart();
        }
    }

    /// The window ends: an open loop counts the requests due that it did not send.
    pub fn window_ended(&mut self) {
        if let Some(pacer) = self.pacer.as_ref() {
            let length = self.window_start.elapsed();
            self.latency.window_ended(
                pacer.sent(),
                pacer.behind_at(length.as_secs_f64()),
                Duration::try_from_secs_f64(pacer.due_s()).unwrap_or(length),
                length,
            );
        }
    }

    /// What was recorded, taken once after the level's last batch.
    pub fn take(&mut self) -> SessionLatency {
        let empty = self.latency.emptied();
        std::mem::replace(&mut self.latency, empty)
    }

    /// Keeps per-interval figures of each window (allocated now, before any window).
    pub fn keep_intervals(&mut self, width: Duration, window: Duration) {
        self.latency = self.latency.emptied().with_intervals(width, window);
    }

    /// Forgets what was recorded (a warm-up's).
    pub fn forget(&mut self) {
        self.latency = self.latency.emptied();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedules_request_due_at_the_windows_last_instant_is_in_it() {
        let due: std::sync::Arc<[f64]> = vec![0.0, 1.0, 1.0].into();
        let mut clock = SessionClock::scheduled("statement", None, due, 3.0)
            .ending_after(Some(Duration::from_secs(1)));
        clock.window_started(Instant::now());
        assert!(clock.next_due_in_window());
        assert!(matches!(clock.turn(), Turn::Due(Some(due)) if due.is_zero()));
        // The two due at 1 s, the window's length: both still in it.
        for _ in 0..2 {
            assert!(clock.next_due_in_window());
            clock.pacer.as_mut().unwrap().advance();
        }
        // None left.
        assert!(!clock.next_due_in_window());
    }

    #[test]
    fn a_request_due_after_the_window_or_a_closed_loop_is_not() {
        let due: std::sync::Arc<[f64]> = vec![2.0].into();
        let clock = SessionClock::scheduled("statement", None, due, 1.0)
            .ending_after(Some(Duration::from_secs(1)));
        assert!(!clock.next_due_in_window());
        let closed = SessionClock::new("statement", None, None, (0, 1))
            .ending_after(Some(Duration::from_secs(1)));
        assert!(!closed.next_due_in_window());
    }
}
