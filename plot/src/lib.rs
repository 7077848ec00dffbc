//! Line plots fit for a paper, written as a self-contained SVG: round
//! ticks (`ticks`), the unit's SI prefix in the axis label (`time (ms)`,
//! `kcycles`), and series told apart by dash pattern and marker shape as
//! well as colour, so they stay distinct printed in greyscale. A legend is
//! drawn only when there is more than one series. chips-eval draws its
//! sweeps with it (LaOutGraph), sim-host the costs of ARP sections.
//!
//! The x axis is logarithmic (base 2, ticks at powers of 2) when the x
//! values are positive and span a factor of 16 or more, as processor-count
//! sweeps do. The y axis is linear from 0, or logarithmic (ticks at powers
//! of 10) with [`PlotOptions::log_y`].
//!
//! [`png`] rasterises that same SVG with `resvg` at its own size
//! ([`PlotOptions::width`] x [`PlotOptions::height`]). Its text is drawn
//! with a system font; where none is found the PNG still has the axes,
//! ticks and lines, without labels, and [`Png::missing_fonts`] says so.

#![forbid(unsafe_code)]

pub mod ticks;

use std::fmt::Write;

/// Why a plot could not be drawn.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlotError {
    #[error("nothing to plot: no series has a point")]
    Empty,
    #[error("a log scale needs every value above 0; {0}")]
    NotPositive(String),
    #[error("rendering the SVG: {0}")]
    Render(String),
}

/// What the y values are: times in seconds (labelled `time (ms)`, never
/// larger prefixes), or counts of a unit (`cycles`, labelled `Mcycles`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum YUnit {
    Seconds,
    Count(String),
}

/// The data of a plot: the x axis's title, the y values' unit and the
/// series, each with its points sorted by x.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub x_title: String,
    /// Keep the x axis linear even when its values span a factor of 16 or
    /// more (sample numbers, not processor counts).
    pub x_linear: bool,
    pub y_unit: YUnit,
    pub series: Vec<Series>,
}

/// The size of a plot unless `--size` says otherwise, in pixels.
pub const DEFAULT_SIZE: (u32, u32) = (720, 480);
/// The smallest plot `--size` accepts: the labels still fit.
pub const MIN_SIZE: (u32, u32) = (200, 150);
/// The largest plot `--size` accepts (a PNG of 256 MB of pixels at most).
pub const MAX_SIZE: (u32, u32) = (8000, 8000);

/// A series with more points than this is drawn as a line without
/// markers (they would cover it).
pub const MARKED_POINTS: usize = 200;

/// What to draw besides the results.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotOptions {
    pub title: String,
    /// Pixels (SVG user units).
    pub width: u32,
    pub height: u32,
    /// A log scale (powers of 10) on the time axis; every time must be above 0.
    pub log_y: bool,
    /// Each series' colour, dash and marker from its label (a hash of it
    /// into the palette, see [`style_slots`]), so a name looks the same in
    /// every plot; else from its place in the chart.
    pub styles_by_label: bool,
}

impl PlotOptions {
    /// A plot of the default size with a linear time axis.
    pub fn new(title: &str) -> PlotOptions {
        PlotOptions {
            title: title.to_owned(),
            width: DEFAULT_SIZE.0,
            height: DEFAULT_SIZE.1,
            log_y: false,
            styles_by_label: false,
        }
    }
}

/// Colours (Okabe–Ito, safe for colour-blind readers); identity in
/// greyscale comes from [`DASHES`] and [`MARKERS`].
const COLOURS: &[&str] = &[
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#000000", "#e69f00", "#56b4e9", "#666666",
];
/// Dash patterns in units of the line width (empty: solid).
const DASHES: &[&[f64]] = &[
    &[],
    &[4.0, 2.0],
    &[1.0, 1.5],
    &[5.0, 1.5, 1.0, 1.5],
    &[8.0, 2.5],
    &[2.5, 1.5, 1.0, 1.5, 1.0, 1.5],
];
#[derive(Debug, Clone, Copy)]
enum Shape {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Cross,
    Plus,
}
/// Marker shapes, filled for the first seven series, hollow for the next.
const MARKERS: &[Shape] = &[
    Shape::Circle,
    Shape::Square,
    Shape::TriangleUp,
    Shape::Diamond,
    Shape::TriangleDown,
    Shape::Cross,
    Shape::Plus,
];

/// FNV-1a, 64 bits: a hash that is the same on every host and version
/// (std's `DefaultHasher` promises neither).
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Each series' style slot (the `i` of its colour, dash and marker). By
/// place: its index. By label: the palette slot its label hashes to, so
/// a name has the same colour in every plot; when two labels of one plot
/// hash to the same slot, the later in label order takes the next free
/// one (with at most as many series as colours, every series has its
/// own colour; past that, slots repeat a round later, hollow).
pub fn style_slots(series: &[Series], by_label: bool) -> Vec<usize> {
    if !by_label {
        return (0..series.len()).collect();
    }
    let n = COLOURS.len();
    let mut order: Vec<usize> = (0..series.len()).collect();
    order.sort_by(|&a, &b| series[a].label.cmp(&series[b].label).then(a.cmp(&b)));
    let mut slots = vec![0; series.len()];
    let mut taken = vec![false; n];
    for (k, &i) in order.iter().enumerate() {
        if k % n == 0 {
            taken.fill(false);
        }
        let round = k / n;
        let first = (fnv1a(&series[i].label) % n as u64) as usize;
        let free = (0..n).map(|d| (first + d) % n).find(|&c| !taken[c]);
        let colour = free.unwrap_or(first);
        taken[colour] = true;
        slots[i] = colour + n * round;
    }
    slots
}

/// Line style of the `i`-th series.
#[derive(Debug, Clone, Copy)]
struct Style {
    colour: &'static str,
    dash: &'static [f64],
    shape: Shape,
    hollow: bool,
}

fn style(i: usize) -> Style {
    Style {
        colour: COLOURS[i % COLOURS.len()],
        dash: DASHES[i % DASHES.len()],
        shape: MARKERS[i % MARKERS.len()],
        hollow: (i / MARKERS.len()) % 2 == 1,
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One line of the plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    /// (x, y), sorted by x.
    pub points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Scale {
    Linear,
    Log2,
    Log10,
}

impl Scale {
    fn transform(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log2 => v.log2(),
            Scale::Log10 => v.log10(),
        }
    }
}

/// An axis: its scale, the span it shows, its ticks with their labels and
/// its title.
struct Axis {
    scale: Scale,
    lo: f64,
    hi: f64,
    ticks: Vec<(f64, String)>,
    title: String,
}

impl Axis {
    /// Where `v` lies between the axis's ends, 0 to 1.
    fn fraction(&self, v: f64) -> f64 {
        let (lo, hi) = (self.scale.transform(self.lo), self.scale.transform(self.hi));
        let span = if hi > lo { hi - lo } else { 1.0 };
        (self.scale.transform(v) - lo) / span
    }

    fn widest_label(&self) -> usize {
        self.ticks
            .iter()
            .map(|(_, l)| l.chars().count())
            .max()
            .unwrap_or(0)
    }
}

fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)))
}

/// The swept variable: base 2 log when positive over a factor of 16 or
/// more, else linear with 1-2-5 ticks; plain numbers, or an SI prefix on
/// each (`200k`) when they reach 100000.
fn x_axis(name: &str, series: &[Series], linear: bool, max_intervals: usize) -> Axis {
    let (lo, hi) = bounds(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
    if !linear && lo > 0.0 && hi / lo >= 16.0 {
        let ticks = ticks::log2(lo, hi, max_intervals + 1)
            .into_iter()
            .map(|t| (t, ticks::power_of_two(t)))
            .collect();
        return Axis {
            scale: Scale::Log2,
            lo,
            hi,
            ticks,
            title: name.to_owned(),
        };
    }
    // a linear axis of whole numbers (sample and bin numbers): whole ticks
    let whole = linear
        && series
            .iter()
            .all(|s| s.points.iter().all(|p| p.0.fract() == 0.0));
    let values = if whole {
        ticks::linear_whole(lo, hi, max_intervals)
    } else {
        ticks::linear(lo, hi, max_intervals)
    };
    let step = values.get(1).map_or(1.0, |b| b - values[0]);
    let largest = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let (factor, prefix) = if largest >= 1e5 {
        ticks::si_prefix(largest)
    } else {
        (1.0, "")
    };
    let ticks = values
        .iter()
        .map(|&t| {
            (
                t,
                format!("{}{prefix}", ticks::plain(t / factor, step / factor)),
            )
        })
        .collect();
    Axis {
        scale: Scale::Linear,
        lo: values[0],
        hi: *values.last().unwrap_or(&1.0),
        ticks,
        title: name.to_owned(),
    }
}

/// The y values: linear from 0 with 1-2-5 ticks, or powers of 10; labels
/// in plain notation scaled by the SI prefix the title names.
fn y_axis(series: &[Series], unit: &YUnit, log: bool, max_intervals: usize) -> Axis {
    let (lo, hi) = bounds(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
    if log {
        let values = ticks::log10(lo, hi);
        // The prefix of the middle decade, so labels read around 1.
        let middle = values[values.len() / 2];
        let (factor, prefix) = unit_prefix(unit, middle);
        return Axis {
            scale: Scale::Log10,
            lo: values[0],
            hi: *values.last().unwrap_or(&10.0),
            ticks: values
                .iter()
                .map(|&t| (t, ticks::power(t / factor, 10)))
                .collect(),
            title: unit_title(unit, prefix),
        };
    }
    // counts are whole: no tick between two of them
    let values = match unit {
        YUnit::Count(_) => ticks::linear_whole(lo.min(0.0), hi.max(0.0), max_intervals),
        YUnit::Seconds => ticks::linear(lo.min(0.0), hi.max(0.0), max_intervals),
    };
    let step = values.get(1).map_or(1.0, |b| b - values[0]);
    let largest = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let (factor, prefix) = unit_prefix(unit, largest);
    Axis {
        scale: Scale::Linear,
        lo: values[0],
        hi: *values.last().unwrap_or(&1.0),
        ticks: values
            .iter()
            .map(|&t| (t, ticks::plain(t / factor, step / factor)))
            .collect(),
        title: unit_title(unit, prefix),
    }
}

/// The scale and prefix of a y axis: times get ms, µs...; counts get k, M,
/// G from 10 000 up.
fn unit_prefix(unit: &YUnit, magnitude: f64) -> (f64, &'static str) {
    match unit {
        YUnit::Seconds => time_prefix(magnitude),
        YUnit::Count(_) if magnitude >= 1e4 => ticks::si_prefix(magnitude),
        YUnit::Count(_) => (1.0, ""),
    }
}

fn unit_title(unit: &YUnit, prefix: &str) -> String {
    match unit {
        YUnit::Seconds => format!("time ({prefix}s)"),
        YUnit::Count(name) => format!("{prefix}{name}"),
    }
}

/// The SI prefix of a time axis: ms, µs, ... but never ks or Ms, which
/// nobody reads in a paper; large times stay in plain seconds.
fn time_prefix(magnitude: f64) -> (f64, &'static str) {
    if magnitude >= 1.0 {
        (1.0, "")
    } else {
        ticks::si_prefix(magnitude)
    }
}

/// Sizes in pixels, scaled with the image (`k` = 1 at 720 x 480) so a
/// larger plot keeps its proportions.
struct Layout {
    width: f64,
    height: f64,
    k: f64,
    font: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

impl Layout {
    /// An estimate of a text's width: DejaVu Sans averages 0.6 em.
    fn text_width(&self, chars: usize) -> f64 {
        chars as f64 * 0.6 * self.font
    }

    fn plot_width(&self) -> f64 {
        self.width - self.left - self.right
    }

    fn plot_height(&self) -> f64 {
        self.height - self.top - self.bottom
    }

    fn x(&self, axis: &Axis, v: f64) -> f64 {
        self.left + axis.fraction(v) * self.plot_width()
    }

    fn y(&self, axis: &Axis, v: f64) -> f64 {
        self.height - self.bottom - axis.fraction(v) * self.plot_height()
    }
}

fn scale_factor(opts: &PlotOptions) -> f64 {
    let k = (f64::from(opts.width) / f64::from(DEFAULT_SIZE.0))
        .min(f64::from(opts.height) / f64::from(DEFAULT_SIZE.1));
    k.max(0.75)
}

fn layout(opts: &PlotOptions, y: &Axis, legend: Option<&[Series]>) -> Layout {
    let k = scale_factor(opts);
    let mut l = Layout {
        width: f64::from(opts.width),
        height: f64::from(opts.height),
        k,
        font: 12.0 * k,
        left: 0.0,
        right: 20.0 * k,
        top: 36.0 * k,
        bottom: 0.0,
    };
    l.left = 8.0 * k + 1.2 * l.font + 8.0 * k + l.text_width(y.widest_label()) + 10.0 * k;
    l.bottom = 10.0 * k + 2.6 * l.font + 10.0 * k;
    if let Some(series) = legend {
        let widest = series.iter().map(|s| s.label.chars().count()).max();
        l.right = 16.0 * k + legend_width(&l, widest.unwrap_or(0)) + 8.0 * k;
    }
    l
}

/// The legend box: padding, a 36-unit line sample, a gap, the label.
fn legend_width(l: &Layout, widest_label: usize) -> f64 {
    (8.0 + 36.0 + 8.0 + 8.0) * l.k + l.text_width(widest_label)
}

/// How many tick intervals fit along `pixels` at `spacing` pixels each.
fn intervals(pixels: f64, spacing: f64) -> usize {
    ((pixels / spacing) as usize).clamp(2, 8)
}

/// Renders the chart as SVG text.
pub fn svg(chart: &Chart, opts: &PlotOptions) -> Result<String, PlotError> {
    let series = &chart.series;
    if series.iter().all(|s| s.points.is_empty()) {
        return Err(PlotError::Empty);
    }
    if opts.log_y {
        check_positive(series)?;
    }
    let xvar = &chart.x_title;
    let legend = (series.len() > 1).then_some(series.as_slice());
    let k = scale_factor(opts);
    // Tick counts from the size before the margins are known: the margins
    // depend on the labels.
    let y = y_axis(
        series,
        &chart.y_unit,
        opts.log_y,
        intervals(f64::from(opts.height) - 96.0 * k, 45.0 * k),
    );
    let l = layout(opts, &y, legend);
    let x = x_axis(
        xvar,
        series,
        chart.x_linear,
        intervals(l.plot_width(), 70.0 * k),
    );
    let mut s = String::new();
    header(&mut s, &l, &opts.title);
    y_ticks(&mut s, &l, &x, &y);
    x_ticks(&mut s, &l, &x, &y);
    frame(&mut s, &l, &x, &y);
    let slots = style_slots(series, opts.styles_by_label);
    for (one, &slot) in series.iter().zip(&slots) {
        line(&mut s, &l, &x, &y, one, style(slot));
    }
    if let Some(series) = legend {
        draw_legend(&mut s, &l, series, &slots);
    }
    s.push_str("</svg>\n");
    Ok(s)
}

/// A log scale cannot show 0 or less: the first such point, named.
fn check_positive(series: &[Series]) -> Result<(), PlotError> {
    for s in series {
        if let Some((x, y)) = s.points.iter().find(|(_, y)| *y <= 0.0) {
            return Err(PlotError::NotPositive(format!(
                "the point x = {x} of `{}` is {y}",
                s.label
            )));
        }
    }
    Ok(())
}

fn header(s: &mut String, l: &Layout, title: &str) {
    let (w, h) = (l.width, l.height);
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="{}">"#,
        l.font
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="{}">{}</text>"#,
        (l.left + w - l.right) / 2.0,
        22.0 * l.k,
        15.0 * l.k,
        escape(title)
    );
}

/// Horizontal grid lines, tick marks and labels of the time axis; minor
/// grid lines at 2..9 of each decade on a log axis.
fn y_ticks(s: &mut String, l: &Layout, x: &Axis, y: &Axis) {
    let (x0, x1) = (l.x(x, x.lo), l.x(x, x.hi));
    if y.scale == Scale::Log10 {
        for &(decade, _) in &y.ticks[..y.ticks.len() - 1] {
            for m in 2..=9 {
                let ty = l.y(y, decade * f64::from(m));
                let _ = writeln!(
                    s,
                    r##"<line x1="{x0}" y1="{ty:.2}" x2="{x1}" y2="{ty:.2}" stroke="#f0f0f0" stroke-width="{}"/>"##,
                    l.k
                );
            }
        }
    }
    for (v, label) in &y.ticks {
        let ty = l.y(y, *v);
        let _ = writeln!(
            s,
            r##"<line x1="{x0}" y1="{ty:.2}" x2="{x1}" y2="{ty:.2}" stroke="#d9d9d9" stroke-width="{}"/><line x1="{}" y1="{ty:.2}" x2="{x0}" y2="{ty:.2}" stroke="black" stroke-width="{}"/><text x="{}" y="{:.2}" text-anchor="end">{}</text>"##,
            l.k,
            x0 - 5.0 * l.k,
            l.k,
            x0 - 8.0 * l.k,
            ty + 0.35 * l.font,
            escape(label)
        );
    }
    let cy = (l.top + l.height - l.bottom) / 2.0;
    let cx = 8.0 * l.k + l.font;
    let _ = writeln!(
        s,
        r#"<text x="{cx}" y="{cy}" text-anchor="middle" transform="rotate(-90 {cx} {cy})">{}</text>"#,
        escape(&y.title)
    );
}

fn x_ticks(s: &mut String, l: &Layout, x: &Axis, y: &Axis) {
    let y0 = l.y(y, y.lo);
    for (v, label) in &x.ticks {
        let tx = l.x(x, *v);
        let _ = writeln!(
            s,
            r#"<line x1="{tx:.2}" y1="{y0}" x2="{tx:.2}" y2="{}" stroke="black" stroke-width="{}"/><text x="{tx:.2}" y="{}" text-anchor="middle">{}</text>"#,
            y0 + 5.0 * l.k,
            l.k,
            y0 + 8.0 * l.k + l.font,
            escape(label)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (l.left + l.width - l.right) / 2.0,
        l.height - 10.0 * l.k,
        escape(&x.title)
    );
}

/// The axes' lines, drawn over the grid.
fn frame(s: &mut String, l: &Layout, x: &Axis, y: &Axis) {
    let (x0, x1) = (l.x(x, x.lo), l.x(x, x.hi));
    let (y0, y1) = (l.y(y, y.lo), l.y(y, y.hi));
    let _ = writeln!(
        s,
        r#"<path d="M{x0},{y1} L{x0},{y0} L{x1},{y0}" stroke="black" stroke-width="{}" fill="none"/>"#,
        l.k
    );
}

fn dash_attribute(style: Style, width: f64) -> String {
    if style.dash.is_empty() {
        return String::new();
    }
    let lengths: Vec<String> = style
        .dash
        .iter()
        .map(|d| format!("{:.1}", d * width))
        .collect();
    format!(r#" stroke-dasharray="{}""#, lengths.join(","))
}

fn line(s: &mut String, l: &Layout, x: &Axis, y: &Axis, series: &Series, style: Style) {
    let width = 1.75 * l.k;
    let d: Vec<String> = series
        .points
        .iter()
        .enumerate()
        .map(|(j, &(px, py))| {
            let command = if j == 0 { "M" } else { "L" };
            format!("{command}{:.2},{:.2}", l.x(x, px), l.y(y, py))
        })
        .collect();
    let _ = writeln!(
        s,
        r#"<path d="{}" stroke="{}" stroke-width="{width}"{} fill="none" stroke-linejoin="round"/>"#,
        d.join(" "),
        style.colour,
        dash_attribute(style, width)
    );
    // markers only where they can be told apart: a dense series is a line
    if series.points.len() <= MARKED_POINTS {
        for &(px, py) in &series.points {
            marker(s, l.x(x, px), l.y(y, py), 4.0 * l.k, l.k, style);
        }
    }
}

/// A marker of `style`'s shape centred on (`cx`, `cy`), `r` its half size.
fn marker(s: &mut String, cx: f64, cy: f64, r: f64, k: f64, style: Style) {
    let fill = if style.hollow { "white" } else { style.colour };
    let paint = format!(
        r#"fill="{fill}" stroke="{}" stroke-width="{}""#,
        style.colour,
        1.25 * k
    );
    let polygon = |points: &[(f64, f64)]| {
        let p: Vec<String> = points
            .iter()
            .map(|(dx, dy)| format!("{:.2},{:.2}", cx + dx * r, cy + dy * r))
            .collect();
        format!(r#"<polygon points="{}" {paint}/>"#, p.join(" "))
    };
    let text = match style.shape {
        Shape::Circle => format!(r#"<circle cx="{cx:.2}" cy="{cy:.2}" r="{r:.2}" {paint}/>"#),
        Shape::Square => polygon(&[(-0.9, -0.9), (0.9, -0.9), (0.9, 0.9), (-0.9, 0.9)]),
        Shape::TriangleUp => polygon(&[(0.0, -1.2), (1.1, 0.9), (-1.1, 0.9)]),
        Shape::Diamond => polygon(&[(0.0, -1.25), (1.0, 0.0), (0.0, 1.25), (-1.0, 0.0)]),
        Shape::TriangleDown => polygon(&[(0.0, 1.2), (1.1, -0.9), (-1.1, -0.9)]),
        Shape::Cross | Shape::Plus => {
            let (a, b) = if matches!(style.shape, Shape::Cross) {
                ((-1.0, -1.0, 1.0, 1.0), (-1.0, 1.0, 1.0, -1.0))
            } else {
                ((-1.2, 0.0, 1.2, 0.0), (0.0, -1.2, 0.0, 1.2))
            };
            let seg = |(x1, y1, x2, y2): (f64, f64, f64, f64)| {
                format!(
                    "M{:.2},{:.2} L{:.2},{:.2}",
                    cx + x1 * r,
                    cy + y1 * r,
                    cx + x2 * r,
                    cy + y2 * r
                )
            };
            format!(
                r#"<path d="{} {}" stroke="{}" stroke-width="{}" fill="none"/>"#,
                seg(a),
                seg(b),
                style.colour,
                2.0 * k
            )
        }
    };
    s.push_str(&text);
    s.push('\n');
}

/// The legend, right of the plot: a framed box, one row per series with
/// a sample of its line and marker.
fn draw_legend(s: &mut String, l: &Layout, series: &[Series], slots: &[usize]) {
    let k = l.k;
    let widest = series.iter().map(|s| s.label.chars().count()).max();
    let width = legend_width(l, widest.unwrap_or(0));
    let row = 1.7 * l.font;
    let (bx, by) = (l.width - l.right + 16.0 * k, l.top);
    let height = row * series.len() as f64 + 8.0 * k;
    let _ = writeln!(
        s,
        r##"<g class="legend"><rect x="{bx:.2}" y="{by:.2}" width="{width:.2}" height="{height:.2}" fill="white" stroke="#999" stroke-width="{k}"/>"##
    );
    for (i, (one, &slot)) in series.iter().zip(slots).enumerate() {
        let style = style(slot);
        let cy = by + 4.0 * k + row * (i as f64 + 0.5);
        let (x1, x2) = (bx + 8.0 * k, bx + 44.0 * k);
        let stroke = 1.75 * k;
        let _ = writeln!(
            s,
            r#"<line x1="{x1:.2}" y1="{cy:.2}" x2="{x2:.2}" y2="{cy:.2}" stroke="{}" stroke-width="{stroke}"{}/>"#,
            style.colour,
            dash_attribute(style, stroke)
        );
        marker(s, (x1 + x2) / 2.0, cy, 4.0 * k, k, style);
        let _ = writeln!(
            s,
            r#"<text x="{:.2}" y="{:.2}">{}</text>"#,
            x2 + 8.0 * k,
            cy + 0.35 * l.font,
            escape(&one.label)
        );
    }
    s.push_str("</g>\n");
}

/// A plot rendered as PNG.
#[derive(Debug, Clone)]
pub struct Png {
    /// The PNG file's bytes.
    pub data: Vec<u8>,
    /// No system font was found: the labels, ticks' numbers and legend
    /// text are missing (install a font, e.g. Debian's fonts-dejavu-core).
    pub missing_fonts: bool,
}

/// Families tried, in order, for the SVG's `sans-serif` when the font
/// configuration names none that is installed.
const SANS_SERIF: &[&str] = &[
    "DejaVu Sans",
    "Liberation Sans",
    "Noto Sans",
    "FreeSans",
    "Arial",
    "Helvetica",
];

/// Renders the chart as a PNG of the same plot as [`svg`], with the
/// system's fonts.
pub fn png(chart: &Chart, opts: &PlotOptions) -> Result<Png, PlotError> {
    let text = svg(chart, opts)?;
    let mut fonts = resvg::usvg::fontdb::Database::new();
    fonts.load_system_fonts();
    render_png(&text, fonts)
}

/// Rasterises `svg` with the fonts of `fonts` (which may be empty).
pub fn render_png(svg: &str, mut fonts: resvg::usvg::fontdb::Database) -> Result<Png, PlotError> {
    use resvg::tiny_skia::{Pixmap, Transform};
    use resvg::usvg::{fontdb::Family, Options, Tree};
    let missing_fonts = fonts.is_empty();
    if !missing_fonts {
        let has = |db: &resvg::usvg::fontdb::Database, name: &str| {
            db.faces()
                .any(|f| f.families.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)))
        };
        let configured = fonts.family_name(&Family::SansSerif).to_owned();
        if !has(&fonts, &configured) {
            let pick = SANS_SERIF
                .iter()
                .find(|n| has(&fonts, n))
                .map(|n| n.to_string())
                .or_else(|| {
                    fonts
                        .faces()
                        .find_map(|f| f.families.first().map(|(n, _)| n.clone()))
                });
            if let Some(name) = pick {
                fonts.set_sans_serif_family(name);
            }
        }
    }
    let opt = Options {
        font_family: fonts.family_name(&Family::SansSerif).to_owned(),
        fontdb: std::sync::Arc::new(fonts),
        ..Options::default()
    };
    let tree = Tree::from_str(svg, &opt).map_err(|e| PlotError::Render(e.to_string()))?;
    let size = tree.size().to_int_size();
    let mut pixmap = Pixmap::new(size.width(), size.height())
        .ok_or_else(|| PlotError::Render("empty image".into()))?;
    resvg::render(&tree, Transform::default(), &mut pixmap.as_mut());
    let data = pixmap
        .encode_png()
        .map_err(|e| PlotError::Render(format!("encoding the PNG: {e}")))?;
    Ok(Png {
        data,
        missing_fonts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(unit: YUnit, x_linear: bool, ys: &[f64]) -> Chart {
        Chart {
            x_title: "x".into(),
            x_linear,
            y_unit: unit,
            series: vec![Series {
                label: "a".into(),
                points: ys
                    .iter()
                    .enumerate()
                    .map(|(i, y)| ((i + 1) as f64, *y))
                    .collect(),
            }],
        }
    }

    #[test]
    fn counts_take_an_si_prefix_in_the_axis_title() {
        let ys: Vec<f64> = (0..40).map(|i| 40_000.0 + 1000.0 * f64::from(i)).collect();
        let svg = svg(
            &chart(YUnit::Count("cycles".into()), true, &ys),
            &PlotOptions::new("t"),
        )
        .unwrap();
        assert!(svg.contains(">kcycles<"), "{svg}");
        let small = svg_of(&chart(YUnit::Count("cycles".into()), true, &[1.0, 5.0]));
        assert!(small.contains(">cycles<"));
        let time = svg_of(&chart(YUnit::Seconds, true, &[0.001, 0.002]));
        assert!(time.contains(">time (ms)<"));
    }

    fn named(labels: &[&str]) -> Vec<Series> {
        labels
            .iter()
            .map(|l| Series {
                label: (*l).to_owned(),
                points: vec![(1.0, 1.0)],
            })
            .collect()
    }

    /// issue 45: a kernel's colour changed from plot to plot (it was its
    /// place in the legend); by label, a name keeps its slot whatever else
    /// is drawn, and the names of one plot never share a colour.
    #[test]
    fn styles_by_label_follow_the_name_not_the_place() {
        let alone = style_slots(&named(&["ato_kernel_fir"]), true);
        let among = style_slots(&named(&["ato_kernel_iir", "ato_kernel_fir"]), true);
        assert_eq!(alone[0], among[1]);
        assert_eq!(
            alone[0],
            (fnv1a("ato_kernel_fir") % COLOURS.len() as u64) as usize
        );
        let eight: Vec<String> = (0..8).map(|k| format!("ato_kernel_{k}")).collect();
        let labels: Vec<&str> = eight.iter().map(String::as_str).collect();
        let mut slots = style_slots(&named(&labels), true);
        slots.sort_unstable();
        assert_eq!(slots, (0..8).collect::<Vec<_>>(), "one colour each");
        // a ninth series goes round again: hollow markers
        let nine: Vec<String> = (0..9).map(|k| format!("k{k}")).collect();
        let labels: Vec<&str> = nine.iter().map(String::as_str).collect();
        assert!(style_slots(&named(&labels), true).iter().any(|&s| s >= 8));
        // by place, as before
        assert_eq!(style_slots(&named(&["b", "a"]), false), [0, 1]);
        // FNV-1a's published test vector
        assert_eq!(fnv1a("a"), 0xaf63_dc4c_8601_ec8c);
    }

    fn svg_of(c: &Chart) -> String {
        svg(c, &PlotOptions::new("t")).unwrap()
    }

    #[test]
    fn a_linear_x_axis_is_kept_when_asked() {
        let ys = vec![1.0; 64];
        let linear = svg_of(&chart(YUnit::Seconds, true, &ys));
        let auto = svg_of(&chart(YUnit::Seconds, false, &ys));
        // powers of two only on the automatic (log2) axis
        assert!(auto.contains(">32<") && !auto.contains(">30<"), "{auto}");
        assert!(
            linear.contains(">30<") || linear.contains(">20<"),
            "{linear}"
        );
    }

    #[test]
    fn empty_and_non_positive_charts_are_refused() {
        let empty = chart(YUnit::Seconds, true, &[]);
        assert_eq!(svg(&empty, &PlotOptions::new("t")), Err(PlotError::Empty));
        let mut opts = PlotOptions::new("t");
        opts.log_y = true;
        let err = svg(&chart(YUnit::Seconds, true, &[1.0, 0.0]), &opts).unwrap_err();
        assert!(matches!(err, PlotError::NotPositive(_)), "{err}");
    }
}
