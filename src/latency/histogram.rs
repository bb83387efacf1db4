//! Recording: each session's response times in counts of its own (HdrHistogram's layout),
//! allocated before the timed window, merged after it; percentiles read from HdrHistogram.

use std::borrow::Cow;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::counts::SessionCounts;

/// The longest response a histogram holds; longer ones are counted as this.
pub(super) const LONGEST_NS: u64 = 3_600_000_000_000;

/// Response times in nanoseconds, 3 significant digits from 1 ns to an hour. Allocated
/// once, before the timed window: recording never allocates. A session records into 32-bit
/// counts in zeroed memory (`counts`), which become a 64-bit HdrHistogram before any record or
/// merge could pass 2^32 responses; a bucket never holds more responses than its histogram,
/// so no count saturates.
#[derive(Debug, Clone)]
pub struct ResponseTimes(Counts);

/// The most responses one histogram read from a file may hold: 2^48, a year at 8.9
/// million a second, far below where HdrHistogram's 64-bit counts or encoding overflow.
pub const MOST_RESPONSES: u64 = 1 << 48;

#[derive(Debug, Clone)]
enum Counts {
    Session(SessionCounts),
    Large(Histogram<u64>),
}

/// A response time as the histograms count it: nanoseconds from 1 to an hour.
#[inline]
pub(super) fn nanoseconds(time: Duration) -> u64 {
    u64::try_from(time.as_nanos())
        .unwrap_or(LONGEST_NS)
        .clamp(1, LONGEST_NS)
}

/// A session's counts as a 64-bit histogram of the same bounds and digits.
fn wide(session: &SessionCounts) -> Histogram<u64> {
    let mut wide = Histogram::new_with_bounds(1, LONGEST_NS, session.digits())
        .expect("valid histogram bounds");
    session.add_to(&mut wide);
    wide
}

impl Default for ResponseTimes {
    fn default() -> Self {
        Self::with_digits(3, true)
    }
}

impl PartialEq for ResponseTimes {
    /// The same responses in the same buckets, whatever the counts' width.
    fn eq(&self, other: &Self) -> bool {
        self.recorded() == other.recorded()
    }
}

impl ResponseTimes {
    /// 2 significant digits: for the many histograms of a timeline.
    pub fn coarse() -> Self {
        Self::with_digits(2, false)
    }

    /// 2 significant digits, one for each statement of a session's script.
    pub fn per_statement() -> Self {
        Self::with_digits(2, true)
    }

    /// `mapped`: in pages of the session's own (see `counts`), for the few histograms each
    /// session has; a timeline's many stay on the heap.
    fn with_digits(digits: u8, mapped: bool) -> Self {
        Self(Counts::Session(SessionCounts::new(
            digits, LONGEST_NS, mapped,
        )))
    }

    #[inline]
    pub fn record(&mut self, time: Duration) {
        self.record_n(time, 1);
    }

    /// `count` responses of one time (a backlog's representative).
    #[inline]
    pub fn record_n(&mut self, time: Duration, count: u64) {
        let ns = nanoseconds(time);
        if let Counts::Session(session) = &mut self.0 {
            if session.total().saturating_add(count) <= u64::from(u32::MAX) {
                // Within the histogram's total, so within every bucket's.
                session.add(ns, count as u32);
                return;
            }
            self.widen();
        }
        if let Counts::Large(large) = &mut self.0 {
            large.saturating_record_n(ns, count);
        }
    }

    /// Adds `other`'s counts, refusing a sum past [`MOST_RESPONSES`] (counts from files are
    /// checked by `decode`, but two of them may still add up past what HdrHistogram's
    /// encoding can hold).
    pub fn try_merge(&mut self, other: &Self) -> Result<(), String> {
        let total = self.count().checked_add(other.count());
        if total.is_none_or(|total| total > MOST_RESPONSES) {
            return Err(format!(
                "{} and {} responses add up to more than {MOST_RESPONSES}",
                self.count(),
                other.count()
            ));
        }
        self.merge(other);
        Ok(())
    }

    pub fn merge(&mut self, other: &Self) {
        if let (Counts::Session(mine), Counts::Session(theirs)) = (&mut self.0, &other.0)
            && mine.digits() == theirs.digits()
            && mine.total().saturating_add(theirs.total()) <= u64::from(u32::MAX)
        {
            mine.add_counts(theirs);
            return;
        }
        self.widen();
        if let Counts::Large(mine) = &mut self.0 {
            match &other.0 {
                Counts::Large(theirs) => {
                    // Bounds both sides share: adding cannot fail.
                    let _ = mine.add(theirs);
                }
                Counts::Session(theirs) => theirs.add_to(mine),
            }
        }
    }

    /// The same counts, 64 bits wide.
    fn widen(&mut self) {
        if let Counts::Session(session) = &self.0 {
            self.0 = Counts::Large(wide(session));
        }
    }

    /// These counts as a 64-bit HdrHistogram, to read or write.
    pub(crate) fn histogram(&self) -> Cow<'_, Histogram<u64>> {
        match &self.0 {
            Counts::Session(session) => Cow::Owned(wide(session)),
            Counts::Large(large) => Cow::Borrowed(large),
        }
    }

    pub fn count(&self) -> u64 {
        match &self.0 {
            Counts::Session(session) => session.total(),
            Counts::Large(large) => large.len(),
        }
    }

    /// Every bucket with responses: its highest value and its count.
    fn recorded(&self) -> Vec<(u64, u64)> {
        self.histogram()
            .iter_recorded()
            .map(|bucket| (bucket.value_iterated_to(), bucket.count_at_value()))
            .collect()
    }

    /// Lossless, for the result document: HdrHistogram's compressed V2 encoding, in base64,
    /// which other HdrHistogram libraries read too.
    pub fn encode(&self) -> String {
        use base64::Engine;
        use hdrhistogram::serialization::Serializer;
        let mut bytes = Vec::new();
        let mut serializer = hdrhistogram::serialization::V2DeflateSerializer::new();
        serializer
            .serialize(&self.histogram(), &mut bytes)
            .expect("serializing into memory cannot fail");
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// Reads `encode`'s text back. A file's text is checked before anything is allocated for
    /// it: base64 of at most 4 MiB, its inflated header naming this histogram's bounds and
    /// precision (1 ns to an hour, 2 or 3 digits), so no header can ask for a huge one.
    pub fn decode(text: &str) -> Result<Self, String> {
        use base64::Engine;
        use std::io::Read;
        const LONGEST_TEXT: usize = 4 << 20;
        if text.len() > LONGEST_TEXT {
            return Err(format!(
                "a histogram of {} bytes (at most {LONGEST_TEXT})",
                text.len()
            ));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|error| format!("the histogram is not base64 ({error})"))?;
        // The compressed encoding: cookie, length, then zlib of the plain V2 encoding whose
        // header is cookie, payload length, offset, digits, lowest, highest (big-endian).
        let mut header = [0u8; 32];
        flate2::read::ZlibDecoder::new(bytes.get(8..).unwrap_or_default())
            .read_exact(&mut header)
            .map_err(|error| {
                format!("the histogram is not HdrHistogram's compressed V2 encoding ({error})")
            })?;
        let word = |at: usize| u64::from_be_bytes(header[at..at + 8].try_into().expect("8 bytes"));
        let half = |at: usize| u32::from_be_bytes(header[at..at + 4].try_into().expect("4 bytes"));
        // The counts' length, which the reader allocates before reading them: at most 9
        // bytes (a LEB128 count) for each of this histogram's 33,792 counts.
        const LONGEST_PAYLOAD: u32 = 9 * 33_792;
        if half(4) > LONGEST_PAYLOAD {
            return Err(format!(
                "the histogram says its counts take {} bytes (at most {LONGEST_PAYLOAD})",
                half(4)
            ));
        }
        let digits = half(12);
        if !(2..=3).contains(&digits) || word(16) != 1 || word(24) != LONGEST_NS {
            return Err(format!(
                "the histogram's bounds are {} to {} ns at {digits} digits: corescale writes 1 to {LONGEST_NS} ns at 2 or 3",
                word(16),
                word(24)
            ));
        }
        let histogram: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|error| format!("the histogram cannot be read ({error:?})"))?;
        // Every count is checked before anything adds them: a bucket of 2^63 - 1 made the
        // encoding panic, one of 2^62 a p99 of nothing measured.
        let mut total: u64 = 0;
        for bucket in histogram.iter_recorded() {
            total = total
                .checked_add(bucket.count_at_value())
                .filter(|total| *total <= MOST_RESPONSES)
                .ok_or_else(|| {
                    format!("the histogram holds more than {MOST_RESPONSES} responses")
                })?;
        }
        // At the precision it was written in, so its percentiles are the writer's.
        let mut large = Histogram::<u64>::new_with_bounds(1, LONGEST_NS, digits as u8)
            .expect("valid histogram bounds");
        large
            .add(&histogram)
            .map_err(|error| format!("the histogram cannot be read ({error:?})"))?;
        Ok(Self(Counts::Large(large)))
    }

    /// The times' standard deviation, in milliseconds; None when nothing was recorded.
    pub fn stdev_ms(&self) -> Option<f64> {
        (self.count() > 0).then(|| self.histogram().stdev() / 1e6)
    }

    /// The figures of these times, in milliseconds; None when nothing was recorded.
    pub fn percentiles(&self) -> Option<Percentiles> {
        // Before a session's counts are widened for reading: a timeline's empty intervals
        // need no histogram built.
        if self.count() == 0 {
            return None;
        }
        let histogram = self.histogram();
        let ms = |ns: u64| ns as f64 / 1e6;
        let at = |quantile: f64| ms(histogram.value_at_quantile(quantile));
        Some(Percentiles {
            count: histogram.len(),
            mean_ms: histogram.mean() / 1e6,
            p50_ms: at(0.50),
            p90_ms: at(0.90),
            p95_ms: at(0.95),
            p99_ms: at(0.99),
            p999_ms: at(0.999),
            max_ms: ms(histogram.max()),
        })
    }
}

/// A distribution of response times, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub count: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
}

impl Percentiles {
    /// Exact figures of a few values in seconds (job times), as a histogram would give them
    /// to its resolution: nearest rank.
    pub fn of_seconds(values: &[f64]) -> Option<Self> {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let rank = |quantile: f64| {
            let index = (quantile * sorted.len() as f64).ceil() as usize;
            1e3 * sorted[index.clamp(1, sorted.len()) - 1]
        };
        Some(Self {
            count: sorted.len() as u64,
            mean_ms: 1e3 * sorted.iter().sum::<f64>() / sorted.len() as f64,
            p50_ms: rank(0.50),
            p90_ms: rank(0.90),
            p95_ms: rank(0.95),
            p99_ms: rank(0.99),
            p999_ms: rank(0.999),
            max_ms: 1e3 * sorted[sorted.len() - 1],
        })
    }

    /// The figure at a percentile this distribution carries (50, 90, 95, 99, 99.9, 100).
    pub fn at(&self, percentile: Percentile) -> f64 {
        match percentile {
            Percentile::P50 => self.p50_ms,
            Percentile::P90 => self.p90_ms,
            Percentile::P95 => self.p95_ms,
            Percentile::P99 => self.p99_ms,
            Percentile::P999 => self.p999_ms,
            Percentile::Max => self.max_ms,
            Percentile::Mean => self.mean_ms,
        }
    }
}

/// The figures a latency objective can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Percentile {
    P50,
    P90,
    P95,
    P99,
    P999,
    Max,
    Mean,
}

impl Percentile {
    pub fn name(self) -> &'static str {
        match self {
            Self::P50 => "p50",
            Self::P90 => "p90",
            Self::P95 => "p95",
            Self::P99 => "p99",
            Self::P999 => "p99.9",
            Self::Max => "max",
            Self::Mean => "mean",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.trim().to_ascii_lowercase().as_str() {
            "p50" | "median" => Self::P50,
            "p90" => Self::P90,
            "p95" => Self::P95,
            "p99" => Self::P99,
            "p99.9" | "p999" => Self::P999,
            "max" | "p100" => Self::Max,
            "mean" | "avg" => Self::Mean,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A valid header of corescale's bounds whose counts claim 4 GiB.
    fn huge_payload() -> String {
        use base64::Engine;
        use std::io::Write;
        let mut plain = Vec::new();
        plain.extend(0x1c84_9303u32.to_be_bytes());
        plain.extend(u32::MAX.to_be_bytes());
        plain.extend(0u32.to_be_bytes());
        plain.extend(3u32.to_be_bytes());
        plain.extend(1u64.to_be_bytes());
        plain.extend(LONGEST_NS.to_be_bytes());
        plain.extend(1.0f64.to_be_bytes());
        let mut deflated =
            flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        deflated.write_all(&plain).unwrap();
        let deflated = deflated.finish().unwrap();
        let mut bytes = 0x1c84_9304u32.to_be_bytes().to_vec();
        bytes.extend((deflated.len() as u32).to_be_bytes());
        bytes.extend(deflated);
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    #[test]
    fn counts_widen_before_they_could_pass_32_bits() {
        let five = Duration::from_micros(5);
        let mut times = ResponseTimes::default();
        times.record_n(five, u64::from(u32::MAX) - 1);
        let mut more = ResponseTimes::default();
        more.record_n(five, 10);
        more.record(Duration::from_millis(3));
        times.merge(&more);
        let expected = u64::from(u32::MAX) + 9;
        assert_eq!(times.count(), expected + 1);
        assert_eq!(
            times.recorded()[0].1,
            expected,
            "one bucket past 2^32, not saturated"
        );
        times.record_n(five, 1 << 40);
        assert_eq!(times.recorded()[0].1, expected + (1 << 40));
        // A session's own record widens too, and reads back whole.
        let mut session = ResponseTimes::coarse();
        session.record(five);
        session.record_n(five, u64::from(u32::MAX));
        assert_eq!(session.count(), u64::from(u32::MAX) + 1);
        let back = ResponseTimes::decode(&times.encode()).unwrap();
        assert_eq!(back, times);
    }

    #[test]
    fn the_encoding_is_lossless_and_a_hostile_one_an_error() {
        let mut times = ResponseTimes::default();
        for micros in 1..=5000u64 {
            times.record(Duration::from_micros(micros * micros % 9973 + 1));
        }
        times.record(Duration::from_secs(4000));
        let text = times.encode();
        let back = ResponseTimes::decode(&text).unwrap();
        assert_eq!(back, times, "every count comes back");
        assert_eq!(back.percentiles(), times.percentiles());
        // A timeline's histogram comes back at its own 2 digits, percentiles and all.
        let mut coarse = ResponseTimes::coarse();
        for micros in 1..=5000u64 {
            coarse.record(Duration::from_micros(micros * micros % 9973 + 1));
        }
        let coarse_back = ResponseTimes::decode(&coarse.encode()).unwrap();
        assert_eq!(coarse_back, coarse);
        assert_eq!(coarse_back.percentiles(), coarse.percentiles());
        // Merged histograms of parts are the histogram of all their times.
        let mut half = ResponseTimes::default();
        half.record(Duration::from_millis(7));
        let mut merged = ResponseTimes::decode(&half.encode()).unwrap();
        merged.merge(&back);
        let mut all = times.clone();
        all.merge(&half);
        assert_eq!(merged, all);
        // Not base64, not the encoding, other bounds: errors naming what is wrong.
        for (hostile, said) in [
            ("%%%".to_string(), "not base64"),
            ("AAAAAAAAAAAAAAAA".to_string(), "not HdrHistogram"),
            (
                {
                    use base64::Engine;
                    let wide = Histogram::<u64>::new_with_bounds(1, u64::MAX / 2, 5).unwrap();
                    let mut bytes = Vec::new();
                    hdrhistogram::serialization::Serializer::serialize(
                        &mut hdrhistogram::serialization::V2DeflateSerializer::new(),
                        &wide,
                        &mut bytes,
                    )
                    .unwrap();
                    base64::engine::general_purpose::STANDARD.encode(bytes)
                },
                "bounds are 1 to",
            ),
            ("A".repeat(5 << 20), "at most"),
            (huge_payload(), "counts take"),
        ] {
            let error = ResponseTimes::decode(&hostile).unwrap_err();
            assert!(error.contains(said), "{error}");
        }
    }
}
