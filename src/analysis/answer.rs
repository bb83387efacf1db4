//! The one sentence a purchase proposal quotes: how many of a cluster's nodes one server
//! replaces (or, for two servers, how much of the other's capacity one has), with its 95%
//! uncertainty, at saturation or at the latency objective of `report --slo`. It is said once,
//! first in every output, and the findings do not say it again another way.

use super::latency::SloVerdict;
use super::model::{Answer, Bound, Comparison, SeriesAnalysis, SloReport};
use crate::format::{significant, with_uncertainty};

/// Two series of one job, and how the first is counted against the second.
struct Pair<'a> {
    server: &'a SeriesAnalysis,
    against: &'a SeriesAnalysis,
    nodes: Option<usize>,
}

/// The capacities compared and where: (server's, its workers, against's, its workers), with
/// a bound and the relative uncertainty of each side.
struct Taken {
    server: (f64, usize),
    against: (f64, usize),
    bound: Option<Bound>,
    /// Words after the figures: why they were taken where they were.
    at: String,
    /// Where they were taken, when not at saturation or the objective.
    condition: Option<String>,
    /// "from" for a plateau (its median, from its first level on), "at" for one level.
    word: &'static str,
    /// Taken from open-loop levels (the rates sent): no batches give their uncertainty.
    open_loop: bool,
}

/// The answer of an analysis: a server against a cluster when the first comparison holds
/// one, else the two series of a two-series comparison; None otherwise.
pub(crate) fn answer(
    series: &[SeriesAnalysis],
    comparisons: &[Comparison],
    slo: Option<&SloReport>,
) -> Option<Answer> {
    let pair = pair(series, comparisons)?;
    let unit = &pair.server.capacity_unit;
    let taken = match slo {
        Some(report) => at_objective(&pair, report),
        None => at_saturation(&pair),
    };
    let objective = slo.map(|report| report.objective.clone());
    let mut answer = Answer {
        sentence: String::new(),
        server: pair.server.name().to_string(),
        against: pair.against.name().to_string(),
        nodes: pair.nodes,
        equivalent: None,
        uncertainty: None,
        bound: None,
        objective: objective.clone(),
        server_workers: None,
        against_workers: None,
        why_not: None,
        migration: None,
    };
    let taken = match taken {
        Ok(taken) => taken,
        Err(why) => {
            answer.sentence = cannot_say(&pair, objective.as_deref(), &why);
            answer.why_not = Some(why);
            return Some(answer);
        }
    };
    let word = taken.word;
    let ratio = taken.server.0 / taken.against.0;
    let equivalent = ratio * pair.nodes.map_or(1.0, |nodes| nodes as f64);
    let relative = if taken.open_loop {
        None
    } else {
        pair.server
            .capacity_uncertainty(taken.server.1)
            .zip(pair.against.capacity_uncertainty(taken.against.1))
            .map(|(a, b)| a.hypot(b))
    };
    answer.equivalent = Some(equivalent).filter(|value| value.is_finite());
    answer.uncertainty = relative.map(|relative| relative * equivalent);
    answer.bound = taken.bound;
    answer.server_workers = Some(taken.server.1);
    answer.against_workers = Some(taken.against.1);
    let figure = format!(
        "{}{}",
        match taken.bound {
            Some(Bound::AtLeast) => "at least ",
            Some(Bound::AtMost) => "at most ",
            None => "",
        },
        with_uncertainty(equivalent, answer.uncertainty)
    );
    let condition = match (objective.as_deref(), &taken.condition) {
        (Some(objective), _) => format!("at {objective}"),
        (None, Some(condition)) => condition.clone(),
        (None, None) => "at saturation".to_string(),
    };
    let claim = match pair.nodes {
        Some(nodes) => format!(
            "{} replaces {figure} of {}'s {nodes} nodes {condition}",
            answer.server, answer.against
        ),
        None => format!(
            "{} delivers {figure}x the capacity of {} {condition}",
            answer.server, answer.against
        ),
    };
    answer.sentence = format!(
        "{claim}: {} {unit} {word} {} against {} {word} {} on {}{}{}.",
        significant(taken.server.0),
        crate::format::workers_text(taken.server.1),
        significant(taken.against.0),
        crate::format::workers_text(taken.against.1),
        answer.against,
        taken.at,
        match (taken.open_loop, relative) {
            (true, _) =>
                " (open loop: the rates sent at which each kept it; their uncertainty is not measured)",
            (false, None) =>
                " (its uncertainty is unknown: one batch per level and too few levels to measure the noise; measure with --repeat 3)",
            (false, Some(_)) => "",
        }
    );
    Some(answer)
}

/// A server against a cluster, else the two series of a two-series comparison.
fn pair<'a>(series: &'a [SeriesAnalysis], comparisons: &[Comparison]) -> Option<Pair<'a>> {
    let find = |name: &str| series.iter().find(|one| one.name() == name);
    let comparison = comparisons.first()?;
    for versus in &comparison.leader_against {
        if let Some(equivalence) = &versus.node_equivalence {
            return Some(Pair {
                server: find(&equivalence.server)?,
                against: find(&equivalence.cluster)?,
                nodes: Some(equivalence.nodes),
            });
        }
    }
    match comparison.leader_against.as_slice() {
        [versus] if comparison.rows.len() == 2 => Some(Pair {
            server: find(&versus.series)?,
            against: find(&versus.against)?,
            nodes: None,
        }),
        _ => None,
    }
}

/// Capacities at saturation; at the largest load both measured when either was still rising.
fn at_saturation(pair: &Pair) -> Result<Taken, String> {
    fn plateau(series: &SeriesAnalysis) -> Result<&super::scaling::Saturation, String> {
        series
            .saturation
            .as_ref()
            .filter(|saturation| saturation.capacity > 0.0)
            .ok_or_else(|| {
                format!(
                    "the capacity of {} could not be estimated (too few levels kept)",
                    series.name()
                )
            })
    }
    let (server, against) = (plateau(pair.server)?, plateau(pair.against)?);
    // A plateau not reached, or not placed (levels their batches cannot tell apart).
    let unplaced = |saturation: &super::scaling::Saturation| {
        saturation.censored || saturation.untold.is_some()
    };
    if !unplaced(server) && !unplaced(against) {
        return Ok(Taken {
            server: (server.capacity, server.workers),
            against: (against.capacity, against.workers),
            bound: None,
            at: String::new(),
            condition: None,
            word: "from",
            open_loop: false,
        });
    }
    let why = |series: &SeriesAnalysis, saturation: &super::scaling::Saturation| {
        if saturation.censored {
            format!("{} was still rising", series.name())
        } else {
            format!(
                "where {} saturates cannot be told from its batches",
                series.name()
            )
        }
    };
    let rising: Vec<String> = [(pair.server, server), (pair.against, against)]
        .iter()
        .filter(|(_, saturation)| unplaced(saturation))
        .map(|(series, saturation)| why(series, saturation))
        .collect();
    let common = pair
        .server
        .levels
        .iter()
        .rev()
        .find_map(|level| Some((level, pair.against.level(level.workers)?)))
        .filter(|(_, other)| other.capacity > 0.0)
        .ok_or_else(|| format!("{}, and the two share no load level", rising.join("; ")))?;
    Ok(Taken {
        server: (common.0.capacity, common.0.workers),
        against: (common.1.capacity, common.1.workers),
        bound: None,
        at: format!(" ({}: no plateau to compare)", rising.join("; ")),
        condition: Some(format!(
            "at {}, the largest load both measured",
            crate::format::workers_text(common.0.workers)
        )),
        word: "at",
        open_loop: false,
    })
}

/// The largest throughput at which each kept the objective.
fn at_objective(pair: &Pair, report: &SloReport) -> Result<Taken, String> {
    // A series with open-loop levels is judged on them (the rates sent, from when each
    // statement was due), as its own findings judge it; else on its closed-loop levels.
    let verdict = |series: &SeriesAnalysis| -> Result<&SloVerdict, String> {
        let open = format!("{} (", series.name());
        let verdict = (report.verdicts.iter())
            .find(|verdict| verdict.series.starts_with(&open))
            .or_else(|| (report.verdicts.iter()).find(|verdict| verdict.series == series.name()))
            .ok_or_else(|| format!("{} has no verdict on the objective", series.name()))?;
        match verdict.workers.zip(verdict.throughput) {
            Some(_) => Ok(verdict),
            None => Err(format!(
                "{}: {}",
                series.name(),
                verdict
                    .reason
                    .as_deref()
                    .unwrap_or("no level kept the objective")
            )),
        }
    };
    let (server, against) = (verdict(pair.server)?, verdict(pair.against)?);
    if server.measured_from != against.measured_from {
        return Err(format!(
            "the response times of {} and {} were measured differently (closed and open loop)",
            server.series, against.series
        ));
    }
    let bound = match (server.beyond_largest, against.beyond_largest) {
        (false, false) => None,
        (true, false) => Some(Bound::AtLeast),
        (false, true) => Some(Bound::AtMost),
        (true, true) => {
            return Err(format!(
                "both kept {} at every level measured, so neither's limit is known: {}",
                report.objective,
                if server.asked_per_s.is_some() {
                    "measure higher rates (--rate)"
                } else {
                    "measure more workers"
                }
            ));
        }
    };
    let taken = |verdict: &SloVerdict| {
        (
            verdict.throughput.unwrap_or(0.0),
            verdict.workers.unwrap_or(0),
        )
    };
    let at = match bound {
        Some(Bound::AtLeast) => format!(
            " ({} kept it at every level measured: its limit lies beyond)",
            server.series
        ),
        Some(Bound::AtMost) => format!(
            " ({} kept it at every level measured: its limit lies beyond)",
            against.series
        ),
        None => String::new(),
    };
    if against
        .throughput
        .is_none_or(|throughput| throughput <= 0.0)
    {
        return Err(format!(
            "{} kept it at no throughput above 0",
            against.series
        ));
    }
    let open_loop = server.asked_per_s.is_some() || server.series != pair.server.name();
    Ok(Taken {
        server: taken(server),
        against: taken(against),
        bound,
        at,
        condition: None,
        word: "at",
        open_loop,
    })
}

/// The answer asked for cannot be given: why, and at saturation when that can be said.
fn cannot_say(pair: &Pair, objective: Option<&str>, why: &str) -> String {
    let what = match pair.nodes {
        Some(nodes) => format!(
            "how many of {}'s {nodes} nodes {} replaces",
            pair.against.name(),
            pair.server.name()
        ),
        None => format!(
            "how {}'s capacity compares with {}'s",
            pair.server.name(),
            pair.against.name()
        ),
    };
    match objective {
        Some(objective) => format!("At {objective}, {what} cannot be said: {why}."),
        None => format!("At saturation, {what} cannot be said: {why}."),
    }
}
