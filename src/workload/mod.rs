//! Workloads: what each worker does in a job. A workload is one file behind [`Workload`];
//! the runner knows nothing about any of them.

pub mod bandwidth;
pub mod cpu;
pub mod db;
pub mod lio;
pub mod memory;
pub mod rng;

use std::collections::BTreeMap;

use anyhow::Result;
use clap::ValueEnum;
use crossbeam_utils::CachePadded;
use serde::{Deserialize, Serialize};

use crate::host::Topology;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadKind {
    /// Instruction-bound integer loop in registers.
    Cpu,
    /// Dependent random read-modify-write over a large per-worker array (memory latency).
    Memory,
    /// STREAM-style triad over three large per-worker arrays (memory bandwidth).
    Bandwidth,
    /// SLOB-method logical IO through an in-process shared buffer cache.
    Lio,
    /// The same engine with a cache smaller than the data, reading misses from a data file.
    Pio,
    /// The SLOB/pgio method against a real database (--target URL).
    Db,
}

impl WorkloadKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Memory => "memory",
            Self::Bandwidth => "bandwidth",
            Self::Lio => "lio",
            Self::Pio => "pio",
            Self::Db => "db",
        }
    }
}

/// What the user asked for; the workload fills in defaults from the topology.
#[derive(Debug, Clone, Default)]
pub struct WorkloadRequest {
    /// Operations per job in the workload's own unit (iterations, accesses, passes).
    pub job_size: Option<u64>,
    /// Bytes per array, for the memory workloads.
    pub array_bytes: Option<u64>,
    /// The buffer-cache engine's settings, for lio and pio.
    pub slob: SlobRequest,
    /// The largest worker count of the plan (sizes per-session schemas).
    pub max_workers: usize,
    /// The database target and its session settings, for `db`.
    pub database: Option<(db::target::Target, db::DbOptions)>,
}

/// SLOB-method settings as the user gave them; unset ones get the engine's defaults.
#[derive(Debug, Clone, Default)]
pub struct SlobRequest {
    pub block_bytes: Option<u64>,
    /// Rows (one-row blocks) per schema.
    pub rows_per_schema: Option<u64>,
    pub schemas: Option<u64>,
    pub single_schema: bool,
    pub work_unit: Option<u64>,
    pub update_share: f64,
    /// Share of statements in the hot region, and its size in rows.
    pub hotspot: Option<(f64, Option<u64>)>,
    pub think_time: Option<std::time::Duration>,
    /// Cache size in blocks, for pio.
    pub cache_blocks: Option<u64>,
    pub data_dir: Option<std::path::PathBuf>,
    pub direct_path: bool,
}

/// A description of the workload as the result document records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadInfo {
    pub kind: WorkloadKind,
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
}

/// Named figures a workload adds to a level (LIO/s, latch misses, hit ratio, ...).
pub type Counters = BTreeMap<String, f64>;

/// What the runner measured over a level, for workloads that derive figures from it.
#[derive(Debug, Clone, Copy)]
pub struct LevelTotals {
    pub workers: usize,
    /// Wall time of the measured batches.
    pub elapsed_s: f64,
    /// Thread CPU time of all jobs.
    pub cpu_s: f64,
    pub ops: u64,
}

/// A load generator: describes itself and builds per-worker state.
pub trait Workload: Send + Sync {
    fn info(&self) -> WorkloadInfo;

    /// Builds shared data (the lio buffer cache and its tables) once, after the memory it
    /// needs was checked and before any level; its time is reported apart from measurements.
    fn setup(&mut self) -> Result<()> {
        Ok(())
    }

    /// Builds one worker's private state (allocating and touching its memory, or opening a
    /// session) before any timing starts. Runs on the worker's own thread, after pinning.
    fn prepare(&self, worker: usize) -> Result<Box<dyn WorkerJob>>;

    /// Fixed-time jobs of this length unless the user chose otherwise (rate workloads).
    fn default_duration(&self) -> Option<std::time::Duration> {
        None
    }

    /// Whether each worker needs a CPU of its own: then workers crowded onto fewer CPUs than
    /// they could have make a level disturbed. Workloads that wait (for reads, for a server)
    /// say no.
    fn cpu_bound(&self) -> bool {
        true
    }

    /// Whether a server on this host works for the workers (a local database): its CPU time
    /// and up to one runnable thread per worker are part of the load, not interference.
    fn local_server(&self) -> bool {
        false
    }

    /// Called on the main thread just before a level's first batch.
    fn level_started(&self) -> Result<()> {
        Ok(())
    }

    /// Figures for a level from the sessions' counters and the runner's totals; called on the
    /// main thread after the level's last batch.
    fn level_figures(&self, _sessions: &[Counters], _totals: &LevelTotals) -> Result<Counters> {
        Ok(Counters::new())
    }

    /// What a level's figures cannot vouch for (an LIO test that was not cached, ...).
    fn level_warnings(&self, _figures: &Counters) -> Vec<String> {
        Vec::new()
    }
}

/// One worker's private state and loops. Nothing here is shared between workers.
pub trait WorkerJob: Send {
    /// One fixed-work job; returns the operations done.
    fn run_job(&mut self) -> Result<u64>;

    /// A short slice of work (about a millisecond) for fixed-time runs; returns operations.
    fn run_slice(&mut self) -> Result<u64>;

    /// Finishes work still in flight when a fixed-time window ends (pipelined statements);
    /// runs inside the window and returns operations.
    fn end_window(&mut self) -> Result<u64> {
        Ok(0)
    }

    /// This session's own counters, read once after the level's last batch.
    fn counters(&mut self) -> Counters {
        Counters::new()
    }
}

/// Workers' states sit in separate heap blocks; padding them to cache lines keeps one
/// worker's writes from invalidating a line another worker reads.
impl<T: WorkerJob> WorkerJob for CachePadded<T> {
    fn run_job(&mut self) -> Result<u64> {
        (**self).run_job()
    }

    fn run_slice(&mut self) -> Result<u64> {
        (**self).run_slice()
    }

    fn end_window(&mut self) -> Result<u64> {
        (**self).end_window()
    }

    fn counters(&mut self) -> Counters {
        (**self).counters()
    }
}

/// Builds the requested workload for this host.
pub fn build(
    kind: WorkloadKind,
    request: &WorkloadRequest,
    topology: &Topology,
) -> Result<Box<dyn Workload>> {
    Ok(match kind {
        WorkloadKind::Cpu => Box::new(cpu::CpuWorkload::new(request)),
        WorkloadKind::Memory => Box::new(memory::MemoryWorkload::new(request, topology)?),
        WorkloadKind::Bandwidth => Box::new(bandwidth::BandwidthWorkload::new(request, topology)?),
        WorkloadKind::Lio | WorkloadKind::Pio => {
            Box::new(lio::from_request(kind, request, topology)?)
        }
        WorkloadKind::Db => {
            let (target, options) = request.database.clone().ok_or_else(|| {
                anyhow::anyhow!("the db workload needs --target URL, e.g. postgres://postgres@127.0.0.1:5432/test")
            })?;
            Box::new(db::DbWorkload::new(&target, options)?)
        }
    })
}

/// Default array size for the memory workloads: 4x the last-level cache, so almost every
/// access misses it; 256 MiB when the cache size is unknown.
pub fn default_array_bytes(topology: &Topology) -> u64 {
    topology
        .last_level_cache_bytes()
        .map_or(256 << 20, |bytes| bytes * 4)
}
