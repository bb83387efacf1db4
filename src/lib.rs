//! corescale: load-test a server's CPUs, memory and databases with 1..N workers and measure
//! how it scales.
//!
//! Data flows one way, and so do the modules' dependencies: leaves (values, stats, format,
//! ...), then host, latency and db, workload, result, sweep, analysis, report, and the binary's
//! cli and commands on top. The map, with what each module holds: docs/layout.md
//! (`tests/release/layers.rs` keeps it true).

// The console's print macros, shadowed for every module below: a closed standard output or
// error (`corescale run ... 2>&1 | head -1`) ends nothing and panics nowhere (std's panic on
// a failed write, exit 101); a run goes on to write its results, `report` its files.

/// `std::eprintln!` that ignores a closed standard error.
#[macro_export]
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stderr(), $($arg)*);
    }};
}

/// A `corescale: warning:` or `note:` message for standard error: wrapped to the terminal
/// when it is one, a line of its own for a log (`format::for_terminal`).
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        $crate::eprintln!("{}", $crate::format::for_terminal(&format!($($arg)*)));
    }};
}

/// `std::eprint!` that ignores a closed standard error.
#[macro_export]
macro_rules! eprint {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::write!(::std::io::stderr(), $($arg)*);
    }};
}

/// `std::println!` that ignores a closed standard output.
#[macro_export]
macro_rules! println {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stdout(), $($arg)*);
    }};
}

pub mod analysis;
pub mod cli;
pub mod commands;
pub mod db;
pub mod error;
pub(crate) mod format;
pub mod host;
pub mod input_file;
pub(crate) mod interrupt;
pub mod latency;
pub mod redact;
pub mod report;
pub mod result;
pub(crate) mod rng;
pub mod stats;
pub mod sweep;
pub(crate) mod values;
pub mod workload;
