//! The binary end to end: run with a sweep, CSV, JSON, plot, vars, and a
//! failing model's exit status and message.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn chips(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_chips-eval"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

const APP: &str = "tests/fixtures/memsort/memsort.la";
const HW: &str = "hardware/transputer-supercluster.toml";

#[test]
fn run_sweep_as_csv() {
    let out = chips(&[
        "run",
        APP,
        "--hardware",
        HW,
        "--set",
        "Nproc=1,4",
        "--format",
        "csv",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "Nproc,time_s");
    assert_eq!(lines[1], "1,8.870952960");
    assert!(lines[2].starts_with("4,6.328206"));
}

#[test]
fn two_swept_variables_json_and_plot() {
    let svg = std::env::temp_dir().join(format!("chips-eval-test-{}.svg", std::process::id()));
    let out = chips(&[
        "run",
        APP,
        "--hardware",
        HW,
        "--set",
        "Nproc=2..8:*2",
        "--set",
        "Nelem=65536,262144",
        "--format",
        "json",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["points"].as_array().unwrap().len(), 6);
    let plot = std::fs::read_to_string(&svg).unwrap();
    std::fs::remove_file(&svg).ok();
    assert!(plot.starts_with("<svg"));
    // One line per value of the second variable.
    assert!(plot.contains("Nelem = 65536") && plot.contains("Nelem = 262144"));
}

#[test]
fn vars_lists_the_interface() {
    let out = chips(&["vars", APP]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Nelem  dtdp   numeric  262144"), "{text}");
    assert!(text.contains("Nproc  sysd   numeric  16"), "{text}");
}

#[test]
fn diagnostics_fail_the_run() {
    let out = chips(&[
        "run",
        "tests/fixtures/memsort-verbatim/memsort.la",
        "--hardware",
        HW,
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("memsort.la:23:1: error: link target `sort` is not included"),
        "{err}"
    );
}

#[test]
fn breakdown_and_trace() {
    let out = chips(&[
        "run",
        APP,
        "--hardware",
        HW,
        "--set",
        "Nproc=4",
        "--breakdown",
        "--trace",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("by device (step time):"), "{text}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("option merge.ptmp = \"bitonic\""), "{err}");
}
