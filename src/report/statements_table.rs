//! Two replays of one capture, statement by statement: each fingerprint's verdict, its p50
//! and p99 service time as a ratio with an interval, its share of the baseline's time and
//! its text, regressions first.

use super::cell_table::{Table, percent};
use crate::analysis::statements::{
    CHANGE_MS, CHANGE_RATIO, RatioFigure, RowsCompared, StatementComparison, shortened,
};

/// "same", or "12 -> 11 (1 refused)" where the rows or refusals differ, or "-" where they
/// were not compared.
fn rows_word(rows: Option<&RowsCompared>) -> String {
    match rows {
        None => "-".to_string(),
        Some(rows) if rows.matched => "same".to_string(),
        Some(rows) => {
            let refused = if rows.candidate_failed > 0 || rows.baseline_failed > 0 {
                format!(
                    " ({} -> {} refused)",
                    rows.baseline_failed, rows.candidate_failed
                )
            } else {
                String::new()
            };
            format!("{} -> {}{refused}", rows.baseline_rows, rows.candidate_rows)
        }
    }
}

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
                rows_word(one.rows.as_ref()),
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
            "rows",
            "text",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        drop_first: vec!["answers", "rows", "share of time"],
    }
}
