//! A session's response counts, laid out bucket for bucket as HdrHistogram lays them out, in
//! memory handed out zeroed: only the pages where responses fall become resident.
//! HdrHistogram writes every count when it allocates (135 KiB for 3 digits), and a run holds
//! several per session: 128 sessions held 17 MiB of zeros.

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
/// loop's service and lag, its statements', its timeline's interval) get mappings of their
/// own: fresh zero pages from the kernel, resident only once written, returned when dropped.
/// From the heap, `calloc` clears the memory a freed histogram left, touching every page of
/// it, and each level's sessions would get exactly that.
///
/// A mapped bucket's count is a byte (`low`) and the multiples of 256 carried out of it
/// (`carried`, 32 bits, its pages written only where a bucket has passed 255): a 3-digit
/// histogram takes 1 KiB for each doubling of response time its session sees, not 4, and a
/// short or slow session's buckets are only bytes.
#[derive(Debug)]
enum Store {
    Heap(Vec<u32>),
    Mapped {
        low: memmap2::MmapMut,
        carried: memmap2::MmapMut,
    },
}

impl Store {
    fn zeroed(len: usize, mapped: bool) -> Self {
        let map = |bytes: usize| {
            memmap2::MmapOptions::new()
                .len(bytes)
                .no_reserve_swap()
                .map_anon()
        };
        if mapped
            && let Ok(low) = map(len)
            && let Ok(carried) = map(len * std::mem::size_of::<u32>())
        {
            return Self::Mapped { low, carried };
        }
        Self::Heap(vec![0; len])
    }

    fn len(&self) -> usize {
        match self {
            Self::Heap(counts) => counts.len(),
            Self::Mapped { low, .. } => low.len(),
        }
    }

    #[inline]
    fn get(&self, index: usize) -> u32 {
        match self {
            Self::Heap(counts) => counts[index],
            // A mapping starts on a page: aligned for u32.
            Self::Mapped { low, carried } => {
                u32::from(low[index]) + bytemuck::cast_slice::<u8, u32>(carried)[index]
            }
        }
    }

    /// Adds `count` to bucket `index` (the bucket's count stays within u32).
    #[inline]
    fn add(&mut self, index: usize, count: u32) {
        match self {
            Self::Heap(counts) => counts[index] += count,
            Self::Mapped { low, carried } => {
                let sum = u32::from(low[index]) + count;
                low[index] = sum as u8;
                if sum > 0xFF {
                    bytemuck::cast_slice_mut::<u8, u32>(carried)[index] += sum & !0xFF;
                }
            }
        }
    }

    /// Bucket `index`'s count, the bucket emptied.
    fn take(&mut self, index: usize) -> u32 {
        let count = self.get(index);
        if count != 0 {
            match self {
                Self::Heap(counts) => counts[index] = 0,
                Self::Mapped { low, carried } => {
                    low[index] = 0;
                    if count > 0xFF {
                        bytemuck::cast_slice_mut::<u8, u32>(carried)[index] = 0;
                    }
                }
            }
        }
        count
    }
}

/// The lowest and highest buckets with responses, so reading or emptying counts visits only
/// where responses fell.
#[derive(Debug, Clone, Copy)]
struct Span {
    lowest: usize,
    highest: usize,
}

impl Span {
    const EMPTY: Self = Self {
        lowest: usize::MAX,
        highest: 0,
    };

    #[inline]
    fn include(&mut self, index: usize) {
        self.lowest = self.lowest.min(index);
        self.highest = self.highest.max(index);
    }

    fn join(&mut self, other: Self) {
        if other.lowest <= other.highest {
            self.include(other.lowest);
            self.include(other.highest);
        }
    }

    fn range(self) -> std::ops::Range<usize> {
        if self.lowest > self.highest {
            return 0..0;
        }
        self.lowest..self.highest + 1
    }
}

/// Counts of responses from 1 to `highest` ns, at most `u32::MAX` in all (the caller widens
/// to a 64-bit histogram before that).
#[derive(Debug)]
pub(super) struct SessionCounts {
    layout: Layout,
    store: Store,
    total: u64,
    span: Span,
}

impl SessionCounts {
    /// Counts at `digits` significant digits, `mapped` in pages of their own (see `Store`).
    pub(super) fn new(digits: u8, highest: u64, mapped: bool) -> Self {
        let layout = Layout::new(digits);
        Self {
            layout,
            store: Store::zeroed(layout.index(highest) + 1, mapped),
            total: 0,
            span: Span::EMPTY,
        }
    }

    /// How many buckets the counts have.
    pub(super) fn buckets_len(&self) -> usize {
        self.store.len()
    }

    /// The lowest value counted in bucket `index`.
    pub(super) fn lowest_value(&self, index: usize) -> u64 {
        self.layout.value(index)
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
        let index = self.layout.index(value).min(self.store.len() - 1);
        self.store.add(index, count);
        self.total += u64::from(count);
        self.span.include(index);
    }

    /// Every bucket with responses: its index and its count.
    fn recorded(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.span
            .range()
            .map(|index| (index, self.store.get(index)))
            .filter(|(_, count)| *count != 0)
    }

    /// Every bucket with responses: its lowest value and its count.
    pub(super) fn buckets(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.recorded()
            .map(|(index, count)| (self.layout.value(index), count))
    }

    /// Hands every bucket with responses to `each` (its index and count) and empties it.
    pub(super) fn drain(&mut self, mut each: impl FnMut(usize, u32)) {
        for index in self.span.range() {
            let count = self.store.take(index);
            if count != 0 {
                each(index, count);
            }
        }
        self.total = 0;
        self.span = Span::EMPTY;
    }

    /// Adds another session's counts of the same digits (`total`s within u32 together).
    pub(super) fn add_counts(&mut self, other: &Self) {
        debug_assert_eq!(self.layout, other.layout);
        for (index, count) in other.recorded() {
            self.store.add(index, count);
        }
        self.total += other.total;
        self.span.join(other.span);
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
        let mut store = Store::zeroed(self.store.len(), matches!(self.store, Store::Mapped { .. }));
        for (index, count) in self.recorded() {
            store.add(index, count);
        }
        Self { store, ..*self }
    }
}

/// Several histograms of one layout in one store, a block of each doubling of response time
/// at a time: member m's bucket i is at block(i) * members * half + m * half + (i mod
/// half). A script's statements answered in similar times share pages: 7 statements of a
/// session held 7 histograms' pages at least, now about a page for each 4 doublings their
/// times span.
#[derive(Debug)]
pub(super) struct GroupCounts {
    layout: Layout,
    members: usize,
    store: Store,
    /// Each member's responses, and where they fell.
    totals: Vec<u64>,
    spans: Vec<Span>,
    /// Buckets of each member.
    len: usize,
}

impl GroupCounts {
    /// `members` histograms at `digits` significant digits from 1 to `highest` ns, mapped.
    pub(super) fn new(digits: u8, highest: u64, members: usize) -> Self {
        let layout = Layout::new(digits);
        let len = layout.index(highest) + 1;
        let half = layout.half_count as usize;
        let blocks = len.div_ceil(half);
        Self {
            layout,
            members,
            store: Store::zeroed(blocks * members * half, true),
            totals: vec![0; members],
            spans: vec![Span::EMPTY; members],
            len,
        }
    }

    pub(super) fn members(&self) -> usize {
        self.members
    }

    pub(super) fn total(&self, member: usize) -> u64 {
        self.totals[member]
    }

    #[inline]
    fn position(&self, member: usize, index: usize) -> usize {
        let half = self.layout.half_count as usize;
        let block = index >> self.layout.half_count_magnitude;
        (block * self.members + member) * half + (index & (half - 1))
    }

    /// `count` responses of `value` ns to `member` (its total + `count` within u32).
    #[inline]
    pub(super) fn add(&mut self, member: usize, value: u64, count: u32) {
        let index = self.layout.index(value).min(self.len - 1);
        let position = self.position(member, index);
        self.store.add(position, count);
        self.totals[member] += u64::from(count);
        self.spans[member].include(index);
    }

    /// Every bucket of `member` with responses: its lowest value and its count.
    pub(super) fn buckets(&self, member: usize) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.spans[member]
            .range()
            .map(move |index| (index, self.store.get(self.position(member, index))))
            .filter(|(_, count)| *count != 0)
            .map(|(index, count)| (self.layout.value(index), count))
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

    #[test]
    fn bytes_carry_past_255_and_drain_empties() {
        let mut counts = SessionCounts::new(3, HOUR_NS, true);
        let mut reference = Histogram::<u64>::new_with_bounds(1, HOUR_NS, 3).unwrap();
        for (value, count) in [
            (1_000u64, 255u32),
            (1_000, 1),
            (5_000_000, 70_000),
            (5_000_000, 300),
            (7, 256),
        ] {
            counts.add(value, count);
            reference.record_n(value, u64::from(count)).unwrap();
        }
        let mut histogram = Histogram::<u64>::new_with_bounds(1, HOUR_NS, 3).unwrap();
        counts.clone().add_to(&mut histogram);
        assert_eq!(histogram, reference);
        let mut drained = Vec::new();
        counts.drain(|index, count| drained.push((counts_value(index), count)));
        assert_eq!(
            drained,
            [
                (7, 256),
                (1_000, 256),
                (reference.lowest_equivalent(5_000_000), 70_300)
            ]
        );
        assert_eq!(counts.total(), 0);
        assert_eq!(counts.buckets().count(), 0);
        // Emptied buckets count from zero again.
        counts.add(1_000, 3);
        assert_eq!(counts.buckets().collect::<Vec<_>>(), [(1_000, 3)]);
    }

    fn counts_value(index: usize) -> u64 {
        Layout::new(3).value(index)
    }
}
