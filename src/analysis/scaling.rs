//! Where scaling bends: the knee (a two-segment fit), the droop before it, saturation and
//! the SMT yield. Works on any series, with or without topology.

use serde::{Deserialize, Serialize};

use super::series::Series;

/// Fewest levels for which a two-segment fit means anything.
const KNEE_MIN_LEVELS: usize = 5;

/// The breakpoint of a continuous two-segment linear fit of time per unit of work
/// (n / capacity, proportional to job time) against n.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    pub workers: usize,
    /// Per-worker speed at the knee relative to speed at the first level, minus 1
    /// (-0.22: a fifth slower, as turbo frequency falls while more cores get busy).
    pub droop: f64,
    /// Slopes of time per unit of work before and after the knee, per added worker.
    pub slope_before: f64,
    pub slope_after: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Saturation {
    /// The level with the largest capacity.
    pub workers: usize,
    pub capacity: f64,
}

/// Finds the knee, or None when there are too few levels or no steepening to find.
pub fn knee(series: &Series) -> Option<Knee> {
    let points = &series.points;
    if points.len() < KNEE_MIN_LEVELS {
        return None;
    }
    let workers: Vec<f64> = points.iter().map(|point| point.workers as f64).collect();
    let time: Vec<f64> = points
        .iter()
        .map(|point| point.workers as f64 / series.capacity(point))
        .collect();
    let straight = fit_hinge(&workers, &time, None)?;
    // Each candidate keeps at least two levels on either side of it. Candidates are ranked
    // by sums kept as running totals (linear in the levels), the best one refitted exactly.
    let candidate = best_breakpoint(&workers, &time)?;
    let best = fit_hinge(&workers, &time, Some(workers[candidate]))?;
    let (slope_before, bend) = (best.coefficients[1], best.coefficients[2]);
    // A real knee steepens the curve and explains most of what a straight line cannot.
    if bend <= 0.0 || best.sse > 0.5 * straight.sse {
        return None;
    }
    let knee_workers = best.breakpoint? as usize;
    let first = &points[0];
    let at_knee = series.point(knee_workers)?;
    Some(Knee {
        workers: knee_workers,
        droop: series.speed(at_knee) / series.speed(first) - 1.0,
        slope_before,
        slope_after: slope_before + bend,
    })
}

struct HingeFit {
    breakpoint: Option<f64>,
    coefficients: [f64; 3],
    sse: f64,
}

/// The index of the breakpoint (among levels 2..n-2) whose hinge fit leaves the least
/// squared error, from the normal equations built out of prefix and suffix sums: one pass,
/// however many levels. x and y are centred first, which keeps the sums well conditioned.
fn best_breakpoint(x: &[f64], y: &[f64]) -> Option<usize> {
    let n = x.len();
    let (mean_x, mean_y) = (
        x.iter().sum::<f64>() / n as f64,
        y.iter().sum::<f64>() / n as f64,
    );
    let x: Vec<f64> = x.iter().map(|value| value - mean_x).collect();
    let y: Vec<f64> = y.iter().map(|value| value - mean_y).collect();
    let (sx, sy, sxx, sxy, syy) = x.iter().zip(&y).fold(
        (0.0, 0.0, 0.0, 0.0, 0.0),
        |(sx, sy, sxx, sxy, syy), (x, y)| (sx + x, sy + y, sxx + x * x, sxy + x * y, syy + y * y),
    );
    // Sums over the levels right of the candidate: count, x, x², y, xy.
    let last = n - 1;
    let mut right = [1.0, x[last], x[last] * x[last], y[last], x[last] * y[last]];
    let mut best: Option<(usize, f64)> = None;
    for index in (2..n - 2).rev() {
        let (xr, yr) = (x[index + 1], y[index + 1]);
        right[0] += 1.0;
        right[1] += xr;
        right[2] += xr * xr;
        right[3] += yr;
        right[4] += xr * yr;
        let k = x[index];
        let [count, rx, rxx, ry, rxy] = right;
        // h = max(0, x - k) is zero up to and including the candidate.
        let sh = rx - k * count;
        let shh = rxx - 2.0 * k * rx + k * k * count;
        let sxh = rxx - k * rx;
        let shy = rxy - k * ry;
        let normal = nalgebra::Matrix3::new(
            n as f64, sx, sh, //
            sx, sxx, sxh, //
            sh, sxh, shh,
        );
        let moments = nalgebra::Vector3::new(sy, sxy, shy);
        let Some(solution) = normal.lu().solve(&moments) else {
            continue;
        };
        let sse = syy - solution.dot(&moments);
        if best.is_none_or(|(_, least)| sse < least) {
            best = Some((index, sse));
        }
    }
    best.map(|(index, _)| index)
}

/// Least squares of y = a + b x + c max(0, x - k); with no k, a straight line.
fn fit_hinge(x: &[f64], y: &[f64], breakpoint: Option<f64>) -> Option<HingeFit> {
    let columns = if breakpoint.is_some() { 3 } else { 2 };
    let design = nalgebra::DMatrix::from_fn(x.len(), columns, |row, column| match column {
        0 => 1.0,
        1 => x[row],
        _ => (x[row] - breakpoint.unwrap_or(0.0)).max(0.0),
    });
    let target = nalgebra::DVector::from_column_slice(y);
    let solution = design.clone().svd(true, true).solve(&target, 1e-12).ok()?;
    let sse = (&design * &solution - &target).norm_squared();
    let mut coefficients = [0.0; 3];
    coefficients[..columns].copy_from_slice(solution.as_slice());
    Some(HingeFit {
        breakpoint,
        coefficients,
        sse,
    })
}

/// The first level that reaches the largest capacity.
pub fn saturation(series: &Series) -> Option<Saturation> {
    series
        .points
        .iter()
        .map(|point| (point.workers, series.capacity(point)))
        .reduce(|best, next| if next.1 > best.1 { next } else { best })
        .map(|(workers, capacity)| Saturation { workers, capacity })
}

/// Capacity at the logical-CPU count over capacity at the physical-core count, when both
/// were measured and they differ (SMT present).
pub fn smt_yield(series: &Series) -> Option<f64> {
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
    use crate::analysis::series::{Measure, Point};

    fn job_time_series(times: &[f64]) -> Series {
        Series {
            name: "test".into(),
            source: String::new(),
            measure: Measure::JobTime,
            points: times
                .iter()
                .enumerate()
                .map(|(index, &raw)| Point {
                    workers: index + 1,
                    raw,
                    cv: None,
                    cpu_fraction: None,
                    steal_pct: None,
                    disturbed: Vec::new(),
                    precision_reached: None,
                })
                .collect(),
            physical_cores: Some(4),
            logical_cpus: Some(8),
            complete: true,
            cost: None,
            left_out: Vec::new(),
            job: Default::default(),
        }
    }

    #[test]
    fn flat_then_linear_job_times_bend_at_the_core_count() {
        // 4 cores, 8 threads: time flat to 4, then grows as workers share cores; SMT gives
        // 25% more capacity at 8 (60*8/16 = 30 jobs/min against 60*4/10 = 24).
        let series = job_time_series(&[10.0, 10.0, 10.0, 10.0, 11.5, 13.0, 14.5, 16.0, 18.5]);
        let knee = knee(&series).unwrap();
        assert_eq!(knee.workers, 4);
        assert!(knee.droop.abs() < 1e-9);
        assert!(knee.slope_after > knee.slope_before);
        let saturation = saturation(&series).unwrap();
        assert_eq!(saturation.workers, 8);
        assert!((smt_yield(&series).unwrap() - 1.25).abs() < 1e-9);
    }

    #[test]
    fn perfect_scaling_has_no_knee() {
        let series = job_time_series(&[10.0; 8]);
        assert_eq!(knee(&series), None);
        assert_eq!(knee(&job_time_series(&[10.0, 10.0, 20.0])), None);
    }
}
