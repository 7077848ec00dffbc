//! The cycle model against hand-derived cycle counts (issue 4).
//!
//! `guest-shim/examples/microbench` has one kernel per instruction kind:
//! main calls `loop_<kind>` between `arp_enter_kernel(1, K, 0)` and
//! `arp_leave_kernel(1, K)`. Each loop function runs ITER = 100 iterations
//! of `body; subs/addi counter; bne/bnez loop`. The recorded sample of
//! kernel K is, by the rule documented in sim-host/src/arp_host.rs (the
//! sample holds the section's cycles plus the leave call site):
//!
//!   call of the loop function + prologue + setup
//!   + ITER * (body + counter update + branch) + (ITER - 1) * taken extra
//!   + epilogue (return) + leave call site
//!
//! Every number below comes from the target files' cycle tables, which
//! cite the cores' manuals; the comments say which row.

use arpsim::query::{Dataset, TraceValue};
use e2e_tests::{guest, scratch};
use sim_host::arp_host::ArpOptions;
use sim_host::elf::GuestImage;
use sim_host::machine::{self, RunOptions, Stop};
use sim_host::target;

const ITER: u64 = 100;

/// Runs `elf` on `target`; returns (sample per kernel id, total cycles, total instructions).
fn run(target: &str, example: &str) -> (Vec<(u16, u64)>, u64, u64) {
    let t = target::builtin(target).unwrap();
    let image = GuestImage::load(&guest(target, example), &t).unwrap();
    let dir = scratch(&format!("mb-{target}-{example}"));
    let file = dir.join("data.arp");
    let outcome = machine::run(
        image,
        t,
        RunOptions {
            // the same command line for both variants: picolibc parses it
            cmdline: "microbench".into(),
            arp: ArpOptions {
                file: Some(file.clone()),
                ..Default::default()
            },
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(outcome.stop, Stop::Exit(0));
    let mut samples = Vec::new();
    if file.exists() {
        let data = Dataset::load(&file).unwrap();
        for trace in data.traces() {
            let Some(TraceValue::Sample(value)) = trace.value(0) else {
                panic!("record_all data holds samples");
            };
            let value = value.as_f64() as u64;
            samples.push((trace.stack_pos(trace.stack_length() - 1).unwrap(), value));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    (samples, outcome.cycles, outcome.instructions)
}

/// A counted loop: setup, ITER bodies each followed by the counter update
/// (1) and the conditional branch (1 not taken), plus the taken extra of
/// all but the last branch.
fn counted_loop(setup: u64, body: u64, taken_extra: u64) -> u64 {
    setup + ITER * (body + 1 + 1) + (ITER - 1) * taken_extra
}

#[test]
fn cortex_m4_kernels_match_hand_derived_counts() {
    // Overhead of every kernel (ARM DDI 0439D Table 3-1, P as in cortex-m4.toml):
    //   BL loop_<kind>                1 + P(1)          = 2
    //   PUSH.W {r4-r7, lr}            1 + N, N = 5      = 6
    //   POP {r4-r7, pc}               1 + N + P, N = 5 counting PC, P = 3 = 9
    //   leave call site: MOVS, MOVS, BL (1 + P)         = 4
    let overhead = 2 + 6 + 9 + 4;
    // B<cc> taken: 1 + P with P = 1 (a direct branch), so 1 extra
    let taken = 1;
    let expected: [(u16, &str, u64); 8] = [
        // MOVW setup (1); 4 x ADDS (1 each)
        (1, "alu", counted_loop(1, 4, taken)),
        // 4 x MULS: "MUL 1"
        (2, "mul", counted_loop(1, 4, taken)),
        // 3 x MOVW; 4 x UDIV 1000 / 7: bits(1000) = 10, bits(7) = 3 ->
        // 5 + (10 - 3) / 4 = 6 cycles (the 2..12 model in ARCHITECTURE.md)
        (3, "div", counted_loop(3, 4 * 6, taken)),
        // MOVW, MOVT, MOVW; 4 independent LDR: 2, then pipelined 1, 1, 1 (3.3.2)
        (4, "ldr", counted_loop(3, 2 + 1 + 1 + 1, taken)),
        // MOVW, MOVT, MOVW; 4 x STR [Rn, #imm]: "always one cycle" (3.3.2)
        (5, "str", counted_loop(3, 4, taken)),
        // 4 x B to a word-aligned 16-bit target: 1 + P = 2 each
        (6, "branch taken", counted_loop(1, 4 * 2, taken)),
        // CMP (1) + 4 x BNE not taken (1 each)
        (7, "branch not taken", counted_loop(1, 1 + 4, taken)),
        // 4 x (BL 1 + P(1) = 2, BX LR 1 + P(2) = 3)
        (8, "call and return", counted_loop(1, 4 * (2 + 3), taken)),
    ];
    let (samples, _, _) = run("cortex-m4", "microbench");
    assert_eq!(samples.len(), expected.len());
    for ((sid, kind, cycles), (got_sid, got)) in expected.iter().zip(&samples) {
        assert_eq!(sid, got_sid);
        assert_eq!(*got, cycles + overhead, "kernel {sid} ({kind})");
    }
}

#[test]
fn rv32imac_kernels_match_hand_derived_counts() {
    // Overhead of every kernel (Hazard3 "Instruction Cycle Counts"):
    //   JAL ra, loop_<kind>           2
    //   ADDI sp; SW ra                1 + 1
    //   LW ra; ADDI sp (independent of ra); RET (JALR) 1 + 1 + 2
    //   leave call site: LI, LI, JAL  1 + 1 + 2
    let overhead = 2 + 2 + 4 + 4;
    // BNEZ taken: 2 instead of 1
    let taken = 1;
    let expected: [(u16, &str, u64); 9] = [
        (1, "alu", counted_loop(1, 4, taken)),
        // MUL: 1 (MUL_FAST)
        (2, "mul", counted_loop(1, 4, taken)),
        // 3 x LI; 4 x DIVU: 18
        (3, "div", counted_loop(3, 4 * 18, taken)),
        // LA (AUIPC + ADDI, no relaxation), LI; 4 independent LW: 1 each
        (4, "lw", counted_loop(3, 4, taken)),
        // LW + dependent ADD: 1 + (1 + 1 bubble), twice
        (5, "load use", counted_loop(3, 2 * (1 + 2), taken)),
        // SW: 1
        (6, "sw", counted_loop(3, 4, taken)),
        // J (JAL x0): 2 each
        (7, "branch taken", counted_loop(1, 4 * 2, taken)),
        // BEQZ not taken: 1 each
        (8, "branch not taken", counted_loop(1, 4, taken)),
        // 4 x (JAL 2 + RET 2)
        (9, "call and return", counted_loop(1, 4 * (2 + 2), taken)),
    ];
    let (samples, _, _) = run("rv32imac", "microbench");
    assert_eq!(samples.len(), expected.len());
    for ((sid, kind, cycles), (got_sid, got)) in expected.iter().zip(&samples) {
        assert_eq!(sid, got_sid);
        assert_eq!(*got, cycles + overhead, "kernel {sid} ({kind})");
    }
}

/// Zero perturbation: the instrumented program costs exactly its call
/// sites more than the same assembly without them (`microbench-none`,
/// built with -DARP_NONE, same layout). The intercepted stub bodies cost
/// nothing.
#[test]
fn instrumentation_costs_exactly_its_call_sites() {
    // cortex-m4: arpsim_add_callbacks BL (2); arpsim_start 3 x MOVS + BL (5);
    // per kernel enter 3 x MOVS + BL (5) and leave 2 x MOVS + BL (4);
    // arp_finish BL (2). Instructions: 1 + 4 + 8 x 7 + 1.
    let (_, cycles, insns) = run("cortex-m4", "microbench");
    let (_, cycles_none, insns_none) = run("cortex-m4", "microbench-none");
    assert_eq!(cycles - cycles_none, 2 + 5 + 8 * (5 + 4) + 2);
    assert_eq!(insns - insns_none, 1 + 4 + 8 * 7 + 1);
    // rv32imac: JAL is 2, LI 1: 2 + 5 + 9 x (5 + 4) + 2 cycles.
    let (_, cycles, insns) = run("rv32imac", "microbench");
    let (_, cycles_none, insns_none) = run("rv32imac", "microbench-none");
    assert_eq!(cycles - cycles_none, 2 + 5 + 9 * (5 + 4) + 2);
    assert_eq!(insns - insns_none, 1 + 4 + 9 * 7 + 1);
}

/// Flash wait states: every 32-bit instruction fetch from the code region
/// costs the region's wait states, so the extra cycles are proportional to
/// them (a run with 2 wait states costs exactly twice the extra of 1).
#[test]
fn flash_wait_states_cost_each_fetch() {
    let base =
        std::fs::read_to_string(e2e_tests::repo_root().join("targets/cortex-m4.toml")).unwrap();
    let dir = scratch("wait-states");
    let mut cycles = Vec::new();
    for ws in [0, 1, 2] {
        let text = base.replace(
            "access = \"rx\", wait_states = 0",
            &format!("access = \"rx\", wait_states = {ws}"),
        );
        assert!(ws == 0 || text != base, "the flash region line changed");
        let t = sim_host::target::Target::parse(&text, std::path::Path::new("ws.toml")).unwrap();
        let image = GuestImage::load(&guest("cortex-m4", "microbench-none"), &t).unwrap();
        let outcome = machine::run(
            image,
            t,
            RunOptions {
                cmdline: "microbench".into(),
                arp: ArpOptions {
                    file: Some(dir.join("ws.arp")),
                    ..Default::default()
                },
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(outcome.stop, Stop::Exit(0));
        cycles.push(outcome.cycles);
    }
    let _ = std::fs::remove_dir_all(&dir);
    let one = cycles[1] - cycles[0];
    assert!(one > 0);
    assert_eq!(cycles[2] - cycles[0], 2 * one);
}
