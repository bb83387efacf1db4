//! pgbench's standard output, as PostgreSQL 12 to 17 print it: one file is one load level
//! (its client count), its rate the tps without connection time ("without initial
//! connection time" since 14, "excluding connections establishing" before). From a summary
//! only the mean latency and its standard deviation are known; they are kept as the level's
//! own figures, and no percentile is made up from them (the run's `--log` gives them:
//! `pgbench_log`). Its `-P` progress lines are the level's intervals, its `-r` statement
//! latencies figures of the level.

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
    read: Reader::Text(from_pgbench),
};

/// Whether the text is pgbench's summary: its header line and the lines every run prints.
fn is_pgbench(text: &str) -> bool {
    text.lines()
        .any(|line| line.starts_with("transaction type: "))
        && text
            .lines()
            .any(|line| line.starts_with("number of clients: "))
}

/// One level from a pgbench summary, named after its file unless a folder names it.
fn from_pgbench(file: &InputFile, text: &str) -> Result<Series> {
    let path = file.path;
    let mut version = None;
    let mut intervals: Vec<IntervalFigures> = Vec::new();
    let mut statements = 0;
    let mut in_statements = false;
    let mut script = None;
    let mut scale = None;
    let mut query_mode = None;
    let mut clients = None;
    let mut tps_without = None;
    let mut tps_with = None;
    let mut figures = std::collections::BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        let at = || format!("'{}' line {}", path.display(), number + 1);
        let line = line.trim_end();
        if in_statements {
            match statement_latency(line, &at)? {
                Some((latency_ms, command)) => {
                    statements += 1;
                    figures.insert(
                        format!("statement {statements:02} ms: {}", quote(command)),
                        latency_ms,
                    );
                    continue;
                }
                None => in_statements = false,
            }
        }
        if line
            .trim_start_matches([' ', '-'])
            .starts_with("statement latencies in milliseconds")
        {
            in_statements = true;
        } else if let Some(rest) = line.strip_prefix("progress: ") {
            intervals.push(progress(rest, intervals.last(), &at)?);
        } else if let Some(rest) = line.strip_prefix("pgbench (") {
            // "pgbench (15.20 (Debian 15.20-0+deb12u1))", or "(17.2, server 15.20)".
            version = rest
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
            script = Some(printable(name));
        } else if let Some(rest) = line.strip_prefix("scaling factor: ") {
            scale = Some(number_in(rest, "scaling factor", &at)?);
        } else if let Some(rest) = line.strip_prefix("query mode: ") {
            query_mode = Some(printable(rest.trim()));
        } else if let Some(rest) = line.strip_prefix("number of clients: ") {
            clients = Some(worker_count(
                number_in(rest, "number of clients", &at)?,
                &at,
            )?);
        } else if let Some(rest) = line.strip_prefix("number of transactions actually processed: ")
        {
            // "5000" or "5000/10000" (with -t: processed of asked).
            let done = rest.split('/').next().unwrap_or(rest);
            figures.insert(
                "transactions".to_string(),
                in_range(
                    number_in(done, "transactions processed", &at)?,
                    &COUNT,
                    "transactions processed",
                    &at,
                )?,
            );
        } else if let Some(rest) = line.strip_prefix("number of failed transactions: ") {
            let failed = rest.split_whitespace().next().unwrap_or(rest);
            figures.insert(
                "failed_transactions".to_string(),
                in_range(
                    number_in(failed, "failed transactions", &at)?,
                    &COUNT,
                    "failed transactions",
                    &at,
                )?,
            );
        } else if let Some(rest) = line.strip_prefix("latency average = ") {
            figures.insert(
                "latency_average_ms".to_string(),
                milliseconds(rest, "latency average", &at)?,
            );
        } else if let Some(rest) = line.strip_prefix("latency stddev = ") {
            figures.insert(
                "latency_stddev_ms".to_string(),
                milliseconds(rest, "latency stddev", &at)?,
            );
        } else if let Some(rest) = line.strip_prefix("tps = ") {
            let (value, how) = rest.split_once(' ').unwrap_or((rest, ""));
            let value = in_range(number_in(value, "tps", &at)?, &RAW, "tps", &at)?;
            if how.contains("without initial connection time")
                || how.contains("excluding connections establishing")
            {
                tps_without = Some(value);
            } else {
                tps_with = Some(value);
            }
        }
    }
    let missing = |what: &str| {
        anyhow::anyhow!(
            "'{}': pgbench output without a '{what}' line (is the run's summary cut short?)",
            path.display()
        )
    };
    let clients = clients.ok_or_else(|| missing("number of clients:"))?;
    let tps = tps_without.or(tps_with).ok_or_else(|| missing("tps ="))?;
    let script = script.ok_or_else(|| missing("transaction type:"))?;
    let mut shape = format!("pgbench {script}");
    if let Some(scale) = scale {
        shape.push_str(&format!(", scale {scale}"));
    }
    if let Some(mode) = &query_mode {
        shape.push_str(&format!(", {mode} query mode"));
    }
    let point = Point {
        workers: clients,
        raw: tps,
        figures,
        intervals,
        ..Point::default()
    };
    let job = Job {
        tool: TOOL.to_string(),
        workload: Some(script.clone()),
        shape: Some(shape),
        ..Job::default()
    };
    let mut series = Series::new(
        file.stem(),
        Measure::Rate {
            unit: "tps".to_string(),
        },
        vec![point],
        job,
    );
    series.provenance = imported(TOOL, version, &script);
    series.notes.extend(file.level_ignored(clients));
    series.notes.push(format!(
        "'{}': {NO_PERCENTILES}, so no percentile is shown at {clients} client{} (pgbench --log beside it gives them)",
        path.display(),
        if clients == 1 { "" } else { "s" }
    ));
    Ok(series)
}

/// A `-P` line after "progress: " ("5.0 s, 1234.5 tps, lat 0.808 ms stddev 0.123, 0 failed"):
/// the interval since the line before it.
fn progress(
    text: &str,
    before: Option<&IntervalFigures>,
    at: &dyn Fn() -> String,
) -> Result<IntervalFigures> {
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
    interval_ending(end_s, tps, before, at)
}

/// A `-r` line: "   0.117   0  SELECT ..." (latency in ms, failures since 15, the command);
/// None where the list ends.
fn statement_latency<'a>(line: &'a str, at: &dyn Fn() -> String) -> Result<Option<(f64, &'a str)>> {
    let mut rest = line.trim_start();
    let Some((latency, after)) = rest.split_once(char::is_whitespace) else {
        return Ok(None);
    };
    let Ok(latency) = latency.parse::<f64>() else {
        return Ok(None);
    };
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

/// "2.000 ms" in milliseconds.
fn milliseconds(text: &str, what: &str, at: &dyn Fn() -> String) -> Result<f64> {
    if !text.trim_end().ends_with(" ms") {
        bail!("{}: {what} '{}' is not in ms", at(), quote(text));
    }
    in_range(number_in(text, what, at)?, &RAW, what, at)
}
