//! The terminal summary of `report`: series, comparisons, fits, findings, warnings. It fits
//! 80 columns unless asked to be wide: each table drops its least needed columns first, and
//! sentences wrap at word boundaries.

use super::cell_table::Table;
use super::cell_table::same_column;
use super::outline::{Reach, Section, Shown, outline};
use super::run_table::{TERMINAL_COLUMNS, wrap};
use super::table;
use crate::analysis::model::Analysis;

/// Warnings the terminal lists without --verbose; past that it counts them.
const TERMINAL_WARNINGS: usize = 5;

/// A search's sentence, the findings' first where no answer compares runs.
fn single_search(analysis: &Analysis) -> Option<&String> {
    let searched = analysis
        .series
        .iter()
        .any(|series| series.series.search.is_some());
    analysis.findings.first().filter(|_| searched)
}

/// The outline's summary tables in its order, then the findings and warnings last, where
/// the eye lands when a command ends.
pub fn render(analysis: &Analysis, wide: bool, verbose: bool) -> String {
    let mut out = String::new();
    // The answer before anything: the one sentence a proposal quotes.
    if let Some(answer) = &analysis.answer {
        out.push_str(&wrap(&format!("Answer: {}", answer.sentence), wide));
        out.push('\n');
    } else if let Some(searched) = single_search(analysis) {
        // A search's own answer, the first finding, is the answer where none compares two.
        out.push_str(&wrap(&format!("Answer: {searched}"), wide));
        out.push('\n');
    }
    // Kept disturbed levels are said first, before any figure of theirs is read.
    if let Some(first) = (analysis.findings.iter().take(2))
        .find(|finding| finding.starts_with("Kept though disturbed"))
    {
        out.push_str(&wrap(first, wide));
        out.push('\n');
    }
    let (mut findings, mut warnings): (&[String], &[String]) = (&[], &[]);
    for section in outline(analysis, Reach::Summary) {
        match section {
            Section::Table(table, Shown::Summary) if !table.rows.is_empty() => {
                out.push_str(&wrap(&table.title, wide));
                out.push_str(&fitted(&table, wide));
                out.push('\n');
            }
            Section::FitNotes(notes) => {
                // Under the fits table, before its blank line.
                out.pop();
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
            Section::Findings(all) => findings = all,
            Section::Warnings(all) => warnings = all,
            // The page's and the Markdown's; the answer was said at the top.
            Section::Answer(_)
            | Section::TopWarnings(_)
            | Section::Glossary(_)
            | Section::Headline(_)
            | Section::Figures
            | Section::Table(..)
            | Section::Commands(_) => {}
        }
    }
    if !findings.is_empty() {
        out.push_str(&list("Findings", findings, wide));
    }
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

/// The table without the columns it must drop, in its order, to fit the terminal; long
/// series names are first shown by a key ([1], [2]) under the table.
fn fitted(table: &Table, wide: bool) -> String {
    let too_wide = |text: &str| {
        !wide
            && text
                .lines()
                .any(|line| line.chars().count() > TERMINAL_COLUMNS)
    };
    let all = render_columns(table, &(0..table.headers.len()).collect::<Vec<_>>());
    if !too_wide(&all) {
        return all;
    }
    let (table, key) = abbreviated(table);
    let mut kept: Vec<usize> = (0..table.headers.len()).collect();
    let mut dropping = table.drop_first.iter();
    let mut text = render_columns(&table, &kept);
    while too_wide(&text) {
        let Some(next) = dropping.next() else {
            break;
        };
        kept.retain(|&column| !same_column(&table.headers[column], next));
        text = render_columns(&table, &kept);
    }
    for line in key {
        text.push_str(&wrap(&line, false));
    }
    text
}

fn render_columns(table: &Table, kept: &[usize]) -> String {
    let headers: Vec<&str> = kept
        .iter()
        .map(|&column| table.headers[column].as_str())
        .collect();
    let rows: Vec<Vec<String>> = table
        .rows
        .iter()
        .map(|row| kept.iter().map(|&column| row[column].clone()).collect())
        .collect();
    table::render(&headers, &rows)
}

/// Names longer than this are shown by a key in a table too wide for the terminal.
const LONGEST_NAME: usize = 16;

/// The table with its long series or host names (first column, and inside headers) replaced
/// by [1], [2], ..., and the key's lines; the table as it was when none is long.
fn abbreviated(table: &Table) -> (Table, Vec<String>) {
    let mut names: Vec<String> = Vec::new();
    for row in &table.rows {
        if let Some(name) = row.first()
            && name.chars().count() > LONGEST_NAME
            && !names.contains(name)
        {
            names.push(name.clone());
        }
    }
    // Longest first, so a name inside another is not replaced within it.
    let mut by_length: Vec<(usize, &String)> = names.iter().enumerate().collect();
    by_length.sort_by_key(|(_, name)| std::cmp::Reverse(name.len()));
    let short = |text: &str| -> String {
        let mut text = text.to_string();
        for (index, name) in &by_length {
            text = text.replace(name.as_str(), &format!("[{}]", index + 1));
        }
        text
    };
    let shortened = Table {
        title: table.title.clone(),
        headers: table.headers.iter().map(|header| short(header)).collect(),
        rows: table
            .rows
            .iter()
            .map(|row| row.iter().map(|cell| short(cell)).collect())
            .collect(),
        drop_first: table.drop_first.clone(),
    };
    let key = names
        .iter()
        .enumerate()
        .map(|(index, name)| format!("  [{}] {name}", index + 1))
        .collect();
    (shortened, key)
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
