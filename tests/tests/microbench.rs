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
//! cite the cores' manuals (or, for the Cortex-M7 and M33, the public
//! measurements and scheduling models they name); the comments say which
//! row. Cores with an FPU run eight more kernels (20..27), of the FPU.

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
        // 3 setup; STR 1 + 1, LDR after a store 2, STR 1 + 1, LDR 2: a store
        // followed by a load holds its cycle, measured on silicon (jnk0le's
        // pipeline cycle test, STM32F103 and STM32F407: "stores cannot be
        // pipelined with following load instructions (adds extra cycle to
        // store)"), which overrules the TRM's write-buffer note (the model
        // charged STR 1 here before: 1 + 2 + 1 + 2)
        (18, "str then ldr", counted_loop(3, 2 + 2 + 2 + 2, taken)),
        // MOVW; MOVS 1, TBB 2 + P(3) = 6 (it always branches: here past
        // its table), ADDS 1
        (19, "tbb", counted_loop(1, 1 + 6 + 1, taken)),
    ]
}

/// Runs the microbench on an ARMv7-M core and compares every kernel.
fn check_armv7m(target: &str) {
    check_armv7m_with(target, &[]);
}

/// [`check_armv7m`] with the FPU kernels' counts (`fpu`) after the 19
/// integer ones.
fn check_armv7m_with(target: &str, fpu: &[(u16, &str, u64)]) {
    // Overhead of every kernel (Table 3-1, P as in the target file):
    //   BL loop_<kind>                1 + P(1)          = 2
    //   PUSH.W {r4-r7, lr}            1 + N, N = 5      = 6
    //   POP {r4-r7, pc}               1 + N + P, N = 5 counting PC, P = 3 = 9
    //   leave call site: MOVS, MOVS, BL (1 + P)         = 4
    let overhead = 2 + 6 + 9 + 4;
    let mut expected = armv7m_expected();
    expected.extend_from_slice(fpu);
    let (samples, _, _) = run(target, "microbench");
    assert_eq!(samples.len(), expected.len());
    for ((sid, kind, cycles), (got_sid, got)) in expected.iter().zip(&samples) {
        assert_eq!(sid, got_sid);
        assert_eq!(*got, cycles + overhead, "{target} kernel {sid} ({kind})");
    }
}

/// Cortex-M4F: the integer kernels priced as on the Cortex-M4 (the same
/// rows), and the FPU kernels 20..27 of arm/microbench.S from Table 7-1 and
/// the notes of 7.2.3 (targets/cortex-m4f.toml). The loop's first block
/// holds the setup: MOVW 1, VMOV.F32 #imm 1 each (fp_move), MOVW/MOVT 1.
/// A chain does not carry across a block boundary: the first instruction
/// of an iteration does not wait for the last of the one before (effects
/// across blocks are not modelled).
#[test]
fn cortex_m4f_kernels_match_hand_derived_counts() {
    let taken = 1;
    let fpu = [
        // MOVW, VMOV; VADD.F32 1, then 3 x (1 + 1: its operand is the
        // result of the instruction just before, 7.2.3)
        (20, "vadd chain", counted_loop(2, 1 + 3 * 2, taken)),
        // MOVW, 2 x VMOV; 4 x VMLA.F32 3: the accumulator is consumed a
        // cycle late, so the chain never waits (latency 4 - 1 = 3)
        (21, "vmla chain", counted_loop(3, 4 * 3, taken)),
        // VFMA.F32 the same: 3 each
        (22, "vfma chain", counted_loop(3, 4 * 3, taken)),
        // MOVW, VMOV; VDIV.F32 issues in 1 and holds the FPU 14, its result
        // ready after 15 (14 + 1, consumed by the next VDIV): the four issue
        // at 0, 15, 30, 45; SUBS and BNE run meanwhile (integer-only
        // instructions complete out-of-order); the block ends when the FPU
        // is free, at 45 + 14 = 59 = body + SUBS + BNE: body 57
        (23, "vdiv chain", counted_loop(2, 57, taken)),
        // MOVW, VMOV; four independent VSQRT.F32, each waiting for the FPU:
        // 0, 14, 28, 42, free at 56 = body + 2: body 54
        (24, "vsqrt", counted_loop(2, 54, taken)),
        // MOVW, MOVT, MOVW; VLDR.32 2, then pipelined after a load 1, 1, 1
        (25, "vldr", counted_loop(3, 2 + 1 + 1 + 1, taken)),
        // MOVW; 4 x VMOV between a core register and a float: 2 each
        (26, "vmov transfers", counted_loop(1, 4 * 2, taken)),
        // MOVW, 2 x VMOV; 4 independent VMUL/VADD.F32 1 each (no result used)
        (27, "vmul vadd", counted_loop(3, 4, taken)),
    ];
    check_armv7m_with("cortex-m4f", &fpu);
}

/// Cortex-M0+ (targets/cortex-m0plus.toml, ARM DDI 0484C Table 3-1, fast
/// multiplier): arm/microbench_v6m.S as on the Cortex-M0, a taken branch a
/// cycle cheaper (the two-stage pipeline).
#[test]
fn cortex_m0plus_kernels_match_hand_derived_counts() {
    // Overhead of every kernel:
    //   BL loop_<kind>                                  3
    //   PUSH {r4-r7, lr}              1 + N, N = 5      = 6
    //   POP {r4-r7, pc}               3 + N, N = 4      = 7
    //   leave call site: MOVS, MOVS, BL                 1 + 1 + 3 = 5
    let overhead = 3 + 6 + 7 + 5;
    // BNE taken: 2 instead of 1
    let taken = 1;
    let expected: [(u16, &str, u64); 10] = [
        (1, "alu", counted_loop(1, 4, taken)),
        // MULS: 1 (fast multiplier)
        (2, "mul", counted_loop(1, 4, taken)),
        // LDR =buffer (2), MOVS; 4 x LDR: 2 each
        (3, "ldr", counted_loop(3, 4 * 2, taken)),
        // 4 x STR: 2 each
        (4, "str", counted_loop(3, 4 * 2, taken)),
        // 4 x B: 2 each
        (5, "branch taken", counted_loop(1, 4 * 2, taken)),
        // CMP + 4 x BNE not taken: 1 each
        (6, "branch not taken", counted_loop(1, 1 + 4, taken)),
        // 4 x (BL 3 + BX LR 2)
        (7, "call and return", counted_loop(1, 4 * (3 + 2), taken)),
        // LDM! {4} 5, SUBS 1, STM! {4} 5, SUBS 1, PUSH {2} 3, POP {2} 3
        (
            8,
            "ldm stm push pop",
            counted_loop(3, 5 + 1 + 5 + 1 + 3 + 3, taken),
        ),
        // 4 x (BL 3 + PUSH {r4, lr} 3 + POP {r4, pc} 3 + 1)
        (9, "pop pc", counted_loop(1, 4 * (3 + 3 + 4), taken)),
        // LDR =leaf (2), MOVS; 4 x (BLX Rm 2 + BX LR 2)
        (10, "blx register", counted_loop(3, 4 * (2 + 2), taken)),
    ];
    let (samples, _, _) = run("cortex-m0plus", "microbench");
    assert_eq!(samples.len(), expected.len());
    for ((sid, kind, cycles), (got_sid, got)) in expected.iter().zip(&samples) {
        assert_eq!(sid, got_sid);
        assert_eq!(
            *got,
            cycles + overhead,
            "cortex-m0plus kernel {sid} ({kind})"
        );
    }
}

/// The small multiplier option: MULS takes 32 (Table 3-1).
#[test]
fn cortex_m0plus_small_multiplier_costs_32_per_muls() {
    let fast = run("cortex-m0plus", "microbench").0;
    let small = run_on(
        target::builtin("cortex-m0plus:multiplier=small").unwrap(),
        "cortex-m0plus",
        "microbench",
    )
    .0;
    // kernel 2: 100 x 4 MULS, each 31 more
    assert_eq!(small[1].1 - fast[1].1, ITER * 4 * 31);
    assert_eq!(small[0], fast[0]);
}

/// Compares the samples of `target`'s microbench with `expected` (each
/// kernel's whole sample, overhead included).
fn check_samples(target: &str, expected: &[(u16, &str, u64)]) {
    let (samples, _, _) = run(target, "microbench");
    assert_eq!(samples.len(), expected.len(), "{target}: {samples:?}");
    for ((sid, kind, cycles), (got_sid, got)) in expected.iter().zip(&samples) {
        assert_eq!(sid, got_sid);
        assert_eq!(got, cycles, "{target} kernel {sid} ({kind})");
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

/// Cortex-M7 (targets/cortex-m7.toml: LLVM's ARMScheduleM7.td and jnk0le's
/// measurements on an STM32H743; a dual-issue in-order model). Every count
/// is written as the first block (it holds PUSH.W and the setup, and the
/// first iteration), the 99 other iterations' block, and what the
/// predictor charges. Notation: "a | b" issue in one cycle.
///
/// Overhead of every kernel:
///   BL loop_<kind>: 1, and a misprediction the first time (8): the
///     predictor's target buffer has not seen it      1 + 8
///   PUSH.W {r4-r7, lr}: five registers, two a cycle, alone   3 (in the first block)
///   the loop's BNE: its first taken execution mispredicts (the counter
///     starts weakly not-taken), and so does its exit        8 + 8
///   POP {r4-r7, pc}: 1 + ceil(4 / 2), alone; the return is predicted
///     by the return stack                                    3
///   leave call site: MOVS | MOVS, BL                         2
#[test]
fn cortex_m7_kernels_match_hand_derived_counts() {
    let m7 = |first: u64, loop_block: u64, extra: u64| {
        1 + 8 + first + (ITER - 1) * loop_block + extra + 16 + 3 + 2
    };
    let expected = [
        // PUSH.W 3; MOVW | ADDS r4; ADDS r5 | ADDS r6; ADDS r7 | SUBS;
        // BNE (needs SUBS's flags) = 7. Loop: ADDS | ADDS twice, SUBS,
        // BNE = 4
        (1, "alu", m7(7, 4, 0)),
        // PUSH.W 3; MOVW | MULS r4; MULS r5; MULS r6; MULS r7 | SUBS (one
        // MAC unit: no two MULS pair); BNE = 8. Loop: 4 MULS, SUBS with
        // the last, BNE = 5
        (2, "mul", m7(8, 5, 0)),
        // PUSH.W 3; MOVW | MOVW; MOVW; UDIV 7 (alone) x 4 = 28; SUBS; BNE
        // = 3 + 2 + 28 + 2 = 35. Loop: 28 + 2 = 30
        (3, "div", m7(35, 30, 0)),
        // PUSH.W 3; MOVW | MOVT (a write-after-write pair); MOVW | LDR;
        // LDR | LDR (two load units); LDR | SUBS; BNE = 8. Loop: LDR | LDR
        // twice, SUBS, BNE = 4
        (4, "ldr", m7(8, 4, 0)),
        // as ldr, but one store unit: STR each cycle: MOVW | MOVT; MOVW |
        // STR; STR; STR; STR | SUBS; BNE = 9. Loop: 4 STR, SUBS with the
        // last, BNE = 5
        (5, "str", m7(9, 5, 0)),
        // PUSH.W 3; MOVW | B = 4; three B 1 each; SUBS, BNE 2: the first
        // iteration 9; then 4 x B + 2 = 6. Each B mispredicts the first
        // time: 4 x 8
        (6, "branch taken", m7(9, 6, 4 * 8)),
        // PUSH.W 3; MOVW | CMP; BNE = 5 (each BNE not taken ends a block);
        // 3 x BNE 1; SUBS, BNE 2: the first iteration 10; then CMP, BNE 2
        // + 3 + 2 = 7. A not-taken BNE is predicted (never taken)
        (7, "branch not taken", m7(10, 7, 0)),
        // PUSH.W 3; MOVW | BL = 4; BX LR 1; 3 x (BL 1 + BX LR 1); SUBS,
        // BNE 2: 13; then 4 x 2 + 2 = 10. Each BL mispredicts once (4 x 8);
        // the returns are predicted by the return stack
        (8, "call and return", m7(13, 10, 4 * 8)),
        // PUSH.W 3; MOVW | MOVT; MOVW | MOVW; MOVW | STR [r7, r1]; STR;
        // STR; STR | SUBS; BNE = 10. Loop: 4 STR, SUBS, BNE = 5
        (9, "str register offset", m7(10, 5, 0)),
        // PUSH.W 3; MOVW | MOVT; MOVW | MOVW; MOVW | LDR r4; STR r4
        // (its data is read a cycle late) | LDR r5; STR r5 | SUBS; BNE = 9.
        // Loop: LDR | STR twice, SUBS, BNE = 4
        (10, "ldr; str register offset", m7(9, 4, 0)),
        // PUSH.W 3; MOVW | LDR [pc]; LDR | LDR; LDR | SUBS; BNE = 7 (no
        // literal contention on the M7's row). Loop: 2 pairs, SUBS, BNE = 4
        (11, "ldr literal", m7(7, 4, 0)),
        // PUSH.W 3; MOVW | CMP; IT | ADDEQ; ADD.W | IT; ADDEQ | SUBS; BNE
        // = 8. Loop: CMP; IT | ADDEQ; ADD.W | IT; ADDEQ | SUBS; BNE = 5
        (12, "it folding", m7(8, 5, 0)),
        // PUSH.W 3; MOVW | MOVT; MOVW | MOVT; MOVW | LDR r4,[r7],#4; LDR
        // r5,[r1],#4; LDR r6,[r1],#4 (needs r1 written back) | SUBS r7;
        // SUBS r1 (needs r1) | SUBS r3; BNE = 10. Loop: LDR | LDR; LDR |
        // SUBS r7; SUBS r1 | SUBS r3; BNE = 4
        (13, "ldr writeback", m7(10, 4, 0)),
        // PUSH.W 3; MOVW | MOVT; MOVW; LDM {4} 2 (alone); STMIA! {4} 2;
        // SUBS r7; PUSH {2} 1; POP {2} 1; SUBS r3; BNE = 14. Loop: 2 + 2 +
        // 1 + 1 + 1 + 1 + 1 = 9
        (14, "ldm stm push pop", m7(14, 9, 0)),
        // PUSH.W 3; MOVW | MOVT; MOVW | BLX r1 = 5; BX LR 1; 3 x 2; SUBS,
        // BNE 2: 14; then 4 x 2 + 2 = 10. Each BLX mispredicts once (4 x 8)
        (15, "blx register", m7(14, 10, 4 * 8)),
        // PUSH.W 3; MOVW | MOVT; MOVW; LDR PC (pop_pc 1, alone) = 6; three
        // LDR PC 1; SUBS, BNE 2: 11; then 4 + 2 = 6. Each LDR PC is an
        // indirect branch predicted by its last target: 4 x 8 once
        (16, "ldr pc", m7(11, 6, 4 * 8)),
        // PUSH.W 3; MOVW | BL = 4; popper: PUSH {r4, lr} 1, POP {r4, pc}
        // 1 + ceil(1/2) = 2: 3; three more BL 1 + 3; SUBS, BNE 2: 4 + 3 +
        // 12 + 2 = 21; then 4 x 4 + 2 = 18. Each BL mispredicts once
        (17, "pop pc", m7(21, 18, 4 * 8)),
        // PUSH.W 3; MOVW | MOVT; MOVW | STR; LDR | STR (its data read a
        // cycle late); LDR | SUBS; BNE = 8. Loop: STR | LDR; STR | LDR;
        // SUBS; BNE = 4
        (18, "str then ldr", m7(8, 4, 0)),
        // PUSH.W 3; MOVW | MOVS; TBB 2 (alone) = 6; ADDS | SUBS; BNE 2: 8;
        // then MOVS; TBB 3, 2 = 5. TBB mispredicts once (8)
        (19, "tbb", m7(8, 5, 8)),
        // PUSH.W 3; MOVW | VMOV s1 = 4; VADD needs s1 (latency 3): at 6;
        // each VADD needs the last (3): 6, 9, 12, 15 | SUBS; BNE = 17.
        // Loop: 0, 3, 6, 9 | SUBS; BNE = 11
        (20, "vadd chain", m7(17, 11, 0)),
        // PUSH.W 3; MOVW | VMOV s1; VMOV s2 (one VFP pipe) = 5; VMLA needs
        // s2 at 7; the accumulator read 3 late of a 6-cycle result: every
        // 3: 7, 10, 13, 16 | SUBS; BNE = 18. Loop: 0, 3, 6, 9; 11
        (21, "vmla chain", m7(18, 11, 0)),
        // VFMA: latency 5, the accumulator 2 late: every 3, as VMLA
        (22, "vfma chain", m7(18, 11, 0)),
        // PUSH.W 3; MOVW | VMOV s1; VDIV at 6 (s1), 16 each: 6, 22, 38,
        // 54 | SUBS (one integer instruction pairs); BNE at 70 = 71. Loop:
        // 0, 16, 32, 48 | SUBS; BNE at 64 = 65. The BNE issues 16 cycles
        // after the SUBS that set its flags: both its mispredictions cost
        // 6, not 8 (flag forwarding, measured on silicon: jnk0le,
        // cortex_m7.md, "flag forwarding can reduce branch misprediction
        // penalty from 8 to 6 cycles ... at least 3 cycles before
        // branch"; this kernel was 4 cycles more before it was adopted)
        (23, "vdiv chain", m7(71, 65, 0) - 2 * (8 - 6)),
        // VSQRT 14 each: 6, 20, 34, 48 | SUBS; BNE at 62 = 63. Loop: 0,
        // 14, 28, 42 | SUBS; BNE at 56 = 57. The BNE 14 cycles after the
        // SUBS: mispredicted for 6, as kernel 23
        (24, "vsqrt", m7(63, 57, 0) - 2 * (8 - 6)),
        // PUSH.W 3; MOVW | MOVT; MOVW | VLDR; VLDR | VLDR; VLDR | SUBS; BNE
        // = 8. Loop: 2 pairs, SUBS, BNE = 4
        (25, "vldr", m7(8, 4, 0)),
        // PUSH.W 3; MOVW | VMOV s4, r4; VMOV | VMOV (two FP register
        // ports); VMOV | SUBS; BNE = 7. Loop: 2 pairs, SUBS, BNE = 4
        (26, "vmov transfers", m7(7, 4, 0)),
        // PUSH.W 3; MOVW | VMOV s1; VMOV s2 = 5; VMUL at 7 (s2), VADD 8,
        // VMUL 9, VADD 10 (one VFP pipe) | SUBS; BNE = 12. Loop: 0..3 |
        // SUBS; BNE = 5
        (27, "vmul vadd", m7(12, 5, 0)),
    ];
    check_samples("cortex-m7", &expected);
}

/// Cortex-M33 (targets/cortex-m33.toml: jnk0le's measurements on an
/// RP2350, LLVM's CortexM4Model, and the Cortex-M4 TRM where neither
/// says). Only two 16-bit instructions pair, and only a NOP, IT or branch
/// as the younger: here a 16-bit BNE after the 16-bit SUBS, which costs 0
/// not taken and 1 + 1 taken (it pairs with the instruction that set its
/// flags). Every count is the first block without PUSH.W (the setup and
/// the first iteration), and 99 other iterations, each with the taken
/// BNE's 2.
///
/// Overhead of every kernel:
///   BL loop_<kind> 1, taken 1                                2
///   PUSH.W {r4-r7, lr}: one register a cycle                 5
///   POP {r4-r7, pc}: 1 + 4, taken 1                          6
///   leave call site: MOVS, MOVS (ALU instructions do not pair), BL 1,
///     taken 1                                                4
#[test]
fn cortex_m33_kernels_match_hand_derived_counts() {
    let m33 = |first: u64, iteration: u64| 2 + 5 + first + (ITER - 1) * iteration + 6 + 4;
    let expected = [
        // MOVW; 4 x ADDS; SUBS | BNE = 6. Loop: 4 + 1, taken 2 = 7
        (1, "alu", m33(6, 7)),
        // MOVW; 4 x MULS 1 + 1 (it sets the flags: 2 cycles); SUBS | BNE =
        // 10. Loop: 8 + 1 + 2 = 11
        (2, "mul", m33(10, 11)),
        // 3 x MOVW; 4 x UDIV 1000 / 7: 6 (the Cortex-M4's 2..12 with this
        // model's interpolation, as on the M4); SUBS | BNE = 28. Loop: 24
        // + 1 + 2 = 27
        (3, "div", m33(3 + 24 + 1, 27)),
        // MOVW, MOVT, MOVW; 4 x LDR 1 (none uses another's result); SUBS |
        // BNE = 8. Loop: 4 + 1 + 2 = 7
        (4, "ldr", m33(8, 7)),
        // the same with STR 1
        (5, "str", m33(8, 7)),
        // MOVW; B (after a 32-bit instruction: not paired) 1, taken 1; 3 x
        // (B 1, taken 1); SUBS | BNE 1 = 2 + 1 + 3 x 2 + 1 = 10. Loop: the
        // BNE's taken 2, 4 x (B 1, taken 1), SUBS | BNE 1 = 11
        (6, "branch taken", m33(10, 11)),
        // MOVW; CMP | BNE (not taken) = 2; 3 x BNE 1 (first in its block,
        // nothing to pair with); SUBS | BNE 1 = 6. Loop: 1 + 3 + 1 + 2 = 7
        (7, "branch not taken", m33(6, 7)),
        // MOVW; BL 1 (alone), taken 1, BX LR 1, taken 1, 3 more times;
        // SUBS | BNE = 1 + 16 + 1 = 18. Loop: 16 + 1 + 2 = 19
        (8, "call and return", m33(18, 19)),
        // 5 x MOVW/MOVT; 4 x STR [Rn, Rm] 1 (no register-offset cycle is
        // measured for the M33); SUBS | BNE = 10. Loop: 4 + 1 + 2 = 7
        (9, "str register offset", m33(10, 7)),
        // 5 setup; LDR r4 1; STR r4 (its data read a cycle late: the load's
        // 2-cycle result is in time) 1; LDR 1; STR 1; SUBS | BNE = 10.
        // Loop: 7
        (10, "ldr; str register offset", m33(10, 7)),
        // MOVW; 4 x LDR [pc] 1; SUBS | BNE = 6. Loop: 7
        (11, "ldr literal", m33(6, 7)),
        // MOVW; CMP | IT (pairs, flags or not); ADDEQ; ADD.W; IT (after a
        // 32-bit instruction: alone); ADDEQ; SUBS | BNE = 7. Loop: 6 + 2 = 8
        (12, "it folding", m33(7, 8)),
        // 5 setup; LDR r4,[r7],#4 at 5; LDR r5,[r1],#4 6; LDR r6,[r1],#4
        // waits for r1 (load to use 2): 8; SUBS r7 9; SUBS r1 waits for
        // r1: 10; SUBS r3 | BNE 11 = 12. Loop: 0, 1, 3, 4, 5, 6 = 7 + 2 = 9
        (13, "ldr writeback", m33(12, 9)),
        // 3 setup; LDM {4} 4 (one register a cycle); STMIA {4} 4; SUBS r7
        // (the written-back base, 4 cycles after the STMIA: in time) 1;
        // PUSH {2} 2; POP {2} 2; SUBS | BNE 1 = 17. Loop: 14 + 2 = 16
        (14, "ldm stm push pop", m33(17, 16)),
        // 3 setup; 4 x (BLX 1, taken 1, BX LR 1, taken 1); SUBS | BNE =
        // 20. Loop: 16 + 1 + 2 = 19
        (15, "blx register", m33(20, 19)),
        // 3 setup; 4 x (LDR PC 1 (pop_pc), taken 1); SUBS | BNE 1 = 12.
        // Loop: the BNE's taken 2, 4 x 2, SUBS | BNE 1 = 11
        (16, "ldr pc", m33(12, 11)),
        // MOVW; 4 x (BL 1, taken 1, PUSH {r4, lr} 2, POP {r4, pc} 1 + 1,
        // taken 1 = 7); SUBS | BNE = 30. Loop: 28 + 1 + 2 = 31
        (17, "pop pc", m33(30, 31)),
        // 3 setup; STR; LDR; STR (its data, the load's result, read a cycle
        // late: in time); LDR; SUBS | BNE = 8. Loop: 5 + 2 = 7
        (18, "str then ldr", m33(8, 7)),
        // MOVW; MOVS; TBB 2, taken 1; ADDS; SUBS | BNE = 7. Loop: BNE taken
        // 2, MOVS, TBB 2, taken 1, ADDS, SUBS | BNE = 8
        (19, "tbb", m33(7, 8)),
        // MOVW, VMOV 1 = 2; 4 x VADD, each on the last's result: 2, 4,
        // 6, 8 (a 2-cycle result latency, measured on silicon: jnk0le,
        // cortex_m33.md, "result latency of every other FP compute
        // instruction (vadd.f32, vmul.f32) is 2 cycles", which overrules
        // the Cortex-M4's 1 this kernel was priced with: 7, 7); SUBS |
        // BNE 9 = 10. Loop: 0, 2, 4, 6, SUBS | BNE 7 = 8 + 2 = 10
        (20, "vadd chain", m33(10, 10)),
        // MOVW, 2 x VMOV = 3; VMLA 1, its result after 3, no FP instruction
        // for 2 cycles after it: 3, 6, 9, 12; SUBS 13 | BNE; the FPU busy
        // until 15 = 15. Loop: 0, 3, 6, 9, SUBS 10, busy until 12: 12 + 2
        (21, "vmla chain", m33(15, 14)),
        // VFMA: the same
        (22, "vfma chain", m33(15, 14)),
        // MOVW, VMOV; 4 x VDIV 14 (LLVM, M4 TRM; blocking); SUBS | BNE =
        // 59. Loop: 56 + 1 + 2 = 59
        (23, "vdiv chain", m33(59, 59)),
        // VSQRT 14 the same
        (24, "vsqrt", m33(59, 59)),
        // 3 setup; 4 x VLDR.32 1 (measured on silicon: jnk0le,
        // cortex_m33.md, "load/store double execute in 2 cycles (applies
        // to FPU)", a cycle a word, which overrules the M4 TRM's VLDR.32 2
        // this kernel was priced with: 12, 11); SUBS | BNE = 8. Loop: 4 +
        // 1 + 2 = 7
        (25, "vldr", m33(8, 7)),
        // MOVW; 4 x VMOV core <-> float 2; SUBS | BNE = 10. Loop: 11
        (26, "vmov transfers", m33(10, 11)),
        // MOVW, 2 x VMOV; 4 x 1; SUBS | BNE = 8. Loop: 7
        (27, "vmul vadd", m33(8, 7)),
    ];
    check_samples("cortex-m33", &expected);
}

/// SiFive E31 (targets/sifive-e31.toml, FE310-G000 Manual chapter 3):
/// riscv/microbench.S. A correctly predicted branch or jump costs no
/// penalty, a mispredicted one 3; LW's result is ready after 2 cycles, a
/// MUL's after 5 (the multiplier busy meanwhile).
///
/// Overhead of every kernel:
///   JAL ra, loop_<kind>: 1, and a misprediction (3): not in the target
///     buffer yet                                          1 + 3
///   ADDI sp; SW ra                                        1 + 1
///   LW ra; ADDI sp (independent); RET (ra ready: the load 2 cycles
///     before), predicted by the return-address stack     1 + 1 + 1
///   leave call site: LI, LI, JAL                          1 + 1 + 1
/// and every loop's BNEZ mispredicts twice: its first taken execution
/// (the counter starts weakly not-taken) and its exit: 3 + 3.
#[test]
fn sifive_e31_kernels_match_hand_derived_counts() {
    let overhead = 4 + 2 + 3 + 3;
    let exits = 3 + 3;
    // a correctly predicted taken BNEZ: no extra
    let e31 =
        |setup: u64, body: u64, extra: u64| counted_loop(setup, body, 0) + exits + extra + overhead;
    let expected = [
        // LI; 4 x ADDI
        (1, "alu", e31(1, 4, 0)),
        // LI; MUL issues in 1, keeps the multiplier 5: the four at 0, 5,
        // 10, 15 (the last reads a2, ready at 5); ADDI 16, BNEZ 17; the
        // block ends when the multiplier is free, at 20 = body + 2
        (2, "mul", e31(1, 18, 0)),
        // 3 x LI; 4 x DIVU 1000 / 7: 2 + (bits(1000) - bits(7) + 1) =
        // 2 + 8 = 10 each (the model's one quotient bit a cycle)
        (3, "div", e31(3, 4 * 10, 0)),
        // LA (AUIPC + ADDI), LI; 4 independent LW 1
        (4, "lw", e31(3, 4, 0)),
        // LW + dependent ADD: 1 + (1 + 1: LW's 2-cycle result), twice
        (5, "load use", e31(3, 2 * 3, 0)),
        // SW 1
        (6, "sw", e31(3, 4, 0)),
        // LI; 4 x J 1; each J mispredicts the first time (4 x 3)
        (7, "branch taken", e31(1, 4, 4 * 3)),
        // LI; 4 x BEQZ not taken 1, predicted (never taken)
        (8, "branch not taken", e31(1, 4, 0)),
        // LI; 4 x (JAL 1 + RET 1); each JAL mispredicts the first time,
        // the returns are predicted by the stack
        (9, "call and return", e31(1, 4 * 2, 4 * 3)),
    ];
    check_samples("sifive-e31", &expected);
}
