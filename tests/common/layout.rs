//! Reads a report page's figures as a reader sees them: every text's box, worked out from its
//! SVG position, anchor and size with the figures' own font (DejaVu Sans), the legend's box,
//! and the data dots. Fails on labels drawn over each other, over the legend, or outside the
//! figure, and on a dot the legend hides.

use ab_glyph::{Font, FontRef, PxScale, ScaleFont};
use scraper::{ElementRef, Html, Selector};

#[derive(Clone, Copy, Debug)]
struct Rect {
    left: f64,
    top: f64,
    right: f64,
    bottom: f64,
}

impl Rect {
    /// Overlap by more than a pixel each way: glyph boxes include some air.
    fn overlaps(&self, other: &Rect) -> bool {
        self.left + 1.0 < other.right
            && other.left + 1.0 < self.right
            && self.top + 1.0 < other.bottom
            && other.top + 1.0 < self.bottom
    }

    fn holds(&self, other: &Rect) -> bool {
        other.left >= self.left - 0.5
            && other.right <= self.right + 0.5
            && other.top >= self.top - 0.5
            && other.bottom <= self.bottom + 0.5
    }
}

#[derive(Debug)]
struct Label {
    text: String,
    area: Rect,
}

fn number(element: &ElementRef, name: &str) -> f64 {
    element
        .value()
        .attr(name)
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("<{}> without a numeric {name}", element.value().name()))
}

/// Every non-empty, unrotated text of one SVG, with its box.
fn labels(svg: &ElementRef, font: &FontRef) -> Vec<Label> {
    let select = Selector::parse("text").unwrap();
    svg.select(&select)
        .filter(|text| text.value().attr("transform").is_none())
        .filter_map(|text| {
            let content = text.text().collect::<String>().trim().to_string();
            if content.is_empty() {
                return None;
            }
            let size = number(&text, "font-size");
            let scaled = font.as_scaled(PxScale::from(size as f32));
            let width: f64 = content
                .chars()
                .map(|c| scaled.h_advance(font.glyph_id(c)) as f64)
                .sum();
            let (x, y) = (number(&text, "x"), number(&text, "y"));
            let left = match text.value().attr("text-anchor") {
                Some("middle") => x - width / 2.0,
                Some("end") => x - width,
                _ => x,
            };
            // plotters writes `dy` for where y sits: the top (0.76em), the middle (0.5ex)
            // or the bottom (-0.5ex) of the text.
            let top = match text.value().attr("dy") {
                Some("0.5ex") => y - size / 2.0,
                Some("-0.5ex") => y - size,
                _ => y,
            };
            Some(Label {
                text: content,
                area: Rect {
                    left,
                    top,
                    right: left + width,
                    bottom: top + size,
                },
            })
        })
        .collect()
}

/// The legend's box: the rectangle drawn with its grey border.
fn legend(svg: &ElementRef) -> Option<Rect> {
    let select = Selector::parse("rect[stroke=\"#C8C8C8\"]").unwrap();
    svg.select(&select).next().map(|rect| {
        let (left, top) = (number(&rect, "x"), number(&rect, "y"));
        Rect {
            left,
            top,
            right: left + number(&rect, "width"),
            bottom: top + number(&rect, "height"),
        }
    })
}

/// Checks every figure of a page; returns how many it checked.
pub fn assert_figures_lay_out(page: &str, what: &str) -> usize {
    let font = FontRef::try_from_slice(dejavu::sans::regular()).expect("the DejaVu font");
    let page = Html::parse_document(page);
    let figures = Selector::parse("figure").unwrap();
    let mut checked = 0;
    for figure in page.select(&figures) {
        let id = figure.value().attr("id").unwrap_or("?");
        assert_figure_lays_out(&figure, &font, &format!("{what}: {id}"));
        checked += 1;
    }
    checked
}

/// One figure: its legend and labels inside it, apart, hiding no point, its plot tall.
fn assert_figure_lays_out(figure: &ElementRef, font: &FontRef, what: &str) {
    let svg = figure
        .select(&Selector::parse("svg").unwrap())
        .next()
        .expect("an SVG in each figure");
    let view: Vec<f64> = svg
        .value()
        .attr("viewBox")
        .expect("a viewBox")
        .split_whitespace()
        .map(|value| value.parse().unwrap())
        .collect();
    let bounds = Rect {
        left: view[0],
        top: view[1],
        right: view[0] + view[2],
        bottom: view[1] + view[3],
    };
    let labels = labels(&svg, font);
    assert!(!labels.is_empty(), "{what} has no text");
    let legend = legend(&svg);
    if let Some(legend) = legend {
        assert!(
            bounds.holds(&legend),
            "{what}: the legend {legend:?} leaves the figure"
        );
    }
    // The plot keeps its height: the y axis' labels (right-aligned) span at least a
    // third of the figure, whatever the labels above it and the legend take.
    let ticks: Vec<f64> = svg
        .select(&Selector::parse("text[text-anchor=\"end\"]").unwrap())
        .map(|text| number(&text, "y"))
        .collect();
    let span = ticks.iter().copied().fold(f64::MIN, f64::max)
        - ticks.iter().copied().fold(f64::MAX, f64::min);
    assert!(
        span >= (bounds.bottom - bounds.top) / 3.0,
        "{what}: the plot is squeezed to {span:.0} px of {:.0}",
        bounds.bottom - bounds.top
    );
    assert_labels_apart(&labels, &bounds, legend, what);
    if let Some(legend) = legend {
        assert_legend_hides_no_point(&svg, &labels, &legend, what);
    }
}

/// Each label inside the figure, over no other, and inside the legend or clear of it.
fn assert_labels_apart(labels: &[Label], bounds: &Rect, legend: Option<Rect>, what: &str) {
    for (index, label) in labels.iter().enumerate() {
        assert!(
            bounds.holds(&label.area),
            "{what}: '{}' leaves the figure: {:?}",
            label.text,
            label.area
        );
        for other in &labels[index + 1..] {
            assert!(
                !label.area.overlaps(&other.area),
                "{what}: '{}' {:?} and '{}' {:?} overlap",
                label.text,
                label.area,
                other.text,
                other.area
            );
        }
        if let Some(legend) = legend {
            assert!(
                legend.holds(&label.area) || !legend.overlaps(&label.area),
                "{what}: the legend {legend:?} covers part of '{}' {:?}",
                label.text,
                label.area
            );
        }
    }
}

/// A dot under the legend is hidden; the legend's own swatch dots are in it whole.
fn assert_legend_hides_no_point(svg: &ElementRef, labels: &[Label], legend: &Rect, what: &str) {
    for circle in svg.select(&Selector::parse("circle").unwrap()) {
        let (x, y, r) = (
            number(&circle, "cx"),
            number(&circle, "cy"),
            number(&circle, "r"),
        );
        let dot = Rect {
            left: x - r,
            top: y - r,
            right: x + r,
            bottom: y + r,
        };
        assert!(
            legend.holds(&dot) || !legend.overlaps(&dot),
            "{what}: the legend {legend:?} hides the point at ({x}, {y})"
        );
        // A swatch's dot has its entry's label just right of it, on its row.
        let swatch = legend.holds(&dot)
            && labels.iter().any(|label| {
                legend.holds(&label.area)
                    && (label.area.left - x - 19.0).abs() <= 4.0
                    && (label.area.top + label.area.bottom - 2.0 * y).abs() <= 6.0
            });
        assert!(
            swatch || !legend.holds(&dot),
            "{what}: the legend {legend:?} hides the point at ({x}, {y})"
        );
    }
}
