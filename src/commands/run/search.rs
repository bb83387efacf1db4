//! `run --find`'s wiring: its settings from the command line (what a search sets itself is
//! refused), what it runs on, and its answer as the run's last line. The search itself is
//! the sweep's (`sweep::search_probe`).

use anyhow::Result;

use crate::cli::SweepArgs;
use crate::error::UsageError;
use crate::host::Topology;
use crate::result::RunDocument;
use crate::result::writer::Output;
use crate::sweep::plan::OVERSUBSCRIPTION_LIMIT;
use crate::sweep::progress::Progress;
use crate::sweep::runner::LevelSettings;
use crate::sweep::search::SearchSettings;
use crate::sweep::search_probe::{DEFAULT_MOST_SESSIONS, SearchRun};
use crate::workload::Workload;

/// What a search runs on: the workload's rate unit, and a capacity measured on a session per
/// logical CPU of this host, within the ceiling.
pub(super) fn search_run<'a>(
    workload: &'a dyn Workload,
    (search, ceiling): &'a (SearchSettings, usize),
    settings: &'a LevelSettings,
    (pin, logical_cpus): (crate::host::pinning::Pin, usize),
    progress: &'a Progress,
) -> SearchRun<'a> {
    SearchRun {
        workload,
        settings,
        search: SearchSettings {
            // The rate's unit, which --rate counts in: transactions, statements.
            unit: format!("{}/s", workload.info().job_size_unit),
            ..search.clone()
        },
        most_sessions: *ceiling,
        capacity_sessions: (*ceiling).min(logical_cpus.max(1)),
        pin,
        progress,
    }
}

/// `--find`'s settings and the most sessions its probes open (-w, else
/// [`DEFAULT_MOST_SESSIONS`] within the oversubscription limit); None without `--find`.
/// What a search sets itself is refused.
pub(super) fn search_settings(
    args: &SweepArgs,
    find: Option<&crate::latency::FindArgs>,
    topology: &Topology,
) -> Result<Option<(SearchSettings, usize)>, UsageError> {
    let Some(find) = find else {
        return Ok(None);
    };
    let given = [
        (args.sweep.is_some(), "--sweep"),
        (args.full, "--full"),
        (args.precision.is_some(), "--precision"),
        (args.repeat.is_some(), "--repeat"),
        (args.max_repeat.is_some(), "--max-repeat"),
        (args.campaign.campaign.is_some(), "--campaign"),
    ];
    if let Some((_, option)) = given.iter().find(|(given, _)| *given) {
        return Err(UsageError::new(format!(
            "--find chooses its own rates and sessions, one level per probe: leave {option} out (-w caps the sessions)"
        )));
    }
    let ceiling = args.workers.map_or(
        DEFAULT_MOST_SESSIONS.min(OVERSUBSCRIPTION_LIMIT * topology.logical_cpus.max(1)),
        |workers| workers.0,
    );
    let settings = SearchSettings {
        objectives: find.find.clone().map(|found| found.0).unwrap_or_default(),
        precision: find
            .find_precision
            .unwrap_or(crate::latency::FIND_PRECISION),
        max_time: find.max_time.unwrap_or(crate::latency::FIND_MAX_TIME),
        unit: String::new(),
    };
    Ok(Some((settings, ceiling)))
}

/// A search's answer, the run's last line: on standard output, or standard error when the
/// document goes there.
pub(super) fn show_answer(outputs: &[Output], document: &RunDocument) -> Result<()> {
    let Some(search) = &document.search else {
        return Ok(());
    };
    let line = format!("corescale: {}\n", search.answer);
    if outputs.iter().any(Output::is_stdout) {
        eprint!("{line}");
        Ok(())
    } else {
        crate::commands::write_out(&line)
    }
}
