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
use crate::sweep::search_probe::{DEFAULT_MOST_SESSIONS, Pace, SearchRun};
use crate::workload::{LevelLength, LevelSessions, Workload};

/// What a search runs on: the workload's rate unit, and a capacity measured on a session per
/// logical CPU of this host, within the ceiling. A replay's search is in speeds, on the
/// capture's own sessions, each probe one pass: a capture too short for the percentile
/// asked is refused.
pub(super) fn search_run<'a>(
    workload: &'a dyn Workload,
    (search, ceiling): &'a (SearchSettings, usize),
    settings: &'a LevelSettings,
    (pin, logical_cpus): (crate::host::pinning::Pin, usize),
    progress: &'a Progress,
) -> Result<SearchRun<'a>> {
    let plan = workload.plan();
    let info = workload.info();
    let pace = match (plan.sessions, plan.length) {
        (LevelSessions::Own(sessions), LevelLength::Pass { rate_1x, .. }) => {
            Some(Pace { sessions, rate_1x })
        }
        _ => None,
    };
    let unit = match pace {
        Some(_) => REPLAY_UNIT.to_string(),
        // The rate's unit, which --rate counts in: transactions, statements.
        None => format!("{}/s", info.job_size_unit),
    };
    if pace.is_some() {
        check_capture_long_enough(&search.objectives, info.job_size)?;
    }
    Ok(SearchRun {
        workload,
        settings,
        search: SearchSettings {
            unit,
            ..search.clone()
        },
        most_sessions: *ceiling,
        capacity_sessions: (*ceiling).min(logical_cpus.max(1)),
        pin,
        progress,
        pace,
    })
}

/// A replay's rates: speeds, as `--speed` gives them.
const REPLAY_UNIT: &str = "x the captured pace";

/// A replay's probe is one pass of the capture: its statements must be enough to judge each
/// objective's percentile.
fn check_capture_long_enough(
    objectives: &[crate::latency::Objective],
    statements: u64,
) -> Result<(), UsageError> {
    let Some((needed, objective)) = objectives
        .iter()
        .filter(|objective| objective.class.is_none())
        .map(|objective| {
            (
                crate::latency::responses_needed(objective.percentile),
                objective,
            )
        })
        .max_by_key(|(needed, _)| *needed)
    else {
        return Ok(());
    };
    if statements >= needed {
        return Ok(());
    }
    Err(UsageError::new(format!(
        "the capture holds {statements} statements and each probe of --find replays it once: judging '{objective}' needs at least {needed}; capture a longer stretch of the log (or --sessions-factor for more read-only sessions)"
    )))
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
