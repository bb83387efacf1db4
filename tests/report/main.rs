//! The report command on saved results, and its page in a real browser.
//! One test binary of several files (a binary per file took twice the build time).

#[path = "../common/mod.rs"]
mod common;

mod browser;
mod command;
mod inputs;
mod searches;
