//! corescale: load-test a server's CPUs and memory with 1..N workers and measure how it scales.
//!
//! Data flows one way: `sweep` runs `workload`s on the `host` and records a `result`
//! document; `analysis` derives figures from it; `report` renders them.

pub mod analysis;
pub mod cli;
pub mod commands;
pub mod error;
pub mod format;
pub mod host;
pub mod interrupt;
pub mod redact;
pub mod report;
pub mod result;
pub mod stats;
pub mod sweep;
pub mod values;
pub mod workload;
