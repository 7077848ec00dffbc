//! The combined report of a suite and each entry's result (table, JSON,
//! CSV); everything but `host` is deterministic.

use super::manifest::Manifest;
use super::shard::ShardInfo;
use crate::observe::report::SectionRow;
use serde::{Deserialize, Deserializer, Serialize};

/// The version of the result's JSON form (see the module documentation).
pub const SCHEMA_VERSION: u32 = 5;

/// The outcome of one entry. Its host time is kept out of its JSON form
/// (it is under the report's `host`).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct EntryResult {
    pub name: String,
    pub elf: String,
    pub target: String,
    pub cores: Option<usize>,
    pub passed: bool,
    /// Why it failed (empty when it passed).
    pub failures: Vec<String>,
    /// How the run ended: exit, fault, cycle_limit, timeout, ...
    pub stop: String,
    pub exit_code: Option<i32>,
    pub expected_exit_code: i32,
    pub cycles: u64,
    pub instructions: u64,
    /// Seconds at `clock_hz` (the manifest's, else the target's: then
    /// following the run's clock changes, if any).
    #[serde(deserialize_with = "number_or_null")]
    pub simulated_seconds: f64,
    /// The clock its time columns are at: the entry's `clock_hz` in the
    /// manifest, else the target's; `None` when neither applies (the run
    /// changed its clock and the manifest names none, or it did not run).
    /// Added in schema version 5.
    #[serde(default)]
    pub clock_hz: Option<u64>,
    #[serde(skip)]
    pub host_seconds: f64,
    pub sections: Vec<SectionResult>,
    /// Its `budget`s, judged (absent when it has none). A budget over its
    /// limit fails the suite's cycle gate, not the entry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub budgets: Vec<super::budget::BudgetResult>,
}

impl EntryResult {
    /// Its budgets that failed, with the numbers.
    pub fn budget_failures(&self) -> impl Iterator<Item = String> + '_ {
        self.budgets.iter().filter_map(|b| b.failure())
    }
}

/// A section row of an entry (`report::SectionRow`, readable back for
/// `suite merge`).
#[derive(Debug, Serialize, Deserialize)]
pub struct SectionResult {
    pub path: Vec<u16>,
    pub functions: Vec<Option<String>>,
    /// Each section's name (its label, else where it is entered; absent
    /// from results before schema version 3).
    #[serde(default)]
    pub names: Vec<String>,
    pub kind: String,
    pub count: u64,
    pub total_cycles: u64,
    #[serde(deserialize_with = "number_or_null")]
    pub mean_cycles: f64,
    pub min_cycles: u64,
    pub max_cycles: u64,
    pub total_instructions: u64,
    /// The section's self cycles (without the sections nested in it and
    /// other RTOS tasks) as a fraction of the program's cycles, as the run
    /// report's `share`: the rows' shares never sum past 1.
    #[serde(deserialize_with = "number_or_null")]
    pub share: f64,
    /// Its self (exclusive) cycles: its own task's cycles less those of
    /// the sections nested in it (the run report's `self_cycles`; added in
    /// schema version 5, `None` in older results).
    #[serde(default)]
    pub self_cycles: Option<u64>,
}

impl From<SectionRow> for SectionResult {
    fn from(r: SectionRow) -> SectionResult {
        SectionResult {
            path: r.path,
            functions: r.functions,
            names: r.names,
            kind: r.kind.to_owned(),
            count: r.count,
            total_cycles: r.total_cycles,
            mean_cycles: r.mean_cycles,
            min_cycles: r.min_cycles,
            max_cycles: r.max_cycles,
            total_instructions: r.total_instructions,
            share: r.share,
            self_cycles: Some(r.self_cycles),
        }
    }
}

/// JSON has no NaN: serde_json writes it as `null`; read it back as NaN
/// so a merged result is written as its shard was.
pub(super) fn number_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// The combined report. Everything but `host` is deterministic.
#[derive(Debug, Serialize, Deserialize)]
pub struct SuiteReport {
    pub schema_version: u32,
    pub manifest: String,
    pub manifest_hash: String,
    /// The part of the manifest this result holds, when it is a shard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// The names of every entry of the expanded manifest, in order (also
    /// those of other shards): what `suite merge` checks against.
    pub manifest_entries: Vec<String>,
    pub passed: usize,
    pub failed: usize,
    /// The stop signal that ended the suite early (entries not started
    /// then are `not_run`), if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted_by: Option<String>,
    pub entries: Vec<EntryResult>,
    /// Host times: they differ from run to run.
    pub host: HostTimes,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct HostTimes {
    /// Wall-clock seconds of the run (of a merged result: the shards' sum).
    #[serde(deserialize_with = "number_or_null")]
    pub seconds: f64,
    /// Each entry's seconds, in the order of `entries`.
    pub entries: Vec<EntryTime>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct EntryTime {
    pub name: String,
    #[serde(deserialize_with = "number_or_null")]
    pub seconds: f64,
}

/// "8/7=1234;8=5678": each section trace's total cycles.
pub(super) fn section_totals(sections: &[SectionResult]) -> String {
    sections
        .iter()
        .map(|s| {
            let path: Vec<String> = s.path.iter().map(u16::to_string).collect();
            format!("{}={}", path.join("/"), s.total_cycles)
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// "8=main (filter.c:128);8/7/1=ato_kernel_x": each section trace's name
/// (its innermost section's).
pub(super) fn section_names(sections: &[SectionResult]) -> String {
    sections
        .iter()
        .map(|s| {
            let path: Vec<String> = s.path.iter().map(u16::to_string).collect();
            let name = s.names.last().map_or("", String::as_str);
            format!("{}={name}", path.join("/"))
        })
        .collect::<Vec<_>>()
        .join(";")
}

pub(super) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

impl SuiteReport {
    /// The report of `entries` (in manifest order) of `manifest`; host
    /// time 0 until the caller sets it.
    pub fn new(manifest: &Manifest, shard: Option<ShardInfo>, entries: Vec<EntryResult>) -> Self {
        let passed = entries.iter().filter(|e| e.passed).count();
        let times = entries
            .iter()
            .map(|e| EntryTime {
                name: e.name.clone(),
                seconds: e.host_seconds,
            })
            .collect();
        SuiteReport {
            schema_version: SCHEMA_VERSION,
            manifest: manifest.file.display().to_string(),
            manifest_hash: manifest.hash.clone(),
            shard,
            manifest_entries: manifest.entries.iter().map(|e| e.name.clone()).collect(),
            passed,
            failed: entries.len() - passed,
            interrupted_by: None,
            entries,
            host: HostTimes {
                seconds: 0.0,
                entries: times,
            },
        }
    }

    pub fn all_passed(&self) -> bool {
        self.failed == 0
    }

    /// Whether every budget of every entry held.
    pub fn budgets_held(&self) -> bool {
        self.entries
            .iter()
            .all(|e| e.budgets.iter().all(|b| b.passed))
    }

    /// The table printed on stdout.
    pub fn to_text(&self) -> String {
        let width = self
            .entries
            .iter()
            .map(|e| e.name.len())
            .max()
            .unwrap_or(4)
            .max(5);
        let mut out = format!(
            "{:<width$}  {:<6}  {:>4}  {:>14}  {:>14}  {:>12}  {:>8}  {}\n",
            "entry", "status", "exit", "cycles", "instructions", "sim time", "host s", "sections"
        );
        for e in &self.entries {
            let exit = e.exit_code.map_or("-".into(), |c| c.to_string());
            out += &format!(
                "{:<width$}  {:<6}  {:>4}  {:>14}  {:>14}  {:>10.3}ms  {:>8.2}  {}\n",
                e.name,
                if e.passed { "ok" } else { "FAIL" },
                exit,
                e.cycles,
                e.instructions,
                e.simulated_seconds * 1e3,
                e.host_seconds,
                section_totals(&e.sections),
            );
            for f in e.failures.iter().cloned().chain(e.budget_failures()) {
                out += &format!("{:<width$}    {f}\n", "");
            }
        }
        out += &format!(
            "{} passed, {} failed ({:.2} s)\n",
            self.passed, self.failed, self.host.seconds
        );
        out
    }

    /// One line per entry; sections as `path=cycles` joined by `;`, and
    /// their names as `path=name` (the last column, added in version 3).
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "name,target,cores,status,exit_code,expected_exit_code,stop,cycles,instructions,simulated_seconds,host_seconds,section_cycles,failures,section_names\n",
        );
        for e in &self.entries {
            let fields = [
                e.name.clone(),
                e.target.clone(),
                e.cores.map_or(String::new(), |c| c.to_string()),
                if e.passed { "pass" } else { "fail" }.into(),
                e.exit_code.map_or(String::new(), |c| c.to_string()),
                e.expected_exit_code.to_string(),
                e.stop.clone(),
                e.cycles.to_string(),
                e.instructions.to_string(),
                format!("{:e}", e.simulated_seconds),
                format!("{:.3}", e.host_seconds),
                section_totals(&e.sections),
                e.failures.join("; "),
                section_names(&e.sections),
            ];
            let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
            out += &line.join(",");
            out.push('\n');
        }
        out
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }
}
