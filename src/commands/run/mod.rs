//! `corescale run`: plan the levels, measure each, summarise, write the files after every
//! level, and show the summary table.

use anyhow::{Context, Result};

use crate::cli::{RunArgs, SweepArgs};
use crate::host::HostInfo;
use crate::host::Topology;
use crate::host::preflight::Look;
use crate::host::sysfs::FsRoot;
use crate::result::RunDocument;
use crate::result::writer::{Output, OutputLocks, write_all, write_stdout};
use crate::sweep::campaign::Campaign;
use crate::sweep::levels::{SweepObserver, run_sweep};
use crate::sweep::plan::{LoadLevels, SweepSpec, plan};
use crate::sweep::progress::Progress;
use crate::sweep::runner::{LevelSettings, SessionsReady};
use crate::sweep::search_probe::run_search;
use crate::sweep::steps::{LevelStep, level_steps};
use crate::sweep::stop;
use crate::workload::{LevelPlan, LevelSessions, Workload};

mod build;
mod document;
mod host_checks;
mod outputs;
mod search;

use build::build_workload;
use document::{level_settings, new_document};
use host_checks::{
    asks_idle, check_memory, check_pinning, look_ended, planning_topology, preflight,
};
use outputs::{export_metrics, note_hlog_lines, show_summary};
use search::{search_run, search_settings, show_answer};

/// How a run ended, for the exit code.
pub enum RunEnd {
    Complete,
    /// `--strict`, and a level was disturbed, missed its precision target or its rate.
    Flagged,
    /// Stopped by a signal: the exit code it calls for (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
    Stopped(i32),
}

/// Exit code of a `--strict` run with a disturbed level or a missed precision target.
pub const STRICT_EXIT_CODE: i32 = 3;

pub fn execute(run: &RunArgs, command_line: Vec<String>) -> Result<RunEnd> {
    let args = &run.sweep;
    args.check()?;
    // Taken while the run gets ready, ended once the first level's sessions are.
    let quick_look = (!asks_idle(args))
        .then(|| Look::begin(&FsRoot::new("/")))
        .flatten();
    let host = HostInfo::read(&FsRoot::new("/"), args.label.clone())?;
    let outputs = args
        .outputs
        .iter()
        .map(|path| Output::parse(path))
        .collect::<Result<Vec<_>, _>>()?;
    let find = search_settings(args, run.workload()?.options().find(), &host.topology)?;
    let ceiling = find.as_ref().map(|(_, ceiling)| *ceiling);
    let (plan, mut workload, _locks) = plan_and_build(run, &host, &outputs, ceiling)?;
    // What the workload tells the sweep about its levels, read once.
    let level_plan = workload.plan();
    note_hlog_lines(args, &outputs, &level_plan.sessions);
    let largest = plan.iter().copied().max().unwrap_or(1);
    check_memory(&workload.info(), largest, &host, args.force)?;
    check_pinning(&host.topology, args.pin, largest)?;
    // Before setup, which may write a data file that a signal must not leave behind.
    stop::install_handler();
    workload.setup().context("building the workload's data")?;
    let settles_first = workload
        .server()
        .is_some_and(|server| server.settles_first());
    let quick_look = quick_look.filter(|_| !settles_first);
    if quick_look.is_none() {
        preflight(args, &server_processes(workload.as_ref()))?;
    }
    let workload: &dyn Workload = workload.as_ref();
    let (settings, steps, campaign) = plan_steps(args, &level_plan, &plan)?;
    let mut document = new_document(args, &settings, command_line, host, workload.info(), &plan);
    document.settings.rates = level_plan.rates;
    document.campaign = campaign.as_ref().map(|campaign| campaign.record.clone());
    let mut progress = Progress::new(
        steps.len() as u64 * u64::from(settings.repeat),
        args.quiet,
        args.report_interval,
    );
    export_metrics(args, &document, &mut progress)?;
    // The sweep runs the plan and hands each level, in the document, to the observer, which
    // writes every output after every level.
    let mut writer = WriteEachLevel { outputs: &outputs };
    // The second look at a busy host, ended and joined when dropped.
    let confirming = std::cell::RefCell::new(None);
    let notes = progress.notes();
    let sessions_ready = quick_look.map(|look| -> SessionsReady<'_> {
        Box::new(|| {
            *confirming.borrow_mut() = Some(look_ended(look, server_processes(workload), notes));
            Ok(())
        })
    });
    let measured = match &find {
        Some(find) => {
            let logical = document.host.topology.logical_cpus;
            search_run(workload, find, &settings, (args.pin, logical), &progress)
                .and_then(|run| run_search(&run, &mut document, &mut writer, sessions_ready))
        }
        None => run_sweep(
            workload,
            &steps,
            &settings,
            campaign.as_ref(),
            args.pin,
            &progress,
            &mut document,
            &mut writer,
            sessions_ready,
        ),
    };
    if let Err(error) = measured {
        // Keep every level measured so far; the document says why the run ended.
        drop(confirming.take());
        progress.finish();
        write_all(&outputs, &document)?;
        write_stdout(&outputs, &document)?;
        return Err(error);
    }
    // A stop before the plan ran out (or cut the last level short) leaves the run incomplete.
    if let Some((signal, _)) = stop::stopped_by() {
        document.stop_reason = Some(format!("stopped by {signal}"));
    }
    document.complete = document.stop_reason.is_none();
    let checked = if document.complete {
        checked_after_run(workload, &mut document)
    } else {
        Ok(())
    };
    write_all(&outputs, &document)?;
    drop(confirming.take());
    progress.finish();
    write_stdout(&outputs, &document)?;
    show_summary(args, &outputs, &document)?;
    show_answer(&outputs, &document)?;
    checked?;
    let flagged = document.levels.iter().any(|level| {
        level.precision_reached == Some(false) || level.is_disturbed() || level.fell_behind()
    });
    Ok(match stop::stopped_by() {
        Some((_, code)) => RunEnd::Stopped(code),
        None if args.strict && flagged => RunEnd::Flagged,
        None => RunEnd::Complete,
    })
}

/// The worker counts to measure and the workload built for the largest, the outputs locked
/// between: a search's ceiling (`ceiling`), the user's levels, or a workload's own sessions
/// (its plan's), which it built refusing the user's.
fn plan_and_build(
    run: &RunArgs,
    host: &HostInfo,
    outputs: &[Output],
    ceiling: Option<usize>,
) -> Result<(Vec<usize>, Box<dyn Workload>, OutputLocks)> {
    let args = &run.sweep;
    Ok(if let Some(ceiling) = ceiling {
        // A search opens as many sessions as its rate needs, up to the ceiling.
        let plan = plan(&LoadLevels::Single(ceiling), &host.topology, args.force)?;
        let locks = OutputLocks::acquire(outputs)?;
        (plan, build_workload(run, host, ceiling)?, locks)
    } else {
        let levels = load_levels(args, &host.topology);
        // Only the automatic plan brackets the CPUs given; a list is checked against the
        // host's.
        let plan = match levels {
            LoadLevels::Auto => plan(&levels, &planning_topology(host, &levels), args.force)?,
            _ => plan(&levels, &host.topology, args.force)?,
        };
        let locks = OutputLocks::acquire(outputs)?;
        let largest = plan.iter().copied().max().unwrap_or(1);
        let workload = build_workload(run, host, largest)?;
        match workload.plan().sessions {
            // The workload's sessions are its own (a capture's lanes): the one level.
            LevelSessions::Own(sessions) => (vec![sessions], workload, locks),
            LevelSessions::Given => (plan, workload, locks),
        }
    })
}

/// The workload's check of what the run left, said and recorded in the document; a
/// failure is recorded too, and fails the run once every output is written.
fn checked_after_run(workload: &dyn Workload, document: &mut RunDocument) -> Result<()> {
    match workload.check_after_run() {
        Ok(None) => Ok(()),
        Ok(Some(finding)) => {
            say!("corescale: {finding}");
            document.checked_after_run = Some(finding);
            Ok(())
        }
        Err(error) => {
            document.checked_after_run = Some(format!("failed: {error:#}"));
            Err(error.context("checking the database after the run"))
        }
    }
}

/// The levels' settings and the steps the sweep runs: each worker count, at each offered rate,
/// and for a campaign's part its share of each.
fn plan_steps(
    args: &SweepArgs,
    level_plan: &LevelPlan,
    plan: &[usize],
) -> Result<(LevelSettings, Vec<LevelStep>, Option<Campaign>)> {
    let mut settings = level_settings(args);
    settings.length = level_plan.length;
    settings.cpu_bound = level_plan.cpu_bound;
    // Rate workloads run fixed-time jobs unless a job size asks for fixed work.
    if args.job_size.is_none() {
        settings.duration = settings.duration.or(level_plan.default_duration);
    }
    // A workload with its own sessions replays once per level.
    if let LevelSessions::Own(_) = level_plan.sessions {
        settings.repeat = 1;
        settings.max_repeat = 1;
    }
    let mut steps = level_steps(plan, &level_plan.rates);
    // A campaign's part runs its share of every level, at the agreed times.
    let level_length = settings
        .duration
        .filter(|_| settings.precision.is_none())
        .map(|duration| settings.warmup.unwrap_or_default() + duration * settings.repeat);
    let campaign = Campaign::of(&args.campaign, settings.duration.is_some(), level_length)?;
    if let Some(campaign) = &campaign {
        steps = campaign.part_steps(&steps)?;
    }
    Ok((settings, steps, campaign))
}

/// Writes every output after every level, so a run stopped or failed later keeps them.
struct WriteEachLevel<'a> {
    outputs: &'a [Output],
}

impl SweepObserver for WriteEachLevel<'_> {
    fn level_done(&mut self, document: &RunDocument) -> Result<()> {
        write_all(self.outputs, document)
    }
}

fn load_levels(args: &SweepArgs, topology: &Topology) -> LoadLevels {
    let workers = args.workers.map(|workers| workers.0);
    match (&args.sweep, args.full, workers) {
        (Some(SweepSpec::List(list)), _, _) => LoadLevels::List(list.clone()),
        (Some(SweepSpec::Auto), _, _) => LoadLevels::Auto,
        (None, true, top) => LoadLevels::Full(top.unwrap_or(topology.logical_cpus)),
        (None, false, Some(workers)) => LoadLevels::Single(workers),
        (None, false, None) => LoadLevels::Auto,
    }
}

/// The main processes of the servers on this host that work for the workers: not other load.
fn server_processes(workload: &dyn Workload) -> Vec<u32> {
    workload
        .server()
        .map(|server| server.server_processes())
        .unwrap_or_default()
}
