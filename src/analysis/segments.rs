//! Continuous piecewise-linear fits with one, two or three segments, the number chosen by the
//! Bayesian information criterion. The knee search and the "is one curve enough" test both
//! stand on them. Breakpoints sit on measured levels; each is found by one pass over the
//! levels with running sums, so the search stays linear in the number of levels.

use nalgebra::{DMatrix, DVector, Matrix4, Vector4};

/// Bayesian information criterion gain a more complex model needs over a simpler one
/// ("strong evidence" on the usual scale).
pub(crate) const STRONG_EVIDENCE: f64 = 6.0;
/// Fewest levels for two segments, and for three.
const MIN_LEVELS_TWO: usize = 5;
const MIN_LEVELS_THREE: usize = 8;
/// Levels kept between a breakpoint and an end or another breakpoint.
const MARGIN: usize = 2;

/// A fitted continuous piecewise-linear curve y = a + b x + sum c_i max(0, x - k_i).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Segmented {
    /// Indices of the breakpoints (levels), ascending.
    pub knots: Vec<usize>,
    /// a, b, then one slope change per knot.
    pub coefficients: Vec<f64>,
    /// Squared error in units of y.
    pub sse: f64,
    pub bic: f64,
    /// The x of the knots, for prediction.
    knot_x: Vec<f64>,
}

impl Segmented {
    pub(crate) fn predict(&self, x: f64) -> f64 {
        let mut y = self.coefficients[0] + self.coefficients[1] * x;
        for (knot, change) in self.knot_x.iter().zip(&self.coefficients[2..]) {
            y += change * (x - knot).max(0.0);
        }
        y
    }

    /// Free coefficients: intercept, slope, and a slope change and a position per knot.
    pub(crate) fn parameters(&self) -> usize {
        2 + 2 * self.knots.len()
    }

    /// Slope of each segment, left to right.
    pub(crate) fn slopes(&self) -> Vec<f64> {
        let mut slope = self.coefficients[1];
        let mut slopes = vec![slope];
        for change in &self.coefficients[2..] {
            slope += change;
            slopes.push(slope);
        }
        slopes
    }
}

/// BIC from a squared error: n ln(SSE / n) + p ln n, with the error floored so that exact
/// (noise-free) data still compares sensibly. y should be scaled to about 1.
pub(crate) fn bic(sse: f64, levels: usize, parameters: usize) -> f64 {
    let n = levels as f64;
    n * (sse.max(n * 1e-20) / n).ln() + parameters as f64 * n.ln()
}

/// The line, and the best two- and three-segment fits that the levels allow.
pub(crate) fn candidates(x: &[f64], y: &[f64]) -> Vec<Segmented> {
    let mut fits: Vec<Segmented> = fit_knots(x, y, &[]).into_iter().collect();
    if x.len() < MIN_LEVELS_TWO {
        return fits;
    }
    let Some(first) = scan(x, y, None) else {
        return fits;
    };
    fits.extend(fit_knots(x, y, &[first]));
    if x.len() >= MIN_LEVELS_THREE
        && let Some(pair) = best_pair(x, y, first)
    {
        fits.extend(fit_knots(x, y, &pair));
    }
    fits
}

/// The candidate with the least BIC.
pub(crate) fn best(fits: &[Segmented]) -> Option<&Segmented> {
    fits.iter().min_by(|a, b| a.bic.total_cmp(&b.bic))
}

/// Two breakpoints by alternating one-breakpoint scans from the best single one: each
/// pass is linear in the levels, and a few passes settle.
fn best_pair(x: &[f64], y: &[f64], first: usize) -> Option<[usize; 2]> {
    let mut pair = [first, scan(x, y, Some(first))?];
    for _ in 0..6 {
        let moved = [scan(x, y, Some(pair[1]))?, pair[1]];
        let moved = [moved[0], scan(x, y, Some(moved[0]))?];
        if moved == pair {
            break;
        }
        pair = moved;
    }
    pair.sort_unstable();
    Some(pair)
}

/// Least squares with breakpoints at the given levels.
pub(crate) fn fit_knots(x: &[f64], y: &[f64], knots: &[usize]) -> Option<Segmented> {
    let knot_x: Vec<f64> = knots.iter().map(|&index| x[index]).collect();
    let columns = 2 + knots.len();
    let design = DMatrix::from_fn(x.len(), columns, |row, column| match column {
        0 => 1.0,
        1 => x[row],
        _ => (x[row] - knot_x[column - 2]).max(0.0),
    });
    let target = DVector::from_column_slice(y);
    let solution = design.clone().svd(true, true).solve(&target, 1e-12).ok()?;
    let sse = (&design * &solution - &target).norm_squared();
    let mut sorted: Vec<usize> = knots.to_vec();
    sorted.sort_unstable();
    let mut fit = Segmented {
        knots: knots.to_vec(),
        coefficients: solution.as_slice().to_vec(),
        sse,
        bic: 0.0,
        knot_x,
    };
    fit.bic = bic(sse, x.len(), fit.parameters());
    // Keep knots (and their coefficients) in ascending order.
    if fit.knots != sorted {
        return fit_knots(x, y, &sorted);
    }
    Some(fit)
}

/// The level whose breakpoint, added to the `fixed` one, leaves the least squared error.
/// The normal equations of every candidate come from suffix sums kept while walking the
/// levels from the right, so one scan is linear in the levels. x and y are centred first,
/// which keeps the sums well conditioned. Each candidate's system (at most 4 x 4) is solved
/// on the stack, padded with the identity: nothing is allocated per level.
fn scan(x: &[f64], y: &[f64], fixed: Option<usize>) -> Option<usize> {
    let fixed: &[usize] = fixed.as_slice();
    let n = x.len();
    if n < MIN_LEVELS_TWO {
        return None;
    }
    let mean_x = x.iter().sum::<f64>() / n as f64;
    let mean_y = y.iter().sum::<f64>() / n as f64;
    let x: Vec<f64> = x.iter().map(|value| value - mean_x).collect();
    let y: Vec<f64> = y.iter().map(|value| value - mean_y).collect();
    // Base columns: 1, x and a hinge at each fixed breakpoint.
    let fixed_x: Vec<f64> = fixed.iter().map(|&index| x[index]).collect();
    let base = |row: usize, column: usize| -> f64 {
        match column {
            0 => 1.0,
            1 => x[row],
            _ => (x[row] - fixed_x[column - 2]).max(0.0),
        }
    };
    let m = 2 + fixed.len();
    let mut base_gram = DMatrix::zeros(m, m);
    let mut base_moments = DVector::zeros(m);
    for (row, &target) in y.iter().enumerate() {
        for i in 0..m {
            base_moments[i] += base(row, i) * target;
            for j in 0..m {
                base_gram[(i, j)] += base(row, i) * base(row, j);
            }
        }
    }
    let yy: f64 = y.iter().map(|value| value * value).sum();
    // Suffix sums right of the candidate: of each base column b and b x, and of 1, x, x², y, xy.
    let mut sum_b = vec![0.0; m];
    let mut sum_bx = vec![0.0; m];
    let mut sums = [0.0; 5];
    let add = |row: usize, sum_b: &mut [f64], sum_bx: &mut [f64], sums: &mut [f64; 5]| {
        for column in 0..m {
            let value = base(row, column);
            sum_b[column] += value;
            sum_bx[column] += value * x[row];
        }
        for (sum, term) in
            sums.iter_mut()
                .zip([1.0, x[row], x[row] * x[row], y[row], x[row] * y[row]])
        {
            *sum += term;
        }
    };
    for row in n - MARGIN..n {
        add(row, &mut sum_b, &mut sum_bx, &mut sums);
    }
    let mut best: Option<(usize, f64)> = None;
    for index in (MARGIN..n - MARGIN).rev() {
        if index + 1 < n - MARGIN {
            add(index + 1, &mut sum_b, &mut sum_bx, &mut sums);
        }
        if fixed.iter().any(|&knot| knot.abs_diff(index) < MARGIN) {
            continue;
        }
        let k = x[index];
        let mut gram = Matrix4::identity();
        gram.view_mut((0, 0), (m, m)).copy_from(&base_gram);
        let mut moments = Vector4::zeros();
        moments.rows_mut(0, m).copy_from(&base_moments);
        for column in 0..m {
            let cross = sum_bx[column] - k * sum_b[column];
            gram[(column, m)] = cross;
            gram[(m, column)] = cross;
        }
        let [s1, sx, sxx, sy, sxy] = sums;
        gram[(m, m)] = sxx - 2.0 * k * sx + k * k * s1;
        moments[m] = sxy - k * sy;
        let Some(solution) = gram.lu().solve(&moments) else {
            continue;
        };
        let sse = yy - solution.dot(&moments);
        if best.is_none_or(|(_, least)| sse < least) {
            best = Some((index, sse));
        }
    }
    best.map(|(index, _)| index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breakpoints_of_exact_piecewise_lines_are_found() {
        let x: Vec<f64> = (1..=48).map(f64::from).collect();
        let two: Vec<f64> = x
            .iter()
            .map(|&x| 1.0 + 0.05 * (x - 20.0).max(0.0))
            .collect();
        let fits = candidates(&x, &two);
        let chosen = best(&fits).unwrap();
        assert_eq!(chosen.knots, [19]);
        let three: Vec<f64> = x
            .iter()
            .map(|&x| 1.0 + 0.02 * (x - 16.0).max(0.0) + 0.05 * (x - 32.0).max(0.0))
            .collect();
        let fits = candidates(&x, &three);
        let chosen = best(&fits).unwrap();
        assert_eq!(chosen.knots, [15, 31]);
        assert!((chosen.slopes()[2] - 0.07).abs() < 1e-9);
        assert!((chosen.predict(40.0) - three[39]).abs() < 1e-9);
    }

    #[test]
    fn a_straight_line_keeps_one_segment() {
        let x: Vec<f64> = (1..=30).map(f64::from).collect();
        let y: Vec<f64> = x.iter().map(|&x| 2.0 + 0.1 * x).collect();
        assert!(best(&candidates(&x, &y)).unwrap().knots.is_empty());
    }
}
