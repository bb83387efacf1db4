//! Placing what is written on a figure: marker labels that never overprint, and the legend
//! in the corner the data leave free.

use super::*;

/// A rectangle in the figure's pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Rect {
    pub(super) left: f64,
    pub(super) top: f64,
    pub(super) right: f64,
    pub(super) bottom: f64,
}

impl Rect {
    pub(super) fn contains(&self, (x, y): (f64, f64)) -> bool {
        (self.left..=self.right).contains(&x) && (self.top..=self.bottom).contains(&y)
    }
}

/// The plot area in pixels and the data range it shows.
pub(super) struct Frame {
    pub(super) plot: Rect,
    pub(super) x_end: f64,
    pub(super) y_max: f64,
}

impl Frame {
    pub(super) fn x_pixel(&self, x: f64) -> f64 {
        self.plot.left + x / self.x_end * (self.plot.right - self.plot.left)
    }

    pub(super) fn pixel(&self, (x, y): (f64, f64)) -> (f64, f64) {
        let height = self.plot.bottom - self.plot.top;
        (self.x_pixel(x), self.plot.bottom - y / self.y_max * height)
    }
}

/// Where the legend goes: in a corner of the plot that no data cross, or, when every
/// corner holds data, beside the plot on the right.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum LegendPlace {
    Inside(LegendCorner),
    Beside,
}

/// Every marker's label: (left end in pixels, row). A label sits right of its line, or left
/// of it where it would leave the plot; it takes the first row whose labels all end left of
/// it, so labels of nearby markers never overprint.
pub(super) fn place_labels(xs: &[f64], widths: &[f64], right: f64) -> Vec<(f64, usize)> {
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
pub(super) fn ink(figure: &Figure, frame: &Frame) -> Vec<(f64, f64)> {
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
pub(super) fn corner_box(corner: LegendCorner, plot: &Rect, (width, height): (f64, f64)) -> Rect {
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
pub(super) fn free_corner(
    figure: &Figure,
    frame: &Frame,
    size: (f64, f64),
) -> Option<LegendCorner> {
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
