//! Side-by-side ratios of series that measure the same thing: single-thread speed, capacity at
//! saturation, capacity per physical core and per unit of cost, and a ranking.

use serde::{Deserialize, Serialize};

use super::study::SeriesAnalysis;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// "jobs/min" or the rate unit shared by the series compared.
    pub unit: String,
    /// Ratios are relative to this series (the first given).
    pub baseline: String,
    pub rows: Vec<ComparisonRow>,
    /// Series names by capacity at saturation, largest first.
    pub ranking: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonRow {
    pub name: String,
    /// Speed per worker at 1 worker, when measured.
    pub single_thread_speed: Option<f64>,
    pub saturation_workers: usize,
    pub capacity_at_saturation: f64,
    pub physical_cores: Option<usize>,
    pub logical_cpus: Option<usize>,
    pub capacity_per_core: Option<f64>,
    pub cost: Option<f64>,
    pub capacity_per_cost: Option<f64>,
    pub single_thread_ratio: Option<f64>,
    pub capacity_ratio: f64,
    pub per_core_ratio: Option<f64>,
    pub per_cost_ratio: Option<f64>,
}

pub fn compare(group: &[&SeriesAnalysis]) -> Comparison {
    let mut rows: Vec<ComparisonRow> = group.iter().map(|series| row(series)).collect();
    let baseline = rows[0].clone();
    let ratio = |value: Option<f64>, base: Option<f64>| match (value, base) {
        (Some(value), Some(base)) if base > 0.0 => Some(value / base),
        _ => None,
    };
    for row in &mut rows {
        row.single_thread_ratio = ratio(row.single_thread_speed, baseline.single_thread_speed);
        row.capacity_ratio = row.capacity_at_saturation / baseline.capacity_at_saturation;
        row.per_core_ratio = ratio(row.capacity_per_core, baseline.capacity_per_core);
        row.per_cost_ratio = ratio(row.capacity_per_cost, baseline.capacity_per_cost);
    }
    let mut ranked: Vec<&ComparisonRow> = rows.iter().collect();
    ranked.sort_by(|a, b| {
        b.capacity_at_saturation
            .total_cmp(&a.capacity_at_saturation)
    });
    Comparison {
        unit: group[0].capacity_unit.clone(),
        baseline: baseline.name.clone(),
        ranking: ranked.iter().map(|row| row.name.clone()).collect(),
        rows,
    }
}

fn row(series: &SeriesAnalysis) -> ComparisonRow {
    let (saturation_workers, capacity) =
        series.saturation.as_ref().map_or((0, 0.0), |saturation| {
            (saturation.workers, saturation.capacity)
        });
    let physical = series.series.physical_cores;
    let cost = series.series.cost;
    ComparisonRow {
        name: series.name().to_string(),
        single_thread_speed: series.level(1).map(|level| level.speed),
        saturation_workers,
        capacity_at_saturation: capacity,
        physical_cores: physical,
        logical_cpus: series.series.logical_cpus,
        capacity_per_core: physical.map(|cores| capacity / cores as f64),
        cost,
        capacity_per_cost: cost.filter(|cost| *cost > 0.0).map(|cost| capacity / cost),
        single_thread_ratio: None,
        capacity_ratio: 1.0,
        per_core_ratio: None,
        per_cost_ratio: None,
    }
}
