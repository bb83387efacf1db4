//! Workloads: what each worker does in a job. A workload is one file behind [`Workload`];
//! the runner knows nothing about any of them.

pub mod bandwidth;
pub mod cpu;
pub mod memory;

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
}

impl WorkloadKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Memory => "memory",
            Self::Bandwidth => "bandwidth",
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
    pub array_bytes: Option<u64>,
    pub description: String,
}

/// A load generator: describes itself and builds per-worker state.
pub trait Workload: Send + Sync {
    fn info(&self) -> WorkloadInfo;

    /// Builds one worker's private state (allocating and touching its memory) before any
    /// timing starts. Runs on the worker's own thread, after pinning, so memory is local.
    fn prepare(&self, worker: usize) -> Box<dyn WorkerJob>;
}

/// One worker's private state and loops. Nothing here is shared between workers.
pub trait WorkerJob: Send {
    /// One fixed-work job; returns the operations done.
    fn run_job(&mut self) -> u64;

    /// A short slice of work (about a millisecond) for fixed-time runs; returns operations.
    fn run_slice(&mut self) -> u64;
}

/// Workers' states sit in separate heap blocks; padding them to cache lines keeps one
/// worker's writes from invalidating a line another worker reads.
impl<T: WorkerJob> WorkerJob for CachePadded<T> {
    fn run_job(&mut self) -> u64 {
        (**self).run_job()
    }

    fn run_slice(&mut self) -> u64 {
        (**self).run_slice()
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
    })
}

/// Default array size for the memory workloads: 4x the last-level cache, so almost every
/// access misses it; 256 MiB when the cache size is unknown.
pub fn default_array_bytes(topology: &Topology) -> u64 {
    topology
        .last_level_cache_bytes()
        .map_or(256 << 20, |bytes| bytes * 4)
}
