//! Amdahl and Universal Scalability Law fits to capacity, by Levenberg-Marquardt, and the
//! judgement of whether a fit describes the data well enough to be quoted.
//!
//! Capacity C(n) = lambda n / (1 + sigma (n - 1) + kappa n (n - 1)); Amdahl is kappa = 0.
//! lambda (the single-worker capacity) is a free coefficient, as in the R package usl since
//! 2.0, so a noisy or missing n = 1 level does not skew sigma and kappa. sigma and kappa are
//! physical coefficients and kept >= 0: one that the unbounded optimum puts below 0 is fixed
//! at 0 ("not measurable here") and the others refitted.

use levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt};
use nalgebra::{DMatrix, DVector, Dyn, Owned};
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Residual sign runs this many standard deviations below the expected number mean the
/// model's shape is wrong (one-sided 1%).
const RUNS_Z: f64 = -2.326;
/// Fewest levels for which the runs of residual signs are judged.
const RUNS_MIN_LEVELS: usize = 8;
/// No Amdahl limit is quoted beyond this multiple of the largest level measured, nor a USL
/// peak beyond `PEAK_REACH` times it: the data cannot support them.
const SPEEDUP_REACH: f64 = 4.0;
const PEAK_REACH: f64 = 2.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    Amdahl,
    Usl,
}

/// Why a fit does not describe its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Inadequacy {
    /// Residuals of one sign in long stretches: the curve does not follow the data's shape.
    ResidualStreaks,
    /// Amdahl: the data pass the largest speedup the fitted law allows.
    PastLimit,
    /// USL: the fitted curve falls past a peak that the measurements do not show.
    PeakNotMeasured,
}

impl Inadequacy {
    /// In a few words, for a table cell.
    pub fn short(self) -> &'static str {
        match self {
            Inadequacy::ResidualStreaks => "not its shape",
            Inadequacy::PastLimit => "past its limit",
            Inadequacy::PeakNotMeasured => "peak not seen",
        }
    }
}

/// A fitted model with 95% confidence half-widths where the fit has spare degrees of freedom.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    pub model: Model,
    pub lambda: f64,
    pub sigma: f64,
    /// Zero for Amdahl.
    pub kappa: f64,
    pub lambda_ci95: Option<f64>,
    pub sigma_ci95: Option<f64>,
    pub kappa_ci95: Option<f64>,
    /// The coefficient sat at its bound 0: the data cannot measure it here.
    pub sigma_at_bound: bool,
    pub kappa_at_bound: bool,
    pub r_squared: f64,
    /// The range of worker counts used.
    pub n_min: usize,
    pub n_max: usize,
    pub levels: usize,
    /// lambda against the measured capacity per worker at the first level (1.0: the curve
    /// starts on the measurement).
    pub lambda_vs_first_level: f64,
    /// Runs of equal residual signs, and the number expected of random residuals.
    pub residual_runs: usize,
    pub expected_runs: f64,
    /// How many standard deviations the runs lie from the expected number (Wald-Wolfowitz,
    /// over the residuals with a sign); judged from 8 of them on.
    pub runs_z: Option<f64>,
    pub durbin_watson: f64,
    /// Whether the fit describes the data: residuals without long same-sign stretches, and
    /// no measured speedup beyond the model's own limit. An inadequate fit is neither drawn
    /// nor quoted.
    pub adequate: bool,
    /// Why it is not adequate, in a sentence and in kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inadequate_because: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inadequacy: Option<Inadequacy>,
    /// Amdahl: the asymptotic speedup 1 / sigma, when the data support it (sigma's 99%
    /// interval excludes 0 and the limit is within 4x the largest level).
    pub max_speedup: Option<f64>,
    /// USL: where capacity peaks, sqrt((1 - sigma) / kappa), when the data support it
    /// (kappa's 99% interval excludes 0 and the peak is within 2x the largest level).
    pub peak_workers: Option<f64>,
    /// Why the model's limit is not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_withheld: Option<String>,
}

impl Fit {
    /// Capacity the model predicts at `workers`.
    pub fn capacity(&self, workers: f64) -> f64 {
        predict(self.lambda, self.sigma, self.kappa, workers)
    }

    /// sigma's 95% interval lies above 0.
    pub fn sigma_measured(&self) -> bool {
        !self.sigma_at_bound && self.sigma_ci95.is_some_and(|ci| self.sigma - ci > 0.0)
    }

    /// kappa's 95% interval lies above 0.
    pub fn kappa_measured(&self) -> bool {
        self.model == Model::Usl
            && !self.kappa_at_bound
            && self.kappa_ci95.is_some_and(|ci| self.kappa - ci > 0.0)
    }

    /// The 99% half-width from a 95% one: limits (a speedup ceiling, a capacity peak) are
    /// strong claims and need the stricter interval to clear 0.
    fn ci99(&self, ci95: Option<f64>, free: usize) -> Option<f64> {
        let freedom = self
            .levels
            .checked_sub(free)
            .filter(|freedom| *freedom > 0)? as f64;
        let t = StudentsT::new(0.0, 1.0, freedom).ok()?;
        Some(ci95? * t.inverse_cdf(0.995) / t.inverse_cdf(0.975))
    }
}

fn predict(lambda: f64, sigma: f64, kappa: f64, workers: f64) -> f64 {
    lambda * workers / (1.0 + sigma * (workers - 1.0) + kappa * workers * (workers - 1.0))
}

/// Fits `model` to (workers, capacity) points; None with fewer points than coefficients + 1
/// or when the optimiser does not converge.
pub(crate) fn fit(model: Model, points: &[(usize, f64)]) -> Option<Fit> {
    let mut free = match model {
        Model::Amdahl => vec![0, 1],
        Model::Usl => vec![0, 1, 2],
    };
    if points.len() <= free.len() {
        return None;
    }
    let problem = loop {
        let problem = CapacityProblem::new(points, &free);
        let (problem, report) = LevenbergMarquardt::new().minimize(problem);
        if !report.termination.was_successful() {
            return None;
        }
        // One coefficient at a time, sigma first: with it at 0, kappa may come out positive.
        let Some(below) = free
            .iter()
            .copied()
            .find(|&index| index > 0 && problem.coefficients[index] < 0.0)
        else {
            break problem;
        };
        free.retain(|&index| index != below);
    };
    Some(describe(model, points, &problem))
}

fn describe(model: Model, points: &[(usize, f64)], problem: &CapacityProblem) -> Fit {
    let [lambda, sigma, kappa] = problem.coefficients;
    let ci = problem.confidence_half_widths();
    let ci_of = |index: usize| {
        let position = problem.free.iter().position(|&free| free == index)?;
        ci.as_ref().map(|ci| ci[position])
    };
    let observed: Vec<f64> = points.iter().map(|&(_, capacity)| capacity).collect();
    let mean = observed.iter().sum::<f64>() / observed.len() as f64;
    let total: f64 = observed.iter().map(|value| (value - mean).powi(2)).sum();
    let residuals = problem.residual_vector();
    let (n_min, first_capacity) = points
        .iter()
        .copied()
        .min_by_key(|&(workers, _)| workers)
        .unwrap_or((1, lambda));
    let n_max = points
        .iter()
        .map(|&(workers, _)| workers)
        .max()
        .unwrap_or(1);
    let (runs, expected, runs_z) = sign_runs(residuals.as_slice(), mean);
    let mut fit = Fit {
        model,
        lambda,
        sigma,
        kappa,
        lambda_ci95: ci_of(0),
        sigma_ci95: ci_of(1),
        kappa_ci95: ci_of(2),
        sigma_at_bound: !problem.free.contains(&1),
        kappa_at_bound: model == Model::Usl && !problem.free.contains(&2),
        r_squared: if total > 0.0 {
            1.0 - residuals.norm_squared() / total
        } else {
            1.0
        },
        n_min,
        n_max,
        levels: points.len(),
        lambda_vs_first_level: lambda / (first_capacity / n_min as f64),
        residual_runs: runs,
        expected_runs: expected,
        runs_z,
        durbin_watson: durbin_watson(residuals.as_slice()),
        adequate: true,
        inadequate_because: None,
        inadequacy: None,
        max_speedup: None,
        peak_workers: None,
        limit_withheld: None,
    };
    judge(&mut fit, points);
    fit
}

/// Sets `adequate` and the supported limit; see [`Fit`].
fn judge(fit: &mut Fit, points: &[(usize, f64)]) {
    let largest_speedup = points
        .iter()
        .map(|&(_, capacity)| capacity / fit.lambda)
        .fold(0.0, f64::max);
    if fit.runs_z.is_some_and(|z| z < RUNS_Z) {
        fit.adequate = false;
        fit.inadequacy = Some(Inadequacy::ResidualStreaks);
        fit.inadequate_because = Some(format!(
            "{} runs of residual signs over {} levels, {:.0} expected of noise",
            fit.residual_runs, fit.levels, fit.expected_runs
        ));
    } else if fit.model == Model::Amdahl && fit.sigma > 0.0 && largest_speedup > 1.05 / fit.sigma {
        fit.adequate = false;
        fit.inadequacy = Some(Inadequacy::PastLimit);
        fit.inadequate_because = Some(format!(
            "measured speedup {largest_speedup:.1} beyond the model's own limit {:.1}",
            1.0 / fit.sigma
        ));
    }
    if fit.adequate
        && let Some(reason) = usl_peak_unseen(fit, points)
    {
        fit.adequate = false;
        fit.inadequacy = Some(Inadequacy::PeakNotMeasured);
        fit.inadequate_because = Some(reason);
    }
    if !fit.adequate {
        fit.limit_withheld = Some("the fit does not follow the data: no limit".to_string());
        return;
    }
    let reach = fit.n_max as f64;
    match fit.model {
        Model::Amdahl if fit.sigma_at_bound || fit.sigma <= 0.0 => {
            fit.limit_withheld =
                Some("sigma is at its bound 0, not measurable here: no limit".to_string());
        }
        Model::Amdahl
            if fit
                .ci99(fit.sigma_ci95, 2)
                .is_none_or(|ci| fit.sigma - ci <= 0.0) =>
        {
            fit.limit_withheld =
                Some("sigma's 99% interval includes 0: no limit can be given".to_string());
        }
        Model::Amdahl if 1.0 / fit.sigma > SPEEDUP_REACH * reach => {
            fit.limit_withheld = Some(format!(
                "the limit 1/sigma = {:.0} lies beyond {SPEEDUP_REACH}x the largest level measured ({})",
                1.0 / fit.sigma,
                fit.n_max
            ));
        }
        Model::Amdahl => fit.max_speedup = Some(1.0 / fit.sigma),
        Model::Usl if fit.kappa_at_bound || fit.kappa <= 0.0 => {
            fit.limit_withheld =
                Some("kappa is at its bound 0, not measurable here: no peak".to_string());
        }
        Model::Usl
            if fit.sigma >= 1.0
                || fit
                    .ci99(fit.kappa_ci95, 3 - usize::from(fit.sigma_at_bound))
                    .is_none_or(|ci| fit.kappa - ci <= 0.0) =>
        {
            fit.limit_withheld =
                Some("kappa's 99% interval includes 0: no peak can be given".to_string());
        }
        Model::Usl => {
            let peak = ((1.0 - fit.sigma) / fit.kappa).sqrt();
            if peak > PEAK_REACH * reach {
                fit.limit_withheld = Some(format!(
                    "the peak near {peak:.0} workers lies beyond {PEAK_REACH}x the largest level measured ({})",
                    fit.n_max
                ));
            } else {
                fit.peak_workers = Some(peak);
            }
        }
    }
}

/// A USL curve whose peak lies inside the measured range must see capacity fall after it:
/// when the curve falls by more than 2% from its peak to the last level but the measurements
/// fall less than half as much, the model's own limit contradicts the data.
fn usl_peak_unseen(fit: &Fit, points: &[(usize, f64)]) -> Option<String> {
    if fit.model != Model::Usl || fit.kappa <= 0.0 || fit.sigma >= 1.0 {
        return None;
    }
    let peak = ((1.0 - fit.sigma) / fit.kappa).sqrt();
    let last = fit.n_max as f64;
    if peak >= last {
        return None;
    }
    let model_fall = 1.0 - fit.capacity(last) / fit.capacity(peak);
    let after: Vec<(usize, f64)> = points
        .iter()
        .copied()
        .filter(|&(workers, _)| workers as f64 >= peak.floor())
        .collect();
    let highest = after
        .iter()
        .map(|&(_, capacity)| capacity)
        .fold(0.0, f64::max);
    let at_last = after.iter().max_by_key(|&&(workers, _)| workers)?.1;
    let measured_fall = 1.0 - at_last / highest;
    (model_fall > 0.02 && measured_fall < model_fall / 2.0).then(|| {
        format!(
            "the curve peaks near {peak:.0} workers and falls {:.0}% by {}, the measurements only {:.0}%",
            100.0 * model_fall,
            fit.n_max,
            100.0 * measured_fall
        )
    })
}

/// Runs of equal sign among the residuals (those below 1e-9 of the mean capacity count as
/// none), the number expected if signs were random, and the standard score of the runs
/// (Wald-Wolfowitz), from `RUNS_MIN_LEVELS` signed residuals on.
fn sign_runs(residuals: &[f64], scale: f64) -> (usize, f64, Option<f64>) {
    let signs: Vec<bool> = residuals
        .iter()
        .filter(|residual| residual.abs() > 1e-9 * scale.abs())
        .map(|residual| *residual > 0.0)
        .collect();
    if signs.is_empty() {
        return (0, 0.0, None);
    }
    let runs = signs.windows(2).filter(|pair| pair[0] != pair[1]).count() + 1;
    let count = signs.len() as f64;
    let positive = signs.iter().filter(|&&sign| sign).count() as f64;
    let negative = count - positive;
    let expected = 2.0 * positive * negative / count + 1.0;
    let variance = (expected - 1.0) * (expected - 2.0) / (count - 1.0);
    let z = (signs.len() >= RUNS_MIN_LEVELS && variance > 0.0)
        .then(|| (runs as f64 - expected) / variance.sqrt());
    (runs, expected, z)
}

fn durbin_watson(residuals: &[f64]) -> f64 {
    let total: f64 = residuals.iter().map(|residual| residual * residual).sum();
    if total == 0.0 {
        return 2.0;
    }
    residuals
        .windows(2)
        .map(|pair| (pair[1] - pair[0]).powi(2))
        .sum::<f64>()
        / total
}

struct CapacityProblem {
    workers: DVector<f64>,
    capacity: DVector<f64>,
    /// lambda, sigma and kappa; those not free stay at their value (0 for a bound).
    coefficients: [f64; 3],
    /// Indices of the coefficients the optimiser moves.
    free: Vec<usize>,
}

impl CapacityProblem {
    fn new(points: &[(usize, f64)], free: &[usize]) -> Self {
        let workers = DVector::from_iterator(points.len(), points.iter().map(|p| p.0 as f64));
        let capacity = DVector::from_iterator(points.len(), points.iter().map(|p| p.1));
        // Start from the best per-worker capacity seen and mild contention.
        let lambda = points
            .iter()
            .map(|&(workers, capacity)| capacity / workers as f64)
            .fold(0.0, f64::max);
        let start = [lambda, 0.01, 0.0001];
        let mut coefficients = [0.0; 3];
        for &index in free {
            coefficients[index] = start[index];
        }
        Self {
            workers,
            capacity,
            coefficients,
            free: free.to_vec(),
        }
    }

    fn residual_vector(&self) -> DVector<f64> {
        let [lambda, sigma, kappa] = self.coefficients;
        DVector::from_iterator(
            self.workers.len(),
            self.workers
                .iter()
                .zip(self.capacity.iter())
                .map(|(&n, &observed)| predict(lambda, sigma, kappa, n) - observed),
        )
    }

    fn jacobian_matrix(&self) -> DMatrix<f64> {
        let [lambda, sigma, kappa] = self.coefficients;
        DMatrix::from_fn(self.workers.len(), self.free.len(), |row, column| {
            let n = self.workers[row];
            let denominator = 1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0);
            match self.free[column] {
                0 => n / denominator,
                1 => -lambda * n * (n - 1.0) / denominator.powi(2),
                _ => -lambda * n * n * (n - 1.0) / denominator.powi(2),
            }
        })
    }

    /// 95% half-widths of the free coefficients from the covariance s^2 (J^T J)^-1.
    fn confidence_half_widths(&self) -> Option<Vec<f64>> {
        let freedom = self.workers.len().checked_sub(self.free.len())?;
        if freedom == 0 {
            return None;
        }
        let jacobian = self.jacobian_matrix();
        let covariance = (jacobian.transpose() * &jacobian).try_inverse()?;
        let variance = self.residual_vector().norm_squared() / freedom as f64;
        let quantile = StudentsT::new(0.0, 1.0, freedom as f64)
            .ok()?
            .inverse_cdf(0.975);
        Some(
            (0..self.free.len())
                .map(|index| quantile * (variance * covariance[(index, index)]).max(0.0).sqrt())
                .collect(),
        )
    }
}

impl LeastSquaresProblem<f64, Dyn, Dyn> for CapacityProblem {
    type ResidualStorage = Owned<f64, Dyn>;
    type JacobianStorage = Owned<f64, Dyn, Dyn>;
    type ParameterStorage = Owned<f64, Dyn>;

    fn set_params(&mut self, params: &DVector<f64>) {
        for (&index, &value) in self.free.iter().zip(params.iter()) {
            self.coefficients[index] = value;
        }
    }

    fn params(&self) -> DVector<f64> {
        DVector::from_iterator(
            self.free.len(),
            self.free.iter().map(|&index| self.coefficients[index]),
        )
    }

    fn residuals(&self) -> Option<DVector<f64>> {
        Some(self.residual_vector())
    }

    fn jacobian(&self) -> Option<DMatrix<f64>> {
        Some(self.jacobian_matrix())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic noise in [-1, 1): the same data on every run and machine.
    fn noise(index: usize) -> f64 {
        let mut state = (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        state ^= state >> 29;
        state = state.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        state ^= state >> 32;
        (state % 2_000_000) as f64 / 1_000_000.0 - 1.0
    }

    fn synthetic(lambda: f64, sigma: f64, kappa: f64, levels: usize) -> Vec<(usize, f64)> {
        (1..=levels)
            .map(|n| {
                let exact = predict(lambda, sigma, kappa, n as f64);
                (n, exact * (1.0 + 0.01 * noise(n)))
            })
            .collect()
    }

    #[test]
    fn usl_recovers_sigma_and_kappa_within_two_percent() {
        let (sigma, kappa) = (0.05, 0.0005);
        let fit = fit(Model::Usl, &synthetic(1000.0, sigma, kappa, 100)).unwrap();
        assert!(
            (fit.sigma / sigma - 1.0).abs() < 0.02,
            "sigma {}",
            fit.sigma
        );
        assert!(
            (fit.kappa / kappa - 1.0).abs() < 0.02,
            "kappa {}",
            fit.kappa
        );
        assert!((fit.lambda / 1000.0 - 1.0).abs() < 0.02);
        assert!(fit.r_squared > 0.99);
        let peak = fit.peak_workers.unwrap();
        assert!((peak / ((1.0 - sigma) / kappa).sqrt() - 1.0).abs() < 0.02);
        assert!(fit.sigma_ci95.unwrap() > 0.0 && fit.kappa_ci95.unwrap() > 0.0);
    }

    #[test]
    fn amdahl_recovers_sigma_within_two_percent() {
        let sigma = 0.03;
        let fit = fit(Model::Amdahl, &synthetic(50.0, sigma, 0.0, 64)).unwrap();
        assert!(
            (fit.sigma / sigma - 1.0).abs() < 0.02,
            "sigma {}",
            fit.sigma
        );
        assert!((fit.max_speedup.unwrap() - 1.0 / sigma).abs() < 1.0);
        assert_eq!(fit.kappa, 0.0);
        assert_eq!((fit.n_min, fit.n_max, fit.levels), (1, 64, 64));
    }

    #[test]
    fn too_few_points_give_no_fit() {
        assert_eq!(fit(Model::Usl, &[(1, 1.0), (2, 2.0), (4, 3.5)]), None);
    }
}
