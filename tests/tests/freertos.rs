//! FreeRTOS as a test corpus (issue 39): the upstream kernel (V11.2.0, from
//! the crates.io crate freertos-next 0.12.0, fetched by `make guests`,
//! never committed) and its own ports, unmodified, built with
//! `guest-shim/examples/freertos` for eight targets. The application has
//! tasks, a queue, a mutex, a software timer, vTaskDelay, two tasks of
//! equal priority time-sliced and, on cores with an FPU, floating point in
//! both. Ignored (with the reason) where the kernel could not be fetched;
//! under `CI` that fails.

use e2e_tests::process::qemu_arm_icount;
use e2e_tests::{guest, require_third_party, require_tool, scratch, sim_host_bin};
use std::path::Path;
use std::process::{Command, Output};

/// The targets and their FreeRTOS port.
const CORPUS: [(&str, &str); 8] = [
    ("cortex-m0", "ARM_CM0"),
    ("cortex-m0plus", "ARM_CM0"),
    ("cortex-m3", "ARM_CM3"),
    ("cortex-m4f", "ARM_CM4F"),
    ("cortex-m7", "ARM_CM7 r0p1"),
    ("cortex-m33", "ARM_CM33_NTZ"),
    ("rv32imac", "RISC-V"),
    ("sifive-e31", "RISC-V"),
];

/// The cores QEMU has a machine with the same memory map for.
const QEMU: [(&str, &str, &str); 4] = [
    ("cortex-m3", "mps2-an385", "cortex-m3"),
    ("cortex-m4f", "mps2-an386", "cortex-m4"),
    ("cortex-m7", "mps2-an500", "cortex-m7"),
    ("cortex-m33", "mps2-an505", "cortex-m33"),
];

fn run(target: &str, extra: &[&str]) -> Output {
    run_with(target, extra, &[])
}

/// A run with sim-host's `extra` options and the guest's `args`.
fn run_with(target: &str, extra: &[&str], args: &[&str]) -> Output {
    Command::new(sim_host_bin())
        .args([
            "run",
            "-q",
            "--max-cycles",
            "2000000000",
            "--target",
            target,
        ])
        .args(extra)
        .arg(guest(target, "freertos"))
        .arg("--")
        .args(args)
        .output()
        .expect("sim-host runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What every run prints: the consumer's items in order, the delay, the
/// timer, both workers' results equal to the same computation done with
/// no task switch, and the end.
fn assert_demo_output(target: &str, out: &str) {
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.first(),
        Some(&"FreeRTOS V11.2.0 starts"),
        "{target}: {out}"
    );
    for i in 0..5 {
        assert!(
            out.contains(&format!("consumer got {i}\n")),
            "{target}: {out}"
        );
    }
    assert!(
        out.contains("vTaskDelay(10) took 10 ticks\n"),
        "{target}: {out}"
    );
    assert!(
        out.contains("the one-shot timer fired\n"),
        "{target}: {out}"
    );
    for w in 0..2 {
        let line = lines
            .iter()
            .find(|l| l.starts_with(&format!("worker {w}:")))
            .unwrap_or_else(|| panic!("{target}: worker {w}: {out}"));
        assert!(line.ends_with("as computed alone"), "{target}: {line}");
    }
    assert_eq!(lines.last(), Some(&"done"), "{target}: {out}");
}

#[test]
#[cfg_attr(
    not(has_freertos_kernel),
    ignore = "needs the FreeRTOS kernel: `make guests` fetches it (scripts/third-party.py)"
)]
fn freertos_runs_unmodified_on_every_port() {
    require_third_party("freertos-kernel");
    for (target, port) in CORPUS {
        let r = run(target, &[]);
        assert_eq!(
            r.status.code(),
            Some(0),
            "{target} ({port}): {}{}",
            text(&r.stdout),
            text(&r.stderr)
        );
        assert_demo_output(target, &text(&r.stdout));
    }
}

#[test]
#[cfg_attr(
    any(not(has_freertos_kernel), not(has_qemu_arm)),
    ignore = "needs the FreeRTOS kernel (`make guests` fetches it) and qemu-system-arm"
)]
fn freertos_prints_as_under_qemu() {
    require_third_party("freertos-kernel");
    require_tool("qemu-system-arm");
    for (target, machine, cpu) in QEMU {
        // on an instruction-counting clock: with SysTick on the host's
        // clock, a loaded host let a tick fall between the delay's start
        // and its vTaskDelay, and QEMU printed 11 ticks for 10
        let elf = guest(target, "freertos");
        let reference = qemu_arm_icount(machine, Some(cpu), &elf, &[], 120);
        assert!(
            reference.status.success(),
            "{target}: QEMU: {}",
            text(&reference.stderr)
        );
        let ours = run(target, &[]);
        assert_eq!(
            text(&ours.stdout),
            text(&reference.stdout),
            "{target}: ours, then QEMU's"
        );
        assert_eq!(ours.status.code(), reference.status.code(), "{target}");
    }
}

/// The core cycles of one tick: SysTick reloads every clock/1000 cycles
/// (the Cortex-M ports' configSYSTICK_CLOCK_HZ / configTICK_RATE_HZ); the
/// RISC-V port moves mtimecmp by MTIME_HZ / 1000 mtime counts (1000 at
/// 1 MHz on rv32imac; 32 at 32,768 Hz on the E31, so a tick is 32/32768 s).
fn cycles_per_tick(target: &str, clock_hz: u64) -> u64 {
    match target {
        "rv32imac" => clock_hz / 1_000_000 * 1000,
        "sifive-e31" => clock_hz * 32 / 32_768,
        _ => clock_hz / 1000,
    }
}

/// vTaskDelay(10) took exactly 10 ticks (printed), and its ARP section
/// (section 1, around the call) lies within one tick of 10 ticks' cycles:
/// it starts anywhere inside a tick and ends at the tick's interrupt.
#[test]
#[cfg_attr(
    not(has_freertos_kernel),
    ignore = "needs the FreeRTOS kernel: `make guests` fetches it (scripts/third-party.py)"
)]
fn vtaskdelay_takes_its_ticks_in_cycles() {
    require_third_party("freertos-kernel");
    for (target, _) in CORPUS {
        let clock = sim_host::model::target::builtin(target).unwrap().clock_hz;
        let tick = cycles_per_tick(target, clock);
        let r = run(target, &["--report-json", "-"]);
        let out = text(&r.stdout);
        assert_eq!(r.status.code(), Some(0), "{target}: {}", text(&r.stderr));
        let json = report(&out);
        let delay = json["sections"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["path"] == serde_json::json!([1])))
            .unwrap_or_else(|| panic!("{target}: no section 1: {json}"));
        let cycles = delay["total_cycles"].as_u64().unwrap();
        assert!(
            cycles.abs_diff(10 * tick) <= tick,
            "{target}: vTaskDelay(10) took {cycles} cycles, 10 ticks are {}",
            10 * tick
        );
    }
}

/// The JSON report `--report-json -` wrote after the guest's output.
fn report(stdout: &str) -> serde_json::Value {
    let start = stdout.find("\n{").map_or(0, |i| i + 1);
    serde_json::from_str(&stdout[start..]).expect("the JSON report")
}

/// Two runs write the same data.arp and print the same, byte for byte.
#[test]
#[cfg_attr(
    not(has_freertos_kernel),
    ignore = "needs the FreeRTOS kernel: `make guests` fetches it (scripts/third-party.py)"
)]
fn reruns_are_byte_identical() {
    require_third_party("freertos-kernel");
    let dir = scratch("freertos-reruns");
    for (target, _) in CORPUS {
        let outputs: Vec<(Vec<u8>, Vec<u8>)> = (0..2)
            .map(|i| {
                let arp = dir.join(format!("{target}-{i}.arp"));
                let r = run(target, &["-o", path(&arp)]);
                assert_eq!(r.status.code(), Some(0), "{target}: {}", text(&r.stderr));
                (r.stdout, std::fs::read(&arp).expect("data.arp written"))
            })
            .collect();
        assert_eq!(outputs[0].0, outputs[1].0, "{target}: console");
        assert!(outputs[0].1 == outputs[1].1, "{target}: data.arp differs");
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// The RTOS-aware accounting: the report names the FreeRTOS tasks (from
/// their control blocks) and the handlers, their cycles sum exactly to the
/// run's, both workers were switched in and out (time slicing), and each
/// worker's section counts its own task apart from the other's.
#[test]
#[cfg_attr(
    not(has_freertos_kernel),
    ignore = "needs the FreeRTOS kernel: `make guests` fetches it (scripts/third-party.py)"
)]
fn per_task_cycles_sum_to_the_run() {
    require_third_party("freertos-kernel");
    for (target, _) in CORPUS {
        let r = run(target, &["--report-json", "-"]);
        assert_eq!(r.status.code(), Some(0), "{target}: {}", text(&r.stderr));
        let json = report(&text(&r.stdout));
        let tasks = json["tasks"].as_array().cloned().unwrap_or_default();
        let cycles = |name: &str| -> Option<u64> {
            tasks.iter().find(|t| t["name"] == name)?["cycles"].as_u64()
        };
        let sum: u64 = tasks.iter().map(|t| t["cycles"].as_u64().unwrap()).sum();
        assert_eq!(
            sum,
            json["totals"]["cycles"].as_u64().unwrap(),
            "{target}: {tasks:?}"
        );
        for name in [
            "worker0", "worker1", "consumer", "producer", "reporter", "delay",
        ] {
            assert!(
                cycles(name).is_some_and(|c| c > 0),
                "{target}: {name}: {tasks:?}"
            );
        }
        let switches = |name: &str| -> u64 {
            tasks.iter().find(|t| t["name"] == name).unwrap()["switches"]
                .as_u64()
                .unwrap()
        };
        assert!(
            switches("worker0") > 1 && switches("worker1") > 1,
            "{target}: {tasks:?}"
        );
        let shares: f64 = json["sections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["share"].as_f64().unwrap())
            .sum();
        assert!(shares <= 1.0, "{target}: section shares sum to {shares}");
        let worker = json["sections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["path"] == serde_json::json!([2]))
            .unwrap();
        let (own, total) = (
            worker["own_cycles"].as_u64().unwrap(),
            worker["total_cycles"].as_u64().unwrap(),
        );
        let others: u64 = worker["others"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["cycles"].as_u64().unwrap())
            .sum();
        assert_eq!(own + others, total, "{target}: {worker}");
        assert!(
            others > 0,
            "{target}: the other worker ran meanwhile: {worker}"
        );
    }
}

/// A task whose recursion runs past the bottom of its stack: the run
/// stops at the exception or trap that would stack below it, naming the
/// task (on ARMv8-M the port's PSPLIM stops the push first: STKOF).
#[test]
#[cfg_attr(
    not(has_freertos_kernel),
    ignore = "needs the FreeRTOS kernel: `make guests` fetches it (scripts/third-party.py)"
)]
fn a_task_stack_overflow_stops_naming_the_task() {
    require_third_party("freertos-kernel");
    for (target, _) in CORPUS {
        let r = run_with(target, &[], &["overflow"]);
        assert_eq!(r.status.code(), Some(120), "{target}: {}", text(&r.stdout));
        let err = text(&r.stderr);
        if target == "cortex-m33" {
            assert!(
                err.contains("STKOF") && err.contains("PSPLIM"),
                "{target}: {err}"
            );
        } else {
            assert!(
                err.contains("task `overflow`'s stack overflowed") && err.contains("pxStack"),
                "{target}: {err}"
            );
        }
    }
}
