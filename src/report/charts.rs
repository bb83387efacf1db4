//! The figures of CERN's test_cpu_parallel study — raw, speed per worker, capacity, speedup — with every series
//! overlaid, dashed markers at each series' physical-core (P) and logical-CPU (L) counts,
//! error bars where the file gives a spread, the recommended fit on the speedup figure, and,
//! when series are compared, each one's speed per worker relative to the baseline. Described
//! once as data, drawn by plotters onto an SVG string for HTML or a PNG file. The font is
//! embedded, so no system font is needed.

use std::path::Path;
use std::sync::Once;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::analysis::fit::Model;
use crate::analysis::model::Fleet;
use crate::analysis::model::{Analysis, LevelFigures, SeriesAnalysis};
use crate::analysis::series::Measure;
use crate::analysis::study::measure_groups;
use crate::latency::{Latency, Percentile};

/// The SVG's own size; the page scales it to its width through the viewBox, to at most
/// 960 px (figures keep the text size the page has).
pub(crate) const WIDTH: u32 = 800;
pub(crate) const HEIGHT: u32 = 450;
/// PNG size: the SVG scaled up by 2.
pub(crate) const PNG_WIDTH: u32 = 1600;
pub(crate) const PNG_HEIGHT: u32 = 900;
const FONT: &str = "sans-serif";

/// A figure as data: what to draw, independent of the backend.
pub(crate) struct Figure {
    /// Short name for files: "fig1_raw".
    pub slug: String,
    pub title: String,
    /// One sentence under the figure on how to read it.
    pub caption: String,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    pub markers: Vec<Marker>,
    /// Where the legend covers the least data.
    pub legend: LegendCorner,
    /// The y-axis reaches at least this high (the speedup figure: the ideal at the largest P).
    pub y_at_least: f64,
    /// Names for x = 1, 2, ... (the fleet's hosts) instead of numbers.
    pub x_names: Vec<String>,
    /// Decimals of the x-axis labels: 0 for worker counts, more for seconds.
    pub x_decimals: usize,
}

impl Figure {
    /// The caption as a sentence: one full stop at its end, whether it had one or not.
    pub(crate) fn caption_sentence(&self) -> String {
        format!("{}.", self.caption.trim_end().trim_end_matches('.'))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LegendCorner {
    UpperLeft,
    UpperRight,
    LowerRight,
    LowerLeft,
}

pub(crate) struct Line {
    pub label: String,
    pub color: usize,
    pub points: Vec<(f64, f64)>,
    pub style: LineStyle,
    /// Vertical error bars: (workers, low, high).
    pub bars: Vec<(f64, f64, f64)>,
    /// The x of points drawn hollow: levels the run judged disturbed, kept on request.
    pub hollow: Vec<f64>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineStyle {
    /// Measured levels: a solid line with dots.
    Measured,
    /// y = x on the speedup figure; y = 1 on the ratio figure.
    Ideal,
    /// A second measured figure beside a solid one (p50 beside p99): long dashes.
    Dashed,
    /// Long dashes.
    AmdahlFit,
    /// Dots.
    UslFit,
    /// Markers only: values of separate things (hosts), not a curve.
    Points,
    /// The legend's key to hollow markers: nothing drawn in the plot.
    DisturbedKey,
}

/// A vertical dashed line at a worker count, labelled "RAC55 P=16".
pub(crate) struct Marker {
    pub x: f64,
    pub color: usize,
    pub label: String,
}

/// Most series drawn in one figure.
pub(crate) const MAX_SERIES_IN_FIGURES: usize = 12;
/// The colour of lines that belong to no series (the ideal line).
const NEUTRAL: usize = usize::MAX;
/// Most levels of a series drawn with a marker (and error bar) on each: past that the marks
/// merge into the line and only weigh down the page.
const MAX_MARKED_POINTS: usize = 60;

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
            figures
        })
        .chain(analysis.fleet.iter().flat_map(fleet_figures))
        .chain(open_loop_figure(analysis))
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
fn timeline_figures(index: usize, series: &SeriesAnalysis) -> Vec<Figure> {
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

/// p99 against the rate sent, a line per series and worker count, for the open-loop levels
/// (`run db --rate`): the latency-throughput curve capacity is planned on.
fn open_loop_figure(analysis: &Analysis) -> Option<Figure> {
    let mut lines = Vec::new();
    let mut color = 0;
    for open in analysis.open_loop.iter().take(MAX_SERIES_IN_FIGURES) {
        let mut counts: Vec<usize> = open.levels.iter().map(|level| level.workers).collect();
        counts.dedup();
        for workers in counts {
            let mut points: Vec<(f64, f64)> = open
                .levels
                .iter()
                .filter(|level| level.workers == workers)
                .map(|level| (level.sent_per_s, level.latency.response.p99_ms))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            lines.push(Line {
                label: format!(
                    "{} {} p99",
                    open.series,
                    crate::format::workers_text(workers)
                ),
                color,
                points,
                style: LineStyle::Measured,
                bars: Vec::new(),
                hollow: Vec::new(),
            });
            color += 1;
        }
    }
    (!lines.is_empty()).then(|| Figure {
        slug: "fig_latency_rate".to_string(),
        title: "Response time against the rate sent".to_string(),
        caption: "p99 of each statement, counted from when it was due, at each rate sent (run db --rate): flat while the server has room, climbing where statements queue; the rate where it crosses an objective is the throughput to plan on".to_string(),
        x_label: "statements sent per second".to_string(),
        y_label: "p99 response time (ms)".to_string(),
        lines,
        markers: Vec::new(),
        legend: LegendCorner::UpperLeft,
        y_at_least: 0.0,
        x_names: Vec::new(),
        x_decimals: 0,
    })
}

/// Each host's capacity against the median of its siblings, and each repeatedly measured
/// host's capacity run by run against its own median.
fn fleet_figures(fleet: &Fleet) -> Vec<Figure> {
    let mut figures = Vec::new();
    let compared: Vec<(usize, &crate::analysis::model::FleetHost)> = fleet
        .hosts
        .iter()
        .filter(|host| host.capacity_vs_group.is_some())
        .enumerate()
        .collect();
    if !compared.is_empty() {
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
                    .map(|(index, host)| {
                        (*index as f64 + 1.0, host.capacity_vs_group.unwrap_or(1.0))
                    })
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
        figures.push(Figure {
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
        });
    }
    if !fleet.histories.is_empty() {
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
        figures.push(Figure {
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
        });
    }
    figures
}

/// One dashed vertical per worker count that is some series' P or L, named by what it marks
/// ("RAC55 P=16", "RAC52 L=40; RAC54 P=40", "12 series P=L=2"), in the series' colour when
/// one series has it: many series of one machine type share one label, not one row each.
fn markers(members: &[(usize, &SeriesAnalysis)]) -> Vec<Marker> {
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

fn group_figures(
    measure: &Measure,
    members: &[(usize, &SeriesAnalysis)],
    suffix: &str,
) -> Vec<Figure> {
    let (raw_title, raw_label, speed_title, speed_label, capacity_label) = match measure {
        Measure::JobTime => (
            "Figure 1 - raw: job time".to_string(),
            "job time (s)".to_string(),
            "Figure 2 - speed per worker".to_string(),
            "jobs per minute per worker".to_string(),
            "jobs per minute".to_string(),
        ),
        Measure::Rate { unit } => (
            format!("Figure 1 - raw: {unit}"),
            unit.clone(),
            format!("Figure 2 - {unit} per worker"),
            format!("{unit} per worker"),
            unit.clone(),
        ),
    };
    type Pick = fn(&LevelFigures) -> f64;
    type Spread = fn(&LevelFigures) -> Option<(f64, f64)>;
    let measured = |pick: Pick, spread: Spread| -> Vec<Line> {
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
    };
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
    let top = members
        .iter()
        .flat_map(|(_, series)| series.levels.iter().map(|level| level.workers))
        .max()
        .unwrap_or(1) as f64;
    let mut speedup_lines = measured(|level| level.speedup, |_| None);
    speedup_lines.extend(fit_lines(members));
    speedup_lines.push(Line {
        label: "ideal (linear)".to_string(),
        color: NEUTRAL,
        points: vec![(1.0, 1.0), (top, top)],
        style: LineStyle::Ideal,
        bars: Vec::new(),
        hollow: Vec::new(),
    });
    // The ideal line stays in view up to the largest P, so the distance to it shows.
    let largest_p = members
        .iter()
        .filter_map(|(_, series)| series.series.physical_cores)
        .max()
        .map_or(top, |cores| (cores as f64).min(top));
    let mut speedup = figure(
        "fig4_speedup",
        "Figure 4 - speedup".to_string(),
        "Capacity relative to one worker, with the ideal line and the recommended Amdahl (dashed) or USL (dotted) fit over the levels it was fitted on.".to_string(),
        "speedup".to_string(),
        speedup_lines,
    );
    speedup.y_at_least = largest_p;
    // SLOB's cache figures, where the series recorded them: a drawn curve per series.
    let cache_lines = |pick: fn(&crate::analysis::series::CacheFigures) -> Option<f64>| {
        members
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
            .collect::<Vec<Line>>()
    };
    let mut cache_figures = Vec::new();
    let pio = with_disturbed_key(cache_lines(|cache| cache.pio_per_s));
    if pio
        .iter()
        .any(|line| line.points.iter().any(|point| point.1 > 0.0))
    {
        cache_figures.push(figure(
            "fig_pio",
            "Physical reads per second".to_string(),
            "Blocks read from storage per second at each load (the SLOB method's PIO/s): it stops rising where the storage saturates.".to_string(),
            "PIO/s".to_string(),
            pio,
        ));
    }
    let hits = with_disturbed_key(cache_lines(|cache| {
        cache.hit_ratio.map(|ratio| 100.0 * ratio)
    }));
    if !hits.is_empty() {
        let mut hit_figure = figure(
            "fig_hit_ratio",
            "Buffer cache hit ratio".to_string(),
            "Share of block gets the buffer cache served at each load: an LIO test is cached only near 100%.".to_string(),
            "hit ratio (%)".to_string(),
            hits,
        );
        hit_figure.y_at_least = 100.0;
        cache_figures.push(hit_figure);
    }
    let mut figures = vec![
        figure(
            "fig1_raw",
            raw_title,
            format!("What was measured at each load level.{spread_note}"),
            raw_label,
            measured(|level| level.raw, |level| level.raw_spread),
        ),
        figure(
            "fig2_speed",
            speed_title,
            format!("Speed per worker: flat while each worker has a core of its own.{spread_note}"),
            speed_label,
            measured(|level| level.speed, |level| level.speed_spread),
        ),
        figure(
            "fig3_capacity",
            "Figure 3 - capacity".to_string(),
            "Total throughput of all workers: it flattens where the server saturates.".to_string(),
            capacity_label,
            measured(|level| level.capacity, |_| None),
        ),
        speedup,
    ];
    figures.extend(cache_figures);
    figures.extend(latency_figure(members, &figure));
    figures
}

/// The worker counts of a series' kept disturbed levels, drawn hollow.
fn hollow_of(series: &SeriesAnalysis) -> Vec<f64> {
    series
        .levels
        .iter()
        .filter(|level| !level.disturbed.is_empty())
        .map(|level| level.workers as f64)
        .collect()
}

/// The lines, with the legend's key to hollow markers when any line has some.
fn with_disturbed_key(mut lines: Vec<Line>) -> Vec<Line> {
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
type MakeFigure<'a> = dyn Fn(&str, String, String, String, Vec<Line>) -> Figure + 'a;

/// p99 and p50 of the statements' response times against load (the hockey stick), for the
/// series that timed their statements.
fn latency_figure(members: &[(usize, &SeriesAnalysis)], figure: &MakeFigure) -> Option<Figure> {
    let mut lines = Vec::new();
    for (color, series) in members {
        let timed: Vec<(f64, &Latency)> = series
            .levels
            .iter()
            .filter_map(|level| Some((level.workers as f64, level.latency.as_ref()?)))
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
fn ratio_figure(
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
fn fit_lines(members: &[(usize, &SeriesAnalysis)]) -> Vec<Line> {
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

fn register_font() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular())
            .unwrap_or_else(|_| panic!("the embedded DejaVu Sans font is valid"));
    });
}

pub(crate) fn render_svg(figure: &Figure) -> Result<String> {
    register_font();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root, figure)?;
        root.present()
            .map_err(|error| anyhow!("drawing {}: {error:?}", figure.slug))?;
    }
    Ok(svg)
}

/// The PNG is the SVG rasterised by resvg, with the same embedded font: one figure
/// description, text shaped properly (kerning included), at 1600 x 900.
pub(crate) fn render_png(figure: &Figure, path: &Path) -> Result<()> {
    let svg = render_svg(figure)?;
    let mut options = resvg::usvg::Options::default();
    {
        let fonts = options.fontdb_mut();
        fonts.load_font_data(dejavu::sans::regular().to_vec());
        fonts.set_sans_serif_family("DejaVu Sans");
    }
    options.font_family = "DejaVu Sans".to_string();
    let tree = resvg::usvg::Tree::from_str(&svg, &options)
        .map_err(|error| anyhow!("drawing {}: {error}", figure.slug))?;
    let mut pixmap = resvg::tiny_skia::Pixmap::new(PNG_WIDTH, PNG_HEIGHT)
        .ok_or_else(|| anyhow!("drawing {}: no memory for the image", figure.slug))?;
    let scale = PNG_WIDTH as f32 / WIDTH as f32;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    let bytes = pixmap
        .encode_png()
        .map_err(|error| anyhow!("encoding {}: {error}", figure.slug))?;
    crate::result::writer::write_atomically(path, &bytes)
        .map_err(|error| anyhow!("writing {}: {error:#}", path.display()))
}

fn color(index: usize) -> RGBColor {
    if index == NEUTRAL {
        return RGBColor(120, 120, 120);
    }
    // Tableau 10: distinguishable, and readable in print.
    const PALETTE: [(u8, u8, u8); 10] = [
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
    ];
    let (r, g, b) = PALETTE[index % PALETTE.len()];
    RGBColor(r, g, b)
}

/// Text sizes in plotters' font units (the SVG gets 1/1.24 of them): at the page's narrowest
/// (a 700 px window) the smallest text is still 11 px on screen.
const TITLE_SIZE: f64 = 22.0;
const AXIS_SIZE: f64 = 18.0;
const TEXT_SIZE: f64 = 17.0;
const MARGIN: i32 = 10;
const X_LABEL_AREA: i32 = 48;
const Y_LABEL_AREA: i32 = 86;
/// Room around the legend's entries, and between the plot and a legend beside it.
const PAD: f64 = 6.0;
/// Width of a legend entry's picture of its line.
const SWATCH: f64 = 24.0;

/// A rectangle in the figure's pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Rect {
    left: f64,
    top: f64,
    right: f64,
    bottom: f64,
}

impl Rect {
    fn contains(&self, (x, y): (f64, f64)) -> bool {
        (self.left..=self.right).contains(&x) && (self.top..=self.bottom).contains(&y)
    }
}

/// The plot area in pixels and the data range it shows.
struct Frame {
    plot: Rect,
    x_end: f64,
    y_max: f64,
}

impl Frame {
    fn x_pixel(&self, x: f64) -> f64 {
        self.plot.left + x / self.x_end * (self.plot.right - self.plot.left)
    }

    fn pixel(&self, (x, y): (f64, f64)) -> (f64, f64) {
        let height = self.plot.bottom - self.plot.top;
        (self.x_pixel(x), self.plot.bottom - y / self.y_max * height)
    }
}

/// Where the legend goes: in a corner of the plot that no data cross, or, when every
/// corner holds data, beside the plot on the right.
#[derive(Clone, Copy, Debug, PartialEq)]
enum LegendPlace {
    Inside(LegendCorner),
    Beside,
}

/// Every marker's label: (left end in pixels, row). A label sits right of its line, or left
/// of it where it would leave the plot; it takes the first row whose labels all end left of
/// it, so labels of nearby markers never overprint.
fn place_labels(xs: &[f64], widths: &[f64], right: f64) -> Vec<(f64, usize)> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut row_ends: Vec<f64> = Vec::new();
    let mut placed = vec![(0.0, 0); xs.len()];
    for index in order {
        let (x, width) = (xs[index], widths[index]);
        let start = if x + width > right { x - width } else { x };
        let row = row_ends
            .iter()
            .position(|&end| end < start)
            .unwrap_or(row_ends.len());
        if row == row_ends.len() {
            row_ends.push(f64::MIN);
        }
        row_ends[row] = start + width;
        placed[index] = (start, row);
    }
    placed
}

/// Points along everything the figure plots (dots, error bars, and every 3 px of each
/// curve), in pixels: what a legend must not cover.
fn ink(figure: &Figure, frame: &Frame) -> Vec<(f64, f64)> {
    let mut points = Vec::new();
    for line in &figure.lines {
        let clipped = clip_to_height(&line.points, frame.y_max);
        let pixels: Vec<(f64, f64)> = clipped.iter().map(|&point| frame.pixel(point)).collect();
        points.extend(&pixels);
        if line.style != LineStyle::Points {
            for pair in pixels.windows(2) {
                let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
                let steps = ((x1 - x0).hypot(y1 - y0) / 3.0).ceil().min(2000.0) as usize;
                points.extend((1..steps).map(|step| {
                    let t = step as f64 / steps as f64;
                    (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t)
                }));
            }
        }
        for &(x, low, high) in &line.bars {
            let (x, top) = frame.pixel((x, high.min(frame.y_max)));
            let bottom = frame.pixel((0.0, low.min(frame.y_max))).1;
            let steps = ((bottom - top) / 3.0).ceil().clamp(1.0, 1000.0) as usize;
            points.extend(
                (0..=steps).map(|step| (x, top + (bottom - top) * step as f64 / steps as f64)),
            );
        }
    }
    points
}

/// The legend's box in a corner of the plot.
fn corner_box(corner: LegendCorner, plot: &Rect, (width, height): (f64, f64)) -> Rect {
    let left = match corner {
        LegendCorner::UpperLeft | LegendCorner::LowerLeft => plot.left + PAD,
        LegendCorner::UpperRight | LegendCorner::LowerRight => plot.right - PAD - width,
    };
    let top = match corner {
        LegendCorner::UpperLeft | LegendCorner::UpperRight => plot.top + PAD,
        LegendCorner::LowerLeft | LegendCorner::LowerRight => plot.bottom - PAD - height,
    };
    Rect {
        left,
        top,
        right: left + width,
        bottom: top + height,
    }
}

/// The first corner, the figure's own choice first, that covers no data and fits the
/// plot; among those, one that no marker line crosses if there is one.
fn free_corner(figure: &Figure, frame: &Frame, size: (f64, f64)) -> Option<LegendCorner> {
    let ink = ink(figure, frame);
    let corners = [
        figure.legend,
        LegendCorner::UpperRight,
        LegendCorner::UpperLeft,
        LegendCorner::LowerRight,
        LegendCorner::LowerLeft,
    ];
    let fits = |area: &Rect| {
        area.left >= frame.plot.left
            && area.right <= frame.plot.right
            && area.top >= frame.plot.top
            && area.bottom <= frame.plot.bottom
    };
    let empty = |area: &Rect| {
        let margin = Rect {
            left: area.left - 3.0,
            top: area.top - 3.0,
            right: area.right + 3.0,
            bottom: area.bottom + 3.0,
        };
        !ink.iter().any(|&point| margin.contains(point))
    };
    let uncrossed = |area: &Rect| {
        !figure
            .markers
            .iter()
            .any(|marker| (area.left..=area.right).contains(&frame.x_pixel(marker.x)))
    };
    let free: Vec<(LegendCorner, Rect)> = corners
        .into_iter()
        .map(|corner| (corner, corner_box(corner, &frame.plot, size)))
        .filter(|(_, area)| fits(area) && empty(area))
        .collect();
    free.iter()
        .find(|(_, area)| uncrossed(area))
        .or(free.first())
        .map(|&(corner, _)| corner)
}

/// How a line is drawn: fits a darker shade of their series' colour, so a fit that lies on
/// its data still shows.
fn line_color(line: &Line) -> RGBColor {
    let RGBColor(r, g, b) = color(line.color);
    match line.style {
        LineStyle::AmdahlFit | LineStyle::UslFit => {
            let shade = |value: u8| (value as f64 * 0.55).round() as u8;
            RGBColor(shade(r), shade(g), shade(b))
        }
        _ => RGBColor(r, g, b),
    }
}

/// Drawing order: measured data first, then the ideal line, then fits on top.
fn layer(style: LineStyle) -> u8 {
    match style {
        LineStyle::Measured | LineStyle::Points | LineStyle::Dashed | LineStyle::DisturbedKey => 0,
        LineStyle::Ideal => 1,
        LineStyle::AmdahlFit | LineStyle::UslFit => 2,
    }
}

/// Largest value an axis reaches (imported figures are checked to 1e18 already).
const AXIS_LIMIT: f64 = 1e18;

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, figure: &Figure) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let fail =
        |error: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("drawing {}: {error:?}", figure.slug);
    root.fill(&WHITE).map_err(fail)?;
    let x_max = figure
        .lines
        .iter()
        .flat_map(|line| line.points.iter().map(|point| point.0))
        .chain(figure.markers.iter().map(|marker| marker.x))
        .fold(1.0, f64::max);
    let y_data = figure
        .lines
        .iter()
        .filter(|line| matches!(line.style, LineStyle::Measured | LineStyle::Points))
        .flat_map(|line| {
            line.points
                .iter()
                .map(|point| point.1)
                .chain(line.bars.iter().map(|bar| bar.2))
        })
        .filter(|value| value.is_finite())
        .fold(0.0, f64::max);
    // Axes end at finite, sane values whatever the data: an axis to f64::MAX never ends.
    let x_max = if x_max.is_finite() {
        x_max.min(AXIS_LIMIT)
    } else {
        1.0
    };
    let y_max = (y_data.max(figure.y_at_least) * 1.12).min(AXIS_LIMIT);
    let y_max = if y_max > 0.0 { y_max } else { 1.0 };
    let x_end = x_max * 1.03;

    let text_font = (FONT, TEXT_SIZE).into_font();
    let text_size = |text: &str| {
        root.estimate_text_size(text, &TextStyle::from(text_font.clone()))
            .map_or(
                (text.chars().count() as f64 * 9.0, 14.0),
                |(width, height)| (width as f64, height as f64),
            )
    };
    let row_height = text_size("P=8 Lg").1 + 4.0;
    let texts: Vec<String> = figure
        .markers
        .iter()
        .map(|marker| format!(" {} ", marker.label))
        .collect();
    let widths: Vec<f64> = texts.iter().map(|text| text_size(text).0).collect();
    let column_width = SWATCH
        + PAD
        + figure
            .lines
            .iter()
            .map(|line| text_size(&line.label).0)
            .fold(0.0, f64::max)
        + PAD;
    // The legend's size in as many columns as it takes to fit `height`.
    let legend_size = |height: f64| {
        let fitting = (((height - 2.0 * PAD) / row_height).floor() as usize).max(1);
        let columns = figure.lines.len().div_ceil(fitting).max(1);
        let per_column = figure.lines.len().div_ceil(columns);
        (
            PAD + column_width * columns as f64,
            PAD + row_height * per_column as f64 + PAD,
            per_column,
        )
    };

    // The title on top, a band naming the marker lines under it, then the plot: labels
    // above the plot overprint neither data nor the legend.
    let body = root
        .titled(&figure.title, (FONT, TITLE_SIZE))
        .map_err(fail)?;
    let (width, height) = root.dim_in_pixel();
    let title_bottom = body.get_base_pixel().1 as f64;
    let plot_bottom = (height as i32 - MARGIN - X_LABEL_AREA) as f64;
    // A legend beside the plot: in columns no taller than the plot is under the fullest
    // band of labels, so the width set aside for it is the width it is drawn at.
    let beside_legend = legend_size(
        plot_bottom - title_bottom - MARGIN as f64 - MAX_LABEL_ROWS as f64 * row_height,
    );
    let layout = |place: LegendPlace| {
        let beside = match place {
            LegendPlace::Beside => beside_legend.0 + PAD,
            LegendPlace::Inside(_) => 0.0,
        };
        let (left, right) = (
            (MARGIN + Y_LABEL_AREA) as f64,
            width as f64 - MARGIN as f64 - beside,
        );
        let unplaced = Frame {
            plot: Rect {
                left,
                top: 0.0,
                right,
                bottom: 1.0,
            },
            x_end,
            y_max,
        };
        let xs: Vec<f64> = figure
            .markers
            .iter()
            .map(|marker| unplaced.x_pixel(marker.x))
            .collect();
        let placed = place_labels(&xs, &widths, right);
        let rows = placed
            .iter()
            .map(|&(_, row)| row + 1)
            .max()
            .unwrap_or(0)
            .min(MAX_LABEL_ROWS);
        let band = (rows as f64 * row_height).ceil();
        let frame = Frame {
            plot: Rect {
                left,
                top: title_bottom + band + MARGIN as f64,
                right,
                bottom: plot_bottom,
            },
            x_end,
            y_max,
        };
        (band, placed, frame, beside)
    };
    let place = {
        let (_, _, frame, _) = layout(LegendPlace::Inside(figure.legend));
        let (width, height, _) = legend_size(f64::MAX);
        match free_corner(figure, &frame, (width, height)) {
            Some(corner) => LegendPlace::Inside(corner),
            None => LegendPlace::Beside,
        }
    };
    let (band, placed, _, beside) = layout(place);
    let (_, plot_area) = body.split_vertically(band as u32);
    let worker_axis = figure.x_decimals == 0;
    let mut chart = ChartBuilder::on(&plot_area)
        .margin(MARGIN)
        .margin_right(MARGIN + beside.ceil() as i32)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(0.0..x_end, 0.0..y_max)
        .map_err(fail)?;
    let mut mesh = chart.configure_mesh();
    if worker_axis {
        // Whole numbers only, as many as fit: "0 1 2", never "0 0 1 2 2".
        mesh.x_labels((x_max.floor() as usize + 1).clamp(2, 11));
    }
    mesh.x_desc(&figure.x_label)
        .y_desc(&figure.y_label)
        .label_style((FONT, TEXT_SIZE))
        .axis_desc_style((FONT, AXIS_SIZE))
        .x_label_formatter(&|x| {
            let index = x.round();
            match figure.x_names.get((index as usize).wrapping_sub(1)) {
                Some(name) if (x - index).abs() < 1e-6 => name.clone(),
                // Worker counts are whole: a tick between two is left unlabelled, never
                // rounded to a neighbour's number.
                _ if figure.x_names.is_empty() && worker_axis => {
                    if (x - index).abs() < 1e-6 {
                        format!("{index:.0}")
                    } else {
                        String::new()
                    }
                }
                _ if figure.x_names.is_empty() => {
                    format!("{x:.decimals$}", decimals = figure.x_decimals)
                }
                _ => String::new(),
            }
        })
        .y_label_formatter(&|value| format!("{value:.decimals$}", decimals = axis_decimals(y_max)))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(fail)?;
    // The plot area as plotters laid it out, for the labels and the legend.
    let (x_range, y_range) = chart.plotting_area().get_pixel_range();
    let frame = Frame {
        plot: Rect {
            left: x_range.start as f64,
            top: y_range.start as f64,
            right: x_range.end as f64,
            bottom: y_range.end as f64,
        },
        x_end,
        y_max,
    };
    let shift = frame.plot.left - (MARGIN + Y_LABEL_AREA) as f64;
    for ((marker, text), (start, row)) in figure.markers.iter().zip(texts).zip(placed) {
        chart
            .draw_series(DashedLineSeries::new(
                [(marker.x, 0.0), (marker.x, y_max)],
                6,
                4,
                color(marker.color).mix(0.6).stroke_width(1),
            ))
            .map_err(fail)?;
        if row >= MAX_LABEL_ROWS {
            continue;
        }
        let top = title_bottom + row as f64 * row_height + 2.0;
        root.draw(&Text::new(
            text,
            ((start + shift).round() as i32, top.round() as i32),
            text_font.clone().color(&color(marker.color)),
        ))
        .map_err(fail)?;
    }
    let mut order: Vec<&Line> = figure.lines.iter().collect();
    order.sort_by_key(|line| layer(line.style));
    for line in order {
        let tint = line_color(line);
        let points = clip_to_height(&line.points, y_max);
        match line.style {
            LineStyle::Measured => {
                // Past a few dozen levels the markers merge into the line: draw just the line.
                if points.len() <= MAX_MARKED_POINTS {
                    chart
                        .draw_series(
                            points
                                .iter()
                                .filter(|point| !line.hollow.contains(&point.0))
                                .map(|&point| Circle::new(point, 3, tint.filled())),
                        )
                        .map_err(fail)?;
                }
                // Disturbed levels, kept: hollow, whatever the number of points.
                chart
                    .draw_series(
                        points
                            .iter()
                            .filter(|point| line.hollow.contains(&point.0))
                            .map(|&point| Circle::new(point, 5, tint.stroke_width(2))),
                    )
                    .map_err(fail)?;
                chart
                    .draw_series(line.bars.iter().map(|&(x, low, high)| {
                        ErrorBar::new_vertical(
                            x,
                            low.min(y_max),
                            (low + high) / 2.0,
                            high.min(y_max),
                            tint.mix(0.7).stroke_width(1),
                            6,
                        )
                    }))
                    .map_err(fail)?;
                chart.draw_series(LineSeries::new(points, tint.stroke_width(2)))
            }
            LineStyle::Points => chart.draw_series(
                points
                    .iter()
                    .map(|&point| Circle::new(point, 5, tint.filled())),
            ),
            LineStyle::DisturbedKey => continue,
            LineStyle::Ideal => {
                chart.draw_series(DashedLineSeries::new(points, 4, 4, tint.stroke_width(1)))
            }
            LineStyle::AmdahlFit | LineStyle::Dashed => {
                chart.draw_series(DashedLineSeries::new(points, 12, 6, tint.stroke_width(2)))
            }
            LineStyle::UslFit => {
                chart.draw_series(DashedLineSeries::new(points, 2, 5, tint.stroke_width(2)))
            }
        }
        .map_err(fail)?;
    }
    let (area, per_column) = match place {
        LegendPlace::Inside(corner) => {
            let (width, height, per_column) = legend_size(f64::MAX);
            (corner_box(corner, &frame.plot, (width, height)), per_column)
        }
        LegendPlace::Beside => {
            let (width, height, per_column) = beside_legend;
            let area = Rect {
                left: frame.plot.right + PAD,
                top: frame.plot.top,
                right: frame.plot.right + PAD + width,
                bottom: frame.plot.top + height,
            };
            (area, per_column)
        }
    };
    let legend = Legend {
        row_height,
        column_width,
        per_column,
    };
    draw_legend(root, figure, &area, &legend, &text_font).map_err(fail)
}

/// How the legend's entries are laid out: rows of `row_height`, `per_column` to a column.
struct Legend {
    row_height: f64,
    column_width: f64,
    per_column: usize,
}

/// Rows of marker labels above the plot at most; labels past them are left out (the
/// caption says what the dashed verticals mark), so the plot keeps its height.
const MAX_LABEL_ROWS: usize = 3;

/// The legend: each line's picture in the style and colour it is drawn, and its label.
fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    figure: &Figure,
    area: &Rect,
    legend: &Legend,
    font: &FontDesc,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let Legend {
        row_height,
        column_width,
        per_column,
    } = *legend;
    let pixel = |x: f64, y: f64| (x.round() as i32, y.round() as i32);
    let corners = [pixel(area.left, area.top), pixel(area.right, area.bottom)];
    root.draw(&Rectangle::new(corners, WHITE.mix(0.9).filled()))?;
    root.draw(&Rectangle::new(
        corners,
        RGBColor(200, 200, 200).stroke_width(1),
    ))?;
    let text_height = row_height - 4.0;
    for (index, line) in figure.lines.iter().enumerate() {
        let (column, row) = (index / per_column, index % per_column);
        let left = area.left + column as f64 * column_width;
        let top = area.top + PAD + row as f64 * row_height;
        let middle = top + row_height / 2.0;
        let tint = line_color(line);
        let (segments, stroke, dot) = swatch(line.style);
        if line.style == LineStyle::DisturbedKey {
            root.draw(&Circle::new(
                pixel(left + PAD + 11.0, middle),
                4,
                BLACK.stroke_width(2),
            ))?;
        }
        for (from, to) in segments {
            if to > from {
                root.draw(&PathElement::new(
                    vec![
                        pixel(left + PAD + from as f64, middle),
                        pixel(left + PAD + to as f64, middle),
                    ],
                    tint.stroke_width(stroke),
                ))?;
            }
        }
        if dot {
            root.draw(&Circle::new(
                pixel(left + PAD + 11.0, middle),
                3,
                tint.filled(),
            ))?;
        }
        root.draw(&Text::new(
            line.label.clone(),
            pixel(left + PAD + SWATCH + PAD, middle - text_height / 2.0),
            font.clone().color(&BLACK),
        ))?;
    }
    Ok(())
}

/// The legend's picture of a line in the style it is drawn: solid with a dot, long dashes,
/// dots, or thin short dashes for the ideal line. Four segments (from, to) in units of the
/// legend's scale, a stroke width and whether the dot shows.
fn swatch(style: LineStyle) -> ([(i32, i32); 4], u32, bool) {
    match style {
        LineStyle::Measured => ([(0, 6), (6, 12), (12, 18), (18, 22)], 2, true),
        LineStyle::AmdahlFit | LineStyle::Dashed => {
            ([(0, 9), (13, 22), (22, 22), (22, 22)], 2, false)
        }
        LineStyle::UslFit => ([(0, 2), (6, 8), (12, 14), (18, 20)], 2, false),
        LineStyle::Ideal => ([(0, 4), (8, 12), (16, 20), (20, 20)], 1, false),
        LineStyle::Points => ([(11, 11), (11, 11), (11, 11), (11, 11)], 1, true),
        // Drawn by the legend itself: a hollow dot.
        LineStyle::DisturbedKey => ([(11, 11), (11, 11), (11, 11), (11, 11)], 1, false),
    }
}

/// Enough decimals for about three significant digits at the top of the axis.
fn axis_decimals(top: f64) -> usize {
    (2 - top.log10().floor() as i32).clamp(0, 6) as usize
}

/// Keeps a curve inside 0..=top: points above are dropped, and where the curve leaves the
/// plot a point on the edge is added, so the ideal line and fits end at the border.
fn clip_to_height(points: &[(f64, f64)], top: f64) -> Vec<(f64, f64)> {
    let inside = |y: f64| y.is_finite() && (0.0..=top).contains(&y);
    let mut clipped = Vec::with_capacity(points.len());
    for pair in points.windows(2) {
        let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
        if inside(y0) {
            clipped.push((x0, y0));
            if !inside(y1) && y1.is_finite() && y1 > top {
                let crossing = x0 + (x1 - x0) * (top - y0) / (y1 - y0);
                clipped.push((crossing, top));
            }
        }
    }
    if let Some(&(x, y)) = points.last()
        && inside(y)
    {
        clipped.push((x, y));
    }
    clipped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::study::analyse;
    use crate::latency::IntervalFigures;

    /// A level's timeline: 1 s intervals at `rate`, one of them (`stall`) at a tenth.
    fn timeline(rate: f64, intervals: usize, stall: usize) -> Vec<IntervalFigures> {
        (0..intervals)
            .map(|index| {
                let rate = if index == stall { rate / 10.0 } else { rate };
                IntervalFigures {
                    start_s: index as f64,
                    length_s: 1.0,
                    responses: rate as u64,
                    rate_per_s: rate,
                    p50_ms: Some(1.0),
                    p99_ms: Some(if index == stall { 900.0 } else { 2.0 }),
                    server_lio_per_s: None,
                    server_pio_per_s: None,
                }
            })
            .collect()
    }

    #[test]
    fn the_largest_level_gets_a_timeline_and_its_stall_a_warning() {
        let mut series =
            crate::analysis::synthetic::measured_job_times(&[10.0, 10.0, 10.5, 14.0], None);
        series.points[3].intervals = timeline(400.0, 12, 7);
        series.points[1].intervals = timeline(200.0, 12, 99);
        let analysis = analyse(vec![series]);
        let warnings = analysis.series[0].warnings.join("\n");
        assert!(
            warnings.contains("4 workers: a stall at 7-8 s"),
            "{warnings}"
        );
        assert!(!warnings.contains("2 workers: a stall"), "{warnings}");
        let figures = figures(&analysis);
        let rate = figures
            .iter()
            .find(|figure| figure.slug == "fig_timeline_rate_1")
            .expect("a rate timeline");
        assert_eq!(rate.lines[0].label, "4 workers (largest)");
        assert_eq!(rate.lines[0].points.len(), 12);
        assert!((rate.lines[0].points[7].1 - 40.0).abs() < 1e-9);
        assert_eq!(rate.x_decimals, 0);
        let p99 = figures
            .iter()
            .find(|figure| figure.slug == "fig_timeline_p99_1")
            .expect("a p99 timeline");
        assert_eq!(p99.lines[0].points[7].1, 900.0);
        assert!(render_svg(rate).unwrap().contains("4 workers (largest)"));
        // A series without timelines (a CSV, another tool's file) gets none.
        let plain = analyse(vec![crate::analysis::synthetic::measured_job_times(
            &[10.0, 10.0],
            None,
        )]);
        assert!(
            figures_of(&plain)
                .iter()
                .all(|slug| !slug.starts_with("fig_timeline"))
        );
    }

    fn figures_of(analysis: &Analysis) -> Vec<String> {
        figures(analysis)
            .into_iter()
            .map(|figure| figure.slug)
            .collect()
    }

    #[test]
    fn lines_leaving_the_top_end_on_the_border() {
        assert_eq!(
            clip_to_height(&[(1.0, 1.0), (48.0, 48.0)], 20.0),
            vec![(1.0, 1.0), (20.0, 20.0)]
        );
        assert_eq!(
            clip_to_height(&[(1.0, 1.0), (2.0, 2.0)], 20.0),
            vec![(1.0, 1.0), (2.0, 2.0)]
        );
    }
}
