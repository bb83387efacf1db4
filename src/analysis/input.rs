//! Readers for every series format `report` accepts, detected from the content:
//! corescale JSON, corescale CSV, test_cpu_parallel CSV (both headers it has written) and
//! SLOB-style rate CSV (`Num_concurrent_workers,<rate>`).

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::analysis::series::{CacheFigures, Job, Measure, Point, Provenance, Series};
use crate::latency::{Latency, Percentiles, RateFigures};
use crate::redact::redact_argument;
use crate::result::csv_format::{FIGURE_PREFIX, Row};
use crate::result::ranges::{self, COUNT, CPU_FRACTION, CV, PERCENT, RAW};
use crate::result::summary::delivered_jobs_per_min;
use crate::result::{CacheFigure, Level, RunDocument, RunMode, SCHEMA};

/// Text longer than this is cut when quoted in a message.
const QUOTE_CHARS: usize = 80;

/// Text from a file as it may be shown: control characters escaped (no terminal escape
/// sequence gets through), everything else kept.
pub fn printable(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

/// Input quoted in a message: printable, and at most [`QUOTE_CHARS`] characters.
pub fn quote(text: &str) -> String {
    let shown = printable(text);
    match shown.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => format!("{}...", &shown[..cut]),
        None => shown,
    }
}

/// Checks an imported number against its range; `at` says where it was.
fn in_range(
    value: f64,
    range: &std::ops::RangeInclusive<f64>,
    what: &str,
    at: &dyn Fn() -> String,
) -> Result<f64> {
    ranges::check(value, range, what).map_err(|problem| anyhow::anyhow!("{}: {problem}", at()))
}

fn worker_count(value: f64, at: &dyn Fn() -> String) -> Result<usize> {
    ranges::workers(value).map_err(|problem| anyhow::anyhow!("{}: {problem}", at()))
}

/// Reads one file into a series named after its host label, else its file stem.
pub fn read_series(path: &Path) -> Result<Series> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)
            .context("cannot read standard input")?;
        return parse_series(Path::new("stdin"), &bytes);
    }
    let bytes = std::fs::read(path).with_context(|| format!("cannot read '{}'", path.display()))?;
    parse_series(path, &bytes)
}

/// The result files a report reads: each file as given (`-` for standard input), and every
/// `*.json` and `*.csv` under each directory, recursively and in path order; a CSV beside a
/// JSON of the same name is the same run and is left out. Hidden files (lock files) are
/// skipped.
pub fn result_files(inputs: &[std::path::PathBuf]) -> Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    for input in inputs {
        if !input.is_dir() {
            files.push(input.clone());
            continue;
        }
        let mut found: Vec<std::path::PathBuf> = Vec::new();
        // Links are followed (walkdir stops at loops); hidden folders and files are not read.
        let walk = walkdir::WalkDir::new(input)
            .follow_links(true)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|entry| {
                entry.depth() == 0 || !entry.file_name().to_string_lossy().starts_with('.')
            });
        for entry in walk {
            let entry = entry.with_context(|| format!("cannot read '{}'", input.display()))?;
            let extension = entry
                .path()
                .extension()
                .map(|extension| extension.to_string_lossy().to_ascii_lowercase());
            if entry.file_type().is_file()
                && matches!(extension.as_deref(), Some("json" | "csv"))
                && !is_report_analysis(entry.path())
            {
                found.push(entry.into_path());
            }
        }
        let all: std::collections::BTreeSet<&std::path::PathBuf> = found.iter().collect();
        let has_json = |csv: &std::path::Path| {
            all.contains(&csv.with_extension("json")) || all.contains(&csv.with_extension("JSON"))
        };
        let kept: Vec<std::path::PathBuf> = found
            .iter()
            .filter(|path| {
                let csv = path
                    .extension()
                    .is_some_and(|extension| extension.eq_ignore_ascii_case("csv"));
                !(csv && has_json(path))
            })
            .cloned()
            .collect();
        if kept.is_empty() {
            return Err(crate::error::UsageError::new(format!(
                "no .json or .csv results under '{}'",
                input.display()
            ))
            .into());
        }
        files.extend(kept);
    }
    Ok(files)
}

/// A result document inside log output: the first line that is just `{` begins it, and the
/// lines before and after it are blank or corescale's own notes (each starting "corescale:").
/// None for anything else (compact JSON, CSV, other text).
fn logged_document(text: &str) -> Option<&str> {
    let start = if text.starts_with("{\n") {
        0
    } else {
        text.find("\n{\n")? + 1
    };
    let mut values =
        serde_json::Deserializer::from_str(&text[start..]).into_iter::<serde::de::IgnoredAny>();
    values.next()?.ok()?;
    let end = start + values.byte_offset();
    let notes = |part: &str| {
        part.lines()
            .all(|line| line.trim().is_empty() || line.starts_with("corescale:"))
    };
    (notes(&text[..start]) && notes(&text[end..])).then(|| &text[start..end])
}

/// An analysis `report --json` wrote (often saved beside the results): not a run, so a
/// folder's report leaves it out and says so.
fn is_report_analysis(path: &Path) -> bool {
    let mut head = [0u8; 4096];
    let read = std::fs::File::open(path)
        .and_then(|mut file| std::io::Read::read(&mut file, &mut head))
        .unwrap_or(0);
    let found = String::from_utf8_lossy(&head[..read]).contains("\"schema\": \"corescale-report/");
    if found {
        say!(
            "corescale: note: left out '{}': a report's analysis, not a run",
            path.display()
        );
    }
    found
}

/// The series in a file's bytes; `path` names it in messages and gives the default name.
pub fn parse_series(path: &Path, bytes: &[u8]) -> Result<Series> {
    let text = std::str::from_utf8(bytes).map_err(|error| {
        anyhow::anyhow!(
            "'{}': not a text file (invalid UTF-8 at byte {})",
            path.display(),
            error.valid_up_to()
        )
    })?;
    // Editors on Windows put a byte-order mark before JSON and CSV alike.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        bail!(
            "'{}' is empty: no header and no levels (a run stopped before its first level writes none)",
            path.display()
        );
    }
    let stem = path.file_stem().map_or_else(
        || "series".to_string(),
        |stem| stem.to_string_lossy().into_owned(),
    );
    let mut series = if let Some(document) = logged_document(text) {
        // Also `kubectl logs` of a `run -o -` pod: corescale's own notes around the document.
        from_document(path, document)?
    } else if text.trim_start().starts_with('{') {
        from_document(path, text)?
    } else {
        from_csv(path, text, &stem)?
    };
    series.source = path.display().to_string();
    series.name = printable(&series.name);
    if let Measure::Rate { unit } = &mut series.measure {
        *unit = printable(unit);
    }
    if series.points.is_empty() {
        bail!("'{}' holds no load levels", path.display());
    }
    // Open-loop levels (`--rate`) are latency-throughput points, not capacity: several may
    // share a worker count.
    let (paced, closed): (Vec<Point>, Vec<Point>) = std::mem::take(&mut series.points)
        .into_iter()
        .partition(|point| {
            point
                .latency
                .as_ref()
                .is_some_and(|latency| latency.rate.is_some())
        });
    series.points = closed;
    series.paced = paced;
    series.points.sort_by_key(|point| point.workers);
    if let Some(pair) = series
        .points
        .windows(2)
        .find(|pair| pair[0].workers == pair[1].workers)
    {
        bail!(
            "'{}' has two rows for {} workers: keep one",
            path.display(),
            pair[0].workers
        );
    }
    Ok(series)
}

fn from_document(path: &Path, text: &str) -> Result<Series> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|error| {
        anyhow::anyhow!(
            "'{}' line {} column {}: not JSON ({error})",
            path.display(),
            error.line(),
            error.column()
        )
    })?;
    match value.get("schema").and_then(serde_json::Value::as_str) {
        Some(SCHEMA) => {}
        Some(schema) if schema.starts_with("corescale-report/") => bail!(
            "'{}' is an analysis written by `corescale report --json`, not a run: report the run's own JSON or CSV",
            path.display()
        ),
        Some(schema) => bail!(
            "'{}': schema '{}' is not supported (this corescale reads '{SCHEMA}')",
            path.display(),
            quote(schema)
        ),
        None => bail!(
            "'{}': not a corescale result document (no \"schema\" field)",
            path.display()
        ),
    }
    let document: RunDocument = serde_json::from_value(value).map_err(|error| {
        anyhow::anyhow!(
            "'{}': not a corescale result document ({})",
            path.display(),
            quote(&error.to_string())
        )
    })?;
    let measure = match document.settings.mode {
        RunMode::FixedWork => Measure::JobTime,
        RunMode::FixedTime => Measure::Rate {
            unit: format!("{}/s", document.workload.unit),
        },
    };
    let mut points = Vec::new();
    for (index, level) in document.levels.iter().enumerate() {
        let at = |field: &str| format!("'{}' levels[{index}].{field}", path.display());
        // Derived again from the fields it comes from, by the one definition the run used
        // to store `summary.merit`: a document edited (or older than that field) cannot
        // make the two disagree, and each value is checked at its own place.
        let merit = level.derive_merit(document.settings.mode, &document.workload.unit);
        let workers = worker_count(level.workers as f64, &|| at("workers"))?;
        let (raw, raw_field) = (merit.value, merit.source.as_str());
        let (cpu_fraction, cpu_field) = (merit.cpu_fraction, merit.cpu_fraction_source.as_str());
        // What the host delivered, from the samples as the run computed it (documents
        // without job starts: test_cpu_parallel's n / median, from the median).
        let delivered = match document.settings.mode {
            RunMode::FixedWork => delivered_jobs_per_min(&level.samples)
                .map(|capacity| {
                    in_range(capacity, &RAW, "the capacity", &|| {
                        at("samples (started_s and wall_s)")
                    })
                })
                .transpose()?,
            RunMode::FixedTime => None,
        };
        points.push(Point {
            workers,
            raw: in_range(raw, &RAW, "the measurement", &|| at(raw_field))?,
            delivered,
            cache: cache_figures(&level.workload_figures, &|field: &str| {
                at(&format!("workload_figures.{field}"))
            })?,
            figures: checked_figures(&level.workload_figures, &|field: &str| {
                at(&format!("workload_figures.{field}"))
            })?,
            cv: Some(in_range(level.summary.cv, &CV, "the CV", &|| {
                at("summary.cv")
            })?),
            cpu_fraction: Some(in_range(
                cpu_fraction,
                &CPU_FRACTION,
                "the on-CPU fraction",
                &|| at(cpu_field),
            )?),
            steal_pct: Some(in_range(level.os.steal_pct, &PERCENT, "steal %", &|| {
                at("os.steal_pct")
            })?),
            disturbed: level
                .disturbances()
                .iter()
                .map(|reason| printable(reason))
                .collect(),
            precision_reached: level.precision_reached,
            intervals: checked_intervals(&level.intervals, &|| at("intervals"))?,
            latency: match &level.latency {
                Some(latency) => {
                    checked_latency(latency)
                        .map_err(|problem| anyhow::anyhow!("{}: {problem}", at("latency")))?;
                    Some(crate::latency::Latency {
                        unit: printable(&latency.unit),
                        ..latency.clone()
                    })
                }
                None => None,
            },
            spread: match merit.low.zip(merit.high) {
                // Checked as the median is: a spread of 1e300 would otherwise be drawn (and
                // an axis to f64::MAX never ends), and an inverted one is not a spread.
                Some((low, high)) => {
                    let (low_field, high_field) = if raw_field == "summary.job_time_s.median" {
                        ("summary.job_time_s.min", "summary.job_time_s.max")
                    } else {
                        (
                            "samples (the lowest batch rate)",
                            "samples (the highest batch rate)",
                        )
                    };
                    let low = in_range(low, &RAW, "the spread's low end", &|| at(low_field))?;
                    let high = in_range(high, &RAW, "the spread's high end", &|| at(high_field))?;
                    if low > raw || raw > high {
                        bail!(
                            "{}: the spread {} to {} does not hold the median {} ({})",
                            at(low_field),
                            ranges::short(low),
                            ranges::short(high),
                            ranges::short(raw),
                            high_field
                        );
                    }
                    Some((low, high))
                }
                None => None,
            },
        });
        in_range(
            level.summary.job_time_s.stdev,
            &(0.0..=*RAW.end()),
            "the stdev",
            &|| at("summary.job_time_s.stdev"),
        )?;
    }
    let topology = &document.host.topology;
    let workload = &document.workload;
    let job = Job {
        tool: document.tool.name.clone(),
        workload: Some(workload.kind.name().to_string()),
        size: (document.settings.mode == RunMode::FixedWork)
            .then(|| (workload.job_size, workload.job_size_unit.clone())),
        duration_s: document.settings.duration_s,
        shape: workload.shape.as_ref().map(|shape| shape.key()),
    };
    Ok(Series {
        name: document.host.label.clone(),
        source: String::new(),
        measure,
        points,
        physical_cores: Some(topology.physical_cores),
        logical_cpus: Some(topology.logical_cpus),
        complete: document.complete,
        cost: None,
        left_out: Vec::new(),
        paced: Vec::new(),
        cut_last_line: None,
        provenance: provenance(&document, &job),
        job,
    })
}

/// A level's workload figures as the file gives them: each finite, names shown escaped.
fn checked_figures(
    figures: &std::collections::BTreeMap<String, f64>,
    at: &dyn Fn(&str) -> String,
) -> Result<std::collections::BTreeMap<String, f64>> {
    figures
        .iter()
        .map(|(name, &value)| {
            let value = in_range(value, &(-*RAW.end()..=*RAW.end()), "the figure", &|| {
                at(&printable(name))
            })?;
            Ok((printable(name), value))
        })
        .collect()
}

/// A level's timeline as the file gives it, each figure checked: finite, not negative, in
/// order of time, percentiles in order.
fn checked_intervals(
    intervals: &[crate::latency::IntervalFigures],
    at: &dyn Fn() -> String,
) -> Result<Vec<crate::latency::IntervalFigures>> {
    const A_DAY: f64 = 86_400.0;
    let mut last_start = f64::NEG_INFINITY;
    for (index, interval) in intervals.iter().enumerate() {
        let times_ok = (0.0..=7.0 * A_DAY).contains(&interval.start_s)
            && (0.0..=7.0 * A_DAY).contains(&interval.length_s)
            && interval.start_s >= last_start;
        let rate_ok = (0.0..=*RAW.end()).contains(&interval.rate_per_s)
            && [interval.server_lio_per_s, interval.server_pio_per_s]
                .iter()
                .flatten()
                .all(|rate| (0.0..=*RAW.end()).contains(rate));
        let percentiles_ok = [interval.p50_ms, interval.p99_ms]
            .iter()
            .flatten()
            .all(|value| (0.0..=A_DAY * 1e3).contains(value))
            && interval
                .p50_ms
                .zip(interval.p99_ms)
                .is_none_or(|(p50, p99)| p50 <= p99);
        if !(times_ok && rate_ok && percentiles_ok) {
            bail!(
                "{}[{index}]: not an interval of the level's window (start_s and length_s from 0 to a week and in order, rate_per_s and the server's rates 0 or more, p50_ms <= p99_ms from 0 to a day)",
                at()
            );
        }
        last_start = interval.start_s;
    }
    Ok(intervals.to_vec())
}

/// The buffer cache's figures among a level's workload figures (`CacheFigure`), each
/// range-checked where it is read (`at` names a figure's place); None when it has none.
fn cache_figures(
    figures: &std::collections::BTreeMap<String, f64>,
    at: &dyn Fn(&str) -> String,
) -> Result<Option<CacheFigures>> {
    let get = |figure: CacheFigure,
               range: &std::ops::RangeInclusive<f64>,
               what: &str|
     -> Result<Option<f64>> {
        figure
            .find(figures)
            .map(|(value, name)| in_range(value, range, what, &|| at(name)))
            .transpose()
    };
    let counts = COUNT;
    // Both counts checked before their ratio is taken.
    let gets = get(CacheFigure::LatchGets, &counts, "latch gets")?;
    let misses = get(CacheFigure::LatchMisses, &counts, "latch misses")?;
    let cache = CacheFigures {
        hit_ratio: get(CacheFigure::HitRatio, &(0.0..=1.0), "the hit ratio")?,
        latch_misses_per_1k_gets: crate::result::misses_per_1k_gets(gets, misses),
        pio_per_s: get(CacheFigure::PioPerS, &counts, "PIO/s")?,
        read_p99_us: get(CacheFigure::ReadP99Us, &counts, "the read p99")?,
    };
    Ok((cache != CacheFigures::default()).then_some(cache))
}

/// What the run document says about where and how it ran; every text shown escaped of
/// control characters, and the command line's passwords hidden again (the file may come
/// from anywhere).
fn provenance(document: &RunDocument, job: &Job) -> Provenance {
    let topology = &document.host.topology;
    let judged: Vec<&Level> = document
        .levels
        .iter()
        .filter(|level| level.interference.is_some() || level.summary.together.is_some())
        .collect();
    let disturbed = judged.iter().filter(|level| level.is_disturbed()).count();
    Provenance {
        label: Some(printable(&document.host.label)),
        tags: document
            .tags
            .iter()
            .map(|(key, value)| (printable(key), printable(value)))
            .collect(),
        hostname: Some(printable(&document.host.hostname)),
        cpu_model: topology.model_name.as_deref().map(printable),
        sockets: Some(topology.sockets),
        memory_bytes: document
            .host
            .memory
            .as_ref()
            .map(|memory| memory.total_bytes),
        kernel: document.host.kernel.as_deref().map(printable),
        hypervisor: Some(
            topology
                .hypervisor
                .as_deref()
                .map_or_else(|| "bare metal".to_string(), printable),
        ),
        started_at: Some(
            document
                .started_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        ),
        version: Some(format!(
            "{} {}",
            printable(&document.tool.name),
            printable(&document.tool.version)
        )),
        cpu_limit: document
            .host
            .cpu_limit
            .as_ref()
            .filter(|limit| limit.limits(topology.logical_cpus))
            .map(|limit| printable(&limit.describe())),
        workload: Some(job.describe()),
        connection: document
            .levels
            .iter()
            .rev()
            .find_map(Level::connection_summary)
            .map(|text| printable(&text)),
        pinning: Some(format!("{:?}", document.settings.pin).to_lowercase()),
        verdict: Some(match (judged.len(), disturbed) {
            (0, _) => "not judged".to_string(),
            (_, 0) => "clean".to_string(),
            (count, disturbed) => format!("disturbed at {disturbed} of {count} levels"),
        }),
        command_line: Some(
            document
                .command_line
                .iter()
                .map(|argument| printable(&redact_argument(argument)))
                .collect::<Vec<_>>()
                .join(" "),
        ),
    }
}

/// The CSV layouts, told apart by their header.
enum CsvLayout {
    /// test_cpu_parallel (Python, older Rust) and corescale: median, mean, stdev in seconds.
    JobTimes,
    /// test_cpu_parallel Rust 1.2: `Num_Threads,Median_Runtime,Mean_Runtime,StdDev_Runtime`
    /// (or `NumThreads,ThreadMedian,ThreadMean,ThreadStd,...`).
    JobTimesV12,
    /// `Num_concurrent_workers,<rate>`: the second column's name is the unit.
    Rate(String),
}

fn detect(header: &[String]) -> Option<CsvLayout> {
    let names: Vec<&str> = header.iter().map(|name| name.trim()).collect();
    match names.as_slice() {
        [
            "Num_concurrent_jobs",
            "job_median_run_time (sec)",
            "job_mean_run_time (sec)",
            "job_stdev_run_time (sec)",
            ..,
        ] => Some(CsvLayout::JobTimes),
        [
            "Num_Threads",
            "Median_Runtime",
            "Mean_Runtime",
            "StdDev_Runtime",
            ..,
        ]
        | ["NumThreads", "ThreadMedian", "ThreadMean", "ThreadStd", ..] => {
            Some(CsvLayout::JobTimesV12)
        }
        [workers, rate] if workers.starts_with("Num_concurrent_") && !rate.is_empty() => {
            Some(CsvLayout::Rate(rate.to_string()))
        }
        _ => None,
    }
}

fn from_csv(path: &Path, text: &str, stem: &str) -> Result<Series> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header = reader
        .headers()
        .with_context(|| format!("'{}' line 1: unreadable CSV header", path.display()))?
        .clone();
    let names: Vec<String> = header.iter().map(str::to_string).collect();
    let Some(layout) = detect(&names) else {
        bail!(
            "'{}' line 1: unknown header '{}': expected corescale or test_cpu_parallel job times, or Num_concurrent_workers,<rate>",
            path.display(),
            quote(&names.join(","))
        );
    };
    let records = reader
        .records()
        .enumerate()
        .map(|(index, record)| {
            record.map_err(|error| {
                anyhow::anyhow!(
                    "'{}' line {}: malformed CSV ({})",
                    path.display(),
                    index + 2,
                    printable(&error.to_string())
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    // An empty line between rows (or at the end) is no level.
    let blank = |record: &csv::StringRecord| record.iter().all(str::is_empty);
    let (measure, job, points) = match layout {
        CsvLayout::Rate(unit) => rate_points(path, &records, unit)?,
        CsvLayout::JobTimes | CsvLayout::JobTimesV12 => {
            let rows = records
                .iter()
                .enumerate()
                .filter(|(_, record)| !blank(record))
                .map(|(index, record)| {
                    let line = index + 2;
                    let row: Row = record
                        .deserialize(Some(&header))
                        .map_err(|error| cell_error(path, line, &header, record, &error))?;
                    Ok((line, row, figure_cells(path, line, &header, record)?))
                })
                .collect::<Result<Vec<_>>>()?;
            job_time_points(path, rows)?
        }
    };
    // A file whose writer was stopped mid-line: "18,1" where the line was "18,11.7".
    let mut points = points;
    let cut_last_line = (!text.ends_with('\n') && points.len() > 1)
        .then(|| {
            let last = records.iter().rposition(|record| !blank(record))?;
            let field = records[last].len().checked_sub(1)?;
            let length = |record: &csv::StringRecord| record.get(field).map_or(0, str::len);
            let shortest_other = records[..last]
                .iter()
                .filter(|record| !blank(record))
                .map(length)
                .min()?;
            (length(&records[last]) < shortest_other).then_some(last + 2)
        })
        .flatten()
        .and_then(|line| Some((line, points.pop()?)));
    Ok(Series {
        name: stem.to_string(),
        source: String::new(),
        cut_last_line,
        measure,
        points,
        physical_cores: None,
        logical_cpus: None,
        complete: true,
        cost: None,
        left_out: Vec::new(),
        paced: Vec::new(),
        job,
        provenance: Provenance::default(),
    })
}

/// A bad cell as the reader says it: file, line, column (1-based) and what is wrong.
fn cell_error(
    path: &Path,
    line: usize,
    header: &csv::StringRecord,
    record: &csv::StringRecord,
    error: &csv::Error,
) -> anyhow::Error {
    let at = |column: usize| format!("'{}' line {line} column {}", path.display(), column + 1);
    let csv::ErrorKind::Deserialize { err, .. } = error.kind() else {
        return anyhow::anyhow!(
            "'{}' line {line}: {}",
            path.display(),
            printable(&error.to_string())
        );
    };
    let cell = |column: usize| quote(record.get(column).unwrap_or(""));
    match (err.field(), err.kind()) {
        (Some(column), csv::DeserializeErrorKind::ParseFloat(_))
        | (Some(column), csv::DeserializeErrorKind::ParseInt(_)) => {
            let column = column as usize;
            anyhow::anyhow!("{}: '{}' is not a number", at(column), cell(column))
        }
        (Some(column), csv::DeserializeErrorKind::ParseBool(_)) => {
            let column = column as usize;
            anyhow::anyhow!("{}: '{}' is not true or false", at(column), cell(column))
        }
        (Some(column), kind) => {
            anyhow::anyhow!("{}: {}", at(column as usize), printable(&kind.to_string()))
        }
        // A range check's message carries no column: it is the one whose cell alone, in an
        // otherwise plain row, is refused the same way.
        (None, kind) => {
            let message = printable(&kind.to_string());
            let refused_alone = |column: usize| {
                let probe: csv::StringRecord = (0..record.len())
                    .map(|other| match other {
                        _ if other == column => record.get(other).unwrap_or(""),
                        0..=3 => "1",
                        _ => "",
                    })
                    .collect();
                probe
                    .deserialize::<Row>(Some(header))
                    .is_err_and(|probe_error| match probe_error.kind() {
                        csv::ErrorKind::Deserialize { err, .. } => {
                            printable(&err.kind().to_string()) == message
                        }
                        _ => false,
                    })
            };
            match (0..record.len()).find(|&column| refused_alone(column)) {
                Some(column) => anyhow::anyhow!("{}: {message}", at(column)),
                None => anyhow::anyhow!("'{}' line {line}: {message}", path.display()),
            }
        }
    }
}

/// The workload's figures in a row of corescale's CSV (its `workload_figures.*` columns),
/// by name; an empty cell is no figure, and one that is not a number is refused with its
/// column (their ranges are checked as the JSON's are, by `checked_figures`).
fn figure_cells(
    path: &Path,
    line: usize,
    header: &csv::StringRecord,
    record: &csv::StringRecord,
) -> Result<std::collections::BTreeMap<String, f64>> {
    header
        .iter()
        .zip(record.iter())
        .enumerate()
        .filter_map(|(column, (name, cell))| {
            let name = name.strip_prefix(FIGURE_PREFIX)?;
            (!cell.is_empty()).then_some((column, name, cell))
        })
        .map(|(column, name, cell)| {
            let value = cell.parse::<f64>().map_err(|_| {
                anyhow::anyhow!(
                    "'{}' line {line} column {}: '{}' is not a number",
                    path.display(),
                    column + 1,
                    quote(cell)
                )
            })?;
            Ok((name.to_string(), value))
        })
        .collect()
}

/// The points of a SLOB-style rate file (`Num_concurrent_workers,<unit>`).
fn rate_points(
    path: &Path,
    records: &[csv::StringRecord],
    unit: String,
) -> Result<(Measure, Job, Vec<Point>)> {
    let mut points = Vec::new();
    for (index, record) in records.iter().enumerate() {
        if record.iter().all(str::is_empty) {
            continue;
        }
        let line = index + 2;
        let at = |column: usize| {
            move || format!("'{}' line {line} column {}", path.display(), column + 1)
        };
        let number = |column: usize| -> Result<f64> {
            let cell = record.get(column).unwrap_or("");
            cell.parse::<f64>()
                .map_err(|_| anyhow::anyhow!("{}: '{}' is not a number", at(column)(), quote(cell)))
        };
        let workers = worker_count(number(0)?, &at(0))?;
        let raw = in_range(number(1)?, &RAW, "the measurement", &at(1))?;
        points.push(Point {
            workers,
            raw,
            ..Point::default()
        });
    }
    let job = Job {
        tool: "rate file".to_string(),
        ..Job::default()
    };
    Ok((Measure::Rate { unit }, job, points))
}

/// A job-time file's row: its line, its typed cells, and its workload figures' cells.
type ReadRow = (usize, Row, std::collections::BTreeMap<String, f64>);

/// The points of a job-time file, test_cpu_parallel's or corescale's, from its typed rows
/// (each cell already checked against its range as it was parsed).
fn job_time_points(path: &Path, rows: Vec<ReadRow>) -> Result<(Measure, Job, Vec<Point>)> {
    let first = rows.first().map(|(_, row, _)| row);
    // A corescale CSV of a fixed-time run carries its figure in rate_total, not job time.
    let fixed_time = first.is_some_and(|row| row.mode == Some(RunMode::FixedTime));
    let text = |cell: &Option<String>| {
        cell.as_deref()
            .filter(|text| !text.is_empty())
            .map(printable)
    };
    // corescale's CSV names its job; test_cpu_parallel's has only the four columns.
    let job = match first {
        Some(row) if row.mode.is_some() => Job {
            tool: "corescale".to_string(),
            workload: text(&row.workload),
            size: row.job_size.zip(text(&row.job_size_unit)),
            duration_s: row.duration_s,
            shape: text(&row.job_shape),
        },
        _ => Job {
            tool: "test_cpu_parallel".to_string(),
            ..Job::default()
        },
    };
    let measure = if fixed_time {
        Measure::Rate {
            unit: first
                .and_then(|row| text(&row.rate_unit))
                .unwrap_or_else(|| "ops/s".to_string()),
        }
    } else {
        Measure::JobTime
    };
    let mut points = Vec::new();
    for (line, row, figure_cells) in rows {
        let at = |column: usize| format!("'{}' line {line} column {}", path.display(), column + 1);
        let raw = if fixed_time {
            match row.rate_total {
                Some(rate) => in_range(rate, &RAW, "the measurement", &|| {
                    format!("'{}' line {line} (rate_total)", path.display())
                })?,
                None => bail!(
                    "'{}' line {line}: a fixed_time row without its rate_total",
                    path.display()
                ),
            }
        } else {
            row.median_s
        };
        let cv = in_range(row.stdev_s / row.mean_s, &CV, "stdev / mean", &|| at(3))?;
        // corescale's CSV carries the figure of merit's own spread (the JSON's);
        // test_cpu_parallel's only median and stdev.
        let spread = match (row.merit_low, row.merit_high) {
            (Some(low), Some(high)) => Some((low, high)),
            _ if fixed_time => None,
            _ => Some(((raw - row.stdev_s).max(raw * 0.01), raw + row.stdev_s)),
        }
        .filter(|(low, high)| low <= high);
        let figure_at = |name: &str| {
            format!(
                "'{}' line {line} column {FIGURE_PREFIX}{name}",
                path.display()
            )
        };
        let figures = checked_figures(&figure_cells, &figure_at)?;
        points.push(Point {
            workers: row.workers,
            raw,
            cache: cache_figures(&figures, &figure_at)?,
            // corescale's CSV: the capacity the host delivered (older files: n / median).
            delivered: match measure {
                Measure::JobTime => row.capacity_jobs_per_min,
                Measure::Rate { .. } => None,
            },
            cv: row.cv.or(Some(cv)),
            spread,
            cpu_fraction: row.cpu_fraction,
            steal_pct: row.steal_pct,
            disturbed: row
                .verdict
                .as_deref()
                .and_then(|verdict| verdict.strip_prefix("disturbed"))
                .map(|reasons| {
                    let reasons: Vec<String> = reasons
                        .trim_start_matches(':')
                        .trim()
                        .split("; ")
                        .filter(|reason| !reason.is_empty())
                        .map(printable)
                        .collect();
                    if reasons.is_empty() {
                        vec!["disturbed".to_string()]
                    } else {
                        reasons
                    }
                })
                .unwrap_or_default(),
            precision_reached: row.precision_reached,
            latency: row_latency(&row).map_err(|problem| {
                anyhow::anyhow!("'{}' line {line}: {problem}", path.display())
            })?,
            // The CSV has no timeline: the JSON keeps it.
            intervals: Vec::new(),
            figures,
        });
    }
    Ok((measure, job, points))
}

/// A level's response times from its CSV row, checked as the JSON's are; None in a file
/// without them (another tool's, or from before they were recorded).
fn row_latency(row: &Row) -> std::result::Result<Option<Latency>, String> {
    let (Some(unit), Some(measured_from), Some(count)) = (
        row.latency_unit.as_ref(),
        row.latency_measured_from,
        row.latency_count,
    ) else {
        return Ok(None);
    };
    let figure = |value: Option<f64>, name: &str| {
        value.ok_or_else(|| format!("latency_{name} is empty while latency_count is {count}"))
    };
    let latency = Latency {
        unit: printable(unit),
        measured_from,
        response: Percentiles {
            count,
            mean_ms: figure(row.latency_mean_ms, "mean_ms")?,
            p50_ms: figure(row.latency_p50_ms, "p50_ms")?,
            p90_ms: figure(row.latency_p90_ms, "p90_ms")?,
            p95_ms: figure(row.latency_p95_ms, "p95_ms")?,
            p99_ms: figure(row.latency_p99_ms, "p99_ms")?,
            p999_ms: figure(row.latency_p999_ms, "p999_ms")?,
            max_ms: figure(row.latency_max_ms, "max_ms")?,
        },
        // The CSV keeps only p99 of these: the JSON has them whole.
        service: None,
        schedule_lag: None,
        rate: match (
            row.rate_target_per_s,
            row.rate_achieved_per_s,
            row.rate_sustained,
            row.rate_arrivals,
        ) {
            (Some(target_per_s), Some(achieved_per_s), Some(sustained), Some(arrivals)) => {
                Some(RateFigures {
                    target_per_s,
                    achieved_per_s,
                    arrivals,
                    due: 0,
                    sent: 0,
                    sustained,
                    share: row.rate_share,
                })
            }
            _ => None,
        },
        limit_ms: row.latency_limit_ms,
        late: row.late,
    };
    checked_latency(&latency)?;
    Ok(Some(latency))
}

/// A level's response times as the file gives them: in order and below a day
/// (`Latency::check`), its rates and limit in range (a sent rate of 1.1e132/s overflowed the
/// latency figure's pixel arithmetic).
fn checked_latency(latency: &Latency) -> std::result::Result<(), String> {
    latency.check()?;
    if let Some(rate) = &latency.rate {
        ranges::check(rate.target_per_s, &RAW, "rate.target_per_s")?;
        ranges::check(rate.achieved_per_s, &COUNT, "rate.achieved_per_s")?;
    }
    if let Some(limit) = latency.limit_ms {
        ranges::check(limit, &(0.0..=crate::latency::A_DAY_MS), "limit_ms")?;
    }
    Ok(())
}
