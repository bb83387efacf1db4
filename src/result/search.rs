//! A search's record (`run --find`): the objective, every probe in order with its verdict and
//! intervals, the bracket it ended with, and why it stopped; `search` in the result document.
//! Each probe is also a level of the document (`levels[].search_step`).

use serde::{Deserialize, Serialize};

use crate::format::significant;
use crate::latency::{PercentileInterval, Verdict};

/// What a level of a search was: the closed-loop measurement of capacity, or a probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchStep {
    Capacity,
    /// The probe's number, from 1 (`search.probes[n - 1]`).
    Probe(usize),
}

/// One objective judged on one probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectiveCheck {
    /// As written: "p99 <= 5 ms", "new_order p90 <= 5 ms".
    pub objective: String,
    pub limit_ms: f64,
    /// None: no responses of its class were answered.
    pub interval: Option<PercentileInterval>,
    pub verdict: Verdict,
}

/// One probe: an open-loop level at an offered rate, and what it showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRecord {
    /// Offered, in the search's unit per second.
    pub rate_per_s: f64,
    pub achieved_per_s: f64,
    /// Whether the sessions kept up with the schedule (no growing backlog).
    pub kept_up: bool,
    pub sessions: usize,
    /// Every session was busy as often as it could be, and there were -w of them: the
    /// client, not the server, may have bounded this probe.
    #[serde(default)]
    pub sessions_busy: bool,
    pub objectives: Vec<ObjectiveCheck>,
    /// Other processes took the CPUs while it ran, and again when it was measured again:
    /// its verdict may be the host's, not the server's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disturbed: bool,
    /// Kept when every objective was kept and the schedule was; broken when one was broken
    /// or the schedule was not kept; undecided (counted as broken) otherwise.
    pub verdict: Verdict,
    pub spent_s: f64,
    /// Its level in `levels[]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<usize>,
}

impl ProbeRecord {
    /// The probe's verdict from its objectives' and its schedule.
    pub fn judged(&self) -> Verdict {
        let verdicts = self.objectives.iter().map(|check| check.verdict);
        if !self.kept_up || verdicts.clone().any(|verdict| verdict == Verdict::Broken) {
            Verdict::Broken
        } else if self.objectives.is_empty()
            || verdicts
                .clone()
                .any(|verdict| verdict == Verdict::Undecided)
        {
            Verdict::Undecided
        } else {
            Verdict::Kept
        }
    }

    /// Whether the search counts it as holding the objective: undecided counts as broken.
    pub fn holds(&self) -> bool {
        self.verdict == Verdict::Kept
    }

    /// "p99 4.6 ms [4.4, 4.9]" for each objective, and a schedule not kept.
    fn figures(&self) -> String {
        let mut parts: Vec<String> = self
            .objectives
            .iter()
            .map(|check| {
                let name = check
                    .objective
                    .split(" <=")
                    .next()
                    .unwrap_or(&check.objective);
                match &check.interval {
                    Some(interval) => format!("{name} {}", interval.text()),
                    None => format!("{name} not answered"),
                }
            })
            .collect();
        if !self.kept_up {
            parts.push(format!(
                "sent {}/s: fell behind",
                significant(self.achieved_per_s)
            ));
        }
        if self.verdict == Verdict::Undecided {
            parts.push("undecided, counted as broken".to_string());
        }
        parts.join(", ")
    }
}

/// Why a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchStop {
    /// The largest kept rate and the smallest broken one are within the precision.
    Precision,
    /// `--max-time` ran out first.
    MaxTime,
    /// Even the lowest rate tried broke the objective.
    NothingKept,
    /// Even the highest rate tried kept it.
    NothingBroken,
    /// Stopped by a signal.
    Stopped,
}

/// `search` in the result document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchRecord {
    /// Every objective, all to hold: "p99 <= 5 ms".
    pub objectives: Vec<String>,
    /// The rate's unit: "transactions/s".
    pub unit: String,
    /// The closed-loop rate the probes started from.
    pub capacity_per_s: Option<f64>,
    pub probes: Vec<ProbeRecord>,
    pub kept_rate: Option<f64>,
    pub broken_rate: Option<f64>,
    /// `--find-precision`, and whether broken / kept - 1 came within it.
    pub precision: f64,
    pub precision_reached: bool,
    pub spent_s: f64,
    pub max_time_s: f64,
    pub stopped: SearchStop,
    /// The sentence the run ends with.
    pub answer: String,
}

impl SearchRecord {
    /// The largest kept probe and the smallest broken one above it.
    pub fn bracket(&self) -> (Option<&ProbeRecord>, Option<&ProbeRecord>) {
        let kept = self
            .probes
            .iter()
            .filter(|probe| probe.holds())
            .max_by(|a, b| a.rate_per_s.total_cmp(&b.rate_per_s));
        let floor = kept.map_or(0.0, |probe| probe.rate_per_s);
        let broken = self
            .probes
            .iter()
            .filter(|probe| !probe.holds() && probe.rate_per_s > floor)
            .min_by(|a, b| a.rate_per_s.total_cmp(&b.rate_per_s));
        (kept, broken)
    }

    /// "holds p99 <= 5 ms up to 12.3 K transactions/s (kept at 12.0 K, p99 4.6 ms [4.4, 4.9];
    /// broken at 12.6 K, p99 6.1 ms [5.8, 6.5])", and what bounded or cut it short.
    pub fn sentence(&self) -> String {
        let objective = self.objectives.join(" and ");
        let (kept, broken) = self.bracket();
        let mut text = match (kept, broken) {
            (Some(kept), Some(broken)) => format!(
                "holds {objective} up to {} {} (kept at {}, {}; broken at {}, {})",
                significant((kept.rate_per_s * broken.rate_per_s).sqrt()),
                self.unit,
                significant(kept.rate_per_s),
                kept.figures(),
                significant(broken.rate_per_s),
                broken.figures()
            ),
            (Some(kept), None) => format!(
                "holds {objective} at every rate tried, up to {} {} ({}): the limit is higher",
                significant(kept.rate_per_s),
                self.unit,
                kept.figures()
            ),
            (None, Some(broken)) => format!(
                "does not hold {objective} even at {} {} ({})",
                significant(broken.rate_per_s),
                self.unit,
                broken.figures()
            ),
            (None, None) => format!("no probe was measured for {objective}"),
        };
        match self.stopped {
            SearchStop::MaxTime if !self.precision_reached => text.push_str(&format!(
                "; --max-time ran out after {} s with the bracket {} wide, not {}",
                significant(self.spent_s),
                self.width_text(),
                crate::format::percent(self.precision)
            )),
            SearchStop::Stopped => text.push_str("; stopped by a signal before the end"),
            _ => {}
        }
        let disturbed: Vec<String> = [kept, broken]
            .into_iter()
            .flatten()
            .filter(|probe| probe.disturbed)
            .map(|probe| significant(probe.rate_per_s))
            .collect();
        match &disturbed[..] {
            [] => {}
            [one] => text.push_str(&format!(
                "; the probe at {one} was disturbed twice (other processes took the CPUs): search again on an idle host"
            )),
            [kept, broken, ..] => text.push_str(&format!(
                "; the probes at {kept} and at {broken} were disturbed twice (other processes took the CPUs): search again on an idle host"
            )),
        }
        if broken.is_some_and(|probe| probe.sessions_busy) {
            text.push_str(&format!(
                "; the broken probe's {} sessions (-w) were all busy: the client's session count may have bounded it (raise -w)",
                broken.map_or(0, |probe| probe.sessions)
            ));
        }
        text
    }

    /// broken / kept - 1, as a percentage; "unknown" without both.
    fn width_text(&self) -> String {
        match (self.kept_rate, self.broken_rate) {
            (Some(kept), Some(broken)) if kept > 0.0 => crate::format::percent(broken / kept - 1.0),
            _ => "unknown".to_string(),
        }
    }
}
