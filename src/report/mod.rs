//! Renderers: turn documents into text for people. A renderer never measures.

pub mod host_text;
pub mod run_table;
pub mod table;
pub mod units;
