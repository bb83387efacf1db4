//! What an imported figure may be, checked where it is read (the JSON reader in `analysis`,
//! the typed CSV row in `csv_format`): each figure's range and the message naming it.

use std::ops::RangeInclusive;

/// Largest worker count a file may claim.
pub const MAX_WORKERS: f64 = 4_294_967_295.0;
/// What a job time (s) or rate may be: positive, and far enough from 0 and infinity that
/// capacities and ratios stay finite.
pub const RAW: RangeInclusive<f64> = 1e-9..=1e18;
/// A count or rate that may be 0.
pub const COUNT: RangeInclusive<f64> = 0.0..=1e18;
/// Job-to-job CV as a fraction (up to 10,000%).
pub const CV: RangeInclusive<f64> = 0.0..=100.0;
/// CPU time over wall time per worker; above 1 only by clock granularity or a database
/// server's own helpers.
pub const CPU_FRACTION: RangeInclusive<f64> = 0.0..=16.0;
pub const PERCENT: RangeInclusive<f64> = 0.0..=100.0;

/// The value when it is finite and in `range`, else what is wrong with it: "the CV NaN is
/// outside 0 to 100".
pub fn check(value: f64, range: &RangeInclusive<f64>, what: &str) -> Result<f64, String> {
    if value.is_finite() && range.contains(&value) {
        Ok(value)
    } else {
        Err(format!(
            "{what} {} is outside {} to {}",
            short(value),
            short(*range.start()),
            short(*range.end())
        ))
    }
}

/// A worker count from a number: whole, from 1 to [`MAX_WORKERS`].
pub fn workers(value: f64) -> Result<usize, String> {
    if (1.0..=MAX_WORKERS).contains(&value) && value.fract() == 0.0 {
        Ok(value as usize)
    } else {
        Err(format!(
            "'{value}' is not a worker count (a whole number from 1 to {MAX_WORKERS})"
        ))
    }
}

/// A range end as people write it: 1e-9, 100, 1e18.
pub fn short(value: f64) -> String {
    if value != 0.0 && !(1e-3..=1e6).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        value.to_string()
    }
}
