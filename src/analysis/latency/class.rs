//! An objective on one class of responses (`--slo 'new_order:p99<=5ms'`): each series seen
//! through that class, so the verdicts, comparisons and the answer read its percentiles.

use std::collections::BTreeSet;

use super::{OpenLoopSeries, PacedLevel};
use crate::analysis::series::{Point, Series};
use crate::latency::{ClassTimes, Latency, Percentiles, ResponseTimes};

/// The level's responses of `class` in place of all its responses, measured from where the
/// class's were (a replay's fingerprints from the send); the rate and unit kept; service
/// time, schedule lag and lateness are all responses' and go.
fn class_latency(latency: &Latency, classes: &[ClassTimes], class: &str) -> Option<Latency> {
    let times = classes.iter().find(|one| one.class == class)?;
    let response = ResponseTimes::decode(&times.histogram)
        .ok()?
        .percentiles()?;
    Some(Latency {
        response,
        service: None,
        schedule_lag: None,
        late: None,
        histogram: Some(times.histogram.clone()),
        measured_from: times.measured_from_or(latency.measured_from),
        ..latency.clone()
    })
}

fn point_of_class(point: &Point, class: &str) -> Point {
    let latency = point
        .latency
        .as_deref()
        .and_then(|latency| class_latency(latency, &point.classes, class));
    Point {
        latency: latency.map(Box::new),
        ..point.clone()
    }
}

/// A series whose levels' response times are those of `class` (a level that answered none
/// of it has none).
pub fn series_of_class(series: &Series, class: &str) -> Series {
    Series {
        points: (series.points.iter())
            .map(|point| point_of_class(point, class))
            .collect(),
        paced: (series.paced.iter())
            .map(|point| point_of_class(point, class))
            .collect(),
        ..series.clone()
    }
}

impl OpenLoopSeries {
    /// The same levels with `class`'s response times. A level that answered none of it
    /// stays, with no response to read: it was still asked its rate, which a verdict that
    /// every rate kept the objective must weigh.
    pub fn of_class(&self, class: &str) -> Self {
        let found: Vec<Option<Latency>> = (self.levels.iter())
            .map(|level| class_latency(&level.latency, &level.classes, class))
            .collect();
        let from = found
            .iter()
            .flatten()
            .map(|latency| latency.measured_from)
            .next();
        let levels = (self.levels.iter().zip(found))
            .map(|(level, latency)| PacedLevel {
                latency: latency.unwrap_or_else(|| Latency {
                    response: Percentiles::default(),
                    service: None,
                    schedule_lag: None,
                    late: None,
                    histogram: None,
                    measured_from: from.unwrap_or(level.latency.measured_from),
                    ..level.latency.clone()
                }),
                ..level.clone()
            })
            .collect();
        Self {
            levels,
            ..self.clone()
        }
    }
}

/// The classes a series' levels recorded, for a message naming what there is.
pub fn classes_of(series: &Series) -> BTreeSet<String> {
    (series.points.iter().chain(&series.paced))
        .flat_map(|point| point.classes.iter().map(|class| class.class.clone()))
        .collect()
}

/// The same of open-loop levels.
pub fn classes_of_open(series: &OpenLoopSeries) -> BTreeSet<String> {
    (series.levels.iter())
        .flat_map(|level| level.classes.iter().map(|class| class.class.clone()))
        .collect()
}

/// Why a series has no verdict on `class`: it recorded other classes, or none.
pub fn missing_class(class: &str, recorded: &BTreeSet<String>) -> String {
    if recorded.is_empty() {
        return format!(
            "no class '{class}': the series recorded no classes of responses (corescale's scripts, replays and order entry record them)"
        );
    }
    let names: Vec<&str> = recorded.iter().map(String::as_str).collect();
    format!(
        "no class '{class}' recorded (its classes: {})",
        names.join(", ")
    )
}
