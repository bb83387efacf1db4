//! Building the figures from an analysis: which series go together, their lines, markers,
//! error bars and fits, as data.

use super::*;
use crate::analysis::latency::{OpenLoopSeries, PacedLevel};

/// Four figures per group of series that measure the same thing, and a fifth per comparison.
pub(crate) fn figures(analysis: &Analysis) -> Vec<Figure> {
    let groups = measure_groups(&analysis.series);
    let several = groups.len() > 1;
    groups
        .iter()
        .enumerate()
        .flat_map(|(number, group)| {
            // A series keeps its colour (its input position) in every figure.
            let members: Vec<(usize, &SeriesAnalysis)> = group
                .iter()
                .map(|&index| (index, &analysis.series[index]))
                .collect();
            let suffix = if several {
                format!("_{}", number + 1)
            } else {
                String::new()
            };
            // Past a dozen series a figure is a tangle and its legend fills it: a fleet is
            // drawn by its own charts instead.
            if members.len() > MAX_SERIES_IN_FIGURES {
                return Vec::new();
            }
            let mut figures = group_figures(&members[0].1.series.measure, &members, &suffix);
            figures.extend(ratio_figure(analysis, &members, &suffix));
            // Several groups draw figures 1-4 each: every title names its series.
            if several {
                let names: Vec<&str> = members.iter().map(|(_, series)| series.name()).collect();
                for figure in &mut figures {
                    figure.title = format!("{} ({})", figure.title, names.join(", "));
                }
            }
            figures
        })
        .chain(analysis.fleet.iter().flat_map(fleet_figures))
        .chain(open_loop_figures(analysis))
        .chain(super::search::search_figures(analysis))
        .chain(
            analysis
                .series
                .iter()
                .enumerate()
                .take(MAX_SERIES_IN_FIGURES)
                .flat_map(|(index, series)| timeline_figures(index, series)),
        )
        .collect()
}

/// The rate and p99 of each interval of a series' largest level and its knee level, over
/// the measured window: a warm-up or a stall (a checkpoint) shows as a step or a dip.
pub(super) fn timeline_figures(index: usize, series: &SeriesAnalysis) -> Vec<Figure> {
    let largest = series
        .series
        .points
        .iter()
        .max_by_key(|point| point.workers);
    let knee = series
        .knee
        .as_ref()
        .and_then(|knee| series.series.point(knee.workers));
    let mut shown: Vec<(&crate::analysis::series::Point, &str)> = Vec::new();
    for (point, role) in [(largest, "largest"), (knee, "knee")] {
        if let Some(point) = point.filter(|point| point.intervals.len() >= 2)
            && !shown.iter().any(|(seen, _)| seen.workers == point.workers)
        {
            shown.push((point, role));
        }
    }
    if shown.is_empty() {
        return Vec::new();
    }
    let unit = shown[0].0.responses_unit();
    let lines = |pick: &dyn Fn(&crate::latency::IntervalFigures) -> Option<f64>| -> Vec<Line> {
        shown
            .iter()
            .enumerate()
            .map(|(color, (point, role))| Line {
                label: format!("{} ({role})", crate::format::workers_text(point.workers)),
                color,
                points: point
                    .intervals
                    .iter()
                    .filter(|interval| interval.length_s > 0.0)
                    .filter_map(|interval| {
                        Some((interval.start_s + interval.length_s / 2.0, pick(interval)?))
                    })
                    .collect(),
                style: LineStyle::Measured,
                bars: Vec::new(),
                hollow: Vec::new(),
            })
            .collect()
    };
    let window = shown
        .iter()
        .flat_map(|(point, _)| point.intervals.iter())
        .map(|interval| interval.start_s + interval.length_s)
        .fold(0.0, f64::max);
    let figure = |slug: &str, title: String, caption: String, y_label: String, lines| Figure {
        slug: format!("{slug}_{}", index + 1),
        title,
        caption,
        x_label: "seconds into the measured window".to_string(),
        y_label,
        lines,
        markers: Vec::new(),
        legend: LegendCorner::LowerRight,
        y_at_least: 0.0,
        x_names: Vec::new(),
        x_decimals: if window < 10.0 { 1 } else { 0 },
    };
    let server = shown
        .iter()
        .any(|(point, _)| point.intervals.iter().any(|i| i.server_lio_per_s.is_some()));
    let mut figures = vec![
        figure(
            "fig_timeline_rate",
            format!("{} - {unit} per second over the level", series.name()),
            "Each interval's rate (--interval) of the largest level and the knee level, every batch's same interval together: a rise at the start is a warm-up (--warmup leaves it out), a dip a stall; the warnings name those beyond the noise".to_string(),
            format!("{unit} per second"),
            lines(&|interval| Some(interval.rate_per_s)),
        ),
        figure(
            "fig_timeline_p99",
            format!("{} - p99 over the level", series.name()),
            "Each interval's p99 response time, for the same levels: a stall shows as a spike".to_string(),
            "p99 response time (ms)".to_string(),
            lines(&|interval| interval.p99_ms),
        ),
    ];
    if server {
        figures.push(figure(
            "fig_timeline_server",
            format!("{} - the database's logical reads over the level", series.name()),
            "The database's own count of blocks read per second in each interval (its counters read at each interval's edge), for the same levels: a dip with the statements' rate is the server's; one without, the client's".to_string(),
            "blocks read per second (server's count)".to_string(),
            lines(&|interval| interval.server_lio_per_s),
        ));
    }
    figures
}

/// The open-loop figures: p99 against the rate sent, a line per series and worker count,
/// for `run db --rate` (the latency-throughput curve capacity is planned on); a replay's
/// against its speed over the captured pace (`run replay`), since its rate sent is its
/// capture's, which says little beside another capture's.
pub(super) fn open_loop_figures(analysis: &Analysis) -> Vec<Figure> {
    let shown: Vec<&OpenLoopSeries> = analysis
        .open_loop
        .iter()
        .take(MAX_SERIES_IN_FIGURES)
        .collect();
    let (replays, rates): (Vec<&OpenLoopSeries>, Vec<&OpenLoopSeries>) =
        shown.into_iter().partition(|open| open.capture.is_some());
    let rate = p99_figure(
        "fig_latency_rate",
        "Response time against the rate sent",
        "p99 of each statement, counted from when it was due, at each rate sent (run db --rate): flat while the server has room, climbing where statements queue; the rate where it crosses an objective is the throughput to plan on",
        ("statements sent per second", 0),
        p99_lines(&rates, |level| level.sent_per_s),
    );
    let speed = p99_figure(
        "fig_latency_speed",
        "Response time against the replay's speed",
        "p99 of each replayed statement, counted from when it was due, at each speed over the captured pace (run replay): flat while the server keeps up with the production workload sped up, climbing where statements queue",
        ("speed over the captured pace (x)", 1),
        p99_lines(&replays, |level| level.speed.unwrap_or(f64::NAN)),
    );
    rate.into_iter().chain(speed).collect()
}

/// A figure of p99 lines against `x_axis` (its name and decimals), None without lines.
fn p99_figure(
    slug: &str,
    title: &str,
    caption: &str,
    (x_label, x_decimals): (&str, usize),
    lines: Vec<Line>,
) -> Option<Figure> {
    (!lines.is_empty()).then(|| Figure {
        slug: slug.to_string(),
        title: title.to_string(),
        caption: caption.to_string(),
        x_label: x_label.to_string(),
        y_label: "p99 response time (ms)".to_string(),
        lines,
        markers: Vec::new(),
        legend: LegendCorner::UpperLeft,
        y_at_least: 0.0,
        x_names: Vec::new(),
        x_decimals,
    })
}

/// A p99 line per series and worker count, its levels at `x` in order.
fn p99_lines(open_loop: &[&OpenLoopSeries], x: impl Fn(&PacedLevel) -> f64) -> Vec<Line> {
    let mut lines = Vec::new();
    for open in open_loop {
        let mut counts: Vec<usize> = open.levels.iter().map(|level| level.workers).collect();
        counts.dedup();
        for workers in counts {
            let mut points: Vec<(f64, f64)> = open
                .levels
                .iter()
                .filter(|level| level.workers == workers)
                .map(|level| (x(level), level.latency.response.p99_ms))
                .filter(|point| point.0.is_finite())
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            lines.push(Line {
                label: format!(
                    "{} {} p99",
                    open.series,
                    crate::format::workers_text(workers)
                ),
                color: lines.len(),
                points,
                style: LineStyle::Measured,
                bars: Vec::new(),
                hollow: Vec::new(),
            });
        }
    }
    lines
}

/// Each host's capacity against the median of its siblings, and each repeatedly measured
/// host's capacity run by run against its own median.
pub(super) fn fleet_figures(fleet: &Fleet) -> Vec<Figure> {
    let compared: Vec<(usize, &crate::analysis::model::FleetHost)> = fleet
        .hosts
        .iter()
        .filter(|host| host.capacity_vs_group.is_some())
        .enumerate()
        .collect();
    let mut figures = Vec::new();
    if !compared.is_empty() {
        figures.push(against_siblings(fleet, &compared));
    }
    if !fleet.histories.is_empty() {
        figures.push(over_time(fleet));
    }
    figures
}

/// Each compared host's capacity over the median of its siblings.
fn against_siblings(
    fleet: &Fleet,
    compared: &[(usize, &crate::analysis::model::FleetHost)],
) -> Figure {
    let mut lines: Vec<Line> = fleet
        .groups
        .iter()
        .enumerate()
        .filter(|(_, group)| group.hosts.len() > 1)
        .map(|(number, group)| Line {
            label: group
                .cpu_model
                .clone()
                .unwrap_or_else(|| format!("group {}", number + 1)),
            color: number,
            points: compared
                .iter()
                .filter(|(_, host)| host.group == number)
                .map(|(index, host)| (*index as f64 + 1.0, host.capacity_vs_group.unwrap_or(1.0)))
                .collect(),
            style: LineStyle::Points,
            bars: Vec::new(),
            hollow: Vec::new(),
        })
        .collect();
    lines.push(Line {
        label: "sibling median".to_string(),
        color: NEUTRAL,
        points: vec![(0.5, 1.0), (compared.len() as f64 + 0.5, 1.0)],
        style: LineStyle::Ideal,
        bars: Vec::new(),
        hollow: Vec::new(),
    });
    // Named as tabled: at saturation, at the largest common load, or single-thread speed.
    let figure = fleet
        .shared_figure_name()
        .unwrap_or_else(|| "compared figure".to_string());
    Figure {
        slug: "fleet_capacity".to_string(),
        title: format!("Fleet - {figure} against the median of each host's siblings"),
        caption: format!(
            "Each host's {figure} over the median of the other hosts with the same CPU, cores and job (the ratio the fleet table gives; hosts without an estimate are not drawn); the findings name those beyond the noise."
        ),
        x_label: "host".to_string(),
        y_label: format!("{figure} / sibling median"),
        lines,
        markers: Vec::new(),
        legend: LegendCorner::LowerRight,
        y_at_least: 1.2,
        x_names: compared.iter().map(|(_, host)| host.host.clone()).collect(),
        x_decimals: 0,
    }
}

/// Each repeatedly measured host's runs, in start order, against the host's median.
fn over_time(fleet: &Fleet) -> Figure {
    let mut lines: Vec<Line> = fleet
        .histories
        .iter()
        .enumerate()
        .map(|(number, history)| Line {
            label: history.host.clone(),
            color: number,
            points: history
                .runs
                .iter()
                .enumerate()
                .filter_map(|(index, run)| Some((index as f64 + 1.0, run.capacity_vs_history?)))
                .collect(),
            style: LineStyle::Measured,
            bars: Vec::new(),
            hollow: Vec::new(),
        })
        .collect();
    let longest = fleet
        .histories
        .iter()
        .map(|history| history.runs.len())
        .max()
        .unwrap_or(1);
    lines.push(Line {
        label: "host's median".to_string(),
        color: NEUTRAL,
        points: vec![(1.0, 1.0), (longest as f64, 1.0)],
        style: LineStyle::Ideal,
        bars: Vec::new(),
        hollow: Vec::new(),
    });
    Figure {
        slug: "fleet_over_time".to_string(),
        title: "Over time - each run's capacity against its host's median".to_string(),
        caption: "Runs in the order they started (repeated runs of one host, such as a week of them): a run that departs beyond the noise is named in the findings.".to_string(),
        x_label: "run, in start order".to_string(),
        y_label: "capacity / host's median".to_string(),
        lines,
        markers: Vec::new(),
        legend: LegendCorner::LowerRight,
        y_at_least: 1.2,
        x_names: Vec::new(),
        x_decimals: 0,
    }
}

/// One dashed vertical per worker count that is some series' P or L, named by what it marks
/// ("RAC55 P=16", "RAC52 L=40; RAC54 P=40", "12 series P=L=2"), in the series' colour when
/// one series has it: many series of one machine type share one label, not one row each.
pub(super) fn markers(members: &[(usize, &SeriesAnalysis)]) -> Vec<Marker> {
    let mut marks: Vec<(usize, &str, usize, &str)> = Vec::new();
    for (color, series) in members {
        let name = series.name();
        match (series.series.physical_cores, series.series.logical_cpus) {
            (Some(physical), Some(logical)) if physical == logical => {
                marks.push((physical, "P=L", *color, name));
            }
            (physical, logical) => {
                marks.extend(physical.map(|cores| (cores, "P", *color, name)));
                marks.extend(logical.map(|cpus| (cpus, "L", *color, name)));
            }
        }
    }
    let mut xs: Vec<usize> = marks.iter().map(|mark| mark.0).collect();
    xs.sort_unstable();
    xs.dedup();
    xs.into_iter()
        .map(|x| {
            let here: Vec<&(usize, &str, usize, &str)> =
                marks.iter().filter(|mark| mark.0 == x).collect();
            let mut kinds: Vec<&str> = here.iter().map(|mark| mark.1).collect();
            kinds.dedup();
            let parts: Vec<String> = kinds
                .iter()
                .map(|kind| {
                    let names: Vec<&str> = here
                        .iter()
                        .filter(|mark| mark.1 == *kind)
                        .map(|mark| mark.3)
                        .collect();
                    let who = match names.as_slice() {
                        [one] => one.to_string(),
                        [one, two] => format!("{one}, {two}"),
                        many => format!("{} series", many.len()),
                    };
                    format!("{who} {kind}={x}")
                })
                .collect();
            let colors: Vec<usize> = here.iter().map(|mark| mark.2).collect();
            Marker {
                x: x as f64,
                color: if colors.iter().all(|color| *color == colors[0]) {
                    colors[0]
                } else {
                    NEUTRAL
                },
                label: parts.join("; "),
            }
        })
        .collect()
}

pub(super) fn group_figures(
    measure: &Measure,
    members: &[(usize, &SeriesAnalysis)],
    suffix: &str,
) -> Vec<Figure> {
    let names = FigureNames::of(measure);
    let measured = |pick: Pick, spread: Spread| measured_lines(members, pick, spread);
    let spread_note = if members
        .iter()
        .any(|(_, series)| series.levels.iter().any(|level| level.raw_spread.is_some()))
    {
        " Bars: fastest to slowest job (median ± stdev for test_cpu_parallel files)."
    } else {
        ""
    };
    let markers = markers(members);
    let marker_note = "Dashed verticals mark each series' physical cores (P) and logical CPUs (L).";
    let figure = |slug: &str, title: String, caption: String, y_label: String, lines| Figure {
        legend: if slug == "fig2_speed" {
            LegendCorner::LowerLeft
        } else {
            LegendCorner::LowerRight
        },
        slug: format!("{slug}{suffix}"),
        title,
        caption: format!("{caption} {marker_note}"),
        x_label: "concurrent workers".to_string(),
        x_decimals: 0,
        y_label,
        lines,
        markers: markers
            .iter()
            .map(|marker| Marker {
                x: marker.x,
                color: marker.color,
                label: marker.label.clone(),
            })
            .collect(),
        y_at_least: 0.0,
        x_names: Vec::new(),
    };
    // A rate's raw figure is its capacity: figure 1 would repeat figure 3.
    let rate = matches!(measure, Measure::Rate { .. });
    let mut figures = vec![
        figure(
            "fig1_raw",
            names.raw_title,
            format!("What was measured at each load level.{spread_note}"),
            names.raw_label,
            measured(|level| level.raw, |level| level.raw_spread),
        ),
        figure(
            "fig2_speed",
            names.speed_title,
            format!("Speed per worker: flat while each worker has a core of its own.{spread_note}"),
            names.speed_label,
            measured(|level| level.speed, |level| level.speed_spread),
        ),
        figure(
            "fig3_capacity",
            "Figure 3 - capacity".to_string(),
            format!(
                "Total throughput of all workers: it flattens where the server saturates.{}",
                if rate {
                    " For a rate this is also what was measured (figure 1, raw), which is not drawn twice."
                } else {
                    ""
                }
            ),
            names.capacity_label,
            measured(|level| level.capacity, |_| None),
        ),
        speedup_figure(members, &figure),
    ];
    if rate {
        figures.retain(|figure| !figure.slug.starts_with("fig1_raw"));
    }
    figures.extend(cache_figures(members, &figure));
    figures.extend(latency_figure(members, &figure));
    figures
}

/// What a level's figure is read from, and the spread drawn as its bars.
type Pick = fn(&LevelFigures) -> f64;
type Spread = fn(&LevelFigures) -> Option<(f64, f64)>;

/// The titles and axis names of figures 1 to 3 for what the series measured.
struct FigureNames {
    raw_title: String,
    raw_label: String,
    speed_title: String,
    speed_label: String,
    capacity_label: String,
}

impl FigureNames {
    fn of(measure: &Measure) -> Self {
        match measure {
            Measure::JobTime => FigureNames {
                raw_title: "Figure 1 - raw: job time".to_string(),
                raw_label: "job time (s)".to_string(),
                speed_title: "Figure 2 - speed per worker".to_string(),
                speed_label: "jobs per minute per worker".to_string(),
                capacity_label: "jobs per minute".to_string(),
            },
            Measure::Rate { unit } => FigureNames {
                raw_title: format!("Figure 1 - raw: {unit}"),
                raw_label: unit.clone(),
                speed_title: format!("Figure 2 - {unit} per worker"),
                speed_label: format!("{unit} per worker"),
                capacity_label: unit.clone(),
            },
        }
    }
}

/// Each series' measured line of one figure, its spread as bars where few enough levels
/// leave room for them, and the key to disturbed levels.
fn measured_lines(members: &[(usize, &SeriesAnalysis)], pick: Pick, spread: Spread) -> Vec<Line> {
    let lines = members
        .iter()
        .map(|(color, series)| Line {
            label: series.name().to_string(),
            color: *color,
            points: series
                .levels
                .iter()
                .map(|level| (level.workers as f64, pick(level)))
                .collect(),
            style: LineStyle::Measured,
            bars: if series.levels.len() <= MAX_MARKED_POINTS {
                series
                    .levels
                    .iter()
                    .filter_map(|level| {
                        let (low, high) = spread(level)?;
                        Some((level.workers as f64, low, high))
                    })
                    .collect()
            } else {
                Vec::new()
            },
            hollow: hollow_of(series),
        })
        .collect::<Vec<Line>>();
    with_disturbed_key(lines)
}

/// Figure 4: each series' speedup, its recommended fit and the ideal line.
fn speedup_figure(members: &[(usize, &SeriesAnalysis)], figure: &MakeFigure) -> Figure {
    let top = members
        .iter()
        .flat_map(|(_, series)| series.levels.iter().map(|level| level.workers))
        .max()
        .unwrap_or(1) as f64;
    let mut lines = measured_lines(members, |level| level.speedup, |_| None);
    lines.extend(fit_lines(members));
    lines.push(Line {
        label: "ideal (linear)".to_string(),
        color: NEUTRAL,
        points: vec![(1.0, 1.0), (top, top)],
        style: LineStyle::Ideal,
        bars: Vec::new(),
        hollow: Vec::new(),
    });
    let mut speedup = figure(
        "fig4_speedup",
        "Figure 4 - speedup".to_string(),
        "Capacity relative to one worker, with the ideal line and the recommended Amdahl (dashed) or USL (dotted) fit over the levels it was fitted on.".to_string(),
        "speedup".to_string(),
        lines,
    );
    // The ideal line stays in view up to the largest P, so the distance to it shows.
    speedup.y_at_least = members
        .iter()
        .filter_map(|(_, series)| series.series.physical_cores)
        .max()
        .map_or(top, |cores| (cores as f64).min(top));
    speedup
}

/// SLOB's cache figures, where the series recorded them: physical reads per second and the
/// buffer cache's hit ratio, a drawn curve per series.
fn cache_figures(members: &[(usize, &SeriesAnalysis)], figure: &MakeFigure) -> Vec<Figure> {
    let cache_lines = |pick: fn(&crate::analysis::series::CacheFigures) -> Option<f64>| {
        let lines = members
            .iter()
            .filter_map(|(color, series)| {
                let points: Vec<(f64, f64)> = series
                    .levels
                    .iter()
                    .filter_map(|level| Some((level.workers as f64, pick(&level.cache?)?)))
                    .collect();
                (!points.is_empty()).then(|| Line {
                    label: series.name().to_string(),
                    color: *color,
                    points,
                    style: LineStyle::Measured,
                    bars: Vec::new(),
                    hollow: hollow_of(series),
                })
            })
            .collect::<Vec<Line>>();
        with_disturbed_key(lines)
    };
    let mut figures = Vec::new();
    let pio = cache_lines(|cache| cache.pio_per_s);
    if pio
        .iter()
        .any(|line| line.points.iter().any(|point| point.1 > 0.0))
    {
        figures.push(figure(
            "fig_pio",
            "Physical reads per second".to_string(),
            "Blocks read from storage per second at each load (the SLOB method's PIO/s): it stops rising where the storage saturates.".to_string(),
            "PIO/s".to_string(),
            pio,
        ));
    }
    let hits = cache_lines(|cache| cache.hit_ratio.map(|ratio| 100.0 * ratio));
    if !hits.is_empty() {
        let mut hit_figure = figure(
            "fig_hit_ratio",
            "Buffer cache hit ratio".to_string(),
            "Share of block gets the buffer cache served at each load: an LIO test is cached only near 100%.".to_string(),
            "hit ratio (%)".to_string(),
            hits,
        );
        hit_figure.y_at_least = 100.0;
        figures.push(hit_figure);
    }
    figures
}

/// The worker counts of a series' kept disturbed levels, drawn hollow.
pub(super) fn hollow_of(series: &SeriesAnalysis) -> Vec<f64> {
    series
        .levels
        .iter()
        .filter(|level| !level.disturbed.is_empty())
        .map(|level| level.workers as f64)
        .collect()
}

/// The lines, with the legend's key to hollow markers when any line has some.
pub(super) fn with_disturbed_key(mut lines: Vec<Line>) -> Vec<Line> {
    if lines.iter().any(|line| !line.hollow.is_empty()) {
        lines.push(Line {
            label: "hollow: disturbed while measured, kept".to_string(),
            color: 0,
            points: Vec::new(),
            style: LineStyle::DisturbedKey,
            bars: Vec::new(),
            hollow: Vec::new(),
        });
    }
    lines
}

/// A group's figure from its slug, title, caption, y label and lines.
pub(super) type MakeFigure<'a> = dyn Fn(&str, String, String, String, Vec<Line>) -> Figure + 'a;

/// p99 and p50 of the statements' response times against load (the hockey stick), for the
/// series that timed their statements.
pub(super) fn latency_figure(
    members: &[(usize, &SeriesAnalysis)],
    figure: &MakeFigure,
) -> Option<Figure> {
    let mut lines = Vec::new();
    for (color, series) in members {
        let timed: Vec<(f64, &Latency)> = series
            .levels
            .iter()
            .filter_map(|level| Some((level.workers as f64, level.latency.as_deref()?)))
            .filter(|(_, latency)| latency.is_statement())
            .collect();
        if timed.is_empty() {
            continue;
        }
        for (percentile, style) in [
            (Percentile::P99, LineStyle::Measured),
            (Percentile::P50, LineStyle::Dashed),
        ] {
            lines.push(Line {
                label: format!("{} {}", series.name(), percentile.name()),
                color: *color,
                points: timed
                    .iter()
                    .map(|(x, latency)| (*x, latency.response.at(percentile)))
                    .collect(),
                style,
                bars: Vec::new(),
                hollow: hollow_of(series),
            });
        }
    }
    let lines = with_disturbed_key(lines);
    (!lines.is_empty()).then(|| {
        figure(
            "fig_latency",
            "Response time against load".to_string(),
            "Each statement's response time at each load: p99 (solid) and p50 (dashed). Flat while the server has room; where p99 climbs and capacity does not, sessions queue.".to_string(),
            "response time (ms)".to_string(),
            lines,
        )
    })
}

/// Speed per worker of each series against the baseline's, at every load both measured.
pub(super) fn ratio_figure(
    analysis: &Analysis,
    members: &[(usize, &SeriesAnalysis)],
    suffix: &str,
) -> Option<Figure> {
    let names: Vec<&str> = members.iter().map(|(_, series)| series.name()).collect();
    let comparison = analysis.comparisons.iter().find(|comparison| {
        comparison
            .rows
            .iter()
            .all(|row| names.contains(&row.name.as_str()))
    })?;
    let color_of = |name: &str| {
        members
            .iter()
            .find(|(_, series)| series.name() == name)
            .map_or(NEUTRAL, |(color, _)| *color)
    };
    let mut lines: Vec<Line> = comparison
        .rows
        .iter()
        .skip(1)
        .map(|row| Line {
            label: row.name.clone(),
            color: color_of(&row.name),
            points: row
                .versus
                .by_load
                .iter()
                .map(|ratio| (ratio.workers as f64, ratio.speed_ratio))
                .collect(),
            style: LineStyle::Measured,
            bars: Vec::new(),
            hollow: Vec::new(),
        })
        .collect();
    let top = lines
        .iter()
        .flat_map(|line| line.points.iter().map(|point| point.0))
        .fold(1.0, f64::max);
    lines.push(Line {
        label: format!("{} (baseline)", comparison.baseline),
        color: color_of(&comparison.baseline),
        points: vec![(1.0, 1.0), (top, 1.0)],
        style: LineStyle::Ideal,
        bars: Vec::new(),
        hollow: Vec::new(),
    });
    Some(Figure {
        slug: format!("fig5_ratio{suffix}"),
        title: format!(
            "Figure 5 - speed per worker relative to {}",
            comparison.baseline
        ),
        caption: format!(
            "Each series' speed per worker over {}'s at the same load: above 1 is faster. Dashed verticals mark each series' P and L.",
            comparison.baseline
        ),
        x_label: "concurrent workers".to_string(),
        y_label: format!("speed / speed of {}", comparison.baseline),
        lines,
        markers: markers(members),
        legend: LegendCorner::UpperRight,
        y_at_least: 1.2,
        x_names: Vec::new(),
        x_decimals: 0,
    })
}

/// The fit the findings recommend, in speedup units over the range it was fitted on, anchored
/// at the measured capacity of its first level (so it starts on the measured speedup there).
/// Fits that do not describe their data are not drawn.
pub(super) fn fit_lines(members: &[(usize, &SeriesAnalysis)]) -> Vec<Line> {
    let mut lines = Vec::new();
    for (color, series) in members {
        let (Some(base), Some(range)) = (series.levels.first(), series.fits.recommended) else {
            continue;
        };
        let Some(fit) = series.fits.get(range) else {
            continue;
        };
        let Some(first) = series.level(fit.n_min) else {
            continue;
        };
        let scale = base.workers as f64 / base.capacity * first.capacity
            / fit.capacity(first.workers as f64);
        let (from, to) = (fit.n_min as f64, fit.n_max as f64);
        let points = (0..=100)
            .map(|step| from + (to - from) * step as f64 / 100.0)
            .map(|workers| (workers, fit.capacity(workers) * scale))
            .collect();
        let (name, style) = match fit.model {
            Model::Amdahl => ("Amdahl", LineStyle::AmdahlFit),
            Model::Usl => ("USL", LineStyle::UslFit),
        };
        lines.push(Line {
            label: format!("{} {name} fit, {}..{}", series.name(), fit.n_min, fit.n_max),
            color: *color,
            points,
            style,
            bars: Vec::new(),
            hollow: Vec::new(),
        });
    }
    lines
}
