//! What the result document records of the workload a run measured: its name, unit and
//! job, a database job's shape, how each session connected, and a cluster's level instance
//! by instance. The persisted `corescale/1` types live here, in `result`, and the workloads
//! fill them: a change inside a workload cannot change the file format.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::latency::Percentiles;

/// A workload's name as the document records it ("cpu", "tpcc", "replay", ...): the
/// workloads table's. A document read back may name one this corescale does not know (a
/// newer one's); it is shown as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct WorkloadName(Cow<'static, str>);

impl WorkloadName {
    pub const fn new(name: &'static str) -> Self {
        Self(Cow::Borrowed(name))
    }

    pub fn name(&self) -> &str {
        &self.0
    }
}

/// A description of the workload as the result document records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadInfo {
    /// The workload's name in the workloads table (`run NAME`).
    pub kind: WorkloadName,
    /// What one counted operation is: "iterations", "accesses", "bytes".
    pub unit: String,
    /// Operations of one fixed-work job.
    pub job_size: u64,
    /// What `job_size` counts when it differs from `unit` (bandwidth: passes over the arrays).
    pub job_size_unit: String,
    /// Bytes each worker allocates (0 for cpu).
    pub bytes_per_worker: u64,
    /// Bytes allocated once for all workers (the lio buffer cache).
    #[serde(default)]
    pub shared_bytes: u64,
    pub array_bytes: Option<u64>,
    pub description: String,
    /// What a database job was, beyond its workload and size: only runs of one shape compare
    /// by speed or capacity (db runs; none for the others).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<JobShape>,
    /// A database workload's server: on this host (its cores are this host's) or elsewhere
    /// (`report` then knows them only from `--cores` or `--nodes`). None for the workloads
    /// that run on this host itself, and in documents written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_on_this_host: Option<bool>,
}

/// A database job's shape: the engine, the statement, how many statements go per round trip,
/// and whether the load was paced (open loop) or as fast as answered (closed loop).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobShape {
    /// The product and major version: "PostgreSQL 15", "MariaDB 10.11".
    pub engine: String,
    /// The statement: "work unit 64, 20% updates of 64 rows".
    pub statement: String,
    /// Blocks one select visits by the database's own count, measured before the run.
    pub blocks_per_statement: f64,
    /// Statements per round trip: 1 one at a time, 32 pipelined, 200 looped in the server.
    pub pipeline_depth: u64,
    /// Whether the load was paced (`--rate`): then even its closed-loop level is one
    /// statement at a time.
    pub open_loop: bool,
    /// The seed of random arrivals (`--arrivals poisson`), drawn anew each run: `--seed`
    /// repeats them. Not part of the job: two runs of one job differ in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals_seed: Option<u64>,
}

impl JobShape {
    /// The shape in words, as the report names a job; the measured blocks are said, not
    /// compared (a rounding apart in two runs of one setup).
    pub fn describe(&self) -> String {
        format!(
            "{}, {}, {} blocks per select, {} statement{} per round trip, {} loop",
            self.engine,
            self.statement,
            crate::format::significant(self.blocks_per_statement),
            self.pipeline_depth,
            if self.pipeline_depth == 1 { "" } else { "s" },
            if self.open_loop { "open" } else { "closed" }
        )
    }

    /// What must be equal for two runs to be the same job.
    pub fn key(&self) -> String {
        format!(
            "{}, {}, {} statement{} per round trip, {} loop",
            self.engine,
            self.statement,
            self.pipeline_depth,
            if self.pipeline_depth == 1 { "" } else { "s" },
            if self.open_loop { "open" } else { "closed" }
        )
    }
}

/// How one session reached its server: over TLS, with its protocol and cipher, or in clear
/// text. Recorded per level, so a `prefer` that fell back to clear text is seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionConnection {
    pub session: usize,
    pub tls: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cipher: Option<String>,
}

/// What an instance does in its cluster, as the document records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstanceRole {
    /// Takes writes: a primary, a RAC instance, a Galera node.
    Primary,
    /// Replays another instance's changes and takes no writes.
    Replica,
}

impl std::fmt::Display for InstanceRole {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(match self {
            InstanceRole::Primary => "primary",
            InstanceRole::Replica => "replica",
        })
    }
}

/// One instance's part of a level: `levels[].instances[]` in the result document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceFigures {
    /// The instance's target, as shown (its password hidden).
    pub instance: String,
    pub role: InstanceRole,
    pub sessions: usize,
    /// Statements its sessions had answered, and per second of the level.
    pub statements: f64,
    pub statements_per_s: f64,
    /// The instance's own block counters over the level (None: they could not be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_lio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_pio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_lio_per_s: Option<f64>,
    /// CPU seconds the instance spent for its sessions, where measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_cpu_s: Option<f64>,
    /// Its sessions' response times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Percentiles>,
    /// Its share of the level's sessions and of the statements answered.
    pub share_of_sessions: f64,
    pub share_of_work: f64,
    /// Why some of its sessions ended early (the instance went away), and how many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions_failed: Option<usize>,
}

/// The workload figures the result itself reads back (the rate columns' older place, the
/// cache table), by the names the workloads record them under. Each workload's test checks
/// its declaration against these: renaming a field cannot change what is read silently.
pub mod figure_names {
    /// The db workload's (SLOB's method on a database).
    pub const DB_LIO_PER_S: &str = "db_lio_per_s";
    pub const DB_LIO_PER_S_PER_WORKER: &str = "db_lio_per_s_per_worker";
    pub const DB_CPU_S: &str = "db_cpu_s";
    pub const DB_HIT_RATIO: &str = "db_hit_ratio";
    pub const DB_PIO_PER_S: &str = "db_pio_per_s";
    /// lio's and pio's (the in-process buffer cache).
    pub const CACHE_HIT_RATIO: &str = "cache_hit_ratio";
    pub const LATCH_GETS: &str = "latch_gets";
    pub const LATCH_MISSES: &str = "latch_misses";
    pub const PIO_PER_S: &str = "pio_per_s";
    pub const READ_US_P99: &str = "read_us_p99";
}

/// Said wherever order entry's NOPM is shown, as HammerDB says of its own.
pub const NOT_AUDITED: &str =
    "derived from TPC-C; not an audited TPC-C result, and not comparable with one";
