//! The Thumb IT state across a stop and resume inside a block (issue 43
//! M01). `guest-shim/examples/itstate` runs IT blocks whose load or store
//! is a page's first access (the emulator restores the guest state there
//! to fill its TLB) or reaches a device register the host answers, and an
//! exception pended inside an IT block that crosses a page; it checks each
//! result against the same arithmetic without IT. Before the fix the IT
//! bits of the accessing instruction outlived the IT block: the next
//! instructions ran conditionally (a call skipped, a register loaded with
//! a device's value) on every Thumb-2 core and both charge paths.

use e2e_tests::process::{qemu_arm, wait_for, Reaped};
use e2e_tests::{guest, require_tool, sim_host_bin};
use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Every target with a Thumb-2 core (ARMv6-M has no IT instruction).
const THUMB2: [&str; 7] = [
    "cortex-m3",
    "cortex-m4",
    "cortex-m4f",
    "cortex-m7",
    "cortex-m33",
    "stm32f407",
    "stm32f746",
];

/// QEMU's machine and CPU for the cores it has.
const QEMU: [(&str, &str, &str); 4] = [
    ("cortex-m3", "mps2-an385", "cortex-m3"),
    ("cortex-m4f", "mps2-an386", "cortex-m4"),
    ("cortex-m7", "mps2-an500", "cortex-m7"),
    ("cortex-m33", "mps2-an505", "cortex-m33"),
];

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn ours(target: &str, charge: &str, extra: &[&str], args: &[&str]) -> Output {
    Command::new(sim_host_bin())
        .env("SIM_HOST_CHARGE", charge)
        .args(["run", "-q", "--max-cycles", "100000000", "--target", target])
        .args(extra)
        .arg(guest(target, "itstate"))
        .arg("--")
        .args(args)
        .output()
        .expect("sim-host runs")
}

/// The run ended well and the guest found every result right.
fn assert_all_right(target: &str, what: &str, run: &Output) {
    let out = text(&run.stdout);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{target} {what}: {out}{}",
        text(&run.stderr)
    );
    assert!(out.ends_with("0 failure(s)\n"), "{target} {what}: {out}");
    let wrong: Vec<&str> = out
        .lines()
        .filter(|l| !l.ends_with(": ok") && !l.starts_with("cross: PendSV taken inside"))
        .filter(|l| *l != "0 failure(s)")
        .collect();
    assert!(wrong.is_empty(), "{target} {what}: {wrong:?}");
}

#[test]
fn device_reads_and_first_touches_inside_it_blocks_keep_the_it_state() {
    for target in THUMB2 {
        for charge in ["translation", "hook"] {
            let run = ours(target, charge, &[], &[]);
            assert_all_right(target, charge, &run);
            // 6 addresses x 2 rounds x 2 conditions x 3 shapes, plus a
            // store shape on the 4 writable addresses and the crossing case
            let ok = text(&run.stdout).matches(": ok\n").count();
            assert_eq!(ok, 6 * 2 * 2 * 3 + 4 * 2 * 2 + 2, "{target} {charge}");
            assert!(
                text(&run.stdout).contains("cross: PendSV taken inside the IT block"),
                "{target} {charge}"
            );
        }
    }
}

/// A `--peripherals ignore` range read and written inside IT blocks (the
/// Cortex-M33's board has no peripheral range to ignore).
#[test]
fn ignored_peripherals_inside_it_blocks_keep_the_it_state() {
    for target in THUMB2.iter().filter(|t| **t != "cortex-m33") {
        for charge in ["translation", "hook"] {
            let run = ours(
                target,
                charge,
                &["--peripherals", "ignore"],
                &["peripheral"],
            );
            assert_all_right(target, charge, &run);
            let ok = text(&run.stdout).matches(": ok\n").count();
            assert_eq!(ok, 2 * 2 * 4, "{target} {charge}");
        }
    }
}

fn qemu(target: &str) -> Output {
    let (_, machine, cpu) = QEMU.iter().find(|(t, _, _)| *t == target).unwrap();
    qemu_arm(
        machine,
        Some(cpu),
        &guest(target, "itstate"),
        &["itstate"],
        60,
    )
}

/// The same ELF prints the same under qemu-system-arm, the stacked IT
/// bits of the exception taken inside the IT block included.
#[test]
#[cfg_attr(
    not(has_qemu_arm),
    ignore = "needs qemu-system-arm (scripts/bootstrap.sh installs it)"
)]
fn the_output_is_qemus() {
    require_tool("qemu-system-arm");
    for (target, _, _) in QEMU {
        let reference = qemu(target);
        assert!(reference.status.success(), "{target}: {reference:?}");
        let run = ours(target, "translation", &[], &[]);
        assert_eq!(
            text(&run.stdout),
            text(&reference.stdout),
            "{target}: ours, then QEMU's"
        );
    }
}

/// A read watchpoint on a word that IT blocks load stops the guest inside
/// the block (after the load); each resume goes on with the IT state.
#[test]
#[cfg_attr(
    not(has_gdb),
    ignore = "needs gdb-multiarch (scripts/bootstrap.sh installs it)"
)]
fn a_watchpoint_inside_an_it_block_resumes_with_the_it_state() {
    require_tool("gdb-multiarch");
    let elf = guest("cortex-m4", "itstate");
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut run = Command::new(sim_host_bin())
        .args([
            "run",
            "-q",
            "--target",
            "cortex-m4",
            "--max-cycles",
            "100000000",
        ])
        .args(["--gdb", &format!("127.0.0.1:{port}")])
        .arg(&elf)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(run.stderr.take().unwrap());
    let mut stdout = run.stdout.take().unwrap();
    let mut run = Reaped(run);
    let mut listening = String::new();
    stderr.read_line(&mut listening).unwrap();
    assert!(listening.contains("GDB on"), "{listening}");
    let mut gdb = Command::new("gdb-multiarch");
    gdb.args([
        "-batch",
        "-nx",
        "-ex",
        &format!("target remote 127.0.0.1:{port}"),
    ])
    .args(["-ex", "rwatch fresh_ram[1][7]"]);
    // the word is loaded by 4 IT blocks and read once by C per round
    for _ in 0..10 {
        gdb.args(["-ex", "continue"]);
    }
    let gdb = gdb
        .args(["-ex", "delete", "-ex", "continue"])
        .arg(&elf)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = text(&gdb.stdout) + &text(&gdb.stderr);
    assert_eq!(
        wait_for(&mut run.0, Duration::from_secs(120)),
        Some(0),
        "{said}"
    );
    let mut out = String::new();
    stdout.read_to_string(&mut out).unwrap();
    assert_eq!(
        said.matches("Hardware read watchpoint 1").count(),
        11,
        "{said}"
    );
    assert!(said.contains("exited normally"), "{said}");
    assert!(out.ends_with("0 failure(s)\n"), "{out}");
}
