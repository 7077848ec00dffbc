//! `arp plot --histogram` (issue 45): the distribution of each section's
//! samples in a `record_all` file, in bins fitted to the data. A
//! `record_histogram` file holds log2 bins only (a factor of two each, so
//! a kernel's samples fall in one or two of them); here the bin width is
//! Freedman–Diaconis's, `2 IQR / n^(1/3)`, rounded up to a whole cycle,
//! and each series has its own bins.
//!
//! The file is read three times, as `section_plot` reads it: the totals
//! pick the drawn sections; the second pass keeps each one's exact least
//! and greatest sample and a deterministic subsample of at most
//! [`QUANTILE_SAMPLES`] values for the quartiles (every k-th, k doubling
//! when full), so memory does not grow with the file; the third counts
//! every sample into its bin.

use super::section_plot::{first_pass, name_series, node_of, SectionPlotError};
use arpsim::record::Payload;
use plot::{Chart, Series, YUnit};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The most values kept per section for its quartiles.
pub const QUANTILE_SAMPLES: usize = 1 << 16;
/// The most bins a series is drawn with (wider bins past that).
pub const MAX_BINS: usize = 200;

/// What the second pass keeps of a section's samples.
#[derive(Debug, Default)]
struct Spread {
    count: u64,
    min: f64,
    max: f64,
    /// Every `stride`-th sample.
    kept: Vec<f64>,
    stride: u64,
}

impl Spread {
    fn push(&mut self, v: f64) {
        if self.count == 0 {
            (self.min, self.max, self.stride) = (v, v, 1);
        }
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        if self.count % self.stride == 0 {
            if self.kept.len() == QUANTILE_SAMPLES {
                // keep every other: the stride doubles
                let halved: Vec<f64> = self.kept.iter().step_by(2).copied().collect();
                self.kept = halved;
                self.stride *= 2;
            }
            if self.count % self.stride == 0 {
                self.kept.push(v);
            }
        }
        self.count += 1;
    }
}

/// A series' bins: the first starts at `lo`, each `width` wide.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bins {
    pub lo: f64,
    pub width: f64,
    pub count: usize,
}

impl Bins {
    fn index(&self, v: f64) -> usize {
        (((v - self.lo) / self.width).floor().max(0.0) as usize).min(self.count - 1)
    }
}

/// The quartile `q` (0 to 1) of `sorted`, linearly interpolated.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let at = q * (sorted.len() - 1) as f64;
    let (i, frac) = (at.floor() as usize, at.fract());
    let next = sorted.get(i + 1).copied().unwrap_or(sorted[i]);
    sorted[i] + (next - sorted[i]) * frac
}

/// Freedman–Diaconis bins for `n` samples from `min` to `max` whose
/// (sub)sample is `kept`; whole-cycle widths from 1 up, at most
/// [`MAX_BINS`]. With no spread between the quartiles (most samples
/// equal) the width is the range over Sturges' `log2 n + 1` bins.
pub fn freedman_diaconis(kept: &[f64], n: u64, min: f64, max: f64) -> Bins {
    let mut sorted = kept.to_vec();
    sorted.sort_by(f64::total_cmp);
    let iqr = if sorted.is_empty() {
        0.0
    } else {
        quantile(&sorted, 0.75) - quantile(&sorted, 0.25)
    };
    let range = max - min;
    let mut width = if iqr > 0.0 {
        2.0 * iqr / (n.max(1) as f64).cbrt()
    } else {
        range / ((n.max(1) as f64).log2().floor() + 1.0)
    };
    width = width.max(range / MAX_BINS as f64).ceil().max(1.0);
    let lo = min.floor();
    let count = (((max - lo) / width).floor() as usize + 1).min(MAX_BINS);
    Bins { lo, width, count }
}

/// The chart: per drawn section, samples per bin at each bin's centre.
pub fn chart(file: &Path, names: &BTreeMap<u16, String>) -> Result<Chart, SectionPlotError> {
    let (t, drawn) = first_pass(file)?;
    if t.histogram {
        return Err(SectionPlotError::NotSamples(file.display().to_string()));
    }
    let sample = |payload: &Payload| match payload {
        Payload::Sample(values) => values.first().map(|v| v.as_f64()),
        _ => None,
    };
    let mut spreads: HashMap<u32, Spread> = drawn.iter().map(|&n| (n, Spread::default())).collect();
    let mut paths = t.paths.clone();
    arpsim::codec::for_each_record(file, |_, rec| {
        let node = node_of(&mut paths, rec);
        if let (Some(s), Some(v)) = (spreads.get_mut(&node), sample(&rec.payload)) {
            s.push(v);
        }
        Ok(())
    })?;
    let bins: HashMap<u32, Bins> = spreads
        .iter()
        .map(|(&n, s)| (n, freedman_diaconis(&s.kept, s.count, s.min, s.max)))
        .collect();
    let mut counts: HashMap<u32, Vec<f64>> =
        bins.iter().map(|(&n, b)| (n, vec![0.0; b.count])).collect();
    arpsim::codec::for_each_record(file, |_, rec| {
        let node = node_of(&mut paths, rec);
        if let (Some(c), Some(v)) = (counts.get_mut(&node), sample(&rec.payload)) {
            c[bins[&node].index(v)] += 1.0;
        }
        Ok(())
    })?;
    let mut series: Vec<Series> = drawn
        .iter()
        .map(|n| {
            let b = bins[n];
            let points = counts[n]
                .iter()
                .enumerate()
                .map(|(k, &c)| (b.lo + (k as f64 + 0.5) * b.width, c))
                .collect();
            let label: Vec<String> = t.paths.path(*n).iter().map(u16::to_string).collect();
            Series {
                label: label.join(" > "),
                points,
            }
        })
        .collect();
    name_series(&mut series, names);
    Ok(Chart {
        x_title: "cycles (bins fitted to the data: Freedman–Diaconis)".into(),
        x_linear: true,
        y_unit: YUnit::Count("samples".into()),
        series,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1000 samples of 100 to 199 cycles (uniform): IQR 49.5, n^(1/3) = 10,
    /// so a width of 2 x 49.5 / 10 = 9.9, rounded up to 10 cycles: bins
    /// from 100, (199 - 100) / 10 + 1 = 10 of them.
    #[test]
    fn bins_follow_freedman_diaconis_in_whole_cycles() {
        let kept: Vec<f64> = (0..1000).map(|i| f64::from(100 + i % 100)).collect();
        let b = freedman_diaconis(&kept, 1000, 100.0, 199.0);
        assert_eq!(
            b,
            Bins {
                lo: 100.0,
                width: 10.0,
                count: 10
            }
        );
        assert_eq!(b.index(100.0), 0);
        assert_eq!(b.index(199.0), 9);
        // all samples equal: one bin of one cycle
        let same = freedman_diaconis(&[4482.0; 8], 8, 4482.0, 4482.0);
        assert_eq!(
            same,
            Bins {
                lo: 4482.0,
                width: 1.0,
                count: 1
            }
        );
        // two values far apart, no spread between the quartiles: Sturges
        let mut two = vec![5448.0; 100];
        two.extend([8648.0; 700]);
        let b = freedman_diaconis(&two, 800, 5448.0, 8648.0);
        // 3200 cycles over floor(log2 800) + 1 = 10 bins
        assert_eq!((b.width, b.count), (320.0, 11));
        // a huge range is capped at MAX_BINS
        let wide: Vec<f64> = (0..10_000).map(|i| f64::from(i * 1000)).collect();
        let b = freedman_diaconis(&wide, 10_000, 0.0, 9_999_000.0);
        assert!(b.count <= MAX_BINS, "{b:?}");
    }

    #[test]
    fn the_subsample_is_bounded_and_spread_over_the_samples() {
        let mut s = Spread::default();
        for v in 0..(3 * QUANTILE_SAMPLES as u64) {
            s.push(v as f64);
        }
        assert!(s.kept.len() <= QUANTILE_SAMPLES);
        assert_eq!((s.min, s.max), (0.0, (3 * QUANTILE_SAMPLES - 1) as f64));
        // every stride-th sample from the first: the median is in the middle
        let mid = s.kept[s.kept.len() / 2];
        let half = (3 * QUANTILE_SAMPLES / 2) as f64;
        assert!((mid - half).abs() < 4.0, "{mid}");
    }
}
