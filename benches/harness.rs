//! Harness fidelity, measured side by side in one run (`cargo bench --bench harness`):
//!
//! 1. overhead: the 1-worker cpu job time through the full runner (threads, barriers, clocks,
//!    counters, OS sampler) against the same loop timed bare on the main thread, interleaved
//!    so that drift of a shared machine hits both alike;
//! 2. scaling: cpu speedup at 2 workers and the CV of job times at 1 and 2 workers with the
//!    default job size and repeat count.
//!
//! Prints ratios; absolute times on a shared VM mean little.

use std::hint::black_box;
use std::time::Instant;

use corescale::stats::{coefficient_of_variation, describe};
use corescale::sweep::progress::Progress;
use corescale::sweep::runner::{LevelSettings, measure_level};
use corescale::workload::cpu::{CpuWorkload, DEFAULT_JOB_ITERATIONS, burn};

const ROUNDS: usize = 7;

fn main() {
    let workload = CpuWorkload::new(None);
    let progress = Progress::new(0, true, None);
    let settings = |repeat| LevelSettings {
        repeat,
        precision: None,
        max_repeat: repeat,
        duration: None,
        warmup: None,
        interval: std::time::Duration::from_secs(1),
        interval_histograms: false,
        start_at: None,
        sessions: None,
        campaign: None,
        length: corescale::workload::LevelLength::Run,
        cpu_bound: true,
    };

    let mut bare = Vec::new();
    let mut harness = Vec::new();
    for round in 0..ROUNDS {
        let began = Instant::now();
        black_box(burn(DEFAULT_JOB_ITERATIONS, round as u64 + 1));
        bare.push(began.elapsed().as_secs_f64());
        let level = measure_level(&workload, 1, None, &[None], &settings(1), &progress, None)
            .expect("measuring one level")
            .expect("no stop was requested")
            .level;
        harness.push(level.samples[0].wall_s);
    }
    let (bare_stats, harness_stats) = (describe(&bare), describe(&harness));
    println!(
        "harness overhead ({ROUNDS} interleaved rounds, {DEFAULT_JOB_ITERATIONS} iterations per job)"
    );
    println!(
        "  bare loop      median {:.4} s  CV {:.2}%",
        bare_stats.median,
        100.0 * coefficient_of_variation(&bare)
    );
    println!(
        "  through runner median {:.4} s  CV {:.2}%",
        harness_stats.median,
        100.0 * coefficient_of_variation(&harness)
    );
    println!(
        "  runner / bare = {:.4} (target: within 1%)",
        harness_stats.median / bare_stats.median
    );

    let mut levels = Vec::new();
    for workers in [1, 2] {
        let placement = vec![None; workers];
        let level = measure_level(
            &workload,
            workers,
            None,
            &placement,
            &settings(3),
            &progress,
            None,
        )
        .expect("measuring a level")
        .expect("no stop was requested")
        .level;
        let times: Vec<f64> = level.samples.iter().map(|sample| sample.wall_s).collect();
        let stats = describe(&times);
        println!(
            "  {workers} worker(s): median {:.4} s, stdev/median {:.2}% over {} jobs (target <= 2%)",
            stats.median,
            100.0 * stats.stdev / stats.median,
            times.len()
        );
        levels.push((workers, stats.median));
    }
    let speedup = 2.0 * levels[0].1 / levels[1].1;
    println!("  speedup at 2 workers = {speedup:.3} (target >= 1.9)");
}
