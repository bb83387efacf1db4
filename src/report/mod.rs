//! Renderers: turn documents into text for people. A renderer never measures.

pub mod analysis_text;
pub(crate) mod campaign_table;
pub(crate) mod cell_table;
pub(crate) mod charts;
pub mod formats;
pub(crate) mod glossary;
pub(crate) mod host_text;
pub(crate) mod instance_table;
pub(crate) mod outline;
pub(crate) mod run_table;
pub(crate) mod search_table;
pub(crate) mod statements_table;
pub(crate) mod table;
pub(crate) mod tables;
#[cfg(test)]
mod tables_tests;

pub use formats::{html, markdown};
