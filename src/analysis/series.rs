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

    pub fn point(&self, workers: usize) -> Option<&Point> {
        self.points.iter().find(|point| point.workers == workers)
    }
}
