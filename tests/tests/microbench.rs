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

use sim_host::model::target;

const ITER: u64 = 100;

/// Runs `elf` on `target`; returns (sample per kernel id, total cycles, total instructions).
fn run(target: &str, example: &str) -> (Vec<(u16, u64)>, u64, u64) {
    run_on(target::builtin(target).unwrap(), target, example)
}

/// [`run`] with a cycle table of its own (`t`) for `target`'s guests.
fn run_on(t: target::Target, target: &str, example: &str) -> (Vec<(u16, u64)>, u64, u64) {
    let r = e2e_tests::record(t, target, example, "microbench");
    (r.samples, r.cycles, r.instructions)
}

/// A counted loop: setup, ITER bodies each followed by the counter update
/// (1) and the conditional branch (1 not taken), plus the taken extra of
/// all but the last branch.
fn counted_loop(setup: u64, body: u64, taken_extra: u64) -> u64 {
    setup + ITER * (body + 1 + 1) + (ITER - 1) * taken_extra
}

/// The ARMv7-M kernels of `arm/microbench.S` with their hand-derived
/// counts; Cortex-M3 and Cortex-M4 price every one of them alike (their
/// TRMs' Table 3-1 rows and 3.3.2 notes used here are the same).
fn armv7m_expected() -> Vec<(u16, &'static str, u64)> {
    // B<cc> taken: 1 + P with P = 1 (a direct branch), so 1 extra
    let taken = 1;
    vec![
        // MOVW setup (1); 4 x ADDS (1 each)
        (1, "alu", counted_loop(1, 4, taken)),
        // 4 x MULS: "MUL 1"
        (2, "mul", counted_loop(1, 4, taken)),
        // 3 x MOVW; 4 x UDIV 1000 / 7: bits(1000) = 10, bits(7) = 3 ->
        // 5 + (10 - 3) / 4 = 6 cycles (the model's own interpolation inside
        // the documented 2..12, sim-host/src/cycles.rs dynamic_extra)
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
        // 5 x MOVW/MOVT; 4 x STR [Rn, Rm]: 1 + 1 ("other instructions cannot
        // be pipelined after STR with register offset", 3.3.2)
        (9, "str register offset", counted_loop(5, 4 * 2, taken)),
        // 5 setup; (LDR [Rn, Rm] 2 + STR [Rn, Rm] pipelined after it 1)
        // twice; the second LDR follows a store: not pipelined
        (
            10,
            "ldr; str register offset",
            counted_loop(5, 2 * (2 + 1), taken),
        ),
        // MOVW; LDR [PC, #imm] with the literal in the code's region: 2 + 1
        // contention, then 3 x (1 pipelined + 1 contention)
        (11, "ldr literal", counted_loop(1, 3 + 3 * 2, taken)),
        // MOVW; CMP 1, IT folded 0, ADDEQ 1, ADD.W 1, IT after a 32-bit 1, ADDEQ 1
        (12, "it folding", counted_loop(1, 1 + 1 + 1 + 1 + 1, taken)),
        // 5 setup; LDR [r7],#4 2, LDR [r1],#4 1, LDR [r1],#4 2 (its base was
        // just written back), 2 x SUBS 1
        (13, "ldr writeback", counted_loop(5, 2 + 1 + 2 + 2, taken)),
        // 3 setup; LDM {4} 5, STMIA! {4} 5, SUBS 1, PUSH {2} 3, POP {2} 3
        (
            14,
            "ldm stm push pop",
            counted_loop(3, 5 + 5 + 1 + 3 + 3, taken),
        ),
        // 3 setup; 4 x (BLX Rm 1 + P(2), BX LR 1 + P(2))
        (15, "blx register", counted_loop(3, 4 * (3 + 3), taken)),
        // 3 setup; 4 x LDR PC: 2 for the load + 3 for the reload (3.3.2)
        (16, "ldr pc", counted_loop(3, 4 * 5, taken)),
        // MOVW; 4 x (BL 2 + PUSH {r4, lr} 3 + POP {r4, pc} 1 + 2 + 3)
        (17, "pop pc", counted_loop(1, 4 * (2 + 3 + 6), taken)),
        // 3 setup; STR 1, LDR after a store 2, STR 1, LDR 2
        (18, "str then ldr", counted_loop(3, 1 + 2 + 1 + 2, taken)),
        // MOVW; MOVS 1, TBB 2 + P(3) = 6 (it always branches: here past
        // its table), ADDS 1
        (19, "tbb", counted_loop(1, 1 + 6 + 1, taken)),
    ]
}

/// Runs the microbench on an ARMv7-M core and compares every kernel.
fn check_armv7m(target: &str) {
    // Overhead of every kernel (Table 3-1, P as in the target file):
    //   BL loop_<kind>                1 + P(1)          = 2
    //   PUSH.W {r4-r7, lr}            1 + N, N = 5      = 6
    //   POP {r4-r7, pc}               1 + N + P, N = 5 counting PC, P = 3 = 9
    //   leave call site: MOVS, MOVS, BL (1 + P)         = 4
    let overhead = 2 + 6 + 9 + 4;
    let expected = armv7m_expected();
    let (samples, _, _) = run(target, "microbench");
    assert_eq!(samples.len(), expected.len());
    for ((sid, kind, cycles), (got_sid, got)) in expected.iter().zip(&samples) {
        assert_eq!(sid, got_sid);
        assert_eq!(*got, cycles + overhead, "{target} kernel {sid} ({kind})");
    }
}

#[test]
fn cortex_m4_kernels_match_hand_derived_counts() {
    check_armv7m("cortex-m4");
}

#[test]
fn cortex_m3_kernels_match_hand_derived_counts() {
    check_armv7m("cortex-m3");
}

#[test]
fn cortex_m0_kernels_match_hand_derived_counts() {
    // arm/microbench_v6m.S, priced by cortex-m0.toml (ARM DDI 0432C Table
    // 3-1, fast multiplier). Overhead of every kernel:
    //   BL loop_<kind>                                  4
    //   PUSH {r4-r7, lr}              1 + N, N = 5      = 6
    //   POP {r4-r7, pc}               4 + N, N = 4      = 8
    //   leave call site: MOVS, MOVS, BL                 1 + 1 + 4 = 6
    let overhead = 4 + 6 + 8 + 6;
    // BNE taken: 3 instead of 1
    let taken = 2;
    let expected: [(u16, &str, u64); 10] = [
        (1, "alu", counted_loop(1, 4, taken)),
        // MULS: 1 (fast multiplier)
        (2, "mul", counted_loop(1, 4, taken)),
        // LDR =buffer (2), MOVS; 4 x LDR: 2 each, no pipelining on M0
        (3, "ldr", counted_loop(3, 4 * 2, taken)),
        // 4 x STR: 2 each
        (4, "str", counted_loop(3, 4 * 2, taken)),
        // 4 x B: 3 each
        (5, "branch taken", counted_loop(1, 4 * 3, taken)),
        // CMP + 4 x BNE not taken: 1 each
        (6, "branch not taken", counted_loop(1, 1 + 4, taken)),
        // 4 x (BL 4 + BX LR 3)
        (7, "call and return", counted_loop(1, 4 * (4 + 3), taken)),
        // LDM! {4} 5, SUBS 1, STM! {4} 5, SUBS 1, PUSH {2} 3, POP {2} 3
        (
            8,
            "ldm stm push pop",
            counted_loop(3, 5 + 1 + 5 + 1 + 3 + 3, taken),
        ),
        // 4 x (BL 4 + PUSH {r4, lr} 3 + POP {r4, pc} 4 + 1)
        (9, "pop pc", counted_loop(1, 4 * (4 + 3 + 5), taken)),
        // LDR =leaf (2), MOVS; 4 x (BLX Rm 3 + BX LR 3)
        (10, "blx register", counted_loop(3, 4 * (3 + 3), taken)),
    ];
    let (samples, _, _) = run("cortex-m0", "microbench");
    assert_eq!(samples.len(), expected.len());
    for ((sid, kind, cycles), (got_sid, got)) in expected.iter().zip(&samples) {
        assert_eq!(sid, got_sid);
        assert_eq!(*got, cycles + overhead, "cortex-m0 kernel {sid} ({kind})");
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
    // per kernel (19) enter 3 x MOVS + BL (5) and leave 2 x MOVS + BL (4);
    // arp_finish BL (2). Instructions: 1 + 4 + 19 x 7 + 1.
    let kernels = armv7m_expected().len() as u64;
    let (_, cycles, insns) = run("cortex-m4", "microbench");
    let (_, cycles_none, insns_none) = run("cortex-m4", "microbench-none");
    assert_eq!(cycles - cycles_none, 2 + 5 + kernels * (5 + 4) + 2);
    assert_eq!(insns - insns_none, 1 + 4 + kernels * 7 + 1);
    // rv32imac: JAL is 2, LI 1: 2 + 5 + 9 x (5 + 4) + 2 cycles.
    let (_, cycles, insns) = run("rv32imac", "microbench");
    let (_, cycles_none, insns_none) = run("rv32imac", "microbench-none");
    assert_eq!(cycles - cycles_none, 2 + 5 + 9 * (5 + 4) + 2);
    assert_eq!(insns - insns_none, 1 + 4 + 9 * 7 + 1);
}

/// Flash wait states: every 32-bit instruction fetch from the code region
/// costs the region's wait states. Exact for the first two kernels (the
/// fetched words of every block they execute, from the layout of
/// `microbench.elf`, see `arm-none-eabi-objdump -d`), proportional for the
/// whole run.
#[test]
fn flash_wait_states_cost_each_fetch() {
    let base =
        std::fs::read_to_string(e2e_tests::repo_root().join("targets/cortex-m4.toml")).unwrap();
    // Words fetched per kernel sample (blocks as Unicorn runs them; a block
    // fetches every word it touches, cycles.rs price_block):
    //   kernel 1: BL loop_alu at a word address 1; loop_alu's first block
    //     (PUSH.W, MOVW, 4 x ADDS, SUBS, BNE: 20 bytes) 5; 99 more loop
    //     bodies (12 bytes from a word address) 3 each; POP 1; leave call
    //     site (MOVS, MOVS, BL: 8 bytes from a word address) 2
    //   kernel 2: BL loop_mul at a halfword address 2; 5 + 99 x 3 + 1 as
    //     above; leave call site from a halfword address (10 bytes) 3
    let words = [(1u16, 1 + 5 + 99 * 3 + 1 + 2), (2, 2 + 5 + 99 * 3 + 1 + 3)];
    let mut runs = Vec::new();
    for ws in [0u64, 1, 2] {
        let text = base.replace(
            "access = \"rx\", wait_states = 0",
            &format!("access = \"rx\", wait_states = {ws}"),
        );
        assert!(ws == 0 || text != base, "the flash region line changed");
        let t =
            sim_host::model::target::Target::parse(&text, std::path::Path::new("ws.toml")).unwrap();
        let (samples, cycles, _) = run_on(t, "cortex-m4", "microbench");
        runs.push((ws, samples, cycles));
    }
    let (_, samples0, cycles0) = &runs[0];
    for (ws, samples, _) in &runs[1..] {
        for (sid, n) in words {
            let at = |s: &Vec<(u16, u64)>| s.iter().find(|(k, _)| *k == sid).unwrap().1;
            assert_eq!(
                at(samples) - at(samples0),
                ws * n,
                "kernel {sid} with {ws} wait states"
            );
        }
    }
    let one = runs[1].2 - cycles0;
    assert!(one > 0);
    assert_eq!(runs[2].2 - cycles0, 2 * one);
}
