//! The analysis on synthetic series whose answers are known, at several noise levels with
//! fixed seeds: knee, saturation, censoring, fits and their judgement, noise, comparisons.

use super::study::{SeriesAnalysis, analyse};
use super::synthetic::{job_time_series, rate_series, smt_capacity, usl_capacity};

fn one(series: super::series::Series) -> SeriesAnalysis {
    analyse(vec![series]).series.remove(0)
}

#[test]
fn probe() {
    for noise in [0.0, 0.01, 0.03] {
        let mut knees2 = vec![];
        let mut knees3 = vec![];
        let mut sats = vec![];
        for seed in 0..100 {
            let two = one(job_time_series(
                smt_capacity(16.0, 32.0, 0.25),
                32,
                noise,
                seed,
                Some((16, 32)),
            ));
            knees2.push(two.knee.as_ref().map_or(0, |k| k.workers));
            let three = one(job_time_series(
                smt_capacity(16.0, 32.0, 0.25),
                48,
                noise,
                seed,
                Some((16, 32)),
            ));
            knees3.push(three.knee.as_ref().map_or(0, |k| k.workers));
            let plateau = one(job_time_series(
                smt_capacity(16.0, 17.0, 0.0),
                40,
                noise,
                seed,
                None,
            ));
            sats.push(plateau.saturation.as_ref().map_or(0, |s| s.workers));
        }
        eprintln!("noise {noise}: two {knees2:?}\n three {knees3:?}\n plateau {sats:?}");
        let within = |xs: &Vec<usize>| xs.iter().filter(|&&k| k.abs_diff(16) <= 1).count();
        eprintln!(
            " within1 two {} three {} plateau {}",
            within(&knees2),
            within(&knees3),
            within(&sats)
        );
        let mut good = [0; 4];
        let mut misleading = [0, 0];
        let mut worst = [0.0f64; 4];
        for seed in 0..100 {
            for (case, (sigma, kappa)) in [(0.02, 5e-4), (0.05, 2e-3)].into_iter().enumerate() {
                let usl = one(rate_series(
                    usl_capacity(sigma, kappa),
                    &(1..=48).collect::<Vec<_>>(),
                    noise,
                    seed,
                    None,
                ));
                if usl.fits.single_curve.as_ref().is_some_and(|s| s.misleading) {
                    misleading[case] += 1;
                }
                let fit = usl.fits.usl.as_ref().unwrap();
                worst[case * 2] = worst[case * 2].max((fit.sigma / sigma - 1.0).abs());
                worst[case * 2 + 1] = worst[case * 2 + 1].max((fit.kappa / kappa - 1.0).abs());
                good[case * 2] += usize::from((fit.sigma / sigma - 1.0).abs() < 0.05);
                good[case * 2 + 1] += usize::from((fit.kappa / kappa - 1.0).abs() < 0.05);
            }
        }
        eprintln!(" usl misleading {misleading:?} worst rel err {worst:?} within5% {good:?}");
    }
}
#[test]
fn probe2() {
    let s = job_time_series(smt_capacity(16.0, 32.0, 0.25), 32, 0.01, 8, Some((16, 32)));
    for p in &s.points {
        eprint!("{}:{:.3} ", p.workers, s.capacity(p));
    }
    let a = one(s);
    eprintln!("\n{:?}", a.knee);
    let s = job_time_series(smt_capacity(16.0, 17.0, 0.0), 40, 0.01, 11, None);
    for p in &s.points {
        eprint!("{}:{:.3} ", p.workers, s.capacity(p));
    }
    let a = one(s);
    eprintln!("\n{:?} {:?}", a.saturation, a.knee);
}
