//! A migration's answer from its own workload: two replays of one capture (the old server
//! or settings first, the new after) said in one sentence, first in every output: up to
//! which speed each kept the captured schedule (or, where it searched, the largest speed it
//! kept), how much faster or slower the workload's statements were at the lowest speed both
//! replayed, which statements regressed beyond the noise, and whether their rows matched.

use super::latency::OpenLoopSeries;
use super::model::{Answer, Migration, SeriesAnalysis};
use super::statements::{StatementComparison, StatementVerdict, shortened};

/// The answer before any other: two replays of one capture as a migration, else two
/// searches at one objective, else a replay alone against its capture's logged durations.
pub(crate) fn first_answer(
    analysed: &[SeriesAnalysis],
    open_loop: &[OpenLoopSeries],
    statements: &[StatementComparison],
) -> Option<Answer> {
    // Sorted by speed within a pair: a pair's first is its lowest common speed.
    let first = |against_log: bool| {
        (statements.iter())
            .find(|one| one.against_log == against_log)
            .map(|compared| answer(analysed, open_loop, compared))
    };
    first(false)
        .or_else(|| super::searched::answer(analysed))
        .or_else(|| first(true))
}

/// The answer from one comparison of two replays (or of a replay and its log).
pub(crate) fn answer(
    analysed: &[SeriesAnalysis],
    open_loop: &[OpenLoopSeries],
    compared: &StatementComparison,
) -> Answer {
    let kept = |name: &str| kept_speed(analysed, open_loop, name);
    let (kept_speed, baseline_kept_speed) = (
        kept(&compared.candidate),
        (!compared.against_log)
            .then(|| kept(&compared.baseline))
            .flatten(),
    );
    let migration = Migration {
        kept_speed,
        baseline_kept_speed,
        speed: compared.speed,
        change: compared.weighted_change,
        change_interval: compared.weighted_interval,
        regressed: (compared.statements.iter())
            .filter(|one| one.verdict == StatementVerdict::Regressed)
            .count(),
        statements: compared.statements.len(),
        rows_matched: compared.rows_matched,
    };
    Answer {
        sentence: sentence(compared, &migration),
        server: compared.candidate.clone(),
        against: compared.baseline.clone(),
        nodes: None,
        equivalent: kept_speed
            .zip(baseline_kept_speed)
            .map(|(ours, theirs)| ours / theirs),
        uncertainty: None,
        bound: None,
        objective: None,
        server_workers: None,
        against_workers: None,
        why_not: None,
        migration: Some(migration),
    }
}

/// The largest speed a replay kept: its search's kept speed where it searched (its unit is
/// the captured pace), else the largest up to which every speed kept the schedule.
fn kept_speed(
    analysed: &[SeriesAnalysis],
    open_loop: &[OpenLoopSeries],
    name: &str,
) -> Option<f64> {
    let searched = (analysed.iter())
        .find(|one| one.name() == name)
        .and_then(|one| one.series.search.as_ref())
        .filter(|search| search.unit.contains("captured pace"));
    if let Some(search) = searched {
        return search.kept_rate;
    }
    (open_loop.iter())
        .find(|one| one.series == name)
        .and_then(OpenLoopSeries::kept_up_to)
        .map(|(speed, _)| speed)
}

/// "new keeps the captured workload up to 4x (old: 2x); at 1x its statements are 31%
/// faster [26, 36]; 3 of 41 statements regressed beyond the noise, the worst fingerprint-7
/// (UPDATE stock ...) p99 2.40x [2.10, 2.80]; rows matched for every statement compared."
fn sentence(compared: &StatementComparison, migration: &Migration) -> String {
    let times = |speed: Option<f64>| speed.map(crate::format::times);
    let mut text = match (
        times(migration.kept_speed),
        times(migration.baseline_kept_speed),
    ) {
        (Some(ours), _) if compared.against_log => format!(
            "{} keeps the captured workload up to {ours}",
            compared.candidate
        ),
        (None, _) if compared.against_log => format!(
            "{} falls behind the captured workload at its first speed",
            compared.candidate
        ),
        (Some(ours), Some(theirs)) => format!(
            "{} keeps the captured workload up to {ours} ({}: {theirs})",
            compared.candidate, compared.baseline
        ),
        (Some(ours), None) => format!(
            "{} keeps the captured workload up to {ours} ({} fell behind at its first speed)",
            compared.candidate, compared.baseline
        ),
        (None, Some(theirs)) => format!(
            "{} falls behind the captured workload at its first speed ({}: up to {theirs})",
            compared.candidate, compared.baseline
        ),
        (None, None) => format!(
            "neither {} nor {} kept the captured schedule at its first speed",
            compared.candidate, compared.baseline
        ),
    };
    if let Some(change) = compared.change_said() {
        let against = if compared.against_log {
            "the captured log's durations (the server's alone; a replay's answers add the round trip)"
                .to_string()
        } else {
            format!("{}'s", compared.baseline)
        };
        text.push_str(&format!(
            "; at {} its statements are {change} against {against} (each weighted by its share of the time)",
            crate::format::times(migration.speed),
        ));
    }
    text.push_str(&format!(
        "; {} of {} statements regressed beyond the noise{}",
        migration.regressed,
        migration.statements,
        worst(compared)
    ));
    text.push_str(&rows_said(compared, migration));
    if compared.disturbed {
        text.push_str(
            "; these replays were disturbed, so each statement was judged by its p50 alone: replay again on an idle host before quoting it",
        );
    }
    text + "."
}

/// ", the worst fingerprint-7 (UPDATE ...) p99 2.40x [2.10, 2.80]", or nothing.
fn worst(compared: &StatementComparison) -> String {
    compared
        .worst_regression()
        .map_or(String::new(), |(one, name, figure)| {
            format!(
                ", the worst {} ({}) {name} {}",
                one.class,
                shortened(&one.text),
                figure.text()
            )
        })
}

/// "; rows matched for every statement compared", the statements that differ, or nothing
/// where no rows were compared.
fn rows_said(compared: &StatementComparison, migration: &Migration) -> String {
    let Some(share) = migration.rows_matched else {
        return String::new();
    };
    let differing: Vec<&str> = (compared.statements.iter())
        .filter(|one| one.rows.is_some_and(|rows| !rows.matched))
        .map(|one| one.class.as_str())
        .collect();
    match differing.as_slice() {
        [] => "; rows matched for every statement compared".to_string(),
        [one] => format!(
            "; rows differ for {one} ({} of the statements sent are its)",
            crate::format::percent(1.0 - share)
        ),
        [first, ..] => format!(
            "; rows differ for {} statements, the first {first} ({} of the statements sent are theirs)",
            differing.len(),
            crate::format::percent(1.0 - share)
        ),
    }
}

#[cfg(test)]
mod tests;
