//! corescale's own HdrHistogram interval log (`run -o run.hlog`) read back: each `level-N`
//! interval line a level whose response times are its histogram's, exactly as the run's
//! JSON has them, its workers from the log's `#level-N: W workers` comment. Another tool's
//! .hlog (YCSB, cassandra-stress) does not say its values' unit, so it is refused by name
//! rather than read in a unit it may not have.

use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

use super::*;
use crate::latency::ResponseTimes;

pub(super) const TOOL: &str = "corescale hlog";

pub(super) const HLOG: Importer = Importer {
    tool: TOOL,
    detects: is_hlog,
    hints: &["#[StartTime: ", "#[BaseTime: "],
    runs: one_run,
    read: Reader::Text(from_hlog),
};

/// The comment corescale's writer begins its log with.
const CORESCALE_COMMENT: &str = "#corescale ";

/// An interval log: its header lines (`#[StartTime:`, `#[BaseTime:`, or the CSV-like legend).
fn is_hlog(text: &str) -> bool {
    text.lines().take(10).any(|line| {
        line.starts_with("#[StartTime: ")
            || line.starts_with("#[BaseTime: ")
            || line.starts_with("\"StartTimestamp\",\"Interval_Length\"")
    })
}

/// `#level-N: W workers[ at R/s]`: the level's number, workers and open-loop rate.
fn level_comment(line: &str) -> Option<(usize, (usize, Option<f64>))> {
    let rest = line.strip_prefix("#level-")?;
    let (number, rest) = rest.split_once(": ")?;
    let workers = rest.split_whitespace().next()?;
    let rate = rest
        .split_once(" at ")
        .and_then(|(_, rate)| rate.strip_suffix("/s")?.parse::<f64>().ok())
        .filter(|rate| rate.is_finite() && *rate > 0.0);
    Some((number.parse().ok()?, (workers.parse().ok()?, rate)))
}

/// A level's response times: an open loop's, from when each was due, at the rate asked.
fn level_latency(response: Percentiles, asked: Option<f64>, length_s: f64) -> Latency {
    let Some(target_per_s) = asked else {
        return Latency::closed("request", response);
    };
    let sent = response.count;
    let due = ((target_per_s * length_s).round() as u64).max(sent);
    Latency {
        measured_from: crate::latency::MeasuredFrom::Due,
        rate: Some(RateFigures {
            target_per_s,
            achieved_per_s: sent as f64 / length_s,
            // Not in the log: how the run spaced its requests.
            arrivals: crate::latency::Arrivals::Uniform,
            due,
            sent,
            sustained: sent as f64 >= 0.99 * due as f64,
            share: None,
        }),
        ..Latency::closed("request", response)
    }
}

fn from_hlog(file: &InputFile, text: &str) -> Result<Series> {
    let path = file.path.display();
    if !text
        .lines()
        .take(5)
        .any(|line| line.starts_with(CORESCALE_COMMENT))
    {
        bail!(
            "'{path}' is an HdrHistogram log not written by corescale: its values' unit (ns, us, ms) is not stated in it, so it is not read (report the run's own JSON)"
        );
    }
    let levels: std::collections::BTreeMap<usize, (usize, Option<f64>)> =
        text.lines().filter_map(level_comment).collect();
    let mut points = Vec::new();
    for entry in IntervalLogIterator::new(text.as_bytes()) {
        let entry = entry.map_err(|error| anyhow::anyhow!("'{path}': {error:?}"))?;
        let LogEntry::Interval(interval) = entry else {
            continue;
        };
        let tag = interval.tag().map(|tag| tag.as_str().to_string());
        let number = tag
            .as_deref()
            .and_then(|tag| tag.strip_prefix("level-")?.parse::<usize>().ok())
            .ok_or_else(|| anyhow::anyhow!("'{path}': an interval tagged {tag:?}, not level-N"))?;
        let (workers, asked) = *levels.get(&number).ok_or_else(|| {
            anyhow::anyhow!("'{path}': level-{number} has no '#level-{number}: W workers' comment")
        })?;
        let times = ResponseTimes::decode(interval.encoded_histogram())
            .map_err(|problem| anyhow::anyhow!("'{path}' level-{number}: {problem}"))?;
        let response = times
            .percentiles()
            .ok_or_else(|| anyhow::anyhow!("'{path}' level-{number}: no response in it"))?;
        let length_s = interval.duration().as_secs_f64();
        if length_s <= 0.0 {
            bail!("'{path}' level-{number}: an interval of no length");
        }
        points.push(Point {
            workers: worker_count(workers as f64, &|| format!("'{path}' level-{number}"))?,
            raw: in_range(
                response.count as f64 / length_s,
                &RAW,
                "responses per second",
                &|| format!("'{path}' level-{number}"),
            )?,
            latency: Some(Box::new(level_latency(response, asked, length_s))),
            ..Point::default()
        });
    }
    if points.is_empty() {
        bail!("'{path}': an HdrHistogram log without an interval line");
    }
    let mut series = Series::new(
        file.stem(),
        Measure::Rate {
            unit: "responses/s".to_string(),
        },
        points,
        Job {
            tool: TOOL.to_string(),
            ..Job::default()
        },
    );
    series.provenance = imported("corescale", None, "HdrHistogram interval log");
    series.notes.push(format!(
        "'{path}': a run's response times from its HdrHistogram log (each level's measured window; its rate is responses per second, not the run's figure of merit: report the run's JSON for that)"
    ));
    Ok(series)
}
