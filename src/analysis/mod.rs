//! Turning samples into figures: per-level statistics, speed, capacity, speedup.

pub mod stats;
pub mod summary;
