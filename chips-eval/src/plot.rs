//! LaOutGraph: time against the first swept variable, one line per value
//! of the second swept variable, drawn by the shared `plot` crate
//! (sim-plot: round ticks, the time's SI prefix in the axis label,
//! greyscale-safe series, a legend only for several series).
//!
//! The x axis is logarithmic (base 2, ticks at powers of 2) when the x
//! values are positive and span a factor of 16 or more, as processor-count
//! sweeps do. The y axis is linear from 0, or logarithmic (ticks at powers
//! of 10) with [`PlotOptions::log_y`].

use crate::error::Error;
use crate::runtime::RunResults;
use crate::value::{format_number, Value};
use plot::{Chart, Series, YUnit};
use std::collections::HashMap;

pub use plot::{render_png, ticks, PlotOptions, Png, DEFAULT_SIZE, MAX_SIZE, MIN_SIZE};

/// The x variable's name and the series, in order of first appearance;
/// the index keeps a sweep of a million points linear.
fn collect_series(results: &RunResults, log_y: bool) -> Result<Chart, Error> {
    let Some(xvar) = results.variables.first() else {
        return Err(Error::Usage(
            "--plot needs at least one swept variable (--set VAR=A..B or VAR=v1,v2)".into(),
        ));
    };
    let mut series: Vec<Series> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for p in &results.points {
        let Value::Num(x) = p.point[0].1 else {
            return Err(Error::Usage(format!(
                "--plot: `{xvar}` must take numeric values"
            )));
        };
        let Some(t) = p.time else { continue };
        if log_y && t <= 0.0 {
            return Err(Error::Usage(format!(
                "--log-y: the point {} has time {} s; a log scale needs every time above 0 \
                 (plot without --log-y)",
                point_label(&p.point),
                format_number(t)
            )));
        }
        let key = p
            .point
            .get(1)
            .map(|(k, v)| format!("{k} = {v}"))
            .unwrap_or_else(|| "time".into());
        let i = *index.entry(key.clone()).or_insert_with(|| {
            series.push(Series {
                label: key,
                points: Vec::new(),
            });
            series.len() - 1
        });
        series[i].points.push((x, t));
    }
    if series.is_empty() {
        return Err(Error::Usage("--plot: no point has a time".into()));
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    Ok(Chart {
        x_title: xvar.clone(),
        x_linear: false,
        y_unit: YUnit::Seconds,
        series,
    })
}

fn point_label(point: &[(String, Value)]) -> String {
    let parts: Vec<String> = point.iter().map(|(k, v)| format!("{k}={v}")).collect();
    parts.join(", ")
}

fn plot_error(e: plot::PlotError) -> Error {
    Error::Usage(format!("--plot: {e}"))
}

/// Renders the results as SVG text.
pub fn svg(results: &RunResults, opts: &PlotOptions) -> Result<String, Error> {
    let chart = collect_series(results, opts.log_y)?;
    plot::svg(&chart, opts).map_err(plot_error)
}

/// Renders the results as a PNG of the same plot as [`svg`], with the
/// system's fonts.
pub fn png(results: &RunResults, opts: &PlotOptions) -> Result<Png, Error> {
    let chart = collect_series(results, opts.log_y)?;
    plot::png(&chart, opts).map_err(plot_error)
}
