//! What else the host did while a level ran, and whether the level's figures can be trusted:
//! CPU time used by other processes, runnable tasks beyond corescale's own, steal, and how
//! many CPUs the workers really ran on.

use std::collections::BTreeSet;

use procfs_core::FromRead;
use procfs_core::process::Stat;
use serde::{Deserialize, Serialize};

use super::sysfs::FsRoot;

/// Other processes using more than this many CPUs' worth of time disturb a level.
pub(crate) const OTHER_BUSY_LIMIT: f64 = 0.2;
/// More than this many runnable tasks (mean) beyond corescale's own disturb a level.
pub(crate) const OTHER_RUNNABLE_LIMIT: f64 = 0.5;
/// Steal above this share of CPU time disturbs a level.
pub(crate) const STEAL_LIMIT_PCT: f64 = 2.0;
/// Own threads are counted one by one only up to this many: each read costs the sampler a
/// few microseconds while the workers are timed, so larger levels go without the figure.
const TASKS_COUNTED: usize = 64;

/// Clean, or disturbed for the reasons given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Clean,
    Disturbed,
}

/// A level's interference figures and verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interference {
    /// CPUs' worth of busy time by other processes, mean over the level.
    pub other_busy_cpus: f64,
    /// Mean runnable tasks beyond corescale's own threads (null when not counted).
    pub other_runnable: Option<f64>,
    pub steal_pct: f64,
    /// Distinct CPUs the jobs ended on.
    pub distinct_cpus: usize,
    /// CPUs this process may run on (its affinity).
    pub allowed_cpus: usize,
    /// The share of the cgroup's CPU periods its quota throttled (cpu.stat), and the time
    /// throttled, where a quota applies and throttled the level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled_s: Option<f64>,
    pub verdict: Verdict,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// A campaign's other parts found on this host, and their CPUs' worth of busy time: the
    /// campaign's own load, taken out of the other processes' before judging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign_parts_here: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign_parts_cpus: Option<f64>,
}

/// Busy and total CPU ticks of the host and this process's own ticks, read together.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CpuTicks {
    /// user + nice + system + irq + softirq over all CPUs (steal, idle and iowait left out).
    pub busy: u64,
    /// Every tick over all CPUs, steal included.
    pub total: u64,
    pub cpus: usize,
    /// utime + stime of this process, all threads.
    pub own: u64,
    pub steal: u64,
}

impl CpuTicks {
    pub(crate) fn read(root: &FsRoot) -> Option<Self> {
        let stat = root.read("proc/stat")?;
        let line = stat.lines().find(|line| line.starts_with("cpu "))?;
        let fields: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|field| field.parse().unwrap_or(0))
            .collect();
        let field = |index: usize| fields.get(index).copied().unwrap_or(0);
        // user nice system idle iowait irq softirq steal (guest is inside user already)
        let busy = field(0) + field(1) + field(2) + field(5) + field(6);
        let total = busy + field(3) + field(4) + field(7);
        let cpus = stat
            .lines()
            .filter(|line| {
                line.strip_prefix("cpu")
                    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
            })
            .count()
            .max(1);
        let own = process_ticks(&root.read("proc/self/stat")?)?;
        Some(Self {
            busy,
            total,
            cpus,
            own,
            steal: field(7),
        })
    }

    /// Steal from `self` to `later`, as a percentage of all CPU time.
    pub(crate) fn steal_pct(&self, later: &CpuTicks) -> f64 {
        let total = later.total.saturating_sub(self.total);
        if total == 0 {
            return 0.0;
        }
        100.0 * later.steal.saturating_sub(self.steal) as f64 / total as f64
    }

    /// Other processes' busy time from `self` to `later`, in CPUs.
    pub(crate) fn other_busy_cpus(&self, later: &CpuTicks) -> f64 {
        let total = later.total.saturating_sub(self.total);
        if total == 0 {
            return 0.0;
        }
        let busy = later.busy.saturating_sub(self.busy) as f64;
        let own = later.own.saturating_sub(self.own) as f64;
        ((busy - own) / total as f64 * self.cpus as f64).max(0.0)
    }
}

/// Clock ticks per second of /proc's CPU times (USER_HZ).
pub(crate) fn ticks_per_second() -> f64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64
}

/// User and system CPU time of a process, in seconds, from /proc/PID/stat.
pub fn process_cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(process_ticks(&stat)? as f64 / ticks_per_second())
}

/// How long the calling thread has waited, runnable, for a CPU since it started
/// (`/proc/thread-self/schedstat`'s run delay): a client short of CPU, pinned, throttled by
/// its quota or sharing its CPUs, waits there. None where the kernel does not keep it.
pub fn thread_run_delay() -> Option<std::time::Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanoseconds: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(std::time::Duration::from_nanos(nanoseconds))
}

/// CPU seconds of a process, of the children it reaped and of its live children, from /proc:
/// a server that starts a process per session (PostgreSQL's postmaster) spends its CPU in
/// them, and an ended session's time is its parent's once reaped.
pub fn process_tree_cpu_seconds(pid: u32) -> Option<f64> {
    let stat_of = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|text| process_stat(&text))
    };
    let own = stat_of(pid)?;
    let reaped = u64::try_from(own.cutime.max(0) + own.cstime.max(0)).unwrap_or(0);
    let mut ticks = own.utime + own.stime + reaped;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(child) = (entry.file_name().to_str()).and_then(|name| name.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(stat) = stat_of(child).filter(|stat| u32::try_from(stat.ppid) == Ok(pid)) {
            ticks += stat.utime + stat.stime;
        }
    }
    Some(ticks as f64 / ticks_per_second())
}

/// utime + stime from a /proc/PID/stat line, parsed by procfs-core.
fn process_ticks(stat: &str) -> Option<u64> {
    let stat = process_stat(stat)?;
    Some(stat.utime + stat.stime)
}

/// A /proc/PID/stat line, parsed by procfs-core (which knows the command name may hold
/// spaces and parentheses).
pub(crate) fn process_stat(stat: &str) -> Option<Stat> {
    Stat::from_read(stat.as_bytes()).ok()
}

/// Runnable tasks beyond this process's own at this moment: `procs_running` of /proc/stat
/// less this process's threads in state R. None when there are too many threads to count.
pub(crate) fn other_runnable_now(root: &FsRoot) -> Option<f64> {
    let own_before = own_runnable(root)?;
    let stat = root.read("proc/stat")?;
    let running: u64 = stat
        .lines()
        .find_map(|line| line.strip_prefix("procs_running "))?
        .trim()
        .parse()
        .ok()?;
    other_runnable(root, running, own_before)
}

/// `procs_running` (read by the caller) less this process's threads in state R, counted
/// before (`own_before`) and after it was read: a worker that stops running between the two
/// reads is still its own, not another task. None when there are too many threads to count.
pub(crate) fn other_runnable(root: &FsRoot, procs_running: u64, own_before: usize) -> Option<f64> {
    let own = own_runnable(root)?.max(own_before);
    Some((procs_running as f64 - own as f64).max(0.0))
}

/// This process's threads in state R; None when there are too many to count.
pub(crate) fn own_runnable(root: &FsRoot) -> Option<usize> {
    let tasks = std::fs::read_dir(root.path("proc/self/task")).ok()?;
    let mut own = 0usize;
    for (index, task) in tasks.flatten().enumerate() {
        if index >= TASKS_COUNTED {
            return None;
        }
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        own += usize::from(process_stat(&stat).is_some_and(|stat| stat.state == 'R'));
    }
    Some(own)
}

/// What the level saw, before judging it.
pub(crate) struct LevelLoad {
    pub workers: usize,
    pub pinned: bool,
    pub other_busy_cpus: f64,
    pub other_runnable: Option<f64>,
    pub steal_pct: f64,
    pub cpus_seen: BTreeSet<usize>,
    pub allowed_cpus: usize,
    pub logical_cpus: usize,
    /// What the cgroup's quota throttled (periods, time), and the quota in words.
    pub throttle: Option<(super::cpu_limit::ThrottleCounts, String)>,
}

/// Judges a level against the documented thresholds.
pub(crate) fn judge(load: LevelLoad) -> Interference {
    let mut reasons = Vec::new();
    if load.other_busy_cpus > OTHER_BUSY_LIMIT {
        reasons.push(format!(
            "other processes used {:.2} CPUs (limit {OTHER_BUSY_LIMIT})",
            load.other_busy_cpus
        ));
    }
    if let Some(runnable) = load.other_runnable
        && runnable > OTHER_RUNNABLE_LIMIT
    {
        reasons.push(format!(
            "{runnable:.2} other tasks were runnable on average (limit {OTHER_RUNNABLE_LIMIT})"
        ));
    }
    if load.steal_pct > STEAL_LIMIT_PCT {
        reasons.push(format!(
            "the hypervisor stole {:.1}% of CPU time (limit {STEAL_LIMIT_PCT}%)",
            load.steal_pct
        ));
    }
    let expected = load.workers.min(load.allowed_cpus.max(1));
    if load.allowed_cpus < load.workers.min(load.logical_cpus) {
        reasons.push(format!(
            "this process may use {} of the {} logical CPUs (taskset or cpuset)",
            load.allowed_cpus, load.logical_cpus
        ));
    }
    let throttled_pct = load
        .throttle
        .as_ref()
        .map(|(counts, _)| 100.0 * counts.throttled_periods as f64 / counts.periods.max(1) as f64);
    if let (Some((counts, quota)), Some(pct)) = (&load.throttle, throttled_pct) {
        reasons.push(format!(
            "{quota} throttled {pct:.0}% of periods ({:.2} s held back): this level measured the quota, not the host",
            counts.throttled_s
        ));
    }
    // Under a quota the workers' CPUs say nothing: the quota, not other work, held them.
    if load.throttle.is_none()
        && !load.pinned
        && !load.cpus_seen.is_empty()
        && load.cpus_seen.len() < expected
    {
        reasons.push(format!(
            "{} workers ran on {} CPU{} only, not {expected}",
            load.workers,
            load.cpus_seen.len(),
            if load.cpus_seen.len() == 1 { "" } else { "s" }
        ));
    }
    Interference {
        other_busy_cpus: load.other_busy_cpus,
        other_runnable: load.other_runnable,
        steal_pct: load.steal_pct,
        distinct_cpus: load.cpus_seen.len(),
        allowed_cpus: load.allowed_cpus,
        throttled_pct,
        throttled_s: load.throttle.as_ref().map(|(counts, _)| counts.throttled_s),
        verdict: if reasons.is_empty() {
            Verdict::Clean
        } else {
            Verdict::Disturbed
        },
        reasons,
        campaign_parts_here: None,
        campaign_parts_cpus: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(stat: &str, own: &str) -> (tempfile::TempDir, FsRoot) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc/self/task/7")).unwrap();
        std::fs::write(dir.path().join("proc/stat"), stat).unwrap();
        std::fs::write(dir.path().join("proc/self/stat"), own).unwrap();
        std::fs::write(dir.path().join("proc/self/task/7/stat"), task_stat(7)).unwrap();
        let root = FsRoot::new(dir.path());
        (dir, root)
    }

    /// A whole /proc/PID/stat line (52 fields, as Linux writes) with utime and stime
    /// (fields 14 and 15) and a command name holding a space and a parenthesis.
    fn own_stat(utime: u64, stime: u64) -> String {
        let rest = vec!["0"; 52 - 21].join(" ");
        format!(
            "42 (core) scale) R 1 42 42 0 -1 4194304 100 0 0 0 {utime} {stime} 0 0 20 0 3 0 {rest}"
        )
    }

    /// A running thread's whole stat line.
    fn task_stat(tid: u32) -> String {
        own_stat(1, 1).replacen("42", &tid.to_string(), 1)
    }

    #[test]
    fn other_work_is_busy_time_less_our_own() {
        // Two CPUs, 2 s at 100 ticks/s: 400 ticks. The host was busy 300 ticks, 180 of ours:
        // others used 120 ticks = 0.6 CPUs.
        let (_a, before) = tree(
            "cpu  1000 0 200 5000 0 0 0 0 0 0\ncpu0 500 0 100 2500 0 0 0 0\ncpu1 500 0 100 2500 0 0 0 0\nprocs_running 3\n",
            &own_stat(50, 10),
        );
        let (_b, after) = tree(
            "cpu  1250 0 250 5100 0 0 0 0 0 0\ncpu0 600 0 120 2550 0 0 0 0\ncpu1 650 0 130 2550 0 0 0 0\nprocs_running 3\n",
            &own_stat(200, 40),
        );
        let (early, late) = (
            CpuTicks::read(&before).unwrap(),
            CpuTicks::read(&after).unwrap(),
        );
        assert_eq!(early.cpus, 2);
        assert!((early.other_busy_cpus(&late) - 0.6).abs() < 1e-9);
        // procs_running 3, one of them our own running thread: 2 others.
        assert_eq!(other_runnable_now(&after), Some(2.0));
    }

    #[test]
    fn verdicts_follow_the_thresholds() {
        let load =
            |busy: f64, runnable: f64, steal: f64, seen: &[usize], workers: usize| LevelLoad {
                workers,
                pinned: false,
                other_busy_cpus: busy,
                other_runnable: Some(runnable),
                steal_pct: steal,
                cpus_seen: seen.iter().copied().collect(),
                allowed_cpus: 2,
                logical_cpus: 2,
                throttle: None,
            };
        let clean = judge(load(0.05, 0.1, 0.5, &[0, 1], 2));
        assert_eq!(clean.verdict, Verdict::Clean);
        assert!(clean.reasons.is_empty());
        let busy = judge(load(0.9, 0.1, 0.5, &[0, 1], 2));
        assert_eq!(busy.verdict, Verdict::Disturbed);
        assert!(busy.reasons[0].contains("0.90 CPUs"), "{:?}", busy.reasons);
        assert_eq!(
            judge(load(0.0, 1.2, 0.0, &[0, 1], 2)).verdict,
            Verdict::Disturbed
        );
        assert_eq!(
            judge(load(0.0, 0.0, 3.0, &[0, 1], 2)).verdict,
            Verdict::Disturbed
        );
        let crowded = judge(load(0.0, 0.0, 0.0, &[1], 2));
        assert!(crowded.reasons[0].contains("2 workers ran on 1 CPU only, not 2"));
        // Three workers on two CPUs may use both and no more.
        assert_eq!(
            judge(load(0.0, 0.0, 0.0, &[0, 1], 3)).verdict,
            Verdict::Clean
        );
        assert_eq!(judge(load(0.0, 0.0, 0.0, &[0], 1)).verdict, Verdict::Clean);
        let confined = judge(LevelLoad {
            allowed_cpus: 1,
            ..load(0.0, 0.0, 0.0, &[0], 2)
        });
        assert!(confined.reasons[0].contains("may use 1 of the 2 logical CPUs"));
        // A quota that throttled 16 of 29 periods is named as the cause; the workers'
        // crowding onto one CPU is not blamed on anything else.
        let counts = super::super::cpu_limit::ThrottleCounts {
            periods: 29,
            throttled_periods: 16,
            throttled_s: 0.9,
        };
        let throttled = judge(LevelLoad {
            throttle: Some((counts, "the cgroup's CPU quota of 0.5 CPU".to_string())),
            ..load(0.0, 0.0, 0.0, &[1], 2)
        });
        assert_eq!(throttled.verdict, Verdict::Disturbed);
        assert_eq!(throttled.reasons.len(), 1, "{:?}", throttled.reasons);
        assert!(
            throttled.reasons[0]
                .starts_with("the cgroup's CPU quota of 0.5 CPU throttled 55% of periods"),
            "{:?}",
            throttled.reasons
        );
        assert_eq!(throttled.throttled_s, Some(0.9));
    }

    /// A shell whose child burns CPU and exits: the child's time is the shell's once reaped,
    /// which the tree counts and the shell's own time does not.
    #[test]
    fn a_process_tree_counts_the_children_it_reaped() {
        let mut shell = std::process::Command::new("sh")
            .args([
                "-c",
                "( i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done ); exec sleep 30",
            ])
            // The shell becomes the sleep once its child has ended (the reaped time kept):
            // killing it leaves no process behind holding the test's output.
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid = shell.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let counted = loop {
            let tree = process_tree_cpu_seconds(pid).unwrap();
            let own = process_cpu_seconds(pid).unwrap();
            // Reaped: no child left, and its time in the tree.
            let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
                .unwrap_or_default();
            if tree - own >= 0.1 && children.split_whitespace().count() == 0 {
                break Some((tree, own));
            }
            if std::time::Instant::now() > deadline {
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        };
        let _ = shell.kill();
        let _ = shell.wait();
        let (tree, own) = counted.expect("the child's CPU time never reached the tree's count");
        assert!(own < 0.05, "the shell itself burned {own} s");
        assert!(tree >= 0.1, "{tree}");
    }
}
