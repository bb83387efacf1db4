//! What closes a run and what it shows outside: the summary table and the notes on where
//! its results went, and the figures exported to Prometheus while it runs.

use anyhow::Result;

use crate::cli::SweepArgs;
use crate::report::run_table;
use crate::result::RunDocument;
use crate::result::writer::{Format, Output};
use crate::sweep::export::{LevelPusher, MetricsEndpoint};
use crate::sweep::progress::Progress;
use crate::workload::LevelSessions;

/// The summary table and the notes that close a run: where its results went, or that they
/// were not saved.
pub(super) fn show_summary(
    args: &SweepArgs,
    outputs: &[Output],
    document: &RunDocument,
) -> Result<()> {
    if !args.quiet {
        let table = run_table::pgbench_summary(document, args.wide).unwrap_or_default()
            + &run_table::render(document, args.wide);
        // With the document on standard output, the table goes to standard error.
        if outputs.iter().any(Output::is_stdout) {
            eprint!("{table}");
        } else {
            crate::commands::write_out(&table)?;
        }
    }
    if !document.hw_counters.available
        && let Some(reason) = &document.hw_counters.reason
    {
        say!("corescale: note: hardware counters unavailable: {reason}");
    }
    let no_responses = (document.levels.iter()).all(|level| {
        (level.latency.as_ref())
            .and_then(|latency| latency.histogram.as_ref())
            .is_none()
    });
    if let Some(log) = outputs.iter().find(|output| output.format == Format::Hlog)
        && no_responses
    {
        say!(
            "corescale: warning: {} holds no interval line: this workload's levels keep no histogram of response times (db, script and lio runs do)",
            log.path.display()
        );
    }
    let no_classes = (document.levels.iter()).all(|level| level.classes.is_empty());
    if let Some(log) = outputs
        .iter()
        .find(|output| output.format == Format::ClassesHlog)
        && no_classes
    {
        say!(
            "corescale: warning: {} holds no interval line: this workload's levels keep no response times per statement class (script, replay and tpcc runs do)",
            log.path.display()
        );
    }
    if outputs.is_empty() {
        say!(
            "corescale: note: the results were not saved: add -o FILE.json (and -o FILE.csv) to keep them"
        );
    } else if !args.quiet {
        let names: Vec<String> = outputs
            .iter()
            .map(|output| {
                if output.is_stdout() {
                    "standard output".to_string()
                } else {
                    output.path.display().to_string()
                }
            })
            .collect();
        eprintln!("corescale: results written to {}", names.join(" and "));
    }
    Ok(())
}

/// Said as a run starts: with `--interval`, a level of several batches (`--repeat`,
/// `--precision`) adds its batches' intervals together, so its .hlog line is the level's.
/// A workload that sets its own sessions (a replay) runs one pass a level.
pub(super) fn note_hlog_lines(args: &SweepArgs, outputs: &[Output], sessions: &LevelSessions) {
    let batches = args.repeat() > 1 || args.precision.is_some();
    if args.interval.is_some()
        && batches
        && *sessions == LevelSessions::Given
        && let Some(log) = outputs.iter().find(|output| output.format == Format::Hlog)
    {
        say!(
            "corescale: note: each level's batches add their intervals together, so {} has a line per level, not per interval: give --repeat 1 for a line per interval",
            log.path.display()
        );
    }
}

/// `--metrics-listen` and `--push-gateway`: the run's figures where Prometheus reads them.
pub(super) fn export_metrics(
    args: &SweepArgs,
    document: &RunDocument,
    progress: &mut Progress,
) -> Result<()> {
    if let Some(address) = args.metrics_listen {
        let endpoint = MetricsEndpoint::start(address, exported_labels(document))?;
        say!("corescale: metrics at http://{}/metrics", endpoint.address);
        progress.export_to(endpoint);
    }
    if let Some(url) = &args.push_gateway {
        let mut group = exported_labels(document);
        group.retain(|(key, _)| matches!(key.as_str(), "host" | "part"));
        let notes = progress.notes();
        progress.push_with(LevelPusher::new(url, &group, move |warning| {
            notes.note(warning);
        }));
    }
    Ok(())
}

/// The labels of `corescale_run_info`: the workload, its unit, the host's label and the
/// campaign part; bounded, and never a target, a statement or a tag's value.
fn exported_labels(document: &RunDocument) -> Vec<(String, String)> {
    let mut labels = vec![
        (
            "workload".to_string(),
            document.workload.kind.name().to_string(),
        ),
        ("unit".to_string(), document.workload.unit.clone()),
        ("host".to_string(), document.host.label.clone()),
    ];
    if let Some(campaign) = &document.campaign {
        labels.push(("part".to_string(), campaign.part.to_string()));
    }
    labels
}
