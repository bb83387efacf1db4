//! `report --html`: one self-contained page — inline SVG figures, tables, findings — with no
//! script, font or stylesheet fetched from anywhere.

use anyhow::Result;

use super::charts::{figures, render_svg};
use super::tables::{Table, comparison_table, fits_table, levels_table, series_table};
use crate::analysis::study::Analysis;

const STYLE: &str = "body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}\
table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;\
text-align:right}td:first-child,th:first-child{text-align:left}th{background:#f3f3f3}\
figure{margin:1em 0}figcaption{color:#555;font-size:0.9em}.warn{color:#a33}";

pub fn render(analysis: &Analysis) -> Result<String> {
    let mut body = String::from("<h1>corescale report</h1>\n");
    body.push_str(&format!(
        "<p>Series: {}.</p>\n",
        analysis
            .series
            .iter()
            .map(|series| format!(
                "{} (<code>{}</code>)",
                escape(series.name()),
                escape(&series.series.source)
            ))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    body.push_str(&list("Findings", &analysis.findings, ""));
    body.push_str(&list("Warnings", &analysis.warnings, " class=\"warn\""));
    for figure in figures(analysis) {
        let svg = render_svg(&figure)?;
        body.push_str(&format!(
            "<figure id=\"{}\">{}<figcaption>{}. Dashed verticals mark each series' physical-core (P) and logical-CPU (L) counts.</figcaption></figure>\n",
            figure.slug,
            strip_xml_declaration(&svg),
            escape(&figure.title)
        ));
    }
    body.push_str(&html_table(&series_table(analysis)));
    for comparison in &analysis.comparisons {
        body.push_str(&html_table(&comparison_table(comparison)));
    }
    body.push_str(&html_table(&fits_table(analysis)));
    for series in &analysis.series {
        body.push_str(&format!(
            "<details><summary>{}</summary>{}</details>\n",
            escape(&format!("{}: every level", series.name())),
            html_table(&levels_table(series))
        ));
    }
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>corescale report</title><style>{STYLE}</style></head>\n<body>\n{body}</body></html>\n"
    ))
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
        "<h2>{}</h2><table>{}{rows}</table>\n",
        escape(&table.title),
        row("th", &table.headers)
    )
}

fn strip_xml_declaration(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(start) => &svg[start..],
        None => svg,
    }
}

pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
