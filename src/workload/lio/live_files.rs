//! The list of this user's live pio data files, kept in the state directory
//! (`$XDG_STATE_HOME/corescale/pio-data-files`, else `~/.local/state/corescale/...`): a run
//! killed by SIGKILL leaves its file in its `--data-dir`, and if that directory is never
//! used again, the next pio run anywhere still finds the file through this list.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

/// Where the list lives, if the environment names a state or home directory.
fn list_path() -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/state"))
        })?;
    Some(state.join("corescale").join("pio-data-files"))
}

/// Runs `change` on the paths of the list at `path` under an exclusive lock on it, and
/// writes the result back. A list that cannot be opened is skipped: it only helps find
/// leftovers.
fn update(path: &Path, change: impl FnOnce(&mut Vec<PathBuf>)) {
    if let Some(parent) = path.parent()
        && fs::create_dir_all(parent).is_err()
    {
        return;
    }
    let Ok(file) = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
    else {
        return;
    };
    let Ok(mut file) = Flock::lock(file, FlockArg::LockExclusive) else {
        return;
    };
    let mut text = String::new();
    if file.read_to_string(&mut text).is_err() {
        return;
    }
    let mut paths: Vec<PathBuf> = text
        .lines()
        .filter(|line| line.starts_with('/'))
        .map(PathBuf::from)
        .collect();
    let before = paths.clone();
    change(&mut paths);
    paths.dedup();
    if paths == before {
        return;
    }
    let written: String = paths
        .iter()
        .map(|path| format!("{}\n", path.display()))
        .collect();
    let rewrite = |file: &mut File| -> std::io::Result<()> {
        file.seek(SeekFrom::Start(0))?;
        file.set_len(0)?;
        file.write_all(written.as_bytes())
    };
    let _ = rewrite(&mut file);
}

/// The list of one user's live data files.
pub struct LiveFiles(PathBuf);

impl LiveFiles {
    /// The list in this user's state directory.
    pub fn here() -> Option<Self> {
        list_path().map(Self)
    }

    /// Adds a data file, about to be created.
    pub fn add(&self, file: &Path) {
        update(&self.0, |paths| paths.push(file.to_path_buf()));
    }

    /// Forgets a data file, removed.
    pub fn remove(&self, file: &Path) {
        update(&self.0, |paths| paths.retain(|known| known != file));
    }

    /// The data files the list names outside `directory`.
    pub fn elsewhere(&self, directory: &Path) -> Vec<PathBuf> {
        let mut found = Vec::new();
        update(&self.0, |paths| {
            found = paths
                .iter()
                .filter(|path| path.parent() != Some(directory))
                .cloned()
                .collect();
        });
        found
    }

    /// Drops the entries whose file is gone (removed by a scan, or by hand), but those `live`
    /// says a running run holds: their file may be listed and not yet created.
    pub fn prune(&self, live: impl Fn(&Path) -> bool) {
        update(&self.0, |paths| {
            paths.retain(|path| path.symlink_metadata().is_ok() || live(path));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_added_found_elsewhere_and_forgotten() {
        let state = tempfile::tempdir().unwrap();
        let list = LiveFiles(state.path().join("corescale/pio-data-files"));
        let (add, remove) = (
            |file: &Path| list.add(file),
            |file: &Path| list.remove(file),
        );
        let elsewhere = |directory: &Path| list.elsewhere(directory);
        let here = tempfile::tempdir().unwrap();
        let there = tempfile::tempdir().unwrap();
        let (mine, left) = (here.path().join("a.dat"), there.path().join("b.dat"));
        fs::write(&mine, b"x").unwrap();
        fs::write(&left, b"y").unwrap();
        add(&mine);
        add(&left);
        add(&there.path().join("gone.dat"));
        // Listed by a live run, not yet created.
        let coming = there.path().join("coming.dat");
        add(&coming);
        list.prune(|path| path == coming);
        assert_eq!(elsewhere(here.path()), vec![left.clone(), coming.clone()]);
        let listed = fs::read_to_string(state.path().join("corescale/pio-data-files")).unwrap();
        assert_eq!(
            listed.lines().count(),
            3,
            "the missing file was dropped, the coming one kept: {listed}"
        );
        remove(&coming);
        remove(&left);
        assert!(elsewhere(here.path()).is_empty());
        assert_eq!(elsewhere(there.path()), vec![mine]);
    }
}
