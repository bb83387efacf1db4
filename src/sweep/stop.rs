//! Stopping on request: SIGINT (Ctrl-C), SIGTERM (timeout, systemd, Kubernetes, Ansible) and
//! SIGHUP (a closed terminal) ask the runner to stop after the current batch and keep what was
//! measured; a second signal exits at once, still removing temporary data files (result files
//! are always whole, because they are replaced atomically).

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use crate::interrupt;

/// Whether a signal is ignored by inheritance (`nohup` ignores SIGHUP): the SigIgn mask of
/// /proc/self/status, read rather than changed.
fn ignored(signal: i32) -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let mask = status
                .lines()
                .find_map(|line| line.strip_prefix("SigIgn:"))?;
            u64::from_str_radix(mask.trim(), 16).ok()
        })
        .is_some_and(|mask| mask & (1 << (signal - 1)) != 0)
}

pub(crate) fn install_handler() {
    let wanted: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
        .into_iter()
        .filter(|signal| !ignored(*signal))
        .collect();
    let mut signals = match signal_hook::iterator::Signals::new(wanted) {
        Ok(signals) => signals,
        Err(error) => {
            say!("corescale: warning: signals will not stop the run cleanly: {error}");
            return;
        }
    };
    std::thread::spawn(move || {
        for signal in signals.forever() {
            // A closed terminal makes writes fail: never let that end this thread.
            let say = |text: String| {
                use std::io::Write;
                let _ = writeln!(std::io::stderr(), "{text}");
            };
            if !interrupt::request_stop(signal) {
                interrupt::remove_all();
                say("\ncorescale: stopped at once; files hold the levels completed so far".into());
                std::process::exit(128 + signal);
            }
            say(format!(
                "\ncorescale: {} received: stopping after the current batch (send it again to stop now)",
                signal_name(signal)
            ));
        }
    });
}

/// For commands with nothing to finish gracefully (`report`): SIGINT, SIGTERM or SIGHUP end
/// the process at once, removing the temporary files it was writing (a report is drawn again
/// from the same inputs).
pub(crate) fn install_exit_handler() {
    let wanted: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
        .into_iter()
        .filter(|signal| !ignored(*signal))
        .collect();
    let Ok(mut signals) = signal_hook::iterator::Signals::new(wanted) else {
        // Without the handler a signal ends the process as it would anyway.
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            interrupt::remove_all();
            std::process::exit(128 + signal);
        }
    });
}

pub(crate) use interrupt::stop_requested;

/// The signal that stopped the run, if any: its name and the exit code it calls for.
pub(crate) fn stopped_by() -> Option<(&'static str, i32)> {
    interrupt::stop_signal().map(|signal| (signal_name(signal), 128 + signal))
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "SIGINT (Ctrl-C)",
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}
