//! The look at the host before a run: how much CPU other processes use, and the busiest of
//! them. A look begins and ends at two moments, so it can span the run's own preparation:
//! corescale's CPU time is never counted, nor a local database server's (its main process
//! and its children serve the run's sessions, as in a level's verdict).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::interference::{
    CpuTicks, OTHER_BUSY_LIMIT, OTHER_RUNNABLE_LIMIT, other_runnable_now, process_stat,
    ticks_per_second,
};
use super::sysfs::FsRoot;

/// The host before a run: other load, and who is causing it.
#[derive(Debug, Clone)]
pub(crate) struct HostLoad {
    pub other_busy_cpus: f64,
    pub other_runnable: Option<f64>,
    /// Busiest other processes: pid, command, CPU %.
    pub top: Vec<(u32, String, f64)>,
}

impl HostLoad {
    pub(crate) fn is_idle(&self) -> bool {
        self.other_busy_cpus <= OTHER_BUSY_LIMIT
            && self
                .other_runnable
                .is_none_or(|runnable| runnable <= OTHER_RUNNABLE_LIMIT)
    }

    /// One line naming the load and its top consumers.
    pub(crate) fn describe(&self) -> String {
        let top: Vec<String> = self
            .top
            .iter()
            .map(|(pid, command, pct)| format!("{command} (pid {pid}) {pct:.0}%"))
            .collect();
        format!(
            "the host is not idle: other processes use {:.2} CPUs{}",
            self.other_busy_cpus,
            if top.is_empty() {
                String::new()
            } else {
                format!("; busiest: {}", top.join(", "))
            }
        )
    }
}

/// One process: its parent, command and CPU ticks.
#[derive(Debug, Clone)]
struct ProcessTicks {
    pid: u32,
    parent: u32,
    command: String,
    ticks: u64,
}

/// CPU ticks of every process, with its parent and command name.
fn process_table(root: &FsRoot) -> Vec<ProcessTicks> {
    let Ok(entries) = std::fs::read_dir(root.path("proc")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = process_stat(&std::fs::read_to_string(entry.path().join("stat")).ok()?)?;
            Some(ProcessTicks {
                pid,
                parent: u32::try_from(stat.ppid).unwrap_or(0),
                command: stat.comm,
                ticks: stat.utime + stat.stime,
            })
        })
        .collect()
}

/// A process's time on a CPU since it started, in ticks: from its scheduler statistics in
/// nanoseconds where the kernel keeps them (a young process's few milliseconds would round
/// down to no tick), else from its ticks.
fn lifetime_ticks(root: &FsRoot, process: &ProcessTicks) -> f64 {
    root.read(&format!("proc/{}/schedstat", process.pid))
        .and_then(|text| text.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(process.ticks as f64, |ns| ns * ticks_per_second() / 1e9)
}

/// A look at the host, begun now and ended by [`Look::end`].
pub(crate) struct Look {
    began: Instant,
    ticks: CpuTicks,
    processes: Vec<ProcessTicks>,
}

impl Look {
    pub(crate) fn begin(root: &FsRoot) -> Option<Self> {
        Some(Self {
            ticks: CpuTicks::read(root)?,
            processes: process_table(root),
            began: Instant::now(),
        })
    }

    /// Watches the host for `window`, counting runnable tasks every 100 ms; `servers` as in
    /// [`Look::end`].
    pub(crate) fn watch(root: &FsRoot, window: Duration, servers: &[u32]) -> Option<HostLoad> {
        Self::watch_until(root, window, servers, &AtomicBool::new(false))
    }

    /// [`Look::watch`], ended sooner (at the next 100 ms) once `enough` is set: what was seen
    /// until then.
    pub(crate) fn watch_until(
        root: &FsRoot,
        window: Duration,
        servers: &[u32],
        enough: &AtomicBool,
    ) -> Option<HostLoad> {
        let look = Self::begin(root)?;
        let mut runnable = Vec::new();
        while let Some(left) = window
            .checked_sub(look.began.elapsed())
            .filter(|left| !left.is_zero() && !enough.load(Ordering::Relaxed))
        {
            std::thread::sleep(left.min(Duration::from_millis(100)));
            runnable.extend(other_runnable_now(root));
        }
        look.end(root, Duration::ZERO, servers, &runnable)
    }

    /// Ends the look no sooner than `least` after it began. `servers` are the local database
    /// servers' main processes: their CPU time and their children's is taken out; `runnable`
    /// the counts of other runnable tasks taken meanwhile, if any.
    pub(crate) fn end(
        self,
        root: &FsRoot,
        least: Duration,
        servers: &[u32],
        runnable: &[f64],
    ) -> Option<HostLoad> {
        if let Some(left) = least.checked_sub(self.began.elapsed()) {
            std::thread::sleep(left);
        }
        let after = CpuTicks::read(root)?;
        let seconds = self.began.elapsed().as_secs_f64();
        let per_second = ticks_per_second();
        let own_pid = std::process::id();
        let mut server_ticks = 0.0;
        let mut top = Vec::new();
        for process in process_table(root) {
            let earlier = self
                .processes
                .iter()
                .find(|earlier| earlier.pid == process.pid);
            let used = match earlier {
                Some(earlier) => process.ticks.saturating_sub(earlier.ticks) as f64,
                // Started during the look: all its time is in it.
                None => lifetime_ticks(root, &process),
            };
            if servers.contains(&process.pid) || servers.contains(&process.parent) {
                server_ticks += used;
            } else if process.pid != own_pid && earlier.is_some() {
                let pct = 100.0 * used / per_second / seconds;
                if pct >= 5.0 {
                    top.push((process.pid, process.command, pct));
                }
            }
        }
        top.sort_by(|a, b| b.2.total_cmp(&a.2));
        top.truncate(3);
        let total = after.total.saturating_sub(self.ticks.total).max(1) as f64;
        let server_cpus = server_ticks / total * after.cpus as f64;
        Some(HostLoad {
            other_busy_cpus: (self.ticks.other_busy_cpus(&after) - server_cpus).max(0.0),
            other_runnable: (!runnable.is_empty())
                .then(|| runnable.iter().sum::<f64>() / runnable.len() as f64),
            top,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A /proc/PID/stat line: pid, command (with a space and a parenthesis), parent, and
    /// utime and stime (fields 14 and 15) of `ticks` in all.
    fn stat(pid: u32, parent: u32, ticks: u64) -> String {
        let rest = vec!["0"; 52 - 21].join(" ");
        format!(
            "{pid} (a b) c) S {parent} {pid} {pid} 0 -1 0 0 0 0 0 {ticks} 0 0 0 20 0 1 0 {rest}"
        )
    }

    /// /proc with the host's busy ticks, this process's own, and `processes` (pid, parent,
    /// ticks, and nanoseconds on a CPU where the scheduler kept them).
    fn proc_tree(
        busy: u64,
        own: u64,
        processes: &[(u32, u32, u64, Option<u64>)],
    ) -> (tempfile::TempDir, FsRoot) {
        let dir = tempfile::tempdir().unwrap();
        let proc = dir.path().join("proc");
        std::fs::create_dir_all(proc.join("self")).unwrap();
        // Two CPUs: busy as user time, the rest of 1,000 ticks idle.
        std::fs::write(
            proc.join("stat"),
            format!(
                "cpu  {busy} 0 0 {} 0 0 0 0 0 0\ncpu0 0\ncpu1 0\n",
                1000 - busy
            ),
        )
        .unwrap();
        std::fs::write(proc.join("self/stat"), stat(42, 1, own)).unwrap();
        for (pid, parent, ticks, ns) in processes {
            std::fs::create_dir_all(proc.join(pid.to_string())).unwrap();
            std::fs::write(
                proc.join(format!("{pid}/stat")),
                stat(*pid, *parent, *ticks),
            )
            .unwrap();
            if let Some(ns) = ns {
                std::fs::write(proc.join(format!("{pid}/schedstat")), format!("{ns} 0 1\n"))
                    .unwrap();
            }
        }
        let root = FsRoot::new(dir.path());
        (dir, root)
    }

    #[test]
    fn a_local_servers_processes_and_their_children_are_not_other_load() {
        // Over 100 ticks (2 CPUs): the server's main process (100) used 10 ticks, a backend
        // it started meanwhile (101) 8 ticks by its 80 ms on a CPU (its own tick count says
        // 0), another process (200) 20 ticks and corescale 5: 43 busy ticks.
        let (_before_dir, before) = proc_tree(500, 30, &[(100, 1, 50, None), (200, 1, 10, None)]);
        let processes = [
            (100, 1, 60, None),
            (101, 100, 0, Some(80_000_000)),
            (200, 1, 30, None),
        ];
        let (_after_dir, after) = proc_tree(543, 35, &processes);
        // /proc/stat's totals grew by 100 ticks: 43 busy, 57 idle.
        std::fs::write(
            after.path("proc/stat"),
            "cpu  543 0 0 557 0 0 0 0 0 0\ncpu0 0\ncpu1 0\n",
        )
        .unwrap();
        let look = Look::begin(&before).unwrap();
        let load = look.end(&after, Duration::ZERO, &[100], &[]).unwrap();
        // (43 - 5 - 10 - 8) / 100 ticks on 2 CPUs.
        assert!((load.other_busy_cpus - 0.4).abs() < 1e-9, "{load:?}");
        let named: Vec<u32> = load.top.iter().map(|(pid, _, _)| *pid).collect();
        assert_eq!(named, [200], "{load:?}");
        assert_eq!(load.top[0].1, "a b) c");
        // Without the server named, all of it is other load.
        let look = Look::begin(&before).unwrap();
        let load = look.end(&after, Duration::ZERO, &[], &[]).unwrap();
        assert!((load.other_busy_cpus - 0.76).abs() < 1e-9, "{load:?}");
    }
}
