//! Per-level summaries: the raw, speed, capacity and speedup figures of seed 000.

use std::collections::BTreeMap;

use crate::result::{Level, LevelSummary, RunDocument, RunMode, Sample};
use crate::stats::{coefficient_of_variation, describe, median};

/// The spread that `--precision` targets: of job times for fixed-work jobs, of per-job rates
/// for fixed-time jobs (whose times are all the same by construction).
pub fn job_variation(samples: &[Sample], mode: RunMode) -> f64 {
    let values: Vec<f64> = match mode {
        RunMode::FixedWork => samples.iter().map(|sample| sample.wall_s).collect(),
        RunMode::FixedTime => samples.iter().map(rate).collect(),
    };
    coefficient_of_variation(&values)
}

/// Summarises one level's samples; speedup is filled in by [`summarize_document`].
pub fn summarize_level(workers: usize, samples: &[Sample], mode: RunMode) -> LevelSummary {
    let wall: Vec<f64> = samples.iter().map(|sample| sample.wall_s).collect();
    let job_time_s = describe(&wall);
    let total_wall: f64 = wall.iter().sum();
    let total_cpu: f64 = samples.iter().map(|sample| sample.cpu_s).sum();
    let per_worker_rates: Vec<f64> = samples.iter().map(rate).collect();
    let per_job = |numerator: f64| {
        if job_time_s.median > 0.0 {
            numerator / job_time_s.median
        } else {
            0.0
        }
    };
    LevelSummary {
        jobs: samples.len(),
        job_time_s,
        cv: job_variation(samples, mode),
        cpu_time_s_mean: if samples.is_empty() {
            0.0
        } else {
            total_cpu / samples.len() as f64
        },
        cpu_fraction: if total_wall > 0.0 {
            total_cpu / total_wall
        } else {
            0.0
        },
        speed_jobs_per_min: per_job(60.0),
        capacity_jobs_per_min: per_job(60.0 * workers as f64),
        rate_per_worker: median(&per_worker_rates),
        rate_total: median(&batch_total_rates(samples)),
        speedup: None,
        efficiency: None,
        ipc: instructions_per_cycle(samples),
        merit: None,
    }
}

fn rate(sample: &Sample) -> f64 {
    if sample.wall_s > 0.0 {
        sample.ops as f64 / sample.wall_s
    } else {
        0.0
    }
}

/// The sum of the workers' rates in each batch.
fn batch_total_rates(samples: &[Sample]) -> Vec<f64> {
    let mut per_batch: BTreeMap<u32, f64> = BTreeMap::new();
    for sample in samples {
        *per_batch.entry(sample.batch).or_default() += rate(sample);
    }
    per_batch.into_values().collect()
}

fn instructions_per_cycle(samples: &[Sample]) -> Option<f64> {
    let mut cycles = 0u64;
    let mut instructions = 0u64;
    for sample in samples {
        cycles += sample.cycles?;
        instructions += sample.instructions?;
    }
    (cycles > 0).then(|| instructions as f64 / cycles as f64)
}

/// Recomputes every level's summary, including speedup relative to the 1-worker level:
/// capacity ratio for fixed-work runs, total-rate ratio for fixed-time runs.
pub fn summarize_document(document: &mut RunDocument) {
    let (mode, unit) = (document.settings.mode, document.workload.unit.as_str());
    for level in &mut document.levels {
        level.summary = summarize_level(level.workers, &level.samples, mode);
        level.summary.merit = Some(level.derive_merit(mode, unit));
    }
    // Speedup of capacity, or of the rate of merit (the database's own count for db runs).
    let throughput = |level: &Level| match mode {
        RunMode::FixedWork => level.summary.capacity_jobs_per_min,
        RunMode::FixedTime => level.merit(mode, unit).rate_total,
    };
    let baseline = document
        .levels
        .iter()
        .find(|level| level.workers == 1)
        .map(throughput)
        .filter(|value| *value > 0.0);
    let Some(baseline) = baseline else {
        return;
    };
    let speedups: Vec<f64> = document
        .levels
        .iter()
        .map(|level| throughput(level) / baseline)
        .collect();
    for (level, speedup) in document.levels.iter_mut().zip(speedups) {
        level.summary.speedup = Some(speedup);
        level.summary.efficiency = Some(speedup / level.workers as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(batch: u32, worker: usize, wall_s: f64) -> Sample {
        Sample {
            batch,
            worker,
            cpu: None,
            wall_s,
            cpu_s: wall_s * 0.5,
            ops: 1000,
            cycles: Some(2000),
            instructions: Some(3000),
        }
    }

    #[test]
    fn speed_and_capacity_follow_the_median_job_time() {
        let samples = [sample(1, 0, 2.0), sample(1, 1, 2.0), sample(2, 0, 4.0)];
        let summary = summarize_level(2, &samples, RunMode::FixedWork);
        assert_eq!(summary.job_time_s.median, 2.0);
        assert_eq!(summary.speed_jobs_per_min, 30.0);
        assert_eq!(summary.capacity_jobs_per_min, 60.0);
        assert!((summary.cpu_fraction - 0.5).abs() < 1e-12);
        assert_eq!(summary.ipc, Some(1.5));
        // batch 1: 500 + 500 ops/s; batch 2: 250 ops/s; median of the two batch totals
        assert_eq!(summary.rate_total, 625.0);
    }
}
