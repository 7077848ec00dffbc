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
use crate::runtime::Setting;
use crate::value::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// `K/N`: the K-th of N shards, 1 <= K <= N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The whole sweep as one shard.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// The indices of this shard's points in a sweep of `total` points.
    pub fn points(self, total: u64) -> impl Iterator<Item = u64> {
        let stride = usize::try_from(self.count).unwrap_or(usize::MAX);
        (self.index - 1..total).step_by(stride)
    }

    /// How many points of a sweep of `total` this shard holds.
    pub fn size(self, total: u64) -> u64 {
        if total >= self.index {
            (total - self.index) / self.count + 1
        } else {
            0
        }
    }

    /// The shard (1-based) that holds point `index` of the sweep.
    pub fn of_point(index: u64, count: u64) -> u64 {
        index % count + 1
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let usage = || format!("`{s}`: expected K/N, the K-th of N shards (1 <= K <= N)");
        let (k, n) = s.split_once('/').ok_or_else(usage)?;
        let k: u64 = k.trim().parse().map_err(|_| usage())?;
        let n: u64 = n.trim().parse().map_err(|_| usage())?;
        if n == 0 {
            return Err(format!("`{s}`: at least one shard (N >= 1)"));
        }
        if !(1..=n).contains(&k) {
            return Err(format!("`{s}`: shards are numbered from 1 to {n}"));
        }
        Ok(Shard { index: k, count: n })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

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
        let bytes = std::fs::read(path).map_err(|error| Error::Io {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_point_is_in_exactly_one_shard() {
        for total in [0, 1, 7, 28, 100] {
            for count in 1..=9 {
                let mut seen = vec![0u32; total as usize];
                for index in 1..=count {
                    let shard = Shard { index, count };
                    assert_eq!(shard.size(total), shard.points(total).count() as u64);
                    for i in shard.points(total) {
                        seen[i as usize] += 1;
                        assert_eq!(Shard::of_point(i, count), index);
                    }
                }
                assert!(seen.iter().all(|&n| n == 1), "{total} points in {count}");
            }
        }
    }

    #[test]
    fn shards_differ_in_size_by_at_most_one() {
        let sizes: Vec<usize> = (1..=4)
            .map(|index| Shard { index, count: 4 }.points(10).count())
            .collect();
        assert_eq!(sizes, [3, 3, 2, 2]);
    }

    #[test]
    fn shard_numbers_are_checked() {
        assert_eq!("2/4".parse(), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "1/0", "4", "a/b", "-1/4"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
