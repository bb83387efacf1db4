//! Plain sentences from the numbers, in the manner of the "Key findings" of CERN's test_cpu_parallel study, and the
//! warnings for what the data cannot support.

use super::fit::Model;
use super::model::{
    Comparison, ComparisonRow, FitRange, NOISY_CV, NOISY_STEAL_PCT, SeriesAnalysis, Versus,
};
use super::noise::NOISY_JITTER;
use crate::format::{significant, workers_text};

mod price;

/// At most this many findings are written, the answer among them.
pub(crate) const MAX_FINDINGS: usize = 9;

/// `answered`: the two series the answer compares, whose capacities it says: their own
/// sentence says how they compare per worker, not their capacities a second time.
pub(crate) fn findings(
    series: &[SeriesAnalysis],
    comparisons: &[Comparison],
    answered: Option<(&str, &str)>,
) -> Vec<String> {
    let mut sentences: Vec<String> = disturbed_sentence(series).into_iter().collect();
    sentences.extend(
        comparisons
            .iter()
            .flat_map(|comparison| leader_sentences(comparison, answered)),
    );
    sentences.extend(series.iter().filter_map(limit_sentence));
    sentences.extend(series.iter().filter_map(superlinear_sentence));
    sentences.extend(series.iter().map(scaling_sentence));
    sentences.extend(comparisons.iter().filter_map(price::cost_sentence));
    sentences.extend(comparisons.iter().filter_map(price::price_sentence));
    sentences.extend(series.iter().filter_map(fit_sentence));
    sentences.truncate(MAX_FINDINGS);
    sentences
}

/// When `--include-disturbed` kept levels the runs judged disturbed, the report opens with
/// it: which levels, and that their figures may not describe the host.
pub(crate) fn disturbed_sentence(series: &[SeriesAnalysis]) -> Option<String> {
    let kept: Vec<String> = series
        .iter()
        .filter_map(|series| {
            let workers: Vec<String> = series
                .levels
                .iter()
                .filter(|level| !level.disturbed.is_empty())
                .map(|level| level.workers.to_string())
                .collect();
            (!workers.is_empty()).then(|| {
                format!(
                    "{} at {} worker{}",
                    series.name(),
                    workers.join(", "),
                    if workers == ["1"] { "" } else { "s" }
                )
            })
        })
        .collect();
    (!kept.is_empty()).then(|| {
        format!(
            "Kept though disturbed while measured (--include-disturbed): {}; those figures (hollow in the figures, marked ! in the tables) may not describe the host.",
            kept.join("; ")
        )
    })
}

/// A run inside a container or a capped VM measured what it was given: the limit is named as
/// what bounded capacity, with the steal the hypervisor took beside it when it took some.
fn limit_sentence(series: &SeriesAnalysis) -> Option<String> {
    let limit = series.series.provenance.cpu_limit.as_ref()?;
    let capacity = series
        .saturation
        .as_ref()
        .map_or_else(String::new, |saturation| {
            format!(
                " ({} {})",
                crate::format::significant(saturation.capacity),
                series.series.capacity_unit()
            )
        });
    let steal = series
        .levels
        .iter()
        .filter_map(|level| level.steal_pct)
        .fold(0.0_f64, f64::max);
    Some(format!(
        "{} ran under {limit}: its capacity{capacity} stops at what that limit gives, not at the host's {} logical CPUs{}.",
        series.name(),
        series
            .series
            .logical_cpus
            .map_or("?".to_string(), |cpus| cpus.to_string()),
        if steal > 2.0 {
            format!("; the hypervisor also stole up to {steal:.1}% of CPU time")
        } else {
            String::new()
        }
    ))
}

/// A speedup above what the load's CPUs can give (its workers, or the host's logical CPUs
/// when fewer) is not scaling: it is said with its likely causes, first among the series'
/// own findings, as every figure built on speedup overstates.
fn superlinear_sentence(series: &SeriesAnalysis) -> Option<String> {
    let margin = series.noise.as_ref().map_or(SUPERLINEAR_MARGIN, |noise| {
        (2.0 * noise.jitter).max(SUPERLINEAR_MARGIN)
    });
    let base = series.level(series.speedup_base);
    // The CPUs bound speedup only where one worker kept about a CPU busy: workers that wait
    // (on a server's disk, on round trips) may together do more than CPUs alone would say.
    let cpu_bound = base
        .and_then(|base| base.cpu_fraction)
        .is_some_and(|fraction| fraction >= CPU_BOUND);
    let cpus = series
        .series
        .logical_cpus
        .filter(|cpus| *cpus > 0 && cpu_bound);
    let base_uncertainty = base
        .and_then(|base| base.capacity_uncertainty)
        .unwrap_or(0.0);
    let (level, limit) = series
        .levels
        .iter()
        .filter(|level| level.workers > series.speedup_base)
        .map(|level| {
            let limit = cpus.map_or(level.workers, |cpus| cpus.min(level.workers));
            (level, limit)
        })
        .filter(|(level, limit)| {
            let allowed = level
                .capacity_uncertainty
                .unwrap_or(0.0)
                .hypot(base_uncertainty)
                .max(margin);
            level.speedup > *limit as f64 * (1.0 + allowed)
        })
        .max_by(|a, b| (a.0.speedup / a.1 as f64).total_cmp(&(b.0.speedup / b.1 as f64)))?;
    let shared = series.series.provenance.connection.is_some() && cpus.is_some();
    let what = if limit < level.workers || cpus == Some(level.workers) {
        if shared {
            format!("the {limit} logical CPUs that client and server shared on one host")
        } else {
            format!("the host's {limit} logical CPUs")
        }
    } else {
        format!("its {} workers", level.workers)
    };
    Some(format!(
        "{}: speedup {:.2} at {} is more than {what} can give: more than linear, so speedup, efficiency and the fits overstate its scaling; likely causes are a cold first level (caches, a buffer pool or the OS page cache still warming while {} measured) or work that grows cheaper with load (caching, batching); warm up before measuring, or measure {} again.",
        series.name(),
        level.speedup,
        workers_text(level.workers),
        workers_text(series.speedup_base),
        workers_text(series.speedup_base),
    ))
}

/// A speedup this far above the CPUs available is flagged even where the noise is smaller.
const SUPERLINEAR_MARGIN: f64 = 0.10;
/// A worker on CPU this share of the time is CPU-bound: the CPUs then bound speedup.
const CPU_BOUND: f64 = 0.8;

/// How each series compares with the leader (the largest capacity), per worker and in
/// capacity, across the load range: `comparisons[].leader_against[]` in words.
fn leader_sentences(comparison: &Comparison, answered: Option<(&str, &str)>) -> Vec<String> {
    let find = |name: &str| comparison.rows.iter().find(|row| row.name == name);
    comparison
        .leader_against
        .iter()
        .filter_map(|versus| {
            let pair = (versus.series.as_str(), versus.against.as_str());
            if answered.is_some_and(|(a, b)| pair == (a, b) || pair == (b, a)) {
                return Some(format!("{}.", speed_clause(versus)));
            }
            Some(leader_versus(
                versus,
                find(&versus.series)?,
                find(&versus.against)?,
            ))
        })
        .collect()
}

fn leader_versus(versus: &Versus, leader: &ComparisonRow, other: &ComparisonRow) -> String {
    let cores = match (leader.physical_cores, other.physical_cores) {
        (Some(a), Some(b)) if a < b => format!(", despite {a} vs {b} physical cores"),
        (Some(a), Some(b)) if a > b => format!(", with {a} vs {b} physical cores"),
        (Some(a), Some(_)) => format!(", with the same {a} physical cores"),
        _ => String::new(),
    };
    let capacity = versus.capacity_ratio.unwrap_or(f64::NAN);
    let at_common = versus
        .common_load
        .as_ref()
        .map_or_else(String::new, |common| {
            format!(
                "; at {}, the largest load both measured, {:.2}x",
                workers_text(common.workers),
                common.capacity_ratio
            )
        });
    // A censored capacity is a lower bound: the ratio is one too when it is the leader's,
    // an upper bound when it is the other's, and unbounded either way when both are.
    let no_estimate = [leader, other]
        .into_iter()
        .find(|row| row.capacity_at_saturation.is_none());
    let untold: Vec<&str> = [leader, other]
        .into_iter()
        .filter(|row| row.saturation_untold)
        .map(|row| row.name.as_str())
        .collect();
    let capacity_text = match (leader.saturation_censored, other.saturation_censored) {
        _ if !untold.is_empty() => format!(
            "where {} saturates cannot be told from its batches, so capacities at saturation are not compared{at_common}{cores}",
            untold.join(" and ")
        ),
        _ if no_estimate.is_some() || !capacity.is_finite() => format!(
            "the capacity of {} could not be estimated (too few levels kept), so capacities are not compared{cores}",
            no_estimate.map_or(other.name.as_str(), |row| row.name.as_str())
        ),
        (false, false) if versus.similar_capacity => format!(
            "the two have similar capacity at saturation ({capacity:.2}x, within the noise){cores}"
        ),
        (false, false) => format!(
            "{} has {} the capacity of {} at saturation{cores}",
            leader.name,
            versus.shown_capacity(capacity),
            other.name
        ),
        (true, false) => format!(
            "{} has at least {capacity:.2}x the capacity of {} at saturation ({} was still rising at its last level){at_common}{cores}",
            leader.name, other.name, leader.name
        ),
        (false, true) => format!(
            "{} has at most {capacity:.2}x the capacity of {} at saturation ({} was still rising at its last level){at_common}{cores}",
            leader.name, other.name, other.name
        ),
        (true, true) => format!(
            "both were still rising at their last levels, so their capacities at saturation cannot be compared{at_common}{cores}"
        ),
    };
    format!("{}; {capacity_text}.", speed_clause(versus))
}

/// Where neither a low-load band nor one worker is shared: the median speed ratio over the
/// loads both measured, with those loads named.
fn common_loads(versus: &Versus) -> Option<(f64, String)> {
    let mut ratios: Vec<f64> = versus.by_load.iter().map(|load| load.speed_ratio).collect();
    if ratios.is_empty() {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    let median = crate::stats::median(&ratios);
    let loads: Vec<String> = versus
        .by_load
        .iter()
        .map(|load| load.workers.to_string())
        .collect();
    let named = match loads.as_slice() {
        [one] => format!("{one} workers"),
        [rest @ .., last] => format!("{} and {last} workers", rest.join(", ")),
        [] => String::new(),
    };
    Some((median, format!(" at the loads both measured ({named})")))
}

/// Per-worker speed: the low-load band (else single-threaded), and the high-load band.
fn speed_clause(versus: &Versus) -> String {
    let (leader, other) = (&versus.series, &versus.against);
    let single = versus.single_thread_ratio;
    let low = versus.low_load.as_ref();
    if versus.speed_crosses
        && let Some(low) = low
    {
        let (at_low, at_high) = (low.speed_ratio_min, low.speed_ratio_max);
        return format!(
            "{leader} and {other} trade places per worker up to {}: {other} is {:.2}x faster at {} workers, {leader} {:.2}x faster at {}",
            workers_text(low.to_workers),
            1.0 / at_low,
            low.min_workers,
            at_high,
            low.max_workers
        );
    }
    if versus.similar_speed {
        return match low {
            Some(low) => format!(
                "{leader} and {other} are similar per worker up to {} ({:.2}x, {:.2}-{:.2}x over the levels, within the noise)",
                workers_text(low.to_workers),
                low.speed_ratio,
                low.speed_ratio_min,
                low.speed_ratio_max,
            ),
            None => format!("{leader} and {other} are similar single-threaded (within the noise)"),
        };
    }
    let (reference, range) = match (low, single) {
        (Some(low), _) => (
            low.speed_ratio,
            format!(" up to {}", workers_text(low.to_workers)),
        ),
        (None, Some(single)) => (single, " single-threaded".to_string()),
        (None, None) => match common_loads(versus) {
            Some(common) => common,
            None => return format!("{leader} and {other} have no load level in common"),
        },
    };
    // Said from the faster one's side.
    let orient = |ratio: f64| if reference >= 1.0 { ratio } else { 1.0 / ratio };
    let (faster, slower) = if reference >= 1.0 {
        (leader, other)
    } else {
        (other, leader)
    };
    let factor = orient(reference);
    let mut clause = format!(
        "{faster} is {} faster per worker than {slower}{range}",
        versus.shown(factor)
    );
    if let (Some(single), Some(_)) = (single, low) {
        clause.push_str(&format!(" ({:.2}x single-threaded)", orient(single)));
    }
    if let Some(high) = &versus.high_load {
        let at_high = orient(high.speed_ratio);
        let span = format!("{}-{} workers", high.from_workers, high.to_workers);
        clause.push_str(&if at_high < 1.0 {
            format!(
                "; at high load ({span}) {slower} is {:.2}x faster instead",
                1.0 / at_high
            )
        } else {
            let trend = if (at_high / factor).ln().abs() <= versus.noise_margin {
                "holds at"
            } else if at_high < factor {
                "narrows to"
            } else {
                "widens to"
            };
            format!(
                "; the gap {trend} {} at high load ({span})",
                versus.shown(at_high)
            )
        });
    }
    clause
}

/// A series' one level as it was measured: "4 workers, 1.01 K tps, latency average 3.96
/// ms" (an imported tool's summary gives a mean only), or its p99 where one was measured.
fn only_level(level: &super::model::LevelFigures, unit: &str) -> String {
    let latency = match (&level.latency, level.figures.get("latency_average_ms")) {
        (Some(latency), _) => format!(", p99 {} ms", significant(latency.response.p99_ms)),
        (None, Some(mean)) => format!(", latency average {} ms", significant(*mean)),
        (None, None) => String::new(),
    };
    format!(
        "{}, {} {unit}{latency}",
        workers_text(level.workers),
        significant(level.capacity)
    )
}

/// Where one series bends and saturates.
fn scaling_sentence(series: &SeriesAnalysis) -> String {
    let name = series.name();
    let unit = &series.capacity_unit;
    let mut sentence = match &series.knee {
        Some(knee) => {
            let cores = match series.series.physical_cores {
                Some(cores) if cores == knee.workers => " (its physical core count)".to_string(),
                Some(cores) => format!(" ({cores} physical cores)"),
                None => String::new(),
            };
            // The droop is stated as the fact it is, never beside "almost linearly".
            let change = if knee.droop.abs() < 0.005 {
                "stays level".to_string()
            } else {
                format!(
                    "{} {:.0}%",
                    if knee.droop < 0.0 { "falls" } else { "rises" },
                    100.0 * knee.droop.abs()
                )
            };
            format!(
                "{name}: speed per worker {change} from {} to {} workers, then drops faster past {}{cores}",
                series.speedup_base,
                knee.workers,
                workers_text(knee.workers),
            )
        }
        None if series.levels.len() == 1 => format!(
            "{name} has one level only ({}): no knee, speedup or fit can be measured",
            only_level(&series.levels[0], unit)
        ),
        None => format!(
            "{name} shows no clear knee over {} levels",
            series.levels.len()
        ),
    };
    if let Some(saturation) = &series.saturation {
        sentence.push_str(&if let Some(untold) = saturation.untold.filter(|_| !saturation.censored) {
            format!(
                "; capacity is highest at {} ({} {unit}), but that level is known only to ±{:.0}% from its batches, so where capacity saturates cannot be told: measure with --repeat 5 or more",
                workers_text(saturation.max_workers),
                significant(saturation.max_capacity),
                100.0 * untold
            )
        } else if saturation.rise_untold && !saturation.censored {
            format!(
                "; capacity is highest at the last level measured ({}, {} {unit}), but its last step is within what the batches leave uncertain, so whether it still rises cannot be told: measure more workers with --repeat 5 or more",
                workers_text(saturation.max_workers),
                significant(saturation.max_capacity)
            )
        } else if saturation.censored {
            format!(
                "; capacity is still rising at the last level measured ({}): at least {} {unit}",
                saturation.workers,
                significant(saturation.capacity)
            )
        } else {
            let reaches = format!(
                "; capacity reaches its plateau at {} ({} {unit}, within {} of the largest)",
                workers_text(saturation.workers),
                significant(saturation.capacity),
                crate::format::percent(saturation.band)
            );
            match &saturation.fall {
                // The peak alone is the plateau: said as a peak, then the fall.
                Some(fall) if saturation.workers == fall.from_workers => format!(
                    "; capacity peaks at {} ({} {unit}) and falls {:.0}% by {} ({} {unit})",
                    workers_text(fall.from_workers),
                    significant(saturation.max_capacity),
                    100.0 * fall.fraction,
                    workers_text(fall.to_workers),
                    significant(fall.to_capacity)
                ),
                Some(fall) => format!(
                    "{reaches}, then falls {:.0}% below its peak by {} ({} {unit})",
                    100.0 * fall.fraction,
                    workers_text(fall.to_workers),
                    significant(fall.to_capacity)
                ),
                None => reaches,
            }
        });
    }
    if let (Some(smt), Some(physical), Some(logical)) = (
        series.smt_yield,
        series.series.physical_cores,
        series.series.logical_cpus,
    ) {
        // A negative yield is no gain, and is said so.
        sentence.push_str(&if smt >= 1.0 {
            format!(
                ", and SMT adds {:.0}% from {physical} to {logical} workers",
                100.0 * (smt - 1.0)
            )
        } else {
            format!(
                "; SMT brings no gain: capacity at {logical} workers is {:.0}% below capacity at {physical}",
                100.0 * (1.0 - smt)
            )
        });
    }
    sentence.push('.');
    sentence
}

/// The recommended fit, in words; none when no fit describes the data.
fn fit_sentence(series: &SeriesAnalysis) -> Option<String> {
    let fit = series.fits.recommended_fit()?;
    let name = series.name();
    let with_ci = |value: f64, ci: Option<f64>, decimals: usize| {
        crate::format::coefficient(value, ci, decimals)
    };
    let mut sentence = match fit.model {
        Model::Amdahl if !fit.sigma_measured() => match near_linear(series, fit.n_max) {
            Ok(()) => format!(
                "Over {}..{} workers {name} scales linearly within the noise (Amdahl sigma {}, not measurable here)",
                fit.n_min,
                fit.n_max,
                with_ci(fit.sigma, fit.sigma_ci95, 4)
            ),
            Err(speedup) => format!(
                "Over {}..{} workers the levels cannot tell how {name} scales: Amdahl's sigma is {}, not measurable, yet speedup is only {speedup:.2} at {}; measure more worker counts (5 or more) with --repeat 3",
                fit.n_min,
                fit.n_max,
                with_ci(fit.sigma, fit.sigma_ci95, 4),
                workers_text(fit.n_max)
            ),
        },
        Model::Amdahl => format!(
            "Over {}..{} workers {name} follows Amdahl's law with sigma = {}{}",
            fit.n_min,
            fit.n_max,
            with_ci(fit.sigma, fit.sigma_ci95, 4),
            fit.max_speedup.map_or_else(String::new, |limit| format!(
                " (speedup at most {limit:.0}x)"
            ))
        ),
        Model::Usl => format!(
            "Over {}..{} workers {name} follows the USL with sigma = {}, kappa = {}{}",
            fit.n_min,
            fit.n_max,
            if fit.sigma_at_bound || fit.sigma < NEGLIGIBLE {
                "0 (not measurable here)".to_string()
            } else {
                with_ci(fit.sigma, fit.sigma_ci95, 4)
            },
            // A coefficient the optimum leaves at a rounding error is no measurement, and
            // its interval (± 0) says nothing.
            if fit.kappa_at_bound || fit.kappa < NEGLIGIBLE {
                "0 (not measurable here)".to_string()
            } else {
                with_ci(fit.kappa, fit.kappa_ci95, 6)
            },
            fit.peak_workers.map_or_else(String::new, |peak| format!(
                " (capacity peaks near {peak:.0} workers)"
            ))
        ),
    };
    sentence.push('.');
    Some(sentence)
}

/// A fitted coefficient below this is a rounding error of the optimum, not a measurement.
const NEGLIGIBLE: f64 = 1e-9;

/// Whether speedup at `workers` is within the noise of linear; else that speedup.
fn near_linear(series: &SeriesAnalysis, workers: usize) -> Result<(), f64> {
    let Some(level) = series.level(workers) else {
        return Ok(());
    };
    let tolerance = series
        .noise
        .as_ref()
        .map_or(LINEAR_TOLERANCE, |noise| {
            (2.0 * noise.jitter).max(LINEAR_TOLERANCE)
        })
        .max(level.capacity_uncertainty.unwrap_or(0.0));
    if level.efficiency >= 1.0 - tolerance {
        Ok(())
    } else {
        Err(level.speedup)
    }
}

/// Efficiency this close to 1 is linear whatever the noise measured.
const LINEAR_TOLERANCE: f64 = 0.05;

/// Each level left out of the analysis and why (disturbed, or run to a schedule), and how
/// many the fits and comparisons use.
fn left_out_warnings(series: &SeriesAnalysis) -> Vec<String> {
    let mut warnings = Vec::new();
    for point in &series.series.left_out {
        if let Some(why) = &point.scheduled {
            warnings.push(format!(
                "left out {}: {why}: its rate is the rate asked, not capacity",
                workers_text(point.workers)
            ));
            continue;
        }
        // What the level's capacity really was, when its jobs did not run together.
        let delivered = point
            .delivered
            .filter(|_| {
                point
                    .disturbed
                    .iter()
                    .any(|reason| reason.starts_with(crate::result::APART))
            })
            .map(|delivered| {
                format!(
                    "; the host delivered {} jobs/min there, not the {} that {} x 60 / median job time gives",
                    significant(delivered),
                    significant(60.0 * point.workers as f64 / point.raw),
                    point.workers
                )
            })
            .unwrap_or_default();
        warnings.push(format!(
            "left out {}, disturbed while measured: {}{delivered} (--include-disturbed keeps it)",
            workers_text(point.workers),
            point.disturbed.join("; ")
        ));
    }
    if !series.series.left_out.is_empty() {
        let scheduled = series
            .series
            .left_out
            .iter()
            .filter(|point| point.scheduled.is_some())
            .count();
        let disturbed = series.series.left_out.len() - scheduled;
        let why = match (disturbed, scheduled) {
            (_, 0) => "as disturbed",
            (0, _) => "as run to a schedule",
            _ => "as disturbed or run to a schedule",
        };
        warnings.push(format!(
            "{} of {} levels left out {why}: fits, knee and comparisons use the other {}",
            series.series.left_out.len(),
            series.series.left_out.len() + series.series.points.len(),
            series.series.points.len()
        ));
    }
    warnings
}

/// What the data of one series cannot support.
pub(crate) fn series_warnings(series: &SeriesAnalysis) -> Vec<String> {
    let mut warnings = Vec::new();
    if !series.series.complete {
        warnings.push(format!(
            "the run was interrupted: only {} levels were measured",
            series.levels.len()
        ));
    }
    if series.levels.len() == 1 && series.speedup_base != 1 {
        warnings.push(format!(
            "one level of {} workers only: its speedup is not measured (\"-\"), as nothing was measured to compare it with; measure 1 worker too",
            series.speedup_base
        ));
    } else if series.speedup_base != 1 {
        warnings.push(format!(
            "no 1-worker level: speedup assumes linear scaling up to {} workers",
            series.speedup_base
        ));
    }
    warnings.extend(left_out_warnings(series));
    // Worker counts of the kept levels whose run-time flags say so.
    let points_where = |test: &dyn Fn(&super::series::Point) -> bool| -> Vec<String> {
        series
            .series
            .points
            .iter()
            .filter(|point| test(point))
            .map(|point| point.workers.to_string())
            .collect()
    };
    let disturbed_kept = points_where(&|point| !point.disturbed.is_empty());
    if !disturbed_kept.is_empty() {
        warnings.push(format!(
            "disturbed while measured, and kept: {} workers (other processes, steal or too few CPUs): these figures may not describe the host",
            disturbed_kept.join(", ")
        ));
    }
    let missed = points_where(&|point| point.precision_reached == Some(false));
    if !missed.is_empty() {
        warnings.push(format!(
            "the precision target was missed at {} workers: their CV is above what the run asked for",
            missed.join(", ")
        ));
    }
    let flagged = |test: &dyn Fn(&super::model::LevelFigures) -> bool| -> Vec<String> {
        series
            .levels
            .iter()
            .filter(|level| test(level))
            .map(|level| level.workers.to_string())
            .collect()
    };
    warnings.extend(noisy_warnings(series));
    if let Some(noise) = series
        .noise
        .as_ref()
        .filter(|noise| noise.jitter > NOISY_JITTER)
    {
        warnings.push(format!(
            "measurements vary about ±{:.0}% from level to level (per-worker speed over {}..{} workers): differences under {:.0}% are not significant",
            100.0 * noise.jitter,
            noise.from_workers,
            noise.to_workers,
            100.0 * noise.significant_difference
        ));
    }
    if let Some(saturation) = series
        .saturation
        .as_ref()
        .filter(|saturation| saturation.censored)
    {
        warnings.push(format!(
            "still rising at the last level measured ({}): capacity at saturation is at least {} {}, and comparisons of capacity are lower bounds; measure more workers to find the plateau",
            saturation.workers,
            significant(saturation.capacity),
            series.capacity_unit
        ));
    }
    let stolen = flagged(&|level| level.steal_pct.is_some_and(|steal| steal > NOISY_STEAL_PCT));
    if !stolen.is_empty() {
        warnings.push(format!(
            "steal time above {NOISY_STEAL_PCT:.0}% at {} workers: the hypervisor gave this VM's CPUs to others",
            stolen.join(", ")
        ));
    }
    if series.series.physical_cores.is_none() {
        warnings.push(format!(
            "core counts unknown: pass --cores {0}=P/L, or --nodes {0}=FILE,... with each server node's `corescale host --json`, to mark them and get the SMT yield",
            series.name()
        ));
    }
    warnings.extend(too_few_levels(series));
    warnings
}

/// Too few levels for a knee, with the sweep that would find one.
fn too_few_levels(series: &SeriesAnalysis) -> Option<String> {
    if series.knee.is_some() || series.levels.len() >= 5 {
        return None;
    }
    // A run that already swept automatically, or every count, needs a longer list.
    // `--sweep auto` is also what a run without --sweep, -w or --full measures.
    let swept = series
        .series
        .provenance
        .command_line
        .as_deref()
        .is_some_and(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let given = |flag: &str| words.iter().any(|word| word.starts_with(flag));
            line.contains("--sweep auto")
                || given("--full")
                || !(given("--sweep") || given("-w") || given("--workers"))
        });
    let advice = if swept {
        "measure at least 5 worker counts (--sweep with a longer list, such as 1,2,3,4,6,8)"
    } else {
        "measure with --full or --sweep auto"
    };
    Some(format!(
        "{} too few to locate a knee: {advice}",
        match series.levels.len() {
            1 => "1 level is".to_string(),
            levels => format!("{levels} levels are"),
        }
    ))
}

/// The noisy levels in words, by what makes them noisy.
fn noisy_warnings(series: &SeriesAnalysis) -> Vec<String> {
    let (quiet, jumped) = noisy_levels(series);
    let mut warnings = Vec::new();
    if !quiet.is_empty() {
        warnings.push(format!(
            "job-to-job CV above {:.0}% at {} workers, where jobs should not spread: treat those levels as noisy",
            100.0 * NOISY_CV,
            quiet.join(", ")
        ));
    }
    if !jumped.is_empty() {
        warnings.push(format!(
            "job-to-job CV above {:.0}% at {} workers, more than twice that of the levels beside them (past the cores, where jobs spread anyway): treat those levels as noisy",
            100.0 * NOISY_CV,
            jumped.join(", ")
        ));
    }
    warnings
}

/// Levels whose job-to-job CV is above the noisy mark where jobs should not spread (up to
/// the physical core count, else the knee, else everywhere), and those past it where the
/// CV jumps to more than twice that of each neighbour: said apart, since past P threads
/// share cores and jobs spread by design (expected dispersion, not noise).
fn noisy_levels(series: &SeriesAnalysis) -> (Vec<String>, Vec<String>) {
    let quiet_until = series
        .series
        .physical_cores
        .or(series.knee.as_ref().map(|knee| knee.workers))
        .unwrap_or(usize::MAX);
    let levels = &series.levels;
    let (mut quiet, mut jumped) = (Vec::new(), Vec::new());
    for (index, level) in levels.iter().enumerate() {
        let Some(cv) = level.cv.filter(|cv| *cv > NOISY_CV) else {
            continue;
        };
        if level.workers <= quiet_until {
            quiet.push(level.workers.to_string());
            continue;
        }
        let neighbour = |at: Option<usize>| at.and_then(|at| levels.get(at)?.cv);
        if [neighbour(index.checked_sub(1)), neighbour(Some(index + 1))]
            .into_iter()
            .flatten()
            .all(|other| cv > 2.0 * other)
        {
            jumped.push(level.workers.to_string());
        }
    }
    (quiet, jumped)
}

/// One curve over both sides of a bend averages two regimes; a fit that does not describe
/// its data is not quoted. Both are said, beside the fits.
pub(crate) fn fit_notes(series: &SeriesAnalysis) -> Vec<String> {
    let mut warnings = Vec::new();
    let fits = &series.fits;
    if let (Some(single), Some(usl)) = (&fits.single_curve, &fits.usl)
        && single.misleading
    {
        let bend = series.knee.as_ref().map_or_else(
            || "scaling changes regime".to_string(),
            |knee| format!("scaling bends at {} workers", knee.workers),
        );
        warnings.push(format!(
            "{bend}, so a single Amdahl/USL curve over {}..{} is misleading (a {}-segment fit explains the levels far better: BIC {:.0} against {:.0}): {}",
            usl.n_min,
            usl.n_max,
            single.segments,
            single.bic_segmented,
            single.bic_usl,
            match fits.recommended {
                Some(range) => format!("read the {} fit", range_name(range)),
                None => "no fit describes these levels".to_string(),
            }
        ));
    }
    let unused: Vec<String> = [
        FitRange::Amdahl,
        FitRange::Usl,
        FitRange::AmdahlToKnee,
        FitRange::UslToKnee,
    ]
    .into_iter()
    .filter_map(|range| {
        let fit = fits.get(range)?;
        let reason = fit.inadequate_because.as_ref()?;
        Some(format!(
            "{} {}..{} ({reason})",
            range_name(range),
            fit.n_min,
            fit.n_max
        ))
    })
    .collect();
    if !unused.is_empty() {
        warnings.push(format!(
            "fits not drawn or quoted, as they do not describe the data: {}",
            unused.join("; ")
        ));
    }
    let said = fits
        .single_curve
        .as_ref()
        .is_some_and(|single| single.misleading);
    if fits.recommended.is_none() && fits.amdahl.is_some() && !said {
        warnings.push(
            "no Amdahl or USL fit describes these levels well enough to be quoted".to_string(),
        );
    }
    warnings
}

pub(crate) fn range_name(range: FitRange) -> &'static str {
    match range {
        FitRange::Amdahl => "Amdahl",
        FitRange::Usl => "USL",
        FitRange::AmdahlToKnee => "Amdahl-to-the-knee",
        FitRange::UslToKnee => "USL-to-the-knee",
    }
}
