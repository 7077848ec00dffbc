//! The suite's long-format CSV (`--long-csv`, issue 45): one row per entry
//! and section, each figure in a column of its own, so a spreadsheet or a
//! data-frame library reads it without splitting cells (the `--csv` form
//! packs every section of an entry into one cell, and stays as it was).
//!
//! Each entry has first a row for its whole run (`section_path` empty,
//! `kind` `run`), then one per section trace, in the report's order. The
//! time columns are the cycles at the entry's `clock_hz` (the manifest's,
//! else the target's); they are empty when no single clock applies (the
//! run changed its clock and the manifest names none). `self_cycles` is
//! the section's own task's cycles less those of the sections nested in
//! it; empty for the whole-run row, and for results older than schema
//! version 5, which did not keep it. An entry that did not run has its
//! whole-run row only, with its numbers empty.

use super::result::{csv_field, EntryResult, SectionResult, SuiteReport};

/// The header: the columns, in order.
pub const HEADER: &str = "entry,target,cores,clock_hz,status,section_path,section,kind,count,\
inclusive_cycles,self_cycles,mean_cycles,min_cycles,max_cycles,instructions,\
inclusive_seconds,self_seconds,mean_seconds\n";

/// The long CSV of `report`.
pub fn long_csv(report: &SuiteReport) -> String {
    let mut out = String::from(HEADER);
    for e in &report.entries {
        out += &line(&run_row(e));
        for s in &e.sections {
            out += &line(&section_row(e, s));
        }
    }
    out
}

fn line(fields: &[String]) -> String {
    let quoted: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
    quoted.join(",") + "\n"
}

/// The columns every row of `e` starts with: entry, target, cores,
/// clock_hz, status.
fn entry_columns(e: &EntryResult) -> Vec<String> {
    vec![
        e.name.clone(),
        e.target.clone(),
        e.cores.map_or(String::new(), |c| c.to_string()),
        e.clock_hz.map_or(String::new(), |c| c.to_string()),
        if e.passed { "pass" } else { "fail" }.into(),
    ]
}

/// `cycles` in seconds at the entry's clock (empty without one).
fn seconds(e: &EntryResult, cycles: Option<f64>) -> String {
    match (e.clock_hz.filter(|&c| c > 0), cycles) {
        (Some(hz), Some(c)) if c.is_finite() => format!("{:e}", c / hz as f64),
        _ => String::new(),
    }
}

/// A finite number as Rust prints it (`3718153.25`, `4482`); empty else.
fn number(v: f64) -> String {
    if v.is_finite() {
        v.to_string()
    } else {
        String::new()
    }
}

fn run_row(e: &EntryResult) -> Vec<String> {
    let mut row = entry_columns(e);
    row.extend(["".into(), "(whole run)".into(), "run".into()]);
    if e.stop == "not_run" {
        row.extend(std::iter::repeat_n(String::new(), 10));
        return row;
    }
    let cycles = e.cycles.to_string();
    row.extend([
        "1".into(),
        cycles.clone(),
        String::new(),
        cycles.clone(),
        cycles.clone(),
        cycles,
        e.instructions.to_string(),
        seconds(e, Some(e.cycles as f64)),
        String::new(),
        seconds(e, Some(e.cycles as f64)),
    ]);
    row
}

fn section_row(e: &EntryResult, s: &SectionResult) -> Vec<String> {
    let path: Vec<String> = s.path.iter().map(u16::to_string).collect();
    let mut row = entry_columns(e);
    row.extend([
        path.join("/"),
        s.names.last().cloned().unwrap_or_default(),
        s.kind.clone(),
        s.count.to_string(),
        s.total_cycles.to_string(),
        s.self_cycles.map_or(String::new(), |c| c.to_string()),
        number(s.mean_cycles),
        s.min_cycles.to_string(),
        s.max_cycles.to_string(),
        s.total_instructions.to_string(),
        seconds(e, Some(s.total_cycles as f64)),
        seconds(e, s.self_cycles.map(|c| c as f64)),
        seconds(e, Some(s.mean_cycles)),
    ]);
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(path: &[u16], name: &str, total: u64, own: Option<u64>) -> SectionResult {
        SectionResult {
            path: path.to_vec(),
            functions: vec![None; path.len()],
            names: vec![name.to_owned(); path.len()],
            kind: "kernel".into(),
            count: 4,
            total_cycles: total,
            mean_cycles: total as f64 / 4.0,
            min_cycles: 1,
            max_cycles: total,
            total_instructions: 7,
            share: 0.0,
            self_cycles: own,
        }
    }

    fn report(entries: Vec<EntryResult>) -> SuiteReport {
        SuiteReport {
            schema_version: super::super::SCHEMA_VERSION,
            manifest: "m.toml".into(),
            manifest_hash: String::new(),
            shard: None,
            manifest_entries: entries.iter().map(|e| e.name.clone()).collect(),
            passed: 0,
            failed: 0,
            interrupted_by: None,
            entries,
            host: Default::default(),
        }
    }

    fn entry(clock_hz: Option<u64>) -> EntryResult {
        EntryResult {
            name: "k,1".into(),
            target: "cortex-m4".into(),
            passed: true,
            stop: "exit".into(),
            cycles: 1000,
            instructions: 900,
            clock_hz,
            sections: vec![
                section(&[8], "main (a.c:3)", 500, Some(100)),
                section(&[8, 1], "ato_kernel_x", 400, None),
            ],
            ..EntryResult::default()
        }
    }

    /// Every row has the header's column count; one row for the run and
    /// one per section; times are cycles over the clock (500 / 1000 Hz =
    /// 0.5 s, a mean of 125 cycles = 0.125 s); a name with a comma is
    /// quoted.
    #[test]
    fn one_row_per_section_with_times_at_the_clock() {
        let text = long_csv(&report(vec![entry(Some(1000))]));
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows.len(), 4, "{text}");
        assert_eq!(
            rows[1],
            "\"k,1\",cortex-m4,,1000,pass,,(whole run),run,1,1000,,1000,1000,1000,900,1e0,,1e0"
        );
        assert_eq!(
            rows[2],
            "\"k,1\",cortex-m4,,1000,pass,8,main (a.c:3),kernel,4,500,100,125,1,500,7,5e-1,1e-1,1.25e-1"
        );
        // no self cycles kept (an older result): the cell is empty, not 0
        assert!(rows[3].contains(",8/1,ato_kernel_x,kernel,4,400,,100,1,400,7,4e-1,,1e-1"));
    }

    #[test]
    fn without_a_clock_the_time_columns_are_empty() {
        let text = long_csv(&report(vec![entry(None)]));
        let row = text.lines().nth(2).unwrap();
        assert!(row.ends_with(",500,7,,,"), "{row}");
    }

    #[test]
    fn an_entry_that_did_not_run_has_its_run_row_only_and_no_numbers() {
        let mut e = entry(Some(1000));
        e.stop = "not_run".into();
        e.passed = false;
        e.sections.clear();
        let text = long_csv(&report(vec![e]));
        assert_eq!(
            text.lines().nth(1).unwrap(),
            "\"k,1\",cortex-m4,,1000,fail,,(whole run),run,,,,,,,,,,"
        );
        assert_eq!(text.lines().count(), 2);
    }
}
