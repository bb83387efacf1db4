//! A search's figure (`run --find`): each probe's percentile against the rate it was
//! offered, kept and broken probes apart, and the objective's limit as a line, so the
//! bracket the answer names is seen between the last kept and the first broken mark.

use super::{
    Analysis, Figure, LegendCorner, Line, LineStyle, MAX_SERIES_IN_FIGURES, NEUTRAL, SeriesAnalysis,
};

/// One figure per searched series (its first objective's percentile); none without.
pub(super) fn search_figures(analysis: &Analysis) -> Vec<Figure> {
    (analysis.series.iter().enumerate())
        .take(MAX_SERIES_IN_FIGURES)
        .filter_map(|(index, series)| search_figure(index, series))
        .collect()
}

fn search_figure(index: usize, series: &SeriesAnalysis) -> Option<Figure> {
    let search = series.series.search.as_ref()?;
    let objective = search.objectives.first()?;
    let mark = |kept: bool| -> Vec<(f64, f64)> {
        (search.probes.iter())
            .filter(|probe| probe.holds() == kept)
            .filter_map(|probe| {
                let check =
                    (probe.objectives.iter()).find(|check| &check.objective == objective)?;
                Some((probe.rate_per_s, check.interval.as_ref()?.estimate_ms))
            })
            .collect()
    };
    let limit_ms = (search.probes.iter())
        .flat_map(|probe| &probe.objectives)
        .find(|check| &check.objective == objective)?
        .limit_ms;
    let rates = search.probes.iter().map(|probe| probe.rate_per_s);
    let (low, high) = rates.fold((f64::INFINITY, 0.0_f64), |(low, high), rate| {
        (low.min(rate), high.max(rate))
    });
    let points = |label: String, color: usize, points: Vec<(f64, f64)>| Line {
        label,
        color,
        points,
        style: LineStyle::Points,
        bars: Vec::new(),
        hollow: Vec::new(),
    };
    let percentile = objective.split(" <=").next().unwrap_or(objective);
    let lines = vec![
        points(format!("{} kept", series.name()), 2 * index, mark(true)),
        points(
            format!("{} broken", series.name()),
            2 * index + 1,
            mark(false),
        ),
        Line {
            label: format!("objective {objective}"),
            color: NEUTRAL,
            points: vec![(low, limit_ms), (high, limit_ms)],
            style: LineStyle::Ideal,
            bars: Vec::new(),
            hollow: Vec::new(),
        },
    ];
    Some(Figure {
        slug: format!("fig_search_{}", index + 1),
        title: format!(
            "{} - the search for the largest rate at {objective}",
            series.name()
        ),
        caption: format!(
            "Each probe's {percentile} (its estimate; the probes table gives its 95% interval) at the rate it was offered, kept or broken, and the objective's limit dashed: the answer's bracket lies between the largest kept rate and the smallest broken one above it"
        ),
        x_label: format!("offered {}", search.unit),
        y_label: format!("{percentile} response time (ms)"),
        lines,
        markers: Vec::new(),
        legend: LegendCorner::UpperLeft,
        y_at_least: limit_ms * 1.2,
        x_names: Vec::new(),
        x_decimals: 0,
    })
}
