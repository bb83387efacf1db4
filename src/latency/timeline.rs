//! The timeline of a window: responses by the interval they were answered in, and what a
//! timeline shows (a stall, a level that slowed).

use std::borrow::Cow;
use std::time::Duration;

use super::ResponseTimes;
use super::counts::SessionCounts;
use super::histogram::{LONGEST_NS, nanoseconds};
use serde::{Deserialize, Serialize};

/// The width of a window's intervals: `--interval`, widened so that a window holds at most
/// `MOST_INTERVALS`.
pub fn interval_width(width: Duration, window: Duration) -> Duration {
    width
        .max(window / MOST_INTERVALS as u32)
        .max(Duration::from_millis(1))
}

/// Responses by the interval of its window they were answered in: the i-th interval of every
/// batch goes to slot i (one batch, the usual long run: the level's timeline).
#[derive(Debug)]
pub struct Intervals {
    pub width: Duration,
    /// The windows' length, so the last interval's rate counts over its own width.
    pub window: Duration,
    slots: usize,
    record: Record,
}

#[derive(Debug)]
enum Record {
    /// A session's, while it runs.
    Session(Box<SessionTimeline>),
    /// The level's: each interval's responses, merged over its sessions.
    Merged(Vec<ResponseTimes>),
}

/// A session's timeline: the interval being answered in, counted in a histogram of its own,
/// and every interval before it as entries of (interval, bucket, count). A session that
/// answers a few statements a second keeps a few entries a second, not a histogram's pages a
/// second: 128 such sessions held 2 MiB more for every second of a level.
#[derive(Debug)]
struct SessionTimeline {
    slot: usize,
    counting: SessionCounts,
    done: Entries,
}

/// Where a session's finished intervals go, room for every bucket of every interval (and
/// one interval more) made before the window: reserved, resident only once written. A
/// repeated batch's intervals come back to the same slots; when the room runs out, entries of
/// the same slot and bucket are added together, which always leaves room for an interval.
#[derive(Debug)]
struct Entries {
    store: EntryStore,
    len: usize,
    #[cfg(test)]
    combined: usize,
}

#[derive(Debug)]
enum EntryStore {
    Mapped(memmap2::MmapMut),
    Heap(Vec<u64>),
}

/// An entry: its slot (10 bits: at most `MOST_INTERVALS`), its bucket (16 bits: a 2-digit
/// histogram has 4,562) and its count (38 bits: one interval's count of one bucket is within
/// 32 bits; only a bucket's counts of 64 batches of 4 billion responses each would pass).
const SLOT_SHIFT: u32 = 54;
const BUCKET_SHIFT: u32 = 38;
const COUNT_MASK: u64 = (1 << BUCKET_SHIFT) - 1;
const _: () = assert!(MOST_INTERVALS < 1 << (64 - SLOT_SHIFT));

impl Entries {
    fn new(room: usize) -> Self {
        let mapped = memmap2::MmapOptions::new()
            .len(room * std::mem::size_of::<u64>())
            .no_reserve_swap()
            .map_anon();
        let store = match mapped {
            Ok(mapped) => EntryStore::Mapped(mapped),
            Err(_) => EntryStore::Heap(vec![0; room]),
        };
        Self {
            store,
            len: 0,
            #[cfg(test)]
            combined: 0,
        }
    }

    fn all(&self) -> &[u64] {
        match &self.store {
            // A mapping starts on a page: aligned for u64.
            EntryStore::Mapped(mapped) => &bytemuck::cast_slice(mapped)[..self.len],
            EntryStore::Heap(entries) => &entries[..self.len],
        }
    }

    fn room(&mut self) -> &mut [u64] {
        match &mut self.store {
            EntryStore::Mapped(mapped) => bytemuck::cast_slice_mut(mapped),
            EntryStore::Heap(entries) => entries,
        }
    }

    /// Adds together the entries of one slot and bucket.
    fn combine(&mut self) {
        let len = self.len;
        let entries = &mut self.room()[..len];
        entries.sort_unstable_by_key(|entry| entry >> BUCKET_SHIFT);
        let mut kept = 0;
        for index in 0..len {
            let entry = entries[index];
            if kept > 0 && entries[kept - 1] >> BUCKET_SHIFT == entry >> BUCKET_SHIFT {
                let count =
                    ((entries[kept - 1] & COUNT_MASK) + (entry & COUNT_MASK)).min(COUNT_MASK);
                entries[kept - 1] = (entry & !COUNT_MASK) | count;
            } else {
                entries[kept] = entry;
                kept += 1;
            }
        }
        self.len = kept;
        #[cfg(test)]
        {
            self.combined += 1;
        }
    }
}

impl SessionTimeline {
    /// Moves the interval being counted into the entries.
    #[cold]
    fn finish(&mut self) {
        let buckets = self.counting.buckets_len();
        if self.done.len + buckets > self.done.room().len() {
            self.done.combine();
        }
        let slot = (self.slot as u64) << SLOT_SHIFT;
        let Self { counting, done, .. } = self;
        let mut len = done.len;
        let room = done.room();
        counting.drain(|bucket, count| {
            room[len] = slot | (bucket as u64) << BUCKET_SHIFT | u64::from(count);
            len += 1;
        });
        done.len = len;
    }
}

impl SessionTimeline {
    /// Adds the session's responses to each interval's histogram.
    fn add_to(&self, slots: &mut [ResponseTimes]) {
        let last = slots.len() - 1;
        for entry in self.done.all() {
            let slot = ((entry >> SLOT_SHIFT) as usize).min(last);
            let bucket = ((entry >> BUCKET_SHIFT) & 0xFFFF) as usize;
            let value = self.counting.lowest_value(bucket);
            slots[slot].record_n(Duration::from_nanos(value), entry & COUNT_MASK);
        }
        for (value, count) in self.counting.buckets() {
            slots[self.slot.min(last)].record_n(Duration::from_nanos(value), u64::from(count));
        }
    }
}

impl Clone for Intervals {
    /// A copy to read or merge into: each interval's responses merged (a session's entries
    /// need no copy of their own).
    fn clone(&self) -> Self {
        Self {
            width: self.width,
            window: self.window,
            slots: self.slots,
            record: Record::Merged(self.merged().into_owned()),
        }
    }
}

impl Intervals {
    /// Slots for a window of `window` at `width` each, at most `MOST_INTERVALS` (wider
    /// intervals beyond), each histogram coarse (2 significant digits: a timeline's grain).
    pub fn new(width: Duration, window: Duration) -> Self {
        let width = interval_width(width, window);
        let slots = (window.as_secs_f64() / width.as_secs_f64()).ceil().max(1.0) as usize;
        let counting = SessionCounts::new(2, LONGEST_NS, true);
        let room = (slots + 1) * counting.buckets_len();
        Self {
            width,
            window,
            slots,
            record: Record::Session(Box::new(SessionTimeline {
                slot: 0,
                counting,
                done: Entries::new(room),
            })),
        }
    }

    /// How many intervals a window has.
    pub fn slots(&self) -> usize {
        self.slots
    }

    #[inline]
    pub(super) fn record(&mut self, answered: Duration, response: Duration) {
        // Answers drained just after the window's end belong to its last interval.
        let index = (answered.as_nanos() / self.width.as_nanos().max(1)) as usize;
        let slot = index.min(self.slots.saturating_sub(1));
        match &mut self.record {
            Record::Session(session) => {
                if session.slot != slot || session.counting.total() == u64::from(u32::MAX) {
                    session.finish();
                    session.slot = slot;
                }
                session.counting.add(nanoseconds(response), 1);
            }
            Record::Merged(slots) => slots[slot].record(response),
        }
    }

    /// Each interval's responses, merged.
    fn merged(&self) -> Cow<'_, [ResponseTimes]> {
        let session = match &self.record {
            Record::Merged(slots) => return Cow::Borrowed(slots),
            Record::Session(session) => session,
        };
        let mut slots: Vec<ResponseTimes> =
            (0..self.slots).map(|_| ResponseTimes::coarse()).collect();
        session.add_to(&mut slots);
        Cow::Owned(slots)
    }

    pub(super) fn merge(&mut self, other: &Self) {
        if let Record::Session(_) = self.record {
            self.record = Record::Merged(self.merged().into_owned());
        }
        let Record::Merged(mine) = &mut self.record else {
            unreachable!("merged just now");
        };
        match &other.record {
            Record::Session(theirs) => theirs.add_to(mine),
            Record::Merged(theirs) => {
                for (mine, theirs) in mine.iter_mut().zip(theirs) {
                    mine.merge(theirs);
                }
            }
        }
    }

    /// Each interval's rate and percentiles over `windows` windows, and its responses
    /// themselves when `kept`.
    pub fn figures(&self, windows: u32, kept: bool) -> Vec<IntervalFigures> {
        self.merged()
            .iter()
            .enumerate()
            .map(|(index, slot)| {
                let start = self.width * index as u32;
                let length = self.width.min(self.window.saturating_sub(start));
                let seconds = length.as_secs_f64() * windows.max(1) as f64;
                let percentiles = slot.percentiles();
                IntervalFigures {
                    start_s: start.as_secs_f64(),
                    length_s: length.as_secs_f64(),
                    responses: slot.count(),
                    rate_per_s: if seconds > 0.0 {
                        slot.count() as f64 / seconds
                    } else {
                        0.0
                    },
                    p50_ms: percentiles.map(|p| p.p50_ms),
                    p99_ms: percentiles.map(|p| p.p99_ms),
                    server_lio_per_s: None,
                    server_pio_per_s: None,
                    histogram: kept.then(|| slot.encode()),
                }
            })
            .collect()
    }
}

/// Seconds as a person writes them: 2, 12.5, 0.25.
fn seconds(value: f64) -> String {
    format!("{}", (value * 1000.0).round() / 1000.0)
}

/// Most intervals kept per window: longer windows get wider intervals.
const MOST_INTERVALS: usize = 600;

/// One interval of a fixed-time level: `levels[].intervals[]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalFigures {
    /// From the start of the window, and the interval's length (the last may be shorter).
    pub start_s: f64,
    pub length_s: f64,
    /// Responses answered in it (over all batches), and per second.
    pub responses: u64,
    pub rate_per_s: f64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    /// The server's own logical and physical reads per second in the interval (db levels:
    /// the database's counters, read by a thread of their own at each interval's edge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_lio_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_pio_per_s: Option<f64>,
    /// The interval's responses themselves (2 significant digits, encoded as the level's
    /// `latency.histogram`): the lines of `-o run.hlog` at `--interval`, and a campaign's
    /// parts merged into exact percentiles per interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
}

/// What a level's timeline shows beyond its noise: a warm-up (its first intervals off the
/// rest) and stalls (an interval far below the rest, as a checkpoint would cause). `unit` is
/// what the intervals count, plural: "statements".
pub fn timeline_warnings(intervals: &[IntervalFigures], unit: &str) -> Vec<String> {
    let full: Vec<&IntervalFigures> = intervals
        .iter()
        .filter(|interval| interval.length_s > 0.0)
        .collect();
    if full.len() < 5 {
        return Vec::new();
    }
    let rates: Vec<f64> = full.iter().map(|interval| interval.rate_per_s).collect();
    let median = crate::stats::median(&rates);
    if median <= 0.0 {
        return Vec::new();
    }
    // Beyond 4 robust deviations and 10% of the median: off the level's own noise.
    let band = (4.0 * crate::stats::robust_sigma(&rates)).max(0.1 * median);
    let off = |interval: &IntervalFigures| (interval.rate_per_s - median).abs() > band;
    let mut warnings = Vec::new();
    let warm: Vec<&IntervalFigures> = full
        .iter()
        .copied()
        .take_while(|interval| off(interval))
        .collect();
    if let Some(last) = warm.last()
        && warm.len() < full.len() / 2
    {
        let until = last.start_s + last.length_s;
        warnings.push(format!(
            "warm-up: the first {} s ran at {:.0}% of the level's median {} {unit}/s: --warmup {}s leaves it out",
            seconds(until),
            100.0 * warm.iter().map(|i| i.rate_per_s).sum::<f64>() / warm.len() as f64 / median,
            crate::format::significant(median),
            until.ceil()
        ));
    }
    for interval in full.iter().skip(warm.len()) {
        if interval.rate_per_s < 0.5 * median && interval.rate_per_s < median - band {
            warnings.push(format!(
                "a stall at {}-{} s: {} {unit}/s against the level's median {} (a checkpoint, autovacuum, or the host)",
                seconds(interval.start_s),
                seconds(interval.start_s + interval.length_s),
                crate::format::significant(interval.rate_per_s),
                crate::format::significant(median)
            ));
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session's timeline, kept as entries and combined when a repeated batch's intervals
    /// fill their room, reads back as a histogram per interval recorded directly.
    #[test]
    fn a_sessions_entries_read_back_as_each_intervals_histogram() {
        let width = Duration::from_millis(100);
        let window = Duration::from_secs(1);
        let mut intervals = Intervals::new(width, window);
        let mut direct: Vec<ResponseTimes> = (0..10).map(|_| ResponseTimes::coarse()).collect();
        let mut recorded = 0;
        for batch in 0..4u64 {
            for i in 0..30_000u64 {
                let answered = Duration::from_nanos(i * 1_000_000_000 / 30_000);
                // Every bucket over the range, and some buckets many times (past a byte).
                let power = 1u64 << ((i + batch) % 42);
                let ns = if i % 4 == 0 {
                    40_000
                } else {
                    power + (i * 104_729 + batch * 7919) % power
                };
                let response = Duration::from_nanos(ns);
                intervals.record(answered, response);
                direct[(answered.as_nanos() / width.as_nanos()) as usize].record(response);
                recorded += 1;
            }
        }
        let Record::Session(session) = &intervals.record else {
            panic!("still a session's");
        };
        assert!(
            session.done.combined > 0,
            "the batches' buckets filled the room"
        );
        let merged = intervals.merged();
        for (slot, (kept, direct)) in merged.iter().zip(&direct).enumerate() {
            assert_eq!(kept, direct, "interval {slot}");
        }
        let figures = intervals.figures(4, true);
        assert_eq!(figures.iter().map(|f| f.responses).sum::<u64>(), recorded);
        for figure in &figures {
            let kept = ResponseTimes::decode(figure.histogram.as_deref().unwrap()).unwrap();
            assert_eq!(kept.count(), figure.responses);
        }
        // Merged into a level and cloned, the same.
        let mut level = intervals.clone();
        level.merge(&intervals);
        for (kept, direct) in level.merged().iter().zip(&direct) {
            assert_eq!(kept.count(), 2 * direct.count());
        }
    }
}
