//! `sim-host arp dump|stats|convert|export-extrap` through the binary: a
//! reader closing the pipe early ends the command quietly, numbers print
//! as people write them, status lines go to stderr, and no message shows
//! Rust Debug text.

use e2e_tests::{guest, process_scratch, scratch, sim_host_bin};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

fn sim_host(args: &[&str]) -> Output {
    Command::new(sim_host_bin())
        .args(args)
        .output()
        .expect("sim-host runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A record_all recording of the filter guest (1608 records, a dump of
/// about 100 KiB: more than a pipe holds), made once per test process.
fn recording() -> &'static Path {
    static RECORDING: OnceLock<PathBuf> = OnceLock::new();
    RECORDING.get_or_init(|| {
        let path = process_scratch().join("filter-recording.arp");
        let elf = guest("cortex-m4", "filter");
        let out = Command::new(sim_host_bin())
            .args(["run", "-q", "--mode", "record_all", "-o"])
            .arg(&path)
            .arg(&elf)
            .output()
            .expect("sim-host runs");
        assert!(out.status.success(), "{}", text(&out.stderr));
        path
    })
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// Runs sim-host with stdout piped, reads one line, closes the pipe and
/// returns the exit status and everything written to stderr.
fn read_one_line_then_close(args: &[&str]) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(sim_host_bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sim-host starts");
    let mut first = Vec::new();
    BufReader::new(child.stdout.take().expect("piped stdout"))
        .read_until(b'\n', &mut first)
        .expect("one line");
    assert!(!first.is_empty(), "{args:?} printed nothing");
    // the reader (and with it the pipe) is dropped here
    let out = child.wait_with_output().expect("sim-host ends");
    (out.status, text(&out.stderr))
}

#[test]
fn a_closed_pipe_ends_every_printing_command_quietly() {
    let arp = path_str(recording());
    let dir = scratch("cli-arp-pipe");
    let extrap_run = format!("n=1:{arp}");
    let commands: [&[&str]; 4] = [
        &["arp", "dump", arp],
        &["arp", "convert", arp, "-"],
        &["arp", "convert", arp, "-", "--format", "binary"],
        &["arp", "export-extrap", &extrap_run, "-o", "-"],
    ];
    for args in commands {
        let (status, stderr) = read_one_line_then_close(args);
        assert_eq!(status.code(), Some(0), "{args:?}: {stderr}");
        if args[1] == "dump" {
            assert_eq!(stderr, "", "{args:?}");
        } else {
            assert!(!stderr.contains("Broken pipe"), "{args:?}: {stderr}");
        }
    }
    // stats: a short table; whether the write fails or not, all is quiet.
    let mut child = Command::new(sim_host_bin())
        .args(["arp", "stats", arp])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn stats_print_numbers_without_rounding_noise() {
    let dir = scratch("cli-arp-numbers");
    // One average record: 5 × 11169.44 is 55847.200000000004 in f64.
    let path = dir.join("avg.arp");
    std::fs::write(
        &path,
        "# Atomium record and playback data - format version 1.1.\n0 0 1 5\n1\n1 0 4: 5 11169.44;\n",
    )
    .unwrap();
    let out = sim_host(&["arp", "stats", path_str(&path)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        row,
        ["4", "0", "5", "11169.44", "-", "-", "55847.2"],
        "{table}"
    );

    let out = sim_host(&["arp", "dump", path_str(&path)]);
    assert!(
        text(&out.stdout).contains(" 11169.44\n"),
        "{}",
        text(&out.stdout)
    );

    // Whole numbers keep every digit.
    let out = sim_host(&["arp", "stats", path_str(recording())]);
    let table = text(&out.stdout);
    assert!(table.contains(" 3585600\n"), "{table}");
    assert!(!table.contains(".00"), "{table}");
}

#[test]
fn status_lines_go_to_stderr_and_data_to_stdout() {
    let dir = scratch("cli-arp-status");
    let arp = path_str(recording());
    let avg = dir.join("avg.arp");
    let out = sim_host(&[
        "arp",
        "convert",
        arp,
        path_str(&avg),
        "--mode",
        "record_average",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        format!("4 records written to {}\n", avg.display())
    );

    let jsonl = dir.join("extrap.jsonl");
    let run = format!("n=1:{arp}");
    let out = sim_host(&["arp", "export-extrap", &run, "-o", path_str(&jsonl)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    assert!(text(&out.stderr).ends_with(&format!("lines written to {}\n", jsonl.display())));

    // To `-`, stdout holds exactly the data.
    let out = sim_host(&["arp", "export-extrap", &run, "-o", "-"]);
    let data = text(&out.stdout);
    assert_eq!(data, std::fs::read_to_string(&jsonl).unwrap());
}

#[test]
fn errors_name_the_file_without_debug_text() {
    let dir = scratch("cli-arp-errors");
    let missing = dir.join("missing.arp");
    let bad = dir.join("bad.arp");
    std::fs::write(&bad, "not an arp file\n").unwrap();
    let arp = path_str(recording());
    let cases: Vec<Vec<&str>> = vec![
        vec!["arp", "dump", path_str(&missing)],
        vec!["arp", "stats", path_str(&bad)],
        vec!["arp", "convert", arp, "/nonexistent-dir/x.arp"],
        vec!["arp", "convert", arp, "x.arp", "--mode", "playback"],
        vec!["arp", "export-extrap", "n:x.arp", "-o", "-"],
    ];
    for args in cases {
        let out = sim_host(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(stderr.starts_with("sim-host: "), "{args:?}: {stderr}");
        for debug in ["Os {", "kind:", "Some(", "None", "\"}"] {
            assert!(!stderr.contains(debug), "{args:?}: {stderr}");
        }
    }
    let out = sim_host(&["arp", "dump", path_str(&missing)]);
    assert!(text(&out.stderr).contains(path_str(&missing)));
}

#[test]
fn arp_plot_draws_the_kernels_of_record_all_and_histogram_files() {
    let dir = e2e_tests::scratch("arp-plot");
    let filter = e2e_tests::guest("cortex-m4", "filter");
    let sim = |args: &[&str]| {
        std::process::Command::new(e2e_tests::sim_host_bin())
            .current_dir(&dir)
            .args(args)
            .output()
            .unwrap()
    };
    let elf = filter.display().to_string();
    for (mode, file, unit) in [
        ("record_all", "all.arp", ">kcycles<"),
        ("record_histogram", "hist.arp", ">samples<"),
    ] {
        assert!(sim(&["run", "-q", &elf, "--mode", mode, "-o", file])
            .status
            .success());
        let out = sim(&["arp", "plot", file, "-o", "p.svg", "--size", "900x500"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let svg = std::fs::read_to_string(dir.join("p.svg")).unwrap();
        assert!(svg.contains(r#"width="900""#), "{mode}");
        assert!(svg.contains(unit), "{mode}: {svg}");
        // the two kernels, not the profiled sections around them
        assert!(
            svg.contains("8 &gt; 7 &gt; 3 &gt; 2 &gt; 1") || svg.contains("8 > 7 > 3 > 2 > 1"),
            "{mode}"
        );
        assert!(!svg.contains(">8 &gt; 7 &gt; 3 &gt; 2<"), "{mode}");
    }
    assert!(sim(&["run", "-q", &elf, "-o", "avg.arp"]).status.success());
    let out = sim(&["arp", "plot", "avg.arp", "-o", "a.svg"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("record_all"));
    assert!(!dir.join("a.svg").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
