//! pgbench's standard output, as PostgreSQL 12 to 17 print it: one file is one load level
//! (its client count), its rate the tps without connection time ("without initial
//! connection time" since 14, "excluding connections establishing" before). From a summary
//! only the mean latency and its standard deviation are known; they are kept as the level's
//! own figures, and no percentile is made up from them.

use super::*;

/// The tool an imported series names, one level a file.
pub(super) const TOOL: &str = "pgbench";

/// Whether the text is pgbench's summary: its header line and the lines every run prints.
pub(super) fn is_pgbench(text: &str) -> bool {
    text.lines()
        .take(200)
        .any(|line| line.starts_with("transaction type: "))
        && text
            .lines()
            .any(|line| line.starts_with("number of clients: "))
}

/// One level from a pgbench summary; `stem` names the series unless a folder does.
pub(super) fn from_pgbench(path: &Path, text: &str, stem: &str) -> Result<Series> {
    let mut version = None;
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
        if let Some(rest) = line.strip_prefix("pgbench (") {
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
        ..Point::default()
    };
    Ok(Series {
        name: stem.to_string(),
        // `parse_series` sets it, as for every format.
        source: String::new(),
        measure: Measure::Rate {
            unit: "tps".to_string(),
        },
        points: vec![point],
        paced: Vec::new(),
        physical_cores: None,
        logical_cpus: None,
        complete: true,
        cost: None,
        left_out: Vec::new(),
        job: Job {
            tool: TOOL.to_string(),
            workload: Some(script.clone()),
            size: None,
            duration_s: None,
            shape: Some(shape),
        },
        provenance: Provenance {
            version: version.clone(),
            workload: Some(format!(
                "imported from pgbench {} output: {script}",
                version.as_deref().unwrap_or("(version not printed)")
            )),
            ..Provenance::default()
        },
        cut_last_line: None,
    })
}

/// The first number in `text` ("2", "1.234 ms"), or an error naming the field.
fn number_in(text: &str, what: &str, at: &dyn Fn() -> String) -> Result<f64> {
    let word = text.split_whitespace().next().unwrap_or("");
    word.parse::<f64>()
        .ok()
        .filter(|value| value.is_finite())
        .ok_or_else(|| anyhow::anyhow!("{}: {what} '{}' is not a number", at(), quote(word)))
}

/// "2.000 ms" in milliseconds.
fn milliseconds(text: &str, what: &str, at: &dyn Fn() -> String) -> Result<f64> {
    if !text.trim_end().ends_with(" ms") {
        bail!("{}: {what} '{}' is not in ms", at(), quote(text));
    }
    in_range(number_in(text, what, at)?, &RAW, what, at)
}
