//! The versioned result document (`corescale/1`) and its writers.

pub mod csv_format;
#[cfg(test)]
mod document_tests;
pub(crate) mod hlog_format;
pub mod ranges;
pub mod search;
pub(crate) mod summary;
pub mod workload;
pub(crate) mod writer;

pub use crate::stats::Stats;

use std::collections::BTreeMap;
/// A cluster level's instance, as `report` reads it back.
pub use workload::InstanceFigures;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::host::HostInfo;
use crate::host::counters::CounterStatus;
use crate::host::interference::Interference;
use crate::host::os_stats::OsFigures;
use crate::host::pinning::Pin;
use workload::WorkloadInfo;
use workload::figure_names as names;

pub const SCHEMA: &str = "corescale/1";

/// One run of one workload over a plan of load levels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunDocument {
    pub schema: String,
    pub tool: Tool,
    pub command_line: Vec<String>,
    /// `--tag key=value` labels (campaign, inventory host, ...), shown by `report`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    /// False until every planned level was measured; an interrupted run stays false.
    pub complete: bool,
    /// Why the run ended early, when it did.
    pub stop_reason: Option<String>,
    pub started_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub host: HostInfo,
    pub workload: WorkloadInfo,
    pub settings: RunSettings,
    pub hw_counters: CounterStatus,
    /// A campaign's part (`run --campaign NAME --part I/N`): `report` merges the parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign: Option<CampaignPart>,
    pub levels: Vec<Level>,
    /// What the workload checked of the database after the whole run (order entry's
    /// consistency conditions), and what it found; absent where nothing is checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked_after_run: Option<String>,
    /// A search for the largest rate that holds an objective (`run --find`): its probes are
    /// levels too, each marked by `search_step`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<search::SearchRecord>,
}

/// One client host's part of a campaign of several loading one database.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignPart {
    pub name: String,
    /// This part, 1 to `parts`.
    pub part: usize,
    pub parts: usize,
    /// When the first level started, by the database server's clock (`--start-at`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<DateTime<Utc>>,
    /// Each level's place on the schedule: warm-up, batches and the gap between levels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level_period_s: Option<f64>,
    /// The bound on this host's clock against the server's (`--max-clock-offset`).
    pub max_clock_offset_ms: f64,
}

/// A campaign part's level: the campaign's sessions, when it was to start and how far this
/// host's clock was from the database server's just before.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelInCampaign {
    /// Sessions of all the parts at this level (`workers` is this part's share).
    pub workers: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_start: Option<DateTime<Utc>>,
    /// How far the server's clock was ahead of this host's, and the reading's uncertainty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_uncertainty_ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunMode {
    /// Every job does the same work; job time is the figure.
    FixedWork,
    /// Every job runs for the same time; operations per second is the figure.
    FixedTime,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    pub mode: RunMode,
    /// Worker counts, in the order they are measured.
    pub plan: Vec<usize>,
    /// `--rate`: the open-loop steps measured at each worker count, after a closed-loop
    /// level when a step is a share of its throughput.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rates: Vec<crate::latency::OfferedRate>,
    pub repeat: u32,
    /// Target coefficient of variation of job times, in percent.
    pub precision_target_pct: Option<f64>,
    pub max_repeat: u32,
    pub duration_s: Option<f64>,
    /// `--warmup`: seconds each level ran before its measured batches, left out of every
    /// figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_s: Option<f64>,
    pub pin: Pin,
}

/// One measured load level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level {
    pub workers: usize,
    pub batches: u32,
    /// With `--precision`: whether the CV target was met within `max_repeat` batches.
    pub precision_reached: Option<bool>,
    /// The CPU each worker was pinned to (null when not pinned).
    pub placement: Vec<Option<usize>>,
    pub started_at: DateTime<Utc>,
    /// Wall time of the measured batches, setup excluded.
    pub elapsed_s: f64,
    pub os: OsFigures,
    pub samples: Vec<Sample>,
    pub summary: LevelSummary,
    /// Figures the workload adds (LIO/s, latch misses, hit ratio, database counters, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub workload_figures: BTreeMap<String, f64>,
    /// The workload's own count of its total rate, where that and not the workers' sum is the
    /// figure of merit (db: the database's LIO/s, `workload_figures.db_lio_per_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload_rate: Option<f64>,
    /// CPU seconds a server on this host spent for the workers, where measured (db).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_s: Option<f64>,
    /// How each session reached its server: TLS protocol and cipher, or clear text (db).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<workload::SessionConnection>,
    /// A cluster's level, instance by instance: sessions, statements, response times and
    /// each instance's own counters (db on several instances; the CSV keeps the totals).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instances: Vec<workload::InstanceFigures>,
    /// Response times: of each statement (db, lio, pio) or each job (fixed work).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<crate::latency::Latency>,
    /// Fixed-time levels: responses and their p50 and p99 per interval of the window
    /// (`--interval`), the i-th interval of every batch together.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<crate::latency::IntervalFigures>,
    /// Each class's response times: a script's statements (`statement-K`), a replay's
    /// fingerprints (`fingerprint-K`), order entry's transaction types (`new_order`); the
    /// lines of `-o run.classes.hlog`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<crate::latency::ClassTimes>,
    /// What this level's figures cannot vouch for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What else the host did meanwhile, and the verdict (absent in older documents).
    #[serde(default)]
    pub interference: Option<Interference>,
    /// A campaign part's level (`run --campaign`): the campaign's sessions and clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign: Option<LevelInCampaign>,
    /// A search's level (`run --find`): its closed-loop capacity, or probe N.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_step: Option<search::SearchStep>,
}

/// Where documents written before `workload_rate` and `server_cpu_s` existed keep those
/// figures: the db workload's `workload_figures`.
const LEGACY_RATE: &str = names::DB_LIO_PER_S;
const LEGACY_SERVER_CPU: &str = names::DB_CPU_S;
/// The workload figures that the rate columns show already: the database's own LIO count.
pub(crate) const RATE_FIGURES: [&str; 2] = [LEGACY_RATE, names::DB_LIO_PER_S_PER_WORKER];

impl Level {
    /// CPU seconds a server spent for the workers over the level, where measured, and the
    /// field it was read from.
    pub fn server_cpu(&self) -> Option<(f64, String)> {
        self.typed_or_legacy(self.server_cpu_s, "server_cpu_s", LEGACY_SERVER_CPU)
    }

    /// The workload's own count of its rate, where that is the figure of merit, and the field
    /// it was read from.
    pub fn own_rate(&self) -> Option<(f64, String)> {
        self.typed_or_legacy(self.workload_rate, "workload_rate", LEGACY_RATE)
    }

    /// A typed figure, or in an older document the `workload_figures` entry it was, with
    /// the field it was read from.
    fn typed_or_legacy(
        &self,
        typed: Option<f64>,
        name: &str,
        legacy: &str,
    ) -> Option<(f64, String)> {
        match typed {
            Some(value) => Some((value, name.to_string())),
            None => self
                .workload_figures
                .get(legacy)
                .map(|&value| (value, format!("workload_figures.{legacy}"))),
        }
    }

    /// The level's figure of merit, from its summary and its workload's figures: the job
    /// time (fixed work) or the total rate (fixed time), where the rate is the database's own
    /// count of logical reads per second when the db workload recorded one (the OCPU study's
    /// figure). The one definition: `summarize_document` stores it in the summary (for
    /// notebooks, and the speedup), the CSV writer writes it, and `report` derives it again
    /// from the fields it comes from, so one run gives one curve whichever file is read.
    pub fn merit(&self, mode: RunMode, unit: &str) -> Merit {
        self.summary
            .merit
            .clone()
            .unwrap_or_else(|| self.derive_merit(mode, unit))
    }

    /// [`Level::merit`] from the fields it comes from, ignoring a stored one.
    pub fn derive_merit(&self, mode: RunMode, unit: &str) -> Merit {
        let server_rate = self.own_rate();
        let (rate_total, rate_per_worker) = match &server_rate {
            Some((rate, _)) => (*rate, rate / self.workers.max(1) as f64),
            None => (self.summary.rate_total, self.summary.rate_per_worker),
        };
        let (cpu_fraction, cpu_fraction_source) = match self.server_cpu() {
            // DB CPU against DB time.
            Some((cpu, source)) => (
                cpu / (self.elapsed_s * self.workers as f64).max(f64::MIN_POSITIVE),
                source,
            ),
            None => (
                self.summary.cpu_fraction,
                "summary.cpu_fraction".to_string(),
            ),
        };
        let job_times = &self.summary.job_time_s;
        let server_counted = server_rate.is_some();
        let (value, unit, source, spread) = match (mode, server_rate) {
            (RunMode::FixedWork, _) => (
                job_times.median,
                "s".to_string(),
                "summary.job_time_s.median".to_string(),
                Some((job_times.min, job_times.max)),
            ),
            // One count over the level: no spread to draw.
            (RunMode::FixedTime, Some((_, source))) => {
                (rate_total, format!("{unit}/s"), source, None)
            }
            (RunMode::FixedTime, None) => (
                rate_total,
                format!("{unit}/s"),
                "summary.rate_total".to_string(),
                batch_rate_range(&self.samples),
            ),
        };
        Merit {
            value,
            unit,
            source,
            rate_total,
            rate_per_worker,
            server_counted,
            cpu_fraction,
            cpu_fraction_source,
            low: spread.map(|(low, _)| low),
            high: spread.map(|(_, high)| high),
        }
    }
}

/// A level's figure of merit, computed once (see [`Level::merit`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Merit {
    /// What `report` draws: the median job time (fixed work) or the total rate (fixed time).
    pub value: f64,
    /// "s", or the workload's unit per second ("LIO/s").
    pub unit: String,
    /// Where `value` comes from in this document.
    pub source: String,
    /// All workers' operations per second, and one worker's: the database's own count where
    /// the db workload recorded one.
    pub rate_total: f64,
    pub rate_per_worker: f64,
    /// Whether the rates are the database server's own count rather than the workers'.
    pub server_counted: bool,
    /// Busy share of the workers' time: the database sessions' CPU where measured.
    pub cpu_fraction: f64,
    /// Where `cpu_fraction` comes from in this document.
    pub cpu_fraction_source: String,
    /// The spread `report` draws around `value`: the fastest and slowest job (fixed work),
    /// or the lowest and highest batch total rate (fixed time, by the workers' count); none
    /// for a server's single count.
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// The lowest and highest total rate of a level's batches.
fn batch_rate_range(samples: &[Sample]) -> Option<(f64, f64)> {
    let totals = summary::batch_total_rates(samples);
    let low = totals.iter().copied().reduce(f64::min)?;
    let high = totals.iter().copied().reduce(f64::max)?;
    Some((low, high))
}

/// One job of one worker.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub batch: u32,
    pub worker: usize,
    /// The CPU the worker was on when the job ended.
    pub cpu: Option<usize>,
    /// When the job started, in seconds from the start of the level's first batch: with the
    /// job time it gives each batch's own length (absent in documents before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_s: Option<f64>,
    pub wall_s: f64,
    pub cpu_s: f64,
    pub ops: u64,
    pub cycles: Option<u64>,
    pub instructions: Option<u64>,
}

/// The figures of CERN's test_cpu_parallel study for one level, derived from its samples by `analysis`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LevelSummary {
    pub jobs: usize,
    pub job_time_s: Stats,
    /// stdev / mean of job times, or of per-job rates in fixed-time runs (where every job
    /// takes the same time and the rate is what varies).
    pub cv: f64,
    pub cpu_time_s_mean: f64,
    /// Thread CPU time over wall time: 1.0 means the workers never waited for a CPU.
    pub cpu_fraction: f64,
    /// Jobs per minute per worker (60 / median job time).
    pub speed_jobs_per_min: f64,
    /// Jobs per minute the host delivered: the level's jobs over the time its batches took,
    /// each from its first job's start to its last job's end. In documents written before
    /// job starts were recorded, test_cpu_parallel's 60 n / median job time.
    pub capacity_jobs_per_min: f64,
    /// test_cpu_parallel's capacity, 60 n / median job time: true only when every job of a
    /// batch ran at the same time (see `together`).
    #[serde(default)]
    pub capacity_n_over_median_jobs_per_min: f64,
    /// Whether the jobs of each batch ran at the same time (absent in older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub together: Option<Together>,
    /// Operations per second of one worker (median over jobs).
    pub rate_per_worker: f64,
    /// Operations per second of all workers (median over batches of the batch sum).
    pub rate_total: f64,
    /// Capacity (or total rate) relative to the level `speedup_base`, times its workers.
    pub speedup: Option<f64>,
    /// The workers of the level speedup is relative to: 1, or the smallest clean level when
    /// no clean 1-worker level was measured (then linear scaling up to it is assumed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup_base: Option<usize>,
    pub efficiency: Option<f64>,
    /// Instructions per cycle, when hardware counters were available.
    pub ipc: Option<f64>,
    /// The figure of merit every writer and reader uses (absent in documents before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merit: Option<Merit>,
}

/// A buffer-cache figure of the SLOB method, as lio, pio and db record it in
/// `workload_figures` (each workload under its own name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheFigure {
    HitRatio,
    LatchGets,
    LatchMisses,
    PioPerS,
    ReadP99Us,
}

impl CacheFigure {
    /// The names the workloads record it under, from their declarations: lio and pio's
    /// first, db's second.
    pub(crate) fn names(self) -> &'static [&'static str] {
        match self {
            Self::HitRatio => &[names::CACHE_HIT_RATIO, names::DB_HIT_RATIO],
            Self::LatchGets => &[names::LATCH_GETS],
            Self::LatchMisses => &[names::LATCH_MISSES],
            Self::PioPerS => &[names::PIO_PER_S, names::DB_PIO_PER_S],
            Self::ReadP99Us => &[names::READ_US_P99],
        }
    }

    /// The figure among a level's workload figures, and the name it was recorded under.
    pub fn find(self, figures: &BTreeMap<String, f64>) -> Option<(f64, &'static str)> {
        self.names()
            .iter()
            .find_map(|name| Some((*figures.get(*name)?, *name)))
    }
}

/// Latch misses per 1,000 latch gets, when gets were counted.
pub fn misses_per_1k_gets(gets: Option<f64>, misses: Option<f64>) -> Option<f64> {
    let (gets, misses) = gets.zip(misses)?;
    (gets > 0.0).then(|| 1000.0 * misses / gets)
}

/// How a level whose jobs did not run together is marked: the start of its disturbance.
pub const APART: &str = "jobs did not run together";

/// How far the jobs of a level's batches ran at the same time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Together {
    /// The job time of all jobs over workers x batch time: 1.0 when every worker was busy
    /// for the whole of every batch, 1/n when the jobs ran one after another.
    pub overlap: f64,
    /// The lowest overlap the spread of job times explains (1 - 3 robust CV, between 0.5 and
    /// 0.9): below it, the jobs did not run together.
    pub floor: f64,
}

impl Level {
    /// Why this level's figures may not describe the host: the interference verdict's
    /// reasons, and jobs that did not run together. Empty for a clean level.
    pub fn disturbances(&self) -> Vec<String> {
        let mut reasons: Vec<String> = self
            .interference
            .as_ref()
            .filter(|interference| {
                interference.verdict == crate::host::interference::Verdict::Disturbed
            })
            .map(|interference| interference.reasons.clone())
            .unwrap_or_default();
        reasons.extend(self.apart());
        reasons
    }

    pub fn is_disturbed(&self) -> bool {
        !self.disturbances().is_empty()
    }

    /// Statements answered per second over the measured batches, where each was timed (the
    /// rate a `--rate 50%` step takes its share of).
    pub fn response_rate(&self) -> Option<f64> {
        let latency = self
            .latency
            .as_ref()
            .filter(|latency| latency.is_statement())?;
        (self.elapsed_s > 0.0 && latency.response.count > 0)
            .then(|| latency.response.count as f64 / self.elapsed_s)
    }

    /// An open-loop level (`--rate`): its throughput is the rate asked, not what the
    /// workers could do, so it has no speedup and no place on the capacity curve.
    pub fn is_paced(&self) -> bool {
        self.latency
            .as_ref()
            .is_some_and(|latency| latency.rate.is_some())
    }

    /// An open loop (`--rate`) whose sessions could not keep the asked rate.
    pub fn fell_behind(&self) -> bool {
        self.latency
            .as_ref()
            .and_then(|latency| latency.rate)
            .is_some_and(|rate| !rate.sustained)
    }

    /// A buffer-cache figure and the `workload_figures` name it was recorded under, when the
    /// level's workload recorded it.
    pub fn cache_figure(&self, figure: CacheFigure) -> Option<(f64, &'static str)> {
        figure.find(&self.workload_figures)
    }

    /// Latch misses per 1,000 latch gets, when the level counted gets.
    pub fn latch_misses_per_1k_gets(&self) -> Option<f64> {
        misses_per_1k_gets(
            self.cache_figure(CacheFigure::LatchGets)
                .map(|(gets, _)| gets),
            self.cache_figure(CacheFigure::LatchMisses)
                .map(|(misses, _)| misses),
        )
    }

    /// "jobs did not run together (overlap 12%)", when they did not.
    pub fn apart(&self) -> Option<String> {
        self.summary
            .together
            .filter(|together| together.overlap < together.floor)
            .map(|together| format!("{APART} (overlap {:.0}%)", 100.0 * together.overlap))
    }

    /// "TLSv1.3 TLS_AES_256_GCM_SHA384 for 4 of 4 sessions", or "no TLS", for provenance.
    pub fn connection_summary(&self) -> Option<String> {
        let connections = &self.connections;
        if connections.is_empty() {
            return None;
        }
        let encrypted: Vec<&workload::SessionConnection> = connections
            .iter()
            .filter(|connection| connection.tls)
            .collect();
        if encrypted.is_empty() {
            return Some(format!("no TLS ({} sessions)", connections.len()));
        }
        let mut kinds: Vec<String> = encrypted
            .iter()
            .map(|connection| {
                format!(
                    "{} {}",
                    connection.protocol.as_deref().unwrap_or("TLS"),
                    connection.cipher.as_deref().unwrap_or("")
                )
                .trim()
                .to_string()
            })
            .collect();
        kinds.sort();
        kinds.dedup();
        Some(format!(
            "{} for {} of {} sessions",
            kinds.join(", "),
            encrypted.len(),
            connections.len()
        ))
    }
}
