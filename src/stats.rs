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

#[cfg(test)]
mod tests {
    use super::*;

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
