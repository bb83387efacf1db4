//! The cpu workload: an integer recurrence whose every step depends on the previous one, so
//! the optimiser can neither vectorise it nor compute it in closed form; it touches only
//! registers.

use std::hint::black_box;

use crate::workload::PaddedJob;

use clap::Args;

use super::{
    BuildContext, InnerLoopArgs, WorkerJob, Workload, WorkloadInfo, WorkloadKind, WorkloadOptions,
};

/// Iterations of one default job: about 1 s on a 2023 Xeon core (345M iterations/s measured
/// on the Sapphire Rapids KVM guest this was developed on; see README).
pub const DEFAULT_JOB_ITERATIONS: u64 = 350_000_000;

/// Iterations of one fixed-time slice (about a millisecond).
const SLICE_ITERATIONS: u64 = 500_000;

/// The loop itself. `inline(never)` keeps it one function that benchmarks can time bare.
#[inline(never)]
pub fn burn(iterations: u64, seed: u64) -> u64 {
    let mut state = black_box(seed) | 1;
    for step in 0..black_box(iterations) {
        state = state.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(step);
        state ^= state >> 29;
    }
    black_box(state)
}

pub struct CpuWorkload {
    job_iterations: u64,
}

impl CpuWorkload {
    /// A workload whose jobs run `job_iterations` iterations (default: about a second).
    pub fn new(job_iterations: Option<u64>) -> Self {
        Self {
            job_iterations: job_iterations.unwrap_or(DEFAULT_JOB_ITERATIONS),
        }
    }
}

/// `run cpu`'s own options.
#[derive(Debug, Clone, Default, Args)]
#[command(after_help = super::job_size_help("iterations", &crate::format::significant(DEFAULT_JOB_ITERATIONS as f64)))]
pub struct CpuArgs {
    #[command(flatten)]
    pub no_intervals: super::NoIntervals,
    #[command(flatten)]
    pub no_campaign: super::NoCampaign,
    #[command(flatten)]
    pub loops: InnerLoopArgs,
}

impl WorkloadOptions for CpuArgs {
    fn build(&self, context: &BuildContext) -> anyhow::Result<Box<dyn Workload>> {
        let job_size = self.loops.job_size(context.job_size, 1_000_000)?;
        Ok(Box::new(CpuWorkload::new(job_size)))
    }
}

impl Workload for CpuWorkload {
    fn info(&self) -> WorkloadInfo {
        WorkloadInfo {
            kind: WorkloadKind::Cpu.into(),
            unit: "iterations".to_string(),
            job_size: self.job_iterations,
            job_size_unit: "iterations".to_string(),
            shared_bytes: 0,
            bytes_per_worker: 0,
            array_bytes: None,
            description: "dependent multiply-add-xorshift integer loop in registers".to_string(),
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
        Ok(PaddedJob::new(CpuJob {
            iterations: self.job_iterations,
            seed: worker as u64 + 1,
        }))
    }
}

struct CpuJob {
    iterations: u64,
    seed: u64,
}

impl WorkerJob for CpuJob {
    fn run_job(&mut self) -> anyhow::Result<u64> {
        self.seed = burn(self.iterations, self.seed);
        Ok(self.iterations)
    }

    fn run_slice(&mut self) -> anyhow::Result<u64> {
        self.seed = burn(SLICE_ITERATIONS, self.seed);
        Ok(SLICE_ITERATIONS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loop_depends_on_every_iteration() {
        // Different lengths and seeds give different states: nothing is skipped.
        assert_ne!(burn(1000, 1), burn(1001, 1));
        assert_ne!(burn(1000, 1), burn(1000, 2));
        assert_eq!(burn(1000, 7), burn(1000, 7));
    }
}
