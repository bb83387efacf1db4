//! corescale's own HdrHistogram interval log (`run -o run.hlog`) read back: the `level-N`
//! interval lines (one per interval with `--interval`) a level whose response times are
//! their histograms added: exactly the run's JSON's from a line per level, within the
//! intervals' 2 significant digits from a line per interval; its workers from the log's
//! `#level-N: W workers` comment. Another tool's .hlog (YCSB, cassandra-stress) does not say
//! its values' unit, so it is refused by name rather than read in a unit it may not have.

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

/// An interval log: among its leading comment lines (one per level in corescale's), a
/// header (`#[StartTime:`, `#[BaseTime:`), or the CSV-like legend.
fn is_hlog(text: &str) -> bool {
    text.lines()
        .take_while(|line| line.starts_with('#') || line.starts_with('"'))
        .any(|line| {
            line.starts_with("#[StartTime: ")
                || line.starts_with("#[BaseTime: ")
                || line.starts_with("\"StartTimestamp\",\"Interval_Length\"")
        })
}

/// What the run said of an open-loop level: `at R/s, sent S of D due, ARRIVALS, kept|fell
/// behind` (the histogram holds the requests due but never sent too).
#[derive(Debug, Clone, Copy)]
struct Schedule {
    target_per_s: f64,
    sent: u64,
    due: u64,
    arrivals: crate::latency::Arrivals,
    sustained: bool,
}

/// A level's workers and, for an open loop, its schedule (an error where the rate's figures
/// are missing: an older log).
type LevelComment = (usize, Option<Result<Schedule, String>>);

/// `#level-N: W workers[ at ...]`: the level's number, and what its comment says.
fn level_comment(line: &str) -> Option<(usize, LevelComment)> {
    let rest = line.strip_prefix("#level-")?;
    let (number, rest) = rest.split_once(": ")?;
    let workers = rest.split_whitespace().next()?;
    let schedule = rest.split_once(" at ").map(|(_, schedule)| {
        schedule_of(schedule).ok_or_else(|| {
            format!("level-{number}'s rate figures ('{schedule}') are not the run's own: report the run's JSON")
        })
    });
    Some((number.parse().ok()?, (workers.parse().ok()?, schedule)))
}

fn schedule_of(text: &str) -> Option<Schedule> {
    let mut parts = text.split(", ");
    let target_per_s = parts.next()?.strip_suffix("/s")?.parse::<f64>().ok()?;
    let (sent, due) = parts.next()?.strip_prefix("sent ")?.split_once(" of ")?;
    let due = due.strip_suffix(" due")?;
    let arrivals = match parts.next()? {
        "uniform" => crate::latency::Arrivals::Uniform,
        "poisson" => crate::latency::Arrivals::Poisson,
        "captured" => crate::latency::Arrivals::Captured,
        _ => return None,
    };
    let sustained = match parts.next()? {
        "kept" => true,
        "fell behind" => false,
        _ => return None,
    };
    (target_per_s.is_finite() && target_per_s > 0.0).then_some(Schedule {
        target_per_s,
        sent: sent.parse().ok()?,
        due: due.parse().ok()?,
        arrivals,
        sustained,
    })
}

/// A level's response times: an open loop's, from when each was due, as the run scheduled it.
fn level_latency(response: Percentiles, schedule: Option<Schedule>, length_s: f64) -> Latency {
    let Some(schedule) = schedule else {
        return Latency::closed("request", response);
    };
    Latency {
        measured_from: crate::latency::MeasuredFrom::Due,
        rate: Some(RateFigures {
            target_per_s: schedule.target_per_s,
            achieved_per_s: schedule.sent as f64 / length_s,
            arrivals: schedule.arrivals,
            due: schedule.due,
            sent: schedule.sent,
            sustained: schedule.sustained,
            share: None,
        }),
        ..Latency::closed("request", response)
    }
}

/// A level read: its responses' figures and the seconds its lines cover.
type LevelRead = (Option<Percentiles>, f64);

/// The level whose lines were being added, done.
fn finish(
    current: Option<(usize, ResponseTimes, f64)>,
    levels: &mut std::collections::BTreeMap<usize, LevelRead>,
) {
    if let Some((number, times, seconds)) = current {
        levels.insert(number, (times.percentiles(), seconds));
    }
}

/// Each level's lines added together (one per interval with `--interval`, else one), by its
/// number: its responses' figures and the seconds its lines cover. The writer puts a level's
/// lines together, so one level's histogram is held at a time; a level whose lines are apart
/// is refused, and so is a tag no `#level-N` comment names, before its histogram is read.
fn level_lines(
    path: &str,
    text: &str,
    comments: &std::collections::BTreeMap<usize, LevelComment>,
) -> Result<std::collections::BTreeMap<usize, LevelRead>> {
    let mut levels = std::collections::BTreeMap::new();
    let mut current: Option<(usize, ResponseTimes, f64)> = None;
    for entry in IntervalLogIterator::new(text.as_bytes()) {
        let entry = entry.map_err(|error| anyhow::anyhow!("'{path}': {error:?}"))?;
        let LogEntry::Interval(interval) = entry else {
            continue;
        };
        let tag = interval.tag().map(|tag| tag.as_str().to_string());
        if tag
            .as_deref()
            .is_some_and(|tag| tag.starts_with("level-") && tag.contains('.'))
        {
            bail!(
                "'{path}' holds each statement class's response times (-o run.classes.hlog), not the levels': report the run's .hlog or its JSON"
            );
        }
        let number = tag
            .as_deref()
            .and_then(|tag| tag.strip_prefix("level-")?.parse::<usize>().ok())
            .ok_or_else(|| anyhow::anyhow!("'{path}': an interval tagged {tag:?}, not level-N"))?;
        if !comments.contains_key(&number) {
            bail!("'{path}': level-{number} has no '#level-{number}: W workers' comment");
        }
        let problem = |problem: String| anyhow::anyhow!("'{path}' level-{number}: {problem}");
        let times = ResponseTimes::decode(interval.encoded_histogram()).map_err(problem)?;
        let length_s = interval.duration().as_secs_f64();
        match &mut current {
            Some((at, all, seconds)) if *at == number => {
                all.try_merge(&times).map_err(problem)?;
                *seconds += length_s;
            }
            _ => {
                if levels.contains_key(&number) {
                    bail!(
                        "'{path}': level-{number}'s lines are not together, as corescale writes them"
                    );
                }
                finish(current.take(), &mut levels);
                current = Some((number, times, length_s));
            }
        }
    }
    finish(current, &mut levels);
    Ok(levels)
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
    let levels: std::collections::BTreeMap<usize, LevelComment> =
        text.lines().filter_map(level_comment).collect();
    // A level whose comment does not give the run's own figures is refused first.
    if let Some(problem) = levels
        .values()
        .find_map(|(_, schedule)| schedule.clone()?.err())
    {
        bail!("'{path}': {problem}");
    }
    let mut points = Vec::new();
    let mut short = Vec::new();
    for (number, (response, length_s)) in level_lines(&path.to_string(), text, &levels)? {
        let (workers, schedule) = levels.get(&number).cloned().ok_or_else(|| {
            anyhow::anyhow!("'{path}': level-{number} has no '#level-{number}: W workers' comment")
        })?;
        let schedule = schedule
            .transpose()
            .map_err(|problem| anyhow::anyhow!("'{path}': {problem}"))?;
        let response = response
            .ok_or_else(|| anyhow::anyhow!("'{path}' level-{number}: no response in it"))?;
        if length_s <= 0.0 {
            // Written to the millisecond: a level shorter than that has no rate to give.
            short.push(number.to_string());
            continue;
        }
        points.push(Point {
            workers: worker_count(workers as f64, &|| format!("'{path}' level-{number}"))?,
            raw: in_range(
                response.count as f64 / length_s,
                &RAW,
                "responses per second",
                &|| format!("'{path}' level-{number}"),
            )?,
            latency: Some(Box::new(level_latency(response, schedule, length_s))),
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
    if !short.is_empty() {
        series.notes.push(format!(
            "'{path}': level-{} left out: its interval is shorter than the log's millisecond",
            short.join(", level-")
        ));
    }
    series.notes.push(format!(
        "'{path}': a run's response times from its HdrHistogram log (each level's measured window; its rate is responses per second, not the run's figure of merit: report the run's JSON for that)"
    ));
    Ok(series)
}
