//! The run command on the built-in workloads: levels, files, the host, secrets, campaigns.
//! One test binary of several files (a binary per file took twice the build time).

#[path = "../common/mod.rs"]
mod common;

mod campaign;
mod command;
mod files;
mod host;
mod lio;
mod secrets;
