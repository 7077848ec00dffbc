//! The accuracy suite (issue 15): `guest-shim/examples/accuracy`, C
//! kernels in the shapes compiled code takes, each run for N and for 2N
//! iterations under section ids K and K + 10. The difference of the two
//! ARP samples is N times the kernel's inner loop, whose cycles are derived
//! by hand from the Cortex-M4 TRM rules (as cortex-m4.toml prices them) or
//! Hazard3's cycle counts (rv32imac.toml) and the -O2 disassembly, in the
//! comments of accuracy.c. If gcc's output changes, re-derive there and
//! here.

use sim_host::model::target;
use std::collections::BTreeMap;

/// Iterations of the shorter run (accuracy.c's N).
const N: u64 = 64;

/// Runs the accuracy guest on `target`: the sample of every section id.
fn samples(target: &str) -> BTreeMap<u16, u64> {
    let t = target::builtin(target).unwrap();
    let mut out = BTreeMap::new();
    for (sid, value) in e2e_tests::record(t, target, "accuracy", "accuracy").samples {
        assert!(out.insert(sid, value).is_none(), "one sample per section");
    }
    out
}

#[test]
fn cortex_m4_inner_loops_match_trm_derived_counts() {
    check_armv7m("cortex-m4");
}

/// Cortex-M3 prices these rules as Cortex-M4 does (the same rows of the
/// two TRMs' Table 3-1 and 3.3.2). gcc's -O2 code for it has the same
/// inner loops up to the order of two instructions in k_block_move's
/// (ADD.W before LDMIA rather than after: LDM's 1 + N does not depend on
/// what precedes it, and nothing pipelines after an LDM), and main's call
/// sites cost the same; only prologues are scheduled differently.
#[test]
fn cortex_m3_inner_loops_match_trm_derived_counts() {
    check_armv7m("cortex-m3");
}

fn check_armv7m(target: &str) {
    // cycles of one inner-loop iteration; derivation in
    // guest-shim/examples/accuracy/accuracy.c
    let expected = [
        (1, "globals through literal pools", N * 21),
        (2, "memcpy and memset", N * 228),
        (3, "function-pointer calls", N * 14),
        (4, "table-driven state machine", N * 10),
        (5, "LDM/STM block moves", N * 17),
        (6, "32-bit Thumb-2 ALU run", N * 10),
    ];
    // The two calls' own cycles differ (main's -O2 disassembly): the N
    // call's section holds LDR.W r6,[r7],#4 2 + MOVS 1 + BLX r6 3 and the
    // leave call site MOV, ADDS, MOVS, UXTH 4 + BL 2 = 12; the 2N call's
    // MOVS 1 + BLX r6 3 and MOVS, ADD, MOV 3 + BL 2 = 9.
    check(target, 12 - 9, &expected);
}

/// rv32imac with Hazard3's timing (targets/rv32imac.toml), from the -O2
/// RV32IMAC disassembly (riscv64-unknown-elf-objdump -d
/// target/guests/rv32imac/accuracy.elf); derivations in accuracy.c.
#[test]
fn rv32imac_inner_loops_match_hazard3_derived_counts() {
    let expected = [
        (1, "globals", N * 18),
        (2, "memcpy and memset", N * 66),
        // the table alternates op_add (13) and op_xor (14: a 32-bit XORI
        // at a halfword address is a misaligned jump target)
        (3, "function-pointer calls", N / 2 * (13 + 14)),
        (4, "table-driven state machine", N * 8),
        (5, "block moves", N * 12),
        (6, "ALU run", N * 17),
    ];
    // The N call's section holds LW s3 1, LI 1, ADDI 1, JALR s3 2 and the
    // leave call site MV, ADDI, LI, SLLI 4 + JAL 2 = 11; the 2N call's
    // LI 1, JALR 2 and MV, LI 2 + JAL 2 = 7.
    check("rv32imac", 11 - 7, &expected);
}

/// Each kernel: its 2N run's sample minus its N run's, plus the difference
/// of the two calls' own cycles, is the cycles of N inner-loop iterations.
fn check(target: &str, call_sites: u64, expected: &[(u16, &str, u64)]) {
    let got = samples(target);
    for &(k, pattern, n_iterations) in expected {
        let short = got[&k];
        let long = got[&(k + 10)];
        assert_eq!(
            long + call_sites - short,
            n_iterations,
            "{target} kernel {k} ({pattern}): samples {short} (N) and {long} (2N)"
        );
    }
}
