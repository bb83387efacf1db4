//! `report --html`: one self-contained page — inline SVG figures, tables, findings — with no
//! script, font or stylesheet fetched from anywhere.

use anyhow::Result;

use super::charts::{HEIGHT, WIDTH, figures, render_svg};
use super::tables::{
    Table, cache_table, comparison_table, fits_notes, fits_table, fleet_table,
    history_levels_table, history_table, latency_table, levels_table, open_loop_table,
    p99_at_loads_table, provenance_tables, series_table, slo_table, workload_figures_table,
};
use crate::analysis::model::Analysis;

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
background:#f6f8fa;border-left:4px solid #1f77b4;padding:0.6em 1em}code{font-size:0.9em;\
word-break:break-all}h1,h2,h3{break-after:avoid}\
@media (max-width:800px){table{font-size:0.8em}td,th{padding:2px 4px}h2{font-size:1.25em}}\
@page{margin:12mm}\
@media print{body{max-width:none;margin:0;padding:0;font-size:10pt}\
figure{break-inside:avoid}figure svg{max-height:105mm;width:auto;max-width:100%}\
tr{break-inside:avoid}thead{display:table-header-group}.wide{overflow:visible}\
details>*{display:block}details::details-content{content-visibility:visible;display:block}\
summary{list-style:none;break-after:avoid}}";

pub fn render(analysis: &Analysis) -> Result<String> {
    let title = format!("corescale report: {}", analysis.names().join(", "));
    let mut body = format!("<h1>{}</h1>\n", escape(&title));
    if !analysis.findings.is_empty() {
        // The headline: the comparisons and the first series' verdict.
        let headline: Vec<&str> = analysis
            .findings
            .iter()
            .take(SUMMARY_FINDINGS)
            .map(String::as_str)
            .collect();
        body.push_str(&format!(
            "<p class=\"summary\">{}</p>\n",
            escape(&headline.join(" "))
        ));
    }
    body.push_str(&list("Findings", &analysis.findings, ""));
    if let Some(fleet) = &analysis.fleet {
        body.push_str(&html_table(&fleet_table(fleet)));
        for history in &fleet.histories {
            body.push_str(&html_table(&history_table(history)));
            body.push_str(&html_table(&history_levels_table(history)));
        }
    }
    for figure in figures(analysis) {
        let svg = render_svg(&figure)?;
        body.push_str(&format!(
            "<figure id=\"{}\">{}<figcaption>{}</figcaption></figure>\n",
            figure.slug,
            strip_xml_declaration(&svg),
            escape(&figure.caption_sentence())
        ));
    }
    body.push_str(&html_table(&series_table(analysis)));
    let slo = slo_table(analysis);
    if !slo.rows.is_empty() {
        body.push_str(&html_table(&slo));
    }
    for comparison in &analysis.comparisons {
        body.push_str(&html_table(&comparison_table(comparison)));
        let p99 = p99_at_loads_table(comparison);
        if !p99.rows.is_empty() {
            body.push_str(&html_table(&p99));
        }
    }
    let fits = fits_table(analysis);
    if !fits.rows.is_empty() {
        body.push_str(&html_table(&fits));
        let notes: String = fits_notes(analysis)
            .iter()
            .map(|note| format!("<li>{}</li>", escape(note)))
            .collect();
        body.push_str(&format!("<ul class=\"notes\">{notes}</ul>\n"));
    }
    for series in &analysis.series {
        body.push_str(&format!(
            "<details><summary>{}</summary>{}</details>\n",
            escape(&format!("{}: every level", series.name())),
            html_table(&levels_table(series))
        ));
        for table in [cache_table(series), latency_table(series)] {
            if !table.rows.is_empty() {
                body.push_str(&html_table(&table));
            }
        }
        let own = workload_figures_table(series);
        if !own.rows.is_empty() {
            body.push_str(&format!(
                "<details><summary>{} ({} per level)</summary>{}</details>\n",
                escape(&own.title),
                own.rows.len(),
                html_table(&own)
            ));
        }
    }
    for open in &analysis.open_loop {
        body.push_str(&html_table(&open_loop_table(open)));
    }
    // Where the series came from, then what the data cannot support: after the results,
    // the warnings collapsed under their count.
    for table in provenance_tables(analysis) {
        body.push_str(&html_table(&table));
    }
    let commands: String = analysis
        .series
        .iter()
        .filter_map(|series| {
            let command = series.series.provenance.command_line.as_ref()?;
            Some(format!(
                "<p>{}: <code>{}</code></p>",
                escape(series.name()),
                escape(command)
            ))
        })
        .collect();
    if !commands.is_empty() {
        body.push_str(&format!(
            "<details><summary>Command lines</summary>{commands}</details>\n"
        ));
    }
    if !analysis.warnings.is_empty() {
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
        body.push_str(&format!(
            "<h2>Warnings</h2><details><summary>{} warning{}: what these data cannot support</summary><ul class=\"warn\">{entries}</ul></details>\n",
            analysis.warnings.len(),
            if analysis.warnings.len() == 1 { "" } else { "s" }
        ));
    }
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{STYLE}</style></head>\n<body>\n{body}</body></html>\n",
        escape(&title)
    ))
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

/// Findings quoted in the summary paragraph under the title.
const SUMMARY_FINDINGS: usize = 3;

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

fn html_table(table: &Table) -> String {
    if table.rows.is_empty() {
        return String::new();
    }
    let row = |tag: &str, cells: &[String]| -> String {
        let cells: String = cells
            .iter()
            .map(|cell| format!("<{tag}>{}</{tag}>", escape(cell)))
            .collect();
        format!("<tr>{cells}</tr>")
    };
    let rows: String = table.rows.iter().map(|cells| row("td", cells)).collect();
    format!(
        "<h2>{}</h2><div class=\"wide\"><table><thead>{}</thead><tbody>{rows}</tbody></table></div>\n",
        escape(&table.title),
        row("th", &table.headers)
    )
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
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
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
