//! The terminal summary of `report`: series, comparisons, fits, findings, warnings. It fits
//! 80 columns unless asked to be wide: each table drops its least needed columns first, and
//! sentences wrap at word boundaries.

use super::run_table::{TERMINAL_COLUMNS, wrap};
use super::table;
use super::tables::{
    Table, comparison_table, fits_notes, fits_table, fleet_table, history_table, latency_table,
    open_loop_table, p99_at_loads_table, same_column, series_table, slo_table,
};
use crate::analysis::model::Analysis;

/// Warnings the terminal lists without --verbose; past that it counts them.
const TERMINAL_WARNINGS: usize = 5;

pub fn render(analysis: &Analysis, wide: bool, verbose: bool) -> String {
    let mut tables = Vec::new();
    if let Some(fleet) = &analysis.fleet {
        tables.push(fleet_table(fleet));
        tables.extend(fleet.histories.iter().map(history_table));
    }
    tables.push(series_table(analysis));
    tables.push(slo_table(analysis));
    tables.extend(analysis.comparisons.iter().map(comparison_table));
    tables.extend(analysis.comparisons.iter().map(p99_at_loads_table));
    // Statements' response times (a job's time is in the series table already).
    tables.extend(
        analysis
            .series
            .iter()
            .filter(|series| series.latency_bend.is_some() || statement_latency(series))
            .map(latency_table),
    );
    tables.extend(analysis.open_loop.iter().map(open_loop_table));
    let mut out = String::new();
    // Kept disturbed levels are said first, before any figure of theirs is read.
    if let Some(first) = analysis
        .findings
        .first()
        .filter(|finding| finding.starts_with("Kept though disturbed"))
    {
        out.push_str(&wrap(first, wide));
        out.push('\n');
    }
    for table in tables.iter().filter(|table| !table.rows.is_empty()) {
        out.push_str(&wrap(&table.title, wide));
        out.push_str(&fitted(table, wide));
        out.push('\n');
    }
    let fits = fits_table(analysis);
    if !fits.rows.is_empty() {
        out.push_str(&wrap(&fits.title, wide));
        out.push_str(&fitted(&fits, wide));
        let notes = fits_notes(analysis);
        if verbose {
            for note in notes {
                out.push_str(&wrap(&format!("  {note}"), wide));
            }
        } else if analysis
            .series
            .iter()
            .any(|series| !series.fit_notes.is_empty())
        {
            out.push_str(&wrap(
                "  Why fits are not quoted, and what each '-' means: --verbose.",
                wide,
            ));
        }
        out.push('\n');
    }
    out.push_str(&list("Findings", &analysis.findings, wide));
    let warnings = &analysis.warnings;
    if verbose || warnings.len() <= TERMINAL_WARNINGS {
        out.push_str(&list("Warnings", warnings, wide));
    } else {
        out.push_str(&list("Warnings", &warnings[..TERMINAL_WARNINGS], wide));
        out.truncate(out.trim_end().len() + 1);
        let more = warnings.len() - TERMINAL_WARNINGS;
        out.push_str(&wrap(
            &format!(
                "... and {more} more warning{}: --verbose prints all {} (as the page and the Markdown do).",
                if more == 1 { "" } else { "s" },
                warnings.len()
            ),
            wide,
        ));
        out.push('\n');
    }
    out
}

fn statement_latency(series: &crate::analysis::model::SeriesAnalysis) -> bool {
    series.levels.iter().any(|level| {
        level
            .latency
            .as_ref()
            .is_some_and(|latency| latency.is_statement())
    })
}

/// The table without the columns it must drop, in its order, to fit the terminal.
fn fitted(table: &Table, wide: bool) -> String {
    let mut kept: Vec<usize> = (0..table.headers.len()).collect();
    let mut dropping = table.drop_first.iter();
    loop {
        let headers: Vec<&str> = kept
            .iter()
            .map(|&column| table.headers[column].as_str())
            .collect();
        let rows: Vec<Vec<String>> = table
            .rows
            .iter()
            .map(|row| kept.iter().map(|&column| row[column].clone()).collect())
            .collect();
        let text = table::render(&headers, &rows);
        if wide
            || text
                .lines()
                .all(|line| line.chars().count() <= TERMINAL_COLUMNS)
        {
            return text;
        }
        let Some(next) = dropping.next() else {
            return text;
        };
        kept.retain(|&column| !same_column(&table.headers[column], next));
    }
}

fn list(title: &str, items: &[String], wide: bool) -> String {
    if items.is_empty() {
        return String::new();
    }
    let mut out = format!("{title}\n");
    for item in items {
        out.push_str(&wrap(&format!("- {item}"), wide));
    }
    out.push('\n');
    out
}
