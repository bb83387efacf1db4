//! Per-level summaries: the raw, speed, capacity and speedup figures of CERN's test_cpu_parallel study.

use std::collections::BTreeMap;

use crate::result::{Level, LevelSummary, RunDocument, RunMode, Sample, Together};
use crate::stats::{coefficient_of_variation, describe, median, robust_sigma};

/// The overlap a level may lose to the spread of its job times before its jobs count as not
/// run together: at least 10% (the start of a batch is staggered by the wake-ups), at most
/// 50% (a spread that wide is itself the sign).
const APART_TOLERANCE: std::ops::RangeInclusive<f64> = 0.10..=0.50;

/// The spread that `--precision` targets: of job times for fixed-work jobs, of per-job rates
/// for fixed-time jobs (whose times are all the same by construction).
pub(crate) fn job_variation(samples: &[Sample], mode: RunMode) -> f64 {
    let values: Vec<f64> = match mode {
        RunMode::FixedWork => samples.iter().map(|sample| sample.wall_s).collect(),
        RunMode::FixedTime => samples.iter().map(rate).collect(),
    };
    coefficient_of_variation(&values)
}

/// Summarises one level's samples; speedup is filled in by [`summarize_document`].
pub(crate) fn summarize_level(workers: usize, samples: &[Sample], mode: RunMode) -> LevelSummary {
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
    let n_over_median = per_job(60.0 * workers as f64);
    let batch_time = batch_seconds(samples);
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
        capacity_jobs_per_min: batch_time
            .map_or(n_over_median, |seconds| per_batch_time(samples, seconds)),
        capacity_n_over_median_jobs_per_min: n_over_median,
        together: batch_time.map(|seconds| Together {
            overlap: (total_wall / (workers.max(1) as f64 * seconds)).min(1.0),
            floor: 1.0
                - (3.0 * robust_cv(&wall)).clamp(*APART_TOLERANCE.start(), *APART_TOLERANCE.end()),
        }),
        rate_per_worker: median(&per_worker_rates),
        rate_total: median(&batch_total_rates(samples)),
        speedup: None,
        speedup_base: None,
        efficiency: None,
        ipc: instructions_per_cycle(samples),
        merit: None,
    }
}

/// Jobs per minute the host delivered over a level's batches, from its samples; None when
/// they do not say when their jobs started (documents before `started_s`).
pub(crate) fn delivered_jobs_per_min(samples: &[Sample]) -> Option<f64> {
    batch_seconds(samples).map(|seconds| per_batch_time(samples, seconds))
}

/// Jobs per minute: the samples' jobs over `seconds` of batch time.
fn per_batch_time(samples: &[Sample], seconds: f64) -> f64 {
    60.0 * samples.len() as f64 / seconds
}

/// The time a level's batches took, summed: each from its first job's start to its last
/// job's end. None when the samples do not say when their jobs started (older documents).
fn batch_seconds<'a>(samples: impl IntoIterator<Item = &'a Sample>) -> Option<f64> {
    let mut spans: BTreeMap<u32, (f64, f64)> = BTreeMap::new();
    for sample in samples {
        let start = sample.started_s?;
        let span = spans
            .entry(sample.batch)
            .or_insert((f64::INFINITY, f64::NEG_INFINITY));
        span.0 = span.0.min(start);
        span.1 = span.1.max(start + sample.wall_s);
    }
    let total: f64 = spans.values().map(|(first, last)| last - first).sum();
    (total > 0.0).then_some(total)
}

/// The spread of job times that one slow job cannot inflate: 1.4826 x the median absolute
/// deviation over the median (the stdev over the mean for normal data).
fn robust_cv(values: &[f64]) -> f64 {
    let center = median(values);
    if center <= 0.0 {
        return 0.0;
    }
    robust_sigma(values) / center
}

fn rate(sample: &Sample) -> f64 {
    if sample.wall_s > 0.0 {
        sample.ops as f64 / sample.wall_s
    } else {
        0.0
    }
}

/// Each batch's capacity in the level's measure: jobs per minute (fixed work) or its total
/// rate (fixed time); what the uncertainty of a level's capacity is judged from.
pub(crate) fn batch_capacities(samples: &[Sample], mode: RunMode) -> Vec<f64> {
    match mode {
        RunMode::FixedTime => batch_total_rates(samples),
        RunMode::FixedWork => {
            let mut per_batch: BTreeMap<u32, Vec<&Sample>> = BTreeMap::new();
            for sample in samples {
                per_batch.entry(sample.batch).or_default().push(sample);
            }
            per_batch
                .into_values()
                .filter_map(|batch| {
                    let seconds = batch_seconds(batch.iter().copied()).or_else(|| {
                        let wall: Vec<f64> = batch.iter().map(|sample| sample.wall_s).collect();
                        Some(median(&wall)).filter(|median| *median > 0.0)
                    })?;
                    Some(60.0 * batch.len() as f64 / seconds)
                })
                .collect()
        }
    }
}

/// Each batch's total rate: its operations over the time it took, from its first job's start
/// to its last job's end (what the host delivered, even when its jobs did not overlap); in
/// documents without job starts, the sum of its workers' rates.
pub(crate) fn batch_total_rates(samples: &[Sample]) -> Vec<f64> {
    let mut per_batch: BTreeMap<u32, Vec<&Sample>> = BTreeMap::new();
    for sample in samples {
        per_batch.entry(sample.batch).or_default().push(sample);
    }
    per_batch
        .into_values()
        .map(|batch| {
            let span = batch_seconds(batch.iter().copied());
            match span {
                Some(seconds) => {
                    batch.iter().map(|sample| sample.ops as f64).sum::<f64>() / seconds
                }
                None => batch.iter().map(|sample| rate(sample)).sum(),
            }
        })
        .collect()
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

/// Recomputes every level's summary, and the speedup: capacity ratio for fixed-work runs,
/// total-rate ratio for fixed-time runs, relative to the base level (see [`speedup_base`]) and
/// times its workers (linear scaling assumed up to it), as `report` computes it.
pub(crate) fn summarize_document(document: &mut RunDocument) {
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
    let Some(base) = speedup_base(&document.levels) else {
        return;
    };
    let (base_workers, base_throughput) = (base.workers, throughput(base));
    if base_throughput <= 0.0 {
        return;
    }
    // A lone level of several workers has nothing to be faster than: its speedup would be
    // the linear scaling assumed up to it, not a measurement.
    let closed = document
        .levels
        .iter()
        .filter(|level| !level.is_paced())
        .count();
    if base_workers != 1 && closed < 2 {
        return;
    }
    let speedups: Vec<Option<f64>> = document
        .levels
        .iter()
        .map(|level| {
            (!level.is_paced()).then(|| throughput(level) / base_throughput * base_workers as f64)
        })
        .collect();
    for (level, speedup) in document.levels.iter_mut().zip(speedups) {
        let Some(speedup) = speedup else {
            continue;
        };
        level.summary.speedup = Some(speedup);
        level.summary.efficiency = Some(speedup / level.workers as f64);
        level.summary.speedup_base = Some(base_workers);
    }
}

/// The level speedup is relative to, the one `report` uses too: the 1-worker level when it was
/// measured clean, else the smallest clean level (report leaves disturbed ones out), else the
/// smallest; closed-loop levels only (an open loop's throughput is the rate it was asked).
pub(crate) fn speedup_base(levels: &[Level]) -> Option<&Level> {
    let smallest = |clean: bool| {
        levels
            .iter()
            .filter(|level| !level.is_paced())
            .filter(|level| !clean || !level.is_disturbed())
            .min_by_key(|level| level.workers)
    };
    smallest(true).or_else(|| smallest(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(batch: u32, worker: usize, wall_s: f64) -> Sample {
        Sample {
            batch,
            worker,
            cpu: None,
            started_s: None,
            wall_s,
            cpu_s: wall_s * 0.5,
            ops: 1000,
            cycles: Some(2000),
            instructions: Some(3000),
        }
    }

    /// A sample of a job that started `started_s` after the level began.
    fn job(batch: u32, worker: usize, started_s: f64, wall_s: f64) -> Sample {
        Sample {
            started_s: Some(started_s),
            ..sample(batch, worker, wall_s)
        }
    }

    /// `count` batches of `workers` jobs of `wall_s`, batch b starting at b x `every_s` and
    /// each worker `stagger_s` after the one before it.
    fn batches(
        count: u32,
        workers: usize,
        every_s: f64,
        stagger_s: f64,
        wall_s: f64,
    ) -> Vec<Sample> {
        (0..count)
            .flat_map(|batch| {
                (0..workers).map(move |worker| {
                    let started = f64::from(batch) * every_s + stagger_s * worker as f64;
                    job(batch + 1, worker, started, wall_s)
                })
            })
            .collect()
    }

    #[test]
    fn speed_and_capacity_follow_the_median_job_time() {
        let samples = [sample(1, 0, 2.0), sample(1, 1, 2.0), sample(2, 0, 4.0)];
        let summary = summarize_level(2, &samples, RunMode::FixedWork);
        assert_eq!(summary.job_time_s.median, 2.0);
        assert_eq!(summary.speed_jobs_per_min, 30.0);
        // Without job starts (older documents): test_cpu_parallel's n / median.
        assert_eq!(summary.capacity_jobs_per_min, 60.0);
        assert_eq!(summary.capacity_n_over_median_jobs_per_min, 60.0);
        assert_eq!(summary.together, None);
        assert!((summary.cpu_fraction - 0.5).abs() < 1e-12);
        assert_eq!(summary.ipc, Some(1.5));
        // batch 1: 500 + 500 ops/s; batch 2: 250 ops/s; median of the two batch totals
        assert_eq!(summary.rate_total, 625.0);
    }

    #[test]
    fn jobs_run_together_give_the_same_capacity_by_both_definitions() {
        // 4 workers, 2 batches of 1 s jobs started within a millisecond of each other.
        let samples = batches(2, 4, 1.1, 0.0002, 1.0);
        let summary = summarize_level(4, &samples, RunMode::FixedWork);
        assert_eq!(summary.capacity_n_over_median_jobs_per_min, 240.0);
        let delivered = summary.capacity_jobs_per_min;
        assert!((delivered / 240.0 - 1.0).abs() < 0.001, "{delivered}");
        let together = summary.together.unwrap();
        assert!(together.overlap > 0.999 && together.overlap >= together.floor);
    }

    #[test]
    fn jobs_run_one_after_another_give_what_the_host_delivered_and_are_flagged() {
        // 16 workers on one CPU: each 10 ms job runs after the one before it.
        let samples = batches(3, 16, 0.2, 0.01, 0.01);
        let summary = summarize_level(16, &samples, RunMode::FixedWork);
        // 48 jobs in 3 x 0.16 s: 6,000 jobs/min, not 16 x 60 / 0.01 = 96,000.
        assert!((summary.capacity_jobs_per_min - 6000.0).abs() < 1e-6);
        assert!((summary.capacity_n_over_median_jobs_per_min - 96_000.0).abs() < 1e-6);
        let together = summary.together.unwrap();
        assert!((together.overlap - 1.0 / 16.0).abs() < 1e-9);
        assert!(together.overlap < together.floor);
    }

    #[test]
    fn a_stalled_worker_is_flagged_and_counted() {
        // Three workers finish in 1 s; the fourth takes 3 s.
        let samples: Vec<Sample> = (0..4)
            .map(|worker| job(1, worker, 0.0, if worker == 3 { 3.0 } else { 1.0 }))
            .collect();
        let summary = summarize_level(4, &samples, RunMode::FixedWork);
        assert!((summary.capacity_jobs_per_min - 80.0).abs() < 1e-9);
        let together = summary.together.unwrap();
        assert!(together.overlap < together.floor, "{together:?}");
    }

    #[test]
    fn fixed_time_batch_totals_count_over_the_batch_not_each_job() {
        // Two 1 s jobs of 1000 ops each, the second starting when the first ended: the host
        // did 2000 ops in 2 s, not 2 x 1000 ops/s.
        let samples = [job(1, 0, 0.0, 1.0), job(1, 1, 1.0, 1.0)];
        let summary = summarize_level(2, &samples, RunMode::FixedTime);
        assert!((summary.rate_total - 1000.0).abs() < 1e-9);
        assert!(summary.together.unwrap().overlap < summary.together.unwrap().floor);
    }
}
