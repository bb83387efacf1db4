//! The production workload itself: `corescale capture` reads a server's log into a replay
//! file, and `run replay` sends it again at rising speeds under the same sweep, latency
//! and verdicts as the other database workloads. Its SQL is the application's own.

pub mod capture;
pub mod class;
mod commit_order;
pub mod file;
pub mod fingerprint;
pub mod load;
pub mod log_time;
pub mod mysql_log;
pub mod options;
pub mod pg_log;
mod powers;
pub mod run;
mod session;
pub mod settings;
