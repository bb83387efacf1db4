//! Ctrl-C handling: the first press asks the runner to stop after the current batch and keep
//! what was measured; a second press exits at once (result files are always whole, because
//! they are replaced atomically).

use std::sync::atomic::{AtomicBool, Ordering};

static STOP_REQUESTED: AtomicBool = AtomicBool::new(false);

/// Exit code of a run stopped by the user, as shells report SIGINT.
pub const INTERRUPTED_EXIT_CODE: i32 = 130;

pub fn install_handler() {
    let installed = ctrlc::set_handler(|| {
        if STOP_REQUESTED.swap(true, Ordering::SeqCst) {
            eprintln!("\ncorescale: stopped at once; files hold the levels completed so far");
            std::process::exit(INTERRUPTED_EXIT_CODE);
        }
        eprintln!("\ncorescale: stopping after the current batch (press Ctrl-C again to stop now)");
    });
    if let Err(error) = installed {
        eprintln!("corescale: warning: Ctrl-C will not stop cleanly: {error}");
    }
}

pub fn stop_requested() -> bool {
    STOP_REQUESTED.load(Ordering::SeqCst)
}
