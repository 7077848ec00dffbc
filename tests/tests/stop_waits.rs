//! Issue 30, N09 (the rest): a stop signal during the playback index load,
//! and an `-o` that is a FIFO no process reads, no longer hold the run.
//! Signals go to the child's pid; the tests wait on events (the child
//! holding the recording open, the guest's last output line, the child's
//! exit), each bounded, and kill the child by pid on failure.

use e2e_tests::process::{wait_for, Reaped};
use e2e_tests::{guest, scratch, sim_host_bin};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

fn sigterm(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Whether `child` has `path` open (its `/proc/PID/fd` links).
fn has_open(child: &Child, path: &Path) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{}/fd", child.id())) else {
        return false;
    };
    fds.flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == path))
}

/// Before, SIGTERM during the load was seen only after the whole
/// recording was read (and the recording was then read a second time for
/// the report). The load now looks at the stop request every 4096
/// records; the report says how far it came.
#[test]
fn a_stop_signal_during_the_playback_load_stops_the_run() {
    let dir = scratch("stop-playback-load");
    let elf = guest("cortex-m4", "filter");
    let seq = dir.join("seq.arp");
    let out = Command::new(sim_host_bin())
        .args([
            "run",
            "--target",
            "cortex-m4",
            "--mode",
            "record_all",
            "-q",
            "-o",
        ])
        .arg(&seq)
        .arg(&elf)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let recorded = std::fs::read_to_string(&seq).unwrap();
    let lines: Vec<&str> = recorded.lines().collect();
    // the recording and 2 million more samples (a second of loading;
    // 5 MB gzipped)
    let extra = 2_000_000u64;
    let kept = &lines[3..lines.len() - 1];
    let total = kept.len() as u64 + extra;
    let big = dir.join("big.arp.gz");
    let file = File::create(&big).unwrap();
    let mut w = std::io::BufWriter::new(flate2::write::GzEncoder::new(
        file,
        flate2::Compression::fast(),
    ));
    writeln!(w, "{}\n{}\n{total:028}", lines[0], lines[1]).unwrap();
    for l in kept {
        writeln!(w, "{l}").unwrap();
    }
    for k in 1000..1000 + extra {
        writeln!(w, "5 4 1@{k}: 4482;").unwrap();
    }
    w.into_inner().unwrap().finish().unwrap();

    let json = dir.join("report.json");
    let child = Command::new(sim_host_bin())
        .args(["run", "--target", "cortex-m4", "-q", "--playback"])
        .arg(&big)
        .arg("--report-json")
        .arg(&json)
        .arg(&elf)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Reaped(child);
    // the event: the load opened the recording
    let end = Instant::now() + Duration::from_secs(60);
    while !has_open(&child.0, &big) {
        if let Some(status) = child.0.try_wait().unwrap() {
            panic!("the run ended ({status}) before it opened the recording");
        }
        assert!(Instant::now() < end, "the run never opened the recording");
        std::thread::sleep(Duration::from_millis(5));
    }
    sigterm(&child.0);
    assert_eq!(
        wait_for(&mut child.0, Duration::from_secs(60))
            .expect("the run ended within the limit, by an exit"),
        143
    );
    let err = stderr_of(&mut child);
    assert!(err.contains("interrupted by SIGTERM"), "{err}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["stop"]["reason"], "interrupted", "{report}");
    let text = report["warnings"].to_string();
    let read: u64 = text
        .split("after ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no cut-short load in the warnings: {text}"));
    assert!(
        read < total,
        "{read} of {total} records: the load was not cut short"
    );
}

/// A record_average run writes data.arp at `arp_finish`; `-o` a FIFO with
/// no reader blocked that open for good (before: SIGTERM was only noted,
/// and `--timeout` never came). Spawns `sim-host run` with `args` before
/// the ELF and returns it with its stdout's reader.
fn run_into_fifo(
    fifo: &Path,
    json: &Path,
    args: &[&str],
) -> (Reaped, BufReader<std::process::ChildStdout>) {
    let mut child = Command::new(sim_host_bin())
        .args([
            "run",
            "--target",
            "cortex-m4",
            "--mode",
            "record_average",
            "-o",
        ])
        .arg(fifo)
        .arg("--report-json")
        .arg(json)
        .args(args)
        .arg(guest("cortex-m4", "filter"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    (Reaped(child), stdout)
}

fn stderr_of(child: &mut Reaped) -> String {
    let mut err = String::new();
    std::io::Read::read_to_string(child.0.stderr.as_mut().unwrap(), &mut err).unwrap();
    err
}

#[test]
fn an_output_fifo_without_a_reader_gives_way_to_a_stop_signal() {
    let dir = scratch("stop-output-fifo-signal");
    let (fifo, json) = (dir.join("data.arp"), dir.join("report.json"));
    mkfifo(&fifo);
    let (mut child, mut stdout) = run_into_fifo(&fifo, &json, &[]);
    // the guest's last line comes just before its arp_finish
    let last = e2e_tests::expected_output("filter");
    let last = last.lines().last().unwrap().to_string();
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "stdout ended early"
        );
        if line.trim_end() == last {
            break;
        }
    }
    sigterm(&child.0);
    assert_eq!(
        wait_for(&mut child.0, Duration::from_secs(30))
            .expect("the run ended within the limit, by an exit"),
        143
    );
    let err = stderr_of(&mut child);
    assert!(err.contains("interrupted by SIGTERM"), "{err}");
    assert!(err.contains("no process opened the FIFO"), "{err}");
    assert!(std::fs::read_to_string(&json)
        .unwrap()
        .contains("\"interrupted\""));
}

#[test]
fn an_output_fifo_without_a_reader_gives_way_to_the_timeout() {
    let dir = scratch("stop-output-fifo-timeout");
    let (fifo, json) = (dir.join("data.arp"), dir.join("report.json"));
    mkfifo(&fifo);
    let (mut child, _stdout) = run_into_fifo(&fifo, &json, &["--timeout", "2", "-q"]);
    assert_eq!(
        wait_for(&mut child.0, Duration::from_secs(60))
            .expect("the run ended within the limit, by an exit"),
        123
    );
    let err = stderr_of(&mut child);
    assert!(err.contains("no process opened the FIFO"), "{err}");
    assert!(std::fs::read_to_string(&json)
        .unwrap()
        .contains("\"timeout\""));
}
