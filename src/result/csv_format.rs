//! The CSV form of a run: test_cpu_parallel's four columns first, so existing notebooks read
//! it unchanged, then corescale's own columns.

use anyhow::Result;
use serde::Serialize;

use super::{Level, RunDocument, RunMode};
use crate::latency::{Arrivals, MeasuredFrom};

/// One CSV row. The first four field names are test_cpu_parallel's header, byte for byte.
#[derive(Debug, Serialize)]
struct Row {
    #[serde(rename = "Num_concurrent_jobs")]
    workers: usize,
    #[serde(rename = "job_median_run_time (sec)")]
    median_s: f64,
    #[serde(rename = "job_mean_run_time (sec)")]
    mean_s: f64,
    #[serde(rename = "job_stdev_run_time (sec)")]
    stdev_s: f64,
    #[serde(rename = "job_min_run_time (sec)")]
    min_s: f64,
    #[serde(rename = "job_max_run_time (sec)")]
    max_s: f64,
    jobs: usize,
    cv: f64,
    speed_jobs_per_min_per_worker: f64,
    capacity_jobs_per_min: f64,
    /// test_cpu_parallel's capacity (60 n / median job time), for its notebooks.
    capacity_n_over_median_jobs_per_min: f64,
    /// Job time of all jobs over workers x batch time (1.0: all ran together).
    overlap: Option<f64>,
    speedup: Option<f64>,
    efficiency: Option<f64>,
    cpu_fraction: f64,
    rate_unit: String,
    rate_per_worker: f64,
    rate_total: f64,
    user_pct: f64,
    system_pct: f64,
    idle_pct: f64,
    iowait_pct: f64,
    steal_pct: f64,
    ctx_switches_per_s: f64,
    run_queue: Option<f64>,
    ipc: Option<f64>,
    /// fixed_work or fixed_time: tells `report` whether job time or rate_total is the figure.
    mode: RunMode,
    /// Other processes' CPUs over the level (empty in documents without the figure).
    other_busy_cpus: Option<f64>,
    /// `clean`, or `disturbed: ` and the reasons; empty when not judged.
    verdict: String,
    /// With --precision: whether the CV target was met.
    precision_reached: Option<bool>,
    /// The job, so `report` compares only series that ran the same one.
    workload: String,
    job_size: Option<u64>,
    job_size_unit: Option<String>,
    duration_s: Option<f64>,
    /// The spread `report` draws: fastest and slowest job, or lowest and highest batch rate.
    merit_low: Option<f64>,
    merit_high: Option<f64>,
    /// Response times (`levels[].latency`), in milliseconds: of a statement or a job.
    latency_unit: Option<String>,
    latency_measured_from: Option<MeasuredFrom>,
    latency_count: Option<u64>,
    latency_mean_ms: Option<f64>,
    latency_p50_ms: Option<f64>,
    latency_p90_ms: Option<f64>,
    latency_p95_ms: Option<f64>,
    latency_p99_ms: Option<f64>,
    latency_p999_ms: Option<f64>,
    latency_max_ms: Option<f64>,
    /// Open loop (`--rate`): from the send, and from when due to the send.
    service_p99_ms: Option<f64>,
    schedule_lag_p99_ms: Option<f64>,
    rate_target_per_s: Option<f64>,
    rate_achieved_per_s: Option<f64>,
    rate_sustained: Option<bool>,
    rate_arrivals: Option<Arrivals>,
    /// A `--rate 50%` step's share of the closed-loop throughput (0.5).
    rate_share: Option<f64>,
    latency_limit_ms: Option<f64>,
    late: Option<u64>,
}

impl Row {
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
            min_s: summary.job_time_s.min,
            max_s: summary.job_time_s.max,
            jobs: summary.jobs,
            cv: summary.cv,
            speed_jobs_per_min_per_worker: summary.speed_jobs_per_min,
            capacity_jobs_per_min: summary.capacity_jobs_per_min,
            capacity_n_over_median_jobs_per_min: summary.capacity_n_over_median_jobs_per_min,
            overlap: summary.together.map(|together| together.overlap),
            speedup: summary.speedup,
            efficiency: summary.efficiency,
            cpu_fraction: merit.cpu_fraction,
            rate_unit: format!("{unit}/s"),
            rate_per_worker: merit.rate_per_worker,
            rate_total: merit.rate_total,
            user_pct: level.os.user_pct,
            system_pct: level.os.system_pct,
            idle_pct: level.os.idle_pct,
            iowait_pct: level.os.iowait_pct,
            steal_pct: level.os.steal_pct,
            ctx_switches_per_s: level.os.ctx_switches_per_s,
            run_queue: level.os.run_queue,
            ipc: summary.ipc,
            mode,
            other_busy_cpus: level
                .interference
                .as_ref()
                .map(|interference| interference.other_busy_cpus),
            verdict: match (level.disturbances(), &level.interference) {
                (reasons, _) if !reasons.is_empty() => {
                    format!("disturbed: {}", reasons.join("; "))
                }
                (_, Some(_)) => "clean".to_string(),
                (_, None) => String::new(),
            },
            precision_reached: level.precision_reached,
            workload: document.workload.kind.name().to_string(),
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
        }
    }
}

/// The CSV text of a run with at least one level (serde writes the header with the first row).
pub(crate) fn to_csv(document: &RunDocument) -> Result<Vec<u8>> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for level in &document.levels {
        writer.serialize(Row::new(level, document))?;
    }
    Ok(writer.into_inner()?)
}
