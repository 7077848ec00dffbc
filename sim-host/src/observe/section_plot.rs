//! `sim-host arp plot`: the cost of each section over its samples, drawn
//! by the same plot code as chips-eval's sweeps (sim-plot). A `record_all`
//! file gives a line per traced section (sample number against its value);
//! a histogram file gives a line per section over its log2 bins (bin `b`
//! holds values below `2^b`). Averages have one value per section: nothing
//! to draw over samples.
//!
//! Memory does not grow with the samples (issue 30, N15: a 3.7 M-sample
//! file once took 666 MB and an SVG of 406 MB): the file is read twice.
//! The first pass sums each trace's cost (a node per section path, the
//! prefixes shared); the second collects only the drawn traces, each
//! reduced to the picture's columns as plotting tools do: per column of
//! samples its least and its greatest, in sample order, so every peak and
//! trough stays visible.

use arpsim::paths::PathInterner;
use arpsim::record::{Payload, Record};
use plot::{Chart, Series, YUnit};
use std::collections::{BTreeMap, HashMap};
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
    #[error("{0}: a record_histogram file holds log2 bins only: --histogram bins the samples of a record_all file (without it, the file's own bins are drawn)")]
    NotSamples(String),
}

/// The first pass: every trace's node and total.
#[derive(Default)]
pub(super) struct Totals {
    pub(super) paths: PathInterner,
    /// By node: the sum of its points' values, and whether it has any.
    totals: Vec<Option<f64>>,
    pub(super) histogram: bool,
    averages: bool,
}

pub(super) fn node_of(paths: &mut PathInterner, rec: &Record) -> u32 {
    rec.stack
        .iter()
        .fold(PathInterner::ROOT, |node, e| paths.child(node, e.sid))
}

/// A record's points: (sample value) or (bin, count) pairs.
fn values(rec: &Record) -> (bool, Vec<(f64, f64)>) {
    match &rec.payload {
        Payload::Sample(values) => (
            false,
            vec![(0.0, values.first().map_or(0.0, |v| v.as_f64()))],
        ),
        Payload::Histogram { histograms, .. } => (
            true,
            histograms
                .first()
                .map_or(&[][..], |h| &h.bins)
                .iter()
                .map(|(bin, count)| (f64::from(*bin), *count as f64))
                .collect(),
        ),
        Payload::Average { .. } => (false, Vec::new()),
    }
}

/// One column's extremes: (sample number, value) of its least and its
/// greatest sample.
#[derive(Debug, Clone, Copy)]
struct Column {
    min: (f64, f64),
    max: (f64, f64),
}

/// A series of samples reduced as they come to at most `2 x columns`
/// columns of equal width (doubled and merged in pairs when full), and to
/// at most `columns` at the end.
struct Reduced {
    columns: usize,
    /// Samples per column.
    width: u64,
    seen: u64,
    kept: Vec<Column>,
}

impl Reduced {
    fn new(columns: usize) -> Reduced {
        Reduced {
            columns: columns.max(1),
            width: 1,
            seen: 0,
            kept: Vec::new(),
        }
    }

    fn push(&mut self, y: f64) {
        self.seen += 1;
        let point = (self.seen as f64, y);
        let mut column = (self.seen - 1) / self.width;
        if column == self.kept.len() as u64 && self.kept.len() == 2 * self.columns {
            self.halve();
            column = (self.seen - 1) / self.width;
        }
        let open = column < self.kept.len() as u64;
        match self.kept.last_mut() {
            Some(c) if open => {
                if y < c.min.1 {
                    c.min = point;
                }
                if y > c.max.1 {
                    c.max = point;
                }
            }
            _ => self.kept.push(Column {
                min: point,
                max: point,
            }),
        }
    }

    /// Merges the columns in pairs: twice as many samples each.
    fn halve(&mut self) {
        let merged: Vec<Column> = self
            .kept
            .chunks(2)
            .map(|pair| {
                let mut c = pair[0];
                if let Some(d) = pair.get(1) {
                    if d.min.1 < c.min.1 {
                        c.min = d.min;
                    }
                    if d.max.1 > c.max.1 {
                        c.max = d.max;
                    }
                }
                c
            })
            .collect();
        self.kept = merged;
        self.width *= 2;
    }

    /// The points: each column's extremes in sample order.
    fn points(mut self) -> Vec<(f64, f64)> {
        while self.kept.len() > self.columns {
            self.halve();
        }
        let mut out = Vec::with_capacity(2 * self.kept.len());
        for c in self.kept {
            let (a, b) = if c.min.0 <= c.max.0 {
                (c.min, c.max)
            } else {
                (c.max, c.min)
            };
            out.push(a);
            if b.0 != a.0 {
                out.push(b);
            }
        }
        out
    }
}

/// What the second pass collects of a drawn trace.
enum Collected {
    Samples(Reduced),
    /// Counts by log2 bin (several records of one path add up).
    Bins(Box<[f64; 65]>),
}

/// The chart of `file`'s first callback set (cycles, as sim-host records),
/// each series reduced to `columns` columns (the picture's width).
pub fn chart(file: &Path, columns: usize) -> Result<Chart, SectionPlotError> {
    chart_named(file, columns, &BTreeMap::new())
}

/// [`chart`], each line named after its innermost section's name from
/// `names` (by section id; `observe::section_names`), else its path.
pub fn chart_named(
    file: &Path,
    columns: usize,
    names: &BTreeMap<u16, String>,
) -> Result<Chart, SectionPlotError> {
    let (t, drawn) = first_pass(file)?;
    let mut collected: HashMap<u32, Collected> = drawn
        .iter()
        .map(|&n| {
            let c = if t.histogram {
                Collected::Bins(Box::new([0.0; 65]))
            } else {
                Collected::Samples(Reduced::new(columns))
            };
            (n, c)
        })
        .collect();
    let mut paths = t.paths.clone();
    arpsim::codec::for_each_record(file, |_, rec| {
        let node = node_of(&mut paths, rec);
        if let Some(c) = collected.get_mut(&node) {
            let (_, points) = values(rec);
            match c {
                Collected::Samples(r) => points.iter().for_each(|p| r.push(p.1)),
                Collected::Bins(bins) => {
                    for (bin, count) in points {
                        bins[(bin as usize).min(64)] += count;
                    }
                }
            }
        }
        Ok(())
    })?;
    let mut series: Vec<Series> = drawn
        .iter()
        .map(|n| {
            let points = match collected.remove(n).expect("collected") {
                Collected::Samples(r) => r.points(),
                Collected::Bins(bins) => (0..65)
                    .filter(|&b| bins[b] > 0.0)
                    .map(|b| (b as f64, bins[b]))
                    .collect(),
            };
            let label: Vec<String> = t.paths.path(*n).iter().map(u16::to_string).collect();
            Series {
                label: label.join(" > "),
                points,
            }
        })
        .collect();
    name_series(&mut series, names);
    Ok(if t.histogram {
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

/// The first pass over `file`: every trace's total, and the traces to
/// draw (as nodes of `Totals::paths`).
pub(super) fn first_pass(file: &Path) -> Result<(Totals, Vec<u32>), SectionPlotError> {
    let mut t = Totals::default();
    arpsim::codec::for_each_record(file, |_, rec| {
        let node = node_of(&mut t.paths, rec) as usize;
        if t.totals.len() <= node {
            t.totals.resize(t.paths.len(), None);
        }
        let (histogram, points) = values(rec);
        t.histogram |= histogram;
        t.averages |= matches!(rec.payload, Payload::Average { .. });
        if !points.is_empty() {
            let sum: f64 = points.iter().map(|p| p.1).sum();
            *t.totals[node].get_or_insert(0.0) += sum;
        }
        Ok(())
    })?;
    let name = file.display().to_string();
    if t.averages {
        return Err(SectionPlotError::Averages(name));
    }
    let drawn = costliest(&t);
    if drawn.is_empty() {
        return Err(SectionPlotError::Empty(name));
    }
    Ok((t, drawn))
}

/// Labels each line by its innermost section's name
/// (`ato_kernel_filter_line_hor`; with its path, `8 > 7 > 1`, where two
/// lines have one name), else keeps its section path.
pub(super) fn name_series(series: &mut [Series], names: &BTreeMap<u16, String>) {
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
}

/// The innermost traces (no other trace extends them: the kernels, not
/// the profiled sections around them), at most [`MAX_SERIES`] with the
/// largest totals (equal totals in path order), as nodes.
fn costliest(t: &Totals) -> Vec<u32> {
    let n = t.totals.len();
    // a node some recorded trace extends; each ancestor is marked once
    let mut extended = vec![false; t.paths.len()];
    for node in (0..n).filter(|&i| t.totals[i].is_some()) {
        let mut at = t.paths.parent(node as u32);
        while let Some(a) = at.filter(|&a| a != PathInterner::ROOT) {
            if std::mem::replace(&mut extended[a as usize], true) {
                break;
            }
            at = t.paths.parent(a);
        }
    }
    let mut all: Vec<(f64, u32)> = (0..n)
        .filter(|&i| !extended[i])
        .filter_map(|i| Some((t.totals[i]?, i as u32)))
        .collect();
    all.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| t.paths.path(a.1).cmp(&t.paths.path(b.1)))
    });
    all.into_iter().take(MAX_SERIES).map(|(_, n)| n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reduced_series_keeps_every_extreme_in_order() {
        let mut r = Reduced::new(4);
        let values: Vec<f64> = (0..1000).map(|i| ((i * 37) % 101) as f64).collect();
        for &v in &values {
            r.push(v);
        }
        let points = r.points();
        assert!(points.len() <= 8, "{points:?}");
        assert!(points.windows(2).all(|w| w[0].0 < w[1].0), "{points:?}");
        let min = points.iter().map(|p| p.1).fold(f64::MAX, f64::min);
        let max = points.iter().map(|p| p.1).fold(0.0, f64::max);
        assert_eq!((min, max), (0.0, 100.0));
        // fewer samples than columns: every sample, exactly
        let mut r = Reduced::new(720);
        for v in [5.0, 3.0, 9.0] {
            r.push(v);
        }
        assert_eq!(r.points(), [(1.0, 5.0), (2.0, 3.0), (3.0, 9.0)]);
    }
}
