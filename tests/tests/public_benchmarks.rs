//! The published benchmarks on the board presets (issue 27,
//! `scripts/public-benchmarks/run`). CoreMark and Dhrystone 2.1 are
//! third-party code, never in this repository, so this test runs only by
//! hand, given checkouts (it is not part of `make test`, and CI has none):
//!
//! ```text
//! PUBLIC_BENCHMARKS_COREMARK=<eembc/coremark checkout> \
//! PUBLIC_BENCHMARKS_DHRYSTONE=<folder with dhry_1.c, dhry_2.c, dhry.h> \
//!   cargo test --release -p e2e-tests --test public_benchmarks -- --ignored
//! ```
//!
//! (either variable alone runs that benchmark only). What it checks holds
//! whatever the memory models' numbers are:
//! - every run's output validates (the script's exit status: CoreMark's
//!   CRCs, Dhrystone's final values against its "should be" lines);
//! - in every memory configuration of one ELF, the cycles less the fetch
//!   and data stalls the report gives are the same: the stall counters
//!   account for every cycle the memory system adds, and the core's own
//!   cycles do not depend on the memory configuration.

use e2e_tests::{repo_root, scratch, sim_host_bin};
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Command;

const COREMARK: &str = "PUBLIC_BENCHMARKS_COREMARK";
const DHRYSTONE: &str = "PUBLIC_BENCHMARKS_DHRYSTONE";

/// The script's records of every validated run.
fn run_script() -> Vec<Value> {
    let coremark = std::env::var_os(COREMARK);
    let dhrystone = std::env::var_os(DHRYSTONE);
    assert!(
        coremark.is_some() || dhrystone.is_some(),
        "set {COREMARK} and/or {DHRYSTONE} to the checkouts (see this file's header)"
    );
    let dir = scratch("public-benchmarks");
    let json = dir.join("runs.json");
    let mut cmd = Command::new(repo_root().join("scripts/public-benchmarks/run"));
    cmd.arg("--sim-host").arg(sim_host_bin());
    cmd.arg("--out")
        .arg(dir.join("out"))
        .arg("--json")
        .arg(&json);
    if let Some(path) = coremark {
        cmd.arg("--coremark").arg(path);
    }
    if let Some(path) = dhrystone {
        cmd.arg("--dhrystone").arg(path);
    }
    let out = cmd.output().expect("scripts/public-benchmarks/run starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "a run failed or did not validate:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&json).expect("the script wrote its JSON");
    let runs: Value = serde_json::from_str(&text).expect("JSON");
    runs.as_array().expect("a list").clone()
}

#[test]
#[ignore = "needs CoreMark and/or Dhrystone 2.1 checkouts (third-party code, never in the \
            repository): PUBLIC_BENCHMARKS_COREMARK=<dir> cargo test --release -p e2e-tests \
            --test public_benchmarks -- --ignored"]
fn stalls_account_for_every_cycle_the_memory_adds() {
    let runs = run_script();
    // (benchmark, target, ELF variant) -> configuration -> cycles less stalls
    let mut core_cycles: BTreeMap<(String, String, String), Vec<(String, u64)>> = BTreeMap::new();
    for run in &runs {
        let field = |k: &str| run[k].as_str().expect(k).to_string();
        let number = |k: &str| run[k].as_u64().expect(k);
        let stalls = number("fetch_stall") + number("data_stall");
        core_cycles
            .entry((field("bench"), field("target"), field("variant")))
            .or_default()
            .push((field("configuration"), number("cycles") - stalls));
    }
    let mut compared = 0;
    for ((bench, target, variant), configurations) in &core_cycles {
        let (first, cycles) = &configurations[0];
        for (configuration, other) in &configurations[1..] {
            assert_eq!(
                other, cycles,
                "{bench} on {target}{variant}: cycles less stalls, {configuration} against {first}"
            );
            compared += 1;
        }
    }
    assert!(compared > 0, "no two configurations of one ELF were run");
}
