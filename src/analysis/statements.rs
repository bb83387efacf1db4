//! Two replays of one capture compared statement by statement: at each speed both replayed,
//! each fingerprint's p50 and p99 service time (sent to answered: lateness inherited from a
//! slow statement before does not count) as a ratio with an interval, and a verdict that
//! calls a change only beyond the noise, as SQL Performance Analyzer classifies statements
//! improved or regressed. The workload-wide change weighs each fingerprint by its share of
//! the baseline's time.

use serde::{Deserialize, Serialize};

use super::latency::OpenLoopSeries;
use crate::latency::{Percentile, PercentileInterval, ResponseTimes};

/// A ratio beyond this (or below its inverse), interval and all, is a change.
pub(crate) const CHANGE_RATIO: f64 = 1.2;
/// Nor is a difference smaller than this, whatever its ratio: a timer's and a network's
/// grain.
pub(crate) const CHANGE_MS: f64 = 0.1;

/// A statement's verdict, or a workload's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatementVerdict {
    Regressed,
    Improved,
    /// Within the noise: the interval reaches the band around 1, or the difference is small.
    Unchanged,
    /// Too few answers on one side to bound the percentile.
    TooFew,
}

impl StatementVerdict {
    pub fn word(self) -> &'static str {
        match self {
            Self::Regressed => "regressed",
            Self::Improved => "improved",
            Self::Unchanged => "unchanged",
            Self::TooFew => "too few to tell",
        }
    }
}

/// One percentile on both sides: the candidate's over the baseline's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatioFigure {
    pub baseline_ms: f64,
    pub candidate_ms: f64,
    pub ratio: f64,
    /// The ratio's bounds from the two 95% intervals (the candidate's low end over the
    /// baseline's high end, and the other way): None where a side is unbounded.
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub verdict: StatementVerdict,
}

impl RatioFigure {
    fn of(baseline: PercentileInterval, candidate: PercentileInterval) -> Option<Self> {
        let ratio = candidate.estimate_ms / baseline.estimate_ms;
        if !ratio.is_finite() {
            return None;
        }
        let low = (baseline.upper_ms)
            .filter(|upper| *upper > 0.0)
            .map(|upper| candidate.lower_ms / upper);
        let high = (candidate.upper_ms)
            .filter(|_| baseline.lower_ms > 0.0)
            .map(|upper| upper / baseline.lower_ms);
        let difference = candidate.estimate_ms - baseline.estimate_ms;
        let verdict = match (low, high) {
            (Some(low), _) if low > CHANGE_RATIO && difference > CHANGE_MS => {
                StatementVerdict::Regressed
            }
            (_, Some(high)) if high < 1.0 / CHANGE_RATIO && -difference > CHANGE_MS => {
                StatementVerdict::Improved
            }
            (Some(_), Some(_)) => StatementVerdict::Unchanged,
            _ => StatementVerdict::TooFew,
        };
        Some(Self {
            baseline_ms: baseline.estimate_ms,
            candidate_ms: candidate.estimate_ms,
            ratio,
            low,
            high,
            verdict,
        })
    }

    /// "2.40x [2.10, 2.80]", or "2.40x [2.10, -]" where a bound is unknown.
    pub fn text(&self) -> String {
        let bound =
            |value: Option<f64>| value.map_or("-".to_string(), |value| format!("{value:.2}"));
        format!(
            "{:.2}x [{}, {}]",
            self.ratio,
            bound(self.low),
            bound(self.high)
        )
    }
}

/// A level's figures by name.
type Figures = std::collections::BTreeMap<String, f64>;

/// One SQLSTATE's refusals in both replays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorsCompared {
    pub sqlstate: String,
    pub baseline: u64,
    pub candidate: u64,
}

/// Each SQLSTATE either level's figures count ("failures SQLSTATE 23505"), in code order.
fn errors_compared(before: &Figures, after: &Figures) -> Vec<ErrorsCompared> {
    const PREFIX: &str = "failures SQLSTATE ";
    let codes: std::collections::BTreeSet<&str> = (before.keys().chain(after.keys()))
        .filter_map(|name| name.strip_prefix(PREFIX))
        .collect();
    let count = |figures: &Figures, code: &str| {
        figures
            .get(&format!("{PREFIX}{code}"))
            .map_or(0, |count| *count as u64)
    };
    codes
        .into_iter()
        .map(|code| ErrorsCompared {
            sqlstate: code.to_string(),
            baseline: count(before, code),
            candidate: count(after, code),
        })
        .collect()
}

/// The captured sessions with a refusal in each level, where both counted them.
fn sessions_with_errors(before: &Figures, after: &Figures) -> Option<[u64; 2]> {
    let count = |figures: &Figures| {
        figures
            .get("sessions_with_errors")
            .map(|count| *count as u64)
    };
    Some([count(before)?, count(after)?])
}

/// One fingerprint's answers as rows in both replays: what a different plan, other data
/// or another collation changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowsCompared {
    pub baseline_rows: u64,
    pub candidate_rows: u64,
    pub baseline_failed: u64,
    pub candidate_failed: u64,
    /// The same rows in all, the same refusals, and the same row counts statement by
    /// statement (their checksums agree).
    pub matched: bool,
}

impl RowsCompared {
    /// From the two levels' figures for `class` ("fingerprint-3"); None where a level has
    /// none (a replay before rows were recorded) or the two answered different numbers of
    /// statements (a level that left some unsent).
    fn of(class: &str, before: &Figures, after: &Figures) -> Option<Self> {
        let subject = class.replacen('-', " ", 1);
        let figures = |level: &Figures| -> Option<(u64, u64, u64, u64)> {
            let figure = |name: &str| {
                level
                    .get(&format!("{subject} {name}"))
                    .map(|value| *value as u64)
            };
            Some((
                figure("rows")?,
                figure("failed")?,
                figure("rows_checksum")?,
                figure("count")? + figure("failed")?,
            ))
        };
        let (rows, failed, checksum, answered) = figures(before)?;
        let (other_rows, other_failed, other_checksum, other_answered) = figures(after)?;
        (answered == other_answered).then_some(Self {
            baseline_rows: rows,
            candidate_rows: other_rows,
            baseline_failed: failed,
            candidate_failed: other_failed,
            matched: rows == other_rows && failed == other_failed && checksum == other_checksum,
        })
    }
}

/// One fingerprint at one speed, both replays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatementChange {
    /// Its class: `fingerprint-3`.
    pub class: String,
    /// Its normalised text, where the run recorded it.
    pub text: String,
    pub baseline_answers: u64,
    pub candidate_answers: u64,
    /// None where one side answered too few to read it.
    pub p50: Option<RatioFigure>,
    pub p99: Option<RatioFigure>,
    /// Its share of the baseline's statement time at this speed.
    pub share_of_time: f64,
    /// The candidate's mean service time over the baseline's.
    pub mean_ratio: f64,
    pub verdict: StatementVerdict,
    /// The variance of `mean_ratio` (the delta method on the two means' standard errors),
    /// for the workload-wide change's interval.
    #[serde(skip)]
    pub mean_ratio_variance: f64,
    /// Its rows and refusals in both, where both recorded them for the same statements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<RowsCompared>,
}

/// Two replays of one capture at one speed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatementComparison {
    pub baseline: String,
    pub candidate: String,
    pub speed: f64,
    /// Regressions first, then improvements, then the rest; each by share of time.
    pub statements: Vec<StatementChange>,
    /// Σ share × (candidate's mean / baseline's mean) - 1: the statements' time at the
    /// baseline's counts, relative; None without a statement both answered.
    pub weighted_change: Option<f64>,
    /// Its 95% interval, from each statement's mean ratio's: the means' standard errors
    /// taken as independent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weighted_interval: Option<[f64; 2]>,
    /// Either level was judged disturbed: each statement's verdict is then its p50's alone,
    /// since a disturbance (a stall, the hypervisor's steal) moves the tail of every
    /// statement answered during it, which p99's interval, counting answers as independent,
    /// takes for the server's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disturbed: bool,
    /// Refusals by SQLSTATE in both (each code either refused), and the captured sessions
    /// with one: Database Replay's divergence summary.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorsCompared>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions_with_errors: Option<[u64; 2]>,
    /// The baseline is the capture's logged durations (the server's alone, without the
    /// round trip a replay's answers include), a replay alone being compared with them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub against_log: bool,
    /// Replay quality: the share of the statements compared (by the baseline's answers)
    /// whose fingerprint's rows and outcome all matched; rows are checked per fingerprint,
    /// so one statement that differs counts its fingerprint's all. None where no
    /// fingerprint's rows could be compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_matched: Option<f64>,
}

/// The share of statements, by the baseline's answers, whose fingerprint's rows and
/// outcome matched, of those whose rows were compared.
fn rows_matched(statements: &[StatementChange]) -> Option<f64> {
    let compared = statements
        .iter()
        .filter_map(|one| one.rows.map(|rows| (one.baseline_answers, rows.matched)));
    let (all, matched) = compared.fold((0, 0), |(all, matched), (answers, same)| {
        (all + answers, matched + if same { answers } else { 0 })
    });
    (all > 0).then(|| matched as f64 / all as f64)
}

/// Every pair of replays of one capture (the first given as the baseline of the others), at
/// each speed both replayed; a replay of a capture replayed once, at 1x, against the
/// capture's logged durations.
pub fn compare(series: &[OpenLoopSeries]) -> Vec<StatementComparison> {
    let replays: Vec<&OpenLoopSeries> = series.iter().filter(|one| one.is_replay()).collect();
    let mut comparisons = Vec::new();
    for replay in &replays {
        let alone = replays
            .iter()
            .filter(|other| other.capture == replay.capture)
            .count()
            == 1;
        if alone {
            comparisons.extend(against_the_log(replay));
        }
    }
    for (index, baseline) in replays.iter().enumerate() {
        let earlier_of_capture = replays[..index]
            .iter()
            .any(|earlier| earlier.capture == baseline.capture);
        if baseline.capture.is_none() || earlier_of_capture {
            continue;
        }
        for candidate in &replays[index + 1..] {
            if candidate.capture == baseline.capture {
                comparisons.extend(at_each_speed(baseline, candidate));
            }
        }
    }
    comparisons
}

/// A replay's level at 1x against the capture's logged durations of each fingerprint.
fn against_the_log(replay: &OpenLoopSeries) -> Option<StatementComparison> {
    let level = (replay.levels.iter()).find(|level| level.speed == Some(1.0))?;
    let statements: Vec<StatementChange> = (level.logged.iter())
        .filter_map(|logged| {
            let answered = (level.classes.iter()).find(|class| class.class == logged.class)?;
            let text = replay
                .statements
                .get(&logged.class)
                .cloned()
                .unwrap_or_default();
            change(&logged.class, text, &logged.histogram, &answered.histogram)
        })
        .collect();
    let mut comparison =
        StatementComparison::of((LOG, &replay.series), 1.0, statements, level.disturbed)?;
    comparison.against_log = true;
    Some(comparison)
}

/// The baseline's name where a replay is compared with its capture's logged durations.
pub const LOG: &str = "the captured log";

fn at_each_speed(
    baseline: &OpenLoopSeries,
    candidate: &OpenLoopSeries,
) -> Vec<StatementComparison> {
    let mut speeds: Vec<f64> = baseline
        .levels
        .iter()
        .filter_map(|level| level.speed)
        .collect();
    speeds.sort_by(f64::total_cmp);
    speeds.dedup();
    speeds
        .into_iter()
        .filter_map(|speed| {
            let before = (baseline.levels.iter()).find(|level| level.speed == Some(speed))?;
            let after = (candidate.levels.iter()).find(|level| level.speed == Some(speed))?;
            let statements: Vec<StatementChange> = (before.classes.iter())
                .filter(|class| class.class.starts_with("fingerprint-"))
                .filter_map(|class| {
                    let other = after
                        .classes
                        .iter()
                        .find(|other| other.class == class.class)?;
                    let text = baseline
                        .statements
                        .get(&class.class)
                        .cloned()
                        .unwrap_or_default();
                    let mut change =
                        change(&class.class, text, &class.histogram, &other.histogram)?;
                    change.rows = RowsCompared::of(&class.class, &before.figures, &after.figures);
                    Some(change)
                })
                .collect();
            let mut comparison = StatementComparison::of(
                (&baseline.series, &candidate.series),
                speed,
                statements,
                before.disturbed || after.disturbed,
            )?;
            comparison.errors = errors_compared(&before.figures, &after.figures);
            comparison.sessions_with_errors = sessions_with_errors(&before.figures, &after.figures);
            Some(comparison)
        })
        .collect()
}

/// One fingerprint's change from the two levels' histograms; None where either is unreadable
/// or empty. Its share of time is its baseline time until [`weigh`] divides it.
pub(crate) fn change(
    class: &str,
    text: String,
    before: &str,
    after: &str,
) -> Option<StatementChange> {
    let (before, after) = (
        ResponseTimes::decode(before).ok()?,
        ResponseTimes::decode(after).ok()?,
    );
    let (before_figures, after_figures) = (before.percentiles()?, after.percentiles()?);
    let ratio = |percentile| {
        RatioFigure::of(
            PercentileInterval::of(&before, percentile)?,
            PercentileInterval::of(&after, percentile)?,
        )
    };
    let (p50, p99) = (ratio(Percentile::P50), ratio(Percentile::P99));
    // The gravest of its percentiles' verdicts: a regression at either is one.
    let verdict = [p50, p99]
        .iter()
        .flatten()
        .map(|figure| figure.verdict)
        .min()
        .unwrap_or(StatementVerdict::TooFew);
    Some(StatementChange {
        class: class.to_string(),
        text,
        baseline_answers: before.count(),
        candidate_answers: after.count(),
        p50,
        p99,
        share_of_time: before_figures.mean_ms * before.count() as f64,
        mean_ratio: after_figures.mean_ms / before_figures.mean_ms,
        mean_ratio_variance: ratio_variance(&before, &after),
        verdict,
        rows: None,
    })
}

/// The variance of the ratio of the two means: (m'/m)^2 (se'^2/m'^2 + se^2/m^2), each
/// standard error its times' deviation over the root of their count.
fn ratio_variance(before: &ResponseTimes, after: &ResponseTimes) -> f64 {
    let relative = |times: &ResponseTimes| {
        let (Some(figures), Some(stdev)) = (times.percentiles(), times.stdev_ms()) else {
            return f64::INFINITY;
        };
        (stdev / figures.mean_ms).powi(2) / figures.count as f64
    };
    let ratio = match (after.percentiles(), before.percentiles()) {
        (Some(after), Some(before)) => after.mean_ms / before.mean_ms,
        _ => return f64::INFINITY,
    };
    ratio * ratio * (relative(before) + relative(after))
}

/// The 95% interval of the weighted change, once [`weigh`] has made each statement's time
/// its share; None where a statement's variance is unknown.
fn weighted_interval(statements: &[StatementChange], change: f64) -> Option<[f64; 2]> {
    let variance: f64 = (statements.iter())
        .filter(|one| one.mean_ratio.is_finite())
        .map(|one| one.share_of_time.powi(2) * one.mean_ratio_variance)
        .sum();
    let half = 1.96 * variance.sqrt();
    half.is_finite().then_some([change - half, change + half])
}

/// Turns each statement's baseline time into its share, and gives the weighted change;
/// None when there is no time to weigh.
fn weigh(statements: &mut [StatementChange]) -> Option<f64> {
    let total: f64 = statements.iter().map(|one| one.share_of_time).sum();
    if total <= 0.0 || !total.is_finite() {
        return None;
    }
    let mut weighted = 0.0;
    for one in statements.iter_mut() {
        one.share_of_time /= total;
        if one.mean_ratio.is_finite() {
            weighted += one.share_of_time * one.mean_ratio;
        }
    }
    Some(weighted - 1.0)
}

impl StatementComparison {
    /// "new against old, replaying one capture at 1x: 1 of 13 statements regressed beyond
    /// the noise (the worst: fingerprint-2, SELECT ...: p99 2.40x [2.10, 2.80]), 0 improved,
    /// 10 unchanged, 2 too few to tell; the statements' time, each weighted by its share of
    /// old's: 31% slower."
    pub fn sentence(&self) -> String {
        let count = |verdict| {
            (self.statements.iter())
                .filter(|one| one.verdict == verdict)
                .count()
        };
        let worst = self.worst_regression();
        let against = if self.against_log {
            format!(
                "{} against the captured log's durations (the server's alone; a replay's answers add the round trip), at {}",
                self.candidate,
                crate::format::times(self.speed)
            )
        } else {
            format!(
                "{} against {}, replaying one capture at {}",
                self.candidate,
                self.baseline,
                crate::format::times(self.speed)
            )
        };
        let mut text = format!(
            "{against}: {} of {} statements regressed beyond the noise",
            count(StatementVerdict::Regressed),
            self.statements.len()
        );
        if let Some((one, name, figure)) = worst {
            text.push_str(&format!(
                " (the worst: {}, {}: {name} {})",
                one.class,
                shortened(&one.text),
                figure.text()
            ));
        }
        text.push_str(&format!(
            ", {} improved, {} unchanged, {} too few to tell",
            count(StatementVerdict::Improved),
            count(StatementVerdict::Unchanged),
            count(StatementVerdict::TooFew)
        ));
        if let Some(said) = self.change_said() {
            text.push_str(&format!(
                "; the statements' mean time, each weighted by its share of {}'s: {said}",
                self.baseline
            ));
        }
        text.push_str(&self.rows_said());
        text.push_str(&self.errors_said());
        if self.disturbed {
            text.push_str(
                "; these replays were disturbed (see their levels' notes): the verdicts are p50's alone, as a disturbance moves every statement's tail; replay again on an idle host to judge p99",
            );
        }
        text + "."
    }
}

impl StatementComparison {
    /// The comparison of `statements` at `speed` (each with its baseline time as its share
    /// until now): shares weighed, the change and its interval, regressions first, each by
    /// share; None where there is no time to weigh.
    pub(crate) fn of(
        (baseline, candidate): (&str, &str),
        speed: f64,
        mut statements: Vec<StatementChange>,
        disturbed: bool,
    ) -> Option<Self> {
        let weighted_change = weigh(&mut statements)?;
        let weighted_interval = weighted_interval(&statements, weighted_change);
        if disturbed {
            for one in &mut statements {
                one.verdict = one.p50.map_or(StatementVerdict::TooFew, |p50| p50.verdict);
            }
        }
        statements.sort_by(|a, b| {
            (a.verdict.cmp(&b.verdict)).then(b.share_of_time.total_cmp(&a.share_of_time))
        });
        Some(Self {
            baseline: baseline.to_string(),
            candidate: candidate.to_string(),
            speed,
            weighted_change: Some(weighted_change),
            weighted_interval,
            disturbed,
            against_log: false,
            errors: Vec::new(),
            sessions_with_errors: None,
            rows_matched: rows_matched(&statements),
            statements,
        })
    }

    /// The regression with the largest ratio: the statement, which percentile and its
    /// figure (p99's where it regressed and the replays were not disturbed, else p50's).
    pub fn worst_regression(&self) -> Option<(&StatementChange, &'static str, RatioFigure)> {
        let p99_judged = !self.disturbed;
        (self.statements.iter())
            .filter(|one| one.verdict == StatementVerdict::Regressed)
            .filter_map(|one| {
                let p99 = one.p99.filter(|_| p99_judged);
                let (name, figure) =
                    [("p99", p99), ("p50", one.p50)]
                        .into_iter()
                        .find_map(|(name, figure)| {
                            figure
                                .filter(|figure| figure.verdict == StatementVerdict::Regressed)
                                .map(|figure| (name, figure))
                        })?;
                Some((one, name, figure))
            })
            .max_by(|a, b| a.2.ratio.total_cmp(&b.2.ratio))
    }

    /// The workload-wide change in words: "31% faster [26, 36]", "within the noise: 2%
    /// slower [-1, 5]" (the interval in the estimate's direction, in percent), "within 1%".
    pub fn change_said(&self) -> Option<String> {
        let change = self.weighted_change?;
        let (word, sign) = if change > 0.0 {
            ("slower", 1.0)
        } else {
            ("faster", -1.0)
        };
        let Some([low, high]) = self.weighted_interval else {
            return Some(if change.abs() < 0.01 {
                "within 1%".to_string()
            } else {
                format!("{} {word}", crate::format::percent(sign * change))
            });
        };
        let (near, far) = if sign > 0.0 {
            (low, high)
        } else {
            (-high, -low)
        };
        let said = format!(
            "{} {word} [{:.0}, {:.0}]",
            crate::format::percent(sign * change),
            100.0 * near,
            100.0 * far
        );
        Some(if low <= 0.0 && high >= 0.0 {
            format!("within the noise: {said}")
        } else {
            said
        })
    }

    /// "; errors differ: SQLSTATE 23505 3 against 0 (in 2 sessions against 0)", "; the same
    /// errors in both (SQLSTATE 40001: 2)", or nothing where neither refused anything.
    pub fn errors_said(&self) -> String {
        if self.errors.is_empty() {
            return String::new();
        }
        let differing: Vec<String> = (self.errors.iter())
            .filter(|one| one.baseline != one.candidate)
            .map(|one| {
                format!(
                    "SQLSTATE {} {} against {}",
                    one.sqlstate, one.candidate, one.baseline
                )
            })
            .collect();
        if differing.is_empty() {
            let same: Vec<String> = (self.errors.iter())
                .map(|one| format!("SQLSTATE {}: {}", one.sqlstate, one.candidate))
                .collect();
            return format!("; the same errors in both ({})", same.join(", "));
        }
        let sessions = self
            .sessions_with_errors
            .map_or(String::new(), |[before, after]| {
                format!(" (in {after} sessions against {before})")
            });
        format!("; errors differ: {}{sessions}", differing.join(", "))
    }

    /// "; rows and outcome matched for every statement compared", or the share and the
    /// statements that diverged; nothing where no rows were compared.
    fn rows_said(&self) -> String {
        let Some(share) = self.rows_matched else {
            return String::new();
        };
        let differing: Vec<&StatementChange> = (self.statements.iter())
            .filter(|one| one.rows.is_some_and(|rows| !rows.matched))
            .collect();
        let Some(first) = differing.first() else {
            return "; rows and outcome matched for every statement compared".to_string();
        };
        let Some(rows) = first.rows else {
            return String::new();
        };
        let compared = (self.statements.iter())
            .filter(|one| one.rows.is_some())
            .count();
        format!(
            "; rows or outcome differ for {} of the {compared} statements compared ({} of the statements sent are theirs), the first {} ({}): {} rows and {} refused against {} and {}",
            differing.len(),
            crate::format::percent(1.0 - share),
            first.class,
            shortened(&first.text),
            rows.candidate_rows,
            rows.candidate_failed,
            rows.baseline_rows,
            rows.baseline_failed,
        )
    }
}

/// A statement's text for a sentence: its first 80 characters, then "...".
pub(crate) fn shortened(text: &str) -> String {
    const SHOWN: usize = 80;
    if text.chars().count() <= SHOWN {
        return text.to_string();
    }
    let cut: String = text.chars().take(SHOWN).collect();
    format!("{cut}...")
}

#[cfg(test)]
pub(crate) mod tests;
