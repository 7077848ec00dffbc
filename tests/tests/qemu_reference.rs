//! Reference check (foundation issue): each example's build runs under
//! `qemu-system-arm` (an emulator independent of ours) and prints exactly the
//! expected output, so the guests are known good before our simulator runs
//! them. Ignored, with the reason, where qemu-system-arm is not installed
//! (and failed for it under `CI`). Issue 25: on every core QEMU has
//! (cortex-m3, m4, m4f, m7, m33), our simulator's output and exit status
//! equal QEMU's for the same ELF, hard-float kernels included.

use e2e_tests::{expected_output, guest, require_tool, scratch, sim_host_bin};
use sim_host::model::target;
use std::process::Command;
use std::time::Duration;

fn qemu_command(program: &str, machine: &str, cpu: Option<&str>, elf: &std::path::Path) -> Command {
    let mut cmd = Command::new("timeout");
    cmd.arg(Duration::from_secs(120).as_secs().to_string())
        .arg(program)
        .args([
            "-M", machine, "-display", "none", "-serial", "none", "-monitor", "none",
        ])
        // the guest's semihosting console, alone on stdout
        .args(["-chardev", "stdio,id=semihosting"])
        .args([
            "-semihosting-config",
            "enable=on,target=native,chardev=semihosting",
        ]);
    if let Some(cpu) = cpu {
        cmd.args(["-cpu", cpu]);
    }
    cmd.arg("-kernel").arg(elf);
    cmd
}

fn run_qemu(program: &str, machine: &str, cpu: Option<&str>, elf: &std::path::Path) -> String {
    let out = qemu_command(program, machine, cpu, elf)
        .output()
        .expect("qemu starts");
    assert!(
        out.status.success(),
        "qemu failed on {}: {}\n{}",
        elf.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("guest output is UTF-8")
}

#[test]
#[cfg_attr(
    not(has_qemu_arm),
    ignore = "needs qemu-system-arm (scripts/bootstrap.sh installs it)"
)]
fn filter_runs_under_qemu_with_expected_checksums() {
    let mut ran = Vec::new();
    for name in target::builtin_names() {
        let t = target::builtin(&name).unwrap();
        let Some(q) = &t.guest.qemu else { continue };
        require_tool(&q.program);
        for variant in ["filter", "filter-none"] {
            let elf = guest(&name, variant);
            let output = run_qemu(&q.program, &q.machine, q.cpu.as_deref(), &elf);
            assert_eq!(output, expected_output("filter"), "{name}/{variant}");
        }
        ran.push(name);
    }
    assert!(
        ran.iter().any(|n| n == "cortex-m4"),
        "cortex-m4 names its qemu reference machine: {ran:?}"
    );
}

/// Issue 25: the same ELF prints the same and exits the same under QEMU
/// and under our simulator, on every built-in core that names a QEMU
/// machine. The float kernels (dsp, microbench's FPU kernels) run with the
/// FPU on the cores that have one.
#[test]
#[cfg_attr(
    not(has_qemu_arm),
    ignore = "needs qemu-system-arm (scripts/bootstrap.sh installs it)"
)]
fn every_core_qemu_has_prints_and_exits_as_under_qemu() {
    let mut ran = Vec::new();
    for name in target::builtin_names() {
        let t = target::builtin(&name).unwrap();
        let Some(q) = &t.guest.qemu else { continue };
        require_tool(&q.program);
        for example in ["filter", "statemachine", "dsp", "accuracy", "microbench"] {
            let elf = guest(&name, example);
            let reference = qemu_command(&q.program, &q.machine, q.cpu.as_deref(), &elf)
                .output()
                .expect("qemu starts");
            let ours = Command::new(sim_host_bin())
                .args(["run", "-q", "--target", &name])
                .arg(&elf)
                .output()
                .expect("sim-host runs");
            assert_eq!(
                String::from_utf8_lossy(&ours.stdout),
                String::from_utf8_lossy(&reference.stdout),
                "{name}/{example}: our output, then QEMU's ({})",
                String::from_utf8_lossy(&ours.stderr)
            );
            assert_eq!(
                ours.status.code(),
                reference.status.code(),
                "{name}/{example}: exit status"
            );
        }
        ran.push(name);
    }
    for core in ["cortex-m4f", "cortex-m7", "cortex-m33"] {
        assert!(ran.iter().any(|n| n == core), "{core} has QEMU: {ran:?}");
    }
}

/// The expected checksums are not just what the guest printed once: the
/// same C file compiled for the host (ARP_NONE, unsigned char like the
/// ARM and RISC-V ABIs) computes them independently.
#[test]
#[cfg_attr(
    not(has_gcc),
    ignore = "needs a host gcc (scripts/bootstrap.sh installs it)"
)]
fn expected_checksums_agree_with_a_native_build() {
    require_tool("gcc");
    let root = e2e_tests::repo_root();
    let dir = scratch("filter-native");
    let exe = dir.join("filter-native");
    let status = Command::new("gcc")
        .args(["-O2", "-funsigned-char", "-DARP_NONE"])
        .arg(format!("-I{}", root.join("guest-shim/include").display()))
        .arg(root.join("guest-shim/examples/filter/filter.c"))
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap();
    assert!(status.success());
    let out = Command::new(&exe).output().unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        expected_output("filter")
    );
}

/// Issue 31: the float guest of the emulation benchmark (dsp's float
/// kernels repeated, the -bench build; -long is the same code repeated
/// longer) prints under our simulator exactly what it prints under QEMU on
/// cortex-m4f, whose FPU runs it.
#[test]
#[cfg_attr(
    not(has_qemu_arm),
    ignore = "needs qemu-system-arm (scripts/bootstrap.sh installs it)"
)]
fn float_bench_guest_prints_as_under_qemu() {
    let name = "cortex-m4f";
    let t = target::builtin(name).unwrap();
    let q = t
        .guest
        .qemu
        .as_ref()
        .expect("cortex-m4f names a qemu machine");
    require_tool(&q.program);
    let elf = guest(name, "dsp-bench");
    let reference = run_qemu(&q.program, &q.machine, q.cpu.as_deref(), &elf);
    assert!(
        reference.contains("float kernels x 4000: "),
        "the -bench build repeats the float kernels: {reference}"
    );
    let ours = Command::new(sim_host_bin())
        .args(["run", "-q", "--target", name])
        .arg(&elf)
        .output()
        .expect("sim-host runs");
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&ours.stdout), reference);
}
