//! Golden files: an output compared byte for byte with its file in
//! `tests/golden/`, after only the host's own fields are normalised
//! (by the caller, with a function that names them).
//!
//! `ARPSIM_BLESS=1 cargo test --release -p e2e-tests --test golden`
//! rewrites them from the current behaviour (the variable arpsim's own
//! golden files use); review `git diff tests/golden` before committing.

use std::path::PathBuf;

/// The environment variable that rewrites golden files instead of
/// comparing with them.
pub const BLESS: &str = "ARPSIM_BLESS";

/// The golden file `name` (`tests/golden/<name>`).
pub fn path(name: &str) -> PathBuf {
    crate::repo_root().join("tests/golden").join(name)
}

/// Whether this run rewrites the golden files ([`bless_decision`] of the
/// environment; a test fails when it is refused).
pub fn blessing() -> bool {
    let bless = std::env::var_os(BLESS).is_some();
    bless_decision(bless, crate::probe::in_ci()).unwrap_or_else(|e| panic!("{e}"))
}

/// Whether to rewrite the golden files, `bless` being whether
/// `ARPSIM_BLESS` is set: never under `CI` (`ci`). A blessed file is
/// reviewed by a person (`git diff tests/golden`); a CI job that blessed
/// would pass whatever the outputs are.
pub fn bless_decision(bless: bool, ci: bool) -> Result<bool, String> {
    if bless && ci {
        return Err(format!(
            "{BLESS} is set and so is CI: golden files are not blessed under CI \
             (bless them outside it with {BLESS}=1, then review git diff tests/golden)"
        ));
    }
    Ok(bless)
}

/// Compares `actual` with the golden file `name`; fails the test at the
/// first difference, saying how to bless an intended change. With
/// `ARPSIM_BLESS` set, writes `actual` as the golden file instead.
pub fn check(name: &str, actual: &[u8]) {
    check_path(&path(name), actual);
}

/// [`check`] for a golden file elsewhere in the repository (`suites/
/// ci-baseline.json`, the committed baseline of the project's cycle gate).
pub fn check_path(path: &std::path::Path, actual: &[u8]) {
    let path = path.to_owned();
    let name = path
        .strip_prefix(crate::repo_root())
        .unwrap_or(&path)
        .display()
        .to_string();
    if blessing() {
        std::fs::create_dir_all(path.parent().expect("tests/golden")).unwrap();
        std::fs::write(&path, actual).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let expected = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", path.display(), how_to_bless("to create it")));
    if let Some(difference) = first_difference(&expected, actual) {
        panic!(
            "the output differs from {name}:\n{difference}\n{}",
            how_to_bless("if the change is intended, to rewrite it")
        );
    }
}

fn how_to_bless(what: &str) -> String {
    format!(
        "{what}: {BLESS}=1 cargo test --release -p e2e-tests --test golden \
         (then review git diff tests/golden)"
    )
}

/// `None` when the two are the same bytes; else where they first differ:
/// the line (from 1) and both versions of it, or which one is longer.
pub fn first_difference(expected: &[u8], actual: &[u8]) -> Option<String> {
    if expected == actual {
        return None;
    }
    let mut expected_lines = expected.split_inclusive(|&b| b == b'\n');
    let mut actual_lines = actual.split_inclusive(|&b| b == b'\n');
    let mut offset = 0;
    for number in 1.. {
        match (expected_lines.next(), actual_lines.next()) {
            (Some(e), Some(a)) if e == a => offset += e.len(),
            (Some(e), Some(a)) => {
                let column = e.iter().zip(a).take_while(|(x, y)| x == y).count();
                return Some(format!(
                    "first difference at line {number}, byte {} of the line (offset {}):\n\
                     - golden: {}\n+ actual: {}",
                    column + 1,
                    offset + column,
                    show(e, column),
                    show(a, column)
                ));
            }
            (Some(e), None) => {
                return Some(format!(
                    "the output ends at line {number} (offset {offset}); the golden file goes on:\n\
                     - golden: {}",
                    show(e, 0)
                ))
            }
            (None, Some(a)) => {
                return Some(format!(
                    "the golden file ends at line {number} (offset {offset}); the output goes on:\n\
                     + actual: {}",
                    show(a, 0)
                ))
            }
            (None, None) => break,
        }
    }
    unreachable!("different bytes differ somewhere")
}

/// The part of a line around byte `column` (all of a short line), as
/// escaped text: a byte difference may be invisible, and one line may be
/// a whole JSON document.
fn show(line: &[u8], column: usize) -> String {
    const CONTEXT: usize = 100;
    let start = column.saturating_sub(CONTEXT);
    let end = (column + CONTEXT).min(line.len());
    let text: String = String::from_utf8_lossy(&line[start..end])
        .chars()
        .map(|c| match c {
            c if c.is_control() => c.escape_default().to_string(),
            c => c.to_string(),
        })
        .collect();
    format!(
        "{}{text}{}",
        if start > 0 { "..." } else { "" },
        if end < line.len() { "..." } else { "" }
    )
}
