//! Plain sentences from the numbers, in the manner of seed 000's "Key findings", and the
//! warnings for what the data cannot support.

use super::compare::{Comparison, ComparisonRow};
use super::study::{NOISY_CV, NOISY_STEAL_PCT, SeriesAnalysis};

/// At most this many findings are written.
const MAX_FINDINGS: usize = 8;

pub fn findings(series: &[SeriesAnalysis], comparisons: &[Comparison]) -> Vec<String> {
    let mut sentences: Vec<String> = comparisons.iter().flat_map(leader_sentences).collect();
    sentences.extend(series.iter().map(scaling_sentence));
    sentences.extend(comparisons.iter().filter_map(cost_sentence));
    sentences.extend(series.iter().filter_map(fit_sentence));
    sentences.truncate(MAX_FINDINGS);
    sentences
}

/// "A is 2.25x faster than B single-threaded and has 2.05x its capacity at saturation, ..."
fn leader_sentences(comparison: &Comparison) -> Vec<String> {
    let leader_name = &comparison.ranking[0];
    let find = |name: &str| comparison.rows.iter().find(|row| row.name == name);
    let Some(leader) = find(leader_name) else {
        return Vec::new();
    };
    comparison
        .ranking
        .iter()
        .skip(1)
        .filter_map(|name| find(name))
        .map(|other| leader_versus(leader, other))
        .collect()
}

fn leader_versus(leader: &ComparisonRow, other: &ComparisonRow) -> String {
    let capacity = leader.capacity_at_saturation / other.capacity_at_saturation;
    let single = leader
        .single_thread_speed
        .zip(other.single_thread_speed)
        .map(|(leader, other)| leader / other);
    let cores = match (leader.physical_cores, other.physical_cores) {
        (Some(a), Some(b)) if a < b => format!(", despite {a} vs {b} physical cores"),
        (Some(a), Some(b)) if a > b => format!(", with {a} vs {b} physical cores"),
        (Some(a), Some(_)) => format!(", with the same {a} physical cores"),
        _ => String::new(),
    };
    match single {
        Some(single) if single >= 1.0 => format!(
            "{} is {single:.2}x faster than {} single-threaded and has {capacity:.2}x its capacity at saturation{cores}.",
            leader.name, other.name
        ),
        Some(single) => format!(
            "{} has {capacity:.2}x the capacity of {} at saturation{cores}, though {} is {:.2}x faster single-threaded.",
            leader.name,
            other.name,
            other.name,
            1.0 / single
        ),
        None => format!(
            "{} has {capacity:.2}x the capacity of {} at saturation{cores}.",
            leader.name, other.name
        ),
    }
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
        None => format!(
            "{name} shows no clear knee over {} levels",
            series.levels.len()
        ),
    };
    if let Some(saturation) = &series.saturation {
        sentence.push_str(&format!(
            "; capacity peaks at {} ({} {unit})",
            workers_text(saturation.workers),
            significant(saturation.capacity)
        ));
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

fn cost_sentence(comparison: &Comparison) -> Option<String> {
    let mut priced: Vec<(&ComparisonRow, f64)> = comparison
        .rows
        .iter()
        .filter_map(|row| Some((row, row.capacity_per_cost?)))
        .collect();
    if priced.len() < 2 {
        return None;
    }
    priced.sort_by(|a, b| b.1.total_cmp(&a.1));
    let ((best, most), (worst, least)) = (priced[0], priced[priced.len() - 1]);
    Some(format!(
        "Per unit of cost, {} delivers the most capacity: {:.2}x that of {}.",
        best.name,
        most / least,
        worst.name
    ))
}

/// Amdahl over one regime (up to the knee when there is one), the USL over the full range.
fn fit_sentence(series: &SeriesAnalysis) -> Option<String> {
    let amdahl = series
        .fits
        .amdahl_to_knee
        .as_ref()
        .or(series.fits.amdahl.as_ref())?;
    let sigma_is_zero = amdahl.sigma_ci95.is_some_and(|ci| ci >= amdahl.sigma.abs());
    let mut sentence = if sigma_is_zero {
        format!(
            "Over {}..{} workers {} scales linearly within the noise (Amdahl sigma = {:.4}, indistinguishable from 0)",
            amdahl.n_min,
            amdahl.n_max,
            series.name(),
            amdahl.sigma
        )
    } else {
        format!(
            "Over {}..{} workers {} follows Amdahl's law with sigma = {:.4}{}",
            amdahl.n_min,
            amdahl.n_max,
            series.name(),
            amdahl.sigma,
            amdahl.max_speedup.map_or_else(String::new, |limit| format!(
                " (speedup at most {limit:.0}x)"
            ))
        )
    };
    if let Some(usl) = &series.fits.usl
        && let Some(peak) = usl.peak_workers
    {
        sentence.push_str(&format!(
            "; over {}..{} the USL gives sigma = {:.4}, kappa = {:.6} and a capacity peak near {peak:.0} workers",
            usl.n_min, usl.n_max, usl.sigma, usl.kappa
        ));
    }
    sentence.push('.');
    Some(sentence)
}

/// What the data of one series cannot support.
/// "1 worker", "2 workers".
pub fn workers_text(workers: usize) -> String {
    format!("{workers} worker{}", if workers == 1 { "" } else { "s" })
}

pub fn series_warnings(series: &SeriesAnalysis) -> Vec<String> {
    let mut warnings = Vec::new();
    if !series.series.complete {
        warnings.push(format!(
            "the run was interrupted: only {} levels were measured",
            series.levels.len()
        ));
    }
    if series.speedup_base != 1 {
        warnings.push(format!(
            "no 1-worker level: speedup assumes linear scaling up to {} workers",
            series.speedup_base
        ));
    }
    for point in &series.series.left_out {
        warnings.push(format!(
            "left out {}, disturbed while measured: {} (--include-disturbed keeps it)",
            workers_text(point.workers),
            point.disturbed.join("; ")
        ));
    }
    if !series.series.left_out.is_empty() {
        warnings.push(format!(
            "{} of {} levels left out as disturbed: fits, knee and comparisons use the other {}",
            series.series.left_out.len(),
            series.series.left_out.len() + series.series.points.len(),
            series.series.points.len()
        ));
    }
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
    let flagged = |test: &dyn Fn(&super::study::LevelFigures) -> bool| -> Vec<String> {
        series
            .levels
            .iter()
            .filter(|level| test(level))
            .map(|level| level.workers.to_string())
            .collect()
    };
    let noisy = flagged(&|level| level.cv.is_some_and(|cv| cv > NOISY_CV));
    if !noisy.is_empty() {
        warnings.push(format!(
            "job-to-job CV above {:.0}% at {} workers: treat those levels as noisy",
            100.0 * NOISY_CV,
            noisy.join(", ")
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
            "core counts unknown: pass --cores {}=P/L to mark them and get the SMT yield",
            series.name()
        ));
    }
    if series.knee.is_none() && series.levels.len() < 5 {
        warnings.push(format!(
            "{} levels are too few to locate a knee: measure with --full or --sweep auto",
            series.levels.len()
        ));
    }
    warnings.extend(single_curve_warning(series));
    warnings
}

/// A single Amdahl/USL curve over both sides of the knee averages two regimes.
fn single_curve_warning(series: &SeriesAnalysis) -> Option<String> {
    let knee = series.knee.as_ref()?;
    let full = series.fits.amdahl.as_ref()?;
    if full.n_max <= knee.workers {
        return None;
    }
    let before = series.fits.amdahl_to_knee.as_ref();
    let differs = before.is_none_or(|before| {
        let ratio = full.sigma.abs().max(1e-9) / before.sigma.abs().max(1e-9);
        !(0.5..=2.0).contains(&ratio)
    });
    if !differs && full.r_squared >= 0.98 {
        return None;
    }
    let before_text = before.map_or_else(String::new, |before| {
        format!(
            " (Amdahl sigma {:.4} up to the knee, {:.4} over {}..{})",
            before.sigma, full.sigma, full.n_min, full.n_max
        )
    });
    Some(format!(
        "scaling bends at {} workers, so a single Amdahl/USL curve over {}..{} is misleading{before_text}: read the fit up to the knee",
        knee.workers, full.n_min, full.n_max
    ))
}

/// A value scaled to the SI prefix that fits it: (50.3, "M") for 50,298,278.
pub fn si_prefix(value: f64) -> (f64, &'static str) {
    match value.abs() {
        v if v >= 1e9 => (value / 1e9, "G"),
        v if v >= 1e6 => (value / 1e6, "M"),
        v if v >= 1e3 => (value / 1e3, "K"),
        _ => (value, ""),
    }
}

/// Three significant digits, without scientific notation: 61.2, 0.0123, and from a thousand
/// up with an SI prefix (50.3 M rather than 50298278), as rates of LIO/s run into millions.
pub fn significant(value: f64) -> String {
    let (scaled, prefix) = si_prefix(value);
    let magnitude = if scaled == 0.0 {
        0
    } else {
        scaled.abs().log10().floor() as i32
    };
    let decimals = (2 - magnitude).clamp(0, 6) as usize;
    let space = if prefix.is_empty() { "" } else { " " };
    format!("{scaled:.decimals$}{space}{prefix}")
}

#[cfg(test)]
mod tests {
    use super::significant;

    #[test]
    fn significant_keeps_three_digits_at_every_magnitude() {
        assert_eq!(significant(61.234), "61.2");
        assert_eq!(significant(0.012345), "0.0123");
        assert_eq!(significant(0.0), "0.00");
        assert_eq!(significant(432.1), "432");
        assert_eq!(significant(4321.0), "4.32 K");
        assert_eq!(significant(14_565.0), "14.6 K");
        assert_eq!(significant(50_298_278.0), "50.3 M");
        assert_eq!(significant(2.5e9), "2.50 G");
    }
}
