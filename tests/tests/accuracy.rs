//! The accuracy suite (issue 15): `guest-shim/examples/accuracy`, C
//! kernels in the shapes compiled code takes, each run for N and for 2N
//! iterations under section ids K and K + 10. The difference of the two
//! ARP samples is N times the kernel's inner loop, whose cycles are derived
//! by hand from the Cortex-M4 TRM rules (as cortex-m4.toml prices them) and
//! the -O2 disassembly, in the comments of accuracy.c. If gcc's output
//! changes, re-derive there and here.

use sim_host::target;
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
    check("cortex-m4");
}

/// Cortex-M3 prices these rules as Cortex-M4 does (the same rows of the
/// two TRMs' Table 3-1 and 3.3.2). gcc's -O2 code for it has the same
/// inner loops up to the order of two instructions in k_block_move's
/// (ADD.W before LDMIA rather than after: LDM's 1 + N does not depend on
/// what precedes it, and nothing pipelines after an LDM), and main's call
/// sites cost the same; only prologues are scheduled differently.
#[test]
fn cortex_m3_inner_loops_match_trm_derived_counts() {
    check("cortex-m3");
}

fn check(target: &str) {
    // (kernel id, pattern, cycles of one inner-loop iteration; derivation
    // in guest-shim/examples/accuracy/accuracy.c)
    let expected: [(u16, &str, u64); 6] = [
        (1, "globals through literal pools", 21),
        (2, "memcpy and memset", 228),
        (3, "function-pointer calls", 14),
        (4, "table-driven state machine", 10),
        (5, "LDM/STM block moves", 17),
        (6, "32-bit Thumb-2 ALU run", 10),
    ];
    // The two calls' own cycles differ (main's -O2 disassembly): the N
    // call's section holds LDR.W r6,[r7],#4 2 + MOVS 1 + BLX r6 3 and the
    // leave call site MOV, ADDS, MOVS, UXTH 4 + BL 2 = 12; the 2N call's
    // MOVS 1 + BLX r6 3 and MOVS, ADD, MOV 3 + BL 2 = 9.
    let call_sites = 12 - 9;
    let got = samples(target);
    for (k, pattern, per_iteration) in expected {
        let short = got[&k];
        let long = got[&(k + 10)];
        assert_eq!(
            long + call_sites - short,
            N * per_iteration,
            "{target} kernel {k} ({pattern}): samples {short} (N) and {long} (2N)"
        );
    }
}
