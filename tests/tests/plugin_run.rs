//! `sim-host run --plugin` end to end: the C example plugin (built here
//! with the host gcc) and the Rust one (built here with rustc) record their
//! sets in data.arp after the host's, with values consistent with the
//! host's own counters; a bad plugin stops the run before it starts.

use arpsim::query::{Dataset, TraceValue};
use arpsim::types::{DataType, Value};
use e2e_tests::{expected_output, guest, repo_root, require_tool, scratch, sim_host_bin};
use std::path::{Path, PathBuf};
use std::process::Command;

fn build(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn c_plugin(dir: &Path) -> PathBuf {
    let so = dir.join("energy.so");
    build(
        Command::new("gcc")
            .args(["-shared", "-fPIC", "-O2", "-I"])
            .arg(repo_root().join("sim-host/include"))
            .arg("-o")
            .arg(&so)
            .arg(repo_root().join("sim-host/plugins/example-c/energy.c")),
    );
    so
}

/// The Rust example plugin, with its one dependency (the ABI crate),
/// built with rustc: cargo would contend for the running build's lock.
fn rust_plugin(dir: &Path) -> PathBuf {
    let abi = dir.join("libsim_host_plugin_abi.rlib");
    build(
        Command::new("rustc")
            .args(["--edition", "2021", "--crate-type", "rlib", "-O"])
            .args(["--crate-name", "sim_host_plugin_abi", "-o"])
            .arg(&abi)
            .arg(repo_root().join("sim-host/plugin-abi/src/lib.rs")),
    );
    let so = dir.join("libexample_rs.so");
    build(
        Command::new("rustc")
            .args(["--edition", "2021", "--crate-type", "cdylib", "-O"])
            .args(["--crate-name", "example_rs", "--extern"])
            .arg(format!("sim_host_plugin_abi={}", abi.display()))
            .arg("-o")
            .arg(&so)
            .arg(repo_root().join("sim-host/plugins/example-rs/src/lib.rs")),
    );
    so
}

fn sample(v: Option<TraceValue<'_>>) -> f64 {
    match v {
        Some(TraceValue::Sample(v)) => v.as_f64(),
        other => panic!("not a sample: {other:?}"),
    }
}

#[test]
#[cfg_attr(
    not(has_gcc),
    ignore = "needs a host gcc for the C example plugin (scripts/bootstrap.sh installs it)"
)]
fn plugins_record_after_the_host_sets() {
    require_tool("gcc");
    let dir = scratch("plugin-run");
    let (energy, ipc) = (c_plugin(&dir), rust_plugin(&dir));
    let file = dir.join("all.arp");
    let out = Command::new(sim_host_bin())
        .args(["run", "--target", "cortex-m4", "--mode", "record_all", "-q"])
        .args(["--measure", "cycles,instructions"])
        .arg(guest("cortex-m4", "filter"))
        .arg("-o")
        .arg(&file)
        .arg("--plugin")
        .arg(format!(
            "{}:pj_per_cycle=10,pj_per_insn=5",
            energy.display()
        ))
        .arg("--plugin")
        .arg(&ipc)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        expected_output("filter")
    );
    let data = Dataset::load(&file).unwrap();
    let types: Vec<_> = (0..data.data_mult())
        .map(|i| data.data_type(i).unwrap())
        .collect();
    assert_eq!(
        types,
        [
            DataType::ULLong,
            DataType::ULLong,
            DataType::Double,
            DataType::Double
        ]
    );
    assert!(data.n_traces() > 1600);
    for t in data.traces() {
        let (cycles, insns) = (sample(t.value(0)), sample(t.value(1)));
        let energy = sample(t.value(2));
        let ipc = sample(t.value(3));
        assert!(cycles > 0.0 && insns > 0.0, "{:?}", t.stack());
        let want = (cycles * 10.0 + insns * 5.0) / 1000.0;
        assert!((energy - want).abs() <= 1e-9 * want, "{energy} vs {want}");
        assert!((ipc - insns / cycles).abs() <= 1e-12, "{ipc}");
        assert!(matches!(
            t.value(3),
            Some(TraceValue::Sample(Value::Double(_)))
        ));
    }
}

/// A run with the plugin `arg` exits 125 saying `message`, before the
/// guest runs and without a data.arp.
fn assert_refused_before_the_run(dir: &Path, arg: &str, message: &str) {
    let out = Command::new(sim_host_bin())
        .args(["run", "-q"])
        .arg(guest("cortex-m4", "filter"))
        .arg("-o")
        .arg(dir.join("x.arp"))
        .arg("--plugin")
        .arg(arg)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125), "{arg}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(message), "{arg}: {stderr}");
    assert!(out.stdout.is_empty(), "the guest ran: {arg}");
    assert!(!dir.join("x.arp").exists());
}

#[test]
#[cfg_attr(
    not(has_gcc),
    ignore = "needs a host gcc for the C example plugin (scripts/bootstrap.sh installs it)"
)]
fn a_plugin_that_fails_to_start_stops_the_run_before_it_starts() {
    require_tool("gcc");
    let dir = scratch("plugin-bad");
    let energy = c_plugin(&dir);
    assert_refused_before_the_run(
        &dir,
        &format!("{}:fail", energy.display()),
        "failed with code 3: asked to fail",
    );
}

#[test]
fn a_missing_plugin_library_stops_the_run_before_it_starts() {
    let dir = scratch("plugin-absent");
    let absent = dir.join("absent.so").display().to_string();
    assert_refused_before_the_run(&dir, &absent, "cannot load the library");
}
