//! HdrHistogram's interval log (`-o run.hlog`): each level's response times as one interval
//! line tagged `level-N`, the compressed V2 encoding in base64, as HdrHistogram's Java and
//! Python log readers read it (YCSB, cassandra-stress and scylla-bench write the same), so
//! other tools can merge and plot a run's latency exactly.

use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, anyhow};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};

use super::RunDocument;
use crate::latency::ResponseTimes;

/// The interval log of every level that recorded response times, in nanoseconds; the
/// interval's max column in milliseconds, as HdrHistogram's tools print it.
pub(crate) fn to_hlog(document: &RunDocument) -> Result<Vec<u8>> {
    let start: SystemTime = document.started_at.into();
    let mut builder = IntervalLogWriterBuilder::new();
    builder
        .add_comment(&format!(
            "corescale {}: each level's response times in nanoseconds, tagged level-N",
            env!("CARGO_PKG_VERSION")
        ))
        .with_start_time(start)
        .with_base_time(start)
        .with_max_value_divisor(1e6);
    for (index, level) in document.levels.iter().enumerate() {
        let rate = level
            .latency
            .as_ref()
            .and_then(|latency| latency.rate.as_ref())
            .map(|rate| {
                // What the reader cannot take from the histogram, which holds the requests
                // due but never sent too.
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
            })
            .unwrap_or_default();
        builder.add_comment(&format!(
            "level-{}: {} workers{rate}",
            index + 1,
            level.workers
        ));
    }
    let mut bytes = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    let mut log = builder.begin_log_with(&mut bytes, &mut serializer)?;
    for (index, level) in document.levels.iter().enumerate() {
        let Some(encoded) = (level.latency.as_ref()).and_then(|latency| latency.histogram.as_ref())
        else {
            continue;
        };
        let times = ResponseTimes::decode(encoded)
            .map_err(|problem| anyhow!("level {}'s response times: {problem}", index + 1))?;
        // From the run's start (the log's base time) to the level's measured window.
        let offset = (level.started_at - document.started_at)
            .to_std()
            .unwrap_or_default();
        let length = Duration::try_from_secs_f64(level.elapsed_s).unwrap_or_default();
        let tag = format!("level-{}", index + 1);
        log.write_histogram(&times.histogram(), offset, length, Tag::new(&tag))
            .map_err(|error| anyhow!("{error}"))
            .with_context(|| format!("writing level {}'s interval line", index + 1))?;
    }
    Ok(bytes)
}
