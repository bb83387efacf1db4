//! How much a series' figures move from level to level for no reason but noise: the jitter
//! of per-worker speed where it should change smoothly, and the band within which two figures
//! of a series cannot be told apart.

use serde::{Deserialize, Serialize};

use super::series::Series;
use crate::stats::median;

/// The band used where a series has neither a measured CV nor a jitter figure.
pub(crate) const DEFAULT_BAND: f64 = 0.02;
/// Jitter above this earns a series-level warning.
pub(crate) const NOISY_JITTER: f64 = 0.05;
/// Fewest residuals for which a jitter figure means anything.
const MIN_RESIDUALS: usize = 4;

/// The series-level noise figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Noise {
    /// Level-to-level jitter of per-worker speed, as a fraction (0.06: about ±6%): the root
    /// mean square of each level's speed against the straight line through its two neighbours
    /// (leaving out those beyond three robust deviations), scaled to one level's own noise.
    pub jitter: f64,
    /// The levels it was measured over: up to the knee, else the physical core count, else all.
    pub from_workers: usize,
    pub to_workers: usize,
    /// Two levels of this series that differ by less than this (2 x sqrt 2 x jitter: twice the
    /// standard deviation of a difference of two levels) are not significantly different.
    pub significant_difference: f64,
}

/// The jitter of per-worker speed over the levels up to `until` workers (all when None).
pub(crate) fn noise(series: &Series, until: Option<usize>) -> Option<Noise> {
    let points: Vec<(f64, f64)> = series
        .points
        .iter()
        .filter(|point| until.is_none_or(|until| point.workers <= until))
        .map(|point| (point.workers as f64, series.speed(point)))
        .collect();
    let jitter = jitter(&points)?;
    Some(Noise {
        jitter,
        from_workers: points[0].0 as usize,
        to_workers: points[points.len() - 1].0 as usize,
        significant_difference: 2.0 * std::f64::consts::SQRT_2 * jitter,
    })
}

/// Robust noise of y along x: each interior y against the chord of its neighbours, divided by
/// the standard deviation that three independent errors of the same size give that residual.
pub(crate) fn jitter(points: &[(f64, f64)]) -> Option<f64> {
    let residuals: Vec<f64> = points
        .windows(3)
        .filter_map(|window| {
            let [(x0, y0), (x1, y1), (x2, y2)] = [window[0], window[1], window[2]];
            let weight = (x1 - x0) / (x2 - x0);
            let chord = y0 + (y2 - y0) * weight;
            (chord > 0.0 && weight.is_finite()).then(|| {
                (y1 / chord - 1.0).abs() / (1.0 + weight.powi(2) + (1.0 - weight).powi(2)).sqrt()
            })
        })
        .collect();
    if residuals.len() < MIN_RESIDUALS {
        return None;
    }
    // The median absolute residual resists a bend or an outlier; the root mean square of the
    // residuals within three times it is the steadier figure.
    let robust = 1.4826 * median(&residuals);
    let kept: Vec<f64> = residuals
        .into_iter()
        .filter(|residual| *residual <= 3.0 * robust)
        .collect();
    Some((kept.iter().map(|residual| residual * residual).sum::<f64>() / kept.len() as f64).sqrt())
}

/// The noise band at a level: the job-to-job CV measured there, else 2%, and never narrower
/// than three times the jitter (a level within the band of the best of a few dozen levels is
/// then indistinguishable from it, even though the best one was lucky).
pub(crate) fn band(cv: Option<f64>, jitter: Option<f64>) -> f64 {
    let measured = cv.filter(|cv| *cv > 0.0).unwrap_or(DEFAULT_BAND);
    measured.max(JITTER_BANDS * jitter.unwrap_or(0.0))
}

/// Jitters in a noise band.
pub(crate) const JITTER_BANDS: f64 = 3.0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::synthetic::{Rng, gaussian};

    #[test]
    fn jitter_recovers_the_noise_of_a_drooping_line() {
        for (level, seed) in [(0.01, 1), (0.03, 2), (0.06, 3)] {
            let mut rng = Rng::new(seed);
            let points: Vec<(f64, f64)> = (1..=40)
                .map(|n| {
                    let n = n as f64;
                    (n, (100.0 - 0.5 * n) * (1.0 + level * gaussian(&mut rng)))
                })
                .collect();
            let found = jitter(&points).unwrap();
            assert!(
                (found / level - 1.0).abs() < 0.4,
                "noise {level}: jitter {found}"
            );
        }
        let clean: Vec<(f64, f64)> = (1..=10).map(|n| (n as f64, 50.0 - n as f64)).collect();
        assert!(jitter(&clean).unwrap() < 1e-12);
        assert_eq!(jitter(&clean[..5]), None);
    }

    #[test]
    fn the_band_is_the_cv_or_two_percent_and_at_least_three_jitters() {
        assert_eq!(band(Some(0.03), None), 0.03);
        assert_eq!(band(None, None), DEFAULT_BAND);
        assert_eq!(band(Some(0.0), Some(0.005)), DEFAULT_BAND);
        assert!((band(Some(0.01), Some(0.04)) - 0.12).abs() < 1e-12);
    }
}
