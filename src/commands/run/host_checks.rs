//! What a run checks on the host before its first level: that it is idle enough (a quick look
//! while the run gets ready, or a whole second), which CPUs the plan brackets, and that the
//! workers' memory and pinning fit what this process may use.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use nix::sched::sched_getaffinity;
use nix::unistd::Pid;

use crate::cli::SweepArgs;
use crate::error::UsageError;
use crate::format::workers_text;
use crate::host::memory_limit;
use crate::host::pinning::{self, Pin};
use crate::host::preflight::{HostLoad, Look};
use crate::host::sysfs::FsRoot;
use crate::host::{HostInfo, Topology};
use crate::sweep::plan::LoadLevels;
use crate::sweep::progress::Notes;
use crate::sweep::stop;
use crate::workload::WorkloadInfo;

/// How long the host is watched before the first level when the run asks for an idle host
/// (`--wait-idle`, `--require-idle`), or beside it when the quick look saw other work: a
/// verdict of "busy" always rests on a second...
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

/// Whether the run asks for an idle host (`--wait-idle`, `--require-idle`): then the host is
/// watched for a whole second before anything starts.
pub(super) fn asks_idle(args: &SweepArgs) -> bool {
    args.require_idle || args.wait_idle.is_some()
}

/// The quick look ends once the first level's sessions are ready: a host within the limits
/// lets them go. A busy one lets them go too (a level's own verdict judges its window), and
/// is watched for a whole second beside the first level by a thread of its own
/// ([`ConfirmingLook`]): a verdict of "busy" rests on a second, but the first statement does
/// not wait for it.
pub(super) fn look_ended(look: Look, servers: Vec<u32>, notes: Notes) -> ConfirmingLook {
    let root = FsRoot::new("/");
    let enough = Arc::new(AtomicBool::new(false));
    if let Some(load) = look.end(&root, QUICK_LOOK.min(preflight_window()), &servers, &[])
        && load.is_idle()
    {
        return ConfirmingLook {
            watching: None,
            enough,
        };
    }
    let stop = Arc::clone(&enough);
    let said = notes.clone();
    let watching = std::thread::Builder::new()
        .name("corescale-look".into())
        .spawn(move || {
            let window = preflight_window();
            let began = Instant::now();
            let load = Look::watch_until(&FsRoot::new("/"), window, &servers, &stop);
            // A look the run's end cut short says nothing: the levels' verdicts have.
            if let Some(load) = load.filter(|load| !load.is_idle())
                && began.elapsed() >= window
            {
                said.note(&busy_warning(&load));
            }
        });
    if let Err(error) = &watching {
        notes.note(&format!(
            "corescale: note: the host looked busy, and a second look could not start ({error}): each level's verdict still judges it"
        ));
    }
    ConfirmingLook {
        watching: watching.ok(),
        enough,
    }
}

/// The second look at a host the quick look found busy, taken while the first level runs; it
/// says what the host was doing when it also finds it busy. Dropped at the run's end, on
/// every path: the look is cut short (a run shorter than its second does not wait for it)
/// and its thread joined, so nothing is said after the run has ended.
pub(super) struct ConfirmingLook {
    watching: Option<std::thread::JoinHandle<()>>,
    enough: Arc<AtomicBool>,
}

impl Drop for ConfirmingLook {
    fn drop(&mut self) {
        self.enough.store(true, Ordering::Relaxed);
        if let Some(watching) = self.watching.take() {
            let _ = watching.join();
        }
    }
}

/// What a run says of a host a whole second's look found busy, before or beside its first
/// level.
fn busy_warning(load: &HostLoad) -> String {
    format!(
        "corescale: warning: {}; levels it disturbs will be marked",
        load.describe()
    )
}

/// Watches the host for a second before measuring: says when it is not idle, waits for it
/// with `--wait-idle`, refuses with `--require-idle`. A local database server's processes
/// (`servers`) work for the run, as in a level's verdict.
pub(super) fn preflight(args: &SweepArgs, servers: &[u32]) -> Result<()> {
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
        say!("{}", busy_warning(&load));
        return Ok(());
    }
}

/// The topology the automatic plan brackets: the host's, or within a container or capped VM
/// the CPUs it is given (a quota of 0.5 CPU is swept at 1 and 2 workers, not around the
/// host's 64), said in a note.
pub(super) fn planning_topology(host: &HostInfo, levels: &LoadLevels) -> Topology {
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

/// Refuses allocations that would push the host into swap or the OOM killer, or past the
/// process's own limits (a container's memory cgroup, `ulimit -v`), where an allocation
/// would abort the run. `--force` skips the safety margin, never a hard limit.
pub(super) fn check_memory(
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
pub(super) fn check_pinning(topology: &Topology, pin: Pin, workers: usize) -> Result<()> {
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
