//! Other tools' outputs: made here by real pgbench and sysbench, kept as fixtures, and hostile.
//! One test binary of several files (a binary per file took twice the build time).

#[path = "../common/mod.rs"]
mod common;

mod fixtures;
mod hostile_input;
mod made_here;
