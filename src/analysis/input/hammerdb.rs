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
    runs: one_run,
    read: Reader::Text(from_hammerdb),
};

/// The tool of an xtprof profile not joined to its result.
pub(super) const XTPROF_TOOL: &str = "HammerDB xtprof";

pub(super) const XTPROF: Importer = Importer {
    tool: XTPROF_TOOL,
    detects: is_xtprof,
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
        if let Some(count) = line.strip_suffix(" Active Virtual Users configured") {
            users = Some(worker_count(
                number_in(count, "active virtual users", &at)?,
                &at,
            )?);
        } else if let Some(rest) = line.strip_prefix(RESULT) {
            // "44007 NOPM from 101181 PostgreSQL TPM"
            let words: Vec<&str> = rest.split_whitespace().collect();
            let (Some(nopm), Some(&"NOPM"), Some(&"from"), Some(tpm)) =
                (words.first(), words.get(1), words.get(2), words.get(3))
            else {
                bail!(
                    "{}: result '{}' is not 'N NOPM from M <database> TPM'",
                    at(),
                    quote(rest)
                );
            };
            let nopm = in_range(number_in(nopm, "NOPM", &at)?, &RAW, "NOPM", &at)?;
            let tpm = in_range(number_in(tpm, "TPM", &at)?, &COUNT, "TPM", &at)?;
            if words.len() >= 6 {
                database = Some(printable(&words[4..words.len() - 1].join(" ")));
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
                point.figures.insert(
                    figure,
                    in_range(number_in(value, key, &at)?, &COUNT, key, &at)?,
                );
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
