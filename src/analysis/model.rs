//! What an analysis is: the figures of each series, its fits, the comparisons and the
//! findings, as `report --json` writes them and every renderer draws them. Types only; the
//! modules that compute them (`scaling`, `fit`, `compare`, `findings`, `fleet`) depend on
//! this one, and `study` puts them together.

use serde::{Deserialize, Serialize};

use super::compare::Comparison;
use super::fit::Fit;
use super::fleet::Fleet;
use super::noise::Noise;
use super::scaling::{Knee, Saturation};
use super::series::Series;

pub const REPORT_SCHEMA: &str = "corescale-report/1";

/// CV above this at a level is flagged as noisy.
pub const NOISY_CV: f64 = 0.05;
/// Steal above this percentage at a level is flagged.
pub const NOISY_STEAL_PCT: f64 = 2.0;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub schema: String,
    pub series: Vec<SeriesAnalysis>,
    /// One comparison per group of series that share a measure and unit.
    pub comparisons: Vec<Comparison>,
    /// Several hosts, or one host measured repeatedly: each against its siblings and its own
    /// history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<Fleet>,
    pub findings: Vec<String>,
    pub warnings: Vec<String>,
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
    pub cpu_fraction: Option<f64>,
    pub steal_pct: Option<f64>,
    /// The spread of raw and of speed per worker (low, high), when the file gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_spread: Option<(f64, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_spread: Option<(f64, f64)>,
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
    pub warnings: Vec<String>,
}

impl SeriesAnalysis {
    pub fn name(&self) -> &str {
        &self.series.name
    }

    pub fn level(&self, workers: usize) -> Option<&LevelFigures> {
        self.levels.iter().find(|level| level.workers == workers)
    }
}
