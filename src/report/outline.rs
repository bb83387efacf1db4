//! The report's outline: its sections in the one order every renderer walks (the page, the
//! Markdown, the terminal), as hyperfine's exporters share one markup. A new section is one
//! entry here; a new format is one renderer of these sections.

use super::cell_table::Table;
use super::search_table::probes_table;
use super::statements_table::statements_table;
use super::tables::{
    cache_table, comparison_table, fits_notes, fits_table, fleet_table, history_levels_table,
    history_table, latency_table, levels_table, open_loop_table, p99_at_loads_table,
    provenance_tables, series_table, slo_table, workload_figures_table,
};
use crate::analysis::model::{Analysis, SeriesAnalysis};

/// Findings the headline repeats, above everything else.
const HEADLINE_FINDINGS: usize = 3;
/// Warnings repeated under the headline, where a reader of the first screen sees them.
pub(crate) const TOP_WARNINGS: usize = 3;

/// One section of a report.
pub(crate) enum Section<'a> {
    /// The one sentence a proposal quotes (`analysis.answer`), before everything.
    Answer(&'a str),
    /// Every warning, the most important first, under the headline: the first
    /// [`TOP_WARNINGS`] said, the rest folded (the page) or counted with a link (Markdown).
    TopWarnings(&'a [String]),
    /// The first findings as one paragraph (the comparisons and the first series' verdict).
    Headline(Vec<&'a str>),
    Findings(&'a [String]),
    /// The figures (`charts::figures`), drawn as each format can.
    Figures,
    /// A table, left out where it has no rows.
    Table(Table, Shown),
    /// What each '-' of the fits table means and why fits are not quoted.
    FitNotes(Vec<String>),
    /// The command line that made each series: (series, command).
    Commands(Vec<(&'a str, &'a str)>),
    /// What the data cannot support.
    Warnings(&'a [String]),
    /// The terms the report uses, each with its meaning.
    Glossary(Vec<(&'static str, &'static str)>),
}

/// What a report shows: the terminal's summary, or every section (the page, the Markdown).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    Summary,
    Everything,
}

/// How much of a report a table belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shown {
    /// Everywhere, the terminal's summary included.
    Summary,
    /// On the page and in the Markdown; the page folds it under its title.
    Detail,
    /// On the page and in the Markdown, open.
    Full,
}

/// The report's opening: the answer, the first findings as a headline, the warnings, and
/// the findings.
fn opening(analysis: &Analysis) -> Vec<Section<'_>> {
    let mut sections = Vec::new();
    let answer = analysis
        .answer
        .as_ref()
        .map(|answer| answer.sentence.as_str());
    if let Some(answer) = answer {
        sections.push(Section::Answer(answer));
    }
    // The answer is the first finding, said above: the headline and the list go on from it.
    let findings = match (answer, analysis.findings.first()) {
        (Some(answer), Some(first)) if first == answer => &analysis.findings[1..],
        _ => &analysis.findings[..],
    };
    if !findings.is_empty() {
        let top = findings.len().min(HEADLINE_FINDINGS);
        sections.push(Section::Headline(
            findings[..top].iter().map(String::as_str).collect(),
        ));
    }
    if !analysis.warnings.is_empty() {
        sections.push(Section::TopWarnings(&analysis.warnings));
    }
    sections.push(Section::Findings(findings));
    sections
}

/// The sections of `analysis`'s report, in order: what it found, the figures, the results
/// (series, comparisons, fits, every level), then where the series came from and what the
/// data cannot support.
pub(crate) fn outline(analysis: &Analysis, reach: Reach) -> Vec<Section<'_>> {
    let mut sections = opening(analysis);
    // The terminal's summary builds only its own tables: not a levels table of 10^5 rows.
    let add = |sections: &mut Vec<Section<'_>>, shown: Shown, build: &dyn Fn() -> Table| {
        if reach == Reach::Everything || shown == Shown::Summary {
            sections.push(Section::Table(build(), shown));
        }
    };
    if let Some(fleet) = &analysis.fleet {
        add(&mut sections, Shown::Summary, &|| fleet_table(fleet));
        for history in &fleet.histories {
            add(&mut sections, Shown::Summary, &|| history_table(history));
            add(&mut sections, Shown::Full, &|| {
                history_levels_table(history)
            });
        }
    }
    sections.push(Section::Figures);
    add(&mut sections, Shown::Summary, &|| series_table(analysis));
    add(&mut sections, Shown::Summary, &|| slo_table(analysis));
    for series in &analysis.series {
        add(&mut sections, Shown::Summary, &|| probes_table(series));
    }
    for comparison in &analysis.statements {
        add(&mut sections, Shown::Summary, &|| {
            statements_table(comparison)
        });
    }
    for comparison in &analysis.comparisons {
        add(&mut sections, Shown::Summary, &|| {
            comparison_table(comparison)
        });
        add(&mut sections, Shown::Summary, &|| {
            p99_at_loads_table(comparison)
        });
    }
    let fits = fits_table(analysis);
    if !fits.rows.is_empty() {
        sections.push(Section::Table(fits, Shown::Summary));
        sections.push(Section::FitNotes(fits_notes(analysis)));
    }
    for series in &analysis.series {
        add(&mut sections, Shown::Detail, &|| levels_table(series));
        add(&mut sections, Shown::Full, &|| cache_table(series));
        // Statements' response times are a summary's; a job's time is in the series table.
        let latency = if series.latency_bend.is_some() || statement_latency(series) {
            Shown::Summary
        } else {
            Shown::Full
        };
        add(&mut sections, latency, &|| latency_table(series));
        add(&mut sections, Shown::Detail, &|| {
            workload_figures_table(series)
        });
        add(&mut sections, Shown::Detail, &|| {
            super::campaign_table::parts_table(&series.series)
        });
        add(&mut sections, Shown::Full, &|| {
            super::instance_table::instances_table(&series.series)
        });
    }
    for open in &analysis.open_loop {
        add(&mut sections, Shown::Summary, &|| open_loop_table(open));
    }
    if reach == Reach::Everything {
        for table in provenance_tables(analysis) {
            sections.push(Section::Table(table, Shown::Full));
        }
    }
    let commands: Vec<(&str, &str)> = analysis
        .series
        .iter()
        .filter_map(|series| {
            let command = series.series.provenance.command_line.as_deref()?;
            Some((series.name(), command))
        })
        .collect();
    if !commands.is_empty() {
        sections.push(Section::Commands(commands));
    }
    sections.push(Section::Warnings(&analysis.warnings));
    sections.push(Section::Glossary(super::glossary::glossary(analysis)));
    sections
}

fn statement_latency(series: &SeriesAnalysis) -> bool {
    series.levels.iter().any(|level| {
        level
            .latency
            .as_ref()
            .is_some_and(|latency| latency.is_statement())
    })
}
