//! `corescale run`: plan the levels, measure each, summarise, write the files after every
//! level, and show the summary table.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chrono::Utc;
use nix::sched::sched_getaffinity;
use nix::unistd::Pid;

use crate::cli::{RunArgs, SweepArgs};
use crate::error::UsageError;
use crate::format::workers_text;
use crate::host::counters::CounterStatus;
use crate::host::memory_limit;
use crate::host::pinning::{self, Pin};
use crate::host::preflight::Look;
use crate::host::sysfs::FsRoot;
use crate::host::{HostInfo, Topology};
use crate::report::run_table;
use crate::result::writer::{Output, OutputLocks, write_all, write_stdout};
use crate::result::{RunDocument, RunSettings, SCHEMA, Tool};
use crate::sweep::campaign::Campaign;
use crate::sweep::levels::{SweepObserver, run_sweep};
use crate::sweep::plan::{LoadLevels, SweepSpec, plan};
use crate::sweep::progress::Progress;
use crate::sweep::runner::{LevelSettings, SessionsReady};
use crate::sweep::steps::level_steps;
use crate::sweep::stop;
use crate::workload::{BuildContext, Workload, WorkloadInfo};

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

/// How long the host is watched before the first level when the run asks for an idle host
/// (`--wait-idle`, `--require-idle`), or when the quick look saw other work: a verdict of
/// "busy" always rests on a second...
const PREFLIGHT: Duration = Duration::from_secs(1);

/// ...and the least a quick look lasts, from the run's start to its first level's sessions
/// being ready (at 100 ticks a second, 30 on 2 CPUs): a short run need not wait a second
/// before its first statement.
const QUICK_LOOK: Duration = Duration::from_millis(150);

/// ...unless the test helpers shorten it (`CORESCALE_TEST_PREFLIGHT`, from 100 ms up to the
/// default): a suite of a hundred runs need not wait a hundred seconds.
fn preflight_window() -> Duration {
    crate::values::test_setting("CORESCALE_TEST_PREFLIGHT", Duration::from_millis(100))
        .unwrap_or(PREFLIGHT)
        .min(PREFLIGHT)
}

pub fn execute(run: &RunArgs, command_line: Vec<String>) -> Result<RunEnd> {
    let args = &run.sweep;
    args.check()?;
    // Taken while the run gets ready, ended once the first level's sessions are.
    let quick_look = (!asks_idle(args))
        .then(|| Look::begin(&FsRoot::new("/")))
        .flatten();
    let host = HostInfo::read(&FsRoot::new("/"), args.label.clone())?;
    let levels = load_levels(args, &host.topology);
    // Only the automatic plan brackets the CPUs given; a list is checked against the host's.
    let plan = match levels {
        LoadLevels::Auto => plan(&levels, &planning_topology(&host, &levels), args.force)?,
        _ => plan(&levels, &host.topology, args.force)?,
    };
    let outputs = args
        .outputs
        .iter()
        .map(|path| Output::parse(path))
        .collect::<Result<Vec<_>, _>>()?;
    let _locks = OutputLocks::acquire(&outputs)?;
    let largest = plan.iter().copied().max().unwrap_or(1);
    let context = BuildContext {
        job_size: args.job_size,
        duration: args.duration,
        max_workers: largest,
        topology: &host.topology,
    };
    let workload_args = run.workload()?;
    let options = workload_args.options();
    let mut workload = options.build(&context).map_err(|error| {
        // A workload that only checks its settings fails on a bad one: a usage error. One
        // that connects somewhere marks its usage errors itself; the rest are runtime failures.
        if options.connects() || error.is::<UsageError>() {
            error
        } else {
            // The whole chain, "A: B: C", not only its outermost message.
            UsageError::new(format!("{error:#}")).into()
        }
    })?;
    check_memory(&workload.info(), largest, &host, args.force)?;
    check_pinning(&host.topology, args.pin, largest)?;
    // Before setup, which may write a data file that a signal must not leave behind.
    stop::install_handler();
    workload.setup().context("building the workload's data")?;
    let quick_look = quick_look.filter(|_| !workload.settles_first());
    if quick_look.is_none() {
        preflight(args, &workload.server_processes())?;
    }

    let mut settings = level_settings(args);
    // Rate workloads run fixed-time jobs unless a job size asks for fixed work.
    if args.job_size.is_none() {
        settings.duration = settings.duration.or(workload.default_duration());
    }
    let rates = workload.offered_rates();
    let mut steps = level_steps(&plan, &rates);
    // A campaign's part runs its share of every level, at the agreed times.
    let level_length = settings
        .duration
        .filter(|_| settings.precision.is_none())
        .map(|duration| settings.warmup.unwrap_or_default() + duration * settings.repeat);
    let campaign = Campaign::of(&args.campaign, settings.duration.is_some(), level_length)?;
    if let Some(campaign) = &campaign {
        steps = campaign.part_steps(&steps)?;
    }
    let mut document = new_document(args, &settings, command_line, host, workload.info(), &plan);
    document.settings.rates = rates;
    document.campaign = campaign.as_ref().map(|campaign| campaign.record.clone());
    let mut progress = Progress::new(
        steps.len() as u64 * u64::from(settings.repeat),
        args.quiet,
        args.report_interval,
    );
    // The sweep runs the plan and hands each level, in the document, to the observer, which
    // writes every output after every level.
    let mut writer = WriteEachLevel { outputs: &outputs };
    let workload: &dyn Workload = workload.as_ref();
    let sessions_ready = quick_look.map(|look| -> SessionsReady<'_> {
        Box::new(move || look_ended(look, args, &workload.server_processes()))
    });
    if let Err(error) = run_sweep(
        workload,
        &steps,
        &settings,
        campaign.as_ref(),
        args.pin,
        &progress,
        &mut document,
        &mut writer,
        sessions_ready,
    ) {
        // Keep every level measured so far; the document says why the run ended.
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
    write_all(&outputs, &document)?;
    progress.finish();
    write_stdout(&outputs, &document)?;
    if !args.quiet {
        let table = run_table::pgbench_summary(&document).unwrap_or_default()
            + &run_table::render(&document, args.wide);
        // With the document on standard output, the table goes to standard error.
        if outputs.iter().any(Output::is_stdout) {
            eprint!("{table}");
        } else {
            super::write_out(&table)?;
        }
    }
    if !document.hw_counters.available
        && let Some(reason) = &document.hw_counters.reason
    {
        say!("corescale: note: hardware counters unavailable: {reason}");
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
    let flagged = document.levels.iter().any(|level| {
        level.precision_reached == Some(false) || level.is_disturbed() || level.fell_behind()
    });
    Ok(match stop::stopped_by() {
        Some((_, code)) => RunEnd::Stopped(code),
        None if args.strict && flagged => RunEnd::Flagged,
        None => RunEnd::Complete,
    })
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

/// Whether the run asks for an idle host (`--wait-idle`, `--require-idle`): then the host is
/// watched for a whole second before anything starts.
fn asks_idle(args: &SweepArgs) -> bool {
    args.require_idle || args.wait_idle.is_some()
}

/// The quick look ends once the first level's sessions are ready: a host within the limits
/// lets them go; otherwise it is watched for a whole second while they wait (a level's own
/// verdict judges its window whatever the look saw).
fn look_ended(look: Look, args: &SweepArgs, servers: &[u32]) -> Result<()> {
    let root = FsRoot::new("/");
    if let Some(load) = look.end(&root, QUICK_LOOK.min(preflight_window()), servers, &[])
        && load.is_idle()
    {
        return Ok(());
    }
    preflight(args, servers)
}

/// Watches the host for a second before measuring: says when it is not idle, waits for it
/// with `--wait-idle`, refuses with `--require-idle`. A local database server's processes
/// (`servers`) work for the run, as in a level's verdict.
fn preflight(args: &SweepArgs, servers: &[u32]) -> Result<()> {
    let root = FsRoot::new("/");
    let deadline = Instant::now() + args.wait_idle.unwrap_or_default();
    loop {
        let Some(load) = Look::watch(&root, preflight_window(), servers) else {
            return Ok(());
        };
        if load.is_idle() {
            return Ok(());
        }
        if Instant::now() < deadline && !stop::stop_requested() {
            continue;
        }
        if args.require_idle {
            anyhow::bail!("{} (--require-idle)", load.describe());
        }
        say!(
            "corescale: warning: {}; levels it disturbs will be marked",
            load.describe()
        );
        return Ok(());
    }
}

/// The topology the automatic plan brackets: the host's, or within a container or capped VM
/// the CPUs it is given (a quota of 0.5 CPU is swept at 1 and 2 workers, not around the
/// host's 64), said in a note.
fn planning_topology(host: &HostInfo, levels: &LoadLevels) -> Topology {
    let mut topology = host.topology.clone();
    if let Some(limit) = &host.cpu_limit
        && limit.limits(topology.logical_cpus)
    {
        let effective = limit.effective_cpus.max(1);
        if matches!(levels, LoadLevels::Auto) {
            say!(
                "corescale: note: the sweep is planned around {effective} CPU{} ({}), not the host's {} logical CPUs",
                if effective == 1 { "" } else { "s" },
                limit.describe(),
                topology.logical_cpus
            );
        }
        topology.physical_cores = topology.physical_cores.min(effective);
        topology.logical_cpus = effective.max(topology.physical_cores);
    }
    topology
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

fn level_settings(args: &SweepArgs) -> LevelSettings {
    LevelSettings {
        repeat: args.repeat,
        precision: args.precision,
        max_repeat: args.max_repeat.max(args.repeat),
        duration: args.duration,
        warmup: args.warmup,
        interval: args.interval,
        start_at: None,
        sessions: None,
        campaign: None,
    }
}

fn new_document(
    args: &SweepArgs,
    settings: &LevelSettings,
    command_line: Vec<String>,
    host: HostInfo,
    workload: WorkloadInfo,
    plan: &[usize],
) -> RunDocument {
    let now = Utc::now();
    RunDocument {
        schema: SCHEMA.to_string(),
        tool: Tool {
            name: "corescale".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        },
        command_line,
        tags: args.tags.iter().cloned().collect(),
        complete: false,
        stop_reason: None,
        started_at: now,
        updated_at: now,
        host,
        workload,
        campaign: None,
        settings: RunSettings {
            mode: settings.mode(),
            plan: plan.to_vec(),
            rates: Vec::new(),
            repeat: settings.repeat,
            precision_target_pct: settings.precision.map(|fraction| fraction * 100.0),
            max_repeat: settings.max_repeat,
            duration_s: settings.duration.map(|duration| duration.as_secs_f64()),
            warmup_s: settings.warmup.map(|warmup| warmup.as_secs_f64()),
            pin: args.pin,
        },
        hw_counters: CounterStatus {
            available: false,
            reason: Some("no level measured yet".to_string()),
        },
        levels: Vec::new(),
    }
}

/// Refuses allocations that would push the host into swap or the OOM killer, or past the
/// process's own limits (a container's memory cgroup, `ulimit -v`), where an allocation
/// would abort the run. `--force` skips the safety margin, never a hard limit.
fn check_memory(
    workload: &WorkloadInfo,
    workers: usize,
    host: &HostInfo,
    force: bool,
) -> Result<(), UsageError> {
    let Some(memory) = &host.memory else {
        return Ok(());
    };
    let needed = workload
        .bytes_per_worker
        .saturating_mul(workers as u64)
        .saturating_add(workload.shared_bytes);
    let root = FsRoot::new("/");
    let process_limit = [
        memory_limit::cgroup_headroom(&root),
        memory_limit::address_space_headroom(&root),
    ]
    .into_iter()
    .flatten()
    .min_by_key(|limit| limit.bytes);
    let (usable, margin, source) = if force {
        match process_limit {
            Some(limit) => (limit.bytes, 0, limit.source),
            None => return Ok(()),
        }
    } else {
        let limit = memory_limit::allocatable(&root, memory.available_bytes);
        let margin = (memory.total_bytes / 10).max(512 << 20);
        (limit.bytes.saturating_sub(margin), margin, limit.source)
    };
    if needed > usable {
        let shared = if workload.shared_bytes > 0 {
            format!(" + {} shared", gib(workload.shared_bytes))
        } else {
            String::new()
        };
        let hint = if force {
            "use a smaller --array-size or --scale, or fewer workers"
        } else {
            "use a smaller --array-size or --scale, fewer workers, or --force"
        };
        return Err(UsageError::new(format!(
            "{} x {}{shared} = {} needed, but {source} leaves only {} after a {} safety margin: {hint}",
            workers_text(workers),
            gib(workload.bytes_per_worker),
            gib(needed),
            gib(usable),
            gib(margin)
        )));
    }
    Ok(())
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// Refuses a pinning plan that names CPUs this process may not use (taskset, cgroups).
fn check_pinning(topology: &Topology, pin: Pin, workers: usize) -> Result<()> {
    if pin == Pin::None {
        return Ok(());
    }
    let allowed =
        sched_getaffinity(Pid::from_raw(0)).context("reading this process's CPU affinity")?;
    for cpu in pinning::placement(topology, pin, workers)
        .into_iter()
        .flatten()
    {
        if !allowed.is_set(cpu).unwrap_or(false) {
            return Err(UsageError::new(format!(
                "--pin {} needs CPU {cpu}, which this process may not use (taskset or cgroup limits): use --pin none",
                format!("{pin:?}").to_lowercase(),
            ))
            .into());
        }
    }
    Ok(())
}
