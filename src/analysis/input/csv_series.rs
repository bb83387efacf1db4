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

/// A CSV series read record by record: each row is typed and checked as it is read and
/// becomes its level at once, so a malformed row is refused at its line before the rest is
/// read, and no row's text is kept.
pub(super) fn from_csv(path: &Path, input: impl std::io::Read, stem: &str) -> Result<Series> {
    let mut input = LastByte {
        inner: input,
        last: None,
    };
    // Headers trimmed by the reader; fields here, and only in a row that has spaces to
    // trim (the reader's own trim builds every row anew).
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::Headers)
        .from_reader(&mut input);
    let header = reader
        .headers()
        .map_err(|error| unreadable(path, 1, &error))?
        .clone();
    let names: Vec<String> = header.iter().map(str::to_string).collect();
    let Some(layout) = detect(&names) else {
        return Err(super::NotAResult(format!(
            "'{}' line 1: unknown header '{}': expected corescale or test_cpu_parallel job times, or Num_concurrent_workers,<rate>",
            path.display(),
            quote(&names.join(","))
        ))
        .into());
    };
    let mut levels = Levels::new(layout);
    let mut last_cells = LastCells::default();
    let mut record = csv::StringRecord::new();
    let mut lines_read = 1;
    // The reader counts line feeds only: a file whose lines end with a lone carriage return
    // is numbered by its rows.
    let line_of = |at: Option<&csv::Position>, lines_read: usize| {
        at.map_or(0, |at| at.line() as usize).max(lines_read + 1)
    };
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {
                if record.iter().any(|field| field.trim().len() != field.len()) {
                    record.trim();
                }
            }
            Ok(false) => break,
            Err(error) => {
                let line = line_of(error.position(), lines_read);
                return Err(unreadable(path, line, &error));
            }
        }
        let line = line_of(record.position(), lines_read);
        lines_read = line;
        if record
            .iter()
            .any(|field| field.len() > crate::input_file::MOST_STRING_BYTES)
        {
            return Err(crate::error::UsageError::new(format!(
                "'{}' line {line}: a field longer than {}, the longest corescale reads in a result: check that it is the file meant",
                path.display(),
                crate::input_file::size_in_words(crate::input_file::MOST_STRING_BYTES as u64)
            ))
            .into());
        }
        // An empty line between rows (or at the end) is no level.
        if record.iter().all(str::is_empty) {
            continue;
        }
        last_cells.saw(line, &record);
        levels.push(path, line, &header, &record)?;
    }
    drop(reader);
    let (measure, job, mut points) = levels.finish();
    // Grown by doubling as rows came: up to a third of it unused at 10^5 levels.
    points.shrink_to_fit();
    // A file whose writer was stopped mid-line: "18,1" where the line was "18,11.7".
    let cut_last_line = (input.last != Some(b'\n') && points.len() > 1)
        .then(|| last_cells.cut_line())
        .flatten()
        .and_then(|line| Some((line, points.pop()?)));
    Ok(Series {
        cut_last_line,
        ..Series::new(stem.to_string(), measure, points, job)
    })
}

/// A reader that remembers the last byte it gave: whether a file ends with a line end.
struct LastByte<R> {
    inner: R,
    last: Option<u8>,
}

impl<R: std::io::Read> std::io::Read for LastByte<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buffer)?;
        if read > 0 {
            self.last = Some(buffer[read - 1]);
        }
        Ok(read)
    }
}

/// A line the CSV reader could not read (unequal fields, invalid UTF-8, a read error).
fn unreadable(path: &Path, line: usize, error: &csv::Error) -> anyhow::Error {
    // A bound the reader under it refused (a row past 1 MiB, a file past its most): its
    // own words, which name the line.
    if let csv::ErrorKind::Io(io) = error.kind()
        && let Some(refused) = io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<crate::error::UsageError>())
    {
        return crate::error::UsageError::new(format!(
            "cannot read '{}': {refused}",
            path.display()
        ))
        .into();
    }
    let what = match error.kind() {
        csv::ErrorKind::Utf8 { .. } => NOT_TEXT.to_string(),
        _ => format!("malformed CSV ({})", printable(&error.to_string())),
    };
    anyhow::anyhow!("'{}' line {line}: {what}", path.display())
}

/// The length of each row's last cell, for telling a line cut mid-cell: the last row's, and
/// the shortest of the rows before it.
#[derive(Default)]
struct LastCells {
    last: Option<(usize, usize)>,
    shortest_before: Option<usize>,
}

impl LastCells {
    fn saw(&mut self, line: usize, record: &csv::StringRecord) {
        if let Some((_, length)) = self.last {
            self.shortest_before = Some(self.shortest_before.map_or(length, |s| s.min(length)));
        }
        let length = record.iter().next_back().map_or(0, str::len);
        self.last = Some((line, length));
    }

    /// The last row's line when its last cell is shorter than every earlier row's.
    fn cut_line(&self) -> Option<usize> {
        let (line, length) = self.last?;
        (length < self.shortest_before?).then_some(line)
    }
}

/// The levels of a CSV as its rows are read, by layout.
enum Levels {
    Rate {
        unit: String,
        points: Vec<Point>,
    },
    /// Known from the first row (what job, and whether a time or a rate is measured).
    JobTimes(Option<(JobTimeRows, Vec<Point>)>),
}

impl Levels {
    fn new(layout: CsvLayout) -> Self {
        match layout {
            CsvLayout::Rate(unit) => Self::Rate {
                unit,
                points: Vec::new(),
            },
            CsvLayout::JobTimes | CsvLayout::JobTimesV12 => Self::JobTimes(None),
        }
    }

    fn push(
        &mut self,
        path: &Path,
        line: usize,
        header: &csv::StringRecord,
        record: &csv::StringRecord,
    ) -> Result<()> {
        match self {
            Self::Rate { points, .. } => points.push(rate_point(path, line, record)?),
            Self::JobTimes(rows) => {
                let row: Row = record
                    .deserialize(Some(header))
                    .map_err(|error| cell_error(path, line, header, record, &error))?;
                let figures = figure_cells(path, line, header, record)?;
                let (reader, points) =
                    rows.get_or_insert_with(|| (JobTimeRows::from_first(&row), Vec::new()));
                points.push(reader.point(path, line, row, figures)?);
            }
        }
        Ok(())
    }

    fn finish(self) -> (Measure, Job, Vec<Point>) {
        match self {
            Self::Rate { unit, points } => {
                let job = Job {
                    tool: "rate file".to_string(),
                    ..Job::default()
                };
                (Measure::Rate { unit }, job, points)
            }
            Self::JobTimes(Some((rows, points))) => (rows.measure, rows.job, points),
            Self::JobTimes(None) => (
                Measure::JobTime,
                JobTimeRows::test_cpu_parallel(),
                Vec::new(),
            ),
        }
    }
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

/// A row of a SLOB-style rate file (`Num_concurrent_workers,<unit>`) as its level.
fn rate_point(path: &Path, line: usize, record: &csv::StringRecord) -> Result<Point> {
    let at =
        |column: usize| move || format!("'{}' line {line} column {}", path.display(), column + 1);
    let number = |column: usize| -> Result<f64> {
        let cell = record.get(column).unwrap_or("");
        cell.parse::<f64>()
            .map_err(|_| anyhow::anyhow!("{}: '{}' is not a number", at(column)(), quote(cell)))
    };
    let workers = worker_count(number(0)?, &at(0))?;
    let raw = in_range(number(1)?, &RAW, "the measurement", &at(1))?;
    Ok(Point {
        workers,
        raw,
        ..Point::default()
    })
}

/// What a job-time file's rows are, test_cpu_parallel's or corescale's, known from its first
/// row: its job, and whether a time or (a fixed-time run's) rate is measured.
struct JobTimeRows {
    job: Job,
    /// A rate for a fixed-time run, else job time.
    measure: Measure,
}

impl JobTimeRows {
    fn from_first(first: &Row) -> Self {
        // A corescale CSV of a fixed-time run carries its figure in rate_total, not job time.
        let fixed_time = first.mode == Some(RunMode::FixedTime);
        let text = |cell: &Option<String>| {
            cell.as_deref()
                .filter(|text| !text.is_empty())
                .map(printable)
        };
        // corescale's CSV names its job; test_cpu_parallel's has only the four columns.
        let job = match first.mode {
            Some(_) => Job {
                tool: "corescale".to_string(),
                workload: text(&first.workload),
                size: first.job_size.zip(text(&first.job_size_unit)),
                duration_s: first.duration_s,
                shape: text(&first.job_shape),
            },
            None => Self::test_cpu_parallel(),
        };
        let measure = if fixed_time {
            Measure::Rate {
                unit: text(&first.rate_unit).unwrap_or_else(|| "ops/s".to_string()),
            }
        } else {
            Measure::JobTime
        };
        Self { job, measure }
    }

    /// A corescale CSV of a fixed-time run: its figure is rate_total, not job time.
    fn fixed_time(&self) -> bool {
        matches!(self.measure, Measure::Rate { .. })
    }

    fn test_cpu_parallel() -> Job {
        Job {
            tool: "test_cpu_parallel".to_string(),
            ..Job::default()
        }
    }

    /// A row as its level (each cell already checked against its range as it was parsed).
    fn point(
        &self,
        path: &Path,
        line: usize,
        row: Row,
        figure_cells: std::collections::BTreeMap<String, f64>,
    ) -> Result<Point> {
        let at = |column: usize| format!("'{}' line {line} column {}", path.display(), column + 1);
        let raw = if self.fixed_time() {
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
            _ if self.fixed_time() => None,
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
        Ok(Point {
            workers: row.workers,
            raw,
            scheduled: None,
            cache: cache_figures(&figures, &figure_at)?,
            // corescale's CSV: the capacity the host delivered (older files: n / median).
            delivered: match self.measure {
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
            open_reading: None,
            classes: Vec::new(),
            logged: Vec::new(),
            spread,
            cpu_fraction: row.cpu_fraction,
            steal_pct: row.steal_pct,
            disturbed: row
                .verdict
                .as_deref()
                .map(disturbed_reasons)
                .unwrap_or_default(),
            precision_reached: row.precision_reached,
            latency: row_latency(&row)
                .map_err(|problem| anyhow::anyhow!("'{}' line {line}: {problem}", path.display()))?
                .map(Box::new),
            // The CSV has no timeline: the JSON keeps it.
            intervals: Vec::new(),
            figures,
        })
    }
}

/// The reasons of a row's verdict ("disturbed: a; b"); none for a clean one.
fn disturbed_reasons(verdict: &str) -> Vec<String> {
    let Some(reasons) = verdict.strip_prefix("disturbed") else {
        return Vec::new();
    };
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
