//! A suite's baseline gate (issue 28): each entry's sections compared with
//! an earlier run's (`--baseline OLD.json`, `--tolerance PCT`), and the
//! next baseline written from a run that passed (`--write-baseline`).
//! Nothing is run again: the gate reads the results in hand.
//!
//! A baseline is either a suite result (`--json`, `--out`, `suite merge
//! -o`) or the smaller file `--write-baseline` writes:
//!
//! ```text
//! { "format": "sim-host-baseline", "version": 1,
//!   "manifest": file name, "manifest_hash": string,
//!   "entries": [ { "name": string, "target": string, "cycles": integer,
//!                  "instructions": integer,
//!                  "sections": [ { "path": [sid...], "name": string,
//!                                  "count": integer, "total_cycles": integer,
//!                                  "mean_cycles": number,
//!                                  "total_instructions": integer } ] } ] }
//! ```
//!
//! It holds nothing of the host (no times): the same manifest and guests
//! write it byte for byte, so it is fit to commit beside the manifest.
//!
//! Entries are matched by name and sections by trace (section ids), as
//! `tools::gate` compares them: a section fails when its total cycles grew
//! by more than the tolerance; sections and entries that appeared or
//! vanished are listed, not failed (an entry that did not run has failed
//! already).

use super::error::{corrupt, read_text, SuiteError};
use super::result::{number_or_null, SectionResult, SuiteReport};
use crate::tools::gate::{self, Change, Measure};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What `format` says in a file `--write-baseline` wrote.
pub const FORMAT: &str = "sim-host-baseline";
pub const VERSION: u32 = 1;

/// A section of a baseline entry (read from either kind of file).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BaselineSection {
    pub path: Vec<u16>,
    /// The innermost section's name (a suite result has `names`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing)]
    pub names: Vec<String>,
    pub count: u64,
    pub total_cycles: u64,
    #[serde(deserialize_with = "number_or_null")]
    pub mean_cycles: f64,
    #[serde(default)]
    pub total_instructions: u64,
}

impl BaselineSection {
    fn of(s: &SectionResult) -> BaselineSection {
        BaselineSection {
            path: s.path.clone(),
            name: s.names.last().cloned(),
            names: Vec::new(),
            count: s.count,
            total_cycles: s.total_cycles,
            mean_cycles: s.mean_cycles,
            total_instructions: s.total_instructions,
        }
    }

    fn measured(&self) -> (Vec<u16>, Option<String>, Measure) {
        let name = self.name.clone().or_else(|| self.names.last().cloned());
        (
            self.path.clone(),
            name,
            Measure::new(self.count, self.total_cycles as f64),
        )
    }
}

/// An entry of a baseline.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BaselineEntry {
    pub name: String,
    #[serde(default)]
    pub target: String,
    #[serde(default)]
    pub cycles: u64,
    #[serde(default)]
    pub instructions: u64,
    pub sections: Vec<BaselineSection>,
}

/// A baseline file as it is read and written.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Baseline {
    #[serde(default = "format_name")]
    pub format: String,
    #[serde(default)]
    pub version: u32,
    #[serde(default)]
    pub manifest: String,
    #[serde(default)]
    pub manifest_hash: String,
    pub entries: Vec<BaselineEntry>,
}

fn format_name() -> String {
    FORMAT.to_owned()
}

impl Baseline {
    /// The baseline of `report`'s entries that ran.
    pub fn of(report: &SuiteReport) -> Baseline {
        Baseline {
            format: FORMAT.to_owned(),
            version: VERSION,
            // the file's name: the same from any working folder
            manifest: Path::new(&report.manifest)
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            manifest_hash: report.manifest_hash.clone(),
            entries: report
                .entries
                .iter()
                .filter(|e| e.stop != "not_run")
                .map(|e| BaselineEntry {
                    name: e.name.clone(),
                    target: e.target.clone(),
                    cycles: e.cycles,
                    instructions: e.instructions,
                    sections: e.sections.iter().map(BaselineSection::of).collect(),
                })
                .collect(),
        }
    }

    /// Reads a baseline or a suite result.
    pub fn load(path: &Path) -> Result<Baseline, SuiteError> {
        let text = read_text(path)?;
        let bad = |m: String| {
            corrupt(
                path,
                format!("{m} (expected a suite result or a baseline written by --write-baseline)"),
            )
        };
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let is_result = value.get("schema_version").is_some();
        let format = value.get("format").and_then(|f| f.as_str());
        if !is_result && format != Some(FORMAT) {
            return Err(bad("neither `schema_version` nor `format`".into()));
        }
        if let Some(v) = value
            .get("version")
            .and_then(|v| v.as_u64())
            .filter(|_| !is_result)
        {
            if v > u64::from(VERSION) {
                return Err(bad(format!(
                    "baseline version {v}, this sim-host reads {VERSION}"
                )));
            }
        }
        // from the text again, so an error names its line and column
        serde_json::from_str(&text).map_err(|e| bad(e.to_string()))
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }
}

/// One entry's sections against its baseline.
#[derive(Debug, Clone)]
pub struct EntryChanges {
    pub entry: String,
    /// Every trace, the largest change first.
    pub changes: Vec<Change>,
}

/// The suite against its baseline.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub baseline: PathBuf,
    /// Percent.
    pub tolerance: f64,
    pub entries: Vec<EntryChanges>,
    /// Entries that ran and are not in the baseline.
    pub new_entries: Vec<String>,
    /// Entries of the baseline the manifest no longer has.
    pub gone_entries: Vec<String>,
}

impl Comparison {
    /// `report`'s entries that ran against `baseline` (read from `file`).
    /// Entries of the manifest outside this run (other shards) are neither
    /// new nor gone.
    pub fn of(
        report: &SuiteReport,
        baseline: &Baseline,
        file: &Path,
        tolerance: f64,
    ) -> Comparison {
        let mut entries = Vec::new();
        let mut new_entries = Vec::new();
        for e in report.entries.iter().filter(|e| e.stop != "not_run") {
            let Some(base) = baseline.entries.iter().find(|b| b.name == e.name) else {
                new_entries.push(e.name.clone());
                continue;
            };
            let before: Vec<_> = base
                .sections
                .iter()
                .map(BaselineSection::measured)
                .collect();
            let after: Vec<_> = e
                .sections
                .iter()
                .map(|s| {
                    let m = Measure::new(s.count, s.total_cycles as f64);
                    (s.path.clone(), s.names.last().cloned(), m)
                })
                .collect();
            entries.push(EntryChanges {
                entry: e.name.clone(),
                changes: gate::compare(&before, &after),
            });
        }
        let gone_entries = baseline
            .entries
            .iter()
            .filter(|b| !report.manifest_entries.contains(&b.name))
            .map(|b| b.name.clone())
            .collect();
        Comparison {
            baseline: file.to_owned(),
            tolerance,
            entries,
            new_entries,
            gone_entries,
        }
    }

    /// The sections that grew past the tolerance, by entry.
    pub fn over(&self) -> impl Iterator<Item = (&str, &Change)> + '_ {
        self.changed().filter(|(_, c)| c.over(self.tolerance))
    }

    /// Every section that changed (grew, shrank, appeared or vanished).
    pub fn changed(&self) -> impl Iterator<Item = (&str, &Change)> + '_ {
        self.entries.iter().flat_map(|e| {
            e.changes
                .iter()
                .filter(|c| c.status() != gate::Status::Same)
                .map(move |c| (e.entry.as_str(), c))
        })
    }

    /// The entry's sections past the tolerance, as failure messages.
    pub fn failures_of(&self, entry: &str) -> Vec<String> {
        self.over()
            .filter(|(e, _)| *e == entry)
            .map(|(_, c)| {
                format!(
                    "section {}: {} grew past {}%",
                    c.label(),
                    c.numbers("cycles"),
                    arpsim::tools::number(self.tolerance)
                )
            })
            .collect()
    }

    pub fn passed(&self) -> bool {
        self.over().next().is_none()
    }

    /// What the terminal shows: the verdict, the sections past the
    /// tolerance, and those that appeared or vanished.
    pub fn to_text(&self) -> String {
        let compared: usize = self.entries.iter().map(|e| e.changes.len()).sum();
        let over = self.over().count();
        let mut out = format!(
            "baseline {}, tolerance {}%: {compared} section(s) compared, {} changed, {over} grew past the tolerance\n",
            self.baseline.display(),
            arpsim::tools::number(self.tolerance),
            self.changed().count(),
        );
        for (entry, c) in self.changed() {
            let what = match c.status() {
                gate::Status::Appeared => "appeared".to_owned(),
                gate::Status::Vanished => "vanished".to_owned(),
                _ if c.over(self.tolerance) => "OVER".to_owned(),
                _ => continue,
            };
            out += &format!(
                "  {what:<8} {entry}: {} {}\n",
                c.label(),
                c.numbers("cycles")
            );
        }
        for e in &self.new_entries {
            out += &format!("  new entry {e} (not in the baseline)\n");
        }
        for e in &self.gone_entries {
            out += &format!("  entry {e} of the baseline is not in the manifest\n");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::result::EntryResult;
    use super::*;

    fn section(path: &[u16], name: &str, cycles: u64) -> SectionResult {
        SectionResult {
            path: path.to_vec(),
            functions: Vec::new(),
            names: vec![name.to_owned()],
            kind: "kernel".into(),
            count: 1,
            total_cycles: cycles,
            mean_cycles: cycles as f64,
            min_cycles: cycles,
            max_cycles: cycles,
            total_instructions: cycles / 2,
            share: 0.5,
            self_cycles: Some(cycles),
        }
    }

    fn report(kernel: u64) -> SuiteReport {
        let manifest = super::super::Manifest {
            file: "m.toml".into(),
            entries: Vec::new(),
            hash: "sha256:x".into(),
        };
        let entry = EntryResult {
            name: "fir".into(),
            passed: true,
            stop: "exit".into(),
            cycles: kernel + 100,
            sections: vec![section(&[1], "ato_kernel_fir", kernel)],
            ..EntryResult::default()
        };
        let mut r = SuiteReport::new(&manifest, None, vec![entry]);
        r.manifest_entries = vec!["fir".into()];
        r
    }

    #[test]
    fn a_baseline_round_trips_and_gates_with_the_numbers() {
        let old = Baseline::of(&report(12214));
        let text = old.to_json();
        assert!(
            !text.contains("seconds") && !text.contains("\"host\""),
            "{text}"
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("b.json");
        std::fs::write(&file, &text).unwrap();
        let read = Baseline::load(&file).unwrap();
        assert_eq!(
            read.entries[0].sections[0].name.as_deref(),
            Some("ato_kernel_fir")
        );

        let slower = Comparison::of(&report(29592), &read, &file, 0.0);
        assert!(!slower.passed());
        assert_eq!(
            slower.failures_of("fir"),
            ["section 1 ato_kernel_fir: 12214 -> 29592 cycles (+17378, +142.3%) grew past 0%"]
        );
        assert!(Comparison::of(&report(29592), &read, &file, 150.0).passed());
        assert!(Comparison::of(&report(12214), &read, &file, 0.0).passed());
        assert!(Comparison::of(&report(12000), &read, &file, 0.0).passed());
    }

    #[test]
    fn a_suite_result_is_a_baseline_too_and_other_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("r.json");
        std::fs::write(&file, report(5).to_json()).unwrap();
        assert_eq!(
            Baseline::load(&file).unwrap().entries[0].sections[0].total_cycles,
            5
        );
        std::fs::write(&file, "{\"entries\": []}").unwrap();
        let e = Baseline::load(&file).unwrap_err().to_string();
        assert!(
            e.contains("r.json: not a suite result") && e.contains("--write-baseline"),
            "{e}"
        );
    }

    #[test]
    fn a_malformed_baseline_is_an_error_naming_the_file_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("b.json");
        let good = Baseline::of(&report(7)).to_json();
        for (bad, says) in [
            (
                good.replace("\"total_cycles\": 7", "\"total_cycles\": \"7\""),
                "invalid type: string \"7\", expected u64 at line ",
            ),
            (
                good.replace("\"count\": 1,", ""),
                "missing field `count` at line ",
            ),
            (
                good.replace("\"entries\"", "\"entry\""),
                "missing field `entries`",
            ),
            (good[..good.len() / 2].to_owned(), "EOF while parsing"),
        ] {
            assert_ne!(bad, good);
            std::fs::write(&file, &bad).unwrap();
            let e = Baseline::load(&file).unwrap_err().to_string();
            assert!(e.contains("b.json") && e.contains(says), "{says}: {e}");
        }
    }
}
