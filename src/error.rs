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

/// Exit code for an error: 2 when any cause is a [`UsageError`], else 1.
pub fn exit_code(error: &anyhow::Error) -> i32 {
    if error.chain().any(|cause| cause.is::<UsageError>()) {
        2
    } else {
        1
    }
}
