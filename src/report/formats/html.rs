//! `report --html`: one self-contained page — inline SVG figures, tables, findings — with no
//! script, font or stylesheet fetched from anywhere.

use anyhow::Result;

use crate::analysis::model::Analysis;
use crate::report::cell_table::Table;
use crate::report::charts::{HEIGHT, WIDTH, figures, render_svg};
use crate::report::outline::{Reach, Section, Shown, outline};

/// Readable from a 700 px window to a 1920 px screen without sideways scrolling (wide
/// tables wrap their cells); printed on A4 or Letter, two figures to a page, each with its
/// caption, no heading left at a page's foot, and every collapsed section open.
const STYLE: &str = "body{font-family:sans-serif;max-width:1200px;margin:1.5em auto;padding:0 1em;\
color:#222;line-height:1.4}\
table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:0.9em}td,th{border:1px solid #ccc;\
padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}\
th{background:#f3f3f3}.wide{overflow-x:auto}figure{margin:1em 0}\
figure svg{width:100%;max-width:960px;height:auto;display:block;margin:0 auto}\
figcaption,.notes{color:#555;font-size:0.9em}.warn{color:#a33}.summary{font-size:1.05em;\
background:#f6f8fa;border-left:4px solid #1f77b4;padding:0.6em 1em}.answer{font-size:1.2em;\
background:#eef6ee;border-left:4px solid #2ca02c;padding:0.6em 1em}code{font-size:0.9em;\
word-break:break-all}h1,h2,h3{break-after:avoid}\
@media (max-width:800px){table{font-size:0.8em}td,th{padding:2px 4px}h2{font-size:1.25em}}\
@page{margin:12mm}\
@media print{body{max-width:none;margin:0;padding:0;font-size:10pt}\
figure{break-inside:avoid}figure svg{max-height:105mm;width:auto;max-width:100%}\
tr{break-inside:avoid}thead{display:table-header-group}.wide{overflow:visible}\
details>*{display:block}details::details-content{content-visibility:visible;display:block}\
summary{list-style:none;break-after:avoid}}";

pub fn render(analysis: &Analysis) -> Result<String> {
    let figures = figures_html(analysis)?;
    let mut page = String::new();
    render_to(analysis, &figures, &mut |chunk| {
        page.push_str(chunk);
        Ok(())
    })?;
    Ok(page)
}

/// The figures as the page shows them, drawn before the page is written: a figure that
/// cannot be drawn is its own error, and no part of the page is written.
pub fn figures_html(analysis: &Analysis) -> Result<String> {
    let mut html = String::new();
    for figure in figures(analysis) {
        let svg = render_svg(&figure)?;
        html.push_str(&format!(
            "<figure id=\"{}\">{}<figcaption>{}</figcaption></figure>\n",
            figure.slug,
            strip_xml_declaration(&svg),
            escape(&figure.caption_sentence())
        ));
    }
    Ok(html)
}

/// The page around its drawn `figures`, handed to `emit` a section at a time: a page of
/// 10^5 levels is never held whole. Only `emit` fails.
pub fn render_to(
    analysis: &Analysis,
    figures: &str,
    emit: &mut dyn FnMut(&str) -> Result<()>,
) -> Result<()> {
    let title = format!("corescale report: {}", analysis.names().join(", "));
    let mut body = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{STYLE}</style></head>\n<body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    );
    for section in outline(analysis, Reach::Everything) {
        emit(&body)?;
        body.clear();
        match section {
            Section::Answer(answer) => body.push_str(&format!(
                "<p class=\"answer\" id=\"answer\"><strong>Answer:</strong> {}</p>\n",
                escape(answer)
            )),
            Section::TopWarnings(warnings) => {
                let item = |warning: &String| format!("<li>{}</li>", escape(warning));
                let top = warnings.len().min(crate::report::outline::TOP_WARNINGS);
                let items: String = warnings[..top].iter().map(item).collect();
                // The rest folded here, each reachable from the first screen.
                let rest = match &warnings[top..] {
                    [] => String::new(),
                    rest => format!(
                        "<details><summary>{} more warning{}</summary><ul>{}</ul></details>",
                        rest.len(),
                        if rest.len() == 1 { "" } else { "s" },
                        rest.iter().map(item).collect::<String>()
                    ),
                };
                body.push_str(&format!(
                    "<div class=\"top-warnings warn\" id=\"top-warnings\"><strong>Read first:</strong><ul>{items}</ul>{rest}</div>\n"
                ));
            }
            Section::Headline(headline) => body.push_str(&format!(
                "<p class=\"summary\">{}</p>\n",
                escape(&headline.join(" "))
            )),
            Section::Findings(findings) => body.push_str(&list("Findings", findings, "")),
            Section::Figures => body.push_str(figures),
            Section::Table(table, _) if table.rows.is_empty() => {}
            Section::Table(table, Shown::Detail) => {
                body.push_str(&format!(
                    "<details><summary>{} ({} rows)</summary>",
                    escape(&table.title),
                    table.rows.len()
                ));
                html_table(&table, &mut body, emit)?;
                body.push_str("</details>\n");
            }
            Section::Table(table, _) => html_table(&table, &mut body, emit)?,
            Section::FitNotes(notes) if notes.is_empty() => {}
            Section::FitNotes(notes) => {
                let notes: String = notes
                    .iter()
                    .map(|note| format!("<li>{}</li>", escape(note)))
                    .collect();
                body.push_str(&format!("<ul class=\"notes\">{notes}</ul>\n"));
            }
            Section::Commands(commands) => {
                let commands: String = commands
                    .iter()
                    .map(|(series, command)| {
                        format!(
                            "<p>{}: <code>{}</code></p>",
                            escape(series),
                            escape(command)
                        )
                    })
                    .collect();
                body.push_str(&format!(
                    "<details><summary>Command lines</summary>{commands}</details>\n"
                ));
            }
            Section::Warnings(warnings) => body.push_str(&warnings_section(analysis, warnings)),
            Section::Glossary(terms) => {
                // One line a term, in the notes' small type: a key, not a chapter.
                let items: String = terms
                    .iter()
                    .map(|(term, meaning)| {
                        format!("<li><b>{}</b>: {}</li>", escape(term), escape(meaning))
                    })
                    .collect();
                body.push_str(&format!(
                    "<h2 id=\"glossary\">Words used here</h2><ul class=\"notes\">{items}</ul>\n"
                ));
            }
        }
    }
    body.push_str("</body></html>\n");
    emit(&body)
}

/// The warnings, collapsed under their count, one line per series and kind.
fn warnings_section(analysis: &Analysis, warnings: &[String]) -> String {
    if warnings.is_empty() {
        return String::new();
    }
    let entries: String = warning_groups(analysis)
        .iter()
        .map(|(heading, items)| match items.as_slice() {
            [one] => format!("<li>{}</li>", escape(one)),
            _ => format!(
                "<li><details><summary>{} ({} warnings)</summary><ul>{}</ul></details></li>",
                escape(heading),
                items.len(),
                items
                    .iter()
                    .map(|item| format!("<li>{}</li>", escape(item)))
                    .collect::<String>()
            ),
        })
        .collect();
    format!(
        "<h2>Warnings</h2><details><summary>{}: what these data cannot support</summary><ul class=\"warn\">{entries}</ul></details>\n",
        crate::format::counted(warnings.len(), "warning")
    )
}

/// The warnings one line per series and kind, in their order: those of one series that
/// start alike ("RAC52: 4 workers: interference not judged: ...") under one heading
/// ("RAC52: interference not judged"), each with its items.
fn warning_groups(analysis: &Analysis) -> Vec<(String, Vec<&str>)> {
    let names = analysis.names();
    let kind = |warning: &str| -> String {
        let (series, rest) = match names
            .iter()
            .find_map(|name| Some((*name, warning.strip_prefix(name)?.strip_prefix(": ")?)))
        {
            Some(split) => split,
            None => ("", warning),
        };
        // A level's own prefix ("4 workers: ", "4 workers at 1 K/s: ") is not the kind.
        let rest = match rest.split_once(": ") {
            Some((level, after))
                if level.starts_with(|c: char| c.is_ascii_digit()) && level.contains(" worker") =>
            {
                after
            }
            _ => rest,
        };
        let kind = match rest.split_once(':') {
            Some((kind, _)) if kind.len() <= 60 => kind,
            _ => rest,
        };
        if series.is_empty() {
            kind.to_string()
        } else {
            format!("{series}: {kind}")
        }
    };
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for warning in &analysis.warnings {
        let heading = kind(warning);
        match groups.iter_mut().find(|(known, _)| *known == heading) {
            Some((_, items)) => items.push(warning),
            None => groups.push((heading, vec![warning])),
        }
    }
    groups
}

fn list(title: &str, items: &[String], class: &str) -> String {
    if items.is_empty() {
        return String::new();
    }
    let entries: String = items
        .iter()
        .map(|item| format!("<li>{}</li>", escape(item)))
        .collect();
    format!("<h2>{title}</h2><ul{class}>{entries}</ul>\n")
}

/// A table's HTML, appended to the page and handed to `emit` every 64 KiB or so: a levels
/// table of 10^5 rows is never held whole as HTML.
fn html_table(
    table: &Table,
    out: &mut String,
    emit: &mut dyn FnMut(&str) -> Result<()>,
) -> Result<()> {
    const CHUNK: usize = 64 << 10;
    if table.rows.is_empty() {
        return Ok(());
    }
    let row = |tag: &str, cells: &[String], out: &mut String| {
        out.push_str("<tr>");
        for cell in cells {
            out.push('<');
            out.push_str(tag);
            out.push('>');
            escape_into(cell, out);
            out.push_str("</");
            out.push_str(tag);
            out.push('>');
        }
        out.push_str("</tr>");
    };
    out.push_str(&format!(
        "<h2>{}</h2><div class=\"wide\"><table><thead>",
        escape(&table.title)
    ));
    row("th", &table.headers, out);
    out.push_str("</thead><tbody>");
    for cells in &table.rows {
        row("td", cells, out);
        if out.len() >= CHUNK {
            emit(out)?;
            out.clear();
        }
    }
    out.push_str("</tbody></table></div>\n");
    Ok(())
}

/// The SVG without its XML declaration, and scaled by its viewBox to the page's width rather
/// than fixed in pixels.
fn strip_xml_declaration(svg: &str) -> String {
    let svg = match svg.find("<svg") {
        Some(start) => &svg[start..],
        None => svg,
    };
    let fixed = format!("width=\"{WIDTH}\" height=\"{HEIGHT}\"");
    svg.replacen(
        &fixed,
        "width=\"100%\" preserveAspectRatio=\"xMidYMid meet\"",
        1,
    )
}

pub fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    escape_into(text, &mut escaped);
    escaped
}

/// `text` escaped for HTML, appended to `out`: one pass, no copy of the text.
fn escape_into(text: &str, out: &mut String) {
    let mut rest = text;
    while let Some(at) = rest.find(['&', '<', '>', '"']) {
        out.push_str(&rest[..at]);
        out.push_str(match rest.as_bytes()[at] {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            _ => "&quot;",
        });
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::study::analyse;
    use crate::analysis::synthetic::measured_job_times;

    #[test]
    fn warnings_of_one_series_and_kind_share_a_line() {
        let mut series = measured_job_times(&[10.0, 10.0, 10.5], None);
        series.name = "RAC52".to_string();
        let mut analysis = analyse(vec![series]);
        analysis.warnings = [
            "RAC52: 2 workers: interference not judged: 0.09 s is too short",
            "RAC52: 3 workers: interference not judged: 0.10 s is too short",
            "RAC52: 4 workers at 1 K/s: interference not judged: 0.11 s is too short",
            "RAC52: the run was interrupted: only 3 levels were measured",
            "the series measure different things",
        ]
        .map(String::from)
        .to_vec();
        let groups = warning_groups(&analysis);
        let headings: Vec<&str> = groups.iter().map(|(heading, _)| heading.as_str()).collect();
        assert_eq!(
            headings,
            [
                "RAC52: interference not judged",
                "RAC52: the run was interrupted",
                "the series measure different things"
            ]
        );
        assert_eq!(groups[0].1.len(), 3);
        let page = render(&analysis).unwrap();
        assert!(page.contains("<summary>RAC52: interference not judged (3 warnings)</summary>"));
    }
}
