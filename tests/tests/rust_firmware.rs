//! Embedded Rust as its users write it (issue 39, part 6): the cortex-m-rt
//! firmware of `tests/rust-firmware/` (crates cortex-m 0.7, cortex-m-rt
//! 0.7, cortex-m-semihosting, panic-semihosting, fetched by cargo from
//! crates.io and pinned by its Cargo.lock) built for every Cortex-M target
//! with that target's memory map (`scaffold::memory_x`, what `sim-host new
//! --lang rust` writes) and no extra linker flag, run unmodified.
//!
//! What the firmware does (its `src/main.rs`): `DCB::enable_trace`,
//! `DWT::unlock`, `DWT::enable_cycle_counter` (not on ARMv6-M, which has
//! no cycle counter), SysTick every R + 1 = 20,000 cycles with a handler
//! counting ticks, then four rounds, each ARP kernel 1 (loop index = the
//! round), each waiting with `wfi` until the tick count reaches 1, 2, 4
//! and 8, reading `DWT::cycle_count()` first and last inside the kernel.
//!
//! The relation derived by hand. A kernel's sample S is the cycles from
//! the enter call's return up to and including the leave call (the `bl`);
//! a counter read returns the count at the start of the reading
//! instruction (tests/tests/clocks.rs). So S = D + K, with D the
//! counter's span (first read up to, not including, the second) and K the
//! cost of the code outside it: what runs between the enter call's return
//! and the first read, and from the second read to the leave call's `bl`
//! (the second load, the subtraction, the leave call's argument moves and
//! the `bl`). Every round runs the same code (`measure_round`, never
//! inlined) on the same path into and out of the kernel, so K is the same
//! in every round that does not start with cold caches or a cold branch
//! predictor: rounds 1 to 3 (the first may pay its first fetches, on the
//! boards with a modelled flash or cache, outside the span). K is a
//! handful of instructions (at most about 12, each at most 4 cycles on
//! these cores with warm memory): 2 <= K <= 48. The rounds wait for 1, 1,
//! 2 and 4 ticks, so with K equal in rounds 1 to 3 the counter agrees with
//! the simulated cycles exactly over spans from 20,000 to 80,000 cycles,
//! whatever `wfi` costs and however often it wakes.
//!
//! Each round waits for n ticks from somewhere between two ticks: its
//! span lies between (n - 1)(R + 1) and n(R + 1) plus the last tick's
//! entry, handler and return and the loop (at most 1,000 cycles).

use e2e_tests::firmware::Firmware;
use e2e_tests::{repo_root, scratch, sim_host_bin};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// SysTick's period in cycles (RELOAD + 1 in the firmware).
const PERIOD: u64 = 20_000;
/// The tick counts the rounds wait for (ROUNDS in the firmware).
const ROUNDS: [u64; 4] = [1, 2, 4, 8];

/// The firmware's ELFs for one target.
struct Built {
    firmware: PathBuf,
    panics: PathBuf,
    no_unlock: PathBuf,
}

fn firmware_dir() -> PathBuf {
    repo_root().join("tests/rust-firmware")
}

/// Builds the firmware for `target` into `dir`.
fn build(target: &str, dir: &Path) -> Built {
    let t = sim_host::model::target::builtin(target).unwrap();
    let triple = t
        .guest
        .rust_target
        .clone()
        .expect("a Cortex-M target's triple");
    // arp-guest's build script compiles the ARP stubs with it
    e2e_tests::require_tool("arm-none-eabi-gcc");
    let memory = e2e_tests::firmware::memory_x(&t, dir);
    let built = Firmware {
        project: "rust-firmware",
        triple: &triple,
        memory_x: Some(&memory),
        bins: &["firmware", "panics", "no_unlock"],
    }
    .build(dir);
    Built {
        firmware: built[0].clone(),
        panics: built[1].clone(),
        no_unlock: built[2].clone(),
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `sim-host run --target target elf` with a JSON report in `dir`, and
/// its data.arp there if `record`.
fn run(target: &str, elf: &Path, dir: &Path, record: bool) -> (Output, serde_json::Value) {
    let report = dir.join(format!(
        "{}.json",
        elf.file_stem().unwrap().to_string_lossy()
    ));
    let mut sim_host = Command::new(sim_host_bin());
    sim_host.args(["run", "-q", "--target", target, "--max-cycles", "10000000"]);
    if record {
        sim_host.arg("-o").arg(dir.join("data.arp"));
    }
    let out = sim_host
        .arg("--report-json")
        .arg(&report)
        .arg(elf)
        .output()
        .expect("sim-host starts");
    let json = std::fs::read_to_string(&report)
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(serde_json::Value::Null);
    (out, json)
}

/// The samples of kernel 1 in data.arp, in the order they were recorded.
fn samples(file: &Path) -> Vec<u64> {
    use arpsim::query::{Dataset, TraceValue};
    let mut out = Vec::new();
    for trace in Dataset::load(file).unwrap().traces() {
        if let Some(TraceValue::Sample(value)) = trace.value(0) {
            assert_eq!(trace.stack_pos(trace.stack_length() - 1), Some(1));
            out.push(value.as_f64() as u64);
        }
    }
    out
}

/// The 1-based line of the first line of the firmware's `file` holding
/// `what`.
fn line_of(file: &str, what: &str) -> usize {
    let source = std::fs::read_to_string(firmware_dir().join(file)).unwrap();
    1 + source
        .lines()
        .position(|l| l.contains(what))
        .unwrap_or_else(|| panic!("{file} has no `{what}`"))
}

/// The number printed after `prefix` on a line of the guest's output.
fn printed(stdout: &str, prefix: &str) -> Option<u64> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .map(|rest| {
            rest.trim()
                .trim_end_matches(" cycles")
                .parse()
                .unwrap_or_else(|_| panic!("`{prefix}{rest}`"))
        })
}

fn runs_on(target: &str) {
    let dir = scratch(&format!("rust-firmware-{target}"));
    let built = build(target, &dir);
    let facts =
        sim_host::model::cores::facts(&sim_host::model::target::builtin(target).unwrap().cpu)
            .unwrap();
    let has_cyccnt = facts.profile != sim_host::model::cores::Profile::V6M;
    let m7 = facts.cpuid >> 4 & 0xfff == 0xC27;

    let (out, report) = run(target, &built.firmware, &dir, true);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{target}: {all}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(printed(&stdout, "ticks "), Some(8), "{target}: {all}");
    // the software lock: the M7's, unlocked (SLI = 1, SLK = 0); none elsewhere
    if has_cyccnt {
        let lsr = if m7 { "DWT_LSR 0x1" } else { "DWT_LSR 0x0" };
        assert!(stdout.lines().any(|l| l == lsr), "{target}: {all}");
    }
    let warnings = report["warnings"].as_array().unwrap();
    assert!(
        warnings.is_empty(),
        "{target}: no warning expected: {warnings:?}"
    );

    let sections = samples(&dir.join("data.arp"));
    assert_eq!(sections.len(), ROUNDS.len(), "{target}: {sections:?}");
    let mut from = 0;
    let mut offsets = Vec::new();
    for (round, (&until, &section)) in ROUNDS.iter().zip(&sections).enumerate() {
        let n = until - from;
        from = until;
        let prefix = format!("round {round} until tick {until}");
        let span = if has_cyccnt {
            let span = printed(&stdout, &format!("{prefix}: "))
                .unwrap_or_else(|| panic!("{target}: no `{prefix}: N cycles` in {all}"));
            offsets.push(section as i64 - span as i64);
            span
        } else {
            assert!(stdout.lines().any(|l| l == prefix), "{target}: {all}");
            section
        };
        assert!(
            (n - 1) * PERIOD <= span && span <= n * PERIOD + 1_000,
            "{target} round {round}: {span} cycles for {n} tick(s) of {PERIOD}"
        );
    }
    if has_cyccnt {
        // S = D + K, K the same in every warm round, a few instructions
        let k = offsets[1];
        assert!(
            offsets[1..].iter().all(|&o| o == k),
            "{target}: section - CYCCNT span per round {offsets:?} (sections {sections:?})"
        );
        assert!((2..=48).contains(&k), "{target}: K = {k}");
        assert!(offsets[0] >= k, "{target}: {offsets:?}");
    }

    // named in source terms without any linker flag: the kernel's function
    // and the line of its `arp_guest::kernel` call
    let line = line_of("src/main.rs", "arp_guest::kernel(");
    let name = report["sections"][0]["names"][0]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        name,
        format!("firmware::measure_round (main.rs:{line})"),
        "{target}: {report}"
    );

    if has_cyccnt {
        counter_without_unlock(target, m7, &built.no_unlock, &dir);
    }

    // panic-semihosting: the message on the console, exit status 1
    let (out, _) = run(target, &built.panics, &dir, false);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{target}: {all}");
    let line = line_of("src/bin/panics.rs", "panic!(");
    let expected =
        format!("about to panic\npanicked at src/bin/panics.rs:{line}:5:\nthe limit was 3\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        expected,
        "{target}: {all}"
    );
}

#[test]
#[cfg_attr(
    not(all(has_cargo, has_rust_thumbv6m)),
    ignore = "needs cargo and the Rust target thumbv6m-none-eabi (scripts/bootstrap.sh adds it)"
)]
fn a_cortex_m_rt_firmware_runs_unmodified_on_cortex_m0() {
    runs_on("cortex-m0");
}

#[test]
#[cfg_attr(
    not(all(has_cargo, has_rust_thumbv6m)),
    ignore = "needs cargo and the Rust target thumbv6m-none-eabi (scripts/bootstrap.sh adds it)"
)]
fn a_cortex_m_rt_firmware_runs_unmodified_on_cortex_m0plus() {
    runs_on("cortex-m0plus");
}

#[test]
#[cfg_attr(
    not(all(has_cargo, has_rust_thumbv6m)),
    ignore = "needs cargo and the Rust target thumbv6m-none-eabi (scripts/bootstrap.sh adds it)"
)]
fn a_cortex_m_rt_firmware_runs_unmodified_on_rp2040() {
    runs_on("rp2040");
}

#[test]
#[cfg_attr(
    not(all(has_cargo, has_rust_thumbv7m)),
    ignore = "needs cargo and the Rust target thumbv7m-none-eabi (scripts/bootstrap.sh adds it)"
)]
fn a_cortex_m_rt_firmware_runs_unmodified_on_cortex_m3() {
    runs_on("cortex-m3");
}

#[test]
#[cfg_attr(
    not(all(has_cargo, has_rust_thumbv7em)),
    ignore = "needs cargo and the Rust target thumbv7em-none-eabi (scripts/bootstrap.sh adds it)"
)]
fn a_cortex_m_rt_firmware_runs_unmodified_on_cortex_m4() {
    runs_on("cortex-m4");
}

#[test]
#[cfg_attr(
    not(all(has_cargo, has_rust_thumbv7em_hf)),
    ignore = "needs cargo and the Rust target thumbv7em-none-eabihf (scripts/bootstrap.sh adds it)"
)]
fn a_cortex_m_rt_firmware_runs_unmodified_on_cortex_m4f() {
    runs_on("cortex-m4f");
}

#[test]
#[cfg_attr(
    not(all(has_cargo, has_rust_thumbv7em_hf)),
    ignore = "needs cargo and the Rust target thumbv7em-none-eabihf (scripts/bootstrap.sh adds it)"
)]
fn a_cortex_m_rt_firmware_runs_unmodified_on_cortex_m7() {
    runs_on("cortex-m7");
}

#[test]
#[cfg_attr(
    not(all(has_cargo, has_rust_thumbv7em_hf)),
    ignore = "needs cargo and the Rust target thumbv7em-none-eabihf (scripts/bootstrap.sh adds it)"
)]
fn a_cortex_m_rt_firmware_runs_unmodified_on_stm32f407() {
    runs_on("stm32f407");
}

#[test]
#[cfg_attr(
    not(all(has_cargo, has_rust_thumbv7em_hf)),
    ignore = "needs cargo and the Rust target thumbv7em-none-eabihf (scripts/bootstrap.sh adds it)"
)]
fn a_cortex_m_rt_firmware_runs_unmodified_on_stm32f746() {
    runs_on("stm32f746");
}

#[test]
#[cfg_attr(
    not(all(has_cargo, has_rust_thumbv8m_main_hf)),
    ignore = "needs cargo and the Rust target thumbv8m.main-none-eabihf (scripts/bootstrap.sh adds it)"
)]
fn a_cortex_m_rt_firmware_runs_unmodified_on_cortex_m33() {
    runs_on("cortex-m33");
}

/// `no_unlock`: the counter enabled without `DWT::unlock()`. It counts
/// where the core has no software lock; the Cortex-M7's DWT, locked at
/// reset, ignores the enable, the counter reads 0, and the run says so
/// once in its warnings, naming the register and the remedy.
fn counter_without_unlock(target: &str, m7: bool, elf: &Path, dir: &Path) {
    let (out, report) = run(target, elf, dir, false);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{target}: {all}");
    let line = String::from_utf8_lossy(&out.stdout).into_owned();
    let words: Vec<&str> = line.split_whitespace().collect();
    let (from, to): (u64, u64) = match words[..] {
        ["cycle", "counter", "from", from, "to", to] => {
            (from.parse().unwrap(), to.parse().unwrap())
        }
        _ => panic!("{target}: {all}"),
    };
    let locked: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.contains("software lock"))
        .collect();
    if m7 {
        assert_eq!((from, to), (0, 0), "{target}: {all}");
        assert_eq!(locked.len(), 1, "{target}: {:?}", report["warnings"]);
        assert!(
            locked[0].starts_with(
                "DWT_CYCCNT (DWT Cycle Count) read as 0x0 while the Cortex-M7 DWT's software \
                 lock is set (1 write to it was ignored)"
            ),
            "{}",
            locked[0]
        );
        assert!(locked[0].contains("DWT::unlock()"), "{}", locked[0]);
        assert!(
            locked[0].contains("; first at no_unlock::__cortex_m_rt_main+"),
            "{}",
            locked[0]
        );
    } else {
        // cortex_m::asm::delay(1000) spins at least 1000 cycles
        assert!(to - from >= 1000, "{target}: {all}");
        assert!(locked.is_empty(), "{target}: {locked:?}");
    }
}
