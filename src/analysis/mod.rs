//! Turning samples into figures: per-level statistics, speed, capacity, speedup.

pub mod compare;
pub mod findings;
pub mod fit;
pub mod scaling;
pub mod series;
pub mod stats;
pub mod study;
pub mod summary;
