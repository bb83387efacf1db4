//! The whole analysis of a set of series: per-series figures, fits, comparison, findings.
//! This is what `report --json` writes and every renderer draws from.

use serde::{Deserialize, Serialize};

use super::compare::{Comparison, compare};
use super::findings::{MAX_FINDINGS, findings, series_warnings};
use super::fit::{Fit, Model, fit};
use super::fleet::{Fleet, fleet, fleet_findings};
use super::noise::{Noise, noise};
use super::scaling::{Knee, Saturation, knee, saturation, smt_yield, time_per_work};
use super::segments::{self, bic};
use super::series::{Job, Measure, Point, Series};

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

pub fn analyse(series: Vec<Series>) -> Analysis {
    let analysed: Vec<SeriesAnalysis> = series.into_iter().map(analyse_series).collect();
    let groups = measure_groups(&analysed);
    let comparisons = groups
        .iter()
        .filter(|group| group.len() > 1)
        .map(|group| {
            compare(
                &group
                    .iter()
                    .map(|&index| &analysed[index])
                    .collect::<Vec<_>>(),
            )
        })
        .collect::<Vec<_>>();
    let mut warnings: Vec<String> = analysed
        .iter()
        .flat_map(|series| {
            series
                .warnings
                .iter()
                .map(move |warning| format!("{}: {warning}", series.name()))
        })
        .collect();
    warnings.extend(different_jobs(&analysed, &groups));
    let kinds: Vec<&Measure> = groups
        .iter()
        .map(|group| &analysed[group[0]].series.measure)
        .collect();
    if kinds.iter().any(|kind| *kind != kinds[0]) {
        warnings.push(
            "the series measure different things (job times and rates, or different rate units): they are compared only within each kind".to_string(),
        );
    }
    let fleet = fleet(&analysed);
    let mut all_findings = fleet.as_ref().map(fleet_findings).unwrap_or_default();
    all_findings.extend(findings(&analysed, &comparisons));
    all_findings.truncate(MAX_FINDINGS);
    Analysis {
        schema: REPORT_SCHEMA.to_string(),
        fleet,
        findings: all_findings,
        series: analysed,
        comparisons,
        warnings,
    }
}

/// Indices of the series grouped by what they measure (job time, or a rate unit) and the job
/// they ran, groups and members in input order: only series in one group can be compared by
/// speed or capacity, or drawn together.
pub fn measure_groups(series: &[SeriesAnalysis]) -> Vec<Vec<usize>> {
    let mut groups: Vec<((&Measure, &Job), Vec<usize>)> = Vec::new();
    for (index, analysed) in series.iter().enumerate() {
        let key = (&analysed.series.measure, &analysed.series.job);
        match groups.iter_mut().find(|(known, _)| *known == key) {
            Some((_, members)) => members.push(index),
            None => groups.push((key, vec![index])),
        }
    }
    groups.into_iter().map(|(_, members)| members).collect()
}

/// One warning per pair of groups that measure the same kind of figure but ran different
/// jobs: their speed and capacity are not comparable, their scaling is.
fn different_jobs(series: &[SeriesAnalysis], groups: &[Vec<usize>]) -> Vec<String> {
    let mut warnings = Vec::new();
    for (position, group) in groups.iter().enumerate() {
        for other in &groups[position + 1..] {
            let (first, second) = (&series[group[0]], &series[other[0]]);
            if first.series.measure != second.series.measure {
                continue;
            }
            warnings.push(format!(
                "{} ({}) and {} ({}) ran different jobs: compare their speedup and efficiency, not their speed or capacity",
                first.name(),
                first.series.job.describe(),
                second.name(),
                second.series.job.describe()
            ));
        }
    }
    warnings
}

fn analyse_series(series: Series) -> SeriesAnalysis {
    let base = &series.points[0];
    let base_capacity = series.capacity(base);
    let levels = series
        .points
        .iter()
        .map(|point| {
            // Without a 1-worker level, speedup assumes linear scaling up to the first level.
            let speedup = series.capacity(point) / base_capacity * base.workers as f64;
            LevelFigures {
                workers: point.workers,
                raw: point.raw,
                speed: series.speed(point),
                capacity: series.capacity(point),
                speedup,
                efficiency: speedup / point.workers as f64,
                cv: point.cv,
                cpu_fraction: point.cpu_fraction,
                steal_pct: point.steal_pct,
                raw_spread: point.spread,
                speed_spread: point.spread.map(|(low, high)| {
                    let speed = |raw: f64| {
                        series.speed(&Point {
                            raw,
                            ..point.clone()
                        })
                    };
                    let (a, b) = (speed(low), speed(high));
                    (a.min(b), a.max(b))
                }),
            }
        })
        .collect();
    let knee = knee(&series);
    // Where per-worker speed should be flat: up to the knee, or the physical core count
    // when the knee leaves too few levels to measure jitter on.
    let noise = knee
        .as_ref()
        .and_then(|knee| noise(&series, Some(knee.workers)))
        .or_else(|| noise(&series, series.physical_cores));
    let fits = fit_series(&series, knee.as_ref());
    let mut analysed = SeriesAnalysis {
        capacity_unit: series.capacity_unit(),
        speedup_base: base.workers,
        saturation: saturation(&series, knee.as_ref().map(|knee| knee.workers)),
        noise,
        smt_yield: smt_yield(&series),
        knee,
        fits,
        levels,
        warnings: Vec::new(),
        series,
    };
    analysed.warnings = series_warnings(&analysed);
    analysed
}

fn fit_series(series: &Series, knee: Option<&Knee>) -> Fits {
    let up_to = |limit: Option<usize>| -> Vec<(usize, f64)> {
        series
            .points
            .iter()
            .filter(|point| limit.is_none_or(|limit| point.workers <= limit))
            .map(|point| (point.workers, series.capacity(point)))
            .collect()
    };
    let full = up_to(series.logical_cpus);
    let to_knee = knee.map(|knee| up_to(Some(knee.workers)));
    let fit_knee = |model| to_knee.as_deref().and_then(|points| fit(model, points));
    let mut fits = Fits {
        amdahl: fit(Model::Amdahl, &full),
        usl: fit(Model::Usl, &full),
        amdahl_to_knee: fit_knee(Model::Amdahl),
        usl_to_knee: fit_knee(Model::Usl),
        single_curve: None,
        recommended: None,
    };
    fits.single_curve = fits
        .usl
        .as_ref()
        .and_then(|usl| single_curve(series, usl, &full));
    fits.recommended = recommend(&fits);
    fits
}

/// See [`SingleCurve`].
fn single_curve(series: &Series, usl: &Fit, full: &[(usize, f64)]) -> Option<SingleCurve> {
    let (x, y) = time_per_work(series, series.logical_cpus);
    let candidates = segments::candidates(&x, &y);
    let segmented = candidates
        .iter()
        .skip(1)
        .min_by(|a, b| a.bic.total_cmp(&b.bic))?;
    let &(first_workers, first_capacity) = full.first()?;
    let first_time = first_workers as f64 / first_capacity;
    let log_error = |predict: &dyn Fn(f64) -> f64| -> f64 {
        full.iter()
            .map(|&(workers, capacity)| (capacity / predict(workers as f64)).ln().powi(2))
            .sum()
    };
    let segmented_error = log_error(&|n| n / (segmented.predict(n) * first_time));
    let usl_error = log_error(&|n| usl.capacity(n));
    if !segmented_error.is_finite() || !usl_error.is_finite() {
        return None;
    }
    let bic_segmented = bic(segmented_error, full.len(), segmented.parameters());
    let bic_usl = bic(usl_error, full.len(), 3);
    Some(SingleCurve {
        segments: segmented.knots.len() + 1,
        bic_segmented,
        bic_usl,
        misleading: bic_usl - bic_segmented > MISLEADING_EVIDENCE,
    })
}

fn recommend(fits: &Fits) -> Option<FitRange> {
    let misleading = fits
        .single_curve
        .as_ref()
        .is_some_and(|single| single.misleading);
    let usable = |range: FitRange| {
        fits.get(range)
            .is_some_and(|fit| fit.adequate && (fit.model == Model::Amdahl || fit.kappa_measured()))
    };
    let order: &[FitRange] = if misleading {
        &[FitRange::UslToKnee, FitRange::AmdahlToKnee]
    } else {
        &[
            FitRange::Usl,
            FitRange::Amdahl,
            FitRange::UslToKnee,
            FitRange::AmdahlToKnee,
        ]
    };
    order.iter().copied().find(|&range| usable(range))
}
