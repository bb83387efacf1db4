//! Plain descriptive statistics, shared by the sweep (a level's CV, its summary) and the
//! analysis. A leaf module.

use serde::{Deserialize, Serialize};

/// Order statistics of a set of values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub median: f64,
    pub mean: f64,
    pub stdev: f64,
    pub min: f64,
    pub max: f64,
}

/// Median, mean, sample standard deviation, min and max; zeros for an empty slice.
pub fn describe(values: &[f64]) -> Stats {
    if values.is_empty() {
        return Stats::default();
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let count = sorted.len();
    let mean = sorted.iter().sum::<f64>() / count as f64;
    let variance = if count > 1 {
        sorted
            .iter()
            .map(|value| (value - mean).powi(2))
            .sum::<f64>()
            / (count - 1) as f64
    } else {
        0.0
    };
    Stats {
        median: median_of_sorted(&sorted),
        mean,
        stdev: variance.sqrt(),
        min: sorted[0],
        max: sorted[count - 1],
    }
}

fn median_of_sorted(sorted: &[f64]) -> f64 {
    let middle = sorted.len() / 2;
    if sorted.len().is_multiple_of(2) {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    } else {
        sorted[middle]
    }
}

pub fn median(values: &[f64]) -> f64 {
    describe(values).median
}

/// The spread one outlier cannot inflate: 1.4826 x the median absolute deviation from the
/// median (the standard deviation, for normal data).
pub fn robust_sigma(values: &[f64]) -> f64 {
    let center = median(values);
    let deviations: Vec<f64> = values.iter().map(|value| (value - center).abs()).collect();
    1.4826 * median(&deviations)
}

/// Coefficient of variation (stdev / mean), 0 when the mean is 0.
pub fn coefficient_of_variation(values: &[f64]) -> f64 {
    let stats = describe(values);
    if stats.mean == 0.0 {
        0.0
    } else {
        stats.stdev / stats.mean
    }
}

/// The 95% half-width of the mean of `values`, relative to the mean, from Student's t with
/// n - 1 degrees of freedom: two or three batches are not a normal sample, and their spread
/// says more than it seems (t is 12.7 for two, 4.3 for three). None under two values or for a
/// mean of 0, where the values say nothing of their own uncertainty.
pub fn relative_half_width_95(values: &[f64]) -> Option<f64> {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    if values.len() < 2 {
        return None;
    }
    let stats = describe(values);
    if stats.mean <= 0.0 || !stats.mean.is_finite() {
        return None;
    }
    let freedom = (values.len() - 1) as f64;
    let t = StudentsT::new(0.0, 1.0, freedom).ok()?.inverse_cdf(0.975);
    Some(t * stats.stdev / (values.len() as f64).sqrt() / stats.mean)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known answers: t(0.975, 1) = 12.706, t(0.975, 2) = 4.303.
    #[test]
    fn a_mean_of_few_values_is_uncertain_by_students_t() {
        // Two values 9 and 11: sd sqrt(2), mean 10, half-width 12.706 x sqrt 2 / sqrt 2 / 10.
        let two = relative_half_width_95(&[9.0, 11.0]).unwrap();
        assert!((two - 1.2706).abs() < 1e-3, "{two}");
        // Three values 9, 10, 11: sd 1, half-width 4.303 / sqrt 3 / 10.
        let three = relative_half_width_95(&[9.0, 10.0, 11.0]).unwrap();
        assert!((three - 0.24843).abs() < 1e-4, "{three}");
        assert_eq!(relative_half_width_95(&[10.0]), None);
        assert_eq!(relative_half_width_95(&[0.0, 0.0]), None);
        assert_eq!(relative_half_width_95(&[5.0, 5.0]), Some(0.0));
    }

    #[test]
    fn describes_an_odd_and_an_even_set() {
        let odd = describe(&[3.0, 1.0, 2.0]);
        assert_eq!(
            (odd.median, odd.mean, odd.min, odd.max),
            (2.0, 2.0, 1.0, 3.0)
        );
        assert!((odd.stdev - 1.0).abs() < 1e-12);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(describe(&[]).median, 0.0);
        assert!((coefficient_of_variation(&[9.0, 11.0]) - 0.1414213562).abs() < 1e-9);
    }
}
