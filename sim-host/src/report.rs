//! The end-of-run report: a table per section trace and the run's totals,
//! as text for people and as JSON for tools.
//!
//! The JSON document is versioned (`schema_version`); fields are only ever
//! added, so readers of an older version keep working. Schema (version 1):
//!
//! ```text
//! {
//!   "schema_version": 1,
//!   "elf": string, "target": string, "clock_hz": integer,
//!   "stop": { "reason": "exit"|"fault"|"cycle_limit"|"timeout"|"interrupted"|"arp_error",
//!             "exit_status"?: integer, "message"?: string },
//!   "totals": { "instructions": integer, "cycles": integer, "cpi": number,
//!               "simulated_seconds": number, "host_seconds": number, "mips": number },
//!   "sections": [ { "path": [sid...], "functions": [name|null...], "kind": "plain"|"kernel"|"profiled",
//!                   "count": integer, "total_cycles": integer, "mean_cycles": number,
//!                   "min_cycles": integer, "max_cycles": integer, "total_instructions": integer,
//!                   "share": number } ],
//!   "arp_file": null | { "path": string, "records": integer, "partial": bool },
//!   "warnings": [string]
//! }
//! ```

use crate::arp_host::TraceStats;
use crate::machine::{RunOutcome, Stop};
use serde::Serialize;
use std::fmt::Write as _;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub elf: String,
    pub target: String,
    pub clock_hz: u64,
    pub stop: StopJson,
    pub totals: Totals,
    pub sections: Vec<SectionRow>,
    pub arp_file: Option<ArpFileJson>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct StopJson {
    pub reason: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Totals {
    pub instructions: u64,
    pub cycles: u64,
    pub cpi: f64,
    pub simulated_seconds: f64,
    pub host_seconds: f64,
    pub mips: f64,
}

#[derive(Debug, Serialize)]
pub struct SectionRow {
    pub path: Vec<u16>,
    pub functions: Vec<Option<String>>,
    pub kind: &'static str,
    pub count: u64,
    pub total_cycles: u64,
    pub mean_cycles: f64,
    pub min_cycles: u64,
    pub max_cycles: u64,
    pub total_instructions: u64,
    /// Fraction of the program's cycles.
    pub share: f64,
}

#[derive(Debug, Serialize)]
pub struct ArpFileJson {
    pub path: String,
    pub records: u64,
    pub partial: bool,
}

impl Report {
    pub fn new(outcome: &RunOutcome, elf: &str, target: &str, clock_hz: u64) -> Report {
        let (reason, exit_status, message) = match &outcome.stop {
            Stop::Exit(s) => ("exit", Some(*s), None),
            Stop::Fault(f) => ("fault", None, Some(f.to_string())),
            Stop::CycleLimit(n) => (
                "cycle_limit",
                None,
                Some(format!("stopped after {n} cycles")),
            ),
            Stop::Timeout(t) => (
                "timeout",
                None,
                Some(format!("stopped after {:.1} s", t.as_secs_f64())),
            ),
            Stop::Interrupted => ("interrupted", None, Some("interrupted (Ctrl-C)".into())),
            Stop::Arp(m) => ("arp_error", None, Some(m.clone())),
        };
        let host_seconds = outcome.host_time.as_secs_f64();
        let cycles = outcome.cycles;
        let sections = outcome
            .sections
            .iter()
            .map(|t: &TraceStats| SectionRow {
                path: t.path.clone(),
                functions: t.functions.clone(),
                kind: t.kind,
                count: t.count,
                total_cycles: t.total_cycles,
                mean_cycles: t.total_cycles as f64 / t.count.max(1) as f64,
                min_cycles: if t.count == 0 { 0 } else { t.min_cycles },
                max_cycles: t.max_cycles,
                total_instructions: t.total_instructions,
                share: t.total_cycles as f64 / cycles.max(1) as f64,
            })
            .collect();
        Report {
            schema_version: SCHEMA_VERSION,
            elf: elf.to_owned(),
            target: target.to_owned(),
            clock_hz,
            stop: StopJson {
                reason,
                exit_status,
                message,
            },
            totals: Totals {
                instructions: outcome.instructions,
                cycles,
                cpi: cycles as f64 / outcome.instructions.max(1) as f64,
                simulated_seconds: cycles as f64 / clock_hz as f64,
                host_seconds,
                mips: outcome.instructions as f64 / host_seconds.max(1e-9) / 1e6,
            },
            sections,
            arp_file: outcome
                .arp_file
                .as_ref()
                .map(|(p, records, partial)| ArpFileJson {
                    path: p.display().to_string(),
                    records: *records,
                    partial: *partial,
                }),
            warnings: outcome.warnings.clone(),
        }
    }

    /// The report as a table for a terminal.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if !self.sections.is_empty() {
            let paths: Vec<String> = self
                .sections
                .iter()
                .map(|s| {
                    s.path
                        .iter()
                        .zip(&s.functions)
                        .map(|(sid, f)| match f {
                            Some(f) => format!("{sid}({f})"),
                            None => sid.to_string(),
                        })
                        .collect::<Vec<_>>()
                        .join(" > ")
                })
                .collect();
            let width = paths.iter().map(String::len).max().unwrap_or(0).max(12);
            let _ = writeln!(
                out,
                "{:<width$}  {:<8} {:>8} {:>14} {:>12} {:>10} {:>10} {:>7}",
                "section trace", "kind", "count", "total cycles", "mean", "min", "max", "share"
            );
            for (row, path) in self.sections.iter().zip(&paths) {
                let _ = writeln!(
                    out,
                    "{:<width$}  {:<8} {:>8} {:>14} {:>12.1} {:>10} {:>10} {:>6.2}%",
                    path,
                    row.kind,
                    row.count,
                    row.total_cycles,
                    row.mean_cycles,
                    row.min_cycles,
                    row.max_cycles,
                    row.share * 100.0
                );
            }
            out.push('\n');
        }
        let t = &self.totals;
        let _ = writeln!(
            out,
            "{} instructions, {} cycles, CPI {:.3}, {:.6} s at {} MHz",
            t.instructions,
            t.cycles,
            t.cpi,
            t.simulated_seconds,
            self.clock_hz as f64 / 1e6
        );
        let _ = writeln!(out, "host time {:.3} s, {:.1} MIPS", t.host_seconds, t.mips);
        if let Some(f) = &self.arp_file {
            let _ = writeln!(
                out,
                "{} records written to {}{}",
                f.records,
                f.path,
                if f.partial { " (partial)" } else { "" }
            );
        }
        for w in &self.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        out
    }
}
