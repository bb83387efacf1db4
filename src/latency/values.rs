//! The values the command line gives the latency machinery: objectives (`p99<=5ms`), rate
//! steps (`--rate 1000,50%`) and the arrivals' kind.

use super::Percentile;
use serde::{Deserialize, Serialize};

/// A latency objective: a percentile at most a time (`p99<=5ms`), on all responses or on
/// one class of them (`new_order:p99<=5ms`, `fingerprint-3:p99<=5ms`): an order-entry
/// proposal is argued on New-Order's latency, a replay's on the statement that matters.
#[derive(Debug, Clone, PartialEq)]
pub struct Objective {
    pub percentile: Percentile,
    pub limit_ms: f64,
    /// The class of responses it holds for (`levels[].classes[].class`); None: all of them.
    pub class: Option<String>,
}

/// The longest class name an objective takes: the names a run records are short.
const LONGEST_CLASS: usize = 64;

impl Objective {
    /// `noun` of the responses it judges: "responses", or "new_order responses".
    pub fn counted(&self, noun: &str) -> String {
        match &self.class {
            Some(class) => format!("{class} {noun}"),
            None => noun.to_string(),
        }
    }
}

impl std::fmt::Display for Objective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // As the user wrote it: 5 ms, 0.5 ms (to the nanosecond).
        let limit = (self.limit_ms * 1e6).round() / 1e6;
        if let Some(class) = &self.class {
            write!(f, "{class} ")?;
        }
        write!(f, "{} <= {limit} ms", self.percentile.name())
    }
}

impl std::str::FromStr for Objective {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let usage = || {
            format!(
                "'{text}' is not a latency objective: give a percentile, <= and a time, e.g. 'p99<=5ms' (p50, p90, p95, p99, p99.9, max, mean), or one class's, e.g. 'new_order:p99<=5ms'"
            )
        };
        let (class, objective) = match text.split_once(':') {
            Some((class, objective)) => (Some(class.trim()), objective),
            None => (None, text),
        };
        let (name, limit) = objective.split_once("<=").ok_or_else(usage)?;
        let percentile = Percentile::parse(name).ok_or_else(usage)?;
        let limit = humantime::parse_duration(&limit.trim().replace(' ', ""))
            .map_err(|_| usage())?
            .as_secs_f64()
            * 1e3;
        if limit <= 0.0 {
            return Err(format!("'{text}': the limit must be above zero"));
        }
        let class = class
            .map(class_name)
            .transpose()
            .map_err(|problem| format!("'{text}': {problem}"))?;
        Ok(Self {
            percentile,
            limit_ms: limit,
            class,
        })
    }
}

/// A class as runs name them: letters, digits, '_', '-' and '.'.
fn class_name(class: &str) -> Result<String, String> {
    let fits = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
    if class.is_empty() || class.len() > LONGEST_CLASS || !class.chars().all(fits) {
        return Err(format!(
            "'{}' is not a class of responses: name one as the run recorded it (new_order, statement-2, fingerprint-3; up to {LONGEST_CLASS} letters, digits, '_', '-' or '.')",
            class.escape_debug()
        ));
    }
    Ok(class.to_string())
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
pub(super) const MOST_RATE_STEPS: usize = 50;

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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Evenly, sessions offset from each other.
    #[default]
    Uniform,
    /// At random, as independent users arrive (exponential gaps).
    Poisson,
    /// As a captured workload sent them (`run replay`), its offsets over the speed.
    #[value(skip)]
    Captured,
}

/// `--find`'s objectives: one, or several separated by ',' all to hold
/// (`p99<=5ms,p50<=1ms`). Each is a percentile a confidence interval can bracket, so max and
/// mean are refused.
#[derive(Debug, Clone, PartialEq)]
pub struct Objectives(pub Vec<Objective>);

impl std::str::FromStr for Objectives {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let objectives = text
            .split(',')
            .map(|part| {
                let objective: Objective = part.trim().parse()?;
                if super::quantile_of(objective.percentile).is_none() {
                    return Err(format!(
                        "'{}': a search judges a percentile by its confidence interval, which {} has none of: use p50, p90, p95, p99 or p99.9",
                        part.trim(),
                        objective.percentile.name()
                    ));
                }
                Ok(objective)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self(objectives))
    }
}
