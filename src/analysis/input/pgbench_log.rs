//! pgbench's logs (`--log`): the per-transaction log, whose latencies give the level's
//! percentiles (an HdrHistogram, as corescale's own levels), and the aggregated log
//! (`--aggregate-interval`), whose lines are the level's intervals. Each is read line by
//! line in memory that does not grow with the file. pgbench writes one file per thread
//! (`pgbench_log.PID`, `pgbench_log.PID.1`, ...): the first reads the others beside it.
//! A log joins its run's summary in the same folder (`join`), else it is a level of its own.

use std::io::BufRead;

use super::*;
use crate::latency::{IntervalFigures, MeasuredFrom, ResponseTimes};

/// The tool a log's series names until it joins its summary.
pub(super) const TOOL: &str = "pgbench log";

pub(super) const TRANSACTIONS: Importer = Importer {
    tool: TOOL,
    detects: is_transaction_log,
    hints: &[],
    runs: one_run,
    read: Reader::Lines(from_transaction_log),
};

pub(super) const AGGREGATED: Importer = Importer {
    tool: TOOL,
    detects: is_aggregated_log,
    hints: &[],
    runs: one_run,
    read: Reader::Lines(from_aggregated_log),
};

/// More clients than pgbench can open connections.
const MOST_CLIENTS: u64 = 1_000_000;

/// Seconds since 1970 from which a field is taken for a time stamp (2001 on).
const EPOCH_FROM: u64 = 1_000_000_000;

/// The first lines of a text, split in fields; None when there are none.
fn first_lines(text: &str) -> Option<Vec<Vec<&str>>> {
    let lines: Vec<Vec<&str>> = text
        .lines()
        .take(20)
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.split_ascii_whitespace().collect())
        .collect();
    // The last line of a head may be cut.
    let whole = if text.len() >= super::HEAD_BYTES && lines.len() > 1 {
        &lines[..lines.len() - 1]
    } else {
        &lines[..]
    };
    (!whole.is_empty()).then(|| whole.to_vec())
}

fn whole_number(field: &str) -> Option<u64> {
    field.parse().ok()
}

/// `client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]`,
/// time in microseconds, or "skipped", or "failed" ("serialization" / "deadlock" with
/// `--failures-detailed`).
fn is_transaction_log(text: &str) -> bool {
    first_lines(text).is_some_and(|lines| {
        lines.iter().all(|fields| {
            (6..=8).contains(&fields.len())
                && whole_number(fields[0]).is_some()
                && whole_number(fields[1]).is_some()
                && (whole_number(fields[2]).is_some()
                    || is_failure(fields[2])
                    || fields[2] == "skipped")
                && whole_number(fields[3]).is_some()
                && whole_number(fields[4]).is_some_and(|epoch| epoch >= EPOCH_FROM)
                && whole_number(fields[5]).is_some_and(|us| us < 1_000_000)
        })
    })
}

/// A failed transaction's time field: `failed`, or with `--failures-detailed` its kind.
fn is_failure(field: &str) -> bool {
    matches!(field, "failed" | "serialization" | "deadlock")
}

/// `interval_start num_transactions sum_latency sum_latency_2 min_latency max_latency ...`
/// (6 to 15 fields by version and options), the start in seconds since 1970.
fn is_aggregated_log(text: &str) -> bool {
    first_lines(text).is_some_and(|lines| {
        lines.iter().all(|fields| {
            (6..=15).contains(&fields.len())
                && whole_number(fields[0]).is_some_and(|epoch| epoch >= EPOCH_FROM)
                && fields[1..].iter().all(|field| field.parse::<f64>().is_ok())
        })
    })
}

/// The log's files: itself, then its run's other threads' beside it (`NAME.1`, `NAME.2`, ...
/// until one is missing), when it is the first and on disk.
fn thread_files(file: &InputFile) -> Vec<std::path::PathBuf> {
    let name = file.path.to_string_lossy();
    let first = file.path.is_file() && folder::thread_part(file.path).is_none();
    (1..)
        .map(|thread| std::path::PathBuf::from(format!("{name}.{thread}")))
        .take_while(|path| first && path.is_file())
        .collect()
}

/// Each line of the log and of its threads' files, split in fields, with its place.
fn each_line(
    file: &InputFile,
    first: &mut dyn BufRead,
    mut take: impl FnMut(&[&[u8]], &dyn Fn() -> String) -> Result<()>,
) -> Result<()> {
    let mut read = |path: &Path, lines: &mut dyn BufRead| -> Result<()> {
        let mut line = Vec::with_capacity(128);
        let mut number = 0;
        loop {
            line.clear();
            let read = lines
                .read_until(b'\n', &mut line)
                .with_context(|| format!("cannot read '{}'", path.display()))?;
            if read == 0 {
                return Ok(());
            }
            number += 1;
            // On the stack: no allocation per transaction. A line of more fields than any
            // log has shows as 17, which every reader refuses.
            let mut fields: [&[u8]; 17] = [&[]; 17];
            let mut found = 0;
            for field in line
                .split(|byte| byte.is_ascii_whitespace())
                .filter(|field| !field.is_empty())
            {
                fields[found] = field;
                found += 1;
                if found == fields.len() {
                    break;
                }
            }
            if found > 0 {
                take(&fields[..found], &|| {
                    format!("'{}' line {number}", path.display())
                })?;
            }
        }
    };
    read(file.path, first)?;
    for thread in thread_files(file) {
        let opened = crate::input_file::open_regular(&thread, &format!("'{}'", thread.display()))?;
        let mut bounded =
            crate::input_file::Bounded::new(opened, crate::input_file::MOST_STREAMED_BYTES);
        bounded.bound_lines();
        read(
            &thread,
            &mut std::io::BufReader::with_capacity(1 << 20, bounded),
        )?;
    }
    Ok(())
}

/// A whole number field, or an error naming it.
fn count(field: &[u8], what: &str, at: &dyn Fn() -> String) -> Result<u64> {
    let mut value: u64 = 0;
    if field.is_empty() || field.len() > 19 {
        bail!(
            "{}: {what} '{}' is not a whole number",
            at(),
            quote(&String::from_utf8_lossy(field))
        );
    }
    for &byte in field {
        if !byte.is_ascii_digit() {
            bail!(
                "{}: {what} '{}' is not a whole number",
                at(),
                quote(&String::from_utf8_lossy(field))
            );
        }
        value = value * 10 + u64::from(byte - b'0');
    }
    Ok(value)
}

/// A number field (the aggregated log's sums of squares may be written with decimals).
fn number(field: &[u8], what: &str, at: &dyn Fn() -> String) -> Result<f64> {
    std::str::from_utf8(field)
        .ok()
        .and_then(|text| text.parse::<f64>().ok())
        .filter(|value| value.is_finite() && *value >= 0.0)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "{}: {what} '{}' is not a number",
                at(),
                quote(&String::from_utf8_lossy(field))
            )
        })
}

/// The job of a log not joined to its summary: the script is not in it.
fn log_job() -> Job {
    Job {
        tool: TOOL.to_string(),
        workload: None,
        shape: Some("pgbench, script not in the log".to_string()),
        ..Job::default()
    }
}

fn log_series(file: &InputFile, point: Point, kind: &str) -> Series {
    let mut series = Series::new(
        file.stem(),
        Measure::Rate {
            unit: "tps".to_string(),
        },
        vec![point],
        log_job(),
    );
    series.provenance = imported("pgbench", None, kind);
    series
}

/// What the 7th field of a per-transaction log says when it is `-R`'s schedule lag (each
/// transaction's `time` is then measured from when it was due): the level as an open loop.
struct Schedule {
    lags: ResponseTimes,
    services: ResponseTimes,
    first_due_us: u64,
    last_due_us: u64,
    /// Every line had an 8th field (retries): the 7th is the lag for certain.
    certain: bool,
    /// A lag over its transaction's time: the field is not a lag.
    not_a_lag: bool,
}

impl Schedule {
    fn new() -> Self {
        Self {
            lags: ResponseTimes::default(),
            services: ResponseTimes::default(),
            first_due_us: u64::MAX,
            last_due_us: 0,
            certain: true,
            not_a_lag: false,
        }
    }

    /// One ended transaction: its time from when it was due, its lag, its end.
    fn ended(&mut self, latency_us: u64, lag_us: u64, end_us: u64, fields: usize) {
        self.certain &= fields == 8;
        if lag_us > latency_us {
            self.not_a_lag = true;
            return;
        }
        self.lags.record(std::time::Duration::from_micros(lag_us));
        self.services
            .record(std::time::Duration::from_micros(latency_us - lag_us));
        let due_us = end_us.saturating_sub(latency_us);
        self.first_due_us = self.first_due_us.min(due_us);
        self.last_due_us = self.last_due_us.max(due_us);
    }

    /// The level as an open loop: the rate asked is estimated from the schedule (pgbench
    /// does not print it), the transactions due from that rate over the log's time, those
    /// sent are the ones that started (the log's time ends at its last transaction's end,
    /// `last_end_us`). None when the field is not a lag or too few were due.
    fn reading(
        &self,
        response: Percentiles,
        (started, skipped): (u64, u64),
        last_end_us: u64,
    ) -> Option<Latency> {
        let span_s = self.last_due_us.checked_sub(self.first_due_us)? as f64 / 1e6;
        let scheduled = started + skipped;
        if self.not_a_lag || scheduled < 2 || span_s <= 0.0 {
            return None;
        }
        let target_per_s = (scheduled - 1) as f64 / span_s;
        let window_s = last_end_us.checked_sub(self.first_due_us)? as f64 / 1e6;
        let due = ((target_per_s * window_s).round() as u64).max(started);
        Some(Latency {
            measured_from: MeasuredFrom::Due,
            service: self.services.percentiles(),
            schedule_lag: self.lags.percentiles(),
            rate: Some(RateFigures {
                target_per_s,
                achieved_per_s: started as f64 / window_s,
                arrivals: crate::latency::Arrivals::Poisson,
                due,
                sent: started,
                sustained: started as f64 >= 0.99 * due as f64,
                share: None,
            }),
            ..Latency::closed("transaction", response)
        })
    }
}

/// What a per-transaction log's lines add up to.
#[derive(Default)]
struct TransactionLog {
    times: ResponseTimes,
    schedule: Option<Schedule>,
    clients: std::collections::BTreeSet<u64>,
    failed: u64,
    skipped: u64,
    sum_us: f64,
    sum_squares: f64,
    first_start_us: Option<u64>,
    last_end_us: u64,
}

impl TransactionLog {
    /// One line: `client_id transaction_no time script_no time_epoch time_us [schedule_lag]
    /// [retries]`.
    fn line(&mut self, fields: &[&[u8]], at: &dyn Fn() -> String) -> Result<()> {
        if !(6..=8).contains(&fields.len()) {
            bail!(
                "{}: {} fields, where pgbench's per-transaction log has 6 to 8 (client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries])",
                at(),
                fields.len()
            );
        }
        let client = count(fields[0], "client_id", at)?;
        if client >= MOST_CLIENTS {
            bail!(
                "{}: client_id {client} is beyond any client count ({MOST_CLIENTS})",
                at()
            );
        }
        self.clients.insert(client);
        let micros = count(fields[5], "time_us", at)?;
        let end_us = count(fields[4], "time_epoch", at)?
            .checked_mul(1_000_000)
            .and_then(|us| us.checked_add(micros))
            .ok_or_else(|| anyhow::anyhow!("{}: time_epoch is out of range", at()))?;
        match fields[2] {
            b"skipped" => self.skipped += 1,
            b"failed" | b"serialization" | b"deadlock" => self.failed += 1,
            latency => {
                let latency_us = count(latency, "time", at)?;
                if latency_us as f64 > crate::latency::A_DAY_MS * 1e3 {
                    bail!("{}: time {latency_us} us is over a day", at());
                }
                self.times
                    .record(std::time::Duration::from_micros(latency_us));
                self.sum_us += latency_us as f64;
                self.sum_squares += (latency_us as f64).powi(2);
                let start_us = end_us.saturating_sub(latency_us);
                self.first_start_us = Some(
                    self.first_start_us
                        .map_or(start_us, |first| first.min(start_us)),
                );
                self.last_end_us = self.last_end_us.max(end_us);
                if fields.len() >= 7 {
                    let lag_us = count(fields[6], "schedule_lag", at)?;
                    self.schedule.get_or_insert_with(Schedule::new).ended(
                        latency_us,
                        lag_us,
                        end_us,
                        fields.len(),
                    );
                }
            }
        }
        Ok(())
    }

    /// The log's one level, an open loop where its 7th field is surely a schedule lag.
    fn series(self, file: &InputFile) -> Result<Series> {
        let processed = self.times.count();
        if processed == 0 {
            bail!(
                "'{}': pgbench's log holds no transaction that ended (all skipped or failed)",
                file.path.display()
            );
        }
        let span_s = (self
            .last_end_us
            .saturating_sub(self.first_start_us.unwrap_or(0))) as f64
            / 1e6;
        if span_s <= 0.0 {
            bail!(
                "'{}': pgbench's log spans no time: no rate can be taken from it",
                file.path.display()
            );
        }
        let (mean_ms, stddev_ms) = mean_and_stddev_ms(self.sum_us, self.sum_squares, processed);
        let figures = [
            ("transactions", processed as f64),
            ("failed_transactions", self.failed as f64),
            ("skipped_transactions", self.skipped as f64),
            ("latency_average_ms", mean_ms),
            ("latency_stddev_ms", stddev_ms),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect();
        let response = self.times.percentiles();
        let mut point = Point {
            workers: self.clients.len(),
            raw: processed as f64 / span_s,
            figures,
            latency: response.map(|response| Box::new(Latency::closed("transaction", response))),
            ..Point::default()
        };
        let open = self
            .schedule
            .as_ref()
            .zip(response)
            .and_then(|(schedule, response)| {
                let open = schedule.reading(
                    response,
                    (processed + self.failed, self.skipped),
                    self.last_end_us,
                )?;
                Some((open, schedule.certain))
            });
        let mut certain = false;
        match open {
            Some((open, true)) => {
                point.raw = open
                    .rate
                    .as_ref()
                    .map_or(point.raw, |rate| rate.achieved_per_s);
                point.latency = Some(Box::new(open));
                certain = true;
            }
            Some((open, false)) => point.open_reading = Some(Box::new(open)),
            None => {}
        }
        let mut series = log_series(file, point, "per-transaction log");
        if certain {
            series.notes.push(open_loop_note(file.path));
        }
        Ok(series)
    }
}

/// One level from a per-transaction log: its clients, its transactions per second from the
/// first start to the last end, and its latencies' percentiles. With a 7th field read as
/// `-R`'s schedule lag the level is an open loop: for certain when every line has an 8th
/// (retries), else when its run's summary says `-R` (`join`).
fn from_transaction_log(file: &InputFile, lines: &mut dyn BufRead) -> Result<Series> {
    let mut log = TransactionLog::default();
    each_line(file, lines, |fields, at| log.line(fields, at))?;
    log.series(file)
}

/// What a log read as an open loop says of the rate it was asked.
fn open_loop_note(path: &Path) -> String {
    format!(
        "'{}': pgbench ran at a rate limit (-R): an open-loop level, each transaction timed from when it was due; the rate asked is estimated from the log's schedule (pgbench's output does not state it)",
        path.display()
    )
}

/// One level from an aggregated log (its threads' files merged by interval): transactions
/// per second over its intervals, mean and stddev of the latency, one interval a line. The
/// clients are not in it: its summary or `--level` give them.
fn from_aggregated_log(file: &InputFile, lines: &mut dyn BufRead) -> Result<Series> {
    // By interval start: transactions, and the sums of latency and its square (us).
    let mut by_start: std::collections::BTreeMap<u64, (u64, f64, f64)> = Default::default();
    each_line(file, lines, |fields, at| {
        if !(6..=15).contains(&fields.len()) {
            bail!(
                "{}: {} fields, where pgbench's aggregated log has 6 to 15 (interval_start num_transactions sum_latency sum_latency_2 min_latency max_latency ...)",
                at(),
                fields.len()
            );
        }
        let start = count(fields[0], "interval_start", at)?;
        let transactions = count(fields[1], "num_transactions", at)?;
        let sum = number(fields[2], "sum_latency", at)?;
        let squares = number(fields[3], "sum_latency_2", at)?;
        if by_start.len() > 10_000_000 {
            bail!("{}: more than 10 million intervals", at());
        }
        let interval = by_start.entry(start).or_default();
        interval.0 = interval.0.saturating_add(transactions);
        interval.1 += sum;
        interval.2 += squares;
        Ok(())
    })?;
    let starts: Vec<u64> = by_start.keys().copied().collect();
    // One line says nothing of its interval's length (pgbench's --aggregate-interval): its
    // rate is taken only from the run's summary, which it may join.
    let single = starts.len() == 1;
    if single && file.level.is_some() {
        bail!(
            "'{}': pgbench's aggregated log has one interval, whose length it does not say: read the run's summary (its tps) beside it instead",
            file.path.display()
        );
    }
    // The interval's width: the step between lines (pgbench skips none), else a second.
    let width = starts
        .windows(2)
        .map(|pair| pair[1] - pair[0])
        .min()
        .unwrap_or(1)
        .max(1) as f64;
    let first = starts.first().copied().unwrap_or(0);
    let (mut processed, mut sum_us, mut sum_squares) = (0u64, 0.0, 0.0);
    let mut intervals = Vec::new();
    for (&start, &(transactions, sum, squares)) in &by_start {
        processed = processed.saturating_add(transactions);
        sum_us += sum;
        sum_squares += squares;
        intervals.push(IntervalFigures {
            start_s: (start - first) as f64,
            length_s: width,
            responses: transactions,
            rate_per_s: transactions as f64 / width,
            p50_ms: None,
            p99_ms: None,
            server_lio_per_s: None,
            server_pio_per_s: None,
            histogram: None,
        });
    }
    if processed == 0 {
        bail!(
            "'{}': pgbench's aggregated log counts no transaction",
            file.path.display()
        );
    }
    let span_s = (starts.last().copied().unwrap_or(first) - first) as f64 + width;
    let (mean_ms, stddev_ms) = mean_and_stddev_ms(sum_us, sum_squares, processed);
    let figures: std::collections::BTreeMap<String, f64> = [
        ("transactions", processed as f64),
        ("latency_average_ms", mean_ms),
        ("latency_stddev_ms", stddev_ms),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_string(), value))
    .collect();
    let at = || format!("'{}'", file.path.display());
    for (name, value) in &figures {
        in_range(*value, &RAW, name, &at)?;
    }
    if single {
        // Its interval's length unknown: no timeline; its level only joins a summary.
        intervals.clear();
    }
    let point = Point {
        // Not the number in its name: that is pgbench's process id.
        workers: file.level.unwrap_or(0),
        raw: in_range(
            processed as f64 / span_s,
            &RAW,
            "transactions per second",
            &at,
        )?,
        figures,
        intervals,
        ..Point::default()
    };
    let mut series = log_series(file, point, "aggregated log");
    series.notes.push(format!(
        "'{}': pgbench's aggregated log gives the latency's mean and standard deviation only: no percentile is shown for it",
        file.path.display()
    ));
    Ok(series)
}

/// The mean and standard deviation (ms) of `count` latencies from their sum and sum of
/// squares (us), as pgbench's aggregated log keeps them.
fn mean_and_stddev_ms(sum_us: f64, sum_squares: f64, count: u64) -> (f64, f64) {
    let mean_us = sum_us / count as f64;
    let variance = (sum_squares / count as f64 - mean_us * mean_us).max(0.0);
    (mean_us / 1e3, variance.sqrt() / 1e3)
}

/// Whether a log is of the run a summary printed: the same transactions processed, and the
/// same clients where the log knows them.
pub(super) fn belongs_to(log: &Point, summary: &Point) -> bool {
    let transactions = |point: &Point| point.figures.get("transactions").copied();
    transactions(log).is_some()
        && transactions(log) == transactions(summary)
        && (log.workers == 0 || log.workers == summary.workers)
}

/// A log no summary joined: a 7th field that may be `-R`'s lag or `--max-tries`' retries is
/// not read as a schedule, and the note says how to have it read.
pub(super) fn alone(mut log: Series) -> Series {
    let read_open = log
        .points
        .iter_mut()
        .any(|level| level.open_reading.take().is_some());
    if read_open {
        log.notes.push(format!(
            "'{}': its 7th field is -R's schedule lag or --max-tries' retries, and no summary beside it says which: read as a closed loop (keep the run's pgbench output beside its log to read a -R run as an open loop)",
            log.source
        ));
    }
    log
}

/// A log's one level: among the open loop's when the log was read as one.
pub(super) fn level_of(log: &Series) -> Option<&Point> {
    log.points.first().or(log.paced.first())
}

/// A log joins its run's summary: the summary's level gains the log's percentiles and, when
/// it has none of its own (`-P`), its intervals. A summary of a run at a rate limit (`-R`)
/// with a log of its schedule becomes an open-loop level (`Series::paced`), no longer left
/// out for want of percentiles.
pub(super) fn join(log: Series, summary: &mut Series) {
    let Some(mut from) = log.points.into_iter().chain(log.paced).next() else {
        return;
    };
    let open = from
        .open_reading
        .take()
        .or_else(|| from.latency.take_if(|latency| latency.rate.is_some()));
    let level = &mut summary.points[0];
    match open {
        Some(open) if level.scheduled.is_some() => {
            level.latency = Some(open);
            level.scheduled = None;
            let level = summary.points.remove(0);
            summary.paced.push(level);
            summary.notes.push(open_loop_note(Path::new(&log.source)));
        }
        open => {
            // Without -R the 7th field was --max-tries' retries: the times are the same.
            let closed = open.map(|open| Box::new(Latency::closed("transaction", open.response)));
            level.latency = from.latency.or(closed);
        }
    }
    if summary
        .points
        .iter()
        .chain(&summary.paced)
        .any(|level| level.latency.is_some())
    {
        // The percentiles are known now: the summary's caveat is void.
        summary
            .notes
            .retain(|note| !note.contains(super::pgbench::NO_PERCENTILES));
    }
    if let Some(level) = summary.points.first_mut().or(summary.paced.last_mut())
        && level.intervals.is_empty()
    {
        level.intervals = from.intervals;
    }
    if let Some(workload) = &mut summary.provenance.workload {
        workload.push_str(", with its log");
    }
}
