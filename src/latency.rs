//! Response time: what each statement (or job) waited for its answer, recorded by each
//! session in its own HdrHistogram and merged after the level, and the pacing of an open
//! loop (`--rate`), where latency is counted from when a statement was due, not from when a
//! late client got round to sending it (wrk2's correction of coordinated omission).

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The longest response a histogram holds; longer ones are counted as this.
const LONGEST_NS: u64 = 3_600_000_000_000;

/// Response times in nanoseconds, 3 significant digits from 1 ns to an hour. Allocated
/// once, before the timed window: recording never allocates.
#[derive(Debug, Clone)]
pub struct ResponseTimes(Histogram<u64>);

impl Default for ResponseTimes {
    fn default() -> Self {
        Self(Histogram::new_with_bounds(1, LONGEST_NS, 3).expect("valid histogram bounds"))
    }
}

impl ResponseTimes {
    /// 2 significant digits: for the many histograms of a timeline.
    pub fn coarse() -> Self {
        Self(Histogram::new_with_bounds(1, LONGEST_NS, 2).expect("valid histogram bounds"))
    }

    #[inline]
    pub fn record(&mut self, time: Duration) {
        let ns = u64::try_from(time.as_nanos()).unwrap_or(LONGEST_NS);
        self.0.saturating_record(ns.clamp(1, LONGEST_NS));
    }

    /// `count` responses of one time (a backlog's representative).
    pub fn record_n(&mut self, time: Duration, count: u64) {
        let ns = u64::try_from(time.as_nanos()).unwrap_or(LONGEST_NS);
        self.0.saturating_record_n(ns.clamp(1, LONGEST_NS), count);
    }

    pub fn merge(&mut self, other: &Self) {
        // Same bounds on both sides: adding cannot fail.
        let _ = self.0.add(&other.0);
    }

    pub fn count(&self) -> u64 {
        self.0.len()
    }

    /// The figures of these times, in milliseconds; None when nothing was recorded.
    pub fn percentiles(&self) -> Option<Percentiles> {
        if self.0.is_empty() {
            return None;
        }
        let ms = |ns: u64| ns as f64 / 1e6;
        let at = |quantile: f64| ms(self.0.value_at_quantile(quantile));
        Some(Percentiles {
            count: self.0.len(),
            mean_ms: self.0.mean() / 1e6,
            p50_ms: at(0.50),
            p90_ms: at(0.90),
            p95_ms: at(0.95),
            p99_ms: at(0.99),
            p999_ms: at(0.999),
            max_ms: ms(self.0.max()),
        })
    }
}

/// A distribution of response times, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub count: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
}

impl Percentiles {
    /// Exact figures of a few values in seconds (job times), as a histogram would give them
    /// to its resolution: nearest rank.
    pub fn of_seconds(values: &[f64]) -> Option<Self> {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let rank = |quantile: f64| {
            let index = (quantile * sorted.len() as f64).ceil() as usize;
            1e3 * sorted[index.clamp(1, sorted.len()) - 1]
        };
        Some(Self {
            count: sorted.len() as u64,
            mean_ms: 1e3 * sorted.iter().sum::<f64>() / sorted.len() as f64,
            p50_ms: rank(0.50),
            p90_ms: rank(0.90),
            p95_ms: rank(0.95),
            p99_ms: rank(0.99),
            p999_ms: rank(0.999),
            max_ms: 1e3 * sorted[sorted.len() - 1],
        })
    }

    /// The figure at a percentile this distribution carries (50, 90, 95, 99, 99.9, 100).
    pub fn at(&self, percentile: Percentile) -> f64 {
        match percentile {
            Percentile::P50 => self.p50_ms,
            Percentile::P90 => self.p90_ms,
            Percentile::P95 => self.p95_ms,
            Percentile::P99 => self.p99_ms,
            Percentile::P999 => self.p999_ms,
            Percentile::Max => self.max_ms,
            Percentile::Mean => self.mean_ms,
        }
    }
}

/// The figures a latency objective can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Percentile {
    P50,
    P90,
    P95,
    P99,
    P999,
    Max,
    Mean,
}

impl Percentile {
    pub fn name(self) -> &'static str {
        match self {
            Self::P50 => "p50",
            Self::P90 => "p90",
            Self::P95 => "p95",
            Self::P99 => "p99",
            Self::P999 => "p99.9",
            Self::Max => "max",
            Self::Mean => "mean",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.trim().to_ascii_lowercase().as_str() {
            "p50" | "median" => Self::P50,
            "p90" => Self::P90,
            "p95" => Self::P95,
            "p99" => Self::P99,
            "p99.9" | "p999" => Self::P999,
            "max" | "p100" => Self::Max,
            "mean" | "avg" => Self::Mean,
            _ => return None,
        })
    }
}

/// A latency objective: a percentile at most a time (`p99<=5ms`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Objective {
    pub percentile: Percentile,
    pub limit_ms: f64,
}

impl std::fmt::Display for Objective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // As the user wrote it: 5 ms, 0.5 ms (to the nanosecond).
        let limit = (self.limit_ms * 1e6).round() / 1e6;
        write!(f, "{} <= {limit} ms", self.percentile.name())
    }
}

impl std::str::FromStr for Objective {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let usage = || {
            format!(
                "'{text}' is not a latency objective: give a percentile, <= and a time, e.g. 'p99<=5ms' (p50, p90, p95, p99, p99.9, max, mean)"
            )
        };
        let (name, limit) = text.split_once("<=").ok_or_else(usage)?;
        let percentile = Percentile::parse(name).ok_or_else(usage)?;
        let limit = humantime::parse_duration(&limit.trim().replace(' ', ""))
            .map_err(|_| usage())?
            .as_secs_f64()
            * 1e3;
        if limit <= 0.0 {
            return Err(format!("'{text}': the limit must be above zero"));
        }
        Ok(Self {
            percentile,
            limit_ms: limit,
        })
    }
}

/// The longest a response time may be in a file: a day, in ms.
pub const A_DAY_MS: f64 = 86_400_000.0;

/// One step of `--rate`: statements per second for the whole level, or a share of the
/// throughput the same run measured closed-loop at that worker count just before.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OfferedRate {
    PerSecond(f64),
    /// A fraction (0.2 for 20%).
    Share(f64),
}

/// A share as the user wrote it: "50%", "12.5%".
pub fn share_text(share: f64) -> String {
    let percent = 100.0 * share;
    if (percent - percent.round()).abs() < 1e-9 {
        format!("{percent:.0}%")
    } else {
        format!("{}%", crate::format::significant(percent))
    }
}

/// The value of `--rate`: one rate or a list, each statements per second (`2000`, `2000/s`)
/// or a share of the closed-loop throughput (`50%`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RateSteps(pub Vec<OfferedRate>);

/// The most steps `--rate` takes: each is a level per worker count.
const MOST_RATE_STEPS: usize = 50;

impl std::str::FromStr for RateSteps {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let steps = text
            .split(',')
            .map(|part| {
                let part = part.trim();
                if let Some(percent) = part.strip_suffix('%') {
                    return match percent.trim().parse::<f64>() {
                        Ok(share) if share.is_finite() && (1.0..=1000.0).contains(&share) => {
                            Ok(OfferedRate::Share(share / 100.0))
                        }
                        _ => Err(format!(
                            "'{part}' is not a share of the closed-loop throughput: use 1% to 1000%, e.g. 50%"
                        )),
                    };
                }
                match part.trim_end_matches("/s").parse::<f64>() {
                    Ok(rate) if rate.is_finite() && (0.01..=1e7).contains(&rate) => {
                        Ok(OfferedRate::PerSecond(rate))
                    }
                    _ => Err(format!(
                        "'{part}' is not a rate: give statements per second for the whole level (0.01 to 10000000, e.g. 2000), a list (1000,2000,5000) or shares of the closed-loop throughput (50%,90%)"
                    )),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        if steps.len() > MOST_RATE_STEPS {
            return Err(format!(
                "{} rates is too many: at most {MOST_RATE_STEPS}, each a level at every worker count",
                steps.len()
            ));
        }
        if let Some((index, _)) = steps
            .iter()
            .enumerate()
            .find(|(index, step)| steps[..*index].contains(step))
        {
            return Err(format!(
                "'{}' is given twice in --rate: list each rate once",
                text.split(',').nth(index).unwrap_or(text).trim()
            ));
        }
        Ok(Self(steps))
    }
}

/// How statements are spaced in an open loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Evenly, sessions offset from each other.
    Uniform,
    /// At random, as independent users arrive (exponential gaps).
    Poisson,
}

/// One session's arrivals seed, from the run's: sessions draw apart, and one run seed
/// repeats them all.
pub fn session_seed(run_seed: u64, worker: usize) -> u64 {
    run_seed ^ (worker as u64).wrapping_mul(0xA076_1D64_78BD_642F)
}

/// When each statement of one session is due, from the start of a window: every 1/rate
/// seconds (uniform, this session's share of the spacing offset by `phase`), or with
/// exponential gaps of mean 1/rate (Poisson). Pure arithmetic: tests drive it with a clock of
/// their own.
#[derive(Debug, Clone)]
pub struct Pacer {
    rate_per_s: f64,
    arrivals: Arrivals,
    phase: f64,
    state: u64,
    seed: u64,
    due_s: f64,
    index: u64,
    /// Windows begun: each draws its own Poisson arrivals, so batches stay independent.
    windows: u64,
}

impl Pacer {
    /// A session's pacer: `rate_per_s` its share of the level's rate, `phase` in [0, 1) where
    /// its first statement falls within the first spacing (uniform), `seed` its own.
    pub fn new(rate_per_s: f64, arrivals: Arrivals, phase: f64, seed: u64) -> Self {
        let mut pacer = Self {
            rate_per_s,
            arrivals,
            phase: phase.clamp(0.0, 1.0),
            state: seed,
            seed,
            due_s: 0.0,
            index: 0,
            windows: 0,
        };
        pacer.restart();
        pacer
    }

    /// Back to the start of a window: the next statement is due at the first spacing (and
    /// Poisson arrivals drawn anew for this window).
    pub fn restart(&mut self) {
        self.state = self.seed ^ self.windows.wrapping_mul(0xD1B5_4A32_D192_ED03);
        self.windows += 1;
        self.index = 0;
        self.due_s = self.first_due();
    }

    fn first_due(&mut self) -> f64 {
        match self.arrivals {
            Arrivals::Uniform => self.phase / self.rate_per_s,
            Arrivals::Poisson => self.gap(),
        }
    }

    /// Statements sent since the window's start.
    pub fn sent(&self) -> u64 {
        self.index
    }

    /// When the next statement is due, in seconds from the window's start.
    pub fn due_s(&self) -> f64 {
        self.due_s
    }

    /// The next statement was sent: moves to the one after it.
    pub fn advance(&mut self) {
        self.index += 1;
        self.due_s = match self.arrivals {
            // From the start, not by adding gaps: no drift over a long window.
            Arrivals::Uniform => (self.index as f64 + self.phase) / self.rate_per_s,
            Arrivals::Poisson => self.due_s + self.gap(),
        };
    }

    /// Statements due by `elapsed_s` that were not sent: the backlog a window ends with.
    /// Counted, not walked, so a rate no session can keep costs nothing to tally: exactly
    /// for uniform arrivals, the expected count for Poisson ones.
    pub fn behind_at(&self, elapsed_s: f64) -> u64 {
        if self.due_s > elapsed_s {
            return 0;
        }
        let behind = match self.arrivals {
            // Due k = (k + phase) / rate for k from `index` up to the last at or before now.
            Arrivals::Uniform => {
                (elapsed_s * self.rate_per_s - self.phase).floor() - self.index as f64 + 1.0
            }
            Arrivals::Poisson => (elapsed_s - self.due_s) * self.rate_per_s + 1.0,
        };
        behind.max(1.0) as u64
    }

    /// An exponential gap of mean 1/rate (splitmix64 for the uniform draw).
    fn gap(&mut self) -> f64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // In (0, 1]: never ln(0).
        let uniform = ((z >> 11) + 1) as f64 / (1u64 << 53) as f64;
        -uniform.ln() / self.rate_per_s
    }
}

/// The open loop's own figures for one session (or merged over a level).
#[derive(Debug, Clone)]
pub struct OpenLoop {
    /// From the actual send to the answer: what the server took.
    pub service: ResponseTimes,
    /// From when the statement was due to its send: how late the client was (pgbench's
    /// schedule lag).
    pub lag: ResponseTimes,
    /// Statements per second asked of this session.
    pub rate_per_s: f64,
    pub arrivals: Arrivals,
    /// Statements due in the windows, and those sent.
    pub due: u64,
    pub sent: u64,
    /// The windows' time, summed over the sessions merged, and how many they are.
    pub window_s: f64,
    pub sessions: u32,
}

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
    fn record(&mut self, answered: Duration, response: Duration) {
        // Answers drained just after the window's end belong to its last interval.
        let index = (answered.as_nanos() / self.width.as_nanos().max(1)) as usize;
        let last = self.slots.len().saturating_sub(1);
        if let Some(slot) = self.slots.get_mut(index.min(last)) {
            slot.record(response);
        }
    }

    fn merge(&mut self, other: &Self) {
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
        })
    }
}

/// Where each response time starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MeasuredFrom {
    /// The statement's send (closed loop: the next is sent when this one is answered).
    Send,
    /// When the statement was due by the open loop's schedule, however late it was sent.
    Due,
    /// The job's start (cpu, memory, bandwidth: job time).
    JobStart,
}

/// A level's response times: `levels[].latency` in the result document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// What one response is: "statement", "job".
    pub unit: String,
    pub measured_from: MeasuredFrom,
    #[serde(flatten)]
    pub response: Percentiles,
    /// Open loop: from the send to the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<Percentiles>,
    /// Open loop: from when a statement was due to its send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_lag: Option<Percentiles>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateFigures>,
    /// `--latency-limit`, and the statements answered later than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<u64>,
}

/// The open loop's rate over a level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RateFigures {
    /// Statements per second asked of the level (all sessions).
    pub target_per_s: f64,
    /// Statements per second sent.
    pub achieved_per_s: f64,
    pub arrivals: Arrivals,
    /// Statements due in the level's windows, and those sent.
    pub due: u64,
    pub sent: u64,
    /// Whether the sessions kept up: at most 1% of the statements due were not sent.
    pub sustained: bool,
    /// A `--rate 50%` step: the share of the closed-loop throughput measured just before
    /// at this worker count that `target_per_s` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
}

impl Latency {
    /// Statements' response times, not job times (which the speed curve shows already).
    pub fn is_statement(&self) -> bool {
        self.measured_from != MeasuredFrom::JobStart
    }

    /// Whether a file's figures can be response times: finite, not negative, below a day,
    /// and in percentile order; else the first field that is not, and why. (The rates' and
    /// limit's ranges are checked where a file is read, `analysis::input`.)
    pub fn check(&self) -> Result<(), String> {
        let mut distributions = vec![("", &self.response)];
        distributions.extend(self.service.as_ref().map(|service| ("service.", service)));
        distributions.extend(self.schedule_lag.as_ref().map(|lag| ("schedule_lag.", lag)));
        for (prefix, figures) in distributions {
            let ordered = [
                ("p50_ms", figures.p50_ms),
                ("p90_ms", figures.p90_ms),
                ("p95_ms", figures.p95_ms),
                ("p99_ms", figures.p99_ms),
                ("p999_ms", figures.p999_ms),
                ("max_ms", figures.max_ms),
            ];
            for (name, value) in ordered.iter().chain([("mean_ms", figures.mean_ms)].iter()) {
                if !(0.0..=A_DAY_MS).contains(value) {
                    return Err(format!(
                        "{prefix}{name} is {value}: a response time is between 0 and a day (in ms)"
                    ));
                }
            }
            if let Some(pair) = ordered.windows(2).find(|pair| pair[0].1 > pair[1].1) {
                return Err(format!(
                    "{prefix}{} ({}) is above {prefix}{} ({}): percentiles grow",
                    pair[0].0, pair[0].1, pair[1].0, pair[1].1
                ));
            }
            if figures.mean_ms > figures.max_ms {
                return Err(format!("{prefix}mean_ms is above {prefix}max_ms"));
            }
        }
        if self.late.is_some_and(|late| late > self.response.count) {
            return Err("late is above count: more late statements than statements".into());
        }
        if let Some(rate) = self.rate
            && rate.sent > rate.due
        {
            return Err("rate.sent is above rate.due: more statements sent than were due".into());
        }
        if let Some(share) = self.rate.and_then(|rate| rate.share)
            && !(share.is_finite() && share > 0.0 && share <= 10.0)
        {
            return Err(format!(
                "rate.share is {share}: a share of the closed-loop throughput is above 0 and at most 10 (1000%)"
            ));
        }
        Ok(())
    }

    /// Job times as response times (cpu, memory, bandwidth: one response per job).
    pub fn of_jobs(job_times_s: &[f64]) -> Option<Self> {
        Some(Self {
            unit: "job".to_string(),
            measured_from: MeasuredFrom::JobStart,
            response: Percentiles::of_seconds(job_times_s)?,
            service: None,
            schedule_lag: None,
            rate: None,
            limit_ms: None,
            late: None,
        })
    }

    /// "sustained 3,410/s of 5,000/s", when the open loop fell behind.
    pub fn shortfall(&self) -> Option<String> {
        let rate = self.rate.filter(|rate| !rate.sustained)?;
        Some(format!(
            "sustained {}/s of {}/s: the sessions fell behind the schedule ({} of {} statements due were not sent, counted as waiting until the window's end); latency counts from when each was due",
            crate::format::significant(rate.achieved_per_s),
            crate::format::significant(rate.target_per_s),
            rate.due.saturating_sub(rate.sent),
            rate.due
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_numbers_lists_or_shares_of_the_closed_loop() {
        let steps = |text: &str| text.parse::<RateSteps>().map(|steps| steps.0);
        assert_eq!(steps("2000"), Ok(vec![OfferedRate::PerSecond(2000.0)]));
        assert_eq!(steps("12.5/s"), Ok(vec![OfferedRate::PerSecond(12.5)]));
        assert_eq!(
            steps("1000, 2000/s,5000"),
            Ok(vec![
                OfferedRate::PerSecond(1000.0),
                OfferedRate::PerSecond(2000.0),
                OfferedRate::PerSecond(5000.0)
            ])
        );
        assert_eq!(
            steps("20%,90%, 120%"),
            Ok(vec![
                OfferedRate::Share(0.2),
                OfferedRate::Share(0.9),
                OfferedRate::Share(1.2)
            ])
        );
        for bad in [
            "0", "-5", "nan", "inf", "1e8", "fast", "", "1000,", "0%", "2000%", "x%", "50%,50%",
        ] {
            assert!(steps(bad).is_err(), "{bad}");
        }
        let many = vec!["10"; MOST_RATE_STEPS + 1].join(",");
        assert!(steps(&many).unwrap_err().contains("too many"));
        assert_eq!(share_text(0.5), "50%");
        assert_eq!(share_text(0.125), "12.5%");
    }

    fn ms(value: f64) -> Duration {
        Duration::from_secs_f64(value / 1e3)
    }

    #[test]
    fn objectives_are_parsed_with_any_percentile_and_unit() {
        let objective: Objective = "p99<=5ms".parse().unwrap();
        assert_eq!(objective.percentile, Percentile::P99);
        assert!((objective.limit_ms - 5.0).abs() < 1e-12);
        let objective: Objective = "p99.9 <= 500us".parse().unwrap();
        assert_eq!(objective.percentile, Percentile::P999);
        assert!((objective.limit_ms - 0.5).abs() < 1e-12);
        assert_eq!(objective.to_string(), "p99.9 <= 0.5 ms");
        for bad in ["p99<5ms", "p42<=5ms", "p99<=", "p99<=fast", "p99<=0ms", ""] {
            assert!(bad.parse::<Objective>().is_err(), "{bad}");
        }
    }

    #[test]
    fn uniform_arrivals_are_evenly_spaced_and_offset_by_phase() {
        let mut pacer = Pacer::new(100.0, Arrivals::Uniform, 0.5, 7);
        let mut due = Vec::new();
        for _ in 0..5 {
            due.push(pacer.due_s());
            pacer.advance();
        }
        let expected = [0.005, 0.015, 0.025, 0.035, 0.045];
        for (got, want) in due.iter().zip(expected) {
            assert!((got - want).abs() < 1e-12, "{due:?}");
        }
        // 1,000 s on: no drift from adding gaps.
        for _ in 5..100_000 {
            pacer.advance();
        }
        assert!((pacer.due_s() - 1000.005).abs() < 1e-9, "{}", pacer.due_s());
        pacer.restart();
        assert_eq!(pacer.due_s(), 0.005);
    }

    fn timeline(rates: &[f64]) -> Vec<IntervalFigures> {
        rates
            .iter()
            .enumerate()
            .map(|(index, &rate)| IntervalFigures {
                start_s: index as f64,
                length_s: 1.0,
                responses: rate as u64,
                rate_per_s: rate,
                p50_ms: Some(1.0),
                p99_ms: Some(2.0),
                server_lio_per_s: None,
                server_pio_per_s: None,
            })
            .collect()
    }

    #[test]
    fn a_timeline_names_its_warm_up_and_its_stalls_and_nothing_in_its_noise() {
        // Fixed seeds of 3% noise around 1,000/s: nothing said.
        let mut state = 7u64;
        let mut noisy = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            1000.0 * (1.0 + 0.06 * ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5))
        };
        let calm: Vec<f64> = (0..20).map(|_| noisy()).collect();
        assert!(timeline_warnings(&timeline(&calm), "statements").is_empty());
        // Two slow first seconds and a checkpoint-like dip at 12 s.
        let mut rates = calm.clone();
        rates[0] = 400.0;
        rates[1] = 600.0;
        rates[12] = 150.0;
        let said = timeline_warnings(&timeline(&rates), "statements");
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(
            said[0].starts_with("warm-up: the first 2 s ran at 50%"),
            "{said:?}"
        );
        assert!(said[0].contains("--warmup 2s"), "{said:?}");
        assert!(
            said[1].starts_with("a stall at 12-13 s: 150 statements/s"),
            "{said:?}"
        );
        // Too short a timeline to judge.
        assert!(timeline_warnings(&timeline(&rates[..4]), "statements").is_empty());
    }

    #[test]
    fn intervals_count_each_response_in_its_own_slot() {
        let mut intervals = Intervals::new(Duration::from_millis(100), Duration::from_millis(250));
        assert_eq!(intervals.slots.len(), 3);
        for at in [10, 20, 150, 240, 260] {
            intervals.record(Duration::from_millis(at), Duration::from_micros(100));
        }
        let figures = intervals.figures(2);
        let counts: Vec<u64> = figures.iter().map(|f| f.responses).collect();
        // 260 ms: an answer drained just after the window's end counts in its last interval.
        assert_eq!(counts, [2, 1, 2]);
        // The last interval is 50 ms long; two batches: 2 responses over 0.1 s.
        assert!((figures[2].length_s - 0.05).abs() < 1e-12);
        assert!((figures[2].rate_per_s - 20.0).abs() < 1e-9);
        assert!((figures[0].rate_per_s - 10.0).abs() < 1e-9);
        // A long window gets wider intervals, never more than 600.
        let long = Intervals::new(Duration::from_secs(1), Duration::from_secs(7200));
        assert_eq!(long.slots.len(), 600);
    }

    #[test]
    fn the_backlog_is_counted_without_walking_it() {
        let mut pacer = Pacer::new(100.0, Arrivals::Uniform, 0.5, 1);
        // Due at 5, 15, 25, ... ms: 3 sent, then at 100 ms the ones due at 35..95 are behind.
        for _ in 0..3 {
            pacer.advance();
        }
        assert_eq!(pacer.behind_at(0.030), 0);
        assert_eq!(pacer.behind_at(0.035), 1);
        assert_eq!(pacer.behind_at(0.1), 7);
        // A week at ten million a second is tallied at once.
        let fresh = Pacer::new(1e7, Arrivals::Poisson, 0.0, 3);
        let week = 7.0 * 86_400.0;
        let behind = fresh.behind_at(week) as f64;
        assert!((behind / (week * 1e7) - 1.0).abs() < 1e-6, "{behind}");
    }

    /// One run seed gives each session the same arrivals again; another run seed, or
    /// another session, other arrivals.
    #[test]
    fn a_run_seed_repeats_every_sessions_arrivals() {
        let arrivals = |run_seed: u64, worker: usize| -> Vec<f64> {
            let mut pacer = Pacer::new(
                100.0,
                Arrivals::Poisson,
                0.0,
                session_seed(run_seed, worker),
            );
            (0..50)
                .map(|_| {
                    let due = pacer.due_s();
                    pacer.advance();
                    due
                })
                .collect()
        };
        assert_eq!(arrivals(42, 3), arrivals(42, 3));
        assert_ne!(arrivals(42, 3), arrivals(43, 3));
        assert_ne!(arrivals(42, 3), arrivals(42, 4));
    }

    #[test]
    fn poisson_arrivals_have_the_asked_rate_and_exponential_gaps() {
        for seed in [1, 2, 3] {
            let rate = 250.0;
            let mut pacer = Pacer::new(rate, Arrivals::Poisson, 0.0, seed);
            let mut gaps = Vec::new();
            let mut last = 0.0;
            for _ in 0..40_000 {
                gaps.push(pacer.due_s() - last);
                last = pacer.due_s();
                pacer.advance();
            }
            let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
            assert!((mean * rate - 1.0).abs() < 0.02, "mean gap {mean}");
            // Exponential: the standard deviation equals the mean, and e^-1 of the gaps
            // exceed it.
            let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
            assert!(
                (var.sqrt() / mean - 1.0).abs() < 0.03,
                "cv {}",
                var.sqrt() / mean
            );
            let above = gaps.iter().filter(|&&g| g > mean).count() as f64 / gaps.len() as f64;
            assert!((above - (-1.0f64).exp()).abs() < 0.01, "{above}");
            // Each window draws its own arrivals: batches are independent.
            pacer.restart();
            assert!((pacer.due_s() - gaps[0]).abs() > 1e-12);
        }
    }

    /// A fake clock drives a session that serves each statement in 1 ms at 100/s, with one
    /// stall of 500 ms: the closed loop's histogram sees one slow statement; the open loop,
    /// measuring from when each was due, sees every statement the stall delayed.
    #[test]
    fn corrected_latency_counts_what_a_stall_delayed() {
        let run = |open: bool| {
            let mut recorder = if open {
                SessionLatency::open("statement", Some(ms(50.0)), 100.0, Arrivals::Uniform)
            } else {
                SessionLatency::closed("statement", Some(ms(50.0)))
            };
            let mut pacer = Pacer::new(100.0, Arrivals::Uniform, 0.0, 1);
            let mut now = 0.0f64; // ms
            let window = 2000.0;
            let mut sent = 0;
            while now < window {
                if open {
                    // Wait until due, as the session loop sleeps.
                    now = now.max(pacer.due_s() * 1e3);
                }
                let due = pacer.due_s() * 1e3;
                let service = if sent == 50 { 500.0 } else { 1.0 };
                let send = now;
                now += service;
                recorder.answered(open.then(|| ms(due)), ms(send), ms(now));
                pacer.advance();
                sent += 1;
                if !open {
                    // A closed loop thinks 9 ms: the same 100/s when nothing stalls.
                    now += 9.0;
                }
            }
            recorder.window_ended(
                sent,
                pacer.behind_at(window / 1e3),
                ms(pacer.due_s() * 1e3),
                ms(window),
            );
            recorder.figures(window / 1e3).unwrap()
        };
        let closed = run(false);
        let open = run(true);
        // Closed: one statement in ~150 took 500 ms; p99 stays at the 1 ms service.
        assert_eq!(closed.late, Some(1));
        assert!(closed.response.p99_ms < 1.1, "{closed:?}");
        assert!(closed.response.max_ms > 499.0);
        // Open: the 50 statements due during the stall each waited for it.
        assert!(open.late.unwrap() >= 45, "{open:?}");
        assert!(open.response.p90_ms > 50.0, "{open:?}");
        let service = open.service.unwrap();
        assert!(service.p90_ms < 1.1, "{service:?}");
        assert!(open.schedule_lag.unwrap().max_ms > 490.0);
        let rate = open.rate.unwrap();
        assert!(rate.sustained, "{rate:?}");
        assert_eq!(open.measured_from, MeasuredFrom::Due);
    }

    #[test]
    fn a_rate_the_session_cannot_keep_is_said() {
        // 1,000/s asked; each statement takes 2 ms: half are sent.
        let mut recorder = SessionLatency::open("statement", None, 1000.0, Arrivals::Uniform);
        let mut pacer = Pacer::new(1000.0, Arrivals::Uniform, 0.0, 1);
        let (mut now, mut sent) = (0.0f64, 0);
        while now < 1.0 {
            let due = pacer.due_s();
            now = now.max(due);
            let send = now;
            now += 0.002;
            recorder.answered(
                Some(Duration::from_secs_f64(due)),
                Duration::from_secs_f64(send),
                Duration::from_secs_f64(now),
            );
            pacer.advance();
            sent += 1;
        }
        recorder.window_ended(
            sent,
            pacer.behind_at(now),
            Duration::from_secs_f64(pacer.due_s()),
            Duration::from_secs_f64(now),
        );
        let figures = recorder.figures(now).unwrap();
        let rate = figures.rate.unwrap();
        assert!(!rate.sustained);
        assert!((rate.achieved_per_s - 500.0).abs() < 5.0, "{rate:?}");
        assert!(rate.due >= 999, "{rate:?}");
        let said = figures.shortfall().unwrap();
        assert!(said.starts_with("sustained 500/s of 1.00 K/s"), "{said}");
        // The backlog grows linearly: the last statement waited about half the window.
        assert!(figures.response.max_ms > 450.0, "{figures:?}");
    }

    #[test]
    fn merged_sessions_add_their_counts_and_rates() {
        let mut one = SessionLatency::open("statement", None, 50.0, Arrivals::Poisson);
        let mut two = one.clone();
        one.answered(Some(ms(1.0)), ms(1.0), ms(3.0));
        two.answered(Some(ms(1.0)), ms(2.0), ms(11.0));
        one.window_ended(1, 0, Duration::ZERO, Duration::from_secs(1));
        two.window_ended(1, 0, Duration::ZERO, Duration::from_secs(1));
        one.merge(&two);
        let figures = one.figures(1.0).unwrap();
        assert_eq!(figures.response.count, 2);
        assert_eq!(figures.rate.unwrap().target_per_s, 100.0);
        assert!((figures.response.max_ms - 10.0).abs() < 0.01);
        assert!((figures.service.unwrap().max_ms - 9.0).abs() < 0.01);
        assert!((figures.schedule_lag.unwrap().max_ms - 1.0).abs() < 0.01);
    }

    #[test]
    fn job_time_percentiles_are_nearest_rank() {
        let times: Vec<f64> = (1..=100).map(|i| i as f64 / 1000.0).collect();
        let figures = Percentiles::of_seconds(&times).unwrap();
        assert_eq!(figures.p50_ms, 50.0);
        assert_eq!(figures.p99_ms, 99.0);
        assert_eq!(figures.max_ms, 100.0);
        assert!((figures.mean_ms - 50.5).abs() < 1e-9);
        assert!(Percentiles::of_seconds(&[]).is_none());
    }

    #[test]
    fn histogram_percentiles_are_within_its_resolution() {
        let mut times = ResponseTimes::default();
        for us in 1..=10_000u64 {
            times.record(Duration::from_micros(us));
        }
        let figures = times.percentiles().unwrap();
        for (got, want) in [
            (figures.p50_ms, 5.0),
            (figures.p99_ms, 9.9),
            (figures.max_ms, 10.0),
        ] {
            assert!((got / want - 1.0).abs() < 0.001, "{got} vs {want}");
        }
    }
}
