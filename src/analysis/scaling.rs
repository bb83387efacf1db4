//! Where scaling bends and where it stops: the knee (the first upward bend of time per unit
//! of work), the droop before it, saturation at the capacity plateau, and the SMT yield.
//! Works on any series, with or without topology.

use serde::{Deserialize, Serialize};

use super::noise::{band, jitter};
use super::segments::{STRONG_EVIDENCE, best, bic, candidates, fit_knots};
use super::series::Series;
use crate::stats::median;

/// The knee: the last level before time per unit of work (n / capacity, proportional to job
/// time) bends upward, from the continuous one-, two- or three-segment fit that the
/// Bayesian information criterion prefers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    pub workers: usize,
    /// Per-worker speed at the knee relative to speed at the first level, minus 1
    /// (-0.22: a fifth slower, as turbo frequency falls while more cores get busy).
    pub droop: f64,
    /// Slopes of time per unit of work (relative to the first level) before and after the
    /// knee, per added worker.
    pub slope_before: f64,
    pub slope_after: f64,
    /// Segments of the fit the knee comes from: 2, or 3 on an SMT server swept past its
    /// logical CPUs (up to P, P to L, past L).
    pub segments: usize,
    /// The other bend of a three-segment fit, when there is one.
    pub other_bend: Option<usize>,
    /// How much better the segmented fit explains the levels than a straight line (BIC
    /// difference; above 6 is strong evidence).
    pub evidence: f64,
}

/// Saturation: where capacity reaches its plateau.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Saturation {
    /// The smallest level whose capacity (median of it and its neighbours) lies within the
    /// noise band of the largest; the last level when the series is censored.
    pub workers: usize,
    /// The plateau: the median capacity of the levels from `workers` on within the band; when
    /// censored, the largest capacity measured (a lower bound).
    pub capacity: f64,
    /// The level with the single largest capacity, and that capacity.
    pub max_workers: usize,
    pub max_capacity: f64,
    /// The noise band used, as a fraction: the CV measured at the largest capacity, else 2%,
    /// and at least three times the jitter of capacity from the knee on.
    pub band: f64,
    /// Still rising at the last level measured (each of the last two steps by more than half
    /// the band): the capacity figures are lower bounds.
    pub censored: bool,
    /// Capacity fell past the peak by more than twice the band: from the peak's level to
    /// the lowest level after it, and by how much.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fall: Option<Fall>,
    /// The largest capacity's own 95% uncertainty from its batches, when it is too wide (over
    /// 10%) for the levels to tell where the plateau starts: two batches of a noisy level
    /// leave it so. The findings then say what cannot be told, and what to measure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untold: Option<f64>,
    /// The last levels rose as a series still rising does, but the last step by less than
    /// its two levels' batches can tell: whether capacity still rises cannot be told.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rise_untold: bool,
}

/// A level known from its batches to no better than this cannot place a plateau.
/// (`rise_untold` below: the last levels rose, by less than their batches can tell.)
pub(crate) const UNTOLD: f64 = 0.10;

/// A fall of capacity past its peak, beyond the noise band.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Fall {
    /// The level of the largest capacity, and the lowest level after it.
    pub from_workers: usize,
    pub to_workers: usize,
    pub to_capacity: f64,
    /// The fall relative to the peak (0.27: 27% below it).
    pub fraction: f64,
}

/// Levels kept between the knee and the ends of the series.
const KNEE_MIN_LEVELS: usize = 5;

/// Time per unit of work against workers, relative to the first level, for the knee search.
pub(crate) fn time_per_work(series: &Series, until: Option<usize>) -> (Vec<f64>, Vec<f64>) {
    let points: Vec<_> = series
        .points
        .iter()
        .filter(|point| until.is_none_or(|until| point.workers <= until))
        .collect();
    let time = |point: &&super::series::Point| point.workers as f64 / series.capacity(point);
    let first = points.first().map_or(1.0, time);
    points
        .iter()
        .map(|point| (point.workers as f64, time(point) / first))
        .unzip()
}

/// Finds the knee, or None when there are too few levels or no bend that a segmented fit
/// supports strongly against a straight line.
///
/// The segmented fit is tried on time per unit of work (where a CPU sweep is flat, then
/// about linear as threads share cores) and on capacity (where an SMT curve is linear, then
/// shallower, then flat); the one that describes capacity better (BIC on its logarithm) sets
/// the knee: its first bend that steepens time per unit of work, or flattens capacity.
pub(crate) fn knee(series: &Series) -> Option<Knee> {
    let points = &series.points;
    if points.len() < KNEE_MIN_LEVELS {
        return None;
    }
    let (x, time) = time_per_work(series, None);
    // A single level off both its neighbours (a dip at 2 workers) is noise, not a regime.
    let time = without_spikes(&time);
    // Capacity relative to the first level, from time per unit of work.
    let to_capacity = |n: f64, time: f64| n / (time * x[0]);
    let capacity: Vec<f64> = x
        .iter()
        .zip(&time)
        .map(|(&n, &time)| to_capacity(n, time))
        .collect();
    let time_bend = bend(&x, &time, 1.0, &to_capacity, &capacity);
    let capacity_bend = bend(&x, &capacity, -1.0, &|_, y| y, &capacity);
    let chosen = match (time_bend, capacity_bend) {
        (Some(time), Some(capacity)) => {
            if capacity.log_bic < time.log_bic {
                capacity
            } else {
                time
            }
        }
        (time, capacity) => time.or(capacity)?,
    };
    // Slopes are always given on time per unit of work, at the knee found.
    let mut index = chosen.index;
    let fit = fit_knots(&x, &time, &[index])?;
    let mut slopes = fit.slopes();
    if slopes[0] <= 0.0 {
        // Flat before the bend: the bend is where the data leave that floor for the rising
        // line, not where the two lines meet best (which can be the floor's lowest level).
        let moved = last_on_the_floor(&x, &time, index, &|n| fit.predict(n));
        if moved != index {
            index = moved;
            slopes = fit_knots(&x, &time, &[index])?.slopes();
        }
    }
    let first = &points[0];
    Some(Knee {
        workers: points[index].workers,
        droop: series.speed(&points[index]) / series.speed(first) - 1.0,
        slope_before: slopes[0],
        slope_after: slopes[1],
        segments: chosen.segments,
        other_bend: chosen.other.map(|other| points[other].workers),
        evidence: chosen.evidence,
    })
}

/// The last level from `knee` on whose time per unit of work is still on the floor before
/// it: within three jitters (at least 1% each) of the median of the levels up to `knee`, and
/// below the fitted rising line. Two levels after it are always left to bend.
fn last_on_the_floor(x: &[f64], time: &[f64], knee: usize, after: &dyn Fn(f64) -> f64) -> usize {
    let floor = median(&time[..=knee]);
    let before: Vec<(f64, f64)> = x[..=knee]
        .iter()
        .copied()
        .zip(time[..=knee].iter().copied())
        .collect();
    let noise = jitter(&before).unwrap_or(0.0).max(0.01);
    let mut index = knee;
    while index + 3 < time.len() {
        let next = time[index + 1];
        if next >= after(x[index + 1]) || next > floor * (1.0 + 3.0 * noise) {
            break;
        }
        index += 1;
    }
    index
}

/// Smallest departure of a single level from both neighbours that counts as a spike: noise
/// of a few percent is a level's own, not a spike.
const SPIKE_FLOOR: f64 = 0.05;
/// Robust standard deviations of the level-to-level residuals a spike must exceed.
const SPIKE_SIGMAS: f64 = 4.0;

/// The values with each single-level spike replaced by the line between its neighbours. A
/// spike departs from both neighbours in the same direction, by more than [`SPIKE_FLOOR`]
/// and [`SPIKE_SIGMAS`] robust deviations of every level's residual from its neighbours'
/// line. A bend is not a spike: its level sits level with one neighbour.
fn without_spikes(values: &[f64]) -> Vec<f64> {
    let count = values.len();
    if count < 5 {
        return values.to_vec();
    }
    let between = |index: usize| (values[index - 1] + values[index + 1]) / 2.0;
    let residuals: Vec<f64> = (1..count - 1)
        .map(|index| (values[index] / between(index) - 1.0).abs())
        .collect();
    let sigma = 1.4826 * median(&residuals);
    let limit = (SPIKE_SIGMAS * sigma).max(SPIKE_FLOOR);
    let mut cleaned = values.to_vec();
    for index in 1..count - 1 {
        let (value, left, right) = (values[index], values[index - 1], values[index + 1]);
        let up = value / left.max(right) - 1.0;
        let down = 1.0 - value / left.min(right);
        if up > limit || down > limit {
            cleaned[index] = between(index);
        }
    }
    cleaned
}

/// A bend found in one space.
struct Bend {
    index: usize,
    other: Option<usize>,
    segments: usize,
    evidence: f64,
    /// BIC of the fit on the logarithm of capacity, comparable across spaces.
    log_bic: f64,
}

/// The knee in y against x, where `sign` +1 looks for a steepening and -1 for a flattening;
/// `to_capacity(x, y)` turns a fitted y back into capacity relative to the first level.
fn bend(
    x: &[f64],
    y: &[f64],
    sign: f64,
    to_capacity: &dyn Fn(f64, f64) -> f64,
    capacity: &[f64],
) -> Option<Bend> {
    let fits = candidates(x, y);
    let line = fits.first()?;
    let chosen = best(&fits)?;
    let evidence = line.bic - chosen.bic;
    if chosen.knots.is_empty() || evidence < STRONG_EVIDENCE {
        return None;
    }
    let slopes = chosen.slopes();
    // A bend out of a steep fall of time per unit of work (dropping faster than it rises
    // after, as when the first level is an outlier) is a start-up effect, not the knee.
    let position = (0..chosen.knots.len()).find(|&at| {
        let (before, after) = (sign * slopes[at], sign * slopes[at + 1]);
        after > before && (sign < 0.0 || before >= -after.abs())
    })?;
    let log_error: f64 = x
        .iter()
        .zip(capacity)
        .map(|(&n, &observed)| (observed / to_capacity(n, chosen.predict(n))).ln().powi(2))
        .sum();
    if !log_error.is_finite() {
        return None;
    }
    Some(Bend {
        index: refine(x, y, chosen.knots[position], sign),
        other: chosen
            .knots
            .iter()
            .enumerate()
            .find(|&(at, _)| at != position)
            .map(|(_, &other)| other),
        segments: chosen.knots.len() + 1,
        evidence,
        log_bic: bic(log_error, x.len(), chosen.parameters()),
    })
}

/// The fit puts its breakpoint where straight segments match best; where the curve between
/// bends is itself curved, that can be a level off the bend. Within two levels of it, the
/// level where the slope changes most (in the direction `sign`) is taken instead, if that
/// change stands clear of the noise: three standard deviations of a slope change, from the
/// curve's own jitter.
fn refine(x: &[f64], y: &[f64], knot: usize, sign: f64) -> usize {
    let n = x.len();
    let points: Vec<(f64, f64)> = x.iter().copied().zip(y.iter().copied()).collect();
    let noise = jitter(&points).unwrap_or(0.0);
    let change = |index: usize| -> (f64, f64) {
        let (left, right) = (x[index] - x[index - 1], x[index + 1] - x[index]);
        let slope_change =
            sign * ((y[index + 1] - y[index]) / right - (y[index] - y[index - 1]) / left);
        let deviation = noise
            * y[index]
            * (1.0 / (left * left) + (1.0 / left + 1.0 / right).powi(2) + 1.0 / (right * right))
                .sqrt();
        (slope_change, deviation)
    };
    let window = knot.saturating_sub(2).max(1)..=(knot + 2).min(n - 2);
    let mut chosen = knot;
    let mut largest = change(knot).0;
    for index in window {
        let (slope_change, deviation) = change(index);
        if slope_change > largest && slope_change > 3.0 * deviation {
            chosen = index;
            largest = slope_change;
        }
    }
    chosen
}

/// Saturation at the start of the capacity plateau; see [`Saturation`]. The jitter that widens
/// the band is that of capacity from the knee on (the upper half of the levels without one),
/// where the plateau is: noise at low load says little about noise at saturation.
pub(crate) fn saturation(series: &Series, knee: Option<usize>) -> Option<Saturation> {
    let points = &series.points;
    if points.len() < 2 {
        return None;
    }
    let capacity: Vec<f64> = points.iter().map(|point| series.capacity(point)).collect();
    let (max_index, &max_capacity) = capacity
        .iter()
        .enumerate()
        .reduce(|best, next| if next.1 > best.1 { next } else { best })?;
    let from = knee.unwrap_or(points[points.len() / 2].workers);
    let upper: Vec<(f64, f64)> = points
        .iter()
        .zip(&capacity)
        .filter(|(point, _)| point.workers >= from)
        .map(|(point, &capacity)| (point.workers as f64, capacity))
        .collect();
    // Never narrower than what the batches of the top level leave uncertain, up to the
    // width past which the plateau cannot be placed at all (`untold`).
    let top_uncertainty = points[max_index].capacity_uncertainty.unwrap_or(0.0);
    let band = band(points[max_index].cv, jitter(&upper)).max(top_uncertainty.min(UNTOLD));
    // A level's capacity with its neighbours', so one lucky level does not set the maximum.
    let mut smoothed = running_median(&capacity);
    // The end rule extrapolates the first level from the next two: where scaling bends right
    // after it (1 worker, then a plateau from 2), that would put the plateau at 1.
    if let (Some(first), Some(raw)) = (smoothed.first_mut(), capacity.first()) {
        *first = first.min(*raw);
    }
    let top = smoothed.iter().copied().fold(f64::MIN, f64::max);
    let threshold = top * (1.0 - band);
    // The plateau starts at the first level within the band of the top both smoothed and as
    // measured: never at a level below the peak that the end rule lifted (a peak at 2 and 27%
    // less at 3 smooths to a top at 3). Where no level is, the peak alone is the plateau.
    let start = (0..capacity.len())
        .find(|&index| smoothed[index] >= threshold && capacity[index] >= threshold)
        .unwrap_or(max_index);
    let plateau: Vec<f64> = (start..capacity.len())
        .filter(|&index| {
            index == start || (smoothed[index] >= threshold && capacity[index] >= threshold)
        })
        .map(|index| capacity[index])
        .collect();
    // A fall past the peak: the lowest level after it more than twice the band below the
    // plateau (a difference the noise does not make; the peak itself may be a lucky level).
    let level_of_plateau = median(&plateau).min(max_capacity);
    let fall = (max_index + 1..capacity.len())
        .min_by(|&one, &other| capacity[one].total_cmp(&capacity[other]))
        .filter(|&lowest| capacity[lowest] < level_of_plateau * (1.0 - 2.0 * band))
        .map(|lowest| Fall {
            from_workers: points[max_index].workers,
            to_workers: points[lowest].workers,
            to_capacity: capacity[lowest],
            fraction: 1.0 - capacity[lowest] / max_capacity,
        });
    let uncertain: Vec<Option<f64>> = points
        .iter()
        .map(|point| point.capacity_uncertainty)
        .collect();
    let rising = still_rising(&smoothed, &capacity, band);
    let measured_rise = last_step_measured(&capacity, &uncertain);
    let censored = rising && measured_rise;
    let last = points.len() - 1;
    Some(Saturation {
        workers: points[if censored { last } else { start }].workers,
        capacity: if censored {
            max_capacity
        } else {
            level_of_plateau
        },
        max_workers: points[max_index].workers,
        max_capacity,
        band,
        censored,
        fall,
        untold: (top_uncertainty > UNTOLD).then_some(top_uncertainty),
        rise_untold: rising && !measured_rise,
    })
}

/// Each value the median of it and its neighbours; at the ends, of it, its neighbour and the
/// neighbour's value extended by the next step (Tukey's end-point rule).
fn running_median(values: &[f64]) -> Vec<f64> {
    let count = values.len();
    if count < 3 {
        return values.to_vec();
    }
    (0..count)
        .map(|index| match index {
            0 => median(&[values[0], values[1], 2.0 * values[1] - values[2]]),
            _ if index + 1 == count => median(&[
                values[index],
                values[index - 1],
                2.0 * values[index - 1] - values[index - 2],
            ]),
            _ => median(&values[index - 1..=index + 1]),
        })
        .collect()
}

/// The largest running-median capacity is at one of the last two levels (so a single lucky
/// or unlucky level does not decide), the last level is within the band of the largest
/// capacity and above the one before it (capacity did not fall at the end), and each of the
/// last two steps still rose by more than half the band.
fn still_rising(smoothed: &[f64], capacity: &[f64], band: f64) -> bool {
    let count = smoothed.len();
    let largest = capacity.iter().copied().fold(f64::MIN, f64::max);
    if capacity[count - 1] < largest * (1.0 - band) {
        return false;
    }
    // The measured last step must rise: the running median's end rule extrapolates a rise
    // (1.20 M then 1.08 M smooths to 1.08 M then 1.20 M) that a fall can never be.
    if count < 2 || capacity[count - 1] <= capacity[count - 2] {
        return false;
    }
    let top = smoothed
        .iter()
        .enumerate()
        .reduce(|best, next| if next.1 >= best.1 { next } else { best })
        .map_or(0, |(index, _)| index);
    if count < 2 || top + 2 < count {
        return false;
    }
    // Each of the last two steps rises by more than half the band (a single jump into a
    // plateau, as from P to P + 1 on a host swept just past its cores, is not a rise).
    let step = |at: usize| smoothed[at] / smoothed[at - 1] - 1.0;
    if count >= 3 {
        step(count - 1) > band / 2.0 && step(count - 2) > band / 2.0
    } else {
        step(count - 1) > band
    }
}

/// The last step's rise is larger than its two levels' batches leave uncertain: a 3% gain
/// between levels each known to ±4% is no rise. True where the batches say nothing.
fn last_step_measured(capacity: &[f64], uncertain: &[Option<f64>]) -> bool {
    let count = capacity.len();
    if count < 2 {
        return true;
    }
    match (uncertain[count - 2], uncertain[count - 1]) {
        (Some(before), Some(last)) => {
            capacity[count - 1] / capacity[count - 2] - 1.0 > before.hypot(last)
        }
        _ => true,
    }
}

/// Capacity at the logical-CPU count over capacity at the physical-core count, when both
/// were measured and they differ (SMT present).
pub(crate) fn smt_yield(series: &Series) -> Option<f64> {
    let (physical, logical) = (series.physical_cores?, series.logical_cpus?);
    if logical <= physical {
        return None;
    }
    let capacity = |workers| series.point(workers).map(|point| series.capacity(point));
    Some(capacity(logical)? / capacity(physical)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Measured job times at 1, 2, ... workers on a 4-core, 8-thread host.
    fn job_time_series(times: &[f64]) -> Series {
        crate::analysis::synthetic::measured_job_times(times, Some((4, 8)))
    }

    #[test]
    fn flat_then_linear_job_times_bend_at_the_core_count() {
        // 4 cores, 8 threads: time flat to 4, then grows as workers share cores; SMT gives
        // 25% more capacity at 8 (60*8/16 = 30 jobs/min against 60*4/10 = 24), and no more
        // past it (29.2 and 29.1 jobs/min at 9 and 10).
        let series = job_time_series(&[10.0, 10.0, 10.0, 10.0, 11.5, 13.0, 14.5, 16.0, 18.5, 20.6]);
        let knee = knee(&series).unwrap();
        assert_eq!(knee.workers, 4);
        assert!(knee.droop.abs() < 1e-9);
        assert!(knee.slope_after > knee.slope_before);
        let saturation = saturation(&series, Some(4)).unwrap();
        assert_eq!((saturation.max_workers, saturation.censored), (8, false));
        assert!((smt_yield(&series).unwrap() - 1.25).abs() < 1e-9);
    }

    /// Capacity that fell 10% from 2 to 4 workers (1.20 M to 1.08 M) within a wide noise
    /// band is not "still rising": the running median's end rule makes it look so.
    #[test]
    fn capacity_that_fell_at_the_end_is_never_censored() {
        let (smoothed, measured) = ([0.6, 1.08, 1.2], [0.6, 1.2, 1.08]);
        assert_eq!(running_median(&measured)[1..], smoothed[1..]);
        assert!(!still_rising(&smoothed, &measured, 0.15));
        // The same steps rising at the end are.
        let rising = [0.6, 1.08, 1.2];
        assert!(still_rising(&running_median(&rising), &rising, 0.15));
        // Job times of 1, 1 and 2 s at 1, 2 and 3 workers: capacity 60, 120 then 90.
        let series = job_time_series(&[1.0, 1.0, 2.0]);
        let saturation = saturation(&series, None).unwrap();
        assert!(!saturation.censored, "{saturation:?}");
        assert_eq!(saturation.max_workers, 2);
    }

    /// Capacity that peaks at 2 workers (2.32 M) and falls 27% at 3 (1.70 M): the plateau
    /// is the peak, never the level below it, and the fall is said with its loads and size.
    #[test]
    fn a_plateau_below_the_peak_is_never_the_saturation() {
        let rates = |values: &[f64]| {
            let workers: Vec<usize> = (1..=values.len()).collect();
            let values = values.to_vec();
            crate::analysis::synthetic::rate_series(
                move |workers| values[workers as usize - 1],
                &workers,
                0.0,
                1,
                None,
            )
        };
        let series = rates(&[1.25e6, 2.32e6, 1.70e6]);
        let saturation = saturation(&series, None).unwrap();
        assert_eq!(
            (saturation.workers, saturation.max_workers),
            (2, 2),
            "{saturation:?}"
        );
        assert!((saturation.capacity - 2.32e6).abs() < 1.0, "{saturation:?}");
        let fall = saturation.fall.unwrap();
        assert_eq!((fall.from_workers, fall.to_workers), (2, 3));
        assert!((fall.fraction - (1.0 - 1.70 / 2.32)).abs() < 1e-9);
        // A flat plateau after the peak, within the band: no fall.
        let flat = rates(&[1.0e6, 2.0e6, 2.01e6, 1.99e6, 2.0e6]);
        let plateau = super::saturation(&flat, None).unwrap();
        assert_eq!(plateau.fall, None, "{plateau:?}");
        assert_eq!(plateau.workers, 2);
    }

    #[test]
    fn perfect_scaling_has_no_knee() {
        let series = job_time_series(&[10.0; 8]);
        assert_eq!(knee(&series), None);
        assert_eq!(knee(&job_time_series(&[10.0, 10.0, 20.0])), None);
    }
}
