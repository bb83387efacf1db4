//! Turning samples into figures: per-level statistics, speed, capacity, speedup.

pub mod compare;
pub mod findings;
pub mod fit;
pub mod fleet;
pub mod input;
#[cfg(test)]
mod known_answers;
pub mod model;
pub mod noise;
pub mod scaling;
pub mod segments;
pub mod series;
pub mod study;
pub mod synthetic;
