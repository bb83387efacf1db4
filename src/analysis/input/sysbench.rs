//! sysbench 1.0's and 1.1's output: each run is a level at its thread count (a file of
//! several runs is a sweep, a series per test; 0.5's layout is refused, by name). Its rate is the
//! transactions per second it printed (SQL tests), else its events per second. Its
//! `--report-interval` lines are the level's intervals. Its `--histogram` table gives the
//! percentiles (read into an HdrHistogram, as corescale's own levels); without it only the
//! min, mean, max and the one percentile sysbench prints are known, kept as figures.

use super::*;
use crate::error::UsageError;
use crate::latency::{IntervalFigures, ResponseTimes};

pub(super) const TOOL: &str = "sysbench";

pub(super) const REPORT: Importer = Importer {
    tool: TOOL,
    detects: is_sysbench,
    hints: &["(using ", "Number of threads: ", "General statistics:"],
    runs: headers,
    read: Reader::Text(from_sysbench),
};

/// sysbench 0.4 and 0.5, whose report this reader does not know: claimed, to be refused
/// by name rather than misread.
pub(super) const OLD: Importer = Importer {
    tool: TOOL,
    detects: is_old_sysbench,
    hints: &[],
    runs: one_run,
    read: Reader::Text(refuse_old),
};

/// "sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta2)": the line each run begins with.
fn is_header(line: &str) -> bool {
    line.starts_with("sysbench ") && line.contains("(using ")
}

fn is_sysbench(text: &str) -> bool {
    text.lines().any(is_header)
        && text
            .lines()
            .any(|line| line.starts_with("Number of threads: "))
}

/// Where each run begins: at its header line; what is above the first (a shell prompt,
/// `--test=`'s deprecation warning, blank lines) is the first run's.
fn headers(text: &str) -> Vec<usize> {
    lines_where(text, is_header).into_iter().skip(1).collect()
}

/// "sysbench 0.5:  multi-threaded system evaluation benchmark".
fn is_old_sysbench(text: &str) -> bool {
    text.lines().any(|line| {
        line.starts_with("sysbench 0.")
            && line.contains(":  multi-threaded system evaluation benchmark")
    })
}

fn refuse_old(file: &InputFile, text: &str) -> Result<Series> {
    let version = text
        .lines()
        .find_map(|line| line.strip_prefix("sysbench "))
        .and_then(|rest| rest.split(':').next())
        .unwrap_or("0.x");
    Err(UsageError::new(format!(
        "'{}': sysbench {}'s report is not read (its statistics are laid out otherwise): run the test with sysbench 1.0 or later",
        file.path.display(),
        quote(version)
    ))
    .into())
}

/// The builtin OLTP tests by their queries per transaction (read, write, other), as
/// sysbench 1.0's defaults issue them.
const OLTP_TESTS: &[((u64, u64, u64), &str)] = &[
    ((14, 0, 2), "oltp_read_only"),
    ((14, 4, 2), "oltp_read_write"),
    ((0, 4, 2), "oltp_write_only"),
    ((1, 0, 0), "oltp_point_select"),
];

/// What a sysbench report says, line by line.
#[derive(Default)]
struct Report {
    version: Option<String>,
    threads: Option<usize>,
    primes: Option<f64>,
    /// The heading the lines below belong to: "sql", "general", "latency", ...
    section: &'static str,
    queries: std::collections::BTreeMap<&'static str, f64>,
    transactions_per_s: Option<f64>,
    events_per_s: Option<f64>,
    operations_per_s: Option<f64>,
    total_time_s: Option<f64>,
    events: Option<f64>,
    figures: std::collections::BTreeMap<String, f64>,
    intervals: Vec<IntervalFigures>,
    histogram: Option<ResponseTimes>,
    in_histogram: bool,
}

fn from_sysbench(file: &InputFile, text: &str) -> Result<Series> {
    let mut report = Report::default();
    for (number, line) in text.lines().enumerate() {
        let at = || file.line(number);
        if report.in_histogram && report.histogram_line(line.trim(), &at)? {
            continue;
        }
        report.line(line, &at)?;
    }
    report.series(file)
}

impl Report {
    /// A line of the latency histogram ("       3.551 |**      1": a bucket's value in ms
    /// and its count), or its header; false, and the histogram ended, at any other line.
    fn histogram_line(&mut self, trimmed: &str, at: &dyn Fn() -> String) -> Result<bool> {
        let Some(times) = &mut self.histogram else {
            return Ok(false);
        };
        if let Some((value, rest)) = trimmed.split_once('|') {
            let value_ms = in_range(
                number_in(value, "histogram value", at)?,
                &RAW,
                "histogram value",
                at,
            )?;
            let count = rest.split_whitespace().last().unwrap_or("");
            let count = count_in(count, "histogram count", at)?;
            if count.fract() != 0.0 {
                bail!("{}: histogram count {count} is not a whole number", at());
            }
            times.record_n(
                std::time::Duration::from_secs_f64(value_ms.min(crate::latency::A_DAY_MS) / 1e3),
                count as u64,
            );
            return Ok(true);
        }
        if trimmed.starts_with("value") {
            return Ok(true);
        }
        self.in_histogram = false;
        Ok(false)
    }

    /// Any other line: the version, the run's settings, an interval, a section's heading or
    /// one of its statistics.
    fn line(&mut self, line: &str, at: &dyn Fn() -> String) -> Result<()> {
        let trimmed = line.trim();
        if line.starts_with("Latency histogram") {
            self.histogram = Some(ResponseTimes::default());
            self.in_histogram = true;
        } else if let Some(rest) = line.strip_prefix("sysbench ") {
            self.version = rest.split_whitespace().next().map(printable);
        } else if let Some(rest) = line.strip_prefix("Number of threads: ") {
            self.threads = Some(worker_count(number_in(rest, "number of threads", at)?, at)?);
        } else if let Some(rest) = line.strip_prefix("Total operations: ") {
            // The memory test: "11167618 (5580629.45 per second)".
            let what = "operations per second";
            self.operations_per_s = Some(in_range(per_second(rest, what, at)?, &RAW, what, at)?);
        } else if let Some(rest) = line
            .split_once(" MiB transferred (")
            .map(|(_, rate)| rate.trim_end_matches(" MiB/sec)"))
        {
            self.figures
                .insert("mib_per_s".to_string(), count_in(rest, "MiB/sec", at)?);
        } else if let Some(rest) = line.strip_prefix("Prime numbers limit: ") {
            self.primes = Some(number_in(rest, "prime numbers limit", at)?);
        } else if let Some(rest) = line.strip_prefix("[ ") {
            self.intervals
                .push(interval(rest, self.intervals.last(), at)?);
        } else if !line.starts_with(' ') && trimmed.ends_with(':') {
            self.section = match trimmed {
                "SQL statistics:" => "sql",
                "General statistics:" | "Throughput:" => "general",
                "Latency (ms):" => "latency",
                "Threads fairness:" => "fairness",
                "CPU speed:" => "cpu",
                _ => "",
            };
        } else if let Some((name, value)) = trimmed.split_once(':') {
            self.statistic(name, value.trim(), at)?;
        }
        Ok(())
    }

    /// One "name: value" line of the current section.
    fn statistic(&mut self, name: &str, value: &str, at: &dyn Fn() -> String) -> Result<()> {
        let count = || count_in(value, name, at);
        match (self.section, name) {
            ("sql", "read") => {
                self.queries.insert("read", count()?);
            }
            ("sql", "write") => {
                self.queries.insert("write", count()?);
            }
            ("sql", "other") => {
                self.queries.insert("other", count()?);
            }
            ("sql", "transactions") => {
                self.figures.insert("transactions".to_string(), count()?);
                // Checked as every rate is: "(0 per sec.)" is no capacity.
                self.transactions_per_s =
                    Some(in_range(per_second(value, name, at)?, &RAW, name, at)?);
            }
            ("sql", "queries") => {
                self.figures.insert("queries".to_string(), count()?);
            }
            ("sql", "ignored errors") => {
                self.figures.insert("ignored_errors".to_string(), count()?);
            }
            ("cpu", "events per second") | ("general", "events/s (eps)") => {
                self.events_per_s = Some(in_range(number_in(value, name, at)?, &RAW, name, at)?);
            }
            ("general", "total time" | "time elapsed") => {
                let seconds = value.strip_suffix('s').unwrap_or(value);
                self.total_time_s = Some(in_range(number_in(seconds, name, at)?, &RAW, name, at)?);
            }
            ("general", "total number of events") => {
                self.events = Some(count()?);
            }
            ("latency", "min" | "avg" | "max") => {
                let figure = match name {
                    "min" => "latency_min_ms",
                    "avg" => "latency_average_ms",
                    _ => "latency_max_ms",
                };
                self.figures.insert(figure.to_string(), count()?);
            }
            ("latency", percentile) if percentile.ends_with("th percentile") => {
                let which = percentile.trim_end_matches("th percentile");
                self.figures
                    .insert(format!("latency_p{}_ms", printable(which)), count()?);
            }
            ("fairness", "events (avg/stddev)") => {
                let stddev = value.split('/').nth(1).unwrap_or("");
                self.figures.insert(
                    "events_per_thread_stddev".to_string(),
                    count_in(stddev, name, at)?,
                );
            }
            _ => {}
        }
        Ok(())
    }

    /// The test the report ran, in words: a builtin OLTP test by its queries per
    /// transaction, cpu or memory.
    fn test(&self) -> String {
        if self.transactions_per_s.is_some() {
            let get = |kind: &str| self.queries.get(kind).copied().unwrap_or(0.0);
            let done = self
                .figures
                .get("transactions")
                .copied()
                .unwrap_or(0.0)
                .max(1.0);
            let per = |kind: &str| (get(kind) / done).round() as u64;
            let mix = (per("read"), per("write"), per("other"));
            match OLTP_TESTS.iter().find(|(queries, _)| *queries == mix) {
                Some((_, name)) => format!(
                    "{name} ({} reads, {} writes, {} others per transaction)",
                    mix.0, mix.1, mix.2
                ),
                None => format!(
                    "a SQL test of {} reads, {} writes, {} others per transaction",
                    mix.0, mix.1, mix.2
                ),
            }
        } else if let Some(primes) = self.primes {
            format!("cpu, primes up to {primes}")
        } else if self.operations_per_s.is_some() {
            "memory".to_string()
        } else {
            "a test it does not name".to_string()
        }
    }

    /// The report as a series of one level.
    fn series(self, file: &InputFile) -> Result<Series> {
        let path = file.path;
        let missing = |what: &str| {
            anyhow::anyhow!(
                "'{}': sysbench output without a '{what}' line (is the run's report cut short?)",
                path.display()
            )
        };
        let threads = self.threads.ok_or_else(|| missing("Number of threads:"))?;
        let sql = self.transactions_per_s.is_some();
        let rate = match (
            self.transactions_per_s,
            self.events_per_s.or(self.operations_per_s),
            self.events,
            self.total_time_s,
        ) {
            (Some(rate), ..) | (None, Some(rate), ..) => rate,
            (None, None, Some(events), Some(seconds)) => {
                in_range(events / seconds, &RAW, "events per second", &|| {
                    format!("'{}'", path.display())
                })?
            }
            _ => return Err(missing("total number of events:")),
        };
        let test = self.test();
        let latency = self
            .histogram
            .and_then(|times| times.percentiles())
            .map(|response| Latency::closed(if sql { "transaction" } else { "event" }, response));
        let mut notes: Vec<String> = file.level_ignored(threads).into_iter().collect();
        if latency.is_none() {
            notes.push(format!(
                "'{}': without sysbench's --histogram only its min, mean, max and one percentile are known: no other percentile is shown at {threads} threads",
                path.display()
            ));
        }
        let point = Point {
            workers: threads,
            raw: rate,
            figures: self.figures,
            intervals: self.intervals,
            latency: latency.map(Box::new),
            ..Point::default()
        };
        let job = Job {
            tool: TOOL.to_string(),
            workload: Some(test.clone()),
            shape: Some(format!("sysbench {test}")),
            ..Job::default()
        };
        let mut series = Series::new(
            file.stem(),
            Measure::Rate {
                unit: if sql { "tps" } else { "events/s" }.to_string(),
            },
            vec![point],
            job,
        );
        series.provenance = imported(TOOL, self.version, &test);
        series.notes = notes;
        Ok(series)
    }
}

/// "3860   (385.74 per sec.)", or the memory test's "11167618 (5580629.45 per second)": the
/// rate in brackets.
fn per_second(value: &str, what: &str, at: &dyn Fn() -> String) -> Result<f64> {
    let inside = value
        .split_once('(')
        .map(|(_, rest)| rest.trim_end_matches(')'))
        .filter(|rest| rest.ends_with("per sec.") || rest.ends_with("per second"))
        .ok_or_else(|| {
            anyhow::anyhow!("{}: {what} '{}' has no '(N per sec.)'", at(), quote(value))
        })?;
    count_in(inside, what, at)
}

/// A `--report-interval` line after "[ ": "10s ] thds: 2 tps: 385.67 qps: ... lat (ms,95%):
/// 6.21 err/s: 0.00 reconn/s: 0.00" (or "eps:" for tests without transactions).
fn interval(
    text: &str,
    before: Option<&IntervalFigures>,
    at: &dyn Fn() -> String,
) -> Result<IntervalFigures> {
    let (time, rest) = text.split_once("s ]").ok_or_else(|| {
        anyhow::anyhow!("{}: interval line '[ {}' has no 's ]'", at(), quote(text))
    })?;
    let end_s = in_range(
        number_in(time, "interval time", at)?,
        &RAW,
        "interval time",
        at,
    )?;
    let mut words = rest.split_whitespace();
    let rate = loop {
        match words.next() {
            Some("tps:" | "eps:") => break words.next().unwrap_or(""),
            Some(_) => continue,
            None => bail!("{}: interval line without 'tps:' or 'eps:'", at()),
        }
    };
    let rate = count_in(rate, "interval rate", at)?;
    interval_ending(end_s, rate, before, at)
}
