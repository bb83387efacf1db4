//! Other processes of this program on this host, found by their command line, and the CPU
//! time they spend: a campaign's other parts on one client host are the campaign's own load,
//! not another's that disturbs the measurement.

use super::interference::{process_stat, ticks_per_second};
use super::sysfs::FsRoot;

/// The other parts of one campaign running on this host, each with its start time (a pid
/// reused by another process is not the part) and its CPU time when found.
pub(crate) struct OtherParts {
    parts: Vec<(u32, u64, f64)>,
}

impl OtherParts {
    /// Processes of this executable, other than this one, whose arguments hold
    /// `--campaign NAME` (or `--campaign=NAME`).
    pub(crate) fn find(root: &FsRoot, campaign: &str) -> Self {
        let own = std::fs::read_link(root.path("proc/self/exe")).ok();
        let pids = own.map_or_else(Vec::new, |own| {
            running_with(root, &own, "--campaign", campaign)
        });
        Self {
            parts: pids
                .into_iter()
                .filter_map(|pid| {
                    let (started, cpu) = cpu_time(root, pid)?;
                    Some((pid, started, cpu))
                })
                .collect(),
        }
    }

    /// Reads each part's CPU time afresh, as the level's window opens: the search through
    /// `/proc` is done before the level's start is waited for, off its start path.
    pub(crate) fn counted_from_now(mut self, root: &FsRoot) -> Self {
        self.parts.retain_mut(|(pid, started, cpu)| {
            match cpu_time(root, *pid).filter(|(now, _)| now == started) {
                Some((_, now)) => {
                    *cpu = now;
                    true
                }
                None => false,
            }
        });
        self
    }

    /// How many were found.
    pub(crate) fn count(&self) -> usize {
        self.parts.len()
    }

    /// Their CPUs' worth of busy time since `counted_from_now`, over `elapsed_s`: each part's
    /// own growth, so one that ended meanwhile (or whose pid another process took) adds
    /// nothing and takes nothing from the others.
    pub(crate) fn busy_cpus(&self, root: &FsRoot, elapsed_s: f64) -> f64 {
        let spent: f64 = self
            .parts
            .iter()
            .filter_map(|&(pid, started, before)| {
                let (started_now, after) = cpu_time(root, pid)?;
                (started_now == started).then(|| (after - before).max(0.0))
            })
            .sum();
        spent / elapsed_s.max(1e-9)
    }
}

/// A process's start time (clock ticks after boot) and its user + system CPU seconds.
fn cpu_time(root: &FsRoot, pid: u32) -> Option<(u64, f64)> {
    let stat = std::fs::read_to_string(root.path(&format!("proc/{pid}/stat"))).ok()?;
    let stat = process_stat(&stat)?;
    Some((
        stat.starttime,
        (stat.utime + stat.stime) as f64 / ticks_per_second(),
    ))
}

/// Pids of the processes other than this one running `program` (the same executable, else
/// the same program name, for another user's) with `flag value` or `flag=value` among their
/// arguments.
fn running_with(root: &FsRoot, program: &std::path::Path, flag: &str, value: &str) -> Vec<u32> {
    let own_pid = std::process::id();
    let name = program
        .file_name()
        .map(|name| name.to_string_lossy().to_string());
    let Ok(entries) = std::fs::read_dir(root.path("proc")) else {
        return Vec::new();
    };
    let joined = format!("{flag}={value}");
    let runs_it = |pid: u32, first: Option<&[u8]>| match std::fs::read_link(
        root.path(&format!("proc/{pid}/exe")),
    ) {
        Ok(exe) => exe == program,
        // Another user's process: its program name, as it was started.
        Err(_) => first.is_some_and(|first| {
            let first = String::from_utf8_lossy(first);
            name.as_deref()
                .is_some_and(|name| first.rsplit('/').next() == Some(name))
        }),
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != own_pid)
        .filter(|pid| {
            let Ok(cmdline) = std::fs::read(root.path(&format!("proc/{pid}/cmdline"))) else {
                return false;
            };
            let arguments: Vec<&[u8]> = cmdline.split(|byte| *byte == 0).collect();
            let named = arguments
                .windows(2)
                .any(|pair| pair[0] == flag.as_bytes() && pair[1] == value.as_bytes())
                || arguments.contains(&joined.as_bytes());
            named && runs_it(*pid, arguments.first().copied())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shells started with `--campaign c1` among their arguments (`sh -c '...' --campaign
    /// c1` keeps them in its command line) are found by that name, in either spelling; one
    /// of another campaign is not, nor a process of another program. Each shell waits on a
    /// builtin `read` of its stdin, so killing it leaves no child behind. The search waits
    /// for each shell's exec, as a campaign's parts are found after they started.
    #[test]
    fn the_other_parts_of_a_campaign_are_found_by_their_arguments() {
        let spawn = |arguments: &[&str]| {
            std::process::Command::new("sh")
                .args(["-c", "read line; true"])
                .args(arguments)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        };
        let mut children = [
            spawn(&["--campaign", "c1"]),
            spawn(&["--campaign=c1"]),
            spawn(&["--campaign", "c2"]),
        ];
        // A child just forked still shows this test's command line until its exec.
        for child in &children {
            let started = std::time::Instant::now();
            while !std::fs::read(format!("/proc/{}/cmdline", child.id()))
                .is_ok_and(|line| line.windows(10).any(|w| w == b"--campaign"))
            {
                assert!(started.elapsed().as_secs() < 10, "sh never started");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
        let root = FsRoot::new("/");
        let shell = std::fs::read_link(format!("/proc/{}/exe", children[0].id())).unwrap();
        let found = running_with(&root, &shell, "--campaign", "c1");
        let other_program = running_with(
            &root,
            std::path::Path::new("/bin/false"),
            "--campaign",
            "c1",
        );
        let pids: Vec<u32> = children.iter().map(|child| child.id()).collect();
        for child in &mut children {
            let _ = child.kill();
            let _ = child.wait();
        }
        assert!(
            found.contains(&pids[0]) && found.contains(&pids[1]),
            "{found:?} {pids:?}"
        );
        assert!(!found.contains(&pids[2]), "{found:?}");
        assert!(other_program.is_empty(), "{other_program:?}");
    }
}
