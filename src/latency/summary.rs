//! A level's response times as the result document keeps them: percentiles, the open
//! loop's rates, and the summary a session's recording becomes.

use super::{A_DAY_MS, Arrivals, Percentiles};
use serde::{Deserialize, Serialize};

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

/// The prefix of a replay's classes that hold its capture's logged durations
/// (`log:fingerprint-3`), not its own answers: kept apart from the level's classes.
pub const LOGGED: &str = "log:";

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
    /// The responses themselves, lossless (HdrHistogram's compressed V2 encoding, base64):
    /// several client hosts' parts of one campaign merge into exact percentiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
}

/// One class of a level's responses (a script's statement, a replay's fingerprint, an
/// order-entry transaction type): its name, bounded and without the statement's text, and
/// its responses encoded as `Latency::histogram` is (`levels[].classes[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassTimes {
    pub class: String,
    /// Where each of its responses starts: a statement's send (a script's statements, a
    /// replay's fingerprints), or the level's own (order entry's transactions, timed from
    /// when they were due in an open loop). Documents from before it say nothing: see
    /// [`ClassTimes::measured_from_or`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_from: Option<MeasuredFrom>,
    pub histogram: String,
}

impl ClassTimes {
    /// Where its responses start, for a document that did not say: a script's statements
    /// and a replay's fingerprints were always timed from the send, order entry's types as
    /// the level (`level`).
    pub fn measured_from_or(&self, level: MeasuredFrom) -> MeasuredFrom {
        self.measured_from.unwrap_or(
            if ["statement-", "fingerprint-"]
                .iter()
                .any(|kind| self.class.starts_with(kind))
            {
                MeasuredFrom::Send
            } else {
                level
            },
        )
    }

    /// Each class that was answered, named `name(index)`, timed from `measured_from` (None:
    /// as the level's responses are, filled in when the level ends).
    pub fn of(
        times: &[super::ResponseTimes],
        measured_from: Option<MeasuredFrom>,
        name: impl Fn(usize) -> String,
    ) -> Vec<Self> {
        times
            .iter()
            .enumerate()
            .filter(|(_, times)| times.count() > 0)
            .map(|(index, times)| Self {
                class: name(index),
                measured_from,
                histogram: times.encode(),
            })
            .collect()
    }
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

    /// Closed-loop response times of `unit`s ("transaction"), each from its send: what
    /// another tool's log or histogram gives.
    pub fn closed(unit: &str, response: Percentiles) -> Self {
        Self {
            unit: unit.to_string(),
            measured_from: MeasuredFrom::Send,
            response,
            service: None,
            schedule_lag: None,
            rate: None,
            limit_ms: None,
            late: None,
            histogram: None,
        }
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
            histogram: None,
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
