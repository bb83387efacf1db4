//! Turning samples into figures: per-level statistics, speed, capacity, speedup.

pub mod answer;
#[cfg(test)]
mod claims_tests;
pub(crate) mod compare;
pub(crate) mod findings;
pub(crate) mod fit;
pub(crate) mod fleet;
pub mod input;
#[cfg(test)]
mod known_answers;
pub mod latency;
pub mod migration;
pub mod model;
pub(crate) mod noise;
pub(crate) mod scaling;
pub(crate) mod searched;
pub(crate) mod segments;
pub mod series;
pub mod statements;
pub mod study;
/// Known-answer series for tests and the known-answers bench; not shipped in the binary.
#[cfg(any(test, feature = "testing"))]
pub mod synthetic;
