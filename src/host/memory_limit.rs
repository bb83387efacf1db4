//! How much memory this process may really allocate: the smallest of what the host has
//! available, what its memory cgroup still allows (a container's limit), and what its
//! address-space limit (`ulimit -v`) leaves. /proc/meminfo alone knows only the first.

use super::sysfs::FsRoot;

/// One limit on allocation, with what it is called in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limit {
    pub bytes: u64,
    pub source: &'static str,
}

/// The memory cgroup's limit less its usage (v2 `memory.max`, v1 `memory.limit_in_bytes`),
/// when there is a limit.
pub(crate) fn cgroup_headroom(root: &FsRoot) -> Option<Limit> {
    let membership = root.read("proc/self/cgroup")?;
    for line in membership.lines() {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let path = path.trim_start_matches('/');
        let candidates: Vec<(String, &str, &str)> = if controllers.is_empty() {
            vec![(
                format!("sys/fs/cgroup/{path}"),
                "memory.max",
                "memory.current",
            )]
        } else if controllers.split(',').any(|name| name == "memory") {
            // v1: the hierarchy may be mounted at the process's own group (containers).
            vec![
                (
                    format!("sys/fs/cgroup/memory/{path}"),
                    "memory.limit_in_bytes",
                    "memory.usage_in_bytes",
                ),
                (
                    "sys/fs/cgroup/memory".to_string(),
                    "memory.limit_in_bytes",
                    "memory.usage_in_bytes",
                ),
            ]
        } else {
            continue;
        };
        for (directory, limit_file, usage_file) in candidates {
            let directory = directory.trim_end_matches('/');
            let Some(limit) = root.read(&format!("{directory}/{limit_file}")) else {
                continue;
            };
            // "max" (v2) or a page-rounded i64::MAX (v1): no limit.
            let Ok(limit) = limit.trim().parse::<u64>() else {
                return None;
            };
            if limit >= 1 << 62 {
                return None;
            }
            // Usage counts page cache the kernel would reclaim first: inactive file pages.
            let reclaimable = root
                .read(&format!("{directory}/memory.stat"))
                .and_then(|stat| {
                    stat.lines().find_map(|line| {
                        let (name, value) = line.split_once(' ')?;
                        matches!(name, "inactive_file" | "total_inactive_file")
                            .then(|| value.trim().parse::<u64>().ok())?
                    })
                })
                .unwrap_or(0);
            let usage = root
                .read(&format!("{directory}/{usage_file}"))
                .and_then(|text| text.trim().parse::<u64>().ok())
                .unwrap_or(0)
                .saturating_sub(reclaimable);
            return Some(Limit {
                bytes: limit.saturating_sub(usage),
                source: "the memory cgroup's limit",
            });
        }
    }
    None
}

/// RLIMIT_AS less the address space this process already holds.
pub(crate) fn address_space_headroom(root: &FsRoot) -> Option<Limit> {
    let (soft, _) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_AS).ok()?;
    if soft == nix::sys::resource::RLIM_INFINITY {
        return None;
    }
    let status = root.read("proc/self/status").unwrap_or_default();
    let used_kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmSize:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    Some(Limit {
        bytes: soft.saturating_sub(used_kib.saturating_mul(1024)),
        source: "the address-space limit (ulimit -v)",
    })
}

/// The smallest of the host's available memory and the process's own limits.
pub(crate) fn allocatable(root: &FsRoot, available_bytes: u64) -> Limit {
    [cgroup_headroom(root), address_space_headroom(root)]
        .into_iter()
        .flatten()
        .fold(
            Limit {
                bytes: available_bytes,
                source: "the host's available memory",
            },
            |smallest, limit| {
                if limit.bytes < smallest.bytes {
                    limit
                } else {
                    smallest
                }
            },
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::host::sysfs::fixture_tree as tree;

    #[test]
    fn cgroup_v2_limit_less_usage() {
        let (_dir, root) = tree(&[
            ("proc/self/cgroup", "0::/box\n"),
            ("sys/fs/cgroup/box/memory.max", "1073741824\n"),
            ("sys/fs/cgroup/box/memory.current", "93741824\n"),
            (
                "sys/fs/cgroup/box/memory.stat",
                "anon 1000\ninactive_file 20000000\n",
            ),
        ]);
        let limit = cgroup_headroom(&root).unwrap();
        assert_eq!(
            limit.bytes, 1_000_000_000,
            "reclaimable page cache counts as free"
        );
        assert_eq!(allocatable(&root, 8 << 30).bytes, 1_000_000_000);
        assert_eq!(allocatable(&root, 500).bytes, 500);
    }

    #[test]
    fn cgroup_v1_mounted_at_the_group_and_no_limit() {
        let (_dir, root) = tree(&[
            ("proc/self/cgroup", "5:cpu:/\n4:memory:/job/7\n0::/\n"),
            ("sys/fs/cgroup/memory/memory.limit_in_bytes", "2147483648"),
            ("sys/fs/cgroup/memory/memory.usage_in_bytes", "147483648"),
        ]);
        assert_eq!(cgroup_headroom(&root).unwrap().bytes, 2_000_000_000);
        let (_dir, root) = tree(&[
            ("proc/self/cgroup", "4:memory:/\n"),
            (
                "sys/fs/cgroup/memory/memory.limit_in_bytes",
                "9223372036854771712",
            ),
        ]);
        assert_eq!(cgroup_headroom(&root), None);
        let (_dir, root) = tree(&[
            ("proc/self/cgroup", "0::/\n"),
            ("sys/fs/cgroup/memory.max", "max\n"),
        ]);
        assert_eq!(cgroup_headroom(&root), None);
    }
}
