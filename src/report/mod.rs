//! Renderers: turn documents into text for people. A renderer never measures.

pub mod analysis_text;
pub(crate) mod charts;
pub(crate) mod host_text;
pub mod html;
pub mod markdown;
pub(crate) mod outline;
pub(crate) mod output;
pub(crate) mod run_table;
pub(crate) mod table;
pub(crate) mod tables;
