//! A `run tpcc` document on the NOPM axis: its levels' new orders per second as new orders
//! per minute (the figure order-entry results are argued in), and its response times those
//! of New-Order, the transaction NOPM counts, where the run recorded them whole.

use super::*;
use crate::latency::MeasuredFrom;

/// Said of every series on the NOPM axis, as HammerDB says it of its own.
pub(crate) const NOT_AUDITED: &str =
    "NOPM derived from TPC-C: not an audited TPC-C result, and not comparable with one";

/// The series' levels per minute, their response times New-Order's. Its job leaves the
/// engine out: order entry on two servers or engines at the same warehouses and mix is one
/// job, compared by NOPM (a different warehouse count is another job).
pub(super) fn on_the_nopm_axis(mut series: Series, engine: Option<&str>) -> Series {
    series.measure = Measure::Rate {
        unit: "NOPM".to_string(),
    };
    if let (Some(shape), Some(engine)) = (&mut series.job.shape, engine)
        && let Some(rest) = shape.strip_prefix(&format!("{engine}, "))
    {
        *shape = rest.to_string();
    }
    let mut whole = true;
    for point in series.points.iter_mut().chain(series.paced.iter_mut()) {
        point.raw *= 60.0;
        point.spread = point.spread.map(|(low, high)| (60.0 * low, 60.0 * high));
        if let Some(latency) = point.latency.as_deref_mut()
            && latency.measured_from == MeasuredFrom::Send
        {
            match new_order_times(&point.figures) {
                Some(response) => {
                    // Every figure of the level's own latency is every transaction's: only
                    // New-Order's percentiles stand in their place.
                    *latency = Latency {
                        unit: "New-Order".to_string(),
                        ..Latency::closed("transaction", response)
                    };
                }
                None => whole = false,
            }
        }
    }
    series.notes.push(format!("{}: {NOT_AUDITED}", series.name));
    if !whole {
        series.notes.push(format!(
            "{}: the run did not record New-Order's whole percentiles (a run before they were): its response times are every transaction's",
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
