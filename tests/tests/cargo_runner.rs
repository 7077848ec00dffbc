//! `sim-host run` as a cargo runner (docs/cargo-runner.md): cargo calls
//! `<runner> ELF [guest args]`; with `runner = "sim-host run --target T"`
//! and `cargo run -- -- ARGS`, that is `sim-host run --target T ELF -- ARGS`,
//! and the guest's exit status comes back.

use e2e_tests::{guest, scratch, sim_host_bin};
use std::process::Command;

#[test]
fn runner_form_passes_arguments_and_exit_status() {
    let elf = guest("cortex-m4", "crash");
    let dir = scratch("runner");
    let run = |args: &[&str]| {
        Command::new(sim_host_bin())
            .current_dir(&dir)
            .args(["run", "--target", "cortex-m4", "-q"])
            .arg(&elf)
            .args(args)
            .output()
            .unwrap()
    };
    // cargo run -- -- exit 7
    assert_eq!(run(&["--", "exit", "7"]).status.code(), Some(7));
    // cargo run (no guest arguments): crash without a request exits 0
    assert_eq!(run(&[]).status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}
