//! What an analysis is: the figures of each series, its fits, the comparisons and the
//! findings, as `report --json` writes them and every renderer draws them. Types only; the
//! modules that compute them (`scaling`, `fit`, `compare`, `findings`, `fleet`) depend on
//! this one, and `study` puts them together.

use serde::{Deserialize, Serialize};

use super::fit::{Fit, Inadequacy, Model};
use super::noise::Noise;
use super::scaling::{Knee, Saturation};
use super::series::{Job, Series};

pub const REPORT_SCHEMA: &str = "corescale-report/1";

/// CV above this at a level is flagged as noisy.
pub const NOISY_CV: f64 = 0.05;
/// Steal above this percentage at a level is flagged.
pub const NOISY_STEAL_PCT: f64 = 2.0;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub schema: String,
    /// The one sentence a proposal quotes: a server in a cluster's nodes, or one server's
    /// capacity in another's, at saturation or at `--slo`'s objective.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Answer>,
    pub series: Vec<SeriesAnalysis>,
    /// One comparison per group of series that share a measure and unit.
    pub comparisons: Vec<Comparison>,
    /// Several hosts, or one host measured repeatedly: each against its siblings and its own
    /// history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<Fleet>,
    pub findings: Vec<String>,
    pub warnings: Vec<String>,
    /// `report --slo`: where each series kept the latency objective.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<SloReport>,
    /// Each series' open-loop levels (`run db --rate`), apart from its capacity curve.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open_loop: Vec<super::latency::OpenLoopSeries>,
    /// Replays of one capture compared statement by statement, at each speed both ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statements: Vec<super::statements::StatementComparison>,
}

impl Analysis {
    /// Every series reported, those measured at set rates only included, in input order.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.series.iter().map(|series| series.name()).collect();
        for open in &self.open_loop {
            if !names.contains(&open.series.as_str()) {
                names.push(&open.series);
            }
        }
        names
    }
}

/// The answer, and what it rests on (`answer` in `report --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub sentence: String,
    /// The series that replaces, and the one it is counted against.
    pub server: String,
    pub against: String,
    /// The nodes of `against`, when it is a cluster: `equivalent` is then in its nodes;
    /// otherwise `equivalent` is a ratio of capacities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<usize>,
    /// None when it cannot be said (`why_not`).
    pub equivalent: Option<f64>,
    /// The 95% half-width of `equivalent`, in its unit; None when unknown.
    pub uncertainty: Option<f64>,
    /// `equivalent` is a lower ("at_least") or upper ("at_most") bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<Bound>,
    /// "p99 <= 3 ms" with `--slo`; None: at saturation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objective: Option<String>,
    /// The levels compared: each side's workers.
    pub server_workers: Option<usize>,
    pub against_workers: Option<usize>,
    /// Why the figure asked for cannot be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
    /// A migration's answer, from two replays of one capture: `equivalent` is then the
    /// ratio of the largest speeds each kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration: Option<Migration>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    AtLeast,
    AtMost,
}

/// A latency objective's verdict on every series, and the series compared on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SloReport {
    /// "p99 <= 5 ms".
    pub objective: String,
    pub verdicts: Vec<super::latency::SloVerdict>,
    pub comparisons: Vec<String>,
}

/// Figures of one level, as plotted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelFigures {
    pub workers: usize,
    /// Job time (s) or total rate.
    pub raw: f64,
    pub speed: f64,
    pub capacity: f64,
    pub speedup: f64,
    pub efficiency: f64,
    pub cv: Option<f64>,
    /// The 95% half-width of capacity, relative, from the level's batches (Student's t).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_uncertainty: Option<f64>,
    pub cpu_fraction: Option<f64>,
    pub steal_pct: Option<f64>,
    /// The spread of raw and of speed per worker (low, high), when the file gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_spread: Option<(f64, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_spread: Option<(f64, f64)>,
    /// Hit ratio, latch misses, PIO/s and read p99, for lio, pio and db levels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<super::series::CacheFigures>,
    /// Response times: of each statement, or each job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Box<crate::latency::Latency>>,
    /// The workload's own figures of the level, by name (`levels[].workload_figures`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub figures: std::collections::BTreeMap<String, f64>,
    /// Why the run judged this level disturbed, when it was and `--include-disturbed` kept
    /// it: every figure draws it hollow and every table marks it `!`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disturbed: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fits {
    /// Over every level up to the logical-CPU count (all levels when it is unknown).
    pub amdahl: Option<Fit>,
    pub usl: Option<Fit>,
    /// Over the levels up to the knee, where scaling is one regime.
    pub amdahl_to_knee: Option<Fit>,
    pub usl_to_knee: Option<Fit>,
    /// One USL curve over the full range against the best segmented fit of the same levels.
    pub single_curve: Option<SingleCurve>,
    /// The fit the findings quote and figure 4 draws: the first adequate one of the full-range
    /// USL (when kappa is measured), the full-range Amdahl, the USL to the knee (kappa
    /// measured) and the Amdahl to the knee; full-range fits only when one curve is not
    /// misleading.
    pub recommended: Option<FitRange>,
}

/// Which of the four fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FitRange {
    Amdahl,
    Usl,
    AmdahlToKnee,
    UslToKnee,
}

impl Fits {
    pub fn get(&self, range: FitRange) -> Option<&Fit> {
        match range {
            FitRange::Amdahl => self.amdahl.as_ref(),
            FitRange::Usl => self.usl.as_ref(),
            FitRange::AmdahlToKnee => self.amdahl_to_knee.as_ref(),
            FitRange::UslToKnee => self.usl_to_knee.as_ref(),
        }
    }

    pub fn recommended_fit(&self) -> Option<&Fit> {
        self.get(self.recommended?)
    }

    /// Whether one curve over both sides of a bend would average two regimes.
    pub fn misleading(&self) -> bool {
        self.single_curve
            .as_ref()
            .is_some_and(|single| single.misleading)
    }

    /// Why a fit is quoted or not, by the rule that picks the recommended one.
    pub fn use_of(&self, range: FitRange) -> Option<FitUse> {
        let fit = self.get(range)?;
        Some(if self.recommended == Some(range) {
            FitUse::Quoted
        } else if let Some(why) = fit.inadequacy.filter(|_| !fit.adequate) {
            FitUse::Inadequate(why)
        } else if self.misleading() && matches!(range, FitRange::Amdahl | FitRange::Usl) {
            FitUse::SpansTheBend
        } else if fit.model == Model::Usl && !fit.kappa_measured() {
            FitUse::KappaNotMeasured
        } else {
            FitUse::Adequate
        })
    }
}

/// Why a fit is or is not the one the findings quote and figure 4 draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FitUse {
    Quoted,
    Inadequate(Inadequacy),
    /// A full-range fit where scaling bends: one curve averages two regimes.
    SpansTheBend,
    /// A USL whose kappa sits at 0: Amdahl says the same with one coefficient fewer.
    KappaNotMeasured,
    /// Describes its data, but another fit comes first.
    Adequate,
}

/// Whether a single curve can describe the full range: the USL against a continuous two- or
/// three-segment fit of the same levels, by the Bayesian information criterion on the log of
/// capacity (each segmented breakpoint counted as a coefficient).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SingleCurve {
    pub segments: usize,
    pub bic_segmented: f64,
    pub bic_usl: f64,
    /// The segmented fit is better by more than `MISLEADING_EVIDENCE`.
    pub misleading: bool,
}

/// BIC difference above which one USL curve is called misleading (very strong evidence).
pub const MISLEADING_EVIDENCE: f64 = 10.0;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesAnalysis {
    pub series: Series,
    /// Labels: "jobs/min" or the rate unit.
    pub capacity_unit: String,
    pub levels: Vec<LevelFigures>,
    /// The worker count speedup is relative to (1 unless the series starts higher).
    pub speedup_base: usize,
    pub knee: Option<Knee>,
    /// Level-to-level jitter of per-worker speed up to the knee.
    pub noise: Option<Noise>,
    pub saturation: Option<Saturation>,
    pub smt_yield: Option<f64>,
    pub fits: Fits,
    /// Where statement latency starts to climb faster than throughput.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_bend: Option<super::latency::LatencyBend>,
    pub warnings: Vec<String>,
    /// What the fits cannot support (a bend one curve would average, fits that miss the
    /// data's shape): said beside the fits table, not among the warnings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fit_notes: Vec<String>,
}

impl SeriesAnalysis {
    pub fn name(&self) -> &str {
        &self.series.name
    }

    pub fn level(&self, workers: usize) -> Option<&LevelFigures> {
        self.levels.iter().find(|level| level.workers == workers)
    }

    /// The relative 95% uncertainty of the capacity at `workers`: from the level's batches
    /// (Student's t), never below twice the series' level-to-level jitter; None when neither
    /// is known.
    pub fn capacity_uncertainty(&self, workers: usize) -> Option<f64> {
        let batches = self
            .level(workers)
            .and_then(|level| level.capacity_uncertainty);
        let jitter = self.noise.as_ref().map(|noise| 2.0 * noise.jitter);
        match (batches, jitter) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }
}

// Comparisons between series (computed by `compare`).

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// "jobs/min" or the rate unit shared by the series compared.
    pub unit: String,
    /// Ratios in `rows` are relative to this series (the first given).
    pub baseline: String,
    pub rows: Vec<ComparisonRow>,
    /// The names of the series whose capacity was estimated, by capacity at saturation,
    /// largest first; when any is censored (its capacity only a lower bound), by capacity at
    /// the largest load all of them measured. Series without an estimate are not ranked.
    pub ranking: Vec<String>,
    /// The leader (first in the ranking) against each other series: what the findings say.
    pub leader_against: Vec<Versus>,
    /// p99 of the statements at the loads every series measured (closed loop, each level
    /// with enough statements to read it); absent unless two series timed statements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_at_loads: Option<super::latency::LatencyAtLoads>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonRow {
    pub name: String,
    /// Robust single-thread speed: the median per-worker speed over the first levels while
    /// they stay within the noise band of each other (see `single_thread_workers`).
    pub single_thread_speed: Option<f64>,
    /// The worker counts that baseline is the median of.
    #[serde(default)]
    pub single_thread_workers: Vec<usize>,
    /// Where the plateau starts; null when the capacity could not be estimated.
    pub saturation_workers: Option<usize>,
    /// The plateau capacity (a lower bound when `saturation_censored`); null when it could
    /// not be estimated.
    pub capacity_at_saturation: Option<f64>,
    #[serde(default)]
    pub saturation_censored: bool,
    /// Where the plateau starts cannot be told from the batches: its capacity is no
    /// estimate to compare (the series table says "untold").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub saturation_untold: bool,
    pub physical_cores: Option<usize>,
    pub logical_cpus: Option<usize>,
    pub capacity_per_core: Option<f64>,
    pub cost: Option<f64>,
    pub capacity_per_cost: Option<f64>,
    pub per_core_ratio: Option<f64>,
    pub per_cost_ratio: Option<f64>,
    /// This series against the baseline.
    #[serde(flatten)]
    pub versus: Versus,
}

/// One series against another (`against`): every ratio is this one's figure over the other's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Versus {
    /// This series' name (the numerator).
    #[serde(default)]
    pub series: String,
    pub against: String,
    pub single_thread_ratio: Option<f64>,
    /// Plateau capacity over the other's plateau capacity; null when either is unknown.
    pub capacity_ratio: Option<f64>,
    /// At every worker count both measured.
    #[serde(default)]
    pub by_load: Vec<LoadRatio>,
    /// Levels up to the smaller physical core count of the two.
    pub low_load: Option<BandRatio>,
    /// Levels from the larger physical core count to the smaller logical CPU count.
    pub high_load: Option<BandRatio>,
    /// When either side's saturation is censored: the ratios at the largest load both measured.
    pub common_load: Option<LoadRatio>,
    /// The speed ratios at low load (median, smallest and largest; else the single-thread
    /// ratio) all lie within the noise of 1: the two are called similar, not faster or slower.
    #[serde(default)]
    pub similar_speed: bool,
    /// At low load the ratio's median is within the noise of 1 but its ends are not: one is
    /// faster at some loads, the other at others.
    #[serde(default)]
    pub speed_crosses: bool,
    /// The capacity ratio lies within the noise of 1 (never said of a censored capacity).
    #[serde(default)]
    pub similar_capacity: bool,
    /// Ratios closer to 1 than this (as a fraction) are within the noise of the two series:
    /// 2 x their combined jitter.
    #[serde(default)]
    pub noise_margin: f64,
    /// The 95% uncertainty of the speed ratios here, relative (0.03: ±3%): twice the two
    /// series' measured level-to-level noise combined. A ratio r is quoted r ± r x this.
    #[serde(default)]
    pub ratio_uncertainty: f64,
    /// The relative 95% uncertainty of the capacity ratio: each side's level uncertainty
    /// from its batches (Student's t), never below its jitter; None when neither is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_ratio_uncertainty: Option<f64>,
    /// A single server against a cluster (either way round): how many of the cluster's
    /// nodes the server's capacity equals, as CERN's 2007 study put a new server against its
    /// production RACs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_equivalence: Option<NodeEquivalence>,
}

/// "The server delivers the capacity of 4.6 of the cluster's 6 nodes".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeEquivalence {
    pub server: String,
    pub cluster: String,
    /// The instances the cluster's sessions were spread over.
    pub nodes: usize,
    /// The server's capacity over one node's share of the cluster's.
    pub equivalent_nodes: f64,
    /// Where the capacities were taken: None at saturation; else the largest load both
    /// measured (a capacity still rising at its last level).
    pub at_workers: Option<usize>,
    /// At equal response time: the cluster's statement p99 at its saturation level, and the
    /// server's largest capacity at a p99 no worse, in the cluster's nodes (absent unless
    /// both series timed statements and the server met that p99 at some level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_p99_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equivalent_nodes_at_p99: Option<f64>,
}

impl Versus {
    /// A ratio with its uncertainty, for people: "1.35x ± 0.05".
    pub fn shown(&self, ratio: f64) -> String {
        crate::format::with_uncertainty(ratio, Some(ratio * self.ratio_uncertainty))
            .replacen(" ± ", "x ± ", 1)
    }

    /// A capacity ratio with its uncertainty ("1.35x ± 0.05"), or without one where it is
    /// unknown; never "± 0.00".
    pub fn shown_capacity(&self, ratio: f64) -> String {
        let uncertainty = self
            .capacity_ratio_uncertainty
            .map(|relative| relative * ratio);
        match uncertainty {
            // "2.09 ± 0.55" read as a ratio: "2.09x ± 0.55".
            Some(_) => {
                crate::format::with_uncertainty(ratio, uncertainty).replacen(" ± ", "x ± ", 1)
            }
            None => format!("{ratio:.2}x (uncertainty unknown)"),
        }
    }
}

/// Ratios at one worker count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadRatio {
    pub workers: usize,
    pub speed_ratio: f64,
    pub capacity_ratio: f64,
}

/// The per-worker speed ratio over a band of levels: the median, with its spread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandRatio {
    pub from_workers: usize,
    pub to_workers: usize,
    pub levels: usize,
    pub speed_ratio: f64,
    pub speed_ratio_min: f64,
    pub speed_ratio_max: f64,
    /// Where the smallest and the largest ratio were measured.
    pub min_workers: usize,
    pub max_workers: usize,
}

// The fleet view (computed by `fleet`).

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fleet {
    /// One row per host, in input order.
    pub hosts: Vec<FleetHost>,
    /// Hosts with the same CPU model, core counts, measure and job.
    pub groups: Vec<SiblingGroup>,
    /// Hosts measured more than once.
    pub histories: Vec<HostHistory>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetHost {
    pub host: String,
    pub cpu_model: Option<String>,
    pub physical_cores: Option<usize>,
    pub logical_cpus: Option<usize>,
    pub runs: usize,
    /// Medians over the host's runs; capacity only from runs that gave an estimate.
    pub single_thread_speed: Option<f64>,
    pub capacity: Option<f64>,
    /// Some run was still rising at its last level: the capacity is a lower bound.
    pub capacity_is_lower_bound: bool,
    /// "clean", or how many of its runs were disturbed, or "not judged".
    pub verdict: String,
    /// Index into `groups`.
    pub group: usize,
    /// The figure the host is compared on (its group's `figure_name`): capacity at
    /// saturation, or at `SiblingGroup::compared_at` workers; null when it has none.
    #[serde(default)]
    pub compared: Option<f64>,
    /// `compared` and single-thread speed over the median of the host's siblings, the other
    /// hosts of its group.
    pub capacity_vs_group: Option<f64>,
    pub speed_vs_group: Option<f64>,
    /// Capacity departs from the group median by more than the group's threshold.
    pub outlier: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SiblingGroup {
    pub cpu_model: Option<String>,
    pub physical_cores: Option<usize>,
    pub logical_cpus: Option<usize>,
    pub job: Job,
    pub hosts: Vec<String>,
    pub median_capacity: f64,
    /// When some host's capacity is only a lower bound, capacities are compared at the
    /// largest load every host of the group measured, this many workers.
    pub compared_at: Option<usize>,
    /// A host's capacity ratio must depart from 1 by more than this to be an outlier: the
    /// larger of 3 robust deviations of the group's ratios, 2·√2 times the hosts' median
    /// jitter, and 3% (`threshold_is_floor` when the floor decided).
    pub threshold: f64,
    pub threshold_is_floor: bool,
    /// Whether outliers could be named: with fewer than 3 hosts, or a threshold above
    /// [`MAX_THRESHOLD`], none is.
    #[serde(default)]
    pub outliers: OutlierCall,
}

/// A departure larger than this between measurements of identical servers says the runs
/// are too noisy to single one out.
pub const MAX_THRESHOLD: f64 = 0.25;

/// Whether a group (or a host's history) can single out an outlier.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutlierCall {
    /// Outliers beyond `threshold` are named.
    #[default]
    Named,
    /// Fewer than 3 values: none is the odd one.
    TooFew,
    /// The values spread beyond `MAX_THRESHOLD`: none can be singled out.
    TooNoisy,
}

impl Fleet {
    /// The figure every group of two hosts or more is compared on, when they share one (the
    /// fleet table's column and chart are named by it; else each cell says its own).
    pub fn shared_figure_name(&self) -> Option<String> {
        let mut names = self
            .groups
            .iter()
            .filter(|group| group.hosts.len() > 1)
            .map(SiblingGroup::figure_name);
        let first = names.next()?;
        names.all(|name| name == first).then_some(first)
    }
}

impl SiblingGroup {
    /// What the group's hosts are compared on, in words: at one worker, capacity is the
    /// single-thread speed.
    pub fn figure_name(&self) -> String {
        match self.compared_at {
            None => "capacity at saturation".to_string(),
            Some(1) => "single-thread speed".to_string(),
            Some(workers) => format!("capacity at {workers} workers"),
        }
    }

    /// "threshold ±5% from the measured noise", or why no outlier is named.
    pub fn threshold_text(&self) -> String {
        threshold_text(
            self.outliers,
            self.threshold,
            Some(self.threshold_is_floor),
            "hosts",
        )
    }
}

impl HostHistory {
    /// "threshold ±5% from the measured noise", or why no departure is named.
    pub fn threshold_text(&self) -> String {
        threshold_text(self.outliers, self.threshold, None, "runs")
    }
}

/// The threshold of a group or a history in words.
/// `floor`: whether the 3% floor decided it, when known.
pub fn threshold_text(
    call: OutlierCall,
    threshold: f64,
    floor: Option<bool>,
    what: &str,
) -> String {
    match call {
        OutlierCall::TooFew => format!("too few {what} to name outliers"),
        OutlierCall::TooNoisy => format!(
            "too noisy to name outliers: spread ±{:.0}%",
            100.0 * threshold
        ),
        OutlierCall::Named => match floor {
            Some(true) => format!(
                "threshold ±{:.0}%, above the measured noise",
                100.0 * threshold
            ),
            Some(false) => format!(
                "threshold ±{:.0}% from the measured noise",
                100.0 * threshold
            ),
            None => format!("threshold ±{:.0}%", 100.0 * threshold),
        },
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostHistory {
    pub host: String,
    /// In the order the runs started.
    pub runs: Vec<HistoryRun>,
    pub median_capacity: f64,
    /// A run departing from the median by more than this is called out: the larger of 3
    /// robust deviations of the runs' capacities, 2·√2 times the runs' median jitter, and 3%.
    pub threshold: f64,
    /// Whether departures could be named (3 runs with a capacity at least, a threshold at
    /// most [`MAX_THRESHOLD`]).
    #[serde(default)]
    pub outliers: OutlierCall,
    /// Per load level over the runs (the OCPU study's table): median and range.
    pub levels: Vec<HistoryLevel>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryRun {
    pub series: String,
    pub started_at: Option<String>,
    /// None when the run gave no capacity estimate (too few levels kept).
    pub capacity: Option<f64>,
    pub single_thread_speed: Option<f64>,
    /// The largest steal of any level of the run, in percent.
    pub steal_pct: Option<f64>,
    /// Capacity over the host's median.
    pub capacity_vs_history: Option<f64>,
    pub departs: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryLevel {
    pub workers: usize,
    pub runs: usize,
    pub capacity_median: f64,
    pub capacity_min: f64,
    pub capacity_max: f64,
    pub cpu_fraction_median: Option<f64>,
    /// Median capacity over the median capacity at the first level, times its workers.
    pub speedup_median: f64,
}

/// What the migration's answer rests on (`answer.migration` in `report --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Migration {
    /// The largest speed each kept: the candidate's, the baseline's; None where it fell
    /// behind at its first.
    pub kept_speed: Option<f64>,
    pub baseline_kept_speed: Option<f64>,
    /// The speed the statements were compared at (the lowest both replayed).
    pub speed: f64,
    /// The statements' weighted change there, with its 95% interval.
    pub change: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_interval: Option<[f64; 2]>,
    pub regressed: usize,
    pub statements: usize,
    /// The share of the statements compared whose rows and outcome matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows_matched: Option<f64>,
}
