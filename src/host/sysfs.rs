//! Small readers for sysfs/procfs text files, all relative to a root directory so tests can
//! feed fixture trees instead of the live machine.

use std::path::{Path, PathBuf};

/// A view of the filesystem rooted at `root` ("/" for the live machine).
#[derive(Debug, Clone)]
pub struct FsRoot {
    root: PathBuf,
}

/// A machine tree of the given files (path below the root, text) in a temporary
/// directory, for unit tests: the directory lives as long as the guard.
#[cfg(test)]
pub(crate) fn fixture_tree(files: &[(&str, &str)]) -> (tempfile::TempDir, FsRoot) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let root = FsRoot::new(dir.path());
    (dir, root)
}

impl FsRoot {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// True when this view is the live machine, where CPUID may be consulted too.
    pub fn is_live(&self) -> bool {
        self.root == Path::new("/")
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative.trim_start_matches('/'))
    }

    /// The trimmed contents of a file, or None when it is absent or unreadable.
    pub fn read(&self, relative: &str) -> Option<String> {
        std::fs::read_to_string(self.path(relative))
            .ok()
            .map(|text| text.trim().to_string())
    }

    pub fn read_u64(&self, relative: &str) -> Option<u64> {
        self.read(relative)?.parse().ok()
    }

    /// Names of the entries of a directory that start with `prefix` and end in a number,
    /// returned as those numbers in ascending order (cpu0, cpu1, node0, index3, ...).
    pub fn numbered_entries(&self, relative: &str, prefix: &str) -> Vec<usize> {
        let Ok(entries) = std::fs::read_dir(self.path(relative)) else {
            return Vec::new();
        };
        let mut numbers: Vec<usize> = entries
            .filter_map(|entry| entry.ok())
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                name.strip_prefix(prefix)?.parse().ok()
            })
            .collect();
        numbers.sort_unstable();
        numbers
    }
}

/// Parses a kernel CPU list such as "0-3,8,10-11".
pub fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|part| !part.is_empty()) {
        match part.split_once('-') {
            Some((first, last)) => {
                let (first, last): (usize, usize) = (first.parse().ok()?, last.parse().ok()?);
                if last < first {
                    return None;
                }
                cpus.extend(first..=last);
            }
            None => cpus.push(part.parse().ok()?),
        }
    }
    Some(cpus)
}

/// Parses a sysfs cache size such as "32K", "1024K" or "105M" into bytes.
pub fn parse_cache_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, multiplier) = match text.chars().last()? {
        'K' => (&text[..text.len() - 1], 1024),
        'M' => (&text[..text.len() - 1], 1024 * 1024),
        'G' => (&text[..text.len() - 1], 1024 * 1024 * 1024),
        _ => (text, 1),
    };
    digits.parse::<u64>().ok().map(|value| value * multiplier)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_expand_ranges_and_singles() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list("5"), Some(vec![5]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("a"), None);
    }

    #[test]
    fn cache_sizes_understand_suffixes() {
        assert_eq!(parse_cache_size("32K"), Some(32 * 1024));
        assert_eq!(parse_cache_size("105M"), Some(105 * 1024 * 1024));
        assert_eq!(parse_cache_size("512"), Some(512));
        assert_eq!(parse_cache_size("xK"), None);
    }
}
