//! The memory workload: random read-modify-write over a per-worker array several times the
//! last-level cache. Each next index is computed from the value just read, so accesses cannot
//! overlap: the loop is bound by memory latency, not bandwidth.

use anyhow::Result;

use crate::workload::PaddedJob;

use clap::Args;

use super::{
    ArrayArgs, BuildContext, InnerLoopArgs, WorkerJob, Workload, WorkloadInfo, WorkloadKind,
    WorkloadOptions,
};
use crate::rng::scramble;

/// Accesses of one default job: about 1 s at the ~170 ns per access (DRAM plus TLB miss)
/// measured on the KVM guest this was developed on.
pub(crate) const DEFAULT_JOB_ACCESSES: u64 = 6_000_000;

/// Accesses of one fixed-time slice (about a millisecond).
const SLICE_ACCESSES: u64 = 10_000;

/// One dependent read-modify-write per access; returns where the walk stopped.
#[inline(never)]
pub(crate) fn chase(array: &mut [u64], accesses: u64, start: usize) -> usize {
    let mask = array.len() - 1;
    let mut index = start & mask;
    for _ in 0..accesses {
        let value = array[index];
        array[index] = value.wrapping_add(1);
        index = (scramble(value ^ index as u64) as usize) & mask;
    }
    index
}

pub(crate) struct MemoryWorkload {
    array_words: usize,
    job_accesses: u64,
}

/// `run memory`'s own options.
#[derive(Debug, Clone, Default, Args)]
#[command(after_help = super::job_size_help("accesses", &crate::format::significant(DEFAULT_JOB_ACCESSES as f64)))]
pub struct MemoryArgs {
    #[command(flatten)]
    pub no_intervals: super::NoIntervals,
    #[command(flatten)]
    pub no_campaign: super::NoCampaign,
    #[command(flatten)]
    pub array: ArrayArgs,
    #[command(flatten)]
    pub loops: InnerLoopArgs,
}

impl WorkloadOptions for MemoryArgs {
    fn build(&self, context: &BuildContext) -> Result<Box<dyn Workload>> {
        let job_size = self.loops.job_size(context.job_size, 50_000)?;
        Ok(Box::new(MemoryWorkload::new(
            self.array.bytes(context.topology)?,
            job_size,
        )?))
    }
}

impl MemoryWorkload {
    /// Arrays of `bytes` each (see [`ArrayArgs::bytes`]).
    pub(crate) fn new(bytes: u64, job_size: Option<u64>) -> Result<Self> {
        // A power of two lets the index be masked instead of divided.
        let array_words = usize::try_from(bytes / 8)
            .ok()
            .and_then(usize::checked_next_power_of_two)
            .ok_or_else(|| anyhow::anyhow!("--array-size {bytes} is too large"))?;
        let rounded = array_words as u64 * 8;
        if rounded != bytes {
            say!(
                "corescale: note: the memory workload's arrays are a power of two in size: {} asked, {} used",
                crate::format::bytes(bytes),
                crate::format::bytes(rounded)
            );
        }
        Ok(Self {
            array_words,
            job_accesses: job_size.unwrap_or(DEFAULT_JOB_ACCESSES),
        })
    }
}

impl Workload for MemoryWorkload {
    fn info(&self) -> WorkloadInfo {
        let bytes = self.array_words as u64 * 8;
        WorkloadInfo {
            kind: WorkloadKind::Memory.into(),
            unit: "accesses".to_string(),
            job_size: self.job_accesses,
            job_size_unit: "accesses".to_string(),
            shared_bytes: 0,
            bytes_per_worker: bytes,
            array_bytes: Some(bytes),
            description: "dependent random read-modify-write of u64 words (latency-bound)"
                .to_string(),
            shape: None,
            server_on_this_host: None,
        }
    }

    fn prepare(
        &self,
        worker: usize,
        _workers: usize,
        _rate: Option<f64>,
    ) -> anyhow::Result<PaddedJob> {
        let seed = worker as u64 + 1;
        let array = (0..self.array_words as u64)
            .map(|word| scramble(word ^ (seed << 40)))
            .collect();
        let mut job = MemoryJob {
            array,
            accesses: self.job_accesses,
            position: seed as usize,
        };
        // An untimed quarter job warms the TLB and caches the way every later job finds them.
        job.position = chase(&mut job.array, self.job_accesses / 4, job.position);
        Ok(PaddedJob::new(job))
    }
}

struct MemoryJob {
    array: Vec<u64>,
    accesses: u64,
    position: usize,
}

impl WorkerJob for MemoryJob {
    fn run_job(&mut self) -> anyhow::Result<u64> {
        self.position = chase(&mut self.array, self.accesses, self.position);
        Ok(self.accesses)
    }

    fn run_slice(&mut self) -> anyhow::Result<u64> {
        self.position = chase(&mut self.array, SLICE_ACCESSES, self.position);
        Ok(SLICE_ACCESSES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_access_writes_one_increment() {
        let mut array = vec![0u64; 1024];
        chase(&mut array, 5000, 3);
        assert_eq!(array.iter().sum::<u64>(), 5000);
        // The walk spreads over the array instead of cycling in a corner.
        assert!(array.iter().filter(|&&count| count > 0).count() > 512);
    }
}
