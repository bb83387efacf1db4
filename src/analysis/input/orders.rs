//! A `run tpcc` document on the NOPM axis: its levels' new orders per second as new orders
//! per minute (the figure order-entry results are argued in), and its response times those
//! of New-Order, the transaction NOPM counts, where the run recorded them whole.

use super::*;

use crate::analysis::series::NEW_ORDER;
use crate::error::UsageError;

/// Said of every series on the NOPM axis, as HammerDB says it of its own.
pub(crate) const NOT_AUDITED: &str =
    "NOPM derived from TPC-C: not an audited TPC-C result, and not comparable with one";

/// The series' levels per minute, their response times New-Order's. Its job leaves the
/// engine out: order entry on two servers or engines at the same warehouses and mix is one
/// job, compared by NOPM (a different warehouse count is another job).
/// Other series are returned as they are.
pub(super) fn on_the_nopm_axis(mut series: Series) -> Series {
    let new_orders_per_s =
        matches!(&series.measure, Measure::Rate { unit } if unit == "new orders/s");
    if series.job.tool != "corescale"
        || series.job.workload.as_deref() != Some("tpcc")
        || !new_orders_per_s
    {
        return series;
    }
    series.measure = Measure::Rate {
        unit: "NOPM".to_string(),
    };
    // The job's shape begins with the engine ("PostgreSQL 15, tpcc 2 warehouse(s), ...").
    if let Some(shape) = &mut series.job.shape
        && let Some((_, rest)) = shape.split_once(", ")
        && rest.starts_with("tpcc ")
    {
        *shape = rest.to_string();
    }
    for point in series.points.iter_mut().chain(series.paced.iter_mut()) {
        point.raw *= 60.0;
        point.spread = point.spread.map(|(low, high)| (60.0 * low, 60.0 * high));
    }
    series.notes.push(format!("{}: {NOT_AUDITED}", series.name));
    // Closed-loop levels of one run: New-Order's times in place of every transaction's. A
    // campaign's parts keep theirs, whose histograms the merge adds up.
    let mut kept = Vec::new();
    let mut at_set_rates = false;
    for point in &mut series.points {
        let Some(latency) = point.latency.as_deref_mut() else {
            continue;
        };
        if latency.rate.is_some() {
            // An open-loop level (set apart from the others once read): its rates and lag
            // are every transaction's.
            at_set_rates = true;
            continue;
        }
        match new_order_times(&point.figures) {
            Some(response) if point.campaign.is_none() => {
                *latency = Latency {
                    unit: NEW_ORDER.to_string(),
                    ..Latency::closed("transaction", response)
                };
            }
            _ => kept.push(point.workers.to_string()),
        }
    }
    if !kept.is_empty() {
        series.notes.push(format!(
            "{}: response times at {} workers are every transaction's, not New-Order's (a campaign's part, a run before New-Order's percentiles were recorded, or a level without a New-Order)",
            series.name,
            kept.join(", ")
        ));
    }
    if at_set_rates {
        series.notes.push(format!(
            "{}: response times at set rates (--rate) are every transaction's, not New-Order's",
            series.name
        ));
    }
    series
}

/// New-Order's percentiles, from the figures the run recorded of its histogram.
fn new_order_times(figures: &std::collections::BTreeMap<String, f64>) -> Option<Percentiles> {
    let figure = |name: &str| figures.get(&format!("new_order {name}")).copied();
    let count = figure("transactions")?;
    (count >= 1.0).then_some(())?;
    Some(Percentiles {
        count: count as u64,
        mean_ms: figure("mean_ms")?,
        p50_ms: figure("p50_ms")?,
        p90_ms: figure("p90_ms")?,
        p95_ms: figure("p95_ms")?,
        p99_ms: figure("p99_ms")?,
        p999_ms: figure("p999_ms")?,
        max_ms: figure("max_ms")?,
    })
}

/// Whether a series' measure is the NOPM axis (a `run tpcc` run's, or HammerDB's).
pub(crate) fn on_nopm_axis(measure: &Measure) -> bool {
    matches!(measure, Measure::Rate { unit } if unit == "NOPM")
}

/// The warehouses an order-entry job ran on, where its shape says ("tpcc 2 warehouse(s)").
pub(crate) fn warehouses(job: &Job) -> Option<u32> {
    let shape = job.shape.as_deref()?;
    shape
        .split(", ")
        .find_map(|part| part.strip_suffix(" warehouse(s)"))
        .and_then(|part| part.rsplit(' ').next())
        .and_then(|count| count.parse().ok())
}

/// Gives a series on the NOPM axis the warehouses its file does not say (HammerDB's log
/// does not), from `report --warehouses`: it is then one job with order entry at the same
/// warehouses and mix. Refused for a series not on that axis, or one whose file says
/// another count.
pub(crate) fn set_warehouses(series: &mut Series, count: u32) -> Result<(), UsageError> {
    if !on_nopm_axis(&series.measure) {
        return Err(UsageError::new(format!(
            "--warehouses {}={count}: {} is not an order-entry result on the NOPM axis (a `run tpcc` run or HammerDB's TPROC-C log)",
            series.name, series.name
        )));
    }
    match warehouses(&series.job) {
        Some(known) if known == count => Ok(()),
        Some(known) => Err(UsageError::new(format!(
            "--warehouses {}={count}: {} ran on {known} warehouse(s), as its file says; leave it out, or name another series",
            series.name, series.name
        ))),
        None => {
            let shape = series.job.shape.get_or_insert_with(String::new);
            *shape = if shape.is_empty() {
                format!("{count} warehouse(s)")
            } else {
                format!("{shape}, {count} warehouse(s)")
            };
            Ok(())
        }
    }
}
