//! The data file behind the pio cache: every block of every schema, read with pread into a
//! private aligned buffer — through O_DIRECT where the file system allows it, so reads reach
//! the device instead of the OS page cache — and written back with pwrite.
//!
//! The file is named after its process (`corescale-pio-<pid>-<random>.dat`) and flock'ed for
//! its whole life, so a later run can tell a file whose owner was killed (SIGKILL, OOM, a
//! crash: no handler removes it) from one in use, and remove the first kind. Before writing,
//! the run checks that the file and a margin fit in the directory's free space.

use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use anyhow::{Context, Result};
use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use nix::unistd::Pid;
use tempfile::NamedTempFile;

use super::cache::BlockSource;
use super::layout::{KeyOrder, Layout};
use super::live_files::LiveFiles;
use crate::error::UsageError;
use crate::format;

/// O_DIRECT wants buffers, offsets and sizes aligned to the device's logical block.
pub const ALIGNMENT: usize = 4096;

/// Every data file's name is `PREFIX<pid>-<RANDOM_CHARS alphanumerics>SUFFIX`; before the
/// pid was added it was `PREFIX<RANDOM_CHARS alphanumerics>SUFFIX`.
const PREFIX: &str = "corescale-pio-";
const SUFFIX: &str = ".dat";
const RANDOM_CHARS: usize = 6;

/// The free space a data file needs beyond its own size, in percent of it: a pio run must not
/// fill the volume it shares with others (a database's, perhaps) to the last block.
const SPARE_PERCENT: u64 = 10;

/// Held while this process scans a data directory or creates and locks its file there: its own
/// file, in the instant between creation and lock, must not look stale to its own scan.
static CREATING: Mutex<()> = Mutex::new(());

fn creating() -> MutexGuard<'static, ()> {
    CREATING.lock().unwrap_or_else(PoisonError::into_inner)
}

pub struct DataFile {
    /// Removed from disk when dropped (and by a second signal, through `cleanup`).
    temporary: NamedTempFile,
    /// Held for the file's life, and dropped after it is removed: a scan by another run
    /// (`remove_stale`) leaves a locked file alone.
    _lock: Flock<File>,
    reader: File,
    block_bytes: usize,
    /// Whether reads bypass the page cache.
    pub direct: bool,
}

impl Drop for DataFile {
    fn drop(&mut self) {
        // Removed and forgotten under the registry's lock: a second signal after it was
        // forgotten but before the temporary file's own removal would leave it behind.
        let path = self.temporary.path().to_path_buf();
        crate::interrupt::finish_registered(&path, || {
            let _ = std::fs::remove_file(&path);
        });
        if let Some(list) = LiveFiles::here() {
            list.remove(&absolute(self.temporary.path()));
        }
    }
}

impl DataFile {
    /// Writes every block of `layout` to a new file in `directory`, named after this process
    /// and locked. Call `remove_stale` and `check_free_space` first.
    pub fn create(directory: &Path, layout: &Layout, orders: &[KeyOrder]) -> Result<Self> {
        let list = LiveFiles::here();
        let (temporary, lock) = {
            let _creating = creating();
            // Registered as it is created, as report's files are: a second signal between
            // the two could otherwise leave it behind. Listed before it exists: a SIGKILL
            // right after its creation leaves a file the next run in any directory finds.
            let temporary = crate::interrupt::create_registered(
                || {
                    tempfile::Builder::new()
                        .prefix(&format!("{PREFIX}{}-", std::process::id()))
                        .rand_bytes(RANDOM_CHARS)
                        .suffix(SUFFIX)
                        .make_in(absolute(directory), |path| {
                            if let Some(list) = &list {
                                list.add(path);
                            }
                            OpenOptions::new()
                                .read(true)
                                .write(true)
                                .create_new(true)
                                .mode(0o600)
                                .open(path)
                        })
                },
                |temporary| temporary.path(),
            )
            .with_context(|| {
                format!(
                    "cannot create the pio data file in '{}': choose a writable --data-dir",
                    directory.display()
                )
            })?;
            let lock = temporary
                .as_file()
                .try_clone()
                .map_err(anyhow::Error::from)
                .and_then(|file| {
                    Flock::lock(file, FlockArg::LockExclusiveNonblock)
                        .map_err(|(_, errno)| anyhow::Error::from(errno))
                })
                .with_context(|| {
                    format!("locking the pio data file {}", temporary.path().display())
                })?;
            (temporary, lock)
        };
        let path = temporary.path();
        write_blocks(
            BufWriter::with_capacity(1 << 20, temporary.as_file()),
            path,
            layout,
            orders,
        )?;
        temporary
            .as_file()
            .sync_all()
            .with_context(|| writing(path))?;
        let (reader, direct) = open_direct(path)?;
        Ok(Self {
            temporary,
            _lock: lock,
            reader,
            block_bytes: layout.block_bytes(),
            direct,
        })
    }

    fn offset(&self, address: u64) -> u64 {
        address * self.block_bytes as u64
    }

    /// Reads one block into `scratch` (aligned, one block long); returns the read's ns.
    pub fn read_block(&self, address: u64, scratch: &mut [u8]) -> Result<u64> {
        let began = Instant::now();
        self.reader
            .read_exact_at(&mut scratch[..self.block_bytes], self.offset(address))
            .with_context(|| format!("reading block {address} of the pio data file"))?;
        Ok(began.elapsed().as_nanos() as u64)
    }
}

/// What a failed write of the data file says first: the path, for the file system to check.
fn writing(path: &Path) -> String {
    format!("writing the pio data file {}", path.display())
}

/// Writes every block of `layout` through `out`, the data file at `path`.
fn write_blocks(
    mut out: impl Write,
    path: &Path,
    layout: &Layout,
    orders: &[KeyOrder],
) -> Result<()> {
    let mut block = vec![0u64; layout.block_words];
    for address in 0..layout.total_blocks() {
        let schema = (address / layout.blocks_per_schema()) as usize;
        layout.fill_block(address, &orders[schema], &mut block);
        for word in &block {
            out.write_all(&word.to_ne_bytes())
                .with_context(|| writing(path))?;
        }
    }
    out.flush().with_context(|| writing(path))
}

/// Refuses, before anything is written, a data file of `file_bytes` that would leave
/// `directory`'s file system with less than `SPARE_PERCENT` of it to spare: running out of space
/// mid-write would cost the whole setup, and could stop whatever else writes there.
pub fn check_free_space(directory: &Path, file_bytes: u64) -> Result<()> {
    let stats = nix::sys::statvfs::statvfs(directory).map_err(|errno| {
        UsageError::new(format!(
            "cannot check the free space in the --data-dir {}: {errno}: choose an existing, writable directory",
            directory.display()
        ))
    })?;
    // The field types differ by platform (u32 or u64).
    let available = (stats.blocks_available() as u64).saturating_mul(stats.fragment_size() as u64);
    match free_space_problem(directory, file_bytes, available) {
        Some(problem) => Err(problem.into()),
        None => Ok(()),
    }
}

/// The usage error for a file of `file_bytes` in `directory` with `available` bytes free, if
/// they are too few.
fn free_space_problem(directory: &Path, file_bytes: u64, available: u64) -> Option<UsageError> {
    let spare = (u128::from(file_bytes) * u128::from(SPARE_PERCENT)).div_ceil(100);
    let spare = u64::try_from(spare).unwrap_or(u64::MAX);
    let needed = file_bytes.saturating_add(spare);
    (available < needed).then(|| {
        UsageError::new(format!(
            "not enough free space in {} for the pio data file: it needs {} (the file's {} and {}% to spare) and {} are free: give a smaller --scale or fewer --schemas, or another --data-dir",
            directory.display(),
            format::bytes(needed),
            format::bytes(file_bytes),
            SPARE_PERCENT,
            format::bytes(available),
        ))
    })
}

/// Whose a name in a data directory says it is, if it is a pio data file's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DataFileName {
    /// `corescale-pio-<pid>-<random>.dat`.
    Owned(i32),
    /// `corescale-pio-<random>.dat`, named before the pid was added.
    Legacy,
}

/// The owner named by a data file's name; None for any other name, which is never touched.
fn parse_name(name: &OsStr) -> Option<DataFileName> {
    let middle = name.to_str()?.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    let random =
        |text: &str| text.len() == RANDOM_CHARS && text.bytes().all(|c| c.is_ascii_alphanumeric());
    match middle.split_once('-') {
        None => random(middle).then_some(DataFileName::Legacy),
        Some((pid, rest)) => {
            let digits =
                !pid.is_empty() && !pid.starts_with('0') && pid.bytes().all(|c| c.is_ascii_digit());
            if !digits || !random(rest) {
                return None;
            }
            pid.parse().ok().map(DataFileName::Owned)
        }
    }
}

/// Removes the data files in `directory` whose run is gone (killed before it could remove
/// them: SIGKILL, the OOM killer, a crash), and returns one line per file found, removed or
/// left alone. Only regular files of this user with a data file's exact name are considered,
/// and a file whose lock is held stays.
pub fn remove_stale(directory: &Path) -> Result<Vec<String>> {
    let _creating = creating();
    let entries = fs::read_dir(directory).map_err(|error| {
        UsageError::new(format!(
            "cannot read the --data-dir {}: {error}: choose an existing, writable directory",
            directory.display()
        ))
    })?;
    let mut notes = Vec::new();
    for entry in entries.flatten() {
        if let Some(name) = parse_name(&entry.file_name())
            && let Some(note) = remove_if_stale(&entry.path(), name)
        {
            notes.push(note);
        }
    }
    // Files a killed run left in directories never used again, named by the list of live
    // files; those still in use there are another run's business, not this one's to report.
    if let Some(list) = LiveFiles::here() {
        for path in list.elsewhere(&absolute(directory)) {
            if let Some(name) = path.file_name().and_then(parse_name)
                && let Some(note) = remove_if_stale(&path, name)
                && !note.starts_with("left alone")
            {
                notes.push(note);
            }
        }
        // A running corescale's entry stays, its file created or about to be.
        list.prune(|path| {
            matches!(
                path.file_name().and_then(parse_name),
                Some(DataFileName::Owned(pid)) if running_corescale(pid)
            )
        });
    }
    Ok(notes)
}

/// `path` made absolute against the working directory, as the list of live files keeps it.
fn absolute(path: &Path) -> std::path::PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Removes one data file if no live run holds it; says what was done, if anything.
fn remove_if_stale(path: &Path, name: DataFileName) -> Option<String> {
    // Never through a symlink, and never another user's file.
    let seen = fs::symlink_metadata(path).ok()?;
    if !seen.file_type().is_file() || seen.uid() != nix::unistd::geteuid().as_raw() {
        return None;
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let opened = file.metadata().ok()?;
    if (opened.dev(), opened.ino()) != (seen.dev(), seen.ino()) {
        // Replaced between the two looks: leave it to the next run.
        return None;
    }
    let described = format!("{}, {}", path.display(), format::bytes(opened.len()));
    let owner = match name {
        DataFileName::Owned(pid) => format!("pid {pid}"),
        DataFileName::Legacy => "an older corescale".to_string(),
    };
    let _lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => lock,
        Err((_, Errno::EWOULDBLOCK)) => {
            return Some(format!(
                "left alone a data file in use by a running corescale ({owner}): {described}"
            ));
        }
        Err((_, errno)) => {
            return Some(format!(
                "left alone a data file that could not be locked ({errno}): {described}"
            ));
        }
    };
    // Unlocked, but its owner may be a run between creating and locking its file.
    if let DataFileName::Owned(pid) = name
        && running_corescale(pid)
    {
        return Some(format!(
            "left alone a data file a running corescale ({owner}) is creating: {described}"
        ));
    }
    let owner = match name {
        DataFileName::Owned(pid) => format!("pid {pid}, killed?"),
        DataFileName::Legacy => "killed?".to_string(),
    };
    match fs::remove_file(path) {
        Ok(()) => Some(format!(
            "removed a data file left by an earlier corescale run ({owner}): {described}"
        )),
        // Another run's scan removed it first.
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => Some(format!(
            "cannot remove a data file left by an earlier corescale run ({owner}): {described}: {error}"
        )),
    }
}

/// Whether `pid` is another live process of this user running corescale (compared by
/// /proc/PID/comm with this process's own). This process's pid in a file's name is a run
/// before it that had the same pid: in a container, corescale is often pid 1 every time.
fn running_corescale(pid: i32) -> bool {
    if pid <= 0 || pid as u32 == std::process::id() {
        return false;
    }
    if nix::sys::signal::kill(Pid::from_raw(pid), None).is_err() {
        // ESRCH: gone; EPERM: another user's process, which cannot own this user's file.
        return false;
    }
    let comm = |pid: &str| fs::read_to_string(format!("/proc/{pid}/comm"));
    match (comm(&pid.to_string()), comm("self")) {
        (Ok(theirs), Ok(ours)) => theirs == ours,
        // Without /proc, a live process may be a corescale: leave its file.
        _ => true,
    }
}

/// Opens for reading with O_DIRECT, falling back to buffered reads where it is refused
/// (tmpfs, some overlay file systems).
fn open_direct(path: &Path) -> Result<(File, bool)> {
    let direct = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(nix::libc::O_DIRECT)
        .open(path);
    match direct {
        Ok(file) => Ok((file, true)),
        Err(_) => {
            let file = OpenOptions::new().read(true).write(true).open(path)?;
            Ok((file, false))
        }
    }
}

/// A block-sized, ALIGNMENT-aligned window into an owned buffer, for O_DIRECT.
pub struct AlignedBlock {
    storage: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBlock {
    pub fn new(len: usize) -> Self {
        let storage = vec![0u8; len + ALIGNMENT];
        let start = storage.as_ptr().align_offset(ALIGNMENT);
        Self {
            storage,
            start,
            len,
        }
    }

    pub fn bytes(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

/// The word at `index` of a block read into bytes.
pub fn word_of(bytes: &[u8], index: usize) -> u64 {
    let start = index * 8;
    u64::from_ne_bytes(bytes[start..start + 8].try_into().expect("8 bytes"))
}

impl BlockSource for DataFile {
    fn read(&self, address: u64, scratch: &mut [u8], words: &[AtomicU64]) -> Result<u64> {
        let nanoseconds = self.read_block(address, scratch)?;
        for (index, word) in words.iter().enumerate() {
            word.store(word_of(scratch, index), Ordering::Relaxed);
        }
        Ok(nanoseconds)
    }

    fn write(&self, address: u64, scratch: &mut [u8], words: &[AtomicU64]) -> Result<()> {
        for (index, word) in words.iter().enumerate() {
            scratch[index * 8..index * 8 + 8]
                .copy_from_slice(&word.load(Ordering::Relaxed).to_ne_bytes());
        }
        self.reader
            .write_all_at(&scratch[..self.block_bytes], self.offset(address))
            .with_context(|| format!("writing block {address} back to the pio data file"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    fn parse(name: &str) -> Option<DataFileName> {
        parse_name(OsStr::new(name))
    }

    #[test]
    fn only_the_exact_data_file_names_are_recognised() {
        assert_eq!(
            parse("corescale-pio-4242-aZ09xy.dat"),
            Some(DataFileName::Owned(4242))
        );
        assert_eq!(
            parse("corescale-pio-1-abcdef.dat"),
            Some(DataFileName::Owned(1))
        );
        assert_eq!(
            parse("corescale-pio-Ab3dE9.dat"),
            Some(DataFileName::Legacy)
        );
        // An all-digit random part is still the old naming: no dash, no pid.
        assert_eq!(
            parse("corescale-pio-123456.dat"),
            Some(DataFileName::Legacy)
        );
        for other in [
            "corescale-pio-4242-aZ09xy.dat.bak",
            "corescale-pio-4242-aZ09xy.dat~",
            "xcorescale-pio-4242-aZ09xy.dat",
            "corescale-pio-4242-aZ09x.dat",
            "corescale-pio-4242-aZ09xyz.dat",
            "corescale-pio-4242-aZ-9xy.dat",
            "corescale-pio-4242-aZ.9xy.dat",
            "corescale-pio--aZ09xy.dat",
            "corescale-pio-0-aZ09xy.dat",
            "corescale-pio-042-aZ09xy.dat",
            "corescale-pio-+42-aZ09xy.dat",
            "corescale-pio-99999999999-aZ09xy.dat",
            "corescale-pio-abcde.dat",
            "corescale-pio-abcdefg.dat",
            "corescale-pio-.dat",
            "corescale-pio-4242-aZ09xy",
            "corescale-lio-4242-aZ09xy.dat",
            "data.dat",
        ] {
            assert_eq!(parse(other), None, "{other}");
        }
        let not_utf8 = OsString::from_vec(b"corescale-pio-1-abc\xffde.dat".to_vec());
        assert_eq!(parse_name(&not_utf8), None);
    }

    #[test]
    fn a_file_needs_a_tenth_of_its_size_to_spare() {
        let directory = Path::new("/srv/data");
        let gib = 1u64 << 30;
        assert!(free_space_problem(directory, gib, gib + gib.div_ceil(10)).is_none());
        assert!(free_space_problem(directory, gib, gib + gib.div_ceil(10) - 1).is_some());
        assert!(free_space_problem(directory, 0, 0).is_none());
        let problem = free_space_problem(directory, gib, gib).expect("too little space");
        assert_eq!(
            problem.to_string(),
            "not enough free space in /srv/data for the pio data file: it needs 1.1 GiB (the file's 1 GiB and 10% to spare) and 1 GiB are free: give a smaller --scale or fewer --schemas, or another --data-dir"
        );
        assert!(free_space_problem(directory, u64::MAX, u64::MAX - 1).is_some());
    }

    /// A writer whose disk is full.
    struct Full;

    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from_raw_os_error(nix::libc::ENOSPC))
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_names_the_file() {
        let layout = Layout::new(4096, 16, 1);
        let orders = [KeyOrder::new(16, 1)];
        let path = Path::new("/data/corescale-pio-7-abcdef.dat");
        let error = write_blocks(Full, path, &layout, &orders).expect_err("the disk is full");
        assert_eq!(
            format!("{error:#}"),
            "writing the pio data file /data/corescale-pio-7-abcdef.dat: No space left on device (os error 28)"
        );
    }

    fn names(directory: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(directory)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn stale_files_are_removed_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: usize| {
            let path = dir.path().join(name);
            fs::write(&path, vec![0u8; bytes]).unwrap();
            path
        };
        let me = std::process::id();
        // No process has this pid (above any pid_max), and none locks the file.
        write("corescale-pio-2147483647-dead01.dat", 2048);
        // The old naming, unlocked.
        write("corescale-pio-Old123.dat", 10);
        // A run before this one that had the same pid (a container's pid 1, say).
        write(&format!("corescale-pio-{me}-mine01.dat"), 0);
        // Locked: a live run's file.
        let live = write(&format!("corescale-pio-{me}-live01.dat"), 4096);
        let _held = Flock::lock(File::open(&live).unwrap(), FlockArg::LockExclusive).unwrap();
        // Names that are not a data file's, a directory and a symlink with a data file's name.
        write("corescale-pio-2147483647-dead01.dat.bak", 1);
        write("notes.dat", 1);
        fs::create_dir(dir.path().join("corescale-pio-2147483647-dir001.dat")).unwrap();
        let target = outside.path().join("precious");
        fs::write(&target, b"keep").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("corescale-pio-Link01.dat")).unwrap();

        let mut notes = remove_stale(dir.path()).unwrap();
        notes.sort();
        let path = |name: &str| dir.path().join(name).display().to_string();
        // Sorted as the notes are: where this process's pid sorts depends on its digits.
        let mut expected = vec![
            format!(
                "left alone a data file in use by a running corescale (pid {me}): {}, 4 KiB",
                live.display()
            ),
            format!(
                "removed a data file left by an earlier corescale run (killed?): {}, 10 B",
                path("corescale-pio-Old123.dat")
            ),
            format!(
                "removed a data file left by an earlier corescale run (pid 2147483647, killed?): {}, 2 KiB",
                path("corescale-pio-2147483647-dead01.dat")
            ),
            format!(
                "removed a data file left by an earlier corescale run (pid {me}, killed?): {}, 0 B",
                path(&format!("corescale-pio-{me}-mine01.dat"))
            ),
        ];
        expected.sort();
        assert_eq!(notes, expected);
        let mut kept = vec![
            "corescale-pio-2147483647-dead01.dat.bak".to_string(),
            "corescale-pio-2147483647-dir001.dat".to_string(),
            "corescale-pio-Link01.dat".to_string(),
            format!("corescale-pio-{me}-live01.dat"),
            "notes.dat".to_string(),
        ];
        kept.sort();
        assert_eq!(names(dir.path()), kept);
        assert_eq!(fs::read(&target).unwrap(), b"keep");
    }

    #[test]
    fn only_another_live_corescale_counts_as_a_running_owner() {
        // This process: its pid in a name is an earlier run's (a container's pid 1).
        assert!(!running_corescale(std::process::id() as i32));
        assert!(!running_corescale(i32::MAX));
        assert!(!running_corescale(0));
        // Alive, but not a corescale: the pid was reused.
        let mut other = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let reused = running_corescale(other.id() as i32);
        other.kill().unwrap();
        other.wait().unwrap();
        assert!(!reused);
    }

    #[test]
    fn a_missing_data_dir_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        for error in [
            remove_stale(&missing).unwrap_err(),
            check_free_space(&missing, 1).unwrap_err(),
        ] {
            assert!(error.is::<UsageError>(), "{error:#}");
            assert!(
                error.to_string().contains(&missing.display().to_string()),
                "{error:#}"
            );
        }
    }

    #[test]
    fn the_data_file_is_named_after_its_process_and_locked_while_it_lives() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(4096, 64, 1);
        let orders = [KeyOrder::new(64, 1)];
        let file = DataFile::create(dir.path(), &layout, &orders).unwrap();
        let [name] = &names(dir.path())[..] else {
            panic!("one data file: {:?}", names(dir.path()));
        };
        assert_eq!(
            parse(name),
            Some(DataFileName::Owned(std::process::id() as i32))
        );
        assert_eq!(
            fs::metadata(dir.path().join(name)).unwrap().len(),
            layout.file_bytes()
        );
        let notes = remove_stale(dir.path()).unwrap();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("left alone a data file in use"),
            "{notes:?}"
        );
        drop(file);
        assert!(names(dir.path()).is_empty());
    }
}
