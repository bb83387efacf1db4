//! Load levels and the runner that measures them.

pub mod plan;
pub mod progress;
pub mod runner;
pub mod stop;
