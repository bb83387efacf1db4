//! The CSV form of a run: test_cpu_parallel's four columns first, so existing notebooks read
//! it unchanged, then corescale's own columns, then the workload's figures. One typed [`Row`]
//! is both what the writer writes and what `report` reads, each cell checked as it is parsed.

use anyhow::Result;
use serde::{Deserialize, Deserializer, Serialize};

use super::ranges::{self, COUNT, CPU_FRACTION, CV, PERCENT, RAW};
use super::{Level, RunDocument, RunMode};
use crate::latency::{Arrivals, MeasuredFrom};

/// Where the workload's figures (`levels[].workload_figures`) go: one column each, named
/// after the JSON field they come from.
pub const FIGURE_PREFIX: &str = "workload_figures.";
/// The last column of an order-entry run's rows: that its NOPM is not an audited result.
pub const NOPM_NOTE: &str = "nopm_note";

/// One CSV row. The first four columns are test_cpu_parallel's header, byte for byte (its
/// Rust 1.2 names read as aliases); every later column may be missing or empty, as in files
/// of other tools and older versions.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    #[serde(
        rename = "Num_concurrent_jobs",
        alias = "Num_Threads",
        alias = "NumThreads",
        deserialize_with = "workers"
    )]
    pub workers: usize,
    /// The measurement of test_cpu_parallel's files (and of corescale's fixed-work runs).
    #[serde(
        rename = "job_median_run_time (sec)",
        alias = "Median_Runtime",
        alias = "ThreadMedian",
        deserialize_with = "measurement"
    )]
    pub median_s: f64,
    #[serde(
        rename = "job_mean_run_time (sec)",
        alias = "Mean_Runtime",
        alias = "ThreadMean",
        deserialize_with = "mean"
    )]
    pub mean_s: f64,
    #[serde(
        rename = "job_stdev_run_time (sec)",
        alias = "StdDev_Runtime",
        alias = "ThreadStd",
        deserialize_with = "stdev"
    )]
    pub stdev_s: f64,
    #[serde(rename = "job_min_run_time (sec)")]
    pub min_s: Option<f64>,
    #[serde(rename = "job_max_run_time (sec)")]
    pub max_s: Option<f64>,
    pub jobs: Option<usize>,
    #[serde(default, deserialize_with = "cv")]
    pub cv: Option<f64>,
    pub speed_jobs_per_min_per_worker: Option<f64>,
    /// What the host delivered (older files: test_cpu_parallel's n / median).
    #[serde(default, deserialize_with = "capacity")]
    pub capacity_jobs_per_min: Option<f64>,
    /// test_cpu_parallel's capacity (60 n / median job time), for its notebooks.
    pub capacity_n_over_median_jobs_per_min: Option<f64>,
    /// Job time of all jobs over workers x batch time (1.0: all ran together).
    pub overlap: Option<f64>,
    pub speedup: Option<f64>,
    pub efficiency: Option<f64>,
    #[serde(default, deserialize_with = "cpu_fraction")]
    pub cpu_fraction: Option<f64>,
    pub rate_unit: Option<String>,
    pub rate_per_worker: Option<f64>,
    /// The measurement of a fixed-time run.
    #[serde(default, deserialize_with = "rate_total")]
    pub rate_total: Option<f64>,
    pub user_pct: Option<f64>,
    pub system_pct: Option<f64>,
    pub idle_pct: Option<f64>,
    pub iowait_pct: Option<f64>,
    #[serde(default, deserialize_with = "steal")]
    pub steal_pct: Option<f64>,
    pub ctx_switches_per_s: Option<f64>,
    pub run_queue: Option<f64>,
    pub ipc: Option<f64>,
    /// fixed_work or fixed_time: tells `report` whether job time or rate_total is the figure.
    pub mode: Option<RunMode>,
    /// Other processes' CPUs over the level (empty in documents without the figure).
    pub other_busy_cpus: Option<f64>,
    /// `clean`, or `disturbed: ` and the reasons; empty when not judged.
    pub verdict: Option<String>,
    /// With --precision: whether the CV target was met.
    pub precision_reached: Option<bool>,
    /// The job, so `report` compares only series that ran the same one.
    pub workload: Option<String>,
    pub job_size: Option<u64>,
    pub job_size_unit: Option<String>,
    pub duration_s: Option<f64>,
    /// The spread `report` draws: fastest and slowest job, or lowest and highest batch rate.
    #[serde(default, deserialize_with = "spread_low")]
    pub merit_low: Option<f64>,
    #[serde(default, deserialize_with = "spread_high")]
    pub merit_high: Option<f64>,
    /// Response times (`levels[].latency`), in milliseconds: of a statement or a job.
    pub latency_unit: Option<String>,
    pub latency_measured_from: Option<MeasuredFrom>,
    pub latency_count: Option<u64>,
    pub latency_mean_ms: Option<f64>,
    pub latency_p50_ms: Option<f64>,
    pub latency_p90_ms: Option<f64>,
    pub latency_p95_ms: Option<f64>,
    pub latency_p99_ms: Option<f64>,
    pub latency_p999_ms: Option<f64>,
    pub latency_max_ms: Option<f64>,
    /// Open loop (`--rate`): from the send, and from when due to the send.
    pub service_p99_ms: Option<f64>,
    pub schedule_lag_p99_ms: Option<f64>,
    pub rate_target_per_s: Option<f64>,
    pub rate_achieved_per_s: Option<f64>,
    pub rate_sustained: Option<bool>,
    pub rate_arrivals: Option<Arrivals>,
    /// A `--rate 50%` step's share of the closed-loop throughput (0.5).
    pub rate_share: Option<f64>,
    pub latency_limit_ms: Option<f64>,
    pub late: Option<u64>,
    /// A database job's shape (`workload.shape`'s key): engine, statement, statements per
    /// round trip, loop. Only runs of one shape compare by speed or capacity.
    pub job_shape: Option<String>,
}

fn workers<'de, D: Deserializer<'de>>(cell: D) -> Result<usize, D::Error> {
    ranges::workers(f64::deserialize(cell)?).map_err(serde::de::Error::custom)
}

/// Readers of the checked columns: each parses its cell and checks it against its range,
/// so a bad value is refused with its column.
macro_rules! checked {
    ($($name:ident: $range:expr, $what:literal;)*) => {$(
        fn $name<'de, D: Deserializer<'de>>(cell: D) -> Result<Option<f64>, D::Error> {
            Option::<f64>::deserialize(cell)?
                .map(|value| ranges::check(value, &$range, $what))
                .transpose()
                .map_err(serde::de::Error::custom)
        }
    )*};
}

checked! {
    cv: CV, "the CV";
    capacity: RAW, "the capacity";
    cpu_fraction: CPU_FRACTION, "the on-CPU fraction";
    rate_total: COUNT, "the total rate";
    steal: PERCENT, "steal %";
    spread_low: RAW, "the spread's low end";
    spread_high: RAW, "the spread's high end";
}

/// The first three columns, which every job-time file has.
macro_rules! required {
    ($($name:ident: $range:expr, $what:literal;)*) => {$(
        fn $name<'de, D: Deserializer<'de>>(cell: D) -> Result<f64, D::Error> {
            ranges::check(f64::deserialize(cell)?, &$range, $what)
                .map_err(serde::de::Error::custom)
        }
    )*};
}

required! {
    measurement: RAW, "the measurement";
    mean: RAW, "the mean job time";
    stdev: 0.0..=f64::MAX, "the stdev";
}

impl Row {
    /// A level's row, with what the run says about its job.
    fn new(level: &Level, document: &RunDocument) -> Self {
        let (unit, mode) = (document.workload.unit.as_str(), document.settings.mode);
        let fixed_work = mode == RunMode::FixedWork;
        let summary = &level.summary;
        let merit = level.merit(mode, unit);
        let latency = level.latency.as_ref();
        let response = latency.map(|latency| latency.response);
        let rate = latency.and_then(|latency| latency.rate);
        Self {
            workers: level.workers,
            median_s: summary.job_time_s.median,
            mean_s: summary.job_time_s.mean,
            stdev_s: summary.job_time_s.stdev,
            min_s: Some(summary.job_time_s.min),
            max_s: Some(summary.job_time_s.max),
            jobs: Some(summary.jobs),
            cv: Some(summary.cv),
            speed_jobs_per_min_per_worker: Some(summary.speed_jobs_per_min),
            capacity_jobs_per_min: Some(summary.capacity_jobs_per_min),
            capacity_n_over_median_jobs_per_min: Some(summary.capacity_n_over_median_jobs_per_min),
            overlap: summary.together.map(|together| together.overlap),
            speedup: summary.speedup,
            efficiency: summary.efficiency,
            cpu_fraction: Some(merit.cpu_fraction),
            rate_unit: Some(format!("{unit}/s")),
            rate_per_worker: Some(merit.rate_per_worker),
            rate_total: Some(merit.rate_total),
            user_pct: Some(level.os.user_pct),
            system_pct: Some(level.os.system_pct),
            idle_pct: Some(level.os.idle_pct),
            iowait_pct: Some(level.os.iowait_pct),
            steal_pct: Some(level.os.steal_pct),
            ctx_switches_per_s: Some(level.os.ctx_switches_per_s),
            run_queue: level.os.run_queue,
            ipc: summary.ipc,
            mode: Some(mode),
            other_busy_cpus: level
                .interference
                .as_ref()
                .map(|interference| interference.other_busy_cpus),
            verdict: Some(match (level.disturbances(), &level.interference) {
                (reasons, _) if !reasons.is_empty() => {
                    format!("disturbed: {}", reasons.join("; "))
                }
                (_, Some(_)) => "clean".to_string(),
                (_, None) => String::new(),
            }),
            precision_reached: level.precision_reached,
            workload: Some(document.workload.kind.name().to_string()),
            job_size: fixed_work.then_some(document.workload.job_size),
            job_size_unit: fixed_work.then(|| document.workload.job_size_unit.clone()),
            duration_s: document.settings.duration_s,
            merit_low: merit.low,
            merit_high: merit.high,
            latency_unit: latency.map(|latency| latency.unit.clone()),
            latency_measured_from: latency.map(|latency| latency.measured_from),
            latency_count: response.map(|response| response.count),
            latency_mean_ms: response.map(|response| response.mean_ms),
            latency_p50_ms: response.map(|response| response.p50_ms),
            latency_p90_ms: response.map(|response| response.p90_ms),
            latency_p95_ms: response.map(|response| response.p95_ms),
            latency_p99_ms: response.map(|response| response.p99_ms),
            latency_p999_ms: response.map(|response| response.p999_ms),
            latency_max_ms: response.map(|response| response.max_ms),
            service_p99_ms: latency
                .and_then(|latency| latency.service)
                .map(|service| service.p99_ms),
            schedule_lag_p99_ms: latency
                .and_then(|latency| latency.schedule_lag)
                .map(|lag| lag.p99_ms),
            rate_target_per_s: rate.map(|rate| rate.target_per_s),
            rate_achieved_per_s: rate.map(|rate| rate.achieved_per_s),
            rate_sustained: rate.map(|rate| rate.sustained),
            rate_arrivals: rate.map(|rate| rate.arrivals),
            rate_share: rate.and_then(|rate| rate.share),
            latency_limit_ms: latency.and_then(|latency| latency.limit_ms),
            late: latency.and_then(|latency| latency.late),
            job_shape: document.workload.shape.as_ref().map(|shape| shape.key()),
        }
    }
}

/// The CSV text of a run: the row's columns, then one column per workload figure any level
/// recorded (empty where a level lacks it); a run stopped before its first level is the
/// header alone, which notebooks read as an empty table.
pub(crate) fn to_csv(document: &RunDocument) -> Result<Vec<u8>> {
    let mut figures: Vec<&str> = Vec::new();
    for level in &document.levels {
        for name in level.workload_figures.keys() {
            if !figures.contains(&name.as_str()) {
                figures.push(name);
            }
        }
    }
    // The names do not depend on the values: a default row gives them.
    let mut header = row_header(&Row::default())?;
    for name in &figures {
        header.push_field(&format!("{FIGURE_PREFIX}{name}"));
    }
    // Every output that shows NOPM says what it is (readers skip columns they do not know).
    let nopm_note = figures
        .contains(&"nopm")
        .then_some(super::workload::NOT_AUDITED);
    if nopm_note.is_some() {
        header.push_field(NOPM_NOTE);
    }
    let mut writer = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    writer.write_record(&header)?;
    for level in &document.levels {
        let cells: Vec<Option<f64>> = figures
            .iter()
            .map(|name| level.workload_figures.get(*name).copied())
            .collect();
        match nopm_note {
            Some(note) => writer.serialize((Row::new(level, document), cells, note))?,
            None => writer.serialize((Row::new(level, document), cells))?,
        }
    }
    Ok(writer.into_inner()?)
}

/// The row's column names, as serde writes them.
fn row_header(row: &Row) -> Result<csv::StringRecord> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.serialize(row)?;
    let text = writer.into_inner()?;
    Ok(csv::Reader::from_reader(text.as_slice()).headers()?.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Row, csv::Error> {
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header = reader.headers()?.clone();
        reader
            .records()
            .next()
            .expect("one row")?
            .deserialize(Some(&header))
    }

    /// What the writer writes, the reader reads back whole: one struct for both.
    #[test]
    fn a_row_reads_back_as_written() {
        let row = Row {
            workers: 4,
            median_s: 2.5,
            mean_s: 2.6,
            stdev_s: 0.1,
            cv: Some(0.04),
            mode: Some(RunMode::FixedTime),
            rate_total: Some(1.5e6),
            verdict: Some("disturbed: a; b".to_string()),
            rate_sustained: Some(true),
            rate_arrivals: Some(Arrivals::Poisson),
            latency_measured_from: Some(MeasuredFrom::Due),
            ..Row::default()
        };
        let mut writer = csv::Writer::from_writer(Vec::new());
        writer.serialize(&row).unwrap();
        let text = String::from_utf8(writer.into_inner().unwrap()).unwrap();
        assert!(text.starts_with("Num_concurrent_jobs,job_median_run_time (sec),job_mean_run_time (sec),job_stdev_run_time (sec),"));
        assert_eq!(read(&text).unwrap(), row);
    }

    /// test_cpu_parallel's Rust 1.2 headers are aliases of the same columns.
    #[test]
    fn test_cpu_parallel_headers_read_into_the_same_row() {
        for header in [
            "Num_Threads,Median_Runtime,Mean_Runtime,StdDev_Runtime",
            "NumThreads,ThreadMedian,ThreadMean,ThreadStd",
            "Num_concurrent_jobs,job_median_run_time (sec),job_mean_run_time (sec),job_stdev_run_time (sec)",
        ] {
            let row = read(&format!("{header}\n8,2.5,2.6,0.1\n")).unwrap();
            assert_eq!(
                (row.workers, row.median_s, row.mean_s, row.stdev_s),
                (8, 2.5, 2.6, 0.1)
            );
            assert_eq!(row.cv, None);
        }
    }

    /// Each checked cell is refused as it is parsed, saying what and why.
    #[test]
    fn cells_out_of_range_are_refused_where_parsed() {
        let header = "Num_concurrent_jobs,job_median_run_time (sec),job_mean_run_time (sec),job_stdev_run_time (sec),cv,steal_pct";
        for (cells, said) in [
            ("1,0,1,0.1,,", "the measurement 0 is outside 1e-9 to 1e18"),
            ("1,1,1,-1,,", "the stdev -1 is outside"),
            ("1,1,1,0.1,NaN,", "the CV NaN is outside 0 to 100"),
            ("1,1,1,0.1,,101", "steal % 101 is outside 0 to 100"),
            ("2.5,1,1,0.1,,", "'2.5' is not a worker count"),
        ] {
            let error = read(&format!("{header}\n{cells}\n"))
                .unwrap_err()
                .to_string();
            assert!(error.contains(said), "{cells}: {error}");
        }
    }
}
