//! `sim-host arp plot`: the cost of each section over its samples, drawn
//! by the same plot code as chips-eval's sweeps (sim-plot). A `record_all`
//! file gives a line per traced section (sample number against its value);
//! a histogram file gives a line per section over its log2 bins (bin `b`
//! holds values below `2^b`). Averages have one value per section: nothing
//! to draw over samples.

use arpsim::record::Payload;
use plot::{Chart, Series, YUnit};
use std::collections::BTreeMap;
use std::path::Path;

/// At most this many sections are drawn (the costliest); more would be an
/// unreadable legend.
pub const MAX_SERIES: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum SectionPlotError {
    #[error(transparent)]
    Read(#[from] arpsim::error::ArpError),
    #[error("{0}: a record_average file holds one mean per section: nothing to plot over samples (record with --mode record_all or record_histogram)")]
    Averages(String),
    #[error("{0}: no record to plot")]
    Empty(String),
}

/// Points per trace (by its section path) and whether they are bins.
#[derive(Default)]
struct Collected {
    traces: BTreeMap<Vec<u16>, Vec<(f64, f64)>>,
    histogram: bool,
    averages: bool,
}

/// The chart of `file`'s first callback set (cycles, as sim-host records).
pub fn chart(file: &Path) -> Result<Chart, SectionPlotError> {
    chart_named(file, &BTreeMap::new())
}

/// [`chart`], each line named after its innermost section's name from
/// `names` (by section id; `observe::section_names`), else its path.
pub fn chart_named(file: &Path, names: &BTreeMap<u16, String>) -> Result<Chart, SectionPlotError> {
    let mut c = Collected::default();
    arpsim::codec::for_each_record(file, |_, rec| {
        let path: Vec<u16> = rec.stack.iter().map(|e| e.sid).collect();
        let points = c.traces.entry(path).or_default();
        match &rec.payload {
            Payload::Sample(values) => {
                let y = values.first().map_or(0.0, |v| v.as_f64());
                points.push((points.len() as f64 + 1.0, y));
            }
            Payload::Histogram { histograms, .. } => {
                c.histogram = true;
                for (bin, count) in histograms.first().map_or(&[][..], |h| &h.bins) {
                    points.push((f64::from(*bin), *count as f64));
                }
            }
            Payload::Average { .. } => c.averages = true,
        }
        Ok(())
    })?;
    let name = file.display().to_string();
    if c.averages {
        return Err(SectionPlotError::Averages(name));
    }
    let mut series = costliest(c.traces, names);
    if series.is_empty() {
        return Err(SectionPlotError::Empty(name));
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    Ok(if c.histogram {
        Chart {
            x_title: "log2 bin (values below 2^bin)".into(),
            x_linear: true,
            y_unit: YUnit::Count("samples".into()),
            series,
        }
    } else {
        Chart {
            x_title: "sample".into(),
            x_linear: true,
            y_unit: YUnit::Count("cycles".into()),
            series,
        }
    })
}

/// The innermost traces (no other trace extends them: the kernels, not
/// the profiled sections around them), at most [`MAX_SERIES`] with the
/// largest totals, labelled by their innermost section's name
/// (`ato_kernel_filter_line_hor`; with its path, `8 > 7 > 1`, where two
/// lines have one name) or, without one, by their section path.
fn costliest(
    traces: BTreeMap<Vec<u16>, Vec<(f64, f64)>>,
    names: &BTreeMap<u16, String>,
) -> Vec<Series> {
    let paths: Vec<Vec<u16>> = traces.keys().cloned().collect();
    let innermost = |path: &Vec<u16>| {
        !paths
            .iter()
            .any(|p| p.len() > path.len() && p.starts_with(path))
    };
    let mut all: Vec<(f64, Series)> = traces
        .into_iter()
        .filter(|(path, p)| !p.is_empty() && innermost(path))
        .map(|(path, points)| {
            let total = points.iter().map(|p| p.1).sum::<f64>();
            let label: Vec<String> = path.iter().map(u16::to_string).collect();
            (
                total,
                Series {
                    label: label.join(" > "),
                    points,
                },
            )
        })
        .collect();
    all.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut series: Vec<Series> = all.into_iter().take(MAX_SERIES).map(|(_, s)| s).collect();
    let name_of = |label: &str| {
        let sid = label.rsplit(" > ").next()?.parse::<u16>().ok()?;
        names.get(&sid).cloned()
    };
    let named: Vec<Option<String>> = series.iter().map(|s| name_of(&s.label)).collect();
    for (s, name) in series.iter_mut().zip(&named) {
        let Some(name) = name else { continue };
        let shared = named.iter().filter(|n| n.as_ref() == Some(name)).count() > 1;
        s.label = if shared {
            format!("{name} ({})", s.label)
        } else {
            name.clone()
        };
    }
    series
}
