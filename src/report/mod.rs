//! Renderers: turn documents into text for people. A renderer never measures.

pub mod analysis_text;
pub mod charts;
pub mod host_text;
pub mod html;
pub mod markdown;
pub mod output;
pub mod run_table;
pub mod table;
pub mod tables;
