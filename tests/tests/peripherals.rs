//! Vendor peripherals, which sim-host does not model (issue 26), on the
//! `board` example: start-up code that writes a peripheral's control
//! register (the MPS2's CMSDK timer 0, the RP2350's UART0 on rv32imac)
//! three times and reads its status once (`setup`), waits for a status bit
//! (`poll`), or reads between the board's peripheral ranges (`gap`).
//!
//! By default an access faults and the message names the peripheral range
//! from the target's `[system] peripherals` (or, with `--svd`, the
//! peripheral and register); `--peripherals ignore` reads 0 (with no SVD
//! reset value: `svd_reset.rs`), drops writes, counts both in the report
//! and names a status register polled forever.

use e2e_tests::{guest, repo_root, scratch, sim_host_bin};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The MPS2 timer 0 and UART0 description the README's example uses.
fn uart_svd() -> PathBuf {
    repo_root().join("guest-shim/examples/board/mps2.svd")
}

fn sim_host(target: &str, args: &[&str], mode: &str) -> Output {
    Command::new(sim_host_bin())
        .args(["run", "--target", target, "--max-cycles", "3000000"])
        .args(args)
        .arg(guest(target, "board"))
        .args(["--", mode])
        .output()
        .expect("sim-host starts")
}

fn text(out: &Output) -> (Option<i32>, String, String) {
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The board's range of each built-in target's UART, as the target files
/// cite it (QEMU's mps2.c, the pico-sdk's addressmap.h).
fn uart_range(target: &str) -> (&'static str, &'static str) {
    if target == "rv32imac" {
        ("APB peripherals", "0x40000000")
    } else {
        ("CMSDK APB peripherals", "0x40000000")
    }
}

#[test]
fn a_peripheral_access_faults_naming_the_range() {
    for target in ["cortex-m0", "cortex-m4", "rv32imac"] {
        let (code, _, err) = text(&sim_host(target, &["-q"], "setup"));
        assert_eq!(code, Some(120), "{target}: {err}");
        let (name, start) = uart_range(target);
        assert!(
            err.contains(&format!("write (4 bytes) in peripheral {name} ({start}")),
            "{err}"
        );
        assert!(err.contains("--peripherals ignore"), "{err}");
        assert!(
            err.contains("board.c:"),
            "the fault is placed in the source: {err}"
        );
    }
}

#[test]
fn an_svd_file_names_peripheral_and_register() {
    let svd = uart_svd();
    let args = ["-q", "--svd", svd.to_str().unwrap()];
    let (code, _, err) = text(&sim_host("cortex-m3", &args, "setup"));
    assert_eq!(code, Some(120), "{err}");
    assert!(
        err.contains("peripheral TIMER0, register CTRL (mps2.svd)"),
        "{err}"
    );
    assert!(err.contains("at address 0x40000000"), "{err}");
}

#[test]
fn ignore_reads_zero_drops_writes_and_counts_them() {
    for target in ["cortex-m0", "cortex-m4", "rv32imac"] {
        let dir = scratch(&format!("peripherals-ignore-{target}"));
        let json = dir.join("report.json");
        let args = [
            "--peripherals",
            "ignore",
            "--report-json",
            json.to_str().unwrap(),
        ];
        let (code, out, err) = text(&sim_host(target, &args, "setup"));
        assert_eq!(code, Some(0), "{target}: {err}");
        // the status register read as 0
        assert_eq!(out, "configured, status 0\n");
        let (name, _) = uart_range(target);
        let row = err
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("{err}"));
        let numbers: Vec<&str> = row[name.len() + 2..].split_whitespace().collect();
        // board.c: three writes of the control register, one read of the
        // status, which no SVD gives a reset value
        let expected = [
            "1", "reads", "3", "writes", "1", "without", "a", "reset", "value",
        ];
        assert_eq!(numbers, expected, "{row}");
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let expected = serde_json::json!([{
            "name": name, "reads": 1, "writes": 3, "reads_without_reset_value": 1
        }]);
        assert_eq!(report["peripherals"], expected);
    }
}

#[test]
fn a_status_bit_polled_forever_is_named_at_the_cycle_limit() {
    for target in ["cortex-m4", "rv32imac"] {
        let (code, _, err) = text(&sim_host(target, &["--peripherals", "ignore"], "poll"));
        assert_eq!(code, Some(122), "{target}: {err}");
        let status = if target == "rv32imac" {
            "0x40070018"
        } else {
            "0x4000000c"
        };
        assert!(
            err.contains(&format!("polling {} ({status})", uart_range(target).0)),
            "{err}"
        );
        assert!(err.contains("never becomes ready"), "{err}");
    }
}

#[test]
fn between_the_ranges_is_plain_unmapped_memory() {
    for target in ["cortex-m4", "rv32imac"] {
        let (code, _, err) = text(&sim_host(target, &["-q"], "gap"));
        assert_eq!(code, Some(120), "{target}: {err}");
        assert!(
            err.contains("read of unmapped memory (4 bytes) at address"),
            "{err}"
        );
        assert!(!err.contains("peripheral"), "{err}");
    }
}

#[test]
fn ignore_with_nothing_to_ignore_is_a_note_and_the_run_goes_on() {
    // issue 39: one script passes the same flags to every core. The
    // cortex-m33 target lists no peripheral range: the run goes on, a note
    // says there is nothing to ignore, and the guest's own exit status
    // stands (fir touches no peripheral and exits 0).
    let out = Command::new(sim_host_bin())
        .args(["run", "--target", "cortex-m33", "--peripherals", "ignore"])
        .arg(guest("cortex-m33", "fir"))
        .output()
        .unwrap();
    let (code, stdout, err) = text(&out);
    assert_eq!(code, Some(0), "{err}");
    assert!(stdout.starts_with("fir: 8 blocks filtered"), "{stdout}");
    assert!(
        err.contains(
            "sim-host: note: --peripherals ignore: target `cortex-m33` lists no peripheral range"
        ),
        "{err}"
    );
    assert!(err.contains("nothing to ignore"), "{err}");
    assert!(!err.contains("warning"), "{err}");
    // a target file without the list: the same note, and an access there
    // still faults as it would without the option
    let dir = scratch("peripherals-nothing");
    let target = dir.join("bare.toml");
    write_bare_target(&target);
    let out = Command::new(sim_host_bin())
        .args(["run", "-q", "--target-file"])
        .arg(&target)
        .args(["--peripherals", "ignore"])
        .arg(guest("cortex-m3", "board"))
        .args(["--", "setup"])
        .output()
        .unwrap();
    let (code, _, err) = text(&out);
    assert!(err.contains("nothing to ignore"), "{err}");
    assert_eq!(code, Some(120), "{err}");
    assert!(
        err.contains("0x40000000") || err.contains("unmapped"),
        "{err}"
    );
}

/// The built-in cortex-m3 target without its `[system] peripherals`.
fn write_bare_target(path: &Path) {
    let shown = Command::new(sim_host_bin())
        .args(["targets", "--show", "cortex-m3"])
        .output()
        .unwrap();
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let text = String::from_utf8(shown.stdout).unwrap();
    let start = text
        .find("peripherals = [")
        .expect("the built-in file lists peripherals");
    let end = start + text[start..].find("\n]\n").expect("the list ends") + 3;
    std::fs::write(path, format!("{}{}", &text[..start], &text[end..])).unwrap();
}

#[test]
fn a_broken_svd_file_is_named() {
    let dir = scratch("peripherals-bad-svd");
    let svd = dir.join("broken.svd");
    let valid = std::fs::read_to_string(uart_svd()).unwrap();
    std::fs::write(&svd, valid.replace("0x40000000", "zz")).unwrap();
    let (code, _, err) = text(&sim_host(
        "cortex-m3",
        &["--svd", svd.to_str().unwrap()],
        "setup",
    ));
    assert_eq!(code, Some(125), "{err}");
    assert!(err.contains("--svd") && err.contains("broken.svd"), "{err}");
    assert!(err.contains("TIMER0"), "{err}");
}
