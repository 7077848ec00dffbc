//! `suite merge`: the shards' results put back together as the result of
//! the whole manifest.
//!
//! The shards must be of one manifest (same `manifest_hash`), split the
//! same way (same shard count and plan), and together hold every entry
//! exactly once. What is missing or duplicated is listed like playback
//! verification lists tuples: grouped, entry numbers as ranges.

use super::error::{corrupt, read_text, SuiteError};
use super::result::{EntryResult, EntryTime, HostTimes, SuiteReport, SCHEMA_VERSION};
use crate::observe::verify::ranges;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why results could not be merged.
#[derive(Debug)]
pub enum MergeError {
    /// A file is unreadable, not a result, or of another manifest or split.
    Invalid(SuiteError),
    /// The results are consistent but some entries are missing or
    /// duplicated: one line per group.
    Incomplete(Vec<String>),
}

/// A result file as read.
#[derive(Debug)]
pub struct Part {
    pub file: PathBuf,
    pub report: SuiteReport,
}

/// Reads a result file written by `sim-host suite`.
pub fn load(path: &Path) -> Result<Part, SuiteError> {
    let text = read_text(path)?;
    let corrupt = |message: String| corrupt(path, message);
    #[derive(Deserialize)]
    struct Version {
        schema_version: Option<u32>,
    }
    let version = serde_json::from_str::<Version>(&text)
        .map_err(|e| corrupt(e.to_string()))?
        .schema_version;
    if version != Some(SCHEMA_VERSION) {
        let found = version.map_or("none".into(), |v| v.to_string());
        return Err(corrupt(format!(
            "schema_version {found}, this sim-host merges {SCHEMA_VERSION} (run the shard again with it)"
        )));
    }
    let mut report: SuiteReport =
        serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()))?;
    restore_host_times(&mut report).map_err(corrupt)?;
    if let Some(shard) = &report.shard {
        // a forged index 0 or one past the count (issue 30, N17)
        if shard.index == 0 || shard.index > shard.count {
            return Err(corrupt(format!(
                "shard {}/{}: a shard is numbered from 1 to its count",
                shard.index, shard.count
            )));
        }
    }
    Ok(Part {
        file: path.to_owned(),
        report,
    })
}

/// Puts each entry's host time (kept under `host`) back into the entry.
fn restore_host_times(report: &mut SuiteReport) -> Result<(), String> {
    if report.host.entries.len() != report.entries.len() {
        return Err(format!(
            "host.entries has {} times for {} entries",
            report.host.entries.len(),
            report.entries.len()
        ));
    }
    for (e, t) in report.entries.iter_mut().zip(&report.host.entries) {
        if e.name != t.name {
            return Err(format!(
                "host.entries names `{}` where entries has `{}`",
                t.name, e.name
            ));
        }
        e.host_seconds = t.seconds;
    }
    Ok(())
}

/// Merges the shards' results into the whole manifest's.
pub fn merge(mut parts: Vec<Part>) -> Result<SuiteReport, MergeError> {
    if parts.is_empty() {
        return Err(MergeError::Incomplete(vec!["no result files".into()]));
    }
    check_consistent(&parts).map_err(MergeError::Invalid)?;
    check_known_entries(&parts).map_err(MergeError::Invalid)?;
    let mut problems = shard_problems(&parts);
    problems.extend(entry_problems(&parts));
    if !problems.is_empty() {
        return Err(MergeError::Incomplete(problems));
    }
    parts.sort_by_key(|p| p.report.shard.as_ref().map_or(1, |s| s.index));
    Ok(combine(parts))
}

/// The shard number and count of a part (a whole run is 1/1).
fn shard_of(part: &Part) -> (usize, usize) {
    part.report
        .shard
        .as_ref()
        .map_or((1, 1), |s| (s.index, s.count))
}

/// Every part is of the first part's manifest and split.
fn check_consistent(parts: &[Part]) -> Result<(), SuiteError> {
    let first = &parts[0];
    let mismatch = |part: &Part, message: String| SuiteError::Mismatch {
        file: part.file.clone(),
        message,
    };
    for part in &parts[1..] {
        let (a, b) = (&first.report, &part.report);
        if a.manifest_hash != b.manifest_hash || a.manifest_entries != b.manifest_entries {
            return Err(mismatch(
                part,
                format!(
                    "of another manifest than {} ({} is not {}): shards of different manifests",
                    first.file.display(),
                    short(&b.manifest_hash),
                    short(&a.manifest_hash)
                ),
            ));
        }
        if shard_of(part).1 != shard_of(first).1 {
            return Err(mismatch(
                part,
                format!(
                    "shard {}/{} but {} is shard {}/{}: split into a different number of shards",
                    shard_of(part).0,
                    shard_of(part).1,
                    first.file.display(),
                    shard_of(first).0,
                    shard_of(first).1
                ),
            ));
        }
        let plan = |p: &Part| p.report.shard.as_ref().map(|s| s.plan.clone());
        if plan(part) != plan(first) {
            return Err(mismatch(
                part,
                format!(
                    "split differently from {} (another --balance-from?)",
                    first.file.display()
                ),
            ));
        }
    }
    Ok(())
}

fn short(hash: &str) -> &str {
    hash.get(..19).unwrap_or(hash)
}

/// Every entry a part holds is one of the manifest's.
fn check_known_entries(parts: &[Part]) -> Result<(), SuiteError> {
    for part in parts {
        let known: std::collections::HashSet<&str> = part
            .report
            .manifest_entries
            .iter()
            .map(String::as_str)
            .collect();
        if let Some(e) = part
            .report
            .entries
            .iter()
            .find(|e| !known.contains(e.name.as_str()))
        {
            return Err(SuiteError::Corrupt {
                file: part.file.clone(),
                message: format!("entry `{}` is not in its manifest_entries", e.name),
            });
        }
    }
    Ok(())
}

/// Shards given twice or not at all, and shards that were interrupted.
fn shard_problems(parts: &[Part]) -> Vec<String> {
    let count = shard_of(&parts[0]).1;
    let mut files: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for p in parts {
        files
            .entry(shard_of(p).0)
            .or_default()
            .push(p.file.display().to_string());
    }
    // walked by the shards given, the missing ones as ranges: a forged
    // count of 10^9 or 2^64 - 1 once made a line per missing shard and
    // aborted at 3.5 GB (issue 30, N17)
    let mut problems = Vec::new();
    let mut next = 1;
    let missing = |from: usize, to: usize, problems: &mut Vec<String>| match to - from {
        0 => problems.push(format!("shard {from}/{count}: no result file given")),
        _ => problems.push(format!(
            "shards {from}..{to} of {count}: no result file given"
        )),
    };
    for (&k, given) in files.range(1..=count) {
        if k > next {
            missing(next, k - 1, &mut problems);
        }
        if given.len() > 1 {
            problems.push(format!(
                "shard {k}/{count}: given {} times: {}",
                given.len(),
                given.join(", ")
            ));
        }
        next = k.saturating_add(1);
    }
    if next <= count && !files.contains_key(&next) {
        missing(next, count, &mut problems);
    }
    for p in parts {
        if let Some(signal) = &p.report.interrupted_by {
            let (k, n) = shard_of(p);
            problems.push(format!(
                "shard {k}/{n} ({}): interrupted by {signal}: run it again",
                p.file.display()
            ));
        }
    }
    problems
}

/// Entries no part ran, or more than one part ran (grouped by files).
fn entry_problems(parts: &[Part]) -> Vec<String> {
    let names = &parts[0].report.manifest_entries;
    let mut ran: BTreeMap<&str, Vec<&Path>> = BTreeMap::new();
    for p in parts {
        for e in p.report.entries.iter().filter(|e| ran_in(e, &p.report)) {
            ran.entry(e.name.as_str()).or_default().push(&p.file);
        }
    }
    let mut groups: BTreeMap<Vec<&Path>, Vec<usize>> = BTreeMap::new();
    for (i, name) in names.iter().enumerate() {
        let files = ran.get(name.as_str()).cloned().unwrap_or_default();
        if files.len() != 1 {
            groups.entry(files).or_default().push(i);
        }
    }
    groups
        .into_iter()
        .map(|(files, positions)| describe(&files, &positions, names))
        .collect()
}

/// Whether an entry of a result ran (an interrupted shard's `not_run`
/// entries did not).
fn ran_in(entry: &EntryResult, report: &SuiteReport) -> bool {
    report.interrupted_by.is_none() || entry.stop != "not_run"
}

/// "missing: entries 3, 7..9 of 12: a, b, c, d" or "duplicated in a.json,
/// b.json: entries ...".
fn describe(files: &[&Path], positions: &[usize], names: &[String]) -> String {
    const SHOWN: usize = 8;
    let numbers = ranges(positions.iter().map(|&p| p as i32 + 1).collect());
    let mut listed: Vec<&str> = positions
        .iter()
        .take(SHOWN)
        .map(|&p| names[p].as_str())
        .collect();
    let more = positions.len().saturating_sub(SHOWN);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    listed.dedup();
    let what = if files.is_empty() {
        "missing (no shard ran them)".to_owned()
    } else {
        let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        format!("duplicated (in {})", files.join(", "))
    };
    format!(
        "{what}: entries {numbers} of {}: {}{more}",
        names.len(),
        listed.join(", ")
    )
}

/// The whole manifest's result from complete, consistent parts (sorted
/// by shard).
fn combine(parts: Vec<Part>) -> SuiteReport {
    let first = &parts[0].report;
    let (manifest, hash, names) = (
        first.manifest.clone(),
        first.manifest_hash.clone(),
        first.manifest_entries.clone(),
    );
    let seconds = parts.iter().map(|p| p.report.host.seconds).sum();
    let mut by_name: BTreeMap<String, EntryResult> = parts
        .into_iter()
        .flat_map(|p| p.report.entries)
        .map(|e| (e.name.clone(), e))
        .collect();
    let entries: Vec<EntryResult> = names.iter().filter_map(|n| by_name.remove(n)).collect();
    let passed = entries.iter().filter(|e| e.passed).count();
    let host = HostTimes {
        seconds,
        entries: entries
            .iter()
            .map(|e| EntryTime {
                name: e.name.clone(),
                seconds: e.host_seconds,
            })
            .collect(),
    };
    SuiteReport {
        schema_version: SCHEMA_VERSION,
        manifest,
        manifest_hash: hash,
        shard: None,
        manifest_entries: names,
        passed,
        failed: entries.len() - passed,
        interrupted_by: None,
        entries,
        host,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{EntryTime, ShardInfo};
    use super::*;

    fn entry(name: &str, stop: &str) -> EntryResult {
        EntryResult {
            name: name.into(),
            elf: "g.elf".into(),
            target: "cortex-m4".into(),
            cores: None,
            passed: true,
            failures: Vec::new(),
            stop: stop.into(),
            exit_code: Some(0),
            expected_exit_code: 0,
            cycles: 10,
            instructions: 5,
            simulated_seconds: 1e-6,
            clock_hz: Some(25_000_000),
            host_seconds: 0.5,
            sections: Vec::new(),
            budgets: Vec::new(),
        }
    }

    /// Shard `k`/`n` of a manifest "a".."f", holding `names`.
    fn part(file: &str, hash: &str, k: usize, n: usize, names: &[&str]) -> Part {
        let entries: Vec<EntryResult> = names.iter().map(|n| entry(n, "exit")).collect();
        let host = HostTimes {
            seconds: 1.0,
            entries: entries
                .iter()
                .map(|e| EntryTime {
                    name: e.name.clone(),
                    seconds: 0.5,
                })
                .collect(),
        };
        Part {
            file: file.into(),
            report: SuiteReport {
                schema_version: SCHEMA_VERSION,
                manifest: "m.toml".into(),
                manifest_hash: hash.into(),
                shard: Some(ShardInfo {
                    index: k,
                    count: n,
                    plan: "p".into(),
                }),
                manifest_entries: ["a", "b", "c", "d", "e", "f"].map(String::from).to_vec(),
                passed: entries.len(),
                failed: 0,
                interrupted_by: None,
                entries,
                host,
            },
        }
    }

    fn incomplete(parts: Vec<Part>) -> Vec<String> {
        match merge(parts) {
            Err(MergeError::Incomplete(p)) => p,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn complete_shards_merge_in_manifest_order() {
        let m = merge(vec![
            part("2.json", "h", 2, 2, &["b", "e"]),
            part("1.json", "h", 1, 2, &["a", "c", "d", "f"]),
        ])
        .unwrap();
        let names: Vec<&str> = m.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d", "e", "f"]);
        assert_eq!((m.passed, m.failed, m.shard.is_none()), (6, 0, true));
        assert_eq!(m.host.seconds, 2.0);
        assert_eq!(m.host.entries.len(), 6);
    }

    #[test]
    fn missing_and_duplicated_entries_are_listed_with_their_files() {
        let p = incomplete(vec![
            part("1.json", "h", 1, 3, &["a", "c"]),
            part("2.json", "h", 2, 3, &["b", "d"]),
            part("2-again.json", "h", 2, 3, &["b", "d"]),
        ]);
        assert!(
            p.contains(&"shard 3/3: no result file given".to_owned()),
            "{p:#?}"
        );
        assert!(
            p.iter()
                .any(|l| l.contains("shard 2/3: given 2 times: 2.json, 2-again.json")),
            "{p:#?}"
        );
        assert!(
            p.contains(&"missing (no shard ran them): entries 5..6 of 6: e, f".to_owned()),
            "{p:#?}"
        );
        assert!(
            p.contains(&"duplicated (in 2.json, 2-again.json): entries 2, 4 of 6: b, d".to_owned()),
            "{p:#?}"
        );
    }

    /// issue 30, N17: a forged shard count made a line per missing shard
    /// (10^9 of them); the missing shards are one range.
    #[test]
    fn a_huge_shard_count_is_one_range_of_missing_shards() {
        for n in [1_000_000_000, usize::MAX] {
            let p = incomplete(vec![
                part("1.json", "h", 1, n, &["a", "b", "c"]),
                part("3.json", "h", 3, n, &["d", "e", "f"]),
            ]);
            assert_eq!(
                p,
                [
                    "shard 2/".to_owned() + &n.to_string() + ": no result file given",
                    format!("shards 4..{n} of {n}: no result file given"),
                ],
                "{p:#?}"
            );
        }
    }

    #[test]
    fn an_interrupted_shard_is_incomplete() {
        let mut second = part("2.json", "h", 2, 2, &["d", "e", "f"]);
        second.report.interrupted_by = Some("SIGINT".into());
        second.report.entries[2].stop = "not_run".into();
        let p = incomplete(vec![part("1.json", "h", 1, 2, &["a", "b", "c"]), second]);
        assert!(
            p.iter()
                .any(|l| l.contains("2.json): interrupted by SIGINT")),
            "{p:#?}"
        );
        assert!(
            p.iter()
                .any(|l| l.starts_with("missing") && l.ends_with(": f")),
            "{p:#?}"
        );
    }

    #[test]
    fn shards_of_other_manifests_or_splits_are_refused() {
        let e = match merge(vec![
            part("1.json", "sha256:aaaa", 1, 2, &["a", "b", "c"]),
            part("2.json", "sha256:bbbb", 2, 2, &["d", "e", "f"]),
        ]) {
            Err(MergeError::Invalid(e)) => e.to_string(),
            other => panic!("{other:?}"),
        };
        assert!(
            e.starts_with("2.json: of another manifest than 1.json"),
            "{e}"
        );
        let e = match merge(vec![
            part("1.json", "h", 1, 2, &["a", "b", "c"]),
            part("2.json", "h", 2, 3, &["d", "e", "f"]),
        ]) {
            Err(MergeError::Invalid(e)) => e.to_string(),
            other => panic!("{other:?}"),
        };
        assert!(
            e.contains("2.json: shard 2/3 but 1.json is shard 1/2"),
            "{e}"
        );
        let mut other_plan = part("2.json", "h", 2, 2, &["d", "e", "f"]);
        other_plan.report.shard.as_mut().unwrap().plan = "q".into();
        let e = match merge(vec![
            part("1.json", "h", 1, 2, &["a", "b", "c"]),
            other_plan,
        ]) {
            Err(MergeError::Invalid(e)) => e.to_string(),
            other => panic!("{other:?}"),
        };
        assert!(e.contains("split differently"), "{e}");
    }

    #[test]
    fn a_result_reads_back_and_writes_the_same_bytes() {
        let mut p = part("1.json", "h", 1, 1, &["a", "b", "c", "d", "e", "f"]);
        p.report.entries[0]
            .sections
            .push(super::super::SectionResult {
                path: vec![8, 7],
                functions: vec![Some("main".into()), None],
                names: vec!["main (m.c:3)".into(), "ato_profile_x".into()],
                kind: "profiled".into(),
                count: 0,
                total_cycles: 0,
                mean_cycles: f64::NAN,
                min_cycles: 0,
                max_cycles: 0,
                total_instructions: 0,
                share: 0.1 + 0.2,
                self_cycles: Some(7),
            });
        p.report.entries[1].simulated_seconds = 1.0 / 3.0;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let text = p.report.to_json();
        std::fs::write(&path, &text).unwrap();
        let back = load(&path).unwrap();
        assert_eq!(back.report.to_json(), text);
        assert_eq!(back.report.entries[2].host_seconds, 0.5);
    }

    #[test]
    fn corrupt_files_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        for (text, what) in [
            ("{", "EOF while parsing"),
            ("[]", "expected struct"),
            ("{\"schema_version\": 1}", "schema_version 1"),
            ("{\"schema_version\": 3}", "schema_version 3"),
            ("{\"schema_version\": 4}", "schema_version 4"),
            ("{\"schema_version\": 5}", "missing field"),
        ] {
            let path = dir.path().join("r.json");
            std::fs::write(&path, text).unwrap();
            let e = load(&path).unwrap_err().to_string();
            assert!(
                e.contains("r.json: not a suite result") && e.contains(what),
                "{text}: {e}"
            );
        }
        let e = load(&dir.path().join("none.json")).unwrap_err().to_string();
        assert!(e.contains("none.json: cannot read"), "{e}");
        // issue 30, N17: a shard index of 0 (or past the count) was taken
        for (k, n) in [(0, 2), (3, 2)] {
            let path = dir.path().join("s.json");
            std::fs::write(&path, part("s.json", "h", k, n, &["a"]).report.to_json()).unwrap();
            let e = load(&path).unwrap_err().to_string();
            assert!(e.contains("numbered from 1 to its count"), "{k}/{n}: {e}");
        }
    }
}
