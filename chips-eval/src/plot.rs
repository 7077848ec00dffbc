//! LaOutGraph: time against the first swept variable, one line per value
//! of the second swept variable, written as a self-contained SVG.
//! The x axis is logarithmic (base 2) when the x values are positive and
//! span a factor of 16 or more, as processor-count sweeps do.
//!
//! [`png`] rasterises that same SVG with `resvg` at its own size
//! (720 x 480). Its text is drawn with a system font; where none is
//! found the PNG still has the axes, ticks and lines, without labels,
//! and [`Png::missing_fonts`] says so.

use crate::error::Error;
use crate::runtime::RunResults;
use crate::value::{format_number, Value};
use std::collections::HashMap;
use std::fmt::Write;

const W: f64 = 720.0;
const H: f64 = 480.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;
const COLOURS: &[&str] = &[
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Renders the results as SVG text.
pub fn svg(results: &RunResults, title: &str) -> Result<String, Error> {
    let Some(xvar) = results.variables.first() else {
        return Err(Error::Usage(
            "--plot needs at least one swept variable (--set VAR=A..B or VAR=v1,v2)".into(),
        ));
    };
    // Series keyed by the second variable's value, in order of appearance;
    // the index keeps a sweep of a million points linear.
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for p in &results.points {
        let Value::Num(x) = p.point[0].1 else {
            return Err(Error::Usage(format!(
                "--plot: `{xvar}` must take numeric values"
            )));
        };
        let Some(t) = p.time else { continue };
        let key = p
            .point
            .get(1)
            .map(|(k, v)| format!("{k} = {v}"))
            .unwrap_or_else(|| "time".into());
        match index.get(&key) {
            Some(&i) => series[i].1.push((x, t)),
            None => {
                index.insert(key.clone(), series.len());
                series.push((key, vec![(x, t)]));
            }
        }
    }
    let all: Vec<(f64, f64)> = series.iter().flat_map(|(_, p)| p.iter().copied()).collect();
    if all.is_empty() {
        return Err(Error::Usage("--plot: no point has a time".into()));
    }
    let (xmin, xmax) = all.iter().fold((f64::MAX, f64::MIN), |(a, b), (x, _)| {
        (a.min(*x), b.max(*x))
    });
    let ymax = all.iter().fold(0.0f64, |m, (_, y)| m.max(*y));
    let log_x = xmin > 0.0 && xmax / xmin >= 16.0;
    let fx = |x: f64| if log_x { x.log2() } else { x };
    let (lo, hi) = (fx(xmin), fx(xmax));
    let span = if hi > lo { hi - lo } else { 1.0 };
    let ytop = if ymax > 0.0 { ymax * 1.05 } else { 1.0 };
    let px = |x: f64| LEFT + (fx(x) - lo) / span * (W - LEFT - RIGHT);
    let py = |y: f64| H - BOTTOM - y / ytop * (H - TOP - BOTTOM);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#,
        W / 2.0,
        escape(title)
    );
    let (x0, x1, y0, y1) = (LEFT, W - RIGHT, H - BOTTOM, TOP);
    let _ = writeln!(
        s,
        r#"<path d="M{x0},{y1} L{x0},{y0} L{x1},{y0}" stroke="black" fill="none"/>"#
    );
    // X ticks at the distinct x values (at most 12).
    let mut xs: Vec<f64> = all.iter().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let stride = xs.len().div_ceil(12).max(1);
    for x in xs.iter().step_by(stride) {
        let tx = px(*x);
        let _ = writeln!(
            s,
            r#"<line x1="{tx}" y1="{y0}" x2="{tx}" y2="{}" stroke="black"/><text x="{tx}" y="{}" text-anchor="middle">{}</text>"#,
            y0 + 5.0,
            y0 + 20.0,
            format_number(*x)
        );
    }
    for i in 0..=5 {
        let y = ytop * i as f64 / 5.0;
        let ty = py(y);
        let _ = writeln!(
            s,
            r##"<line x1="{}" y1="{ty}" x2="{x1}" y2="{ty}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
            x0,
            x0 - 6.0,
            ty + 4.0,
            escape(&format!("{y:.3e}"))
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}{}</text>"#,
        (x0 + x1) / 2.0,
        H - 15.0,
        escape(xvar),
        if log_x { " (log2 scale)" } else { "" }
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{}" text-anchor="middle" transform="rotate(-90 18 {})">time (s)</text>"#,
        (y0 + y1) / 2.0,
        (y0 + y1) / 2.0
    );
    for (i, (label, pts)) in series.iter_mut().enumerate() {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let colour = COLOURS[i % COLOURS.len()];
        let d: Vec<String> = pts
            .iter()
            .enumerate()
            .map(|(j, (x, y))| {
                format!(
                    "{}{:.2},{:.2}",
                    if j == 0 { "M" } else { "L" },
                    px(*x),
                    py(*y)
                )
            })
            .collect();
        let _ = writeln!(
            s,
            r#"<path d="{}" stroke="{colour}" stroke-width="2" fill="none"/>"#,
            d.join(" ")
        );
        for (x, y) in pts.iter() {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.2}" cy="{:.2}" r="3" fill="{colour}"/>"#,
                px(*x),
                py(*y)
            );
        }
        let ly = TOP + 20.0 + 18.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
            x1 + 12.0,
            x1 + 32.0,
            x1 + 38.0,
            ly + 4.0,
            escape(label)
        );
    }
    s.push_str("</svg>\n");
    Ok(s)
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

/// Renders the results as a PNG of the same plot as [`svg`], with the
/// system's fonts.
pub fn png(results: &RunResults, title: &str) -> Result<Png, Error> {
    let text = svg(results, title)?;
    let mut fonts = resvg::usvg::fontdb::Database::new();
    fonts.load_system_fonts();
    render_png(&text, fonts)
}

/// Rasterises `svg` with the fonts of `fonts` (which may be empty).
pub fn render_png(svg: &str, mut fonts: resvg::usvg::fontdb::Database) -> Result<Png, Error> {
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
    let tree = Tree::from_str(svg, &opt)
        .map_err(|e| Error::Usage(format!("--plot: rendering the SVG: {e}")))?;
    let size = tree.size().to_int_size();
    let mut pixmap = Pixmap::new(size.width(), size.height())
        .ok_or_else(|| Error::Usage("--plot: empty image".into()))?;
    resvg::render(&tree, Transform::default(), &mut pixmap.as_mut());
    let data = pixmap
        .encode_png()
        .map_err(|e| Error::Usage(format!("--plot: encoding the PNG: {e}")))?;
    Ok(Png {
        data,
        missing_fonts,
    })
}
