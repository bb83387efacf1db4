//! The database tests: sessions and levels on the local PostgreSQL and MariaDB, teardown by ownership, hostile roles, scripts, a target behind a tunnel.
//! One test binary of several files (a binary per file took twice the build time).

#[path = "../common/mod.rs"]
mod common;

mod hlog;
mod hostile;
mod metrics;
mod script;
mod search;
mod sessions;
mod teardown;
mod tpcc;
mod tpcc_run;
mod tunnel;
