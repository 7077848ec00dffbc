//! What README's "Using it" says of a guest's command line and of ARP's
//! call order (issue 39), on the `cmdline` example: picolibc's semihosting
//! start-up gives `argv = {"program-name", the ELF, args...}`, split at
//! spaces, under sim-host and under qemu alike (qemu's argv[1] is the
//! `-kernel` path as written, sim-host's the ELF's file name); an ARP
//! call before `arp_start` stops the run with exit 121, naming the call's
//! place.

use e2e_tests::{guest, require_tool, scratch, sim_host_bin};
use std::process::{Command, Output};

fn run(target: &str, args: &[&str]) -> Output {
    let dir = scratch("cmdline");
    let elf = dir.join("prog.elf");
    std::fs::copy(guest(target, "cmdline"), &elf).unwrap();
    Command::new(sim_host_bin())
        .current_dir(&dir)
        .args(["run", "-q", "--target", target])
        .arg(&elf)
        .arg("--")
        .args(args)
        .output()
        .unwrap()
}

/// The lines the guest prints for `argv`.
fn argv_lines(argv: &[&str]) -> String {
    let mut text = format!("argc={}\n", argv.len());
    for (i, a) in argv.iter().enumerate() {
        text += &format!("argv[{i}]=\"{a}\"\n");
    }
    text
}

#[test]
fn argv_is_program_name_then_the_elf_then_the_arguments_split_at_spaces() {
    for target in ["cortex-m0", "cortex-m4", "rv32imac"] {
        let out = run(target, &["a", "b c"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{target}: {stdout}");
        let expected = argv_lines(&["program-name", "prog.elf", "a", "b", "c"]) + "in a kernel\n";
        assert_eq!(stdout, expected, "{target}");
    }
}

#[test]
fn an_arp_call_before_arp_start_stops_the_run_with_121() {
    for target in ["cortex-m0", "cortex-m4", "rv32imac"] {
        let out = run(target, &["early"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(121), "{target}: {stderr}");
        // the guest stopped at the call: nothing after it ran
        assert_eq!(
            stdout,
            argv_lines(&["program-name", "prog.elf", "early"]),
            "{target}"
        );
        assert!(
            stderr.contains("sim-host: main+0x")
                && stderr.ends_with("arp_start has not been called\n"),
            "{target}: {stderr}"
        );
    }
}

#[test]
#[cfg_attr(
    not(has_qemu_arm),
    ignore = "needs qemu-system-arm (scripts/bootstrap.sh installs it)"
)]
fn qemu_gives_the_same_argv_with_the_kernel_path_as_written() {
    require_tool("qemu-system-arm");
    let dir = scratch("cmdline-qemu");
    let elf = dir.join("prog.elf");
    std::fs::copy(guest("cortex-m3", "cmdline"), &elf).unwrap();
    let out = Command::new("timeout")
        .arg("120")
        .arg("qemu-system-arm")
        .args(["-M", "mps2-an385", "-cpu", "cortex-m3", "-display", "none"])
        .args(["-serial", "none", "-monitor", "none"])
        .args(["-chardev", "stdio,id=semihosting"])
        .args([
            "-semihosting-config",
            "enable=on,target=native,chardev=semihosting",
        ])
        .arg("-kernel")
        .arg(&elf)
        .args(["-append", "a b"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = elf.to_str().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        argv_lines(&["program-name", path, "a", "b"]) + "in a kernel\n"
    );
}
