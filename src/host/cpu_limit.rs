//! The CPU a container or a capped VM really gives this process: the CPU quota of its cgroup
//! (v1 `cpu.cfs_quota_us`/`cpu.cfs_period_us`, v2 `cpu.max`, the smallest along the path to
//! the root), its cpuset and its affinity. /proc/cpuinfo shows the host's CPUs, which a pod
//! under a Kubernetes CPU limit cannot use: the sweep is planned around the effective count,
//! and a level the quota throttled (`cpu.stat`) says so instead of blaming other processes.

use serde::{Deserialize, Serialize};

use super::sysfs::FsRoot;

/// The limits found, recorded with the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuLimit {
    /// 1 or 2: which cgroup hierarchy set the quota.
    pub cgroup_version: u8,
    /// The cgroup (the process's own path in the hierarchy that has the quota).
    pub cgroup: String,
    /// The smallest quota along the path, and its period, in microseconds; None: no quota.
    pub quota_us: Option<u64>,
    pub period_us: Option<u64>,
    /// quota / period: the CPUs' worth of time the quota allows (0.5).
    pub quota_cpus: Option<f64>,
    /// CPUs of the cgroup's cpuset, where one is set.
    pub cpuset_cpus: Option<usize>,
    /// CPUs this process may run on (sched_getaffinity).
    pub affinity_cpus: usize,
    /// The smallest of affinity, cpuset and ceil(quota / period): the CPUs a sweep can use.
    pub effective_cpus: usize,
}

impl CpuLimit {
    /// Whether anything limits the process below the host's `logical` CPUs.
    pub fn limits(&self, logical: usize) -> bool {
        self.effective_cpus < logical || self.quota_cpus.is_some_and(|cpus| cpus < logical as f64)
    }

    /// What limits it, in words: "the cgroup's CPU quota of 0.5 CPU".
    pub fn describe(&self) -> String {
        match self.quota_cpus {
            Some(cpus) => format!(
                "the cgroup's CPU quota of {} CPU{}",
                (cpus * 1000.0).round() / 1000.0,
                if cpus <= 1.0 { "" } else { "s" }
            ),
            None => format!(
                "the {} CPU{} this process may use (cpuset or affinity)",
                self.effective_cpus,
                if self.effective_cpus == 1 { "" } else { "s" }
            ),
        }
    }
}

/// Where the CPU controller of this process's cgroup is, and which version.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CpuGroup {
    version: u8,
    /// Directories from the process's own group up to the hierarchy's root, below `root`.
    directories: Vec<String>,
    path: String,
}

/// The throttling counters of a cgroup's `cpu.stat`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThrottleCounts {
    pub periods: u64,
    pub throttled_periods: u64,
    pub throttled_s: f64,
}

impl ThrottleCounts {
    /// From `self` to `later`: periods, throttled periods, seconds throttled.
    pub fn since(&self, later: &ThrottleCounts) -> ThrottleCounts {
        ThrottleCounts {
            periods: later.periods.saturating_sub(self.periods),
            throttled_periods: later
                .throttled_periods
                .saturating_sub(self.throttled_periods),
            throttled_s: (later.throttled_s - self.throttled_s).max(0.0),
        }
    }
}

/// The directories of this process's cgroup in the CPU controller's hierarchy: v1's `cpu`
/// line (mounted as `cpu` or `cpu,cpuacct`), else v2's `0::` line (at /sys/fs/cgroup, or
/// /sys/fs/cgroup/unified on a hybrid host).
fn cpu_group(root: &FsRoot) -> Option<CpuGroup> {
    let membership = root.read("proc/self/cgroup")?;
    let ancestors = |mount: &str, path: &str| -> Vec<String> {
        let mut directories = Vec::new();
        let mut current = path.trim_matches('/').to_string();
        loop {
            directories.push(if current.is_empty() {
                mount.to_string()
            } else {
                format!("{mount}/{current}")
            });
            if current.is_empty() {
                break;
            }
            current = current
                .rsplit_once('/')
                .map_or(String::new(), |(parent, _)| parent.to_string());
        }
        directories
    };
    let mut v2 = None;
    for line in membership.lines() {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        if controllers.is_empty() {
            v2 = Some(path.to_string());
            continue;
        }
        if controllers.split(',').any(|name| name == "cpu") {
            for mount in ["sys/fs/cgroup/cpu", "sys/fs/cgroup/cpu,cpuacct"] {
                // A container sees its own group at the mount itself.
                for candidate in [ancestors(mount, path), ancestors(mount, "")] {
                    if root
                        .path(&format!("{}/cpu.cfs_quota_us", candidate[0]))
                        .exists()
                    {
                        return Some(CpuGroup {
                            version: 1,
                            directories: candidate,
                            path: path.to_string(),
                        });
                    }
                }
            }
        }
    }
    let path = v2?;
    for mount in ["sys/fs/cgroup", "sys/fs/cgroup/unified"] {
        let directories = ancestors(mount, &path);
        if root
            .path(&format!("{}/cgroup.controllers", directories[0]))
            .exists()
        {
            return Some(CpuGroup {
                version: 2,
                directories,
                path,
            });
        }
    }
    None
}

/// The quota and period of one cgroup directory, when it sets one.
fn quota_of(root: &FsRoot, group: &CpuGroup, directory: &str) -> Option<(u64, u64)> {
    if group.version == 1 {
        let quota: i64 = root
            .read(&format!("{directory}/cpu.cfs_quota_us"))?
            .trim()
            .parse()
            .ok()?;
        let period: u64 = root
            .read(&format!("{directory}/cpu.cfs_period_us"))?
            .trim()
            .parse()
            .ok()?;
        (quota > 0 && period > 0).then_some((quota as u64, period))
    } else {
        let text = root.read(&format!("{directory}/cpu.max"))?;
        let mut fields = text.split_whitespace();
        let quota = fields.next()?.parse::<u64>().ok()?;
        let period = fields.next()?.parse::<u64>().ok()?;
        (quota > 0 && period > 0).then_some((quota, period))
    }
}

/// CPUs in a cpuset list such as "0-3,6".
fn cpu_list_count(list: &str) -> Option<usize> {
    let mut count = 0;
    for part in list.trim().split(',').filter(|part| !part.is_empty()) {
        count += match part.split_once('-') {
            Some((first, last)) => {
                let (first, last): (usize, usize) = (first.parse().ok()?, last.parse().ok()?);
                last.checked_sub(first)? + 1
            }
            None => {
                part.parse::<usize>().ok()?;
                1
            }
        };
    }
    (count > 0).then_some(count)
}

/// The cpuset's CPUs of this process's cgroup (v1 `cpuset` line, or v2), where readable.
fn cpuset_cpus(root: &FsRoot) -> Option<usize> {
    let membership = root.read("proc/self/cgroup")?;
    for line in membership.lines() {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let path = path.trim_matches('/');
        let files: Vec<String> = if controllers.split(',').any(|name| name == "cpuset") {
            vec![
                format!("sys/fs/cgroup/cpuset/{path}/cpuset.effective_cpus"),
                format!("sys/fs/cgroup/cpuset/{path}/cpuset.cpus"),
            ]
        } else if controllers.is_empty() {
            vec![format!("sys/fs/cgroup/{path}/cpuset.cpus.effective")]
        } else {
            continue;
        };
        if let Some(count) = files
            .iter()
            .find_map(|file| root.read(file).and_then(|text| cpu_list_count(&text)))
        {
            return Some(count);
        }
    }
    None
}

/// CPUs this process may run on.
pub(crate) fn affinity_cpus() -> Option<usize> {
    let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).ok()?;
    let count = (0..nix::sched::CpuSet::count())
        .filter(|&cpu| set.is_set(cpu).unwrap_or(false))
        .count();
    (count > 0).then_some(count)
}

/// The CPUs' worth of time this process may use: its quota where one is set (0.2, where
/// `available_parallelism` rounds up to 1), else its affinity's and cpuset's count.
pub fn usable_cpus() -> f64 {
    let logical = std::thread::available_parallelism().map_or(1, usize::from);
    read(&FsRoot::new("/"), logical).map_or(logical as f64, |limit| {
        (limit.quota_cpus)
            .unwrap_or(f64::INFINITY)
            .min(limit.effective_cpus as f64)
    })
}

/// The limits on this process's CPUs below the host's `logical` CPUs; None when nothing is
/// known beyond them.
pub fn read(root: &FsRoot, logical: usize) -> Option<CpuLimit> {
    let group = cpu_group(root);
    let quota = group.as_ref().and_then(|group| {
        group
            .directories
            .iter()
            .filter_map(|directory| quota_of(root, group, directory))
            .min_by(|a, b| (a.0 as f64 / a.1 as f64).total_cmp(&(b.0 as f64 / b.1 as f64)))
    });
    let cpuset = cpuset_cpus(root);
    // Affinity is the live process's: a fixture machine tree has none of its own.
    let affinity = root
        .is_live()
        .then(affinity_cpus)
        .flatten()
        .unwrap_or(logical)
        .min(logical.max(1));
    let quota_cpus = quota.map(|(quota, period)| quota as f64 / period as f64);
    let effective = [
        Some(affinity),
        cpuset,
        quota_cpus.map(|cpus| (cpus.ceil() as usize).max(1)),
    ]
    .into_iter()
    .flatten()
    .min()
    .unwrap_or(logical);
    if quota.is_none() && cpuset.is_none_or(|cpus| cpus >= logical) && affinity >= logical {
        return None;
    }
    Some(CpuLimit {
        cgroup_version: group.as_ref().map_or(0, |group| group.version),
        cgroup: group
            .as_ref()
            .map_or_else(String::new, |group| group.path.clone()),
        quota_us: quota.map(|(quota, _)| quota),
        period_us: quota.map(|(_, period)| period),
        quota_cpus,
        cpuset_cpus: cpuset,
        affinity_cpus: affinity,
        effective_cpus: effective,
    })
}

/// The throttling counters of the cgroups along this process's path that set a quota, each
/// as its own `cpu.stat` counts them (the kernel counts throttling in the group whose quota
/// ran out, which may be a parent's), in the order of the path from the process's own group.
pub fn throttle_counts(root: &FsRoot) -> Option<Vec<ThrottleCounts>> {
    let group = cpu_group(root)?;
    let counts: Vec<ThrottleCounts> = group
        .directories
        .iter()
        .filter(|directory| quota_of(root, &group, directory).is_some())
        .filter_map(|directory| {
            let stat = root.read(&format!("{directory}/cpu.stat"))?;
            let field = |name: &str| {
                stat.lines().find_map(|line| {
                    let (key, value) = line.split_once(' ')?;
                    (key == name).then(|| value.trim().parse::<u64>().ok())?
                })
            };
            Some(ThrottleCounts {
                periods: field("nr_periods")?,
                throttled_periods: field("nr_throttled")?,
                throttled_s: match group.version {
                    1 => field("throttled_time").unwrap_or(0) as f64 / 1e9,
                    _ => field("throttled_usec").unwrap_or(0) as f64 / 1e6,
                },
            })
        })
        .collect();
    (!counts.is_empty()).then_some(counts)
}

/// What the quotas throttled between two readings of [`throttle_counts`]: the group whose
/// share of throttled periods was largest.
pub fn throttled_between(
    before: &[ThrottleCounts],
    after: &[ThrottleCounts],
) -> Option<ThrottleCounts> {
    let share =
        |counts: &ThrottleCounts| counts.throttled_periods as f64 / counts.periods.max(1) as f64;
    before
        .iter()
        .zip(after)
        .map(|(before, after)| before.since(after))
        .max_by(|a, b| share(a).total_cmp(&share(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::host::sysfs::fixture_tree as machine;

    #[test]
    fn a_v1_quota_of_half_a_cpu_gives_one_cpu() {
        let (_dir, root) = machine(&[
            ("proc/self/cgroup", "3:cpuset:/\n1:cpu:/pod/app\n0::/\n"),
            ("sys/fs/cgroup/cpu/pod/app/cpu.cfs_quota_us", "50000\n"),
            ("sys/fs/cgroup/cpu/pod/app/cpu.cfs_period_us", "100000\n"),
            (
                "sys/fs/cgroup/cpu/pod/app/cpu.stat",
                "nr_periods 29\nnr_throttled 16\nthrottled_time 1500000000\n",
            ),
            ("sys/fs/cgroup/cpu/pod/cpu.cfs_quota_us", "-1\n"),
            ("sys/fs/cgroup/cpu/pod/cpu.cfs_period_us", "100000\n"),
            ("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n"),
            ("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n"),
        ]);
        let limit = read(&root, 2).unwrap();
        assert_eq!(limit.cgroup_version, 1);
        assert_eq!(limit.quota_cpus, Some(0.5));
        assert_eq!(limit.effective_cpus, 1);
        assert!(limit.limits(2));
        assert_eq!(limit.describe(), "the cgroup's CPU quota of 0.5 CPU");
        let counts = throttle_counts(&root).unwrap();
        assert_eq!(counts.len(), 1);
        assert_eq!((counts[0].periods, counts[0].throttled_periods), (29, 16));
        assert!((counts[0].throttled_s - 1.5).abs() < 1e-9);
        let none = ThrottleCounts::default();
        assert_eq!(throttled_between(&[none], &counts), Some(counts[0]));
    }

    #[test]
    fn a_v2_parent_quota_and_a_cpuset_bound_the_count() {
        let (_dir, root) = machine(&[
            ("proc/self/cgroup", "0::/kubepods/pod1/ctr\n"),
            ("sys/fs/cgroup/cgroup.controllers", "cpu cpuset\n"),
            (
                "sys/fs/cgroup/kubepods/pod1/ctr/cgroup.controllers",
                "cpu\n",
            ),
            ("sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "max 100000\n"),
            ("sys/fs/cgroup/kubepods/pod1/cpu.max", "250000 100000\n"),
            (
                "sys/fs/cgroup/kubepods/pod1/cpu.stat",
                "usage_usec 10\nnr_periods 10\nnr_throttled 4\nthrottled_usec 20000\n",
            ),
            (
                "sys/fs/cgroup/kubepods/pod1/ctr/cpuset.cpus.effective",
                "0-1\n",
            ),
        ]);
        let limit = read(&root, 8).unwrap();
        assert_eq!(limit.cgroup_version, 2);
        assert_eq!(limit.quota_cpus, Some(2.5));
        assert_eq!(limit.cpuset_cpus, Some(2));
        assert_eq!(limit.effective_cpus, 2);
        // The parent's quota throttled: its own cpu.stat counts it.
        let counts = throttle_counts(&root).unwrap();
        assert_eq!(counts.len(), 1);
        assert_eq!(counts[0].throttled_periods, 4);
        assert!((counts[0].throttled_s - 0.02).abs() < 1e-9);
    }

    #[test]
    fn no_quota_and_all_cpus_is_no_limit() {
        let (_dir, root) = machine(&[
            ("proc/self/cgroup", "1:cpu:/\n0::/\n"),
            ("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n"),
            ("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n"),
        ]);
        assert_eq!(read(&root, 2), None);
        assert_eq!(cpu_list_count("0-3,6"), Some(5));
        assert_eq!(cpu_list_count("x"), None);
    }
}
