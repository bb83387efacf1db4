//! `report --markdown`: tables and findings for a wiki page or a pull request.

use super::charts;
use super::tables::{
    Table, cache_table, comparison_table, fits_notes, fits_table, fleet_table,
    history_levels_table, history_table, latency_table, levels_table, open_loop_table,
    p99_at_loads_table, provenance_tables, series_table, slo_table, workload_figures_table,
};
use crate::analysis::model::Analysis;

/// The page; with `figures` (the PNG directory as seen from the Markdown file), each figure
/// is linked as an image under its title.
pub fn render(analysis: &Analysis, figures: Option<&str>) -> String {
    let mut out = format!(
        "# corescale report: {}\n\n",
        escape(&analysis.names().join(", "))
    );
    if !analysis.findings.is_empty() {
        let headline: Vec<&str> = analysis
            .findings
            .iter()
            .take(3)
            .map(String::as_str)
            .collect();
        out.push_str(&format!("> {}\n\n", escape(&headline.join(" "))));
    }
    section(&mut out, "Findings", &analysis.findings);
    if let Some(directory) = figures {
        out.push_str("## Figures\n\n");
        for figure in charts::figures(analysis) {
            out.push_str(&format!(
                "![{}]({}/{}.png)\n\n{}\n\n",
                escape(&figure.title),
                directory.trim_end_matches('/'),
                figure.slug,
                escape(&figure.caption_sentence())
            ));
        }
    }
    let mut tables = Vec::new();
    if let Some(fleet) = &analysis.fleet {
        tables.push(fleet_table(fleet));
        for history in &fleet.histories {
            tables.push(history_table(history));
            tables.push(history_levels_table(history));
        }
    }
    tables.push(series_table(analysis));
    tables.push(slo_table(analysis));
    tables.extend(analysis.comparisons.iter().map(comparison_table));
    tables.extend(analysis.comparisons.iter().map(p99_at_loads_table));
    for table in tables.iter().filter(|table| !table.rows.is_empty()) {
        out.push_str(&markdown_table(table));
    }
    let fits = fits_table(analysis);
    if !fits.rows.is_empty() {
        out.push_str(&markdown_table(&fits));
        for note in fits_notes(analysis) {
            out.push_str(&format!("- {}\n", escape(&note)));
        }
        out.push('\n');
    }
    let mut tables = Vec::new();
    tables.extend(analysis.series.iter().map(levels_table));
    tables.extend(analysis.series.iter().map(cache_table));
    tables.extend(analysis.series.iter().map(latency_table));
    tables.extend(analysis.series.iter().map(workload_figures_table));
    tables.extend(analysis.open_loop.iter().map(open_loop_table));
    for table in tables.iter().filter(|table| !table.rows.is_empty()) {
        out.push_str(&markdown_table(table));
    }
    // Results first; then where the series came from and what the data cannot support.
    for table in provenance_tables(analysis) {
        out.push_str(&markdown_table(&table));
    }
    let commands: Vec<String> = analysis
        .series
        .iter()
        .filter_map(|series| {
            let command = series.series.provenance.command_line.as_ref()?;
            Some(format!(
                "- {} ran `{}`\n",
                escape(series.name()),
                command.replace('`', "'")
            ))
        })
        .collect();
    if !commands.is_empty() {
        out.push_str(&commands.concat());
        out.push('\n');
    }
    section(&mut out, "Warnings", &analysis.warnings);
    out
}

fn section(out: &mut String, title: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    out.push_str(&format!("## {title}\n\n"));
    for item in items {
        out.push_str(&format!("- {}\n", escape(item)));
    }
    out.push('\n');
}

fn markdown_table(table: &Table) -> String {
    let row = |cells: &[String]| {
        let escaped: Vec<String> = cells.iter().map(|cell| escape(cell)).collect();
        format!("| {} |\n", escaped.join(" | "))
    };
    let mut out = format!("## {}\n\n", escape(&table.title));
    out.push_str(&row(&table.headers));
    out.push_str(&format!("|{}\n", "---|".repeat(table.headers.len())));
    for cells in &table.rows {
        out.push_str(&row(cells));
    }
    out.push('\n');
    out
}

/// Text from other tools' files (host names, tags, CPU models) must not turn into Markdown:
/// every character that can open a link, image, emphasis, code, heading, HTML or a table cell
/// is backslash-escaped (CommonMark lets any ASCII punctuation be escaped).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '!' | '#' | '|' | '~' | '&'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn raw_html_links_images_and_pipes_are_escaped() {
        assert_eq!(
            escape("<script>alert(1)</script> a|b &amp; <= 3"),
            "\\<script\\>alert(1)\\</script\\> a\\|b \\&amp; \\<= 3"
        );
        assert_eq!(
            escape("![t](https://evil.example/p.png) [x](javascript:1) *b* _i_ `c` # h"),
            "\\!\\[t\\](https://evil.example/p.png) \\[x\\](javascript:1) \\*b\\* \\_i\\_ \\`c\\` \\# h"
        );
    }
}
