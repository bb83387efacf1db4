//! The bandwidth workload: STREAM's triad a[i] = b[i] + s * c[i] over three per-worker arrays,
//! each several times the last-level cache. Counted as STREAM counts it: 24 bytes per element.

use anyhow::Result;
use clap::Args;

use crate::workload::PaddedJob;

use super::{
    ArrayArgs, BuildContext, WorkerJob, Workload, WorkloadInfo, WorkloadKind, WorkloadOptions,
};

/// Bytes STREAM counts per triad element: read b, read c, write a.
pub(crate) const BYTES_PER_ELEMENT: u64 = 24;

/// A default job moves about this many bytes (about 1 s at 10 GB/s).
const DEFAULT_JOB_BYTES: u64 = 10_000_000_000;

/// Elements of one fixed-time slice (6 MB moved, well under a millisecond).
const SLICE_ELEMENTS: usize = 256 * 1024;

const SCALAR: f64 = 3.0;

/// One triad over the whole arrays (or a chunk of them).
#[inline(never)]
pub(crate) fn triad(a: &mut [f64], b: &[f64], c: &[f64], scalar: f64) {
    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
        *a = b + scalar * c;
    }
}

pub(crate) struct BandwidthWorkload {
    elements: usize,
    job_passes: u64,
}

/// `run bandwidth`'s own options.
#[derive(Debug, Clone, Default, Args)]
#[command(after_help = super::job_size_help("passes over the arrays", &format!("enough to move {} GB", DEFAULT_JOB_BYTES / 1_000_000_000)))]
pub struct BandwidthArgs {
    #[command(flatten)]
    pub no_intervals: super::NoIntervals,
    #[command(flatten)]
    pub no_campaign: super::NoCampaign,
    #[command(flatten)]
    pub array: ArrayArgs,
}

impl WorkloadOptions for BandwidthArgs {
    fn build(&self, context: &BuildContext) -> Result<Box<dyn Workload>> {
        Ok(Box::new(BandwidthWorkload::new(
            self.array.bytes(context.topology)?,
            context.job_size,
        )?))
    }
}

impl BandwidthWorkload {
    /// Arrays of `bytes` each (see [`ArrayArgs::bytes`]).
    pub(crate) fn new(bytes: u64, job_size: Option<u64>) -> Result<Self> {
        let elements = (bytes / 8) as usize;
        let bytes_per_pass = elements as u64 * BYTES_PER_ELEMENT;
        Ok(Self {
            elements,
            job_passes: job_size
                .unwrap_or_else(|| DEFAULT_JOB_BYTES.div_ceil(bytes_per_pass).max(1)),
        })
    }
}

impl Workload for BandwidthWorkload {
    fn info(&self) -> WorkloadInfo {
        let array_bytes = self.elements as u64 * 8;
        WorkloadInfo {
            kind: WorkloadKind::Bandwidth.into(),
            unit: "bytes".to_string(),
            job_size: self.job_passes,
            job_size_unit: "passes".to_string(),
            shared_bytes: 0,
            bytes_per_worker: 3 * array_bytes,
            array_bytes: Some(array_bytes),
            description: "STREAM triad a = b + s*c over three f64 arrays, 24 bytes per element"
                .to_string(),
            shape: None,
            server_on_this_host: None,
        }
    }

    fn prepare(
        &self,
        _worker: usize,
        _workers: usize,
        _rate: Option<f64>,
    ) -> anyhow::Result<PaddedJob> {
        // Non-zero fills: a zero-filled Vec is lazily mapped by the kernel, and its page faults
        // would land in the first timed pass. One untimed pass then settles the arrays.
        let mut job = BandwidthJob {
            a: vec![0.5; self.elements],
            b: vec![1.0; self.elements],
            c: vec![2.0; self.elements],
            passes: self.job_passes,
            cursor: 0,
        };
        triad(&mut job.a, &job.b, &job.c, SCALAR);
        Ok(PaddedJob::new(job))
    }
}

struct BandwidthJob {
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    passes: u64,
    cursor: usize,
}

impl WorkerJob for BandwidthJob {
    fn run_job(&mut self) -> anyhow::Result<u64> {
        for _ in 0..self.passes {
            triad(&mut self.a, &self.b, &self.c, SCALAR);
        }
        Ok(self.passes * self.a.len() as u64 * BYTES_PER_ELEMENT)
    }

    fn run_slice(&mut self) -> anyhow::Result<u64> {
        let end = (self.cursor + SLICE_ELEMENTS).min(self.a.len());
        let range = self.cursor..end;
        triad(
            &mut self.a[range.clone()],
            &self.b[range.clone()],
            &self.c[range],
            SCALAR,
        );
        let done = (end - self.cursor) as u64;
        self.cursor = if end == self.a.len() { 0 } else { end };
        Ok(done * BYTES_PER_ELEMENT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triad_computes_b_plus_scalar_c() {
        let mut a = vec![0.0; 4];
        triad(&mut a, &[1.0, 2.0, 3.0, 4.0], &[1.0, 1.0, 2.0, 0.5], 3.0);
        assert_eq!(a, vec![4.0, 5.0, 9.0, 5.5]);
    }
}
