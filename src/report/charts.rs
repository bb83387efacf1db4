//! The four figures of seed 000 — raw, speed per worker, capacity, speedup — with every series
//! overlaid, dashed markers at each series' physical-core (P) and logical-CPU (L) counts, and
//! the fitted Amdahl and USL curves on the speedup figure. Drawn once by plotters, onto an SVG
//! string for HTML or a PNG file. The font is embedded, so no system font is needed.

use std::path::Path;
use std::sync::Once;

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::analysis::fit::Model;
use crate::analysis::series::Measure;
use crate::analysis::study::{Analysis, SeriesAnalysis, measure_groups};

pub const WIDTH: u32 = 900;
pub const HEIGHT: u32 = 520;
const FONT: &str = "sans-serif";

/// A figure as data: what to draw, independent of the backend.
pub struct Figure {
    /// Short name for files: "fig1_raw".
    pub slug: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    pub markers: Vec<Marker>,
    /// Where the legend covers the least data.
    pub legend: LegendCorner,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum LegendCorner {
    UpperRight,
    LowerRight,
}

pub struct Line {
    pub label: String,
    pub color: usize,
    pub points: Vec<(f64, f64)>,
    pub style: LineStyle,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum LineStyle {
    /// Measured levels: a solid line with dots.
    Measured,
    /// y = x on the speedup figure.
    Ideal,
    AmdahlFit,
    UslFit,
}

/// A vertical dashed line at a worker count, labelled "P" or "L".
pub struct Marker {
    pub x: f64,
    pub color: usize,
    pub label: String,
}

/// Four figures per group of series that measure the same thing.
/// Most levels of a series drawn with a marker on each.
const MAX_MARKED_POINTS: usize = 500;

pub fn figures(analysis: &Analysis) -> Vec<Figure> {
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
            group_figures(&members[0].1.series.measure, &members, &suffix)
        })
        .collect()
}

fn group_figures(
    measure: &Measure,
    members: &[(usize, &SeriesAnalysis)],
    suffix: &str,
) -> Vec<Figure> {
    let (raw_title, raw_label, speed_label, capacity_label) = match measure {
        Measure::JobTime => (
            "Figure 1 - raw: job time",
            "job time (s)".to_string(),
            "jobs per minute per worker".to_string(),
            "jobs per minute".to_string(),
        ),
        Measure::Rate { unit } => (
            "Figure 1 - raw: total rate",
            unit.clone(),
            format!("{unit} per worker"),
            unit.clone(),
        ),
    };
    let measured = |pick: fn(&crate::analysis::study::LevelFigures) -> f64| -> Vec<Line> {
        members
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
            })
            .collect()
    };
    let markers: Vec<Marker> = members
        .iter()
        .flat_map(|(color, series)| {
            let physical = series.series.physical_cores.map(|cores| ("P", cores));
            let logical = series.series.logical_cpus.map(|cpus| ("L", cpus));
            physical
                .into_iter()
                .chain(logical)
                .map(|(label, x)| Marker {
                    x: x as f64,
                    color: *color,
                    label: label.to_string(),
                })
        })
        .collect();
    let figure = |slug: &str, title: &str, y_label: String, lines: Vec<Line>| Figure {
        legend: if slug == "fig2_speed" {
            LegendCorner::UpperRight
        } else {
            LegendCorner::LowerRight
        },
        slug: format!("{slug}{suffix}"),
        title: title.to_string(),
        x_label: "concurrent workers".to_string(),
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
    };
    let mut speedup_lines = measured(|level| level.speedup);
    speedup_lines.extend(fit_lines(members));
    let top = members
        .iter()
        .flat_map(|(_, series)| series.levels.iter().map(|level| level.workers))
        .max()
        .unwrap_or(1) as f64;
    speedup_lines.push(Line {
        label: "ideal (linear)".to_string(),
        color: usize::MAX,
        points: vec![(1.0, 1.0), (top, top)],
        style: LineStyle::Ideal,
    });
    vec![
        figure(
            "fig1_raw",
            raw_title,
            raw_label,
            measured(|level| level.raw),
        ),
        figure(
            "fig2_speed",
            "Figure 2 - speed per worker",
            speed_label,
            measured(|level| level.speed),
        ),
        figure(
            "fig3_capacity",
            "Figure 3 - capacity",
            capacity_label,
            measured(|level| level.capacity),
        ),
        figure(
            "fig4_speedup",
            "Figure 4 - speedup",
            "speedup".to_string(),
            speedup_lines,
        ),
    ]
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

pub fn render_svg(figure: &Figure) -> Result<String> {
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

pub fn render_png(figure: &Figure, path: &Path) -> Result<()> {
    register_font();
    let root = BitMapBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    draw(&root, figure)?;
    root.present()
        .map_err(|error| anyhow!("writing {}: {error:?}", path.display()))
}

fn color(index: usize) -> RGBColor {
    if index == usize::MAX {
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
    let y_max = figure
        .lines
        .iter()
        .filter(|line| line.style == LineStyle::Measured)
        .flat_map(|line| line.points.iter().map(|point| point.1))
        .fold(0.0, f64::max)
        * 1.1;
    let y_max = if y_max > 0.0 { y_max } else { 1.0 };
    let mut chart = ChartBuilder::on(root)
        .caption(&figure.title, (FONT, 22))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..x_max * 1.03, 0.0..y_max)
        .map_err(fail)?;
    chart
        .configure_mesh()
        .x_desc(&figure.x_label)
        .y_desc(&figure.y_label)
        .label_style((FONT, 13))
        .x_label_formatter(&|workers| format!("{workers:.0}"))
        .y_label_formatter(&|value| format!("{value:.decimals$}", decimals = axis_decimals(y_max)))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(fail)?;
    for marker in &figure.markers {
        let style = color(marker.color).mix(0.6).stroke_width(1);
        chart
            .draw_series(DashedLineSeries::new(
                [(marker.x, 0.0), (marker.x, y_max)],
                6,
                4,
                style,
            ))
            .map_err(fail)?;
        chart
            .draw_series(std::iter::once(Text::new(
                marker.label.clone(),
                (marker.x, y_max * 0.97),
                (FONT, 15).into_font().color(&color(marker.color)),
            )))
            .map_err(fail)?;
    }
    for line in &figure.lines {
        let tint = color(line.color);
        let points = clip_to_height(&line.points, y_max);
        let legend_style = tint.stroke_width(2);
        let drawn = match line.style {
            LineStyle::Measured => {
                // Past a few hundred levels the markers merge into the line: draw just the line.
                if points.len() <= MAX_MARKED_POINTS {
                    chart
                        .draw_series(
                            points
                                .iter()
                                .map(|&point| Circle::new(point, 3, tint.filled())),
                        )
                        .map_err(fail)?;
                }
                chart.draw_series(LineSeries::new(points, tint.stroke_width(2)))
            }
            LineStyle::Ideal => {
                chart.draw_series(DashedLineSeries::new(points, 3, 3, tint.stroke_width(1)))
            }
            LineStyle::AmdahlFit => {
                chart.draw_series(DashedLineSeries::new(points, 10, 5, tint.stroke_width(1)))
            }
            LineStyle::UslFit => {
                chart.draw_series(DashedLineSeries::new(points, 3, 6, tint.stroke_width(2)))
            }
        }
        .map_err(fail)?;
        drawn
            .label(line.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], legend_style));
    }
    chart
        .configure_series_labels()
        .position(match figure.legend {
            LegendCorner::UpperRight => SeriesLabelPosition::UpperRight,
            LegendCorner::LowerRight => SeriesLabelPosition::LowerRight,
        })
        .label_font((FONT, 12))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(200, 200, 200))
        .draw()
        .map_err(fail)?;
    Ok(())
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
    use super::clip_to_height;

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
