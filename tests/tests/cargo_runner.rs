//! `sim-host run` as a cargo runner (docs/cargo-runner.md). Cargo calls
//! `<runner words> ELF [args given after cargo run's --]`, so both runner
//! lines work and pass the guest's exit status back:
//! - `runner = "sim-host run --target T --"` (the form): cargo runs
//!   `sim-host run --target T -- ELF ARGS`, the ELF first after `--`;
//! - `runner = "sim-host run --target T"` with `cargo run -- -- ARGS`:
//!   `sim-host run --target T ELF -- ARGS`.

use e2e_tests::{guest, scratch, sim_host_bin};
use std::process::Command;

#[test]
fn both_runner_forms_pass_arguments_and_exit_status() {
    let elf = guest("cortex-m4", "crash");
    let elf = elf.to_str().unwrap();
    let dir = scratch("runner");
    let run = |args: &[&str]| {
        Command::new(sim_host_bin())
            .current_dir(&dir)
            .args(["run", "--target", "cortex-m4", "-q"])
            .args(args)
            .output()
            .unwrap()
    };
    // runner = "sim-host run --target cortex-m4 --"; cargo run -- exit 7
    assert_eq!(run(&["--", elf, "exit", "7"]).status.code(), Some(7));
    // the same runner, cargo run without arguments
    assert_eq!(run(&["--", elf]).status.code(), Some(0));
    // runner = "sim-host run --target cortex-m4"; cargo run -- -- exit 7
    assert_eq!(run(&[elf, "--", "exit", "7"]).status.code(), Some(7));
    assert_eq!(run(&[elf]).status.code(), Some(0));
    // no ELF at all: a setup error that says how to call it
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cargo runner"));
    let _ = std::fs::remove_dir_all(&dir);
}
