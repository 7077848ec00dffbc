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
//!
//! [[entry]]                            # one entry per combination:
//! elf = "../target/guests/{target}/filter.elf"    # see `matrix`
//! matrix = { target = ["cortex-m0", "rv32imac"], args = [["1024"], ["4096"]], cores = [1, 2] }
//! ```
//!
//! Matrices are expanded by `suite/matrix.rs` (names such as
//! `filter.target=cortex-m0.args=1024.cores=2`); [`shard`] splits the
//! expanded manifest into balanced parts and [`merge`] puts their results
//! back together.
//!
//! The result (JSON, `schema_version` 2; version 1 had no `manifest_hash`,
//! `shard`, `manifest_entries` or `host`, and kept `host_seconds` in each
//! entry) keeps everything that depends on the host's speed under its last
//! key, `host`: the rest is the same, byte for byte, for the same manifest
//! and guests whether it ran whole, with any `-j`, or in shards merged.
//! `manifest_hash` is the sha256 of the expanded entries' defining fields
//! (name, ELF and expected-output paths as written, i.e. relative to the
//! manifest's folder, the expected output's own sha256, target, args,
//! exit code, cores, mode, max_cycles, timeout): with relative paths, the
//! same on every machine that has the manifest, whatever folder it is in.
//! The ELFs' contents are not hashed (guests may be built on each machine).

use crate::arp_host::ArpOptions;
use crate::elf::GuestImage;
use crate::machine::{self, RunOptions, Stop};
use crate::report::{Report, SectionRow};
use crate::signals::StopRequest;
use arpsim::types::Mode;
use matrix::{EntryFile, EntrySpec};
use serde::{Deserialize, Deserializer, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod matrix;
pub mod merge;
pub mod shard;

pub use shard::{Shard, ShardInfo};

/// The version of the result's JSON form (see the module documentation).
pub const SCHEMA_VERSION: u32 = 2;

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
    #[error("{file}: not a suite result: {message}")]
    Corrupt { file: PathBuf, message: String },
    #[error("{file}: {message}")]
    Mismatch { file: PathBuf, message: String },
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

/// One validated entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its place in the expanded manifest, from 1.
    pub index: usize,
    /// The `[[entry]]` table it came from, from 1.
    pub table: usize,
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
    /// sha256 of the expanded entries (see the module documentation).
    pub hash: String,
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

/// The text of a manifest or result file, or the error naming it.
fn read_text(path: &Path) -> Result<String, SuiteError> {
    std::fs::read_to_string(path).map_err(|source| SuiteError::Read {
        file: path.to_owned(),
        source,
    })
}

/// A result file at `path` that is not what `sim-host suite` writes.
fn corrupt(path: &Path, message: String) -> SuiteError {
    SuiteError::Corrupt {
        file: path.to_owned(),
        message,
    }
}

impl Manifest {
    pub fn load(path: &Path) -> Result<Manifest, SuiteError> {
        Manifest::parse(&read_text(path)?, path)
    }

    /// Parses `text` (the manifest at `path`: relative paths are resolved
    /// against its folder) and checks targets and files exist.
    pub fn parse(text: &str, path: &Path) -> Result<Manifest, SuiteError> {
        let file = path.to_owned();
        let tables = parse_entries(text, &file)?;
        if tables.is_empty() {
            return Err(SuiteError::Empty { file });
        }
        let base = path.parent().unwrap_or(Path::new("."));
        let mut entries = Vec::new();
        let mut defining = Vec::new();
        let mut seen = Seen::default();
        for (i, table) in tables.into_iter().enumerate() {
            for spec in matrix::expand(table, i + 1, &file)? {
                let (entry, fields) = validate(spec, entries.len() + 1, base, &file)?;
                seen.check(&entry, &file)?;
                entries.push(entry);
                defining.push(fields);
            }
        }
        let hash = sha256_hex(
            serde_json::to_string(&defining)
                .unwrap_or_default()
                .as_bytes(),
        );
        Ok(Manifest {
            file,
            entries,
            hash,
        })
    }
}

/// Names and file names taken so far: both must be unique.
#[derive(Default)]
struct Seen {
    names: std::collections::HashSet<String>,
    files: HashMap<String, String>,
}

impl Seen {
    fn check(&mut self, entry: &Entry, file: &Path) -> Result<(), SuiteError> {
        let error = |message: String| SuiteError::Field {
            file: file.to_owned(),
            index: entry.table,
            name: entry.name.clone(),
            field: "name",
            message,
        };
        if !self.names.insert(entry.name.clone()) {
            return Err(error("another entry has this name".into()));
        }
        let stem = file_stem(&entry.name);
        if let Some(other) = self.files.insert(stem.clone(), entry.name.clone()) {
            return Err(error(format!(
                "its output files would be named `{stem}` like entry `{other}`'s"
            )));
        }
        Ok(())
    }
}

/// The name of an entry's output files in `--out DIR/entries`: its name
/// with anything but letters, digits and `._=+-` replaced by `_`.
pub fn file_stem(name: &str) -> String {
    let stem: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._=+-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.starts_with('.') || stem.is_empty() {
        format!("_{stem}")
    } else {
        stem
    }
}

/// `sha256:` and the hex digest of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// What the manifest hash covers of one entry.
#[derive(Serialize)]
struct Defining {
    name: String,
    elf: String,
    target: String,
    args: Vec<String>,
    expected_output: Option<String>,
    expected_output_sha256: Option<String>,
    exit_code: i32,
    cores: Option<usize>,
    mode: Option<&'static str>,
    max_cycles: Option<u64>,
    timeout: Option<f64>,
}

impl Defining {
    /// `written`: the ELF and expected-output paths and the timeout as
    /// the manifest has them.
    fn of(entry: &Entry, written: (String, Option<String>, Option<f64>)) -> Defining {
        let (elf, expected_output, timeout) = written;
        Defining {
            name: entry.name.clone(),
            elf,
            target: entry.target.clone(),
            args: entry.args.clone(),
            expected_output,
            expected_output_sha256: entry.expected_output.as_deref().map(sha256_hex),
            exit_code: entry.exit_code,
            cores: entry.cores,
            mode: entry.mode.map(mode_name),
            max_cycles: entry.max_cycles,
            timeout,
        }
    }
}

/// The manifest's name of a mode.
pub fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::RecordAverage => "record_average",
        Mode::RecordAll => "record_all",
        Mode::RecordHistogram => "record_histogram",
        Mode::Playback => "playback",
    }
}

/// Checks one expanded entry (number `index`) against the targets and the
/// files beside the manifest.
fn validate(
    spec: EntrySpec,
    index: usize,
    base: &Path,
    file: &Path,
) -> Result<(Entry, Defining), SuiteError> {
    let field = |field: &'static str, message: String| SuiteError::Field {
        file: file.to_owned(),
        index: spec.table,
        name: spec.name.clone(),
        field: spec.field(field),
        message,
    };
    let missing = |f: &'static str| {
        field(
            f,
            format!("missing field `{f}` (set it, or list it in `matrix`)"),
        )
    };
    let written_elf = spec.elf.clone().ok_or_else(|| missing("elf"))?;
    let target = spec.target.clone().ok_or_else(|| missing("target"))?;
    crate::target::builtin(&target).map_err(|err| field("target", err.to_string()))?;
    let elf = base.join(&written_elf);
    std::fs::File::open(&elf).map_err(|err| field("elf", format!("{}: {err}", elf.display())))?;
    let expected_output = match &spec.expected_output {
        None => None,
        Some(p) => {
            let p = base.join(p);
            let read = std::fs::read(&p);
            Some(read.map_err(|err| field("expected_output", format!("{}: {err}", p.display())))?)
        }
    };
    check_cores(spec.cores).map_err(|m| field("cores", m))?;
    let mode = spec.mode.as_deref().map(parse_mode_or_say).transpose();
    let mode = mode.map_err(|m| field("mode", m))?;
    let timeout = spec.timeout.map(crate::machine::timeout_from_seconds);
    let timeout = timeout.transpose().map_err(|m| field("timeout", m))?;
    let written = (written_elf, spec.expected_output.clone(), spec.timeout);
    let entry = Entry {
        index,
        table: spec.table,
        name: spec.name,
        elf,
        target,
        args: spec.args,
        expected_output,
        exit_code: spec.exit_code,
        cores: spec.cores,
        mode,
        max_cycles: spec.max_cycles,
        timeout,
    };
    let defining = Defining::of(&entry, written);
    Ok((entry, defining))
}

fn parse_mode_or_say(m: &str) -> Result<Mode, String> {
    parse_mode(m).ok_or_else(|| {
        format!("`{m}`: expected record_average, record_all, record_histogram or playback")
    })
}

fn check_cores(cores: Option<usize>) -> Result<(), String> {
    let max = crate::machine::MAX_CORES;
    match cores {
        Some(c) if !(1..=max).contains(&c) => {
            Err(format!("{c}: expected 1 to {max} simulated cores"))
        }
        _ => Ok(()),
    }
}

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
    #[serde(deserialize_with = "number_or_null")]
    pub simulated_seconds: f64,
    #[serde(skip)]
    pub host_seconds: f64,
    pub sections: Vec<SectionResult>,
}

/// A section row of an entry (`report::SectionRow`, readable back for
/// `suite merge`).
#[derive(Debug, Serialize, Deserialize)]
pub struct SectionResult {
    pub path: Vec<u16>,
    pub functions: Vec<Option<String>>,
    pub kind: String,
    pub count: u64,
    pub total_cycles: u64,
    #[serde(deserialize_with = "number_or_null")]
    pub mean_cycles: f64,
    pub min_cycles: u64,
    pub max_cycles: u64,
    pub total_instructions: u64,
    /// Fraction of the program's cycles.
    #[serde(deserialize_with = "number_or_null")]
    pub share: f64,
}

impl From<SectionRow> for SectionResult {
    fn from(r: SectionRow) -> SectionResult {
        SectionResult {
            path: r.path,
            functions: r.functions,
            kind: r.kind.to_owned(),
            count: r.count,
            total_cycles: r.total_cycles,
            mean_cycles: r.mean_cycles,
            min_cycles: r.min_cycles,
            max_cycles: r.max_cycles,
            total_instructions: r.total_instructions,
            share: r.share,
        }
    }
}

/// JSON has no NaN: serde_json writes it as `null`; read it back as NaN
/// so a merged result is written as its shard was.
fn number_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
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

/// Where an entry's files go.
#[derive(Debug, Clone)]
pub struct EntryFiles {
    /// Its data.arp.
    pub arp: PathBuf,
    /// Its report (JSON, as `sim-host run --json` writes it), if kept.
    pub report: Option<PathBuf>,
}

impl EntryFiles {
    /// In a scratch folder shared by the entries running side by side.
    pub fn scratch(entry: &Entry, scratch: &Path) -> EntryFiles {
        EntryFiles {
            arp: scratch.join(format!("{}-{}.arp", entry.index, file_stem(&entry.name))),
            report: None,
        }
    }

    /// Under stable names in `dir` (`--out DIR/entries`).
    pub fn kept(entry: &Entry, dir: &Path) -> EntryFiles {
        let stem = file_stem(&entry.name);
        EntryFiles {
            arp: dir.join(format!("{stem}.arp")),
            report: Some(dir.join(format!("{stem}.json"))),
        }
    }
}

/// Runs one entry; `scratch` is a folder for its data.arp; `stop` ends it
/// at its next block boundary.
pub fn run_entry(entry: &Entry, scratch: &Path, stop: &StopRequest) -> EntryResult {
    run_entry_into(entry, &EntryFiles::scratch(entry, scratch), stop)
}

fn cmdline(entry: &Entry) -> String {
    let program = entry
        .elf
        .file_name()
        .map_or("guest".into(), |n| n.to_string_lossy().into_owned());
    std::iter::once(program)
        .chain(entry.args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs one entry, writing its data.arp (and report) where `files` says.
pub fn run_entry_into(entry: &Entry, files: &EntryFiles, stop: &StopRequest) -> EntryResult {
    let target = match crate::target::builtin(&entry.target) {
        Ok(t) => t,
        Err(e) => return failed(entry, e.to_string()),
    };
    let image = match GuestImage::load(&entry.elf, &target) {
        Ok(i) => i,
        Err(e) => return failed(entry, e.to_string()),
    };
    let options = RunOptions {
        max_cycles: entry.max_cycles,
        timeout: entry.timeout,
        cmdline: cmdline(entry),
        // entries run side by side: each keeps its own data.arp
        arp: ArpOptions {
            mode: entry.mode,
            file: Some(files.arp.clone()),
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
    let mut failures = judge(entry, &outcome, &report);
    if let Some(path) = &files.report {
        let json = serde_json::to_string_pretty(&report).unwrap_or_default() + "\n";
        if let Err(e) = arpsim::output::write(path, json) {
            failures.push(format!("cannot write {}: {e}", path.display()));
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
        exit_code: Some(exit_code(&outcome.stop)),
        expected_exit_code: entry.exit_code,
        cycles: report.totals.cycles,
        instructions: report.totals.instructions,
        simulated_seconds: report.totals.simulated_seconds,
        host_seconds: report.totals.host_seconds,
        sections: report
            .sections
            .into_iter()
            .map(SectionResult::from)
            .collect(),
    }
}

/// Why a finished run did not pass (empty when it did).
fn judge(entry: &Entry, outcome: &machine::RunOutcome, report: &Report) -> Vec<String> {
    let code = exit_code(&outcome.stop);
    let mut failures = Vec::new();
    if code != entry.exit_code {
        let how = match &outcome.stop {
            Stop::Exit(_) => String::new(),
            Stop::Fault(f) => format!(" (fault: {})", f.kind),
            _ => report
                .stop
                .message
                .as_ref()
                .map_or_else(String::new, |m| format!(" ({m})")),
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
    failures
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

/// Which entries to run and where their files go.
#[derive(Debug, Clone, Default)]
pub struct RunPlan {
    /// Positions in `Manifest::entries` (from 0), in manifest order.
    pub selected: Vec<usize>,
    pub shard: Option<ShardInfo>,
    /// Keep each entry's data.arp and report here (`--out DIR/entries`).
    pub keep_in: Option<PathBuf>,
}

impl RunPlan {
    /// Every entry, files in a scratch folder.
    pub fn whole(manifest: &Manifest) -> RunPlan {
        RunPlan {
            selected: (0..manifest.entries.len()).collect(),
            ..Default::default()
        }
    }

    /// The entries of `shard`, split by `costs` (see [`shard`]).
    pub fn shard(shard: Shard, costs: &[u64]) -> RunPlan {
        // a count beyond usize leaves every shard past the entries empty
        let (index, count) = (
            usize::try_from(shard.index).unwrap_or(usize::MAX),
            usize::try_from(shard.count).unwrap_or(usize::MAX),
        );
        let plan = shard::plan(costs, count);
        RunPlan {
            selected: (0..plan.len()).filter(|&i| plan[i] == index).collect(),
            shard: Some(ShardInfo {
                index,
                count,
                plan: shard::plan_hash(&plan, count),
            }),
            keep_in: None,
        }
    }
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
    run_plan(manifest, &RunPlan::whole(manifest), jobs, stop, progress)
}

/// Like [`run`], for the entries `plan` selects.
pub fn run_plan(
    manifest: &Manifest,
    plan: &RunPlan,
    jobs: usize,
    stop: &StopRequest,
    progress: &(dyn Fn(usize, usize, &EntryResult) + Sync),
) -> SuiteReport {
    let started = Instant::now();
    // Entries' data.arp files live here until the suite ends (unless kept);
    // registered so that an exit on a second signal removes it too.
    let scratch_dir = tempfile::Builder::new().prefix("sim-host-suite-").tempdir();
    let scratch = scratch_dir
        .as_ref()
        .map_or_else(|_| std::env::temp_dir(), |d| d.path().to_path_buf());
    arpsim::output::register_temporary(&scratch);
    let files = |entry: &Entry| match (&plan.keep_in, &scratch_dir) {
        (Some(dir), _) => Ok(EntryFiles::kept(entry, dir)),
        (None, Ok(_)) => Ok(EntryFiles::scratch(entry, &scratch)),
        (None, Err(_)) => Err(format!("cannot create {}", scratch.display())),
    };
    let results = run_entries(manifest, plan, jobs, stop, progress, &files);
    arpsim::output::unregister_temporary(&scratch);
    drop(scratch_dir);
    let entries: Vec<EntryResult> = results
        .into_iter()
        .zip(&plan.selected)
        .map(|(r, &i)| r.unwrap_or_else(|| failed(&manifest.entries[i], not_run_because(stop))))
        .collect();
    let mut report = SuiteReport::new(manifest, plan.shard.clone(), entries);
    report.host.seconds = started.elapsed().as_secs_f64();
    report.interrupted_by = stop.signal().map(crate::signals::name);
    report
}

type FilesOf<'a> = dyn Fn(&Entry) -> Result<EntryFiles, String> + Sync + 'a;

/// The selected entries' results (`None`: not started), on `jobs` threads.
fn run_entries(
    manifest: &Manifest,
    plan: &RunPlan,
    jobs: usize,
    stop: &StopRequest,
    progress: &(dyn Fn(usize, usize, &EntryResult) + Sync),
    files: &FilesOf,
) -> Vec<Option<EntryResult>> {
    let total = plan.selected.len();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<EntryResult>>> = Mutex::new((0..total).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, total.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(entry) = plan.selected.get(i).and_then(|&p| manifest.entries.get(p))
                else {
                    break;
                };
                if stop.signal().is_some() {
                    break;
                }
                let result = match files(entry) {
                    Ok(f) => run_caught(entry, &f, stop),
                    Err(why) => failed(entry, why),
                };
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                progress(n, total, &result);
                if let Ok(mut r) = results.lock() {
                    r[i] = Some(result);
                }
            });
        }
    });
    results.into_inner().unwrap_or_else(|p| p.into_inner())
}

/// Runs an entry; a panic fails only this entry.
fn run_caught(entry: &Entry, files: &EntryFiles, stop: &StopRequest) -> EntryResult {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_entry_into(entry, files, stop)
    }))
    .unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default();
        failed(entry, format!("sim-host panicked: {what}"))
    })
}

/// "8/7=1234;8=5678": each section trace's total cycles.
fn section_totals(sections: &[SectionResult]) -> String {
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
            self.passed, self.failed, self.host.seconds
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

    /// A manifest in a fresh folder with a (dummy) ELF beside it.
    fn manifest_in(dir: &Path, text: &str) -> Result<Manifest, String> {
        for t in ["cortex-m0", "cortex-m4"] {
            std::fs::create_dir_all(dir.join("g").join(t)).unwrap();
            std::fs::write(dir.join("g").join(t).join("f.elf"), "").unwrap();
        }
        let path = dir.join("m.toml");
        std::fs::write(&path, text).unwrap();
        Manifest::load(&path).map_err(|e| e.to_string())
    }

    const MATRIX: &str = "[[entry]]\nelf = \"g/{target}/f.elf\"\n\
        matrix = { target = [\"cortex-m0\", \"cortex-m4\"], cores = [1, 2] }\n";

    #[test]
    fn the_manifest_hash_covers_the_entries_not_the_folder() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let ma = manifest_in(a.path(), MATRIX).unwrap();
        let mb = manifest_in(b.path(), MATRIX).unwrap();
        assert_eq!(ma.entries.len(), 4);
        assert_eq!(ma.entries[3].name, "f.target=cortex-m4.cores=2");
        assert_eq!(ma.entries[3].index, 4);
        assert_eq!(ma.entries[3].table, 1);
        assert!(
            ma.hash.starts_with("sha256:") && ma.hash.len() == 71,
            "{}",
            ma.hash
        );
        assert_eq!(ma.hash, mb.hash);
        let changed = manifest_in(b.path(), &MATRIX.replace("[1, 2]", "[1, 3]")).unwrap();
        assert_ne!(ma.hash, changed.hash);
        let with_args = manifest_in(b.path(), &format!("{MATRIX}args = [\"x\"]\n")).unwrap();
        assert_ne!(ma.hash, with_args.hash);
    }

    #[test]
    fn expanded_entries_are_checked_under_their_names() {
        let dir = tempfile::tempdir().unwrap();
        let e = manifest_in(dir.path(), &MATRIX.replace("[1, 2]", "[1, 9999]")).unwrap_err();
        assert!(
            e.contains("entry 1 (f.target=cortex-m0.cores=9999): field `matrix.cores`: 9999"),
            "{e}"
        );
        let e = manifest_in(dir.path(), &MATRIX.replace("cortex-m4", "cortex-m7")).unwrap_err();
        assert!(
            e.contains("(f.target=cortex-m7.cores=1): field `matrix.target`"),
            "{e}"
        );
        let e = manifest_in(dir.path(), "[[entry]]\nname = \"n\"\nelf = \"g/{target}/f.elf\"\nmatrix = { target = [\"cortex-m3\"] }\n").unwrap_err();
        assert!(
            e.contains("(n.target=cortex-m3): field `elf`: ") && e.contains("g/cortex-m3/f.elf"),
            "{e}"
        );
        let e = manifest_in(dir.path(), "[[entry]]\nelf = \"g/cortex-m0/f.elf\"\n").unwrap_err();
        assert!(
            e.contains("entry 1 (f): field `target`: missing field `target`"),
            "{e}"
        );
    }

    #[test]
    fn names_must_make_distinct_file_names() {
        let dir = tempfile::tempdir().unwrap();
        let entry = |name: &str| {
            format!("[[entry]]\nname = \"{name}\"\nelf = \"g/cortex-m0/f.elf\"\ntarget = \"cortex-m0\"\n")
        };
        let e = manifest_in(dir.path(), &(entry("a/b") + &entry("a b"))).unwrap_err();
        assert!(
            e.contains("entry 2 (a b): field `name`") && e.contains("`a_b`"),
            "{e}"
        );
        assert_eq!(file_stem("x.target=m0.args=1_2"), "x.target=m0.args=1_2");
        assert_eq!(file_stem("../up"), "_.._up");
        assert_eq!(file_stem(""), "_");
    }

    #[test]
    fn csv_quotes() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("a\"b"), "\"a\"\"b\"");
        assert_eq!(csv_field("ab"), "ab");
    }
}
