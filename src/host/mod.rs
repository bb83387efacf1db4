//! What the machine is and what it is doing: topology, OS figures, hardware counters, pinning.

pub mod counters;
pub mod interference;
pub mod memory_limit;
pub mod os_stats;
pub mod pinning;
pub mod sysfs;
pub mod topology;

pub use topology::{HostInfo, Topology};
