//! pgbench's standard output, as PostgreSQL 9.5 to 18 print it: each run's summary is a load
//! level (its client count; a file of several runs is a sweep), its rate the tps without
//! connection time ("without initial connection time" since 14, "excluding connections
//! establishing" before). From a summary only the mean latency and its standard deviation
//! are known ("latency average = " since 10, "latency average: " before); they are kept as
//! the level's own figures, and no percentile is made up from them (the run's `--log` gives
//! them: `pgbench_log`). Its `-P` progress lines are the level's intervals, its `-r`
//! statement latencies figures of the level. A run throttled with `-R` ran to a schedule:
//! its rate is the one asked, not capacity. Progress lines alone are a level's intervals.

use super::*;
use crate::latency::IntervalFigures;

/// The tool an imported series names, one level a file.
pub(super) const TOOL: &str = "pgbench";

/// What a summary's note says until a log gives its percentiles.
pub(super) const NO_PERCENTILES: &str =
    "pgbench's summary gives the latency's mean and standard deviation only";

pub(super) const SUMMARY: Importer = Importer {
    tool: TOOL,
    detects: is_pgbench,
    hints: &["transaction type: ", "number of clients: ", "tps = "],
    runs: summaries,
    read: Reader::Text(from_pgbench),
};

/// pgbench's `-P` lines without a summary (a run cut short, or its progress kept alone).
pub(super) const PROGRESS: Importer = Importer {
    tool: TOOL,
    detects: is_progress,
    hints: &["progress: ", " tps, lat "],
    runs: one_run,
    read: Reader::Text(from_progress),
};

/// Where each run after the first begins: at the first line after a summary that is not
/// part of it, when another summary follows (lines after the last one stay with it).
fn summaries(text: &str) -> Vec<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut starts = Vec::new();
    let mut ended = false;
    for (number, line) in lines.iter().enumerate() {
        if line.starts_with("tps = ") {
            ended = true;
        } else if ended && !line.trim().is_empty() && !continues_summary(line) {
            ended = false;
            if lines[number..]
                .iter()
                .any(|line| line.starts_with("transaction type: "))
            {
                starts.push(number);
            }
        }
    }
    starts
}

/// Lines a summary may hold after its tps: a second tps (before 14), `-r`'s statement
/// latencies and each script's part with several scripts.
fn continues_summary(line: &str) -> bool {
    line.starts_with([' ', '\t', '-'])
        || [
            "tps = ",
            "statement latencies",
            "SQL script ",
            "script statistics:",
        ]
        .iter()
        .any(|start| line.starts_with(start))
}

fn is_progress(text: &str) -> bool {
    text.lines()
        .filter(|line| {
            line.strip_prefix("progress: ")
                .is_some_and(|rest| rest.contains(" s, ") && rest.contains(" tps"))
        })
        .nth(1)
        .is_some()
}

/// Whether the text is pgbench's summary: its header line and the lines every run prints.
fn is_pgbench(text: &str) -> bool {
    text.lines()
        .any(|line| line.starts_with("transaction type: "))
        && text
            .lines()
            .any(|line| line.starts_with("number of clients: "))
}

/// What a pgbench summary says, line by line.
#[derive(Default)]
struct Summary {
    version: Option<String>,
    progress_lines: Vec<((f64, f64), usize)>,
    statements: usize,
    in_statements: bool,
    script: Option<String>,
    scale: Option<f64>,
    query_mode: Option<String>,
    clients: Option<usize>,
    tps_without: Option<f64>,
    tps_with: Option<f64>,
    /// The tps line of a run with `-C` ("including reconnection times").
    reconnecting_at: Option<usize>,
    figures: std::collections::BTreeMap<String, f64>,
    /// The line saying -R was given...
    scheduled_at: Option<usize>,
    /// ...and the progress lines after the summary.
    progress_after: Vec<usize>,
}

/// One level from a pgbench summary, named after its file unless a folder names it.
fn from_pgbench(file: &InputFile, text: &str) -> Result<Series> {
    let mut summary = Summary::default();
    for (number, line) in text.lines().enumerate() {
        let at = || file.line(number);
        let line = line.trim_end();
        if summary.in_statements {
            match statement_latency(line, &at)? {
                Some((latency_ms, command)) => {
                    summary.statements += 1;
                    summary.figures.insert(
                        format!("statement {:02} ms: {}", summary.statements, quote(command)),
                        latency_ms,
                    );
                    continue;
                }
                None => summary.in_statements = false,
            }
        }
        summary.line(line, number, &at)?;
    }
    summary.series(file)
}

impl Summary {
    /// One line of the summary (or of the progress before it).
    fn line(&mut self, line: &str, number: usize, at: &dyn Fn() -> String) -> Result<()> {
        if line
            .trim_start_matches([' ', '-'])
            .starts_with("statement latencies in milliseconds")
        {
            self.in_statements = true;
        } else if let Some(rest) = line.strip_prefix("progress: ") {
            if self.tps_without.is_some() || self.tps_with.is_some() {
                // After the summary: a run cut short, not this one's.
                self.progress_after.push(number);
            } else {
                self.progress_lines.push((progress(rest, at)?, number));
            }
        } else if let Some(rest) = line.strip_prefix("pgbench (") {
            // "pgbench (15.20 (Debian 15.20-0+deb12u1))", or "(17.2, server 15.20)".
            self.version = rest
                .split([' ', ',', ')'])
                .next()
                .filter(|word| !word.is_empty())
                .map(printable);
        } else if let Some(rest) = line.strip_prefix("transaction type: ") {
            let rest = rest.trim();
            let name = rest
                .strip_prefix("<builtin: ")
                .and_then(|name| name.strip_suffix('>'))
                .unwrap_or(rest);
            self.script = Some(printable(name));
        } else if let Some(rest) = line.strip_prefix("scaling factor: ") {
            self.scale = Some(number_in(rest, "scaling factor", at)?);
        } else if let Some(rest) = line.strip_prefix("query mode: ") {
            self.query_mode = Some(printable(rest.trim()));
        } else if let Some(rest) = line.strip_prefix("number of clients: ") {
            self.clients = Some(worker_count(number_in(rest, "number of clients", at)?, at)?);
        } else if let Some(rest) = line.strip_prefix("tps = ") {
            let (value, how) = rest.split_once(' ').unwrap_or((rest, ""));
            let value = in_range(number_in(value, "tps", at)?, &RAW, "tps", at)?;
            if how.contains("without initial connection time")
                || how.contains("excluding connections establishing")
            {
                self.tps_without = Some(value);
            } else {
                if how.contains("including reconnection times") {
                    self.reconnecting_at = Some(number);
                }
                self.tps_with = Some(value);
            }
        } else {
            self.figure_line(line, number, at)?;
        }
        Ok(())
    }

    /// A line of the summary's figures: transactions, failures, latency, schedule lag,
    /// skipped and late transactions.
    fn figure_line(&mut self, line: &str, number: usize, at: &dyn Fn() -> String) -> Result<()> {
        let figures = &mut self.figures;
        let mut set = |name: &str, value: f64| {
            figures.insert(name.to_string(), value);
        };
        if let Some(rest) = line.strip_prefix("number of transactions actually processed: ") {
            // "5000" or "5000/10000" (with -t: processed of asked).
            let done = rest.split('/').next().unwrap_or(rest);
            set(
                "transactions",
                count_in(done, "transactions processed", at)?,
            );
        } else if let Some(rest) = line.strip_prefix("number of failed transactions: ") {
            let failed = rest.split_whitespace().next().unwrap_or(rest);
            set(
                "failed_transactions",
                count_in(failed, "failed transactions", at)?,
            );
        } else if let Some(rest) = stated(line, "latency average") {
            set(
                "latency_average_ms",
                milliseconds(rest, "latency average", at)?,
            );
        } else if let Some(rest) = stated(line, "latency stddev") {
            set(
                "latency_stddev_ms",
                milliseconds(rest, "latency stddev", at)?,
            );
        } else if let Some(rest) = stated(line, "rate limit schedule lag") {
            // "avg 0.123 (max 4.567) ms": -R was given.
            let average = rest.trim_start().strip_prefix("avg ").unwrap_or(rest);
            set(
                "schedule_lag_average_ms",
                count_in(average, "schedule lag", at)?,
            );
            self.scheduled_at = Some(number);
        } else if let Some(rest) = line.strip_prefix("number of transactions skipped: ") {
            set(
                "skipped_transactions",
                count_in(rest, "transactions skipped", at)?,
            );
        } else if let Some(rest) = line.strip_prefix("number of transactions above the ") {
            // "5.0 ms latency limit: 12/1000 (1.200 %)": -L was given.
            if let Some((limit, late)) = rest.split_once(" ms latency limit: ") {
                let limit = in_range(
                    number_in(limit, "latency limit", at)?,
                    &RAW,
                    "latency limit",
                    at,
                )?;
                set("latency_limit_ms", limit);
                let late = late.split('/').next().unwrap_or(late);
                set(
                    "late_transactions",
                    count_in(late, "late transactions", at)?,
                );
            }
        }
        Ok(())
    }

    /// The summary as a series of one level, with what it leaves out.
    fn series(self, file: &InputFile) -> Result<Series> {
        let path = file.path;
        let missing = |what: &str| {
            anyhow::anyhow!(
                "'{}': pgbench output without a '{what}' line (is the run's summary cut short?)",
                path.display()
            )
        };
        let intervals = intervals_of(file, &self.progress_lines)?;
        let clients = self.clients.ok_or_else(|| missing("number of clients:"))?;
        let tps = self
            .tps_without
            .or(self.tps_with)
            .ok_or_else(|| missing("tps ="))?;
        let script = self.script.ok_or_else(|| missing("transaction type:"))?;
        let mut shape = format!("pgbench {script}");
        if let Some(scale) = self.scale {
            shape.push_str(&format!(", scale {scale}"));
        }
        if let Some(mode) = &self.query_mode {
            shape.push_str(&format!(", {mode} query mode"));
        }
        let point = Point {
            workers: clients,
            raw: tps,
            scheduled: self
                .scheduled_at
                .map(|number| format!("pgbench ran at a rate limit (-R, {})", file.line(number))),
            figures: self.figures,
            intervals,
            ..Point::default()
        };
        let mut series = tps_series(file, point, &script, shape);
        series.provenance = imported(TOOL, self.version, &script);
        series.notes.extend(file.level_ignored(clients));
        if let (None, Some(number)) = (self.tps_without, self.reconnecting_at) {
            series.notes.push(format!(
                "{}: pgbench ran with -C (a connection per transaction): its tps, the rate read, includes reconnecting, so it is not comparable with runs that keep their connections",
                file.line(number)
            ));
        }
        if let Some(first) = self.progress_after.first() {
            series.notes.push(format!(
                "{}: {} progress lines from here on, after the summary, left out (a run without its summary)",
                file.line(*first),
                self.progress_after.len()
            ));
        }
        series.notes.push(format!(
            "'{}': {NO_PERCENTILES}, so no percentile is shown at {clients} client{} (pgbench --log beside it gives them)",
            path.display(),
            if clients == 1 { "" } else { "s" }
        ));
        Ok(series)
    }
}

/// A `-P` line after "progress: " ("5.0 s, 1234.5 tps, lat 0.808 ms stddev 0.123, 0 failed"):
/// the time it was printed at (since the start, or since the epoch with
/// `--progress-timestamp`) and the tps since the line before it.
fn progress(text: &str, at: &dyn Fn() -> String) -> Result<(f64, f64)> {
    let mut parts = text.split(", ");
    let time = parts.next().unwrap_or("");
    let Some(time) = time.strip_suffix(" s") else {
        bail!("{}: progress time '{}' is not in s", at(), quote(time));
    };
    let end_s = in_range(
        number_in(time, "progress time", at)?,
        &RAW,
        "progress time",
        at,
    )?;
    let tps = parts.next().unwrap_or("");
    let Some(tps) = tps.strip_suffix(" tps") else {
        bail!("{}: progress rate '{}' is not in tps", at(), quote(tps));
    };
    let tps = in_range(
        number_in(tps, "progress tps", at)?,
        &RAW,
        "progress tps",
        at,
    )?;
    Ok((end_s, tps))
}

/// Times above this are `--progress-timestamp`'s seconds since the epoch (2001 on), not
/// seconds since the start.
const EPOCH_S: f64 = 1e9;

/// The intervals progress lines end. With `--progress-timestamp` the run's start is not
/// printed: the first interval is taken as long as the second.
fn intervals_of(file: &InputFile, lines: &[((f64, f64), usize)]) -> Result<Vec<IntervalFigures>> {
    let origin = match lines {
        [((first, _), _), ((second, _), _), ..] if *first > EPOCH_S => first - (second - first),
        [((first, _), _)] if *first > EPOCH_S => first - 1.0,
        _ => 0.0,
    };
    let mut intervals: Vec<IntervalFigures> = Vec::new();
    for ((end_s, tps), number) in lines {
        let at = || file.line(*number);
        intervals.push(interval_ending(
            end_s - origin,
            *tps,
            intervals.last(),
            &at,
        )?);
    }
    Ok(intervals)
}

/// A `-r` line: "   0.117   0  SELECT ..." (latency in ms, failures since 15, the command);
/// None where the list ends.
fn statement_latency<'a>(line: &'a str, at: &dyn Fn() -> String) -> Result<Option<(f64, &'a str)>> {
    let mut rest = line.trim_start();
    let Some((latency, after)) = rest.split_once(char::is_whitespace) else {
        return Ok(None);
    };
    if latency.parse::<f64>().is_err() {
        return Ok(None);
    }
    let latency = number_in(latency, "statement latency", at)?;
    rest = after.trim_start();
    // Since PostgreSQL 15 the failures come before the command.
    if let Some((failures, command)) = rest.split_once(char::is_whitespace)
        && failures.bytes().all(|byte| byte.is_ascii_digit())
    {
        rest = command.trim_start();
    }
    let latency = in_range(latency, &COUNT, "statement latency", at)?;
    Ok(Some((latency, rest)))
}

/// The value after a summary's label, as every version spells it: "latency average = 2.0
/// ms" (since 10) or "latency average: 2.0 ms" (9.5 and 9.6).
fn stated<'a>(line: &'a str, label: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(label)?;
    rest.strip_prefix(" = ").or_else(|| rest.strip_prefix(": "))
}

/// A run's level as a series of transactions per second, its job the script run.
fn tps_series(file: &InputFile, point: Point, workload: &str, shape: String) -> Series {
    let job = Job {
        tool: TOOL.to_string(),
        workload: Some(workload.to_string()),
        shape: Some(shape),
        ..Job::default()
    };
    Series::new(
        file.stem(),
        Measure::Rate {
            unit: "tps".to_string(),
        },
        vec![point],
        job,
    )
}

/// Progress lines alone: one level at the clients `--level` or the file's name gives, its
/// rate the intervals' transactions over their time.
fn from_progress(file: &InputFile, text: &str) -> Result<Series> {
    let mut progress_lines = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let at = || file.line(number);
        if let Some(rest) = line.trim_end().strip_prefix("progress: ") {
            progress_lines.push((progress(rest, &at)?, number));
        }
    }
    let intervals = intervals_of(file, &progress_lines)?;
    let seconds: f64 = intervals.iter().map(|interval| interval.length_s).sum();
    let done: f64 = intervals
        .iter()
        .map(|interval| interval.rate_per_s * interval.length_s)
        .sum();
    let tps = in_range(done / seconds, &RAW, "tps", &|| file.line(0))?;
    let point = Point {
        workers: file.given_level(),
        raw: tps,
        intervals,
        ..Point::default()
    };
    let mut series = tps_series(
        file,
        point,
        "progress lines",
        "pgbench progress lines (-P) without a summary".to_string(),
    );
    series.provenance = imported(TOOL, None, "progress lines (-P) without a summary");
    series.notes.push(format!(
        "'{}': progress lines without pgbench's summary: the rate is the intervals' mean, and the script, scale and latency are not known",
        file.path.display()
    ));
    Ok(series)
}

/// "2.000 ms" in milliseconds.
fn milliseconds(text: &str, what: &str, at: &dyn Fn() -> String) -> Result<f64> {
    if !text.trim_end().ends_with(" ms") {
        bail!("{}: {what} '{}' is not in ms", at(), quote(text));
    }
    in_range(number_in(text, what, at)?, &RAW, what, at)
}
