//! What every layer may ask about an interruption: whether a stop was requested (long
//! untimed work such as a cache warm-up gives up early), and the files that must not outlive
//! the process even when a second signal ends it at once (pio's data file). `sweep::stop`
//! installs the signal handling that sets and uses them.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that asked for a stop; 0 while none has.
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Records the signal; returns false when a stop had been requested already.
pub(crate) fn request_stop(signal: i32) -> bool {
    STOP_SIGNAL
        .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
}

/// The signal that asked for a stop, if one has.
pub(crate) fn stop_signal() -> Option<i32> {
    match STOP_SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

pub(crate) fn stop_requested() -> bool {
    stop_signal().is_some()
}

static PATHS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn paths() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PATHS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Creates a file with `create` and registers the path it answers, under the lock that
/// [`remove_all`] takes: a signal between the two cannot leave the file unknown.
pub(crate) fn create_registered<T>(
    create: impl FnOnce() -> std::io::Result<T>,
    path_of: impl Fn(&T) -> &Path,
) -> std::io::Result<T> {
    let mut known = paths();
    let created = create()?;
    known.push(path_of(&created).to_path_buf());
    Ok(created)
}

/// Runs `finish` (a rename or removal of a registered file) and forgets `path`, under the
/// lock [`remove_all`] takes.
pub(crate) fn finish_registered<T>(path: &Path, finish: impl FnOnce() -> T) -> T {
    let mut known = paths();
    let finished = finish();
    known.retain(|known| known != path);
    finished
}

/// Removes every registered file; for the last moments of a process. The lock stays taken,
/// so no other thread creates or renames a registered file after it.
pub(crate) fn remove_all() {
    let mut known = paths();
    for path in known.drain(..) {
        let _ = std::fs::remove_file(path);
    }
    std::mem::forget(known);
}
