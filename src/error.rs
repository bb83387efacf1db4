//! Errors the user can fix by changing the command line: they exit with code 2.

use thiserror::Error;

/// A bad command line: unknown value, impossible worker count, unsupported output name.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{message}")]
pub struct UsageError {
    message: String,
}

impl UsageError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// Why an input the command line names cannot be opened: a path that is not there is a
/// usage error (exit 2) saying what to check; any other failure (permissions, I/O) is not.
pub fn unreadable(what: &str, error: std::io::Error) -> anyhow::Error {
    if error.kind() == std::io::ErrorKind::NotFound {
        UsageError::new(format!("{what} does not exist: check the path")).into()
    } else {
        anyhow::Error::new(error).context(format!("cannot read {what}"))
    }
}

/// Exit code for an error: 2 when any cause is a [`UsageError`] (also one an io error
/// carries, as a bounded reader's refusals do), else 1.
pub fn exit_code(error: &anyhow::Error) -> i32 {
    let usage = |cause: &(dyn std::error::Error + 'static)| {
        cause.is::<UsageError>()
            || cause
                .downcast_ref::<std::io::Error>()
                .and_then(std::io::Error::get_ref)
                .is_some_and(|inner| inner.is::<UsageError>())
    };
    if error.chain().any(usage) { 2 } else { 1 }
}

/// Locks what threads share (a monitor connection, a level's baseline). A thread that panicked
/// while holding it may have left it half-changed (a connection mid-exchange): the caller gets
/// this error, which ends the level or command, and never a second panic.
pub fn locked<'a, T>(
    mutex: &'a std::sync::Mutex<T>,
    what: &str,
) -> anyhow::Result<std::sync::MutexGuard<'a, T>> {
    mutex
        .lock()
        .map_err(|_| anyhow::anyhow!("{what} is unusable: a thread failed while using it"))
}

#[cfg(test)]
mod tests {
    use super::locked;

    #[test]
    fn a_poisoned_lock_is_an_error_not_a_panic() {
        let shared = std::sync::Mutex::new(1);
        assert_eq!(*locked(&shared, "the counter").unwrap(), 1);
        let _ = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let _held = shared.lock().unwrap();
                    panic!("a worker failed");
                })
                .join()
        });
        let error = locked(&shared, "the monitor connection").unwrap_err();
        assert_eq!(
            error.to_string(),
            "the monitor connection is unusable: a thread failed while using it"
        );
    }
}
