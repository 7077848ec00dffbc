//! Faults, limits and interruption: a clear message, the documented exit
//! status, and a partial data.arp that keeps every sample recorded so far
//! (the crash guest records three before misbehaving).

use e2e_tests::{guest, scratch, sim_host_bin};
use std::process::{Command, Output};

fn crash(target: &str, args: &[&str], extra: &[&str]) -> (Output, String) {
    let dir = scratch(&format!("crash-{target}-{}", args.join("-")));
    let file = dir.join("data.arp");
    let out = Command::new(sim_host_bin())
        .args(["run", "--target", target, "-q"])
        .arg(guest(target, "crash"))
        .arg("-o")
        .arg(&file)
        .args(extra)
        .arg("--")
        .args(args)
        .output()
        .unwrap();
    let data = std::fs::read_to_string(&file).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    (out, data)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The three samples are in the file, whose header says it is partial.
fn assert_partial_with_samples(data: &str) {
    assert_eq!(partial_samples(data), 3, "{data}");
}

/// The samples of a partial data.arp (its count line ends in `partial`,
/// one line per sample follows the three header lines).
fn partial_samples(data: &str) -> u64 {
    let lines: Vec<&str> = data.lines().collect();
    assert!(lines.len() >= 3, "no data.arp written: {data:?}");
    assert!(lines[2].ends_with("partial"), "count line: {}", lines[2]);
    let count = lines[2].split_whitespace().next().unwrap().parse::<u64>();
    let count = count.expect("the count line starts with the count");
    assert_eq!(lines.len() as u64, 3 + count, "{data}");
    count
}

#[test]
fn memory_faults_name_kind_address_and_instruction() {
    for target in ["cortex-m0", "cortex-m4", "rv32imac"] {
        let (out, data) = crash(target, &["unmapped"], &[]);
        assert_eq!(out.status.code(), Some(120), "{target}");
        let err = stderr(&out);
        assert!(err.contains("read of unmapped memory"), "{err}");
        assert!(err.contains("at address 0x90000000"), "{err}");
        assert!(err.contains("pc: main+0x"), "{err}");
        // and the source line, from the DWARF
        assert!(err.contains("crash.c:"), "{err}");
        assert!(err.contains("last taken branches"), "{err}");
        assert_partial_with_samples(&data);

        let (out, data) = crash(target, &["flash"], &[]);
        assert_eq!(out.status.code(), Some(120));
        let err = stderr(&out);
        assert!(err.contains("write to read-only memory"), "{err}");
        // the faulting instruction is a store
        let pc_line = err.lines().find(|l| l.contains("pc: ")).unwrap();
        assert!(pc_line.contains(": s"), "{pc_line}");
        assert_partial_with_samples(&data);
    }
}

/// The fault report's last taken branches (the lines under its heading).
fn trail_of(target: &str, charge_path: &str) -> Vec<String> {
    let dir = scratch(&format!("trail-{target}-{charge_path}"));
    let out = Command::new(sim_host_bin())
        .args(["run", "--target", target, "-q"])
        .arg(guest(target, "crash"))
        .arg("-o")
        .arg(dir.join("data.arp"))
        .args(["--", "unmapped"])
        .env("SIM_HOST_CHARGE", charge_path)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    stderr(&out)
        .lines()
        .skip_while(|l| !l.contains("last taken branches"))
        .skip(1)
        .take_while(|l| l.starts_with("    "))
        .map(|l| l.trim().to_owned())
        .collect()
}

/// The crash guest compares its argument with strcmp (a loop of one
/// block per character) just before the unmapped read in main: the
/// trail's newest entries are that loop's back edge and its return to
/// main, the report shows sixteen, and the translated code's trail (block
/// starts found again by their sizes) is the block hook's.
#[test]
fn fault_trail_ends_with_the_branches_before_the_fault_on_both_charge_paths() {
    for target in ["cortex-m4", "rv32imac"] {
        let trail = trail_of(target, "translation");
        assert_eq!(trail.len(), 16, "{target}: {trail:#?}");
        let (last, before) = trail.split_last().unwrap();
        assert!(
            last.starts_with("strcmp+") && last.contains("-> main+"),
            "{target}: {last}"
        );
        let back_edge = &before[before.len() - 1];
        assert!(
            back_edge.starts_with("strcmp+") && back_edge.contains("-> strcmp ("),
            "{target}: {back_edge}"
        );
        assert_eq!(trail, trail_of(target, "hook"), "{target}");
    }
}

/// `__builtin_trap()`: on Cortex-M an undefined instruction, a fault of
/// the run's; on RISC-V an `ebreak`, a trap the guest takes: picolibc's
/// semihosting crt0 installs a handler in mtvec that prints the trap and
/// exits with 1, as on a board.
#[test]
fn undefined_instruction_and_stack_overflow() {
    for target in ["cortex-m4", "rv32imac"] {
        let (out, data) = crash(target, &["undef"], &[]);
        if target == "rv32imac" {
            assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.contains("RISCV fault\n"), "{text}");
            assert!(text.contains("mcause:   0x00000003\n"), "{text}");
        } else {
            assert_eq!(out.status.code(), Some(120));
            let err = stderr(&out);
            assert!(err.contains("undefined instruction"), "{err}");
        }
        assert_partial_with_samples(&data);

        let (out, data) = crash(target, &["stack"], &[]);
        assert_eq!(out.status.code(), Some(120));
        let err = stderr(&out);
        assert!(err.contains("stack overflow"), "{err}");
        assert!(err.contains("recurse"), "{err}");
        assert_partial_with_samples(&data);
    }
}

#[test]
fn exit_status_is_passed_through() {
    let (out, data) = crash("cortex-m4", &["exit", "7"], &[]);
    assert_eq!(out.status.code(), Some(7));
    // exit() without arp_finish: the file is written at exit, with the
    // plain section still open it is marked partial
    assert!(data.lines().count() >= 6, "{data}");
}

#[test]
fn cycle_limit_and_timeout_stop_cleanly() {
    let (out, data) = crash("cortex-m4", &["loop"], &["--max-cycles", "2000000"]);
    assert_eq!(out.status.code(), Some(122), "{}", stderr(&out));
    assert!(stderr(&out).contains("stopped after 2000000 cycles"));
    assert_partial_with_samples(&data);

    // a wall-clock stop: how far the guest got in 0.3 s depends on the
    // host's load, so the file holds at most the 3 samples the guest
    // records before its loop, whatever was written being whole
    let (out, data) = crash("rv32imac", &["loop"], &["--timeout", "0.3"]);
    assert_eq!(out.status.code(), Some(123), "{}", stderr(&out));
    assert!(partial_samples(&data) <= 3, "{data}");
}

#[test]
fn ctrl_c_stops_with_report_and_partial_file() {
    let dir = scratch("ctrl-c");
    let file = dir.join("data.arp");
    let mut child = Command::new(sim_host_bin())
        .args(["run", "--target", "cortex-m4"])
        .arg(guest("cortex-m4", "crash"))
        .arg("-o")
        .arg(&file)
        .args(["--", "loop"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt only once the guest says it has recorded its samples (its
    // first line), however slow the machine is: from then on it loops.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).unwrap();
    assert!(first.contains("recorded 3 samples"), "{first}");
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    drop(stdout);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("interrupted"), "{err}");
    assert!(err.contains("instructions"), "the report is printed: {err}");
    assert_partial_with_samples(&std::fs::read_to_string(&file).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_a_setup_error() {
    let run = |args: &[&str]| {
        Command::new(sim_host_bin())
            .arg("run")
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["/etc/hostname"]);
    assert_eq!(out.status.code(), Some(125));
    assert!(stderr(&out).contains("not a valid ELF"), "{}", stderr(&out));

    let elf = guest("rv32imac", "filter");
    let out = run(&[elf.to_str().unwrap(), "--target", "cortex-m4"]);
    assert_eq!(out.status.code(), Some(125));
    assert!(stderr(&out).contains("ELF for RISC-V, but target `cortex-m4` is arm"));

    let out = run(&[elf.to_str().unwrap(), "--target", "cortex-m9"]);
    assert_eq!(out.status.code(), Some(125));
    assert!(stderr(&out).contains("unknown target `cortex-m9`"));

    // a segment outside the target's memory map: rv32 code at 0x10000000
    // run on a target file whose only code region is elsewhere
    let dir = scratch("bad-map");
    let text = std::fs::read_to_string(e2e_tests::repo_root().join("targets/rv32imac.toml"))
        .unwrap()
        .replace("start = 0x10000000", "start = 0x30000000");
    std::fs::write(dir.join("moved.toml"), text).unwrap();
    let out = run(&[
        elf.to_str().unwrap(),
        "--target-file",
        dir.join("moved.toml").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(125));
    let err = stderr(&out);
    assert!(err.contains("is outside every memory region"), "{err}");
    assert!(err.contains("0x10000000"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_branch_to_arm_state_is_named_as_such_on_thumb_only_cores() {
    for target in ["cortex-m0", "cortex-m4"] {
        let (out, data) = crash(target, &["armstate"], &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(120), "{target}: {err}");
        assert!(err.contains("ARM-state address"), "{target}: {err}");
        assert!(!err.contains("undefined instruction"), "{target}: {err}");
        assert_partial_with_samples(&data);
    }
}

/// A read that stops the run stops it at the reading instruction, also
/// when the rest of its block would go on: the same block's semihosting
/// print never runs. Both kinds of stop a data access can request: an
/// unmapped address (Unicorn's invalid access), and a peripheral the board
/// names but sim-host does not model or a register a modelled block lacks
/// (an MMIO callback calling `uc_emu_stop`), with the charge in the translation (where the exit is
/// taken in the access's slow path: `accesscheck.patch`) and on the hook
/// path (where the translated code tests it after the access).
#[test]
fn a_faulting_read_stops_before_the_rest_of_its_block() {
    for charge in ["translation", "hook"] {
        for (target, addr, says) in [
            ("cortex-m4", "90000000", "read of unmapped memory"),
            ("cortex-m4", "40000000", "CMSDK APB peripherals"),
            // a register a modelled block (UART0, issue 40) does not have
            ("cortex-m4", "40004100", "UART0 offset 0x100"),
            ("rv32imac", "90000000", "read of unmapped memory"),
            ("rv32imac", "40000000", "APB peripherals"),
        ] {
            let mut cmd = Command::new(sim_host_bin());
            if charge == "hook" {
                cmd.env("SIM_HOST_CHARGE", "hook");
            }
            let dir = scratch(&format!("readprint-{target}-{addr}-{charge}"));
            let out = cmd
                .args(["run", "--target", target, "-q", "-o"])
                .arg(dir.join("data.arp"))
                .arg(guest(target, "crash"))
                .args(["--", "readprint", addr])
                .output()
                .unwrap();
            let _ = std::fs::remove_dir_all(&dir);
            let what = format!("{target} {addr} ({charge})");
            let stdout = String::from_utf8_lossy(&out.stdout);
            let err = stderr(&out);
            assert_ne!(out.status.code(), Some(0), "{what}: {err}");
            assert!(err.contains(says), "{what}: {err}");
            assert!(stdout.contains("recorded 3 samples"), "{what}: {stdout}");
            assert!(
                !stdout.contains("printed after the read"),
                "{what}: {stdout}"
            );
        }
    }
}
