//! The branch-dense benchmark guest (`guest-shim/examples/statemachine`,
//! issue 19): under `sim-host run`, on cortex-m4 and rv32imac, instrumented
//! and not, it prints exactly its expected-output.txt, which is what the
//! same C file compiled for the host prints (token counts and checksum
//! computed by an independent compiler and machine), and its kernel
//! records one sample per pass.

use arpsim::query::Dataset;
use e2e_tests::{expected_output, guest, repo_root, require_tool, scratch, sim_host_bin};
use std::process::Command;

const TARGETS: [&str; 2] = ["cortex-m4", "rv32imac"];

/// The output of the host build (`-DARP_NONE`, default PASSES and LENGTH).
fn native_output() -> String {
    require_tool("gcc");
    let root = repo_root();
    let dir = scratch("statemachine-native");
    let exe = dir.join("statemachine");
    let status = Command::new("gcc")
        .args(["-O2", "-DARP_NONE"])
        .arg(format!("-I{}", root.join("guest-shim/include").display()))
        .arg(root.join("guest-shim/examples/statemachine/statemachine.c"))
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap();
    assert!(status.success(), "host gcc builds statemachine.c");
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// expected-output.txt, which the guests must print, is what the same C
/// file prints compiled for the host.
#[test]
#[cfg_attr(
    not(has_gcc),
    ignore = "needs a host gcc (scripts/bootstrap.sh installs it)"
)]
fn statemachine_expected_output_is_what_a_host_build_prints() {
    assert_eq!(
        native_output(),
        expected_output("statemachine"),
        "expected-output.txt is what the host build prints"
    );
}

#[test]
fn statemachine_prints_its_expected_output_and_samples_every_pass() {
    let expected = expected_output("statemachine");
    // "statemachine: P passes of L bytes, ..." — the pass count the guest ran
    let passes: u64 = expected
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("the first line names the number of passes");
    for target in TARGETS {
        for variant in ["statemachine", "statemachine-none"] {
            let dir = scratch(&format!("statemachine-{target}-{variant}"));
            let data = dir.join("data.arp");
            let mut cmd = Command::new(sim_host_bin());
            cmd.args(["run", "--target", target, "-q"])
                .arg(guest(target, variant));
            if variant == "statemachine" {
                cmd.args(["--mode", "record_all", "-o"]).arg(&data);
            }
            let out = cmd.current_dir(&dir).output().unwrap();
            assert!(
                out.status.success(),
                "{target}/{variant}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                String::from_utf8(out.stdout).unwrap(),
                expected,
                "{target}/{variant}"
            );
            if variant == "statemachine" {
                // one kernel sample (section 1 inside section 2) per pass
                let dataset = Dataset::load(&data).unwrap();
                let kernel: u64 = dataset
                    .traces()
                    .filter(|t| {
                        (0..t.stack_length())
                            .map(|d| t.stack_pos(d).unwrap())
                            .eq([2u16, 1])
                    })
                    .map(|t| t.count())
                    .sum();
                assert_eq!(kernel, passes, "{target}: kernel samples");
            }
        }
    }
}
