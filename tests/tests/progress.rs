//! The live status line of `sim-host run` (issue 14): drawn on stderr
//! when asked (or on a terminal), erased at the end, never when stderr is
//! not a terminal unless forced, and never changing what is measured.

use e2e_tests::{guest, scratch, sim_host_bin};
use std::process::{Command, Stdio};

/// A busy loop stopped by a cycle limit (about a second of host time,
/// well past the display's first redraw at 250 ms however fast the host);
/// returns the run's stderr.
fn run(dir: &std::path::Path, extra: &[&str], report: &str) -> String {
    let output = Command::new(sim_host_bin())
        .current_dir(dir)
        .args(["run", "-q", "--max-cycles", "1000000000"])
        .args(["--report-json", report])
        .args(extra)
        .arg(guest("cortex-m4", "crash"))
        .args(["--", "loop"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    // 122: stopped at the cycle limit
    assert_eq!(output.status.code(), Some(122), "{output:?}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn totals(path: &std::path::Path) -> serde_json::Value {
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let t = &report["totals"];
    serde_json::json!([t["cycles"], t["instructions"]])
}

#[test]
fn the_status_line_is_drawn_only_when_asked_and_measures_nothing() {
    let dir = scratch("progress");
    let shown = run(&dir, &["--progress"], "shown.json");
    assert!(shown.contains("\r\x1b[K"), "{shown:?}");
    assert!(
        shown.contains("MIPS") && shown.contains("instructions"),
        "{shown:?}"
    );
    assert!(
        shown.ends_with("cycles\n") && shown.contains("\r\x1b[Ksim-host: stopped"),
        "the line is erased before the last message: {shown:?}"
    );
    let hidden = run(&dir, &[], "hidden.json");
    assert!(!hidden.contains('\x1b'), "not a terminal: {hidden:?}");
    assert_eq!(
        totals(&dir.join("shown.json")),
        totals(&dir.join("hidden.json")),
        "the display changes nothing measured"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
