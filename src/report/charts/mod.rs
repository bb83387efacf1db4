//! The figures of CERN's test_cpu_parallel study — raw, speed per worker, capacity, speedup — with every series
//! overlaid, dashed markers at each series' physical-core (P) and logical-CPU (L) counts,
//! error bars where the file gives a spread, the recommended fit on the speedup figure, and,
//! when series are compared, each one's speed per worker relative to the baseline. Described
//! once as data, drawn by plotters onto an SVG string for HTML or a PNG file. The font is
//! embedded, so no system font is needed.

mod build;
mod draw;
mod labels;
mod search;
#[cfg(test)]
mod tests;

pub(crate) use build::*;
pub(crate) use draw::*;
use labels::*;

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
