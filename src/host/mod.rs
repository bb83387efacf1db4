//! What the machine is and what it is doing: topology, OS figures, hardware counters, pinning.

pub(crate) mod counters;
pub mod cpu_limit;
pub(crate) mod interference;
pub(crate) mod memory_limit;
pub(crate) mod os_stats;
pub(crate) mod pinning;
pub(crate) mod preflight;
pub(crate) mod processes;
pub mod sysfs;
pub mod topology;

pub use topology::{HostInfo, Topology};
