//! Manifests: the TOML format, its validation (errors name the entry and
//! field), matrix expansion and the expanded entries' hash.

use super::error::{read_text, SuiteError};
use super::matrix::{self, EntryFile, EntrySpec};
use arpsim::types::Mode;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The manifest as written (the format).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ManifestFile {
    #[serde(default)]
    entry: Vec<EntryFile>,
}

/// The entries of a manifest; a field error names the entry (number and
/// name, from a loose second parse) and the line.
pub(super) fn parse_entries(text: &str, file: &Path) -> Result<Vec<EntryFile>, SuiteError> {
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
    /// The file `expected_output` was read from (an input no output may
    /// name).
    pub expected_output_file: Option<PathBuf>,
    pub exit_code: i32,
    pub cores: Option<usize>,
    pub mode: Option<Mode>,
    pub max_cycles: Option<u64>,
    pub timeout: Option<Duration>,
    /// The clock its time columns are at (`clock_hz`), if it names one:
    /// else the target's.
    pub clock_hz: Option<u64>,
    /// Cycle and instruction budgets of its sections (`budget`).
    pub budgets: Vec<super::budget::Budget>,
}

/// A parsed and checked manifest.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub file: PathBuf,
    pub entries: Vec<Entry>,
    /// sha256 of the expanded entries (see the module documentation).
    pub hash: String,
}

impl Manifest {
    pub fn load(path: &Path) -> Result<Manifest, SuiteError> {
        Manifest::parse(&read_text(path)?, path)
    }

    /// Every file a run of the manifest reads, each named as an error
    /// names it: the manifest, and each entry's ELF and expected output
    /// (issue 43, M04: no output may be one of them).
    pub fn inputs(&self) -> Vec<(String, PathBuf)> {
        let mut inputs = vec![("manifest".to_owned(), self.file.clone())];
        for e in &self.entries {
            inputs.push((format!("entry `{}` elf", e.name), e.elf.clone()));
            if let Some(p) = &e.expected_output_file {
                inputs.push((format!("entry `{}` expected_output", e.name), p.clone()));
            }
        }
        inputs
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
            let room = matrix::MAX_ENTRIES - entries.len();
            for spec in matrix::expand(table, i + 1, &file, room)? {
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
pub(super) struct Seen {
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
pub(super) struct Defining {
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
    /// Absent when not set, so manifests without it keep their hash.
    #[serde(skip_serializing_if = "Option::is_none")]
    clock_hz: Option<u64>,
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
            mode: entry.mode.map(Mode::name),
            max_cycles: entry.max_cycles,
            timeout,
            clock_hz: entry.clock_hz,
        }
    }
}

/// Checks one expanded entry (number `index`) against the targets and the
/// files beside the manifest.
pub(super) fn validate(
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
    crate::model::target::builtin(&target).map_err(|err| field("target", err.to_string()))?;
    let elf = base.join(&written_elf);
    std::fs::File::open(&elf).map_err(|err| field("elf", format!("{}: {err}", elf.display())))?;
    let expected_output_file = spec.expected_output.as_ref().map(|p| base.join(p));
    let expected_output = match &expected_output_file {
        None => None,
        Some(p) => {
            let read = arpsim::input::read(p, crate::model::limits::MAX_SUITE_FILE_BYTES);
            Some(read.map_err(|err| field("expected_output", format!("{}: {err}", p.display())))?)
        }
    };
    check_cores(spec.cores).map_err(|m| field("cores", m))?;
    let mode = spec
        .mode
        .as_deref()
        .map(|m| m.parse::<Mode>().map_err(|e| e.to_string()))
        .transpose();
    let mode = mode.map_err(|m| field("mode", m))?;
    let timeout = spec.timeout.map(crate::model::limits::timeout_from_seconds);
    let timeout = timeout.transpose().map_err(|m| field("timeout", m))?;
    let budgets = match &spec.budget {
        Some(table) => super::budget::parse(table)
            .map_err(|(key, m)| field("budget", format!("`{key}`: {m}")))?,
        None => Vec::new(),
    };
    let written = (written_elf, spec.expected_output.clone(), spec.timeout);
    let entry = Entry {
        index,
        table: spec.table,
        name: spec.name,
        elf,
        target,
        args: spec.args,
        expected_output,
        expected_output_file,
        exit_code: spec.exit_code,
        cores: spec.cores,
        mode,
        max_cycles: spec.max_cycles,
        timeout,
        clock_hz: spec.clock_hz,
        budgets,
    };
    let defining = Defining::of(&entry, written);
    Ok((entry, defining))
}

pub(super) fn check_cores(cores: Option<usize>) -> Result<(), String> {
    let max = crate::model::limits::MAX_CORES;
    match cores {
        Some(c) if !(1..=max).contains(&c) => {
            Err(format!("{c}: expected 1 to {max} simulated cores"))
        }
        _ => Ok(()),
    }
}
