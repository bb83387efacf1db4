//! How often the analysis lands on the known answer of synthetic series, over 100 seeds at
//! noise 0, 1% and 3% (`cargo bench --features testing --bench known_answers`; the figures in docs/measurements/known-answers.md).
//! The test suite checks the same cases on 20 seeds.

use corescale::analysis::model::SeriesAnalysis;
use corescale::analysis::series::Series;
use corescale::analysis::study::analyse;
use corescale::analysis::synthetic::{
    droop_then_bend, early_dip, job_time_series, rate_series, smt_capacity, usl_capacity,
};

const SEEDS: u64 = 100;

fn one(series: Series) -> SeriesAnalysis {
    analyse(vec![series]).series.remove(0)
}

/// Seeds (of 100) whose answer is within `tolerance` of `expected`.
fn landing(expected: usize, tolerance: usize, answer: impl Fn(u64) -> Option<usize>) -> usize {
    (0..SEEDS)
        .filter(|&seed| answer(seed).is_some_and(|found| found.abs_diff(expected) <= tolerance))
        .count()
}

fn main() {
    knee_and_saturation_rows();
    println!();
    early_dip_row();
    println!();
    usl_rows();
}

fn knee(series: Series) -> Option<usize> {
    one(series).knee.map(|knee| knee.workers)
}

/// Knees and saturation on the SMT, droop and plateau shapes, at noise 0, 1% and 3%.
fn knee_and_saturation_rows() {
    println!("seeds landing, of {SEEDS} | noise 0 | 1% | 3%");
    let row = |name: &str, answer: &dyn Fn(f64, u64) -> Option<usize>, expected, tolerance| {
        let counts: Vec<String> = [0.0, 0.01, 0.03]
            .iter()
            .map(|&noise| landing(expected, tolerance, |seed| answer(noise, seed)).to_string())
            .collect();
        println!("{name} | {}", counts.join(" | "));
    };
    let smt = |levels: usize| {
        move |noise: f64, seed: u64| {
            knee(job_time_series(
                smt_capacity(16.0, 32.0, 0.25),
                levels,
                noise,
                seed,
                Some((16, 32)),
            ))
        }
    };
    row("knee 16 +-1, SMT to 32 (two regimes)", &smt(32), 16, 1);
    row("knee 16 exact, SMT to 32", &smt(32), 16, 0);
    row("knee 16 +-1, SMT to 48 (three regimes)", &smt(48), 16, 1);
    row(
        "knee 20 +-1, droop then bend",
        &|noise, seed| {
            knee(job_time_series(
                droop_then_bend,
                48,
                noise,
                seed,
                Some((20, 40)),
            ))
        },
        20,
        1,
    );
    let workers: Vec<usize> = (1..=32).collect();
    row(
        "knee 16 +-2, rate series to 32",
        &|noise, seed| {
            knee(rate_series(
                smt_capacity(16.0, 32.0, 0.25),
                &workers,
                noise * 3.0,
                seed,
                Some((16, 32)),
            ))
        },
        16,
        2,
    );
    row(
        "saturation 16 +-1, plateau from 16 to 40",
        &|noise, seed| {
            one(job_time_series(
                smt_capacity(16.0, 17.0, 0.0),
                40,
                noise,
                seed,
                None,
            ))
            .saturation
            .filter(|saturation| !saturation.censored)
            .map(|saturation| saturation.workers)
        },
        16,
        1,
    );
    row(
        "censored, rising to its last level 12",
        &|noise, seed| {
            one(job_time_series(
                smt_capacity(16.0, 17.0, 0.0),
                12,
                noise,
                seed,
                None,
            ))
            .saturation
            .filter(|saturation| saturation.censored)
            .map(|saturation| saturation.workers)
        },
        12,
        0,
    );
    println!("(the rate-series row uses 3x the noise: 0, 3% and 9%)");
}

/// The knee when one early level is low, on SLOB's grid of worker counts.
fn early_dip_row() {
    println!("knee 16 +-2 (one level), the level at 2 workers 15% low | noise 0 | 1% | 3% | 6%");
    let counts: Vec<String> = [0.0, 0.01, 0.03, 0.06]
        .iter()
        .map(|&noise| landing(16, 2, |seed| knee(early_dip(noise, seed))).to_string())
        .collect();
    println!(
        "rate series on the SLOB grid 1, 2, 4, ..., 36 | {}",
        counts.join(" | ")
    );
}

/// The USL fit on pure USL series (its errors, and misleading single-curve warnings), and
/// how often it gives a peak on pure Amdahl series.
fn usl_rows() {
    println!(
        "pure USL, 48 levels, 1% noise | misleading warnings | median |error| sigma | kappa | within 5%: sigma | kappa"
    );
    let levels: Vec<usize> = (1..=48).collect();
    for (sigma, kappa) in [(0.02, 5e-4), (0.05, 2e-3)] {
        let (mut misleading, mut sigma_errors, mut kappa_errors) = (0, Vec::new(), Vec::new());
        for seed in 0..SEEDS {
            let analysed = one(rate_series(
                usl_capacity(sigma, kappa),
                &levels,
                0.01,
                seed,
                None,
            ));
            misleading += usize::from(
                analysed
                    .fits
                    .single_curve
                    .as_ref()
                    .is_some_and(|single| single.misleading),
            );
            let fit = analysed.fits.usl.as_ref().expect("a USL fit");
            sigma_errors.push((fit.sigma / sigma - 1.0).abs());
            kappa_errors.push((fit.kappa / kappa - 1.0).abs());
        }
        let median = |values: &mut Vec<f64>| {
            values.sort_by(f64::total_cmp);
            values[values.len() / 2]
        };
        let within = |values: &[f64]| values.iter().filter(|error| **error < 0.05).count();
        println!(
            "sigma {sigma}, kappa {kappa} | {misleading} | {:.1}% | {:.1}% | {} | {}",
            100.0 * median(&mut sigma_errors),
            100.0 * median(&mut kappa_errors),
            within(&sigma_errors),
            within(&kappa_errors)
        );
    }
    let workers: Vec<usize> = (1..=32).collect();
    let mut peaks = 0;
    for seed in 0..SEEDS {
        for noise in [0.0, 0.01, 0.03] {
            let analysed = one(rate_series(
                usl_capacity(0.03, 0.0),
                &workers,
                noise,
                seed,
                None,
            ));
            peaks += usize::from(
                analysed
                    .fits
                    .usl
                    .as_ref()
                    .is_some_and(|usl| usl.peak_workers.is_some()),
            );
        }
    }
    println!(
        "pure Amdahl (sigma 0.03, 32 levels): USL peak given in {peaks} of {} fits",
        3 * SEEDS
    );
}
