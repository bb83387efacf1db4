//! HammerDB's log (hammerdb.log, or the CLI's output): each `TEST RESULT : System achieved
//! N NOPM from M <database> TPM` is a level at the active virtual users configured before it
//! (an autopilot sequence is a sweep in one file; repeats at one count are averaged). Its
//! rate is the NOPM, its TPM kept beside it. The xtprof time profile, when the log holds it,
//! gives each stored procedure's calls and percentiles as figures of the level.

use super::*;

pub(super) const TOOL: &str = "HammerDB";

pub(super) const LOG: Importer = Importer {
    tool: TOOL,
    detects: is_hammerdb,
    hints: &["Vuser ", "Active Virtual Users configured", RESULT],
    runs: logs,
    read: Reader::Text(from_hammerdb),
};

/// The tool of an xtprof profile not joined to its result.
pub(super) const XTPROF_TOOL: &str = "HammerDB xtprof";

pub(super) const XTPROF: Importer = Importer {
    tool: XTPROF_TOOL,
    detects: is_xtprof,
    hints: &["Hammerdb Time Profile Report", SUMMARY, ">>>>> PROC: "],
    runs: one_run,
    read: Reader::Text(from_xtprof),
};

const SUMMARY: &str = ">>>>> SUMMARY OF ";

fn is_xtprof(text: &str) -> bool {
    text.contains("Hammerdb Time Profile Report") || text.contains(SUMMARY)
}

const RESULT: &str = "TEST RESULT : System achieved ";

fn is_hammerdb(text: &str) -> bool {
    text.contains(RESULT)
}

/// Where each run's log begins in a file of several appended ("Hammerdb Log @ ...").
fn logs(text: &str) -> Vec<usize> {
    lines_where(text, |line| line.starts_with("Hammerdb Log @"))
}

/// A result after "System achieved ": "44007 NOPM from 101181 PostgreSQL TPM" (4.0 on) or
/// "101181 PostgreSQL TPM at 44007 NOPM" (3.x, and 4.x's `first_result` TPM): the NOPM,
/// the TPM and the database it names.
fn result(rest: &str, at: &dyn Fn() -> String) -> Result<(f64, f64, Option<String>)> {
    let words: Vec<&str> = rest.split_whitespace().collect();
    let (nopm, tpm, database) = match words.as_slice() {
        [nopm, "NOPM", "from", tpm, database @ .., "TPM"] => (nopm, tpm, database),
        [tpm, database @ .., "TPM", "at", nopm, "NOPM"] => (nopm, tpm, database),
        _ => bail!(
            "{}: result '{}' is neither 'N NOPM from M <database> TPM' nor 'M <database> TPM at N NOPM'",
            at(),
            quote(rest)
        ),
    };
    let nopm = in_range(number_in(nopm, "NOPM", at)?, &RAW, "NOPM", at)?;
    let tpm = count_in(tpm, "TPM", at)?;
    let database = (!database.is_empty()).then(|| printable(&database.join(" ")));
    Ok((nopm, tpm, database))
}

/// The etprof time profile (3.x and 4.0) each virtual user prints at its end, summed over
/// them: a procedure's calls, and its share of their exclusive time. (Its times are Tcl
/// clock clicks, whose unit depends on the platform: only their shares are kept.)
#[derive(Default)]
struct Etprof {
    procedures: std::collections::BTreeMap<String, (f64, f64)>,
}

impl Etprof {
    /// A row after its '|': "neword |1234567890|55.12%| 12345| 99999| 9999999|"; the header,
    /// percentiles (clicks too) and rules are passed over.
    fn add(&mut self, row: &str, at: &dyn Fn() -> String) -> Result<()> {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let [name, exclusive, _share, calls, _average, _cumulative, ..] = cells.as_slice() else {
            return Ok(());
        };
        if *name == "PROCNAME" || name.starts_with("PERCENTILES") || exclusive.starts_with("MIN-") {
            return Ok(());
        }
        let exclusive = count_in(exclusive, "EXCLUSIVETOT", at)?;
        let calls = count_in(calls, "CALLNUM", at)?;
        let entry = self
            .procedures
            .entry(printable(&name.to_ascii_uppercase()))
            .or_default();
        entry.0 += calls;
        entry.1 += exclusive;
        Ok(())
    }

    /// The profile read so far as figures of the level it was printed with.
    fn attach_to(&mut self, level: Option<&mut Point>) {
        let procedures = std::mem::take(&mut self.procedures);
        let Some(level) = level else { return };
        let total: f64 = procedures.values().map(|(_, exclusive)| exclusive).sum();
        for (name, (calls, exclusive)) in procedures {
            level.figures.insert(format!("{name} calls"), calls);
            if total > 0.0 {
                level
                    .figures
                    .insert(format!("{name} time share %"), 100.0 * exclusive / total);
            }
        }
    }
}

/// "Vuser 1:4 Active Virtual Users configured" -> the text after the "Vuser N:" prefix.
fn after_prefix(line: &str) -> &str {
    line.strip_prefix("Vuser ")
        .and_then(|rest| rest.split_once(':'))
        .map_or(line, |(_, rest)| rest)
        .trim()
}

fn from_hammerdb(file: &InputFile, text: &str) -> Result<Series> {
    let path = file.path;
    let mut version = None;
    let mut database: Option<String> = None;
    let mut users: Option<usize> = None;
    let mut points: Vec<Point> = Vec::new();
    let mut profile = Etprof::default();
    for (number, line) in text.lines().enumerate() {
        let at = || file.line(number);
        let line = after_prefix(line.trim());
        if version.is_none()
            && let Some(position) = line.find("HammerDB")
        {
            version = line[position..]
                .split_whitespace()
                .find_map(|word| {
                    word.strip_prefix('v')
                        .filter(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
                })
                .map(printable);
        }
        if line.starts_with("Beginning rampup") {
            profile.attach_to(points.last_mut());
        } else if let Some(row) = line.strip_prefix('|') {
            profile.add(row, &at)?;
        } else if let Some(count) = line.strip_suffix(" Active Virtual Users configured") {
            users = Some(worker_count(
                number_in(count, "active virtual users", &at)?,
                &at,
            )?);
        } else if let Some(rest) = line.strip_prefix(RESULT) {
            let (nopm, tpm, named) = result(rest, &at)?;
            if let Some(named) = named {
                database = Some(named);
            }
            let Some(users) = users.or(file.level) else {
                bail!(
                    "{}: a result with no 'N Active Virtual Users configured' line before it: give the virtual users with --level '{}'=N",
                    at(),
                    path.display()
                );
            };
            points.push(Point {
                workers: users,
                raw: nopm,
                figures: [("tpm".to_string(), tpm)].into(),
                ..Point::default()
            });
        }
    }
    profile.attach_to(points.last_mut());
    let database = database.unwrap_or_else(|| "a database it does not name".to_string());
    let workload = format!("TPROC-C on {database}");
    let job = Job {
        tool: TOOL.to_string(),
        workload: Some(workload.clone()),
        shape: Some(format!("HammerDB {workload}, new orders per minute")),
        ..Job::default()
    };
    let mut series = Series::new(
        file.stem(),
        Measure::Rate {
            unit: "NOPM".to_string(),
        },
        folder::repeats_averaged(points),
        job,
    );
    series.provenance = imported(TOOL, version, &workload);
    Ok(series)
}

/// Each `>>>>> SUMMARY OF N ACTIVE VIRTUAL USERS : MEDIAN ELAPSED TIME : Tms` block is a
/// level at N: its procedures' calls, mean, p50/p95/p99 and max (ms) as figures, its rate
/// the calls per second over the median elapsed time. Per-user blocks are left out.
fn from_xtprof(file: &InputFile, text: &str) -> Result<Series> {
    let path = file.path;
    let mut points: Vec<Point> = Vec::new();
    let mut procedure: Option<String> = None;
    let mut in_summary = false;
    let mut elapsed_s = 0.0;
    let finish = |points: &mut Vec<Point>, elapsed_s: f64| {
        if let Some(point) = points.last_mut() {
            let calls: f64 = point
                .figures
                .iter()
                .filter(|(name, _)| name.ends_with(" calls"))
                .map(|(_, calls)| calls)
                .sum();
            point.raw = calls / elapsed_s;
        }
    };
    for (number, line) in text.lines().enumerate() {
        let at = || file.line(number);
        let line = line.trim();
        if let Some(rest) = line.strip_prefix(SUMMARY) {
            // "4 ACTIVE VIRTUAL USERS : MEDIAN ELAPSED TIME : 419051ms"
            let users = worker_count(number_in(rest, "active virtual users", &at)?, &at)?;
            let elapsed = rest.rsplit(": ").next().unwrap_or("");
            let Some(ms) = elapsed.strip_suffix("ms") else {
                bail!(
                    "{}: median elapsed time '{}' is not in ms",
                    at(),
                    quote(elapsed)
                );
            };
            finish(&mut points, elapsed_s);
            elapsed_s = in_range(
                number_in(ms, "median elapsed time", &at)?,
                &RAW,
                "median elapsed time",
                &at,
            )? / 1e3;
            points.push(Point {
                workers: users,
                ..Point::default()
            });
            in_summary = true;
            procedure = None;
        } else if line.starts_with(">>>>> VIRTUAL USER") {
            in_summary = false;
        } else if let Some(name) = line.strip_prefix(">>>>> PROC: ") {
            procedure = Some(printable(name.trim()));
        } else if let (true, Some(name), Some(point)) = (in_summary, &procedure, points.last_mut())
        {
            // "CALLS: 670116  MIN: 0.164ms  AVG: 0.296ms  MAX: 67.262ms  TOTAL: ..." and
            // "P99: 0.541ms  P95: 0.390ms  (P75:)  P50: 0.286ms  (P25:)  SD: ...  RATIO: 47.299%".
            let words: Vec<&str> = line.split_whitespace().collect();
            for pair in words.chunks(2) {
                let [key, value] = pair else { break };
                let Some(key) = key.strip_suffix(':') else {
                    break;
                };
                let (figure, value) = match key {
                    "CALLS" => (format!("{name} calls"), *value),
                    "AVG" | "P50" | "P95" | "P99" | "MAX" => {
                        let Some(ms) = value.strip_suffix("ms") else {
                            bail!("{}: {name} {key} '{}' is not in ms", at(), quote(value));
                        };
                        (format!("{name} {} ms", key.to_ascii_lowercase()), ms)
                    }
                    _ => continue,
                };
                point.figures.insert(figure, count_in(value, key, &at)?);
            }
        }
    }
    finish(&mut points, elapsed_s);
    if let Some(point) = points
        .iter()
        .find(|point| !(point.raw > 0.0 && point.raw.is_finite()))
    {
        bail!(
            "'{}': the xtprof summary of {} virtual users counts no procedure calls (is the profile cut short?)",
            path.display(),
            point.workers
        );
    }
    let job = Job {
        tool: XTPROF_TOOL.to_string(),
        workload: Some("TPROC-C time profile".to_string()),
        shape: Some("HammerDB xtprof, stored procedure calls per second".to_string()),
        ..Job::default()
    };
    let mut series = Series::new(
        file.stem(),
        Measure::Rate {
            unit: "calls/s".to_string(),
        },
        folder::repeats_averaged(points),
        job,
    );
    series.provenance = imported(TOOL, None, "xtprof time profile");
    Ok(series)
}

/// An xtprof profile's levels join the results at their virtual users (same folder): the
/// results gain the procedures' figures. What joins nothing is returned.
pub(super) fn join(mut profile: Series, results: &mut Series) -> Option<Series> {
    profile.points.retain(|level| {
        match results
            .points
            .iter_mut()
            .find(|result| result.workers == level.workers)
        {
            Some(result) => {
                result.figures.extend(level.figures.clone());
                false
            }
            None => true,
        }
    });
    (!profile.points.is_empty()).then_some(profile)
}

/// The tool of a transaction counter log.
pub(super) const COUNTER_TOOL: &str = "HammerDB transaction counter";

/// hdbtcount.log (4.1 on): the database's own transaction rate, sampled while a test ran.
pub(super) const COUNTER: Importer = Importer {
    tool: COUNTER_TOOL,
    detects: is_counter,
    hints: &[COUNTER_HEADER, " tpm"],
    runs: counter_logs,
    read: Reader::Text(from_counter),
};

const COUNTER_HEADER: &str = "Hammerdb Transaction Counter Log @";

fn is_counter(text: &str) -> bool {
    text.lines().any(|line| line.starts_with(COUNTER_HEADER))
}

/// Each test appends its own log, header first.
fn counter_logs(text: &str) -> Vec<usize> {
    lines_where(text, |line| line.starts_with(COUNTER_HEADER))
}

/// A counter log is a level at the virtual users `--level` or the file's name gives: its
/// samples ("123456 PostgreSQL tpm @ Fri Nov 27 15:37:02 GMT 2020") are its intervals when
/// they carry their time, and its rate their mean once the counter first moved (the rampup's
/// zeros left out; the rampup's rising samples are in it, as the log does not mark its end).
fn from_counter(file: &InputFile, text: &str) -> Result<Series> {
    let mut samples: Vec<(f64, Option<chrono::NaiveDateTime>)> = Vec::new();
    let mut database = None;
    let mut metric = "tpm".to_string();
    for (number, line) in text.lines().enumerate() {
        let at = || file.line(number);
        let line = line.trim();
        if line.is_empty() || line.starts_with(COUNTER_HEADER) || line.starts_with("+-") {
            continue;
        }
        let (count, when) = line.split_once(" @ ").unwrap_or((line, ""));
        let words: Vec<&str> = count.split_whitespace().collect();
        let [value, name @ .., unit] = words.as_slice() else {
            bail!("{}: '{}' is not 'N <database> tpm'", at(), quote(line));
        };
        let value = count_in(value, "counter", &at)?;
        database = Some(printable(&name.join(" ")));
        metric = printable(unit);
        samples.push((value, sample_time(when)));
    }
    let moving: Vec<(f64, Option<chrono::NaiveDateTime>)> = samples
        .iter()
        .skip_while(|(value, _)| *value == 0.0)
        .copied()
        .collect();
    if moving.is_empty() {
        bail!(
            "'{}': the transaction counter log holds no sample above 0 (was the test running?)",
            file.path.display()
        );
    }
    let mean = moving.iter().map(|(value, _)| value).sum::<f64>() / moving.len() as f64;
    let mut intervals: Vec<crate::latency::IntervalFigures> = Vec::new();
    if let Some(start) = samples.first().and_then(|(_, when)| *when) {
        for (value, when) in &samples {
            let Some(when) = when else { break };
            let end_s = (*when - start).as_seconds_f64();
            if end_s
                <= intervals
                    .last()
                    .map_or(0.0, |last| last.start_s + last.length_s)
            {
                continue;
            }
            intervals.push(interval_ending(
                end_s,
                value / 60.0,
                intervals.last(),
                &|| file.line(0),
            )?);
        }
    }
    let database = database.unwrap_or_default();
    let workload = format!("TPROC-C on {database}, transaction counter");
    let job = Job {
        tool: COUNTER_TOOL.to_string(),
        workload: Some(workload.clone()),
        shape: Some(format!(
            "HammerDB transaction counter, {database}'s own {metric}"
        )),
        ..Job::default()
    };
    let point = Point {
        workers: file.given_level(),
        raw: in_range(mean, &RAW, "counter", &|| file.line(0))?,
        intervals,
        figures: [("samples".to_string(), moving.len() as f64)].into(),
        ..Point::default()
    };
    let mut series = Series::new(
        file.stem(),
        Measure::Rate { unit: metric },
        vec![point],
        job,
    );
    series.provenance = imported(TOOL, None, &workload);
    series.notes.push(format!(
        "'{}': the transaction counter's mean of {} samples from its first above 0 (rampup included; the test's NOPM is in hammerdb.log)",
        file.path.display(),
        moving.len()
    ));
    Ok(series)
}

/// "Fri Nov 27 15:37:02 GMT 2020": Tcl's `clock format`, its zone word left out (only the
/// time between samples is used).
fn sample_time(text: &str) -> Option<chrono::NaiveDateTime> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let [day, month, date, time, _zone, year] = words.as_slice() else {
        return None;
    };
    chrono::NaiveDateTime::parse_from_str(
        &format!("{day} {month} {date} {time} {year}"),
        "%a %b %d %H:%M:%S %Y",
    )
    .ok()
}
