//! One module per subcommand: each wires run -> record -> analyse -> show.

pub mod about;
pub mod capture;
pub mod db;
pub mod host;
pub mod report;
pub mod run;

pub use crate::result::writer::write_out;
