//! Two replays of one capture, statement by statement: each fingerprint's verdict, its p50
//! and p99 service time as a ratio with an interval, its share of the baseline's time and
//! its text, regressions first.

use super::cell_table::{Table, percent};
use crate::analysis::statements::{
    CHANGE_MS, CHANGE_RATIO, RatioFigure, StatementComparison, shortened,
};

/// One comparison at one speed; no rows when no statement was answered by both.
pub(crate) fn statements_table(comparison: &StatementComparison) -> Table {
    let figure = |figure: &Option<RatioFigure>| {
        figure.as_ref().map_or("-".to_string(), |figure| {
            format!(
                "{:.3} -> {:.3} ms, {}",
                figure.baseline_ms,
                figure.candidate_ms,
                figure.text()
            )
        })
    };
    let rows = (comparison.statements.iter())
        .map(|one| {
            vec![
                one.verdict.word().to_string(),
                one.class.clone(),
                format!("{} / {}", one.baseline_answers, one.candidate_answers),
                figure(&one.p50),
                figure(&one.p99),
                percent(one.share_of_time),
                shortened(&one.text),
            ]
        })
        .collect();
    Table {
        title: format!(
            "{} against {} at {}: each statement's service time (sent to answered), the ratio with its 95% interval; a change only beyond {CHANGE_RATIO}x and {CHANGE_MS} ms",
            comparison.candidate,
            comparison.baseline,
            crate::format::times(comparison.speed)
        ),
        headers: [
            "verdict",
            "statement",
            "answers",
            "p50",
            "p99",
            "share of time",
            "text",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        drop_first: vec!["answers", "share of time"],
    }
}
