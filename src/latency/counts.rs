//! A session's response counts, laid out bucket for bucket as HdrHistogram lays them out, in
//! memory the allocator hands out zeroed: only the pages where responses fall become
//! resident. HdrHistogram writes every count when it allocates (135 KiB for 3 digits), and a
//! run holds one per session and statement: 128 sessions held 17 MiB of zeros.

use hdrhistogram::Histogram;

/// HdrHistogram's bucket layout for values from 1 at `digits` significant digits (its
/// `index_for` and `value_for`, for a lowest discernible value of 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    digits: u8,
    half_count_magnitude: u32,
    half_count: u32,
    mask: u64,
    leading_zero_base: u32,
}

impl Layout {
    fn new(digits: u8) -> Self {
        // The smallest power of two holding 2 * 10^digits values at unit resolution.
        let largest = 2 * 10u32.pow(u32::from(digits));
        let count_magnitude = f64::from(largest).log2().ceil() as u32;
        let count = 1u32 << count_magnitude;
        Self {
            digits,
            half_count_magnitude: count_magnitude - 1,
            half_count: count / 2,
            mask: u64::from(count - 1),
            leading_zero_base: 64 - (count_magnitude - 1) - 1,
        }
    }

    #[inline]
    fn index(&self, value: u64) -> usize {
        let bucket = self.leading_zero_base - (value | self.mask).leading_zeros();
        let sub_bucket = (value >> bucket) as usize;
        // Bucket 0 uses both halves of its sub-buckets, every later one its upper half only.
        ((bucket as usize + 1) << self.half_count_magnitude) + sub_bucket - self.half_count as usize
    }

    /// The lowest value counted at `index`.
    fn value(&self, index: usize) -> u64 {
        let bucket = (index >> self.half_count_magnitude) as u32;
        let sub_bucket = (index as u32 & (self.half_count - 1)) + self.half_count;
        match bucket.checked_sub(1) {
            Some(bucket) => u64::from(sub_bucket) << bucket,
            None => u64::from(sub_bucket - self.half_count),
        }
    }
}

/// Counts of responses from 1 to `highest` ns, at most `u32::MAX` in all (the caller widens
/// to a 64-bit histogram before that).
#[derive(Debug)]
pub(super) struct SessionCounts {
    layout: Layout,
    counts: Vec<u32>,
    total: u64,
}

impl SessionCounts {
    pub(super) fn new(digits: u8, highest: u64) -> Self {
        let layout = Layout::new(digits);
        Self {
            layout,
            // `vec![0; n]` asks the allocator for zeroed memory (calloc): fresh pages stay
            // untouched until a count lands in them.
            counts: vec![0; layout.index(highest) + 1],
            total: 0,
        }
    }

    pub(super) fn digits(&self) -> u8 {
        self.layout.digits
    }

    pub(super) fn total(&self) -> u64 {
        self.total
    }

    /// `count` responses of `value` ns (from 1 to the highest; `total + count` within u32).
    #[inline]
    pub(super) fn add(&mut self, value: u64, count: u32) {
        let index = self.layout.index(value).min(self.counts.len() - 1);
        self.counts[index] += count;
        self.total += u64::from(count);
    }

    /// Every bucket with responses: its lowest value and its count.
    fn buckets(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, count)| **count != 0)
            .map(|(index, count)| (self.layout.value(index), *count))
    }

    /// Adds another session's counts of the same digits (`total`s within u32 together).
    pub(super) fn add_counts(&mut self, other: &Self) {
        debug_assert_eq!(self.layout, other.layout);
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            if *theirs != 0 {
                *mine += *theirs;
            }
        }
        self.total += other.total;
    }

    /// Adds these counts to a 64-bit histogram, each in the bucket of the same bounds.
    pub(super) fn add_to(&self, histogram: &mut Histogram<u64>) {
        for (value, count) in self.buckets() {
            histogram.saturating_record_n(value, u64::from(count));
        }
    }
}

impl Clone for SessionCounts {
    /// Copies only the counts that are not zero: a plain copy would touch every page.
    fn clone(&self) -> Self {
        let mut copy = Self::new(self.layout.digits, self.layout.value(self.counts.len() - 1));
        for (index, count) in self.counts.iter().enumerate() {
            if *count != 0 {
                copy.counts[index] = *count;
            }
        }
        copy.total = self.total;
        copy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR_NS: u64 = 3_600_000_000_000;

    /// Values across every bucket: each power of two, its neighbours, and a spread between.
    fn values() -> Vec<u64> {
        let mut values: Vec<u64> = (1..=5000).collect();
        for shift in 0..42 {
            let power = 1u64 << shift;
            values.extend([power - 1, power, power + 1, power + power / 3]);
        }
        values.extend((0..20_000u64).map(|i| (i * 7919 * 104_729) % HOUR_NS + 1));
        values.push(HOUR_NS);
        values.retain(|value| (1..=HOUR_NS).contains(value));
        values
    }

    #[test]
    fn the_layout_is_hdrhistograms() {
        for digits in [2, 3] {
            let layout = Layout::new(digits);
            let reference = Histogram::<u64>::new_with_bounds(1, HOUR_NS, digits).unwrap();
            for value in values() {
                let index = layout.index(value);
                assert!(
                    reference.equivalent(value, layout.value(index)),
                    "{value} at {digits} digits: index {index} starts at {}",
                    layout.value(index)
                );
                assert_eq!(layout.index(layout.value(index)), index);
                assert_eq!(
                    reference.lowest_equivalent(value),
                    layout.value(index),
                    "{value}"
                );
            }
        }
    }

    #[test]
    fn counts_read_back_as_the_histogram_of_the_same_values() {
        for digits in [2, 3] {
            let mut counts = SessionCounts::new(digits, HOUR_NS);
            let mut other = SessionCounts::new(digits, HOUR_NS);
            let mut reference = Histogram::<u64>::new_with_bounds(1, HOUR_NS, digits).unwrap();
            for (i, value) in values().into_iter().enumerate() {
                let count = (i % 3) as u32 + 1;
                if i % 2 == 0 {
                    counts.add(value, count);
                } else {
                    other.add(value, count);
                }
                reference.record_n(value, u64::from(count)).unwrap();
            }
            let copy = other.clone();
            assert_eq!(copy.total(), other.total());
            counts.add_counts(&copy);
            let mut histogram = Histogram::<u64>::new_with_bounds(1, HOUR_NS, digits).unwrap();
            counts.add_to(&mut histogram);
            assert_eq!(counts.total(), reference.len());
            assert_eq!(histogram, reference, "every bucket, every count");
        }
    }
}
