//! Test suites: a TOML manifest lists guest runs (ELF, target, arguments,
//! expected output and exit status); [`run`] runs them in parallel on the
//! host's cores and [`SuiteReport`] is the combined report (table, JSON,
//! CSV).
//!
//! Each entry runs [`machine::run`] in a host thread of this process:
//! Unicorn engines are independent, the results arrive typed (no child
//! report to parse), and there is no process start per entry. The price is
//! isolation: a Rust panic in an entry is caught and fails only that entry,
//! but a crash inside Unicorn's C code would end the whole suite.
//!
//! ```toml
//! [[entry]]
//! name = "filter"                      # unique; defaults to the ELF's stem
//! elf = "../target/guests/cortex-m4/filter.elf"   # relative to the manifest
//! target = "cortex-m4"                 # a built-in target
//! args = []                            # guest arguments
//! expected_output = "../guest-shim/examples/filter/expected-output.txt"
//! exit_code = 0                        # default 0
//! cores = 2                            # optional
//! mode = "record_average"              # optional ARP mode
//! max_cycles = 100000000               # optional
//! timeout = 60.0                       # optional, seconds of host time
//! ```

use crate::arp_host::ArpOptions;
use crate::elf::GuestImage;
use crate::machine::{self, RunOptions, Stop};
use crate::report::{Report, SectionRow};
use crate::signals::StopRequest;
use arpsim::types::Mode;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Exit statuses of runs that did not exit: the same as `sim-host run`.
pub const EXIT_FAULT: i32 = 120;
pub const EXIT_ARP_ERROR: i32 = 121;
pub const EXIT_CYCLE_LIMIT: i32 = 122;
pub const EXIT_TIMEOUT: i32 = 123;

#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("{file}: cannot read: {source}")]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    Syntax { file: PathBuf, message: String },
    #[error("{file}: entry {index} ({name}): {message}")]
    Entry {
        file: PathBuf,
        index: usize,
        name: String,
        message: String,
    },
    #[error("{file}: entry {index} ({name}): field `{field}`: {message}")]
    Field {
        file: PathBuf,
        index: usize,
        name: String,
        field: &'static str,
        message: String,
    },
    #[error("{file}: no entries (expected [[entry]] tables)")]
    Empty { file: PathBuf },
    #[error("{file}: cannot write: {source}")]
    Write {
        file: PathBuf,
        source: std::io::Error,
    },
}

/// The manifest as written (the format).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestFile {
    #[serde(default)]
    entry: Vec<EntryFile>,
}

/// The entries of a manifest; a field error names the entry (number and
/// name, from a loose second parse) and the line.
fn parse_entries(text: &str, file: &Path) -> Result<Vec<EntryFile>, SuiteError> {
    let e = match toml::from_str::<ManifestFile>(text) {
        Ok(m) => return Ok(m.entry),
        Err(e) => e,
    };
    let syntax = || SuiteError::Syntax {
        file: file.to_owned(),
        message: e.to_string().trim_end().to_owned(),
    };
    let Some(span) = e.span() else {
        return Err(syntax());
    };
    let upto = &text[..span.end.min(text.len())];
    let index = upto
        .lines()
        .filter(|l| l.trim_start().starts_with("[[entry]]"))
        .count();
    let Some(loose) = toml::from_str::<toml::Table>(text).ok().and_then(|t| {
        t.get("entry")?
            .as_array()?
            .get(index.checked_sub(1)?)
            .cloned()
    }) else {
        return Err(syntax());
    };
    let label = ["name", "elf"]
        .iter()
        .find_map(|k| loose.get(k)?.as_str().map(str::to_owned))
        .unwrap_or_else(|| "unnamed".to_owned());
    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
    let source = text.lines().nth(line - 1).unwrap_or("").trim();
    Err(SuiteError::Entry {
        file: file.to_owned(),
        index,
        name: label,
        message: format!("line {line} `{source}`: {}", e.message()),
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryFile {
    name: Option<String>,
    elf: PathBuf,
    target: String,
    #[serde(default)]
    args: Vec<String>,
    expected_output: Option<PathBuf>,
    exit_code: Option<i32>,
    cores: Option<usize>,
    mode: Option<String>,
    max_cycles: Option<u64>,
    timeout: Option<f64>,
}

/// One validated entry.
#[derive(Debug, Clone)]
pub struct Entry {
    pub index: usize,
    pub name: String,
    pub elf: PathBuf,
    pub target: String,
    pub args: Vec<String>,
    pub expected_output: Option<Vec<u8>>,
    pub exit_code: i32,
    pub cores: Option<usize>,
    pub mode: Option<Mode>,
    pub max_cycles: Option<u64>,
    pub timeout: Option<Duration>,
}

/// A parsed and checked manifest.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub file: PathBuf,
    pub entries: Vec<Entry>,
}

fn parse_mode(s: &str) -> Option<Mode> {
    Some(match s {
        "record_average" | "average" => Mode::RecordAverage,
        "record_all" | "all" => Mode::RecordAll,
        "record_histogram" | "histogram" => Mode::RecordHistogram,
        "playback" => Mode::Playback,
        _ => return None,
    })
}

impl Manifest {
    pub fn load(path: &Path) -> Result<Manifest, SuiteError> {
        let text = std::fs::read_to_string(path).map_err(|source| SuiteError::Read {
            file: path.to_owned(),
            source,
        })?;
        Manifest::parse(&text, path)
    }

    /// Parses `text` (the manifest at `path`: relative paths are resolved
    /// against its folder) and checks targets and files exist.
    pub fn parse(text: &str, path: &Path) -> Result<Manifest, SuiteError> {
        let file = path.to_owned();
        let raw = parse_entries(text, &file)?;
        if raw.is_empty() {
            return Err(SuiteError::Empty { file });
        }
        let base = path.parent().unwrap_or(Path::new("."));
        let mut entries = Vec::new();
        let mut names = std::collections::HashSet::new();
        for (i, e) in raw.into_iter().enumerate() {
            let index = i + 1;
            let name = e.name.clone().unwrap_or_else(|| {
                e.elf
                    .file_stem()
                    .map_or("guest".into(), |s| s.to_string_lossy().into_owned())
            });
            let field = |field: &'static str, message: String| SuiteError::Field {
                file: file.clone(),
                index,
                name: name.clone(),
                field,
                message,
            };
            if !names.insert(name.clone()) {
                return Err(field("name", "another entry has this name".into()));
            }
            crate::target::builtin(&e.target).map_err(|err| field("target", err.to_string()))?;
            let elf = base.join(&e.elf);
            std::fs::File::open(&elf)
                .map_err(|err| field("elf", format!("{}: {err}", elf.display())))?;
            let expected_output = match &e.expected_output {
                None => None,
                Some(p) => {
                    let p = base.join(p);
                    Some(std::fs::read(&p).map_err(|err| {
                        field("expected_output", format!("{}: {err}", p.display()))
                    })?)
                }
            };
            if let Some(c) = e
                .cores
                .filter(|c| !(1..=crate::machine::MAX_CORES).contains(c))
            {
                let max = crate::machine::MAX_CORES;
                return Err(field(
                    "cores",
                    format!("{c}: expected 1 to {max} simulated cores"),
                ));
            }
            let mode = match &e.mode {
                None => None,
                Some(m) => Some(parse_mode(m).ok_or_else(|| {
                    field(
                        "mode",
                        format!("`{m}`: expected record_average, record_all, record_histogram or playback"),
                    )
                })?),
            };
            let timeout = e
                .timeout
                .map(crate::machine::timeout_from_seconds)
                .transpose()
                .map_err(|m| field("timeout", m))?;
            entries.push(Entry {
                index,
                name,
                elf,
                target: e.target,
                args: e.args,
                expected_output,
                exit_code: e.exit_code.unwrap_or(0),
                cores: e.cores,
                mode,
                max_cycles: e.max_cycles,
                timeout,
            });
        }
        Ok(Manifest { file, entries })
    }
}

/// The outcome of one entry.
#[derive(Debug, Serialize)]
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
    pub simulated_seconds: f64,
    pub host_seconds: f64,
    pub sections: Vec<SectionRow>,
}

fn exit_code(stop: &Stop) -> i32 {
    match stop {
        Stop::Exit(s) => *s,
        Stop::Fault(_) => EXIT_FAULT,
        Stop::Arp(_) => EXIT_ARP_ERROR,
        Stop::CycleLimit(_) => EXIT_CYCLE_LIMIT,
        Stop::Timeout(_) => EXIT_TIMEOUT,
        Stop::Interrupted(signal) => crate::signals::exit_status(*signal),
    }
}

fn failed(entry: &Entry, why: String) -> EntryResult {
    EntryResult {
        name: entry.name.clone(),
        elf: entry.elf.display().to_string(),
        target: entry.target.clone(),
        cores: entry.cores,
        passed: false,
        failures: vec![why],
        stop: "not_run".into(),
        exit_code: None,
        expected_exit_code: entry.exit_code,
        cycles: 0,
        instructions: 0,
        simulated_seconds: 0.0,
        host_seconds: 0.0,
        sections: Vec::new(),
    }
}

/// Runs one entry; `scratch` is a folder for its data.arp; `stop` ends it
/// at its next block boundary.
pub fn run_entry(entry: &Entry, scratch: &Path, stop: &StopRequest) -> EntryResult {
    let target = match crate::target::builtin(&entry.target) {
        Ok(t) => t,
        Err(e) => return failed(entry, e.to_string()),
    };
    let image = match GuestImage::load(&entry.elf, &target) {
        Ok(i) => i,
        Err(e) => return failed(entry, e.to_string()),
    };
    let program = entry
        .elf
        .file_name()
        .map_or("guest".into(), |n| n.to_string_lossy().into_owned());
    let cmdline = std::iter::once(program)
        .chain(entry.args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let options = RunOptions {
        max_cycles: entry.max_cycles,
        timeout: entry.timeout,
        cmdline,
        // entries run side by side: each keeps its own data.arp
        arp: ArpOptions {
            mode: entry.mode,
            file: Some(scratch.join(format!("{}-{}.arp", entry.index, entry.name))),
            ..Default::default()
        },
        cores: entry.cores,
        interrupt: Some(stop.flag()),
        ..Default::default()
    };
    let (name, clock) = (target.name.clone(), target.clock_hz);
    let outcome = match machine::run(image, target, options) {
        Ok(o) => o,
        Err(e) => return failed(entry, e.to_string()),
    };
    let report = Report::new(&outcome, &entry.elf.display().to_string(), &name, clock);
    let code = exit_code(&outcome.stop);
    let mut failures = Vec::new();
    if code != entry.exit_code {
        let how = match &outcome.stop {
            Stop::Exit(_) => String::new(),
            Stop::Fault(f) => format!(" (fault: {})", f.kind),
            other => format!(" ({other:?})"),
        };
        failures.push(format!(
            "exit status {code}{how}, expected {}",
            entry.exit_code
        ));
    }
    if let Some(expected) = &entry.expected_output {
        if &outcome.console != expected {
            failures.push(format!(
                "output differs from expected_output ({} bytes, expected {})",
                outcome.console.len(),
                expected.len()
            ));
        }
    }
    if let Some(p) = &report.playback {
        if !p.exact {
            failures.push("playback did not play every sample exactly once".into());
        }
    }
    EntryResult {
        name: entry.name.clone(),
        elf: entry.elf.display().to_string(),
        target: entry.target.clone(),
        cores: entry.cores,
        passed: failures.is_empty(),
        failures,
        stop: report.stop.reason.to_owned(),
        exit_code: Some(code),
        expected_exit_code: entry.exit_code,
        cycles: report.totals.cycles,
        instructions: report.totals.instructions,
        simulated_seconds: report.totals.simulated_seconds,
        host_seconds: report.totals.host_seconds,
        sections: report.sections,
    }
}

fn not_run_because(stop: &StopRequest) -> String {
    match stop.signal() {
        Some(s) => format!(
            "not run: the suite was interrupted by {}",
            crate::signals::name(s)
        ),
        None => "did not run".into(),
    }
}

/// The combined report.
#[derive(Debug, Serialize)]
pub struct SuiteReport {
    pub schema_version: u32,
    pub manifest: String,
    pub passed: usize,
    pub failed: usize,
    pub host_seconds: f64,
    /// The stop signal that ended the suite early (entries not started
    /// then are `not_run`), if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted_by: Option<String>,
    pub entries: Vec<EntryResult>,
}

/// Runs every entry on `jobs` host threads (at least 1); `progress` is
/// called after each entry with (done, total, the entry's result).
/// A stop request ends the running entries at their next block boundary
/// and starts no more.
pub fn run(
    manifest: &Manifest,
    jobs: usize,
    stop: &StopRequest,
    progress: &(dyn Fn(usize, usize, &EntryResult) + Sync),
) -> SuiteReport {
    let started = Instant::now();
    // Entries' data.arp files live here until the suite ends; registered so
    // that an exit on a second signal removes it too.
    let scratch_dir = tempfile::Builder::new().prefix("sim-host-suite-").tempdir();
    let scratch_ok = scratch_dir.is_ok();
    let scratch = scratch_dir
        .as_ref()
        .map_or_else(|_| std::env::temp_dir(), |d| d.path().to_path_buf());
    arpsim::output::register_temporary(&scratch);
    let total = manifest.entries.len();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<EntryResult>>> = Mutex::new((0..total).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, total.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(entry) = manifest.entries.get(i) else {
                    break;
                };
                if stop.signal().is_some() {
                    break;
                }
                let result = if scratch_ok {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        run_entry(entry, &scratch, stop)
                    }))
                    .unwrap_or_else(|panic| {
                        let what = panic
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                            .unwrap_or_default();
                        failed(entry, format!("sim-host panicked: {what}"))
                    })
                } else {
                    failed(entry, format!("cannot create {}", scratch.display()))
                };
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                progress(n, total, &result);
                if let Ok(mut r) = results.lock() {
                    r[i] = Some(result);
                }
            });
        }
    });
    arpsim::output::unregister_temporary(&scratch);
    drop(scratch_dir);
    let entries: Vec<EntryResult> = results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .zip(&manifest.entries)
        .map(|(r, e)| r.unwrap_or_else(|| failed(e, not_run_because(stop))))
        .collect();
    let passed = entries.iter().filter(|e| e.passed).count();
    SuiteReport {
        schema_version: 1,
        manifest: manifest.file.display().to_string(),
        passed,
        failed: entries.len() - passed,
        host_seconds: started.elapsed().as_secs_f64(),
        interrupted_by: stop.signal().map(crate::signals::name),
        entries,
    }
}

/// "8/7=1234;8=5678": each section trace's total cycles.
fn section_totals(sections: &[SectionRow]) -> String {
    sections
        .iter()
        .map(|s| {
            let path: Vec<String> = s.path.iter().map(u16::to_string).collect();
            format!("{}={}", path.join("/"), s.total_cycles)
        })
        .collect::<Vec<_>>()
        .join(";")
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

impl SuiteReport {
    pub fn all_passed(&self) -> bool {
        self.failed == 0
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
            for f in &e.failures {
                out += &format!("{:<width$}    {f}\n", "");
            }
        }
        out += &format!(
            "{} passed, {} failed ({:.2} s)\n",
            self.passed, self.failed, self.host_seconds
        );
        out
    }

    /// One line per entry; sections as `path=cycles` joined by `;`.
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "name,target,cores,status,exit_code,expected_exit_code,stop,cycles,instructions,simulated_seconds,host_seconds,section_cycles,failures\n",
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

/// Writes a report file (atomically, never over a device: see
/// `arpsim::output`).
pub fn write_output(path: &Path, text: &str) -> Result<(), SuiteError> {
    arpsim::output::write(path, text).map_err(|source| SuiteError::Write {
        file: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        Manifest::parse(text, Path::new("/nonexistent/m.toml"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn errors_name_entry_and_field() {
        let e = err("[[entry]]\nname = \"a\"\ntarget = \"cortex-m4\"\n");
        assert!(e.contains("entry 1 (a)") && e.contains("elf"), "{e}");
        let e =
            err("[[entry]]\nname = \"b\"\nelf = \"x.elf\"\ntarget = \"cortex-m4\"\ncolour = 1\n");
        assert!(e.contains("entry 1 (b)") && e.contains("colour"), "{e}");
        let e = err("[[entry]]\nname = \"c\"\nelf = \"x.elf\"\ntarget = \"cortex-m99\"\n");
        assert!(e.contains("entry 1 (c): field `target`"), "{e}");
        let e = err("[[entry]]\nname = \"d\"\nelf = \"x.elf\"\ntarget = \"cortex-m4\"\n");
        assert!(e.contains("entry 1 (d): field `elf`"), "{e}");
        let e = err("title = 1\n");
        assert!(e.contains("title"), "{e}");
        let e = err("");
        assert!(e.contains("no entries"), "{e}");
    }

    #[test]
    fn csv_quotes() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("a\"b"), "\"a\"\"b\"");
        assert_eq!(csv_field("ab"), "ab");
    }
}
