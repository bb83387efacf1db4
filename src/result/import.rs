//! Readers for every series format `report` accepts, detected from the content:
//! corescale JSON, corescale CSV, test_cpu_parallel CSV (both headers it has written) and
//! SLOB-style rate CSV (`Num_concurrent_workers,<rate>`).

use std::path::Path;

use anyhow::{Context, Result, bail};

use super::{RunDocument, RunMode, SCHEMA};
use crate::analysis::series::{Measure, Point, Series};

/// Reads one file into a series named after its host label, else its file stem.
pub fn read_series(path: &Path) -> Result<Series> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read '{}'", path.display()))?;
    let stem = path.file_stem().map_or_else(
        || "series".to_string(),
        |stem| stem.to_string_lossy().into_owned(),
    );
    let mut series = if text.trim_start().starts_with('{') {
        from_document(path, &text)?
    } else {
        from_csv(path, &text, &stem)?
    };
    series.source = path.display().to_string();
    if series.points.is_empty() {
        bail!("'{}' holds no load levels", path.display());
    }
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
    let document: RunDocument = serde_json::from_str(text).map_err(|error| {
        anyhow::anyhow!(
            "'{}' line {}: not a corescale result document ({error})",
            path.display(),
            error.line()
        )
    })?;
    if document.schema != SCHEMA {
        bail!(
            "'{}': schema '{}' is not supported (this corescale reads '{SCHEMA}')",
            path.display(),
            document.schema
        );
    }
    let measure = match document.settings.mode {
        RunMode::FixedWork => Measure::JobTime,
        RunMode::FixedTime => Measure::Rate {
            unit: format!("{}/s", document.workload.unit),
        },
    };
    let points = document
        .levels
        .iter()
        .map(|level| {
            let figure = |name: &str| level.workload_figures.get(name).copied();
            // A database's own counters are the figure of merit; its sessions' CPU time over
            // their wall time is the on-CPU fraction (seed 003's DB CPU against DB time).
            let database_cpu = figure("db_cpu_s")
                .map(|cpu| cpu / (level.elapsed_s * level.workers as f64).max(f64::MIN_POSITIVE));
            Point {
                workers: level.workers,
                raw: match measure {
                    Measure::JobTime => level.summary.job_time_s.median,
                    Measure::Rate { .. } => {
                        figure("db_lio_per_s").unwrap_or(level.summary.rate_total)
                    }
                },
                cv: Some(level.summary.cv),
                cpu_fraction: database_cpu.or(Some(level.summary.cpu_fraction)),
                steal_pct: Some(level.os.steal_pct),
            }
        })
        .collect();
    let topology = &document.host.topology;
    Ok(Series {
        name: document.host.label.clone(),
        source: String::new(),
        measure,
        points,
        physical_cores: Some(topology.physical_cores),
        logical_cpus: Some(topology.logical_cpus),
        complete: document.complete,
        cost: None,
    })
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
    let header: Vec<String> = reader
        .headers()
        .with_context(|| format!("'{}' line 1: unreadable CSV header", path.display()))?
        .iter()
        .map(str::to_string)
        .collect();
    let Some(layout) = detect(&header) else {
        bail!(
            "'{}' line 1: unknown header '{}': expected corescale or test_cpu_parallel job times, or Num_concurrent_workers,<rate>",
            path.display(),
            header.join(",")
        );
    };
    let extra = ExtraColumns::find(&header);
    let records = reader
        .records()
        .enumerate()
        .map(|(index, record)| {
            record
                .with_context(|| format!("'{}' line {}: malformed CSV", path.display(), index + 2))
        })
        .collect::<Result<Vec<_>>>()?;
    // A corescale CSV of a fixed-time run carries its figure in rate_total, not job time.
    let fixed_time = extra.mode.is_some_and(|column| {
        records
            .first()
            .is_some_and(|record| record.get(column) == Some("fixed_time"))
    });
    let (value_column, measure) = match (&layout, fixed_time, extra.rate_total) {
        (CsvLayout::Rate(unit), ..) => (1, Measure::Rate { unit: unit.clone() }),
        (_, true, Some(column)) => {
            let unit = extra
                .rate_unit
                .and_then(|unit| records.first()?.get(unit))
                .unwrap_or("ops/s");
            (
                column,
                Measure::Rate {
                    unit: unit.to_string(),
                },
            )
        }
        _ => (1, Measure::JobTime),
    };
    let mut points = Vec::new();
    for (index, record) in records.iter().enumerate() {
        let line = index + 2;
        if record.iter().all(str::is_empty) {
            continue;
        }
        let number = |column: usize| -> Result<f64> {
            let cell = record.get(column).unwrap_or("");
            cell.parse::<f64>()
                .ok()
                .filter(|value| value.is_finite())
                .with_context(|| {
                    format!(
                        "'{}' line {line}: '{cell}' in column {} is not a number",
                        path.display(),
                        column + 1
                    )
                })
        };
        let workers = number(0)?;
        if workers < 1.0 || workers.fract() != 0.0 {
            bail!(
                "'{}' line {line}: '{workers}' is not a worker count",
                path.display()
            );
        }
        let raw = number(value_column)?;
        if raw <= 0.0 {
            bail!(
                "'{}' line {line}: the measurement must be positive, got {raw}",
                path.display()
            );
        }
        let cv = match layout {
            CsvLayout::Rate(_) => None,
            _ => {
                let (mean, stdev) = (number(2)?, number(3)?);
                (mean > 0.0).then(|| stdev / mean)
            }
        };
        let optional = |column: Option<usize>| {
            column.and_then(|column| record.get(column)?.parse::<f64>().ok())
        };
        points.push(Point {
            workers: workers as usize,
            raw,
            cv: optional(extra.cv).or(cv),
            cpu_fraction: optional(extra.cpu_fraction),
            steal_pct: optional(extra.steal_pct),
        });
    }
    Ok(Series {
        name: stem.to_string(),
        source: String::new(),
        measure,
        points,
        physical_cores: None,
        logical_cpus: None,
        complete: true,
        cost: None,
    })
}

/// corescale's own CSV columns, when present.
struct ExtraColumns {
    cv: Option<usize>,
    cpu_fraction: Option<usize>,
    steal_pct: Option<usize>,
    mode: Option<usize>,
    rate_total: Option<usize>,
    rate_unit: Option<usize>,
}

impl ExtraColumns {
    fn find(header: &[String]) -> Self {
        let column = |name: &str| header.iter().position(|candidate| candidate == name);
        Self {
            cv: column("cv"),
            cpu_fraction: column("cpu_fraction"),
            steal_pct: column("steal_pct"),
            mode: column("mode"),
            rate_total: column("rate_total"),
            rate_unit: column("rate_unit"),
        }
    }
}
