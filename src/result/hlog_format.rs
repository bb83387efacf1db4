//! HdrHistogram's interval log (`-o run.hlog`): each level's response times as interval
//! lines tagged `level-N` (one per `--interval`, else one per level), the compressed V2
//! encoding in base64, as HdrHistogram's Java and Python log readers read it (YCSB,
//! cassandra-stress and scylla-bench write the same), so other tools can merge and plot a
//! run's latency exactly.

use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, anyhow};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};

use super::{Level, RunDocument};
use crate::latency::ResponseTimes;

/// The interval log of every level that recorded response times, in nanoseconds; the
/// interval's max column in milliseconds, as HdrHistogram's tools print it.
pub(crate) fn to_hlog(document: &RunDocument) -> Result<Vec<u8>> {
    write_log(
        document,
        "each level's response times in nanoseconds, tagged level-N (one line per interval with --interval)",
        |number, level| {
            lines(document, level)
                .into_iter()
                .map(|(offset, length, encoded)| {
                    (offset, length, format!("level-{number}"), encoded)
                })
                .collect()
        },
    )
}

/// The same of each level's statement classes (`-o run.classes.hlog`): one line per class
/// and level over the level's measured window, tagged `level-N.CLASS`.
pub(crate) fn to_classes_hlog(document: &RunDocument) -> Result<Vec<u8>> {
    write_log(
        document,
        "each level's response times by statement class in nanoseconds, tagged level-N.CLASS",
        |number, level| {
            let (start, length) = window(document, level);
            (level.classes.iter())
                .map(|class| {
                    let tag = format!("level-{number}.{}", class.class);
                    (start, length, tag, class.histogram.as_str())
                })
                .collect()
        },
    )
}

/// A line of the log: its start from the run's, its length, its tag and its histogram.
type Line<'a> = (Duration, Duration, String, &'a str);

/// The log: its header, a comment per level (its workers, and an open loop's schedule, which
/// the histograms cannot give), then `lines_of` each level, numbered from 1.
fn write_log<'a>(
    document: &'a RunDocument,
    what: &str,
    lines_of: impl Fn(usize, &'a Level) -> Vec<Line<'a>>,
) -> Result<Vec<u8>> {
    let start: SystemTime = document.started_at.into();
    let mut builder = IntervalLogWriterBuilder::new();
    builder
        .add_comment(&format!("corescale {}: {what}", env!("CARGO_PKG_VERSION")))
        .with_start_time(start)
        .with_base_time(start)
        .with_max_value_divisor(1e6);
    for (index, level) in document.levels.iter().enumerate() {
        builder.add_comment(&format!(
            "level-{}: {} workers{}",
            index + 1,
            level.workers,
            schedule(level)
        ));
    }
    let mut bytes = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    let mut log = builder.begin_log_with(&mut bytes, &mut serializer)?;
    for (index, level) in document.levels.iter().enumerate() {
        for (offset, length, tag, encoded) in lines_of(index + 1, level) {
            let times = ResponseTimes::decode(encoded)
                .map_err(|problem| anyhow!("{tag}'s response times: {problem}"))?;
            log.write_histogram(&times.histogram(), offset, length, Tag::new(&tag))
                .map_err(|error| anyhow!("{error}"))
                .with_context(|| format!("writing {tag}'s interval line"))?;
        }
    }
    Ok(bytes)
}

/// An open-loop level's schedule, as its comment says it: " at R/s, sent S of D due,
/// ARRIVALS, kept|fell behind" (its histogram holds the requests due but never sent too).
fn schedule(level: &Level) -> String {
    let Some(rate) = (level.latency.as_ref()).and_then(|latency| latency.rate.as_ref()) else {
        return String::new();
    };
    format!(
        " at {}/s, sent {} of {} due, {}, {}",
        rate.target_per_s,
        rate.sent,
        rate.due,
        match rate.arrivals {
            crate::latency::Arrivals::Uniform => "uniform",
            crate::latency::Arrivals::Poisson => "poisson",
            crate::latency::Arrivals::Captured => "captured",
        },
        if rate.sustained {
            "kept"
        } else {
            "fell behind"
        }
    )
}

/// A level's measured window: its start from the run's (the log's base time), its length.
fn window(document: &RunDocument, level: &Level) -> (Duration, Duration) {
    let start = (level.started_at - document.started_at)
        .to_std()
        .unwrap_or_default();
    (start, seconds(level.elapsed_s))
}

fn seconds(value: f64) -> Duration {
    Duration::try_from_secs_f64(value).unwrap_or_default()
}

/// A level's lines: one per interval where `--interval` kept each interval's responses in
/// one window and they are all the level's (every response is in exactly one line), else
/// one for the level; each from the run's start (the log's base time) and as long as its
/// part of the measured window. Repeated windows (`--repeat`) add each interval's batches
/// together, and an open loop that fell behind counts statements never sent (in no
/// interval), so such a level is one line, as long as its windows together.
fn lines<'a>(document: &RunDocument, level: &'a Level) -> Vec<(Duration, Duration, &'a str)> {
    let (start, length) = window(document, level);
    let responses = level.latency.as_ref().map(|latency| latency.response.count);
    let whole = responses
        == Some(
            level
                .intervals
                .iter()
                .map(|interval| interval.responses)
                .sum(),
        );
    let intervals: Option<Vec<_>> = (level.batches <= 1 && !level.intervals.is_empty() && whole)
        .then(|| {
            level
                .intervals
                .iter()
                .map(|interval| {
                    Some((
                        start + seconds(interval.start_s),
                        seconds(interval.length_s),
                        interval.histogram.as_deref()?,
                    ))
                })
                .collect()
        })
        .flatten();
    intervals.unwrap_or_else(|| {
        (level.latency.as_ref())
            .and_then(|latency| latency.histogram.as_deref())
            .map(|encoded| (start, length, encoded))
            .into_iter()
            .collect()
    })
}
