//! What the servers' costs buy: price per NOPM, and capacity per unit of cost compared.

use crate::analysis::model::{Comparison, ComparisonRow};
use crate::format::significant;

/// On the NOPM axis, what each server's cost buys: its price per NOPM (an upper bound where
/// its capacity is a lower one).
pub(super) fn price_sentence(comparison: &Comparison) -> Option<String> {
    if comparison.unit != "NOPM" {
        return None;
    }
    let prices: Vec<String> = comparison
        .rows
        .iter()
        .filter_map(|row| {
            let (cost, capacity) = (row.cost?, row.capacity_at_saturation?);
            (capacity > 0.0).then_some(())?;
            let (most, least) = if row.saturation_censored {
                ("at most ", "at least ")
            } else {
                ("", "")
            };
            Some(format!(
                "{} {most}{} ({} for {least}{} NOPM)",
                row.name,
                significant(cost / capacity),
                cost,
                significant(capacity)
            ))
        })
        .collect();
    (!prices.is_empty()).then(|| format!("Price per NOPM: {}.", prices.join("; ")))
}

/// Which server delivers the most capacity per unit of its cost, against the least.
pub(super) fn cost_sentence(comparison: &Comparison) -> Option<String> {
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
