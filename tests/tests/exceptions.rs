//! Cortex-M exceptions as the architecture defines them (issue 39): the
//! same ELF (`guest-shim/examples/exceptions`) prints the same under
//! qemu-system-arm and under sim-host on every core QEMU has (cortex-m0 on
//! the micro:bit, m3, m4f, m7, m33): stack selection, CONTROL, frames with
//! and without the FP context, lazy preservation, nesting, tail-chaining,
//! an unprivileged thread. The FP context's costs are derived by hand; the
//! architecture's refusals (reserved EXC_RETURN values, frames outside
//! RAM, a sleep nothing can end) stop the run naming the rule.

use e2e_tests::process::qemu_arm;
use e2e_tests::{guest, require_tool, sim_host_bin};
use std::process::{Command, Output};

/// The QEMU machine that runs each core's build of the example: the MPS2
/// boards of the target files, and for the Cortex-M0 QEMU's one M0
/// machine, the micro:bit (the example's cortex-m0 build is linked for
/// its 16 KiB of RAM, `ldscripts` in example.toml).
const QEMU: [(&str, &str, Option<&str>); 5] = [
    ("cortex-m0", "microbit", None),
    ("cortex-m3", "mps2-an385", Some("cortex-m3")),
    ("cortex-m4f", "mps2-an386", Some("cortex-m4")),
    ("cortex-m7", "mps2-an500", Some("cortex-m7")),
    ("cortex-m33", "mps2-an505", Some("cortex-m33")),
];

const FPU_CORES: [&str; 3] = ["cortex-m4f", "cortex-m7", "cortex-m33"];

fn qemu(target: &str, args: &[&str]) -> Output {
    let (_, machine, cpu) = QEMU
        .iter()
        .find(|(t, _, _)| *t == target)
        .expect("a QEMU machine for the target");
    let argv: Vec<&str> = std::iter::once("exceptions")
        .chain(args.iter().copied())
        .collect();
    qemu_arm(machine, *cpu, &guest(target, "exceptions"), &argv, 60)
}

fn ours(target: &str, args: &[&str], extra: &[&str]) -> Output {
    Command::new(sim_host_bin())
        .args(["run", "-q", "--max-cycles", "100000000", "--target", target])
        .args(extra)
        .arg(guest(target, "exceptions"))
        .arg("--")
        .args(args)
        .output()
        .expect("sim-host runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The JSON report `--report-json -` wrote after the guest's output.
fn report(stdout: &str) -> serde_json::Value {
    let start = stdout.find("\n{").map_or(0, |i| i + 1);
    serde_json::from_str(&stdout[start..]).expect("the JSON report")
}

/// Our output and exit status are QEMU's for `args` on `target`.
fn same_as_qemu(target: &str, args: &[&str]) {
    let reference = qemu(target, args);
    assert!(
        reference.status.success(),
        "{target} {args:?}: QEMU failed: {}{}",
        text(&reference.stdout),
        text(&reference.stderr)
    );
    let run = ours(target, args, &[]);
    assert_eq!(
        text(&run.stdout),
        text(&reference.stdout),
        "{target} {args:?}: our output, then QEMU's ({})",
        text(&run.stderr)
    );
    assert_eq!(
        run.status.code(),
        reference.status.code(),
        "{target} {args:?}"
    );
}

#[test]
#[cfg_attr(
    not(has_qemu_arm),
    ignore = "needs qemu-system-arm (scripts/bootstrap.sh installs it)"
)]
fn stack_selection_control_nesting_and_tail_chaining_are_qemus() {
    require_tool("qemu-system-arm");
    for (target, _, _) in QEMU {
        for case in ["psp-start", "nested", "tailchain", "unpriv", "realign"] {
            same_as_qemu(target, &[case]);
        }
    }
}

/// The psp-start case is how FreeRTOS starts its first task: before issue
/// 39 the task ran on the main stack with CONTROL = 0.
#[test]
fn an_svc_handler_starts_a_task_on_the_process_stack() {
    for (target, _, _) in QEMU {
        let run = ours(target, &["psp-start"], &[]);
        let out = text(&run.stdout);
        assert_eq!(
            run.status.code(),
            Some(0),
            "{target}: {}",
            text(&run.stderr)
        );
        let task = out.lines().find(|l| l.starts_with("task:")).unwrap_or("");
        assert!(task.contains("sp=psp"), "{target}: {out}");
        assert!(
            task.contains("control=2") || task.contains("control=6"),
            "{target}: CONTROL.SPSEL set: {out}"
        );
    }
}

/// Every combination of FPCCR.LSPEN, a handler that uses the FPU and a
/// thread with an FP context, under both emulators: the frame's FP area,
/// FPCCR (LSPACT and the RDY bits), FPCAR and the registers after return.
#[test]
#[cfg_attr(
    not(has_qemu_arm),
    ignore = "needs qemu-system-arm (scripts/bootstrap.sh installs it)"
)]
fn fp_frames_and_lazy_preservation_are_qemus() {
    require_tool("qemu-system-arm");
    for target in FPU_CORES {
        for lspen in ["0", "1"] {
            for handler in ["0", "1"] {
                for thread in ["0", "1"] {
                    same_as_qemu(target, &["fp", lspen, handler, thread]);
                }
            }
        }
    }
}

/// One PendSV round trip timed by DWT_CYCCNT in each FP state. The same
/// code runs in each pair compared, so the differences are what the
/// exception model charges (model::cores cites each figure):
/// - no FP context in the thread: nothing, whatever LSPEN says;
/// - FP context, LSPEN clear: s0-s15 and FPSCR stacked at entry (+17,
///   the Cortex-M4 TRM's 29 against 12) and unstacked at return (+17, its
///   27 against 10): +34;
/// - FP context, LSPEN set, a handler without FP instructions: the area is
///   only reserved, and the return finds LSPACT still set and reads
///   nothing: +0;
/// - FP context, LSPEN set, a handler with an FP instruction: the lazy
///   push at that instruction (+17) and the return's unstacking (+17):
///   +34.
///
/// M7 and M33 take the Cortex-M4's figures (no published ones).
#[test]
fn the_fp_context_costs_what_the_manuals_say() {
    let cost = |target: &str, lspen: u64, handler: u64, thread: u64| -> u64 {
        let args = [
            "fpcost".to_owned(),
            lspen.to_string(),
            handler.to_string(),
            thread.to_string(),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = ours(target, &args, &[]);
        assert_eq!(
            run.status.code(),
            Some(0),
            "{target}: {}",
            text(&run.stderr)
        );
        let out = text(&run.stdout);
        let value = out.trim().rsplit(": ").next().and_then(|v| v.parse().ok());
        value.unwrap_or_else(|| panic!("{target}: {out}"))
    };
    for target in FPU_CORES {
        for handler in [0, 1] {
            let plain = cost(target, 0, handler, 0);
            assert_eq!(cost(target, 1, handler, 0), plain, "{target} no FP context");
            assert_eq!(
                cost(target, 0, handler, 1),
                plain + 17 + 17,
                "{target} eager"
            );
        }
        let plain = cost(target, 1, 0, 0);
        assert_eq!(
            cost(target, 1, 0, 1),
            plain,
            "{target}: lazy, never preserved"
        );
        let plain = cost(target, 1, 1, 0);
        assert_eq!(
            cost(target, 1, 1, 1),
            plain + 17 + 17,
            "{target}: lazy, preserved"
        );
    }
    // cortex-m4f, from the first read's instruction to the second's
    // (DDI 0439D Table 3-1, targets/cortex-m4f.toml): that ldr 2, str 1,
    // dsb 2 and isb 2 (barriers 1+B, B = 1), the entry 12, the handler's
    // bx lr 1 (an exception return: no refill charged, the return's 10
    // cycles include the fetch of the code returned to), the return 10
    assert_eq!(cost("cortex-m4f", 0, 0, 0), 2 + 1 + 2 + 2 + 12 + 1 + 10);
}

/// The lazy preservations and exceptions are counted in the report.
#[test]
fn the_report_counts_exceptions_and_lazy_preservations() {
    let run = ours(
        "cortex-m4f",
        &["fp", "1", "1", "1"],
        &["--report-json", "-"],
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let out = text(&run.stdout);
    let json = report(&out);
    let events = &json["core_events"];
    assert_eq!(events["exceptions_taken"], 1, "{json}");
    assert_eq!(events["lazy_fp_preservations"], 1, "{json}");
}

/// ARMv6-M leaves the number of VTOR's bits to the implementation and
/// makes the others RAZ/WI (DDI 0419E B3.2.5): the Cortex-M0 implements
/// none (QEMU's micro:bit implements them all, so it is not the reference
/// here); the Cortex-M0+ (RP2040) and ARMv7-M cores implement TBLOFF.
#[test]
fn vtor_is_raz_wi_on_the_cortex_m0_only() {
    for (target, implemented) in [
        ("cortex-m0", false),
        ("cortex-m0plus", true),
        ("cortex-m3", true),
    ] {
        let run = ours(target, &["vtor"], &[]);
        assert_eq!(
            run.status.code(),
            Some(0),
            "{target}: {}",
            text(&run.stderr)
        );
        let out = text(&run.stdout);
        let after = out.trim().rsplit(' ').next().unwrap_or("");
        let expected = if implemented { "00000200" } else { "00000000" };
        assert_eq!(after, expected, "{target}: {out}");
    }
}

/// WFI sleeps until SysTick's interrupt: five wake-ups, and the cycles
/// asleep counted apart in the report.
#[test]
fn wfi_sleeps_until_the_next_interrupt() {
    let run = ours("cortex-m3", &["wfi", "5"], &["--report-json", "-"]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let out = text(&run.stdout);
    assert!(out.starts_with("woke 5 times"), "{out}");
    let json = report(&out);
    let events = &json["core_events"];
    assert_eq!(events["sleeps"], 5, "{json}");
    assert_eq!(events["exceptions_taken"], 5, "{json}");
    // SysTick's reload is 999: a tick every 1,000 cycles; five ticks
    // passed, and the sleeps are most of that time
    let cycles = json["totals"]["cycles"].as_u64().unwrap_or(0);
    let asleep = events["sleep_cycles"].as_u64().unwrap_or(0);
    assert!(cycles >= 5_000, "{json}");
    assert!(asleep > 4_000 && asleep < cycles, "{json}");
}

/// A sleep nothing can end is a named stop, not a hang.
#[test]
fn wfi_with_nothing_to_wake_the_core_stops_naming_it() {
    let run = ours("cortex-m3", &["sleep-forever"], &[]);
    assert_eq!(run.status.code(), Some(120), "{}", text(&run.stdout));
    let err = text(&run.stderr);
    assert!(err.contains("WFI with nothing to wake the core"), "{err}");
    assert!(err.contains("B1.5.19") && err.contains(": wfi"), "{err}");
}

/// The run on `target` with the guest's `args` is a guest fault (exit
/// 120) whose message holds every one of `needles`; returns its output.
fn assert_fault(target: &str, args: &[&str], extra: &[&str], needles: &[&str]) -> String {
    let run = ours(target, args, extra);
    let (out, err) = (text(&run.stdout), text(&run.stderr));
    assert_eq!(
        run.status.code(),
        Some(120),
        "{target} {args:?}: {out}{err}"
    );
    for needle in needles {
        assert!(
            err.contains(needle),
            "{target} {args:?}: no `{needle}` in {err}"
        );
    }
    out
}

/// Issue 43 M09: reserved EXC_RETURN values fault with the rule, never a
/// return as if they were legal.
#[test]
fn reserved_exc_return_values_fault_naming_the_rule() {
    for value in ["fffffff5", "ffffffff", "ffffffb9", "ffffff79", "fffffff8"] {
        let named = format!("EXC_RETURN 0x{value}");
        let rule = [named.as_str(), "DDI 0403E B1.5.8", "INVPC"];
        assert_fault("cortex-m3", &["bad-return", value], &[], &rule);
    }
    // 0xFFFFFFF1 from an exception taken in Thread mode: the frame's
    // stacked IPSR is 0, so Handler mode cannot be returned to
    let stacked = ["stacked IPSR is 0"];
    assert_fault("cortex-m3", &["bad-return", "fffffff1"], &[], &stacked);
    // ARMv8-M: the Non-secure state, which this model never enters
    assert_fault(
        "cortex-m33",
        &["bad-return", "ffffffbd"],
        &[],
        &["DDI 0553"],
    );
}

/// Issue 43 M06: a frame goes only into RAM: with MSP in the System
/// Control Space, in a peripheral range, or below memory, the entry stops
/// naming where the frame would have gone.
#[test]
fn frames_are_stacked_only_into_ram() {
    for (target, msp, extra) in [
        ("cortex-m4f", "e000ed20", &[][..]),
        ("cortex-m3", "e0001100", &[]),
        ("cortex-m3", "40004100", &["--peripherals", "ignore"]),
        ("cortex-m0", "10", &[]),
    ] {
        let needles = ["outside the target's RAM"];
        let out = assert_fault(target, &["stack-at", msp], extra, &needles);
        assert!(!out.contains("taken"), "{target} {msp}");
    }
}

/// A vector table entry that is not Thumb code, or not code at all, ends
/// the run at the entry naming the vector and the rule.
#[test]
fn a_vector_that_is_not_code_stops_naming_it() {
    for target in ["cortex-m3", "cortex-m4f", "cortex-m33"] {
        for (entry, why) in [
            ("40000001", "not in executable memory"),
            ("200", "not a Thumb address"),
        ] {
            let needles = ["exception 14: its vector", why];
            let out = assert_fault(target, &["bad-vector", entry], &[], &needles);
            assert!(!out.contains("returned"), "{target} {entry}");
        }
    }
}

/// Issue 43 M07: exceptions are refused only while simthread threads are
/// alive; once the only one was joined, PendSV is taken again.
#[test]
fn an_exception_is_taken_once_the_threads_have_ended() {
    let run = ours("cortex-m3", &["after-threads"], &[]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert_eq!(
        text(&run.stdout),
        "PendSV taken after the thread ended: yes\n"
    );
}
