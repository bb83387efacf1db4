//! Response time against load: where a series' latency bends (the hockey stick), and the
//! largest throughput at which a latency objective (`report --slo 'p99<=5ms'`) held.

use crate::format::duration_ms;
use serde::{Deserialize, Serialize};

use super::series::{Point, Series};
use crate::format::significant;

mod behind;
mod class;
use crate::latency::{Latency, MeasuredFrom, Objective, Percentile};
pub use class::{classes_of, classes_of_open, missing_class, series_of_class};

/// A step in load is a bend when the percentile grows by this factor at least...
const BEND_GROWTH: f64 = 1.5;
/// ...and by this much more than the throughput it bought.
const BEND_OVER_CAPACITY: f64 = 1.2;
/// Responses beyond a percentile a level needs for the figure to be read: p99 from 1,000
/// responses rests on 10 of them.
const TAIL_RESPONSES: f64 = 10.0;

/// Where the tail latency of a series starts to climb faster than its throughput.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyBend {
    pub from_workers: usize,
    pub to_workers: usize,
    pub p99_from_ms: f64,
    pub p99_to_ms: f64,
    /// The capacity at `to_workers` over that at `from_workers`.
    pub capacity_growth: f64,
}

impl LatencyBend {
    /// "p99 rises 2.1x from 12 to 16 workers (0.8 to 1.7 ms), while capacity grows 9%".
    pub fn sentence(&self) -> String {
        let growth = self.capacity_growth - 1.0;
        let capacity = if growth.abs() < 0.005 {
            "while capacity stays flat".to_string()
        } else if growth > 0.0 {
            format!("while capacity grows {:.0}%", 100.0 * growth)
        } else {
            format!("while capacity falls {:.0}%", -100.0 * growth)
        };
        format!(
            "p99 rises {:.1}x from {} to {} workers ({} to {}), {capacity}",
            self.p99_to_ms / self.p99_from_ms,
            self.from_workers,
            self.to_workers,
            duration_ms(self.p99_from_ms),
            duration_ms(self.p99_to_ms)
        )
    }
}

/// The levels kept for analysis (disturbed ones are left out unless asked for) whose
/// latency was recorded with enough responses to read `percentile`, in worker order.
fn readable(series: &Series, percentile: Percentile) -> Vec<(&Point, &Latency)> {
    let needed = responses_needed(percentile);
    series
        .points
        .iter()
        .filter_map(|point| Some((point, point.latency.as_deref()?)))
        // A level that could not keep its --rate did not deliver the load it names.
        .filter(|(_, latency)| latency.rate.is_none_or(|rate| rate.sustained))
        .filter(|(_, latency)| latency.response.count as f64 >= needed)
        .collect()
}

/// The range of a level's throughput over its timeline: `throughput` scaled by the slowest
/// and fastest full interval's rate against their mean. None under 3 full intervals.
fn interval_spread(
    intervals: &[crate::latency::IntervalFigures],
    throughput: f64,
) -> Option<(f64, f64)> {
    let width = intervals.first()?.length_s;
    let rates: Vec<f64> = intervals
        .iter()
        .filter(|interval| interval.length_s >= width)
        .map(|interval| interval.rate_per_s)
        .collect();
    let mean = rates.iter().sum::<f64>() / rates.len().max(1) as f64;
    if rates.len() < 3 || mean <= 0.0 {
        return None;
    }
    let (low, high) = rates
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(low, high), &rate| {
            (low.min(rate), high.max(rate))
        });
    Some((throughput * low / mean, throughput * high / mean))
}

/// Responses a level needs for `percentile` to be read: 10 beyond it (p99 from 1,000); one
/// for the mean and the maximum.
fn responses_needed(percentile: Percentile) -> f64 {
    let quantile = match percentile {
        Percentile::P50 => 0.5,
        Percentile::P90 => 0.9,
        Percentile::P95 => 0.95,
        Percentile::P99 => 0.99,
        Percentile::P999 => 0.999,
        Percentile::Max | Percentile::Mean => return 1.0,
    };
    (TAIL_RESPONSES / (1.0 - quantile)).round()
}

/// The first step in load where p99 grows at least 1.5x and 1.2x more than capacity: beyond
/// it, added sessions queue more than they add work done. Closed-loop statement latencies
/// only (a job's time is the speed curve already; an open loop's throughput is the rate it
/// was asked for, not what sessions reach); None when p99 never bends.
pub fn bend(series: &Series) -> Option<LatencyBend> {
    let levels: Vec<(&Point, &Latency)> = readable(series, Percentile::P99)
        .into_iter()
        .filter(|(_, latency)| latency.measured_from == MeasuredFrom::Send)
        .collect();
    levels.windows(2).find_map(|pair| {
        let ((low, low_latency), (high, high_latency)) = (pair[0], pair[1]);
        let (before, after) = (low_latency.response.p99_ms, high_latency.response.p99_ms);
        let capacity_growth = series.capacity(high) / series.capacity(low);
        (before > 0.0
            && after / before >= BEND_GROWTH
            && after / before >= BEND_OVER_CAPACITY * capacity_growth)
            .then_some(LatencyBend {
                from_workers: low.workers,
                to_workers: high.workers,
                p99_from_ms: before,
                p99_to_ms: after,
                capacity_growth,
            })
    })
}

/// Whether and where one series kept the objective.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SloVerdict {
    pub series: String,
    /// The level with the largest throughput that kept it, when one did.
    pub workers: Option<usize>,
    /// That throughput (the series' capacity unit), with its spread when the file gives one.
    pub throughput: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_spread: Option<(f64, f64)>,
    pub unit: String,
    /// The percentile there, in milliseconds.
    pub value_ms: Option<f64>,
    /// Every level read kept it: the limit lies beyond the largest level measured, and the
    /// throughput is a lower bound.
    pub beyond_largest: bool,
    /// Smaller loads that broke it (noise, or a server that does better under more load).
    pub broken_below: Vec<usize>,
    /// Why no throughput is named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How the series' response times were measured: only series measured alike compare.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_from: Option<MeasuredFrom>,
    /// Open-loop levels (`--rate`): the rate asked where the objective held...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_per_s: Option<f64>,
    /// ...and the lower rates sent at which it was broken.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broken_at_rates: Vec<f64>,
}

impl SloVerdict {
    pub fn sentence(&self, objective: &Objective) -> String {
        let Some((workers, throughput)) = self.workers.zip(self.throughput) else {
            return format!(
                "{}: {}",
                self.series,
                self.reason
                    .as_deref()
                    .unwrap_or("no level kept the objective")
            );
        };
        let spread = self
            .throughput_spread
            .map(|(low, high)| format!(" ({}-{})", significant(low), significant(high)))
            .unwrap_or_default();
        let asked = self
            .asked_per_s
            .map(|asked| format!(", asked {}/s", significant(asked)))
            .unwrap_or_default();
        let mut text = format!(
            "{} sustains {}{spread} {} at {objective} with {} ({} {}{asked})",
            self.series,
            significant(throughput),
            self.unit,
            crate::format::workers_text(workers),
            objective.percentile.name(),
            duration_ms(self.value_ms.unwrap_or_default())
        );
        if self.beyond_largest {
            text.push_str(if self.asked_per_s.is_some() {
                "; every rate measured kept it, so the limit lies beyond: ask higher rates"
            } else {
                "; every level measured kept it, so the limit lies beyond: measure more workers"
            });
        }
        if !self.broken_at_rates.is_empty() {
            let rates: Vec<String> = self
                .broken_at_rates
                .iter()
                .map(|rate| format!("{}/s", significant(*rate)))
                .collect();
            text.push_str(&format!(
                "; it was broken at lower rates: {}",
                rates.join(", ")
            ));
        }
        if !self.broken_below.is_empty() {
            let loads: Vec<String> = self.broken_below.iter().map(usize::to_string).collect();
            let noun = if self.broken_below == [1] {
                "worker"
            } else {
                "workers"
            };
            text.push_str(&format!(
                "; it was broken at {} {noun} below that",
                loads.join(", ")
            ));
        }
        text
    }
}

/// The objective's verdict on one series.
pub fn slo_verdict(series: &Series, objective: &Objective) -> SloVerdict {
    let levels = readable(series, objective.percentile);
    let mut verdict = SloVerdict {
        series: series.name.clone(),
        workers: None,
        throughput: None,
        throughput_spread: None,
        unit: series.capacity_unit(),
        value_ms: None,
        beyond_largest: false,
        broken_below: Vec::new(),
        reason: None,
        measured_from: series
            .points
            .iter()
            .find_map(|point| Some(point.latency.as_ref()?.measured_from)),
        asked_per_s: None,
        broken_at_rates: Vec::new(),
    };
    if levels.is_empty() {
        verdict.reason = Some(if series.points.iter().any(|p| p.latency.is_some()) {
            format!(
                "too few {} at each clean level to read {} (at least {:.0})",
                objective.counted("responses"),
                objective.percentile.name(),
                responses_needed(objective.percentile)
            )
        } else {
            "no response times recorded (a file from before corescale recorded them, or another tool's)".to_string()
        });
        return verdict;
    }
    let kept = |latency: &Latency| latency.response.at(objective.percentile) <= objective.limit_ms;
    let best = levels
        .iter()
        .filter(|(_, latency)| kept(latency))
        .max_by(|(a, _), (b, _)| series.capacity(a).total_cmp(&series.capacity(b)));
    let Some((point, latency)) = best else {
        let (point, lowest) = levels
            .iter()
            .map(|(point, latency)| (point, latency.response.at(objective.percentile)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("levels is not empty");
        verdict.reason = Some(format!(
            "no level kept {objective}: the lowest {} was {}, at {}",
            objective.percentile.name(),
            duration_ms(lowest),
            crate::format::workers_text(point.workers)
        ));
        return verdict;
    };
    verdict.workers = Some(point.workers);
    verdict.throughput = Some(series.capacity(point));
    // The batches' spread, else the level's own intervals' (a single long batch).
    verdict.throughput_spread = point
        .spread
        .map(|(low, high)| {
            let capacity = |raw: f64| {
                series.capacity(&Point {
                    raw,
                    ..(*point).clone()
                })
            };
            let (a, b) = (capacity(low), capacity(high));
            (a.min(b), a.max(b))
        })
        .or_else(|| interval_spread(&point.intervals, series.capacity(point)));
    verdict.value_ms = Some(latency.response.at(objective.percentile));
    // Judged on every level measured, read or not: a larger level too thin to read, or one
    // that missed its rate, may have broken it.
    // The limit lies beyond only where the largest throughput kept is the last level's:
    // past a fall in capacity, more workers deliver less, whatever their p99.
    let largest = series.points.iter().map(|point| point.workers).max();
    verdict.beyond_largest = levels.iter().all(|(_, latency)| kept(latency))
        && largest == levels.last().map(|(point, _)| point.workers)
        && largest == Some(point.workers);
    verdict.broken_below = levels
        .iter()
        .filter(|(other, latency)| other.workers < point.workers && !kept(latency))
        .map(|(other, _)| other.workers)
        .collect();
    verdict
}

/// One series' throughput within an objective against another's.
#[derive(Debug, Clone, PartialEq)]
pub struct SloRatio {
    pub best: String,
    pub other: String,
    /// "RAC55 sustains 2.1x RAC52's throughput at p99 <= 5 ms, among the levels measured".
    pub sentence: String,
}

/// The best of series of one measure whose verdicts name a throughput and whose response
/// times were measured alike (closed or open loop), against each other.
pub fn slo_comparison(verdicts: &[&SloVerdict], objective: &Objective) -> Vec<SloRatio> {
    let named: Vec<&&SloVerdict> = verdicts.iter().filter(|v| v.throughput.is_some()).collect();
    let Some(best) = named.iter().max_by(|a, b| {
        a.throughput
            .unwrap_or(0.0)
            .total_cmp(&b.throughput.unwrap_or(0.0))
    }) else {
        return Vec::new();
    };
    named
        .iter()
        .filter(|other| other.series != best.series && other.measured_from == best.measured_from)
        .filter_map(|other| {
            let ratio = best.throughput? / other.throughput.filter(|t| *t > 0.0)?;
            let bound = if best.beyond_largest || other.beyond_largest {
                " (a lower bound for a series that kept it at every level measured)"
            } else {
                ""
            };
            Some(SloRatio {
                best: best.series.clone(),
                other: other.series.clone(),
                sentence: format!(
                    "{} sustains {:.2}x {}'s throughput at {objective}, among the levels measured{bound}",
                    best.series, ratio, other.series
                ),
            })
        })
        .collect()
}

/// p99 of several series at the worker counts they all measured: the tail latency of one
/// server against another's at the same load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyAtLoads {
    pub series: Vec<String>,
    /// Worker counts, and each series' p99 there in milliseconds (in `series` order).
    pub rows: Vec<(usize, Vec<f64>)>,
}

impl LatencyAtLoads {
    /// "At 16 workers, the largest load all measured, p99 is 1.2 ms on A against 2.0 ms on B
    /// (0.60x)": the first series against each other, at the largest common load.
    pub fn sentences(&self) -> Vec<String> {
        let Some((workers, p99)) = self.rows.last() else {
            return Vec::new();
        };
        let first = &self.series[0];
        self.series
            .iter()
            .zip(p99)
            .skip(1)
            .filter(|(_, other)| **other > 0.0)
            .map(|(name, other)| {
                format!(
                    "At {}, the largest load all measured, p99 is {} on {first} against {} on {name} ({:.2}x)",
                    crate::format::workers_text(*workers),
                    duration_ms(p99[0]),
                    duration_ms(*other),
                    p99[0] / other
                )
            })
            .collect()
    }
}

/// The series' p99 at each worker count all of them measured closed-loop with enough
/// statements to read it; None with fewer than two such series or no common load.
pub fn p99_at_common_loads(series: &[&Series]) -> Option<LatencyAtLoads> {
    let timed: Vec<(&Series, Vec<(&Point, &Latency)>)> = series
        .iter()
        .map(|one| {
            let levels = readable(one, Percentile::P99)
                .into_iter()
                .filter(|(_, latency)| latency.measured_from == MeasuredFrom::Send)
                .collect::<Vec<_>>();
            (*one, levels)
        })
        .filter(|(_, levels)| !levels.is_empty())
        .collect();
    if timed.len() < 2 {
        return None;
    }
    let rows: Vec<(usize, Vec<f64>)> = timed[0]
        .1
        .iter()
        .map(|(point, _)| point.workers)
        .filter_map(|workers| {
            let p99: Option<Vec<f64>> = timed
                .iter()
                .map(|(_, levels)| {
                    levels
                        .iter()
                        .find(|(point, _)| point.workers == workers)
                        .map(|(_, latency)| latency.response.p99_ms)
                })
                .collect();
            Some((workers, p99?))
        })
        .collect();
    (!rows.is_empty()).then(|| LatencyAtLoads {
        series: timed.iter().map(|(one, _)| one.name.clone()).collect(),
        rows,
    })
}

/// A level's p99, or that it answered too few statements to read one: "2.98 ms",
/// "unreadable from 104 statements".
fn p99_or_why(level: &PacedLevel) -> String {
    let count = level.latency.response.count;
    if (count as f64) < responses_needed(Percentile::P99) {
        format!("unreadable from {count} statements")
    } else {
        duration_ms(level.latency.response.p99_ms)
    }
}

/// The workload figure a replay records its speed under.
pub const REPLAY_SPEED: &str = "speed";

/// Two or more servers replaying one capture, compared by the speed each kept its schedule
/// up to: "new-server kept up with the captured schedule up to 6x (p99 4.1 ms there); old-server
/// up to 1.5x (p99 9.2 ms); old-server fell behind already at 1x". None unless two series
/// are replays.
pub fn replay_comparisons(series: &[OpenLoopSeries]) -> Vec<String> {
    let mut captures: Vec<&Option<String>> = series
        .iter()
        .filter(|one| one.is_replay())
        .map(|one| &one.capture)
        .collect();
    captures.sort();
    captures.dedup();
    captures
        .into_iter()
        .filter_map(|capture| {
            let replays: Vec<&OpenLoopSeries> = series
                .iter()
                .filter(|one| one.is_replay() && one.capture == *capture)
                .collect();
            replay_comparison(&replays)
        })
        .collect()
}

/// [`replay_comparisons`] of one capture's replays.
fn replay_comparison(replays: &[&OpenLoopSeries]) -> Option<String> {
    if replays.len() < 2 {
        return None;
    }
    let mut kept: Vec<String> = Vec::new();
    let mut behind: Vec<String> = Vec::new();
    for replay in replays {
        match replay.kept_up_to() {
            Some((speed, level)) => kept.push(format!(
                "{} kept up with the captured schedule up to {} (p99 {} there)",
                replay.series,
                crate::format::times(speed),
                p99_or_why(level)
            )),
            None => behind.push(format!(
                "{} fell behind already at {}",
                replay.series,
                replay
                    .speeds()
                    .first()
                    .map_or("its first speed".to_string(), |(speed, _)| {
                        crate::format::times(*speed)
                    })
            )),
        }
    }
    let named = replays[0]
        .capture
        .as_deref()
        .and_then(|capture| capture.strip_prefix("replay of "))
        .map(|capture| capture.split(" (").next().unwrap_or(capture));
    let mut text = match named {
        // Several captures, one per instance, replayed together: "a.capture + b.capture".
        Some(names) if names.contains(" + ") => {
            format!("Replaying one cluster's captures together ({names}): ")
        }
        Some(name) => format!("Replaying one capture ({name}): "),
        None => "Replaying one capture: ".to_string(),
    };
    text.push_str(&kept.join("; "));
    if !behind.is_empty() {
        if !kept.is_empty() {
            text.push_str("; ");
        }
        text.push_str(&behind.join("; "));
    }
    text.push_str(" (keeping up: at most 1% of statements unsent at a level's end; each at the speeds it was replayed at, a speed not replayed is not judged).");
    Some(text)
}

/// One open-loop level (`--rate`): a worker count, the rate asked of it, and the response
/// times it gave, counted from when each statement was due.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PacedLevel {
    pub workers: usize,
    pub asked_per_s: f64,
    pub sent_per_s: f64,
    /// The share of the closed-loop throughput asked (`--rate 50%`), when given so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    pub sustained: bool,
    /// A replay's speed over the captured pace (`run replay`), where it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<f64>,
    pub latency: Latency,
    /// The level's timeline, for the spread of the rate sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<crate::latency::IntervalFigures>,
    /// Its classes of responses, for an objective on one of them.
    #[serde(skip)]
    pub classes: Vec<crate::latency::ClassTimes>,
    /// The run judged it disturbed (other processes took the CPUs): its times may be the
    /// host's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disturbed: bool,
    /// The level's own figures (a replay's rows per fingerprint among them).
    #[serde(skip)]
    pub figures: std::collections::BTreeMap<String, f64>,
    /// A replay's capture's logged durations, by fingerprint.
    #[serde(skip)]
    pub logged: Vec<crate::latency::ClassTimes>,
}

/// A series' open-loop levels: a latency-throughput curve per worker count. They are kept
/// apart from the capacity curve, where a throughput that is only the rate asked would read
/// as saturation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenLoopSeries {
    pub series: String,
    /// A replay's capture, as its job names it ("replay of shop.capture (sha256 ...)"):
    /// only replays of one capture compare.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<String>,
    /// By workers, then by the rate asked.
    pub levels: Vec<PacedLevel>,
    /// A replay's statements by class, as normalised.
    #[serde(skip)]
    pub statements: std::collections::BTreeMap<String, String>,
}

impl OpenLoopSeries {
    /// The open-loop levels of a series, None when it has none.
    pub fn of(series: &Series) -> Option<Self> {
        let mut levels: Vec<PacedLevel> = series
            .paced
            .iter()
            .filter_map(|point| {
                let latency = point.latency.as_deref()?.clone();
                let rate = latency.rate?;
                Some(PacedLevel {
                    workers: point.workers,
                    asked_per_s: rate.target_per_s,
                    sent_per_s: rate.achieved_per_s,
                    share: rate.share,
                    sustained: rate.sustained,
                    speed: point.figures.get(REPLAY_SPEED).copied(),
                    latency,
                    intervals: point.intervals.clone(),
                    classes: point.classes.clone(),
                    disturbed: !point.disturbed.is_empty(),
                    figures: point.figures.clone(),
                    logged: point.logged.clone(),
                })
            })
            .collect();
        levels.sort_by(|a, b| {
            (a.workers, a.speed, a.asked_per_s)
                .partial_cmp(&(b.workers, b.speed, b.asked_per_s))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let capture = series.job.shape.as_deref().and_then(|shape| {
            let start = shape.find("replay of ")?;
            let end = start + shape[start..].find(')')? + 1;
            Some(shape[start..end].to_string())
        });
        (!levels.is_empty()).then(|| Self {
            series: series.name.clone(),
            capture,
            levels,
            statements: series.statements.clone(),
        })
    }

    /// Whether its levels are a replay's speeds.
    pub fn is_replay(&self) -> bool {
        !self.levels.is_empty() && self.levels.iter().all(|level| level.speed.is_some())
    }

    /// A replay's speeds in order, with whether each kept its schedule, its p99 and rates.
    fn speeds(&self) -> Vec<(f64, &PacedLevel)> {
        let mut speeds: Vec<(f64, &PacedLevel)> = self
            .levels
            .iter()
            .filter_map(|level| level.speed.map(|speed| (speed, level)))
            .collect();
        speeds.sort_by(|a, b| a.0.total_cmp(&b.0));
        speeds
    }

    /// A replay's schedule in words: "kept up with the captured schedule at every speed up to 4x
    /// (p99 2.98 ms at 1x, 17.9 ms at 4x); fell behind at 8x (sent 1.63 K/s of 2.31
    /// K/s)". None for a series that is not a replay.
    pub fn replay_finding(&self) -> Option<String> {
        let speeds = self.speeds();
        if !self.is_replay() || speeds.is_empty() {
            return None;
        }
        let kept: Vec<&(f64, &PacedLevel)> = speeds
            .iter()
            .take_while(|(_, level)| level.sustained)
            .collect();
        let readable = |level: &PacedLevel| {
            level.latency.response.count as f64 >= responses_needed(Percentile::P99)
        };
        let p99 = |(speed, level): &&(f64, &PacedLevel)| {
            format!(
                "{} at {}",
                duration_ms(level.latency.response.p99_ms),
                crate::format::times(*speed)
            )
        };
        // Quoted where enough statements were answered to read it.
        let mut quoted: Vec<String> = [kept.first(), kept.last()]
            .into_iter()
            .flatten()
            .filter(|(_, level)| readable(level))
            .map(p99)
            .collect();
        quoted.dedup();
        let p99_said = match (quoted.as_slice(), kept.first()) {
            ([], Some((_, level))) => format!(
                " (p99 unreadable: a pass of {} statements is too few)",
                level.latency.response.count
            ),
            ([], None) => String::new(),
            ([one], _) => format!(" (p99 {one})"),
            (many, _) => format!(" (p99 {})", many.join(" to ")),
        };
        let mut text = match kept.last() {
            Some(last) if kept.len() > 1 => format!(
                "{} replaying its capture kept up with the captured schedule (at most 1% of statements unsent at a level's end) at every speed up to {}{p99_said}",
                self.series,
                crate::format::times(last.0),
            ),
            Some(only) => format!(
                "{} replaying its capture kept up with the captured schedule (at most 1% of statements unsent at the level's end) at {}{p99_said}",
                self.series,
                crate::format::times(only.0),
            ),
            None => format!("{} replaying its capture", self.series),
        };
        if let Some((speed, behind)) = speeds.get(kept.len()) {
            text.push_str(&format!(
                "{}fell behind at {} (sent {}/s of {}/s asked), so latency there counts a growing backlog{}",
                if kept.is_empty() { " " } else { "; it " },
                crate::format::times(*speed),
                significant(behind.sent_per_s),
                significant(behind.asked_per_s),
                behind::behind_because(behind),
            ));
        }
        text.push('.');
        Some(text)
    }

    /// The largest speed up to which every speed kept up with the captured schedule.
    pub fn kept_up_to(&self) -> Option<(f64, &PacedLevel)> {
        self.speeds()
            .into_iter()
            .take_while(|(_, level)| level.sustained)
            .last()
    }

    /// How p99 grew with the rate at the worker count measured at the most rates: "vm at
    /// set rates, 2 workers: p99 goes from 0.25 ms at 300/s to 126 ms at 9.2 K/s; the
    /// sessions fell behind at 9.2 K/s". Levels with too few statements to read p99 are
    /// left out; None with fewer than two left at any worker count.
    pub fn finding(&self) -> Option<String> {
        if self.is_replay() {
            return self.replay_finding();
        }
        let needed = responses_needed(Percentile::P99);
        let readable: Vec<&PacedLevel> = self
            .levels
            .iter()
            .filter(|level| level.latency.response.count as f64 >= needed)
            .collect();
        let mut counts: Vec<usize> = readable.iter().map(|level| level.workers).collect();
        counts.dedup();
        let workers = counts.into_iter().max_by_key(|&workers| {
            (
                readable.iter().filter(|l| l.workers == workers).count(),
                workers,
            )
        })?;
        let curve: Vec<&PacedLevel> = readable
            .into_iter()
            .filter(|level| level.workers == workers)
            .collect();
        let (first, last) = (curve.first()?, curve.last()?);
        if curve.len() < 2 {
            return None;
        }
        let at = |level: &PacedLevel| {
            format!(
                "{} at {}/s",
                duration_ms(level.latency.response.p99_ms),
                significant(level.asked_per_s)
            )
        };
        let mut text = format!(
            "{} at set rates, {}: p99 goes from {} to {}",
            self.series,
            crate::format::workers_text(workers),
            at(first),
            at(last)
        );
        if let Some(behind) = curve.iter().find(|level| !level.sustained) {
            text.push_str(&format!(
                "; the sessions fell behind from {}/s (sent {}/s), so latency there counts a growing backlog",
                significant(behind.asked_per_s),
                significant(behind.sent_per_s)
            ));
        }
        text.push('.');
        Some(text)
    }

    /// "statements/s".
    pub fn unit(&self) -> String {
        self.levels
            .first()
            .map_or("statements/s".to_string(), |level| {
                format!("{}s/s", level.latency.unit)
            })
    }

    /// The objective's verdict on the open-loop levels: the largest rate sent, among those
    /// the sessions kept up with and that answered enough statements to read the percentile,
    /// at which it held.
    pub fn verdict(&self, objective: &Objective) -> SloVerdict {
        let needed = responses_needed(objective.percentile);
        let readable: Vec<&PacedLevel> = self
            .levels
            .iter()
            .filter(|level| level.sustained && level.latency.response.count as f64 >= needed)
            .collect();
        let value = |level: &PacedLevel| level.latency.response.at(objective.percentile);
        let kept = |level: &PacedLevel| value(level) <= objective.limit_ms;
        let mut verdict = SloVerdict {
            series: format!(
                "{} ({})",
                self.series,
                if self.is_replay() {
                    "replaying at set speeds"
                } else {
                    "at set rates"
                }
            ),
            workers: None,
            throughput: None,
            throughput_spread: None,
            unit: self.unit(),
            value_ms: None,
            beyond_largest: false,
            broken_below: Vec::new(),
            reason: None,
            // From when due, unless the levels are one class's, timed from the send.
            measured_from: Some(
                (self.levels.first())
                    .map_or(MeasuredFrom::Due, |level| level.latency.measured_from),
            ),
            asked_per_s: None,
            broken_at_rates: Vec::new(),
        };
        if readable.is_empty() {
            verdict.reason = Some(format!(
                "no rate the sessions kept up with answered enough {} to read {} (at least {needed:.0})",
                objective.counted("statements"),
                objective.percentile.name()
            ));
            return verdict;
        }
        let Some(best) = readable
            .iter()
            .filter(|level| kept(level))
            .max_by(|a, b| a.sent_per_s.total_cmp(&b.sent_per_s))
        else {
            let lowest = readable
                .iter()
                .min_by(|a, b| value(a).total_cmp(&value(b)))
                .expect("readable is not empty");
            verdict.reason = Some(format!(
                "no rate kept {objective}: the lowest {} was {}, at {}/s with {}",
                objective.percentile.name(),
                duration_ms(value(lowest)),
                significant(lowest.sent_per_s),
                crate::format::workers_text(lowest.workers)
            ));
            return verdict;
        };
        verdict.workers = Some(best.workers);
        verdict.throughput = Some(best.sent_per_s);
        verdict.throughput_spread = interval_spread(&best.intervals, best.sent_per_s);
        verdict.asked_per_s = Some(best.asked_per_s);
        verdict.value_ms = Some(value(best));
        // Judged on every level asked: the highest rate, unread or not kept up with, may
        // have broken it.
        let highest = self
            .levels
            .iter()
            .map(|level| level.asked_per_s)
            .fold(0.0, f64::max);
        verdict.beyond_largest =
            readable.iter().all(|level| kept(level)) && best.asked_per_s >= highest;
        // Noise, or a server that does better under more load: lower rates at the same
        // worker count that broke it.
        verdict.broken_at_rates = readable
            .iter()
            .filter(|level| level.workers == best.workers)
            .filter(|level| level.sent_per_s < best.sent_per_s && !kept(level))
            .map(|level| level.sent_per_s)
            .collect();
        verdict
    }
}

#[cfg(test)]
pub(crate) mod tests;
