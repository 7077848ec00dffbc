//! The live status line of `sim-host run` (issue 14): drawn on stderr
//! when asked (or on a terminal), erased at the end, never when stderr is
//! not a terminal unless forced, and never changing what is measured.

use e2e_tests::{guest, scratch, sim_host_bin};
use std::process::{Command, Stdio};

fn run(dir: &std::path::Path, extra: &[&str], out: &str) -> String {
    let output = Command::new(sim_host_bin())
        .current_dir(dir)
        .args(["run", "-q", "--mode", "record_all", "-o", out])
        .args(extra)
        .arg(guest("cortex-m4", "filter-bench"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success());
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn the_status_line_is_drawn_only_when_asked_and_measures_nothing() {
    let dir = scratch("progress");
    let shown = run(&dir, &["--progress"], "shown.arp");
    assert!(shown.contains("\r\x1b[K"), "{shown:?}");
    assert!(
        shown.contains("MIPS") && shown.contains("instructions"),
        "{shown:?}"
    );
    assert!(
        shown.ends_with("\r\x1b[K"),
        "the line is erased at the end: {shown:?}"
    );
    let hidden = run(&dir, &[], "hidden.arp");
    assert!(!hidden.contains('\x1b'), "not a terminal: {hidden:?}");
    let a = std::fs::read(dir.join("shown.arp")).unwrap();
    let b = std::fs::read(dir.join("hidden.arp")).unwrap();
    assert_eq!(a, b, "the display changes nothing measured");
    let _ = std::fs::remove_dir_all(&dir);
}
