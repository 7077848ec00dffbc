//! The binary end to end: run with a sweep, CSV, JSON, plot, vars, and a
//! failing model's exit status and message.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::require;

mod support;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn chips(args: &[&str]) -> Output {
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
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("plot.svg");
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

#[test]
fn a_run_that_fails_midway_leaves_no_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app.la");
    std::fs::write(
        &app,
        "application a { var dtdp numeric: n = 1; option { } \
         proc exec init { return 1 / (n - 2); } }",
    )
    .unwrap();
    let csv = dir.path().join("out.csv");
    let args = |set: &'static str| {
        vec![
            "run".to_string(),
            app.display().to_string(),
            "--hardware".into(),
            HW.into(),
            "--set".into(),
            set.into(),
            "--format".into(),
            "csv".into(),
            "-o".into(),
            csv.display().to_string(),
        ]
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        chips(&args)
    };
    // n = 2 divides by zero after n = 1 was written.
    let out = run(args("n=1..3"));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("division by zero"));
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["app.la"], "no out.csv and no out.csv.partial");
    // A successful run writes the file under its name.
    let out = run(args("n=3..4"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        "n,time_s\n3,1.000000000\n4,0.500000000\n"
    );
}

#[test]
fn max_points_is_checked_before_the_run() {
    let out = chips(&[
        "run",
        APP,
        "--hardware",
        HW,
        "--set",
        "Nproc=1..1000",
        "--set",
        "Nelem=1..2000",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the sweep has 1000 × 2000 = 2000000 points, more than --max-points 1000000"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing evaluated or printed");
}

/// `run` of the sweep `Nproc=1,4` as CSV into `output`, with `extra`
/// arguments.
fn run_csv_into(output: &Path, extra: &[&str]) -> Output {
    let output = output.display().to_string();
    let mut args = vec![
        "run",
        APP,
        "--hardware",
        HW,
        "--set",
        "Nproc=1,4",
        "--format",
        "csv",
        "-o",
        &output,
    ];
    args.extend(extra);
    chips(&args)
}

fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_output_in_a_missing_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_csv_into(&dir.path().join("no/such/out.csv"), &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("-o ") && err.contains("does not exist"),
        "{err}"
    );
}

/// `-o` naming a character device writes into the device; it does not
/// replace it with a file.
#[test]
#[cfg_attr(
    not(has_mknod),
    ignore = "needs CAP_MKNOD (root) to make a device node in its scratch folder"
)]
fn an_output_device_is_written_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let null = dir.path().join("null");
    let made = Command::new("mknod")
        .arg(&null)
        .args(["c", "1", "3"])
        .status();
    require(
        "CAP_MKNOD (root) to make a device node with mknod",
        made.is_ok_and(|s| s.success()),
    );
    assert_success(&run_csv_into(&null, &[]));
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&null)
        .unwrap()
        .file_type()
        .is_char_device());
}

/// `--plot` naming a symbolic link writes the file it points to; the link
/// stays.
#[test]
fn a_plot_through_a_symbolic_link_writes_its_target() {
    let dir = tempfile::tempdir().unwrap();
    let plot = dir.path().join("link.svg");
    std::os::unix::fs::symlink("real.svg", &plot).unwrap();
    let plot_arg = plot.display().to_string();
    assert_success(&run_csv_into(
        &dir.path().join("out.csv"),
        &["--plot", &plot_arg],
    ));
    assert!(std::fs::symlink_metadata(&plot)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(dir.path().join("real.svg"))
        .unwrap()
        .contains("<svg"));
}

#[test]
fn an_error_prints_its_cause_once() {
    // A usage procedure that divides by zero: the calibration error quotes
    // the evaluation error, which is also its source.
    let dir = tempfile::tempdir().unwrap();
    let fixtures = root().join("tests/fixtures/calibrate");
    let model = std::fs::read_to_string(fixtures.join("app.la"))
        .unwrap()
        .replace("3*IASG, 2*ICMP", "3*IASG, (2/(n-n))*ICMP");
    let app = dir.path().join("app.la");
    std::fs::write(&app, model).unwrap();
    let arp = dir.path().join("k.arp");
    std::fs::write(
        &arp,
        "# Atomium record and playback data - format version 1.1.\n0 0 1 11\n1\n2 0 10 1: 100 12;\n",
    )
    .unwrap();
    let out = dir.path().join("out.toml");
    let o = chips(&[
        "calibrate",
        "--arp",
        arp.to_str().unwrap(),
        "--model",
        app.to_str().unwrap(),
        "--hardware",
        fixtures.join("base.toml").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--section",
        "ato_kernel_merge=1",
        "--fit",
        "hllc",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    let cause = "app.la:9:31: evaluation error: division by zero";
    assert_eq!(err.matches(cause).count(), 1, "{err}");
    assert!(
        err.starts_with("error: evaluating the model for the usage of kernel `ato_kernel_merge`"),
        "{err}"
    );
    assert!(!out.exists());
}
