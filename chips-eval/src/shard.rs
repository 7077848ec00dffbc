//! Sweeps beyond one machine: `run --shard K/N` evaluates one of N parts
//! of a sweep, `merge` puts the parts' outputs back together.
//!
//! The split is strided: point `i` of the sweep (from 0, in sweep order,
//! the first `--set` varying slowest) belongs to shard `i mod N + 1`. So
//! every point is in exactly one shard, the shards differ in size by at
//! most one point, and a cost that grows along the sweep (more processors,
//! more elements) is spread over every shard, where contiguous blocks
//! would give the last shard all the expensive points.
//!
//! A shard's output (CSV or JSON) names the sweep by [`sweep_hash`]: the
//! sha256 of chips-eval's version (the built-in objects), the model's
//! source files and vector files (their contents, not their paths, so
//! machines with other folders agree), the hardware file and every
//! `--set` value. Each point carries its global index.
//! [`merge`](crate::merge) refuses outputs of different sweeps and writes
//! the points in sweep order, which is what a whole run writes.

use crate::error::Error;
use crate::program::Program;
use crate::sweep::Setting;
use crate::value::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

pub use arpsim::shard::Shard;

/// The files that define a model: every loaded object's source file (by
/// object name) and the extra vector files, as (what, path).
pub fn model_files(prog: &Program, vector_files: &[PathBuf]) -> Vec<(String, PathBuf)> {
    let mut files: Vec<(String, PathBuf)> = prog
        .objects
        .iter()
        // Built-in objects (`<builtin sequential>`) are part of the
        // binary, whose version the hash holds.
        .filter(|o| o.ast.is_some() && !o.file.starts_with("<builtin "))
        .map(|o| (format!("object {}", o.name), PathBuf::from(&o.file)))
        .collect();
    files.sort();
    files.extend(
        vector_files
            .iter()
            .enumerate()
            .map(|(i, f)| (format!("vectors {i}"), f.clone())),
    );
    files
}

/// `sha256:HEX` of the sweep: the contents of `files` (named by what they
/// are, not where), of the hardware file and the settings' names and
/// values (numbers by their bits, so 0.1 and 0.1000000001 differ).
pub fn sweep_hash(
    files: &[(String, PathBuf)],
    hardware: &Path,
    settings: &[Setting],
) -> Result<String, Error> {
    let mut hash = Sha256::new();
    let version = env!("CARGO_PKG_VERSION");
    hash.update(format!("chips-eval {version} sweep 1\n").as_bytes());
    let hardware = ("hardware".to_string(), hardware.to_path_buf());
    for (what, path) in files.iter().chain(std::iter::once(&hardware)) {
        let bytes =
            arpsim::input::read(path, crate::MAX_SOURCE_BYTES).map_err(|error| Error::Io {
                path: path.display().to_string(),
                error,
            })?;
        hash.update(format!("{what} {}\n", bytes.len()).as_bytes());
        hash.update(&bytes);
    }
    for s in settings {
        hash.update(format!("set {} {}\n", s.name.len(), s.name).as_bytes());
        for v in &s.values {
            let text = match v {
                Value::Num(n) => format!("num {:016x}\n", n.to_bits()),
                other => {
                    let t = other.to_string();
                    format!("text {} {t}\n", t.len())
                }
            };
            hash.update(text.as_bytes());
        }
    }
    let digest = hash.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("sha256:{hex}"))
}
