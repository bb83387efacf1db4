//! The search for the largest rate that holds an objective (`--find`), as a pure algorithm
//! over a probe executor: a short closed-loop measurement of capacity, a first probe at a
//! share of it, rates rising geometrically while probes keep the objective (falling while
//! they break it), then the bracket bisected until the largest kept rate and the smallest
//! broken one are within the precision, or the time allowed runs out. The executor measures
//! (`search_probe` on a real workload; a scripted one in the tests, which run in
//! milliseconds), so every decision here is tested without a server.

use std::time::Duration;

use anyhow::Result;

use crate::latency::{Objective, Verdict};
use crate::result::search::{ProbeRecord, SearchRecord, SearchStop};

/// The first probe's share of the closed-loop capacity: well below it, so the first probe
/// usually keeps the objective and the rise brackets the limit from below.
pub(crate) const START_SHARE: f64 = 0.5;
/// Each rise (or fall) multiplies the rate by this much until the limit is bracketed.
pub(crate) const GROWTH: f64 = 1.5;
/// Probes never go below this share of capacity, nor above this many times it.
const FLOOR_SHARE: f64 = 1e-3;
const CEILING_TIMES: f64 = 1e3;
/// `--rate`'s own bounds, which a probe's rate keeps too.
const LOWEST_RATE: f64 = 0.01;
const HIGHEST_RATE: f64 = 1e7;

/// How the search runs: `--find`, `--find-precision`, `--max-time`.
#[derive(Debug, Clone)]
pub(crate) struct SearchSettings {
    pub objectives: Vec<Objective>,
    /// broken / kept - 1 at which the search ends.
    pub precision: f64,
    /// Every measurement included, capacity first.
    pub max_time: Duration,
    /// The rate's unit: "transactions/s".
    pub unit: String,
}

/// Where the probes start: twice the first probe's rate, a closed-loop measurement of
/// capacity or (a replay's) none: its first probe is the captured pace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Capacity {
    pub rate_per_s: f64,
    pub spent: Duration,
    /// Measured (the record's `capacity_per_s`), not set.
    pub measured: bool,
}

/// Who measures: the capacity once, then each probe at an offered rate. None: stopped by a
/// signal before anything was measured.
pub(crate) trait ProbeExecutor {
    fn capacity(&mut self) -> Result<Option<Capacity>>;

    /// Probe `number` (from 1) at `rate_per_s`; `longer` asks for more responses than the
    /// rate's usual length, when the previous probe at this rate was undecided. The record's
    /// `verdict` is set by the search.
    fn probe(
        &mut self,
        rate_per_s: f64,
        number: usize,
        longer: bool,
    ) -> Result<Option<ProbeRecord>>;
}

/// The bracket so far: the largest rate kept and the smallest broken above it.
#[derive(Debug, Clone, Copy, Default)]
struct Bracket {
    kept: Option<f64>,
    broken: Option<f64>,
}

impl Bracket {
    fn width(&self) -> Option<f64> {
        Some(self.broken? / self.kept? - 1.0)
    }

    /// A probe's verdict moves one end; a verdict against the other end (noise, or a server
    /// that changed) drops that end, and the search brackets again.
    fn add(&mut self, rate: f64, holds: bool) {
        if holds {
            self.kept = Some(self.kept.map_or(rate, |kept| kept.max(rate)));
            if self.broken.is_some_and(|broken| broken <= rate) {
                self.broken = None;
            }
        } else {
            self.broken = Some(self.broken.map_or(rate, |broken| broken.min(rate)));
            if self.kept.is_some_and(|kept| kept >= rate) {
                self.kept = None;
            }
        }
    }

    /// The next rate to probe, or why there is none.
    fn next(&self, capacity: f64) -> Result<f64, SearchStop> {
        let floor = (FLOOR_SHARE * capacity).max(LOWEST_RATE);
        let ceiling = (CEILING_TIMES * capacity).min(HIGHEST_RATE);
        match (self.kept, self.broken) {
            (None, None) => Ok((START_SHARE * capacity).clamp(floor, ceiling)),
            (Some(kept), None) if kept >= ceiling => Err(SearchStop::NothingBroken),
            (Some(kept), None) => Ok((kept * GROWTH).min(ceiling)),
            (None, Some(broken)) if broken <= floor => Err(SearchStop::NothingKept),
            (None, Some(broken)) => Ok((broken / GROWTH).max(floor)),
            // The geometric middle: the bracket's ratio halves in log terms each probe.
            (Some(kept), Some(broken)) => Ok((kept * broken).sqrt()),
        }
    }
}

/// Runs the search on `executor` and returns its record (the answer included).
pub(crate) fn search(
    executor: &mut dyn ProbeExecutor,
    settings: &SearchSettings,
) -> Result<SearchRecord> {
    let mut record = SearchRecord {
        objectives: settings
            .objectives
            .iter()
            .map(ToString::to_string)
            .collect(),
        unit: settings.unit.clone(),
        capacity_per_s: None,
        probes: Vec::new(),
        kept_rate: None,
        broken_rate: None,
        precision: settings.precision,
        precision_reached: false,
        spent_s: 0.0,
        max_time_s: settings.max_time.as_secs_f64(),
        stopped: SearchStop::Stopped,
        answer: String::new(),
    };
    let Some(capacity) = executor.capacity()? else {
        return Ok(finished(record, Bracket::default(), SearchStop::Stopped));
    };
    record.capacity_per_s = capacity.measured.then_some(capacity.rate_per_s);
    let mut spent = capacity.spent;
    let mut bracket = Bracket::default();
    // The last probe's length predicts the next one's: one that would end past --max-time
    // is not begun.
    let mut last_length = Duration::ZERO;
    let mut undecided_at: Option<f64> = None;
    let stop = loop {
        record.spent_s = spent.as_secs_f64();
        if bracket
            .width()
            .is_some_and(|width| width <= settings.precision)
        {
            break SearchStop::Precision;
        }
        let rate = match undecided_at.take() {
            Some(rate) => rate,
            None => match bracket.next(capacity.rate_per_s) {
                Ok(rate) => rate,
                Err(stop) => break stop,
            },
        };
        if spent + last_length > settings.max_time {
            break SearchStop::MaxTime;
        }
        let longer = record
            .probes
            .last()
            .is_some_and(|last| last.rate_per_s == rate);
        let Some(mut probe) = executor.probe(rate, record.probes.len() + 1, longer)? else {
            break SearchStop::Stopped;
        };
        probe.rate_per_s = rate;
        probe.verdict = probe.judged();
        let length = Duration::from_secs_f64(probe.spent_s.max(0.0));
        spent += length;
        last_length = length;
        // An undecided probe runs again, once, with more responses.
        if probe.verdict == Verdict::Undecided && !longer {
            undecided_at = Some(rate);
        } else {
            bracket.add(rate, probe.holds());
        }
        record.probes.push(probe);
    };
    record.spent_s = spent.as_secs_f64();
    Ok(finished(record, bracket, stop))
}

fn finished(mut record: SearchRecord, bracket: Bracket, stop: SearchStop) -> SearchRecord {
    record.kept_rate = bracket.kept;
    record.broken_rate = bracket.broken;
    record.precision_reached = bracket
        .width()
        .is_some_and(|width| width <= record.precision);
    record.stopped = stop;
    record.answer = record.sentence();
    record
}

/// Sessions enough for `rate_per_s` by Little's law: the rate times the time each response
/// takes (the last probe's mean), doubled for bursts, at least one, at most `ceiling`.
pub(crate) fn sessions_for(rate_per_s: f64, mean_response_s: f64, ceiling: usize) -> usize {
    let busy = rate_per_s * mean_response_s.max(0.0);
    ((2.0 * busy).ceil() as usize).clamp(1, ceiling.max(1))
}

/// A probe's measured window: long enough for `responses` at `rate_per_s`, at least
/// `shortest` (the server's caches and the sessions' pacing settle), at most `longest`.
pub(crate) fn probe_length(
    rate_per_s: f64,
    responses: u64,
    shortest: Duration,
    longest: Duration,
) -> Duration {
    let needed = responses as f64 / rate_per_s.max(LOWEST_RATE);
    Duration::from_secs_f64(needed.clamp(shortest.as_secs_f64(), longest.as_secs_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency::PercentileInterval;
    use crate::result::search::ObjectiveCheck;

    /// A server of known capacity: p99 is the service time stretched by 1 / (1 - load), the
    /// schedule is kept below capacity, and each probe's interval is its p99 +-3%. Time is
    /// counted, not spent: each probe "takes" 1,000 responses' worth, at least 2 s.
    struct Scripted {
        capacity: f64,
        service_ms: f64,
        /// Rates above this are not kept up with (the client's or the server's limit).
        keeps_up_to: f64,
        /// A fixed verdict for probes whose interval holds the limit: for undecided tests.
        undecided_near: Option<f64>,
        probed: Vec<f64>,
        longer: Vec<bool>,
    }

    impl Scripted {
        fn new(capacity: f64, service_ms: f64) -> Self {
            Self {
                capacity,
                service_ms,
                keeps_up_to: capacity,
                undecided_near: None,
                probed: Vec::new(),
                longer: Vec::new(),
            }
        }

        fn p99_ms(&self, rate: f64) -> f64 {
            let load = (rate / self.capacity).min(0.999);
            self.service_ms / (1.0 - load)
        }
    }

    impl ProbeExecutor for Scripted {
        fn capacity(&mut self) -> Result<Option<Capacity>> {
            Ok(Some(Capacity {
                rate_per_s: self.capacity,
                spent: Duration::from_secs(3),
                measured: true,
            }))
        }

        fn probe(
            &mut self,
            rate: f64,
            _number: usize,
            longer: bool,
        ) -> Result<Option<ProbeRecord>> {
            self.probed.push(rate);
            self.longer.push(longer);
            let p99 = self.p99_ms(rate);
            let (lower, upper) = match self.undecided_near {
                Some(limit) if (p99 / limit - 1.0).abs() < 0.2 => (0.5 * limit, 2.0 * limit),
                _ => (0.97 * p99, 1.03 * p99),
            };
            let interval = PercentileInterval {
                responses: 1000,
                estimate_ms: p99,
                lower_ms: lower,
                upper_ms: Some(upper),
            };
            Ok(Some(ProbeRecord {
                rate_per_s: rate,
                achieved_per_s: rate.min(self.keeps_up_to),
                kept_up: rate <= self.keeps_up_to,
                sessions: 4,
                sessions_busy: false,
                disturbed: false,
                objectives: vec![ObjectiveCheck {
                    objective: "p99 <= 50 ms".into(),
                    limit_ms: 50.0,
                    interval: Some(interval),
                    verdict: interval.verdict(50.0),
                }],
                verdict: Verdict::Undecided,
                spent_s: (1000.0 / rate).max(2.0),
                level: None,
            }))
        }
    }

    fn settings(max_time: Duration) -> SearchSettings {
        SearchSettings {
            objectives: vec!["p99<=50ms".parse().unwrap()],
            precision: 0.05,
            max_time,
            unit: "transactions/s".into(),
        }
    }

    #[test]
    fn the_search_brackets_the_limit_within_the_precision() {
        // Service 2 ms, capacity 500/s: p99 reaches 50 ms at 500 * (1 - 2/50) = 480/s.
        let mut server = Scripted::new(500.0, 2.0);
        let record = search(&mut server, &settings(Duration::from_secs(600))).unwrap();
        assert_eq!(record.stopped, SearchStop::Precision);
        assert!(record.precision_reached);
        // The interval's upper end (+3%) clears 50 ms up to 479.4/s.
        let (kept, broken) = (record.kept_rate.unwrap(), record.broken_rate.unwrap());
        let limit = 500.0 * (1.0 - 2.0 / (50.0 / 1.03));
        assert!(kept <= limit && broken > limit, "{kept} {broken} {limit}");
        assert!(broken / kept - 1.0 <= 0.05);
        // Started at half the capacity and rose by 1.5 until broken, then bisected.
        assert_eq!(server.probed[..3], [250.0, 375.0, 562.5]);
        assert!(record.probes.len() <= 8, "{:?}", server.probed);
        assert!(
            record.answer.starts_with("holds p99 <= 50 ms up to 4"),
            "{}",
            record.answer
        );
        assert!(record.answer.contains("; broken at "), "{}", record.answer);
    }

    #[test]
    fn a_first_probe_that_breaks_makes_the_search_descend() {
        // The closed loop overstates what holds 50 ms: service 45 ms, capacity 100/s. The
        // interval (+-3%) clears 50 ms while p99 <= 48.5 ms, up to 7.2/s.
        let mut server = Scripted::new(100.0, 45.0);
        // 1,000 responses at 7/s take minutes a probe: time enough for them.
        let record = search(&mut server, &settings(Duration::from_secs(100_000))).unwrap();
        assert_eq!(server.probed[..2], [50.0, 50.0 / 1.5]);
        assert_eq!(record.stopped, SearchStop::Precision);
        let (kept, broken) = (record.kept_rate.unwrap(), record.broken_rate.unwrap());
        let limit = 100.0 * (1.0 - 45.0 / (50.0 / 1.03));
        assert!(kept <= limit && broken > limit, "{kept} {broken} {limit}");
    }

    #[test]
    fn a_schedule_not_kept_is_broken_whatever_the_latency() {
        // The latency would allow 480/s, but the sessions fall behind above 300/s.
        let mut server = Scripted::new(500.0, 2.0);
        server.keeps_up_to = 300.0;
        let record = search(&mut server, &settings(Duration::from_secs(600))).unwrap();
        let (kept, broken) = (record.kept_rate.unwrap(), record.broken_rate.unwrap());
        assert!(kept <= 300.0 && broken > 300.0 && broken / kept - 1.0 <= 0.05);
        assert!(record.answer.contains("fell behind"), "{}", record.answer);
    }

    #[test]
    fn max_time_ends_the_search_and_the_answer_says_so() {
        // Capacity 3 s, then a first probe of 4 s (1,000 responses at 250/s): a second as
        // long would end past 9 s.
        let mut server = Scripted::new(500.0, 2.0);
        let record = search(&mut server, &settings(Duration::from_secs(9))).unwrap();
        assert_eq!(record.stopped, SearchStop::MaxTime);
        assert!(!record.precision_reached);
        assert!(record.spent_s <= 9.0, "{}", record.spent_s);
        assert!(
            record.answer.contains("--max-time ran out"),
            "{}",
            record.answer
        );
    }

    #[test]
    fn the_search_ends_at_its_floor_and_ceiling() {
        // Nothing holds 50 ms: service 60 ms.
        let mut slow = Scripted::new(100.0, 60.0);
        let record = search(&mut slow, &settings(Duration::from_secs(100_000))).unwrap();
        assert_eq!(record.stopped, SearchStop::NothingKept);
        assert_eq!(record.kept_rate, None);
        assert!(
            record
                .answer
                .starts_with("does not hold p99 <= 50 ms even at"),
            "{}",
            record.answer
        );
        // Everything holds: no service time, and the schedule always kept.
        let mut fast = Scripted::new(100.0, 0.0);
        fast.keeps_up_to = f64::INFINITY;
        let record = search(&mut fast, &settings(Duration::from_secs(100_000))).unwrap();
        assert_eq!(record.stopped, SearchStop::NothingBroken);
        assert_eq!(record.kept_rate, Some(1e5));
        assert!(
            record.answer.contains("the limit is higher"),
            "{}",
            record.answer
        );
    }

    #[test]
    fn an_undecided_probe_runs_again_longer_once_then_counts_as_broken() {
        let mut server = Scripted::new(500.0, 2.0);
        server.undecided_near = Some(50.0);
        let record = search(&mut server, &settings(Duration::from_secs(600))).unwrap();
        // Each undecided probe was followed by a longer one at the same rate.
        for (index, longer) in server.longer.iter().enumerate() {
            if *longer {
                assert_eq!(server.probed[index], server.probed[index - 1]);
                assert_eq!(record.probes[index - 1].verdict, Verdict::Undecided);
            }
        }
        assert!(server.longer.iter().any(|longer| *longer));
        // Undecided (p99 within 20% of 50 ms) counts as broken: kept needs p99 <= 40 ms,
        // up to 475/s.
        let (kept, broken) = (record.kept_rate.unwrap(), record.broken_rate.unwrap());
        assert!(kept <= 475.0 && broken > 475.0, "{kept} {broken}");
    }

    #[test]
    fn sessions_follow_littles_law_within_the_ceiling() {
        // 1,000/s at 10 ms each: 10 busy, 20 with room for bursts.
        assert_eq!(sessions_for(1000.0, 0.010, 64), 20);
        assert_eq!(sessions_for(1000.0, 0.010, 8), 8);
        assert_eq!(sessions_for(1.0, 0.001, 8), 1);
        assert_eq!(
            probe_length(500.0, 1000, Duration::from_secs(2), Duration::from_secs(60)),
            Duration::from_secs(2)
        );
        assert_eq!(
            probe_length(10.0, 1000, Duration::from_secs(2), Duration::from_secs(60)),
            Duration::from_secs(60)
        );
    }
}
