//! Response times for `--report-interval` lines while a level runs, as pgbench's `-P` lines
//! carry latency: each session counts its responses in buckets of its own (one heap block
//! per session, written only by it, read by the interval reporter), about 3% wide, so the
//! reporter can give each interval's p50 and p99 without a lock or a shared write in the
//! timed path. The level's recorded figures still come from its exact histograms.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Buckets per power of two: a bucket spans 1/32 of its power, about 3% of its values.
const SUB_BUCKETS: u64 = 32;
const SUB_BITS: u32 = 5;
/// Powers of two of nanoseconds counted: up to 2^44 ns, almost five hours.
const TOP_POWER: u32 = 44;
/// Every bucket: values below 32 ns one each, then 32 per power of two up to the top.
pub const BUCKETS: usize = ((TOP_POWER - SUB_BITS + 1) as u64 * SUB_BUCKETS) as usize;

/// Per-worker running operation counts of the level in progress (fixed-time jobs), each on a
/// cache line of its own, read by the interval lines and the metrics endpoint.
pub type LiveCounts = Arc<[crossbeam_utils::CachePadded<AtomicU64>]>;

/// One session's counts: a heap block of its own.
pub struct SessionBuckets(Box<[AtomicU64]>);

/// The level's sessions' counts, one block each.
pub struct LiveResponses(Box<[SessionBuckets]>);

/// Where one session counts its responses.
#[derive(Clone)]
pub struct LiveSlot {
    responses: Arc<LiveResponses>,
    session: usize,
}

/// The bucket of a response of `ns` nanoseconds.
#[inline]
fn bucket(ns: u64) -> usize {
    let ns = ns.clamp(1, (1 << TOP_POWER) - 1);
    if ns < SUB_BUCKETS {
        return ns as usize;
    }
    let power = 63 - ns.leading_zeros();
    let sub = (ns >> (power - SUB_BITS)) - SUB_BUCKETS;
    ((power - SUB_BITS + 1) as u64 * SUB_BUCKETS + sub) as usize
}

/// The middle of a bucket, in nanoseconds.
fn middle(bucket: usize) -> f64 {
    let bucket = bucket as u64;
    if bucket < SUB_BUCKETS {
        return bucket as f64;
    }
    let power = (bucket / SUB_BUCKETS) as u32 + SUB_BITS - 1;
    let width = 1u64 << (power - SUB_BITS);
    let low = (SUB_BUCKETS + bucket % SUB_BUCKETS) * width;
    low as f64 + width as f64 / 2.0
}

impl LiveResponses {
    /// Counts for `sessions` sessions, allocated before the level's first window.
    pub fn new(sessions: usize) -> Arc<Self> {
        Arc::new(Self(
            (0..sessions)
                .map(|_| SessionBuckets((0..BUCKETS).map(|_| AtomicU64::new(0)).collect()))
                .collect(),
        ))
    }

    /// Session `session`'s place to count.
    pub fn slot(self: &Arc<Self>, session: usize) -> LiveSlot {
        LiveSlot {
            responses: Arc::clone(self),
            session,
        }
    }

    /// Every session's counts summed, bucket by bucket (the reporter's reading).
    pub fn totals(&self) -> Vec<u64> {
        let mut totals = vec![0; BUCKETS];
        for session in self.0.iter() {
            for (total, count) in totals.iter_mut().zip(session.0.iter()) {
                *total += count.load(Ordering::Relaxed);
            }
        }
        totals
    }
}

impl LiveSlot {
    /// One response: a plain load and store on this session's own bucket (it is the only
    /// writer), so nothing waits and no other session's cache line is touched.
    #[inline]
    pub fn record(&self, response: Duration) {
        let ns = u64::try_from(response.as_nanos()).unwrap_or(u64::MAX);
        if let Some(session) = self.responses.0.get(self.session) {
            let count = &session.0[bucket(ns)];
            count.store(count.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        }
    }
}

/// The p50 and p99, in milliseconds, of the responses counted between two readings
/// (`before` and `after` from [`LiveResponses::totals`]); None when there were none.
pub fn interval_percentiles(before: &[u64], after: &[u64]) -> Option<(f64, f64)> {
    let counts: Vec<u64> = after
        .iter()
        .zip(before.iter().chain(std::iter::repeat(&0)))
        .map(|(after, before)| after.saturating_sub(*before))
        .collect();
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let at = |quantile: f64| {
        // Nearest rank, as the level's own percentiles.
        let rank = ((quantile * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (index, count) in counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return middle(index) / 1e6;
            }
        }
        middle(BUCKETS - 1) / 1e6
    };
    Some((at(0.50), at(0.99)))
}

/// The upper end of a bucket, in nanoseconds: every value in it is below.
fn upper(bucket: usize) -> f64 {
    if (bucket as u64) < SUB_BUCKETS {
        return bucket as f64 + 1.0;
    }
    let power = (bucket as u64 / SUB_BUCKETS) as u32 + SUB_BITS - 1;
    let width = 1u64 << (power - SUB_BITS);
    ((SUB_BUCKETS + bucket as u64 % SUB_BUCKETS + 1) * width) as f64
}

/// Counts read with [`LiveResponses::totals`] in a classic histogram's buckets (upper bounds
/// in seconds, rising, the last `f64::INFINITY`), each bucket's own count (not cumulative),
/// with the sum of the values (each bucket's middle: within 3%) and their count. A fine
/// bucket goes to the first bound at or above its upper end, so a value is never counted
/// below its bound.
pub fn classic_buckets(totals: &[u64], bounds_s: &[f64]) -> (Vec<(f64, u64)>, f64, u64) {
    let mut buckets: Vec<(f64, u64)> = bounds_s.iter().map(|bound| (*bound, 0)).collect();
    let (mut sum_s, mut count) = (0.0, 0);
    for (index, &n) in totals.iter().enumerate().filter(|(_, n)| **n > 0) {
        let upper_s = upper(index) / 1e9;
        if let Some(bucket) = buckets.iter_mut().find(|(bound, _)| *bound >= upper_s) {
            bucket.1 += n;
        }
        sum_s += n as f64 * middle(index) / 1e9;
        count += n;
    }
    (buckets, sum_s, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_buckets_hold_each_response_at_or_below_its_bound() {
        let responses = LiveResponses::new(1);
        let slot = responses.slot(0);
        // 10 of 0.9 ms, 5 of 3 ms, 1 of 20 s.
        for (ms, times) in [(0.9, 10), (3.0, 5), (20_000.0, 1)] {
            for _ in 0..times {
                slot.record(Duration::from_secs_f64(ms / 1e3));
            }
        }
        let bounds = [0.001, 0.005, 10.0, f64::INFINITY];
        let (buckets, sum_s, count) = classic_buckets(&responses.totals(), &bounds);
        assert_eq!(
            buckets,
            [(0.001, 10), (0.005, 5), (10.0, 0), (f64::INFINITY, 1)]
        );
        assert_eq!(count, 16);
        let exact = 10.0 * 0.0009 + 5.0 * 0.003 + 20.0;
        assert!((sum_s - exact).abs() / exact < 0.03, "{sum_s}");
        // Each bucket's last value is in it, and its upper end above its middle.
        for index in 1..BUCKETS {
            assert!(upper(index) > middle(index), "{index}");
            assert_eq!(bucket(upper(index) as u64 - 1), index, "{index}");
        }
    }

    #[test]
    fn buckets_are_ordered_contiguous_and_within_three_percent() {
        let mut last = 0;
        let mut values: Vec<u64> = (1..100_000u64)
            .chain((17..43).map(|power| (1u64 << power) + 7))
            .collect();
        values.sort_unstable();
        for ns in values {
            let index = bucket(ns);
            assert!(index >= last, "{ns}");
            assert!(index < BUCKETS);
            last = index;
            let error = (middle(index) - ns as f64).abs() / ns as f64;
            assert!(
                error <= 1.0 / 32.0,
                "{ns} ns in bucket {index}: {}",
                middle(index)
            );
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
        // Every bucket is reached: its middle falls in it, none skipped between powers.
        for index in 1..BUCKETS {
            assert_eq!(bucket(middle(index) as u64), index);
        }
    }

    #[test]
    fn an_intervals_percentiles_are_its_own_responses() {
        let responses = LiveResponses::new(2);
        let (one, two) = (responses.slot(0), responses.slot(1));
        // Before: 1,000 responses of 100 ms, not in the interval.
        for _ in 0..1000 {
            one.record(Duration::from_millis(100));
        }
        let before = responses.totals();
        // The interval: 98 of 1 ms and 2 of 50 ms, over two sessions.
        for index in 0..100 {
            let slot = if index % 2 == 0 { &one } else { &two };
            slot.record(Duration::from_millis(if index < 98 { 1 } else { 50 }));
        }
        let (p50, p99) = interval_percentiles(&before, &responses.totals()).unwrap();
        assert!((p50 - 1.0).abs() < 0.03, "{p50}");
        assert!((p99 - 50.0).abs() < 1.5, "{p99}");
        let now = responses.totals();
        assert_eq!(interval_percentiles(&now, &now), None);
    }
}
