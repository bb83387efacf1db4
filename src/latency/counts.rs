//! A session's response counts, laid out bucket for bucket as HdrHistogram lays them out, in
//! memory handed out zeroed: only the pages where responses fall become resident.
//! HdrHistogram writes every count when it allocates (135 KiB for 3 digits), and a run holds
//! one or three per session: 128 sessions held 17 MiB of zeros.

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

/// Where a session's counts live. A session's own histograms (its responses, an open
/// loop's service and lag, its statements') get a mapping each: fresh zero pages from the
/// kernel, resident only once written, returned when dropped. From the heap, `calloc` clears
/// the memory a freed histogram left, touching every page of it, and each level's sessions
/// would get exactly that. A timeline's (one per interval, up to 600 a session: too many to
/// map one by one) stay on the heap.
#[derive(Debug)]
enum Store {
    Heap(Vec<u32>),
    Mapped(memmap2::MmapMut),
}

impl Store {
    fn zeroed(len: usize, mapped: bool) -> Self {
        if mapped && let Ok(mapped) = memmap2::MmapMut::map_anon(len * std::mem::size_of::<u32>()) {
            return Self::Mapped(mapped);
        }
        Self::Heap(vec![0; len])
    }

    fn counts(&self) -> &[u32] {
        match self {
            Self::Heap(counts) => counts,
            // A mapping starts on a page: aligned for u32.
            Self::Mapped(mapped) => bytemuck::cast_slice(mapped),
        }
    }

    #[inline]
    fn counts_mut(&mut self) -> &mut [u32] {
        match self {
            Self::Heap(counts) => counts,
            Self::Mapped(mapped) => bytemuck::cast_slice_mut(mapped),
        }
    }
}

/// Counts of responses from 1 to `highest` ns, at most `u32::MAX` in all (the caller widens
/// to a 64-bit histogram before that).
#[derive(Debug)]
pub(super) struct SessionCounts {
    layout: Layout,
    store: Store,
    total: u64,
}

impl SessionCounts {
    /// Counts at `digits` significant digits, `mapped` in pages of their own (see `Store`).
    pub(super) fn new(digits: u8, highest: u64, mapped: bool) -> Self {
        let layout = Layout::new(digits);
        Self {
            layout,
            store: Store::zeroed(layout.index(highest) + 1, mapped),
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
        let counts = self.store.counts_mut();
        let index = self.layout.index(value).min(counts.len() - 1);
        counts[index] += count;
        self.total += u64::from(count);
    }

    /// Every bucket with responses: its lowest value and its count.
    fn buckets(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.store
            .counts()
            .iter()
            .enumerate()
            .filter(|(_, count)| **count != 0)
            .map(|(index, count)| (self.layout.value(index), *count))
    }

    /// Adds another session's counts of the same digits (`total`s within u32 together).
    pub(super) fn add_counts(&mut self, other: &Self) {
        debug_assert_eq!(self.layout, other.layout);
        for (mine, theirs) in self.store.counts_mut().iter_mut().zip(other.store.counts()) {
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
        let counts = self.store.counts();
        let mut store = Store::zeroed(counts.len(), matches!(self.store, Store::Mapped(_)));
        let copied = store.counts_mut();
        for (index, count) in counts.iter().enumerate() {
            if *count != 0 {
                copied[index] = *count;
            }
        }
        Self {
            layout: self.layout,
            store,
            total: self.total,
        }
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
            let mut counts = SessionCounts::new(digits, HOUR_NS, true);
            let mut other = SessionCounts::new(digits, HOUR_NS, false);
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
