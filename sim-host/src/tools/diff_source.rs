//! What `sim-host arp diff` compares (issue 45): each side is a data.arp
//! or a run report (`run --report-json`, a suite's `--out
//! DIR/entries/NAME.json`), told apart by content.
//!
//! A data.arp holds the kernel and profiled sections only (its records
//! are those of measured sections: `arpsim/FORMAT.md`); a run report
//! holds every section, plain ones too, with their names and self cycles,
//! as the suite reports them. With `--self` the compared figure is a
//! section's self cycles: the report's `self_cycles`, or for a data.arp
//! its total less those of the traces recorded directly inside it.

use super::gate::{Measure, Measured};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Whether `bytes` (a file's start) is a JSON document rather than a
/// data.arp (whose ASCII form starts with `#`, its binary form with a
/// magic number, its gzipped form with gzip's).
pub fn is_json(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{')
}

#[derive(Deserialize)]
struct ReportFile {
    schema_version: u32,
    sections: Vec<ReportSection>,
}

#[derive(Deserialize)]
struct ReportSection {
    path: Vec<u16>,
    #[serde(default)]
    names: Vec<String>,
    count: u64,
    total_cycles: u64,
    self_cycles: Option<u64>,
}

/// Every section of the run report `text` (of `file`); with `self_cycles`
/// their self cycles, which reports before schema version 4 lack.
pub fn from_report(text: &str, file: &Path, self_cycles: bool) -> Result<Vec<Measured>, String> {
    let report: ReportFile = serde_json::from_str(text).map_err(|e| {
        format!(
            "{}: not a run report (sim-host run --report-json): {e}",
            file.display()
        )
    })?;
    let mut out = Vec::new();
    for s in report.sections {
        let figure = if self_cycles {
            s.self_cycles.ok_or_else(|| {
                format!(
                    "{}: section {} has no self_cycles (a report of schema_version {}; \
                     version 4 added them): compare its totals, without --self",
                    file.display(),
                    super::gate::path_text(&s.path, "/"),
                    report.schema_version
                )
            })?
        } else {
            s.total_cycles
        };
        let name = s.names.last().cloned();
        out.push((s.path, name, Measure::new(s.count, figure as f64)));
    }
    Ok(out)
}

/// Each data.arp trace's self figure: its total less the totals of the
/// traces one section deeper that start with it (the measured sections
/// recorded inside it). A trace's own total is never less than its
/// children's in a recording, but a hand-made file may say otherwise: the
/// result is then negative, shown as it is.
pub fn self_of_traces(traces: &[Measured]) -> Vec<Measured> {
    let mut nested: BTreeMap<&[u16], f64> = BTreeMap::new();
    for (path, _, m) in traces {
        if let Some((_, parent)) = path.split_last() {
            *nested.entry(parent).or_default() += m.total;
        }
    }
    traces
        .iter()
        .map(|(path, name, m)| {
            let inner = nested.get(path.as_slice()).copied().unwrap_or(0.0);
            (
                path.clone(),
                name.clone(),
                Measure::new(m.count, m.total - inner),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_told_from_a_data_arp() {
        assert!(is_json(b"  \n{\"schema_version\": 4}"));
        assert!(!is_json(b"# Atomium record and playback data"));
        assert!(!is_json(&[0x1f, 0x8b, 8]));
        assert!(!is_json(b""));
    }

    #[test]
    fn a_report_gives_every_section_with_its_total_or_self_cycles() {
        let text = r#"{"schema_version": 4, "sections": [
            {"path": [8], "names": ["main (f.c:3)"], "kind": "plain", "count": 1,
             "total_cycles": 100, "self_cycles": 40},
            {"path": [8, 1], "names": ["main (f.c:3)", "ato_kernel_x"], "kind": "kernel",
             "count": 2, "total_cycles": 60, "self_cycles": 60}]}"#;
        let file = Path::new("r.json");
        let totals = from_report(text, file, false).unwrap();
        assert_eq!(totals[0].0, [8]);
        assert_eq!(totals[0].1.as_deref(), Some("main (f.c:3)"));
        assert_eq!(totals[0].2, Measure::new(1, 100.0));
        let own = from_report(text, file, true).unwrap();
        assert_eq!(own[0].2, Measure::new(1, 40.0));
        assert_eq!(own[1].2, Measure::new(2, 60.0));
        let old =
            r#"{"schema_version": 3, "sections": [{"path": [8], "count": 1, "total_cycles": 5}]}"#;
        let e = from_report(old, file, true).unwrap_err();
        assert!(e.contains("r.json: section 8 has no self_cycles"), "{e}");
        assert_eq!(from_report(old, file, false).unwrap().len(), 1);
        let e = from_report("{\"sections\": 1}", file, false).unwrap_err();
        assert!(e.contains("r.json: not a run report"), "{e}");
    }

    /// 8/2 holds 8/2/1 (300) and 8/2/5 (100): its self is 1000 - 400; a
    /// deeper trace (8/2/1/7) counts in 8/2/1's, not in 8/2's.
    #[test]
    fn a_data_arp_traces_self_is_its_total_less_its_childrens() {
        let m = |path: &[u16], total: f64| (path.to_vec(), None, Measure::new(1, total));
        let own = self_of_traces(&[
            m(&[8, 2], 1000.0),
            m(&[8, 2, 1], 300.0),
            m(&[8, 2, 5], 100.0),
            m(&[8, 2, 1, 7], 50.0),
        ]);
        let totals: Vec<f64> = own.iter().map(|t| t.2.total).collect();
        assert_eq!(totals, [600.0, 250.0, 100.0, 50.0]);
    }
}
