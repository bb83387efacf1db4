//! A level's figures once its workers have ended: the workload's own, its intervals and their
//! server rates, its response times, and the verdict on the other load beside it.

use anyhow::Result;

use super::server_sampler::{ServerReading, add_server_rates};
use super::settings::LevelSettings;
use crate::host::cpu_limit::{self, ThrottleCounts};
use crate::host::interference::{Interference, LevelLoad, judge};
use crate::host::sysfs::FsRoot;
use crate::latency::{Latency, SessionLatency, timeline_warnings};
use crate::result::{Level, RunMode};
use crate::workload::{LevelTotals, Workload};

/// Shortest level whose interference is judged: 100 CPU ticks on two CPUs.
const JUDGED_FROM_S: f64 = 0.5;

/// A measured level's figures beyond its samples: the workload's own, its intervals and
/// their server rates, its response times, and whether other load disturbed it; with
/// `settings.interval_histograms` (`--interval` given), each interval's responses too.
pub(super) fn finish_level(
    level: &mut Level,
    workload: &dyn Workload,
    latency: Option<SessionLatency>,
    server_windows: &[Vec<Option<ServerReading>>],
    load: Option<OtherLoad>,
    settings: &LevelSettings,
) -> Result<()> {
    let mode = settings.mode();
    let figures = workload.level_figures(&totals(level))?;
    level.workload_figures = figures
        .recorded
        .into_iter()
        .map(|(name, value)| (name.into_owned(), value))
        .collect();
    level.warnings = figures.warnings;
    level.workload_rate = figures.rate_of_merit;
    level.server_cpu_s = figures.server_cpu_s;
    level.connections = figures.connections;
    level.instances = figures.instances;
    level.classes = figures.classes;
    level.intervals = latency
        .as_ref()
        .and_then(|sessions| sessions.intervals.as_ref())
        .map(|intervals| intervals.figures(level.batches, settings.interval_histograms))
        .unwrap_or_default();
    add_server_rates(&mut level.intervals, server_windows);
    // The intervals count responses (statements), not the workload's unit of merit.
    if let Some(sessions) = &latency {
        level.warnings.extend(timeline_warnings(
            &level.intervals,
            &format!("{}s", sessions.unit),
        ));
    }
    level.latency = match latency {
        Some(sessions) => sessions.figures(level.elapsed_s),
        // Fixed work without sessions' own records: each job is one response.
        None if mode == RunMode::FixedWork => Latency::of_jobs(
            &level
                .samples
                .iter()
                .map(|sample| sample.wall_s)
                .collect::<Vec<_>>(),
        ),
        None => None,
    };
    // Classes timed as the level's responses are (order entry's) say from where.
    let level_from = level.latency.as_ref().map(|latency| latency.measured_from);
    for class in &mut level.classes {
        class.measured_from = class.measured_from.or(level_from);
    }
    if let Some(shortfall) = level.latency.as_ref().and_then(Latency::shortfall) {
        level.warnings.push(shortfall);
    }
    // /proc/stat counts in 10 ms ticks: a shorter level holds too few to judge.
    if level.elapsed_s >= JUDGED_FROM_S {
        level.interference =
            load.map(|load| interference(level, &load, workload, settings.cpu_bound));
    } else if load.is_some() {
        level.warnings.push(format!(
            "interference not judged: {:.3} s is too short for 10 ms CPU ticks (it needs at least {JUDGED_FROM_S} s: a larger --job-size or --repeat)",
            level.elapsed_s
        ));
    }
    Ok(())
}

/// What other processes did while a level ran.
pub(super) struct OtherLoad {
    /// CPUs' worth of their busy time.
    pub(super) busy_cpus: f64,
    /// The host's CPU count, from /proc/stat.
    pub(super) host_cpus: usize,
    /// Their runnable tasks, mean over the level.
    pub(super) runnable: Option<f64>,
    /// What the cgroup's CPU quota throttled over the level, where one applies.
    pub(super) throttle: Option<ThrottleCounts>,
    /// A campaign's other parts on this host: how many, and their CPUs' worth of busy time.
    pub(super) other_parts: Option<(usize, f64)>,
}

/// The level's verdict. A local database server's CPU time is part of the workload, not
/// interference: it is taken out of the other processes' share.
fn interference(
    level: &Level,
    load: &OtherLoad,
    workload: &dyn Workload,
    cpu_bound: bool,
) -> Interference {
    // Only a server on this host spends this host's CPUs.
    let server_cpus = level
        .server_cpu_s
        .filter(|_| {
            workload
                .server()
                .is_some_and(|server| server.local_server())
        })
        .map_or(0.0, |seconds| seconds / level.elapsed_s.max(1e-9));
    let allowed_cpus = cpu_limit::affinity_cpus().unwrap_or(0);
    // A campaign's other parts here: their CPU time, and as many runnable tasks on average
    // as the CPUs they kept busy, plus a local server's thread for each of their sessions
    // (as for this part's own: each part runs as many sessions as this one).
    let parts_cpus = load.other_parts.map_or(0.0, |(_, cpus)| cpus);
    let parts_server_threads = match load.other_parts {
        Some((parts, _))
            if workload
                .server()
                .is_some_and(|server| server.local_server()) =>
        {
            (parts * level.workers) as f64
        }
        _ => 0.0,
    };
    let mut verdict = judge(LevelLoad {
        workers: level.workers,
        pinned: level.placement.iter().any(Option::is_some),
        other_busy_cpus: (load.busy_cpus - server_cpus - parts_cpus).max(0.0),
        // A local server's threads run for the workers: one each is part of the load.
        other_runnable: load.runnable.map(|runnable| {
            let own = if workload
                .server()
                .is_some_and(|server| server.local_server())
            {
                level.workers as f64
            } else {
                0.0
            };
            (runnable - own - parts_cpus - parts_server_threads).max(0.0)
        }),
        steal_pct: level.os.steal_pct,
        // Workers that wait need no CPU each: where they ran says nothing then.
        cpus_seen: if cpu_bound {
            level
                .samples
                .iter()
                .filter_map(|sample| sample.cpu)
                .collect()
        } else {
            Default::default()
        },
        allowed_cpus,
        logical_cpus: load.host_cpus,
        throttle: load
            .throttle
            // A period in a hundred is noise; more held the workers back.
            .filter(|counts| counts.throttled_periods * 100 > counts.periods.max(1))
            .map(|counts| {
                let limit = cpu_limit::read(&FsRoot::new("/"), load.host_cpus)
                    .map_or("the cgroup's CPU quota".to_string(), |limit| {
                        limit.describe()
                    });
                (counts, limit)
            }),
    });
    verdict.campaign_parts_here = load.other_parts.map(|(parts, _)| parts);
    verdict.campaign_parts_cpus = load.other_parts.map(|(_, cpus)| cpus);
    verdict
}

fn totals(level: &Level) -> LevelTotals {
    LevelTotals {
        workers: level.workers,
        elapsed_s: level.elapsed_s,
        cpu_s: level.samples.iter().map(|sample| sample.cpu_s).sum(),
        ops: level.samples.iter().map(|sample| sample.ops).sum(),
    }
}
