//! `report --markdown`: tables and findings for a wiki page or a pull request.

use crate::analysis::model::Analysis;
use crate::report::cell_table::Table;
use crate::report::charts;
use crate::report::outline::{Reach, Section, outline};

/// The page; with `figures` (the PNG directory as seen from the Markdown file), each figure
/// is linked as an image under its title.
pub fn render(analysis: &Analysis, figures: Option<&str>) -> String {
    let mut out = format!(
        "# corescale report: {}\n\n",
        escape(&analysis.names().join(", "))
    );
    for part in outline(analysis, Reach::Everything) {
        match part {
            Section::Answer(answer) => {
                out.push_str(&format!("**Answer:** {}\n\n", escape(answer)));
            }
            Section::TopWarnings(warnings) => {
                out.push_str("**Read first:**\n\n");
                let top = warnings.len().min(crate::report::outline::TOP_WARNINGS);
                for warning in &warnings[..top] {
                    out.push_str(&format!("- {}\n", escape(warning)));
                }
                if warnings.len() > top {
                    out.push_str(&format!(
                        "- and {} more: see [Warnings](#warnings)\n",
                        warnings.len() - top
                    ));
                }
                out.push('\n');
            }
            Section::Headline(headline) => {
                out.push_str(&format!("> {}\n\n", escape(&headline.join(" "))));
            }
            Section::Findings(findings) => section(&mut out, "Findings", findings),
            Section::Figures => {
                let Some(directory) = figures else { continue };
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
            Section::Table(table, _) => {
                if !table.rows.is_empty() {
                    out.push_str(&markdown_table(&table));
                }
            }
            Section::FitNotes(notes) => {
                for note in &notes {
                    out.push_str(&format!("- {}\n", escape(note)));
                }
                if !notes.is_empty() {
                    out.push('\n');
                }
            }
            Section::Commands(commands) => {
                for (series, command) in commands {
                    out.push_str(&format!(
                        "- {} ran `{}`\n",
                        escape(series),
                        command.replace('`', "'")
                    ));
                }
                out.push('\n');
            }
            Section::Warnings(warnings) => section(&mut out, "Warnings", warnings),
            Section::Glossary(terms) if terms.is_empty() => {}
            Section::Glossary(terms) => {
                out.push_str("## Words used here\n\n");
                for (term, meaning) in terms {
                    out.push_str(&format!("- **{}**: {}\n", escape(term), escape(meaning)));
                }
                out.push('\n');
            }
        }
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
