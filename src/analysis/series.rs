//! A measurement series as the analysis sees it, whatever file it came from: one figure per
//! load level, either a job time (fixed work) or a total rate (fixed time, LIO/s, ...).

use serde::{Deserialize, Serialize};

/// What the raw figure of a series is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Measure {
    /// Median job time in seconds; less is better.
    JobTime,
    /// Total operations per second over all workers, in `unit`; more is better.
    Rate { unit: String },
}

/// One load level of a series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub workers: usize,
    /// Median job time (s) or total rate, per the series' measure.
    pub raw: f64,
    /// Coefficient of variation of the jobs at this level, when known.
    pub cv: Option<f64>,
    pub cpu_fraction: Option<f64>,
    pub steal_pct: Option<f64>,
    /// Why the run judged this level disturbed; empty when clean or not judged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disturbed: Vec<String>,
    /// With --precision: false when the CV target was missed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_reached: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub name: String,
    pub source: String,
    pub measure: Measure,
    /// Sorted by workers, one point per worker count.
    pub points: Vec<Point>,
    pub physical_cores: Option<usize>,
    pub logical_cpus: Option<usize>,
    /// False when the document says the run was interrupted.
    pub complete: bool,
    /// Cost of the server in the user's unit, for price/performance.
    pub cost: Option<f64>,
    /// Levels the run judged disturbed, kept out of every figure (see `leave_out_disturbed`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<Point>,
}

impl Series {
    /// Capacity at a point: jobs per minute over all workers, or the total rate.
    pub fn capacity(&self, point: &Point) -> f64 {
        match self.measure {
            Measure::JobTime => 60.0 * point.workers as f64 / point.raw,
            Measure::Rate { .. } => point.raw,
        }
    }

    /// Speed at a point: jobs per minute per worker, or the rate per worker.
    pub fn speed(&self, point: &Point) -> f64 {
        self.capacity(point) / point.workers as f64
    }

    /// The unit of capacity, for labels.
    pub fn capacity_unit(&self) -> String {
        match &self.measure {
            Measure::JobTime => "jobs/min".to_string(),
            Measure::Rate { unit } => unit.clone(),
        }
    }

    /// Moves the levels the run judged disturbed out of the analysis, unless none would be
    /// left; then they stay, and the series' warnings say so.
    pub fn leave_out_disturbed(&mut self) {
        if self.points.iter().all(|point| !point.disturbed.is_empty()) {
            return;
        }
        let (disturbed, clean) = std::mem::take(&mut self.points)
            .into_iter()
            .partition(|point| !point.disturbed.is_empty());
        self.points = clean;
        self.left_out = disturbed;
    }

    pub fn point(&self, workers: usize) -> Option<&Point> {
        self.points.iter().find(|point| point.workers == workers)
    }
}
