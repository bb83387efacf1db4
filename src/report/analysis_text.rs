//! The terminal summary of `report`: series, comparisons, fits, findings, warnings.

use super::table;
use super::tables::{Table, comparison_table, fits_table, series_table};
use crate::analysis::study::Analysis;

pub fn render(analysis: &Analysis) -> String {
    let mut tables = vec![series_table(analysis)];
    tables.extend(analysis.comparisons.iter().map(comparison_table));
    tables.push(fits_table(analysis));
    let mut out = String::new();
    for table in tables.iter().filter(|table| !table.rows.is_empty()) {
        out.push_str(&render_table(table));
        out.push('\n');
    }
    out.push_str(&list("Findings", &analysis.findings));
    out.push_str(&list("Warnings", &analysis.warnings));
    out
}

fn render_table(table: &Table) -> String {
    let headers: Vec<&str> = table.headers.iter().map(String::as_str).collect();
    format!("{}\n{}", table.title, table::render(&headers, &table.rows))
}

fn list(title: &str, items: &[String]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let mut out = format!("{title}\n");
    for item in items {
        out.push_str(&format!("- {item}\n"));
    }
    out.push('\n');
    out
}
