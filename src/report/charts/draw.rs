//! Drawing a figure with plotters onto an SVG string, and rasterising that SVG to PNG
//! with the same embedded font.

use super::labels::Rect;
use super::*;

pub(super) fn register_font() {
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

pub(super) fn color(index: usize) -> RGBColor {
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
pub(super) const TITLE_SIZE: f64 = 22.0;
pub(super) const AXIS_SIZE: f64 = 18.0;
pub(super) const TEXT_SIZE: f64 = 17.0;
pub(super) const MARGIN: i32 = 10;
pub(super) const X_LABEL_AREA: i32 = 48;
pub(super) const Y_LABEL_AREA: i32 = 86;
/// Room around the legend's entries, and between the plot and a legend beside it.
pub(super) const PAD: f64 = 6.0;
/// Width of a legend entry's picture of its line.
pub(super) const SWATCH: f64 = 24.0;

/// How a line is drawn: fits a darker shade of their series' colour, so a fit that lies on
/// its data still shows.
pub(super) fn line_color(line: &Line) -> RGBColor {
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
pub(super) fn layer(style: LineStyle) -> u8 {
    match style {
        LineStyle::Measured | LineStyle::Points | LineStyle::Dashed | LineStyle::DisturbedKey => 0,
        LineStyle::Ideal => 1,
        LineStyle::AmdahlFit | LineStyle::UslFit => 2,
    }
}

/// Largest value an axis reaches (imported figures are checked to 1e18 already).
pub(super) const AXIS_LIMIT: f64 = 1e18;

/// The chart's coordinates: workers (or another x) across, the figure's measure up.
type Chart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

pub(super) fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, figure: &Figure) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let fail =
        |error: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("drawing {}: {error:?}", figure.slug);
    root.fill(&WHITE).map_err(fail)?;
    let (x_max, y_max) = axis_ends(figure);
    let text = TextMeasures::of(root, figure);
    // The title on top, a band naming the marker lines under it, then the plot: labels
    // above the plot overprint neither data nor the legend.
    let body = root
        .titled(&figure.title, (FONT, TITLE_SIZE))
        .map_err(fail)?;
    let (width, height) = root.dim_in_pixel();
    let page = Page {
        width: width as f64,
        title_bottom: body.get_base_pixel().1 as f64,
        plot_bottom: (height as i32 - MARGIN - X_LABEL_AREA) as f64,
        x_end: x_max * 1.03,
        y_max,
    };
    // A legend beside the plot: in columns no taller than the plot is under the fullest
    // band of labels, so the width set aside for it is the width it is drawn at.
    let beside_legend = text.legend_size(
        figure,
        page.plot_bottom
            - page.title_bottom
            - MARGIN as f64
            - MAX_LABEL_ROWS as f64 * text.row_height,
    );
    let place = {
        let inside = page.layout(figure, &text, LegendPlace::Inside(figure.legend), 0.0);
        let (width, height, _) = text.legend_size(figure, f64::MAX);
        match free_corner(figure, &inside.frame, (width, height)) {
            Some(corner) => LegendPlace::Inside(corner),
            None => LegendPlace::Beside,
        }
    };
    let layout = page.layout(figure, &text, place, beside_legend.0);
    let (_, plot_area) = body.split_vertically(layout.band as u32);
    let mut chart = ChartBuilder::on(&plot_area)
        .margin(MARGIN)
        .margin_right(MARGIN + layout.beside.ceil() as i32)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(0.0..page.x_end, 0.0..y_max)
        .map_err(fail)?;
    draw_axes(&mut chart, figure, x_max, y_max).map_err(fail)?;
    // The plot area as plotters laid it out, for the labels and the legend.
    let (x_range, y_range) = chart.plotting_area().get_pixel_range();
    let frame = Frame {
        plot: Rect {
            left: x_range.start as f64,
            top: y_range.start as f64,
            right: x_range.end as f64,
            bottom: y_range.end as f64,
        },
        x_end: page.x_end,
        y_max,
    };
    let labels = MarkerLabels {
        text: &text,
        placed: &layout.placed,
        top: page.title_bottom,
        shift: frame.plot.left - (MARGIN + Y_LABEL_AREA) as f64,
    };
    draw_markers(root, &mut chart, figure, &labels).map_err(fail)?;
    let mut order: Vec<&Line> = figure.lines.iter().collect();
    order.sort_by_key(|line| layer(line.style));
    for line in order {
        draw_line(&mut chart, line, y_max).map_err(fail)?;
    }
    let (area, per_column) = match place {
        LegendPlace::Inside(corner) => {
            let (width, height, per_column) = text.legend_size(figure, f64::MAX);
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
        row_height: text.row_height,
        column_width: text.column_width,
        per_column,
    };
    draw_legend(root, figure, &area, &legend, &text.font).map_err(fail)
}

/// Where the axes end, at finite, sane values whatever the data (an axis to f64::MAX never
/// ends): the largest x, and the largest measured y with room above it.
fn axis_ends(figure: &Figure) -> (f64, f64) {
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
    let x_max = if x_max.is_finite() {
        x_max.min(AXIS_LIMIT)
    } else {
        1.0
    };
    let y_max = (y_data.max(figure.y_at_least) * 1.12).min(AXIS_LIMIT);
    (x_max, if y_max > 0.0 { y_max } else { 1.0 })
}

/// The room this figure's text takes: a legend row, each marker label, a legend column.
struct TextMeasures {
    font: FontDesc<'static>,
    row_height: f64,
    /// The marker labels as drawn, and their widths.
    markers: Vec<String>,
    widths: Vec<f64>,
    column_width: f64,
}

impl TextMeasures {
    fn of<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, figure: &Figure) -> Self {
        let font = (FONT, TEXT_SIZE).into_font();
        let text_size = |text: &str| {
            root.estimate_text_size(text, &TextStyle::from(font.clone()))
                .map_or(
                    (text.chars().count() as f64 * 9.0, 14.0),
                    |(width, height)| (width as f64, height as f64),
                )
        };
        let markers: Vec<String> = figure
            .markers
            .iter()
            .map(|marker| format!(" {} ", marker.label))
            .collect();
        let widths = markers.iter().map(|text| text_size(text).0).collect();
        let longest_label = figure
            .lines
            .iter()
            .map(|line| text_size(&line.label).0)
            .fold(0.0, f64::max);
        TextMeasures {
            row_height: text_size("P=8 Lg").1 + 4.0,
            column_width: SWATCH + PAD + longest_label + PAD,
            font,
            markers,
            widths,
        }
    }

    /// The legend's width and height in as many columns as it takes to fit `height`, and
    /// its entries per column.
    fn legend_size(&self, figure: &Figure, height: f64) -> (f64, f64, usize) {
        let fitting = (((height - 2.0 * PAD) / self.row_height).floor() as usize).max(1);
        let columns = figure.lines.len().div_ceil(fitting).max(1);
        let per_column = figure.lines.len().div_ceil(columns);
        (
            PAD + self.column_width * columns as f64,
            PAD + self.row_height * per_column as f64 + PAD,
            per_column,
        )
    }
}

/// The page around the plot, before plotters lays out its axes.
struct Page {
    width: f64,
    title_bottom: f64,
    plot_bottom: f64,
    x_end: f64,
    y_max: f64,
}

/// The page laid out for one place of the legend.
struct Layout {
    /// The height of the band of marker labels above the plot.
    band: f64,
    /// Each marker label's start and row.
    placed: Vec<(f64, usize)>,
    frame: Frame,
    /// The width set aside beside the plot for the legend.
    beside: f64,
}

impl Page {
    /// The layout with the legend at `place`, `beside_width` wide when it is beside the plot.
    fn layout(
        &self,
        figure: &Figure,
        text: &TextMeasures,
        place: LegendPlace,
        beside_width: f64,
    ) -> Layout {
        let beside = match place {
            LegendPlace::Beside => beside_width + PAD,
            LegendPlace::Inside(_) => 0.0,
        };
        let (left, right) = (
            (MARGIN + Y_LABEL_AREA) as f64,
            self.width - MARGIN as f64 - beside,
        );
        let frame = |top: f64, bottom: f64| Frame {
            plot: Rect {
                left,
                top,
                right,
                bottom,
            },
            x_end: self.x_end,
            y_max: self.y_max,
        };
        let unplaced = frame(0.0, 1.0);
        let xs: Vec<f64> = figure
            .markers
            .iter()
            .map(|marker| unplaced.x_pixel(marker.x))
            .collect();
        let placed = place_labels(&xs, &text.widths, right);
        let rows = placed
            .iter()
            .map(|&(_, row)| row + 1)
            .max()
            .unwrap_or(0)
            .min(MAX_LABEL_ROWS);
        let band = (rows as f64 * text.row_height).ceil();
        Layout {
            band,
            placed,
            frame: frame(self.title_bottom + band + MARGIN as f64, self.plot_bottom),
            beside,
        }
    }
}

/// The mesh, its ticks and the axes' names.
fn draw_axes<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    figure: &Figure,
    x_max: f64,
    y_max: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let worker_axis = figure.x_decimals == 0;
    let mut mesh = chart.configure_mesh();
    if worker_axis {
        // Whole numbers only, as many as fit: "0 1 2", never "0 0 1 2 2".
        mesh.x_labels((x_max.floor() as usize + 1).clamp(2, 11));
    }
    mesh.x_desc(&figure.x_label)
        .y_desc(&figure.y_label)
        .label_style((FONT, TEXT_SIZE))
        .axis_desc_style((FONT, AXIS_SIZE))
        .x_label_formatter(&|x| x_tick(figure, *x))
        .y_label_formatter(&|value| axis_tick(*value, y_max))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
}

/// A tick of the x axis: a name where the figure names its x values, else the number.
fn x_tick(figure: &Figure, x: f64) -> String {
    let index = x.round();
    match figure.x_names.get((index as usize).wrapping_sub(1)) {
        Some(name) if (x - index).abs() < 1e-6 => name.clone(),
        // Worker counts are whole: a tick between two is left unlabelled, never
        // rounded to a neighbour's number.
        _ if figure.x_names.is_empty() && figure.x_decimals == 0 => {
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
}

/// The marker labels' places in the band above the plot: its top, and how far plotters
/// moved the plot from where the labels were placed.
struct MarkerLabels<'a> {
    text: &'a TextMeasures,
    placed: &'a [(f64, usize)],
    top: f64,
    shift: f64,
}

/// The dashed verticals at the markers, and their labels in the band above the plot.
fn draw_markers<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &mut Chart<'_, DB>,
    figure: &Figure,
    labels: &MarkerLabels<'_>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let y_max = chart.y_range().end;
    let marked = figure.markers.iter().zip(&labels.text.markers);
    for ((marker, text), &(start, row)) in marked.zip(labels.placed) {
        chart.draw_series(DashedLineSeries::new(
            [(marker.x, 0.0), (marker.x, y_max)],
            6,
            4,
            color(marker.color).mix(0.6).stroke_width(1),
        ))?;
        if row >= MAX_LABEL_ROWS {
            continue;
        }
        let top = labels.top + row as f64 * labels.text.row_height + 2.0;
        root.draw(&Text::new(
            text.clone(),
            ((start + labels.shift).round() as i32, top.round() as i32),
            labels.text.font.clone().color(&color(marker.color)),
        ))?;
    }
    Ok(())
}

/// One line in its style: measured levels with their markers and error bars, points, the
/// ideal line or a fit, clipped to the plot's height.
fn draw_line<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    line: &Line,
    y_max: f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let tint = line_color(line);
    let points = clip_to_height(&line.points, y_max);
    match line.style {
        LineStyle::Measured => {
            // Past a few dozen levels the markers merge into the line: draw just the line.
            if points.len() <= MAX_MARKED_POINTS {
                chart.draw_series(
                    points
                        .iter()
                        .filter(|point| !line.hollow.contains(&point.0))
                        .map(|&point| Circle::new(point, 3, tint.filled())),
                )?;
            }
            // Disturbed levels, kept: hollow, whatever the number of points.
            chart.draw_series(
                points
                    .iter()
                    .filter(|point| line.hollow.contains(&point.0))
                    .map(|&point| Circle::new(point, 5, tint.stroke_width(2))),
            )?;
            chart.draw_series(line.bars.iter().map(|&(x, low, high)| {
                ErrorBar::new_vertical(
                    x,
                    low.min(y_max),
                    (low + high) / 2.0,
                    high.min(y_max),
                    tint.mix(0.7).stroke_width(1),
                    6,
                )
            }))?;
            chart.draw_series(LineSeries::new(points, tint.stroke_width(2)))
        }
        LineStyle::Points => chart.draw_series(
            points
                .iter()
                .map(|&point| Circle::new(point, 5, tint.filled())),
        ),
        LineStyle::DisturbedKey => return Ok(()),
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
    .map(drop)
}

/// How the legend's entries are laid out: rows of `row_height`, `per_column` to a column.
pub(super) struct Legend {
    row_height: f64,
    column_width: f64,
    per_column: usize,
}

/// Rows of marker labels above the plot at most; labels past them are left out (the
/// caption says what the dashed verticals mark), so the plot keeps its height.
pub(super) const MAX_LABEL_ROWS: usize = 3;

/// The legend: each line's picture in the style and colour it is drawn, and its label.
pub(super) fn draw_legend<DB: DrawingBackend>(
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
pub(super) fn swatch(style: LineStyle) -> ([(i32, i32); 4], u32, bool) {
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
/// A tick of an axis up to `top`, with the SI prefix of the top from ten thousand on: "2.5M",
/// never "2500000".
pub(super) fn axis_tick(value: f64, top: f64) -> String {
    if top < 1e4 {
        return format!("{value:.decimals$}", decimals = axis_decimals(top));
    }
    let (scaled_top, prefix) = crate::format::si_prefix(top);
    let scale = top / scaled_top;
    format!(
        "{:.decimals$}{prefix}",
        value / scale,
        decimals = axis_decimals(scaled_top).min(1)
    )
}

pub(super) fn axis_decimals(top: f64) -> usize {
    (2 - top.log10().floor() as i32).clamp(0, 6) as usize
}

/// Keeps a curve inside 0..=top: points above are dropped, and where the curve leaves the
/// plot a point on the edge is added, so the ideal line and fits end at the border.
pub(super) fn clip_to_height(points: &[(f64, f64)], top: f64) -> Vec<(f64, f64)> {
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
mod tick_tests {
    use super::axis_tick;

    #[test]
    fn large_ticks_carry_the_si_prefix_of_their_axis() {
        assert_eq!(axis_tick(2_500_000.0, 5_200_000.0), "2.5M");
        assert_eq!(axis_tick(100_000.0, 520_000.0), "100K");
        assert_eq!(axis_tick(2.5, 5.2), "2.50");
    }
}
