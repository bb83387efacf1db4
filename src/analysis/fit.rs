//! Amdahl and Universal Scalability Law fits to capacity, by Levenberg-Marquardt.
//!
//! Capacity C(n) = lambda n / (1 + sigma (n - 1) + kappa n (n - 1)); Amdahl is kappa = 0.
//! lambda (the single-worker capacity) is a free coefficient, as in the R package usl since
//! 2.0, so a noisy or missing n = 1 level does not skew sigma and kappa.

use levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt};
use nalgebra::{DMatrix, DVector, Dyn, Owned};
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    Amdahl,
    Usl,
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
    pub r_squared: f64,
    /// The range of worker counts used.
    pub n_min: usize,
    pub n_max: usize,
    pub levels: usize,
    /// Amdahl: the asymptotic speedup 1 / sigma.
    pub max_speedup: Option<f64>,
    /// USL: where capacity peaks, sqrt((1 - sigma) / kappa).
    pub peak_workers: Option<f64>,
}

impl Fit {
    /// Capacity the model predicts at `workers`.
    pub fn capacity(&self, workers: f64) -> f64 {
        predict(self.lambda, self.sigma, self.kappa, workers)
    }
}

fn predict(lambda: f64, sigma: f64, kappa: f64, workers: f64) -> f64 {
    lambda * workers / (1.0 + sigma * (workers - 1.0) + kappa * workers * (workers - 1.0))
}

/// Fits `model` to (workers, capacity) points; None with fewer points than coefficients + 1
/// or when the optimiser does not converge.
pub fn fit(model: Model, points: &[(usize, f64)]) -> Option<Fit> {
    let parameters = match model {
        Model::Amdahl => 2,
        Model::Usl => 3,
    };
    if points.len() <= parameters {
        return None;
    }
    let problem = CapacityProblem::new(model, points);
    let (problem, report) = LevenbergMarquardt::new().minimize(problem);
    if !report.termination.was_successful() {
        return None;
    }
    let lambda = problem.params[0];
    let sigma = problem.params[1];
    let kappa = if model == Model::Usl {
        problem.params[2]
    } else {
        0.0
    };
    let ci = problem.confidence_half_widths();
    let observed: Vec<f64> = points.iter().map(|&(_, capacity)| capacity).collect();
    let mean = observed.iter().sum::<f64>() / observed.len() as f64;
    let total: f64 = observed.iter().map(|value| (value - mean).powi(2)).sum();
    let residual: f64 = problem.residual_vector().norm_squared();
    Some(Fit {
        model,
        lambda,
        sigma,
        kappa,
        lambda_ci95: ci.as_ref().map(|ci| ci[0]),
        sigma_ci95: ci.as_ref().map(|ci| ci[1]),
        kappa_ci95: ci.as_ref().and_then(|ci| ci.get(2).copied()),
        r_squared: if total > 0.0 {
            1.0 - residual / total
        } else {
            1.0
        },
        n_min: points.iter().map(|&(workers, _)| workers).min()?,
        n_max: points.iter().map(|&(workers, _)| workers).max()?,
        levels: points.len(),
        max_speedup: (model == Model::Amdahl && sigma > 0.0).then(|| 1.0 / sigma),
        peak_workers: (model == Model::Usl && kappa > 0.0 && sigma < 1.0)
            .then(|| ((1.0 - sigma) / kappa).sqrt()),
    })
}

struct CapacityProblem {
    workers: DVector<f64>,
    capacity: DVector<f64>,
    /// lambda, sigma and (USL) kappa.
    params: DVector<f64>,
}

impl CapacityProblem {
    fn new(model: Model, points: &[(usize, f64)]) -> Self {
        let workers = DVector::from_iterator(points.len(), points.iter().map(|p| p.0 as f64));
        let capacity = DVector::from_iterator(points.len(), points.iter().map(|p| p.1));
        // Start from the best per-worker capacity seen and mild contention.
        let lambda = points
            .iter()
            .map(|&(workers, capacity)| capacity / workers as f64)
            .fold(0.0, f64::max);
        let params = match model {
            Model::Amdahl => DVector::from_vec(vec![lambda, 0.01]),
            Model::Usl => DVector::from_vec(vec![lambda, 0.01, 0.0001]),
        };
        Self {
            workers,
            capacity,
            params,
        }
    }

    fn kappa(&self) -> f64 {
        self.params.get(2).copied().unwrap_or(0.0)
    }

    fn residual_vector(&self) -> DVector<f64> {
        let (lambda, sigma, kappa) = (self.params[0], self.params[1], self.kappa());
        DVector::from_iterator(
            self.workers.len(),
            self.workers
                .iter()
                .zip(self.capacity.iter())
                .map(|(&n, &observed)| predict(lambda, sigma, kappa, n) - observed),
        )
    }

    fn jacobian_matrix(&self) -> DMatrix<f64> {
        let (lambda, sigma, kappa) = (self.params[0], self.params[1], self.kappa());
        DMatrix::from_fn(self.workers.len(), self.params.len(), |row, column| {
            let n = self.workers[row];
            let denominator = 1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0);
            match column {
                0 => n / denominator,
                1 => -lambda * n * (n - 1.0) / denominator.powi(2),
                _ => -lambda * n * n * (n - 1.0) / denominator.powi(2),
            }
        })
    }

    /// 95% half-widths from the covariance s^2 (J^T J)^-1 at the optimum.
    fn confidence_half_widths(&self) -> Option<Vec<f64>> {
        let freedom = self.workers.len().checked_sub(self.params.len())?;
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
            (0..self.params.len())
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
        self.params.copy_from(params);
    }

    fn params(&self) -> DVector<f64> {
        self.params.clone()
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
