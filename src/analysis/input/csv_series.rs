//! CSV series: corescale's own, test_cpu_parallel's (both headers it has written) and
//! SLOB-style rate CSVs (`Num_concurrent_workers,<rate>`).

use super::*;

/// The CSV layouts, told apart by their header.
pub(super) enum CsvLayout {
    /// test_cpu_parallel (Python, older Rust) and corescale: median, mean, stdev in seconds.
    JobTimes,
    /// test_cpu_parallel Rust 1.2: `Num_Threads,Median_Runtime,Mean_Runtime,StdDev_Runtime`
    /// (or `NumThreads,ThreadMedian,ThreadMean,ThreadStd,...`).
    JobTimesV12,
    /// `Num_concurrent_workers,<rate>`: the second column's name is the unit.
    Rate(String),
}

pub(super) fn detect(header: &[String]) -> Option<CsvLayout> {
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

pub(super) fn from_csv(path: &Path, text: &str, stem: &str) -> Result<Series> {
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
        cut_last_line,
        ..Series::new(stem.to_string(), measure, points, job)
    })
}

/// A bad cell as the reader says it: file, line, column (1-based) and what is wrong.
pub(super) fn cell_error(
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
pub(super) fn figure_cells(
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
pub(super) fn rate_points(
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
pub(super) fn job_time_points(
    path: &Path,
    rows: Vec<ReadRow>,
) -> Result<(Measure, Job, Vec<Point>)> {
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
            scheduled: None,
            cache: cache_figures(&figures, &figure_at)?,
            // corescale's CSV: the capacity the host delivered (older files: n / median).
            delivered: match measure {
                Measure::JobTime => row.capacity_jobs_per_min,
                Measure::Rate { .. } => None,
            },
            cv: row.cv.or(Some(cv)),
            // A row is a level's summary: its batches are not in it.
            capacity_uncertainty: None,
            // The CSV has no campaign: its parts are merged from their JSON.
            campaign: None,
            parts: Vec::new(),
            // Per-instance figures are in the JSON only.
            instances: Vec::new(),
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
pub(super) fn row_latency(row: &Row) -> std::result::Result<Option<Latency>, String> {
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
        // The CSV keeps percentiles only: the JSON has the histogram.
        histogram: None,
    };
    checked_latency(&latency)?;
    Ok(Some(latency))
}
