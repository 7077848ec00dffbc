//! The two charge paths count the same (issue 31, ARCHITECTURE.md decision
//! 2): every guest example of every target, run with the charge in the
//! translation and with the block hook charging every block, ends the
//! same way with the same cycles, instructions, console output, sections,
//! warnings and per-core figures, and writes the same data.arp, byte for
//! byte. The exactness tests (microbench, accuracy, golden, ...) run on
//! the default path, the translation; this test ties the hook path to it.
//! `SIM_HOST_CHARGE=hook cargo test` runs all of them on the hook path.

use e2e_tests::{guest, guests_dir, scratch, sim_host_bin};
use sim_host::engine::{self, ChargePath, RunOptions, RunOutcome};
use sim_host::host::arp_host::ArpOptions;
use sim_host::image::elf::GuestImage;
use sim_host::model::target;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGETS: &[&str] = &[
    "cortex-m0",
    "cortex-m0plus",
    "cortex-m3",
    "cortex-m33",
    "cortex-m4",
    "cortex-m4f",
    "cortex-m7",
    // an XIP cache: its blocks keep the hook for their fetch stalls
    "rp2040",
    // the RP2350's XIP cache on the RISC-V side (QMI transfers, chaining)
    "rp2350",
    // the same cache on the RP2350's Arm side (Cortex-M33)
    "rp2350-arm",
    "rv32imac",
    "sifive-e31",
    // a flash accelerator: its blocks keep the hook for their fetch stalls
    "stm32f407",
    // L1 caches: blocks outside the TCMs keep the hook for their fetch stalls
    "stm32f746",
];

/// The examples built for `target`, without the long benchmark builds.
fn examples(target: &str) -> Vec<String> {
    // makes sure the guests are built (filter does not fit every target)
    guest(target, "arpcalls");
    let mut names: Vec<String> = std::fs::read_dir(guests_dir().join(target))
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".elf")?.to_owned();
            (!stem.contains("-bench") && !stem.contains("-long")).then_some(stem)
        })
        .collect();
    names.sort();
    names
}

/// What a run counted and said, and the data.arp it wrote.
fn run(target: &str, example: &str, path: ChargePath, dir: &Path) -> (String, Option<Vec<u8>>) {
    let t = target::builtin(target).unwrap();
    let image = GuestImage::load(&guest(target, example), &t).unwrap();
    let arp = dir.join(format!("{example}-{path:?}.arp"));
    let options = RunOptions {
        charge: Some(path),
        max_cycles: Some(4_000_000_000),
        cmdline: example.into(),
        arp: ArpOptions {
            file: Some(arp.clone()),
            ..Default::default()
        },
        ..Default::default()
    };
    let summary = match engine::run(image, t, options) {
        Ok(outcome) => summarize(&outcome),
        Err(e) => format!("error: {e}"),
    };
    (summary, std::fs::read(&arp).ok())
}

fn summarize(o: &RunOutcome) -> String {
    format!(
        "stop {:?}\ncycles {} instructions {}\nconsole {:?} ({} bytes)\nsections {:?}\nwarnings {:?}\n\
         unpriced {:?}\ncores {:?}\nthreads {}\narp {:?} {:?}\nperipherals {:?}",
        o.stop,
        o.cycles,
        o.instructions,
        String::from_utf8_lossy(&o.console),
        o.console_bytes,
        o.sections,
        o.warnings,
        o.unpriced,
        o.cores,
        o.threads_created,
        o.arp_file.as_ref().map(|(_, records, partial)| (records, partial)),
        o.arp_error,
        o.peripheral_accesses,
    )
}

#[test]
fn every_guest_counts_the_same_on_both_paths() {
    let dir = scratch("charge-paths");
    let mut differ = Vec::new();
    let mut compared = 0;
    for target in TARGETS {
        for example in examples(target) {
            let (hook, hook_arp) = run(target, &example, ChargePath::Hook, &dir);
            let (tcg, tcg_arp) = run(target, &example, ChargePath::Translation, &dir);
            if hook != tcg {
                differ.push(format!(
                    "{target} {example}:\n--- hook\n{hook}\n--- translation\n{tcg}"
                ));
            } else if hook_arp != tcg_arp {
                differ.push(format!("{target} {example}: data.arp differs"));
            }
            compared += 1;
        }
    }
    assert!(compared > 100, "only {compared} guests found");
    assert!(
        differ.is_empty(),
        "the paths differ on {} of {compared} guests:\n{}",
        differ.len(),
        differ.join("\n\n")
    );
}

/// data.arp of the translation path is the same from one run to the next.
#[test]
fn data_arp_is_the_same_across_runs() {
    let dir = scratch("charge-runs");
    for (target, example) in [
        ("cortex-m4", "filter"),
        ("cortex-m4", "statemachine"),
        ("rv32imac", "arpcalls"),
        ("cortex-m0", "microbench"),
    ] {
        let first = run(target, example, ChargePath::Translation, &dir);
        let second = run(target, example, ChargePath::Translation, &dir);
        assert!(first.1.is_some(), "{target} {example}: no data.arp");
        assert_eq!(first, second, "{target} {example}");
    }
}

/// The binary takes the path `SIM_HOST_CHARGE` names, and says the same
/// on both but for its host time.
#[test]
fn the_binary_counts_the_same_on_both_paths() {
    let dir = scratch("charge-binary");
    let elf = guest("cortex-m4", "statemachine");
    let run = |path: &str| {
        let arp: PathBuf = dir.join(format!("{path}.arp"));
        let out = Command::new(sim_host_bin())
            .env("SIM_HOST_CHARGE", path)
            .args(["run", "--target", "cortex-m4", "-o"])
            .arg(&arp)
            .arg(&elf)
            .output()
            .unwrap();
        assert!(out.status.success(), "{path}: {out:?}");
        let text: String = String::from_utf8_lossy(&out.stdout)
            .lines()
            .chain(String::from_utf8_lossy(&out.stderr).lines())
            .filter(|l| !l.contains("host time") && !l.contains("records written"))
            .map(|l| format!("{l}\n"))
            .collect();
        (text, std::fs::read(&arp).unwrap())
    };
    assert_eq!(run("hook"), run("translation"));
}
