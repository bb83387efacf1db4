//! Load levels and the runner that measures them.

pub mod campaign;
pub mod export;
mod level_end;
pub(crate) mod levels;
pub(crate) mod plan;
pub mod progress;
pub mod runner;
pub(crate) mod search;
pub(crate) mod search_probe;
mod server_sampler;
pub mod settings;
pub(crate) mod steps;
pub(crate) mod stop;
#[cfg(test)]
mod tests;
mod worker;
