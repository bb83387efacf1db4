//! `report --markdown`: tables and findings for a wiki page or a pull request.

use super::tables::{Table, comparison_table, fits_table, levels_table, series_table};
use crate::analysis::study::Analysis;

pub fn render(analysis: &Analysis) -> String {
    let mut out = String::from("# corescale report\n\n");
    section(&mut out, "Findings", &analysis.findings);
    section(&mut out, "Warnings", &analysis.warnings);
    let mut tables = vec![series_table(analysis)];
    tables.extend(analysis.comparisons.iter().map(comparison_table));
    tables.push(fits_table(analysis));
    tables.extend(analysis.series.iter().map(levels_table));
    for table in tables.iter().filter(|table| !table.rows.is_empty()) {
        out.push_str(&markdown_table(table));
    }
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

/// Table pipes escaped, and every `<` or `&` that could open an HTML tag, comment or entity
/// backslash-escaped: Markdown passes raw HTML through, and names come from files other tools
/// wrote. A `<` before a space or `=` (as in "speedup <= 23x") stays as it is.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied().unwrap_or(' ');
        let opens_html = match c {
            '<' => next.is_alphanumeric() || matches!(next, '/' | '!' | '?'),
            '&' => next.is_alphanumeric() || next == '#',
            '|' => true,
            _ => false,
        };
        if opens_html {
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
    fn raw_html_and_pipes_are_escaped() {
        assert_eq!(
            escape("<script>alert(1)</script> a|b &amp; <= 3 & x <!-- c -->"),
            "\\<script>alert(1)\\</script> a\\|b \\&amp; <= 3 & x \\<!-- c -->"
        );
    }
}
