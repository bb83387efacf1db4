//! A percentile's confidence interval from a level's histogram, distribution-free: the
//! number of responses below the true q-quantile is Binomial(n, q), so the order statistics
//! at the binomial's lower and upper tail ranks bracket it with a known probability, whatever
//! the shape of the response times. A search's verdict on a probe rests on it: one level's
//! p99 is an estimate, and a probe near the limit must not be called on noise.

use serde::{Deserialize, Serialize};
use statrs::distribution::{Binomial, DiscreteCDF};

use super::{Percentile, ResponseTimes};

/// The interval's coverage: 95%, two-sided.
pub const CONFIDENCE: f64 = 0.95;

/// The quantile an objective's percentile names; None for max and mean, which no order
/// statistic brackets (a sample's max says nothing of a larger sample's).
pub fn quantile_of(percentile: Percentile) -> Option<f64> {
    match percentile {
        Percentile::P50 => Some(0.50),
        Percentile::P90 => Some(0.90),
        Percentile::P95 => Some(0.95),
        Percentile::P99 => Some(0.99),
        Percentile::P999 => Some(0.999),
        Percentile::Max | Percentile::Mean => None,
    }
}

/// The ranks (1-based, in the sorted responses) whose values bracket the `q`-quantile of `n`
/// responses with at least `confidence`, each tail at most half the rest: `(lower, upper)`.
/// None on a side means no rank is far enough out (too few responses): the bound is 0 below,
/// unbounded above.
pub fn rank_bounds(n: u64, q: f64, confidence: f64) -> (Option<u64>, Option<u64>) {
    if n == 0 || !(0.0..1.0).contains(&q) || q <= 0.0 {
        return (None, None);
    }
    let tail = (1.0 - confidence) / 2.0;
    let binomial = Binomial::new(q, n).expect("q within (0, 1)");
    // B, the responses below the quantile: P(X_(l) > ξ) = P(B < l) = F(l - 1) <= tail, the
    // largest such l; P(X_(u) < ξ) = P(B >= u) = 1 - F(u - 1) <= tail, the smallest such u.
    let above_tail = first_rank_where(n, |k| binomial.cdf(k) > tail);
    let lower = above_tail.filter(|&k| k >= 1);
    let upper = first_rank_where(n, |k| binomial.cdf(k) >= 1.0 - tail)
        .map(|k| k + 1)
        .filter(|&u| u <= n);
    (lower, upper)
}

/// The smallest k in 0..=n where `holds` (monotone in k), by bisection.
fn first_rank_where(n: u64, holds: impl Fn(u64) -> bool) -> Option<u64> {
    let (mut low, mut high) = (0u64, n);
    if !holds(high) {
        return None;
    }
    while low < high {
        let middle = low + (high - low) / 2;
        if holds(middle) {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    Some(low)
}

/// A percentile of one level's responses with its confidence interval, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PercentileInterval {
    pub responses: u64,
    /// The nearest-rank estimate, as the level's own figure reads.
    pub estimate_ms: f64,
    /// 0 when too few responses put a rank below the quantile.
    pub lower_ms: f64,
    /// None when too few responses put a rank above it: the percentile is unbounded.
    pub upper_ms: Option<f64>,
}

/// What a probe's interval says of an objective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The whole interval is within the limit.
    Kept,
    /// The whole interval is beyond it.
    Broken,
    /// The limit is inside the interval: more responses would be needed to tell.
    Undecided,
}

impl PercentileInterval {
    /// The `percentile` of `times` at [`CONFIDENCE`]; None when nothing was recorded or the
    /// percentile is max or mean.
    pub fn of(times: &ResponseTimes, percentile: Percentile) -> Option<Self> {
        let q = quantile_of(percentile)?;
        let n = times.count();
        if n == 0 {
            return None;
        }
        let histogram = times.histogram();
        let (lower, upper) = rank_bounds(n, q, CONFIDENCE);
        let nearest = ((q * n as f64).ceil() as u64).clamp(1, n);
        // Each rank's bucket: its lowest value for a lower bound, its highest for an upper
        // one, so the histogram's resolution widens the interval rather than shifting it.
        let bucket_at = |rank: u64| {
            let mut seen = 0u64;
            histogram
                .iter_recorded()
                .find(|bucket| {
                    seen += bucket.count_at_value();
                    seen >= rank
                })
                .map(|bucket| bucket.value_iterated_to())
                .unwrap_or_else(|| histogram.max())
        };
        let ms = |ns: u64| ns as f64 / 1e6;
        Some(Self {
            responses: n,
            estimate_ms: ms(histogram.highest_equivalent(bucket_at(nearest))),
            lower_ms: lower.map_or(0.0, |rank| ms(histogram.lowest_equivalent(bucket_at(rank)))),
            upper_ms: upper.map(|rank| ms(histogram.highest_equivalent(bucket_at(rank)))),
        })
    }

    /// Kept when the upper bound is within `limit_ms`, broken when the lower bound is beyond
    /// it, else undecided.
    pub fn verdict(&self, limit_ms: f64) -> Verdict {
        match self.upper_ms {
            Some(upper) if upper <= limit_ms => Verdict::Kept,
            _ if self.lower_ms > limit_ms => Verdict::Broken,
            _ => Verdict::Undecided,
        }
    }

    /// "4.6 ms [4.4, 4.9]", "4.6 ms [4.4, unbounded]".
    pub fn text(&self) -> String {
        let figure = crate::format::significant;
        format!(
            "{} ms [{}, {}]",
            figure(self.estimate_ms),
            figure(self.lower_ms),
            self.upper_ms.map_or("unbounded".to_string(), figure)
        )
    }
}

/// Responses a probe needs for `percentile`'s interval to close above the estimate with room
/// to spare: ten times those beyond the quantile (1,000 for p99, 10,000 for p99.9).
pub fn responses_needed(percentile: Percentile) -> u64 {
    quantile_of(percentile).map_or(1_000, |q| (10.0 / (1.0 - q)).round() as u64)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// P(B <= k) for B ~ Binomial(n, q), summed exactly term by term in log space.
    fn exact_cdf(n: u64, q: f64, k: u64) -> f64 {
        let mut log_choose = 0.0f64;
        let mut total = 0.0;
        for i in 0..=k.min(n) {
            if i > 0 {
                log_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
            }
            total += (log_choose + i as f64 * q.ln() + (n - i) as f64 * (1.0 - q).ln()).exp();
        }
        total
    }

    /// The bounds from exact binomial quantiles: the largest l with F(l-1) <= tail and the
    /// smallest u with 1 - F(u-1) <= tail.
    fn exact_bounds(n: u64, q: f64, confidence: f64) -> (Option<u64>, Option<u64>) {
        let tail = (1.0 - confidence) / 2.0;
        let cdf: Vec<f64> = (0..=n).map(|k| exact_cdf(n, q, k)).collect();
        let lower = (1..=n).rev().find(|&l| cdf[(l - 1) as usize] <= tail);
        let upper = (1..=n).find(|&u| 1.0 - cdf[(u - 1) as usize] <= tail);
        (lower, upper)
    }

    #[test]
    fn rank_bounds_are_the_exact_binomial_quantiles() {
        for (n, q) in [
            (10, 0.5),
            (20, 0.5),
            (100, 0.9),
            (300, 0.99),
            (1000, 0.99),
            (1000, 0.95),
            (2000, 0.999),
            (5000, 0.999),
        ] {
            assert_eq!(
                rank_bounds(n, q, CONFIDENCE),
                exact_bounds(n, q, CONFIDENCE),
                "n {n} q {q}"
            );
        }
        // The textbook median of ten: the 2nd and 9th values (coverage 97.9%).
        assert_eq!(rank_bounds(10, 0.5, 0.95), (Some(2), Some(9)));
        // p99 of 1,000: a few ranks either side of the 990th.
        let (lower, upper) = rank_bounds(1000, 0.99, 0.95);
        assert_eq!((lower, upper), (Some(983), Some(997)));
        // Too few responses for an upper rank: p99 of 100.
        assert_eq!(rank_bounds(100, 0.99, 0.95).1, None);
    }

    #[test]
    fn the_bounds_cover_at_least_the_confidence_and_no_tighter_pair_does() {
        for (n, q) in [(50, 0.9), (400, 0.99), (1500, 0.99)] {
            let (Some(l), Some(u)) = rank_bounds(n, q, CONFIDENCE) else {
                panic!("n {n} q {q}: no bounds");
            };
            // Coverage P(l <= B < u) = F(u-1) - F(l-1).
            let coverage = |l: u64, u: u64| exact_cdf(n, q, u - 1) - exact_cdf(n, q, l - 1);
            assert!(coverage(l, u) >= CONFIDENCE, "n {n}: {}", coverage(l, u));
            assert!(
                1.0 - exact_cdf(n, q, l) > (1.0 - CONFIDENCE) / 2.0,
                "l + 1 leaves more than a tail below"
            );
            assert!(
                exact_cdf(n, q, u - 2) < 1.0 - (1.0 - CONFIDENCE) / 2.0,
                "u - 1 leaves more than a tail above"
            );
        }
    }

    #[test]
    fn a_histograms_interval_brackets_its_percentile_and_judges_the_limit() {
        let mut times = ResponseTimes::default();
        // 1..=2000 µs, each once: p99 is 1.98 ms.
        for us in 1..=2000u64 {
            times.record(Duration::from_micros(us));
        }
        let interval = PercentileInterval::of(&times, Percentile::P99).unwrap();
        assert_eq!(interval.responses, 2000);
        assert!((interval.estimate_ms - 1.98).abs() < 0.002, "{interval:?}");
        let upper = interval.upper_ms.unwrap();
        assert!(interval.lower_ms < 1.98 && upper > 1.98, "{interval:?}");
        assert!(interval.lower_ms > 1.95 && upper < 2.0, "{interval:?}");
        assert_eq!(interval.verdict(2.5), Verdict::Kept);
        assert_eq!(interval.verdict(1.5), Verdict::Broken);
        assert_eq!(interval.verdict(1.98), Verdict::Undecided);
        // 100 responses cannot bound a p99 from above.
        let mut few = ResponseTimes::default();
        for us in 1..=100u64 {
            few.record(Duration::from_micros(us));
        }
        let interval = PercentileInterval::of(&few, Percentile::P99).unwrap();
        assert_eq!(interval.upper_ms, None);
        assert_eq!(interval.verdict(1e6), Verdict::Undecided);
        assert!(
            interval.text().ends_with("unbounded]"),
            "{}",
            interval.text()
        );
        assert!(PercentileInterval::of(&few, Percentile::Max).is_none());
        assert_eq!(responses_needed(Percentile::P99), 1_000);
        assert_eq!(responses_needed(Percentile::P999), 10_000);
    }
}
