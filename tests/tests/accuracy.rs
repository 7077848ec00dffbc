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

/// Cortex-M4F: gcc's code for it (hard float; these kernels have no float)
/// is the Cortex-M4's instruction for instruction, 0x20 bytes further on
/// (word alignment kept), and the integer rows are the same.
#[test]
fn cortex_m4f_inner_loops_match_trm_derived_counts() {
    check_armv7m("cortex-m4f");
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

/// Cortex-M0+ (ARM DDI 0484C Table 3-1): gcc's ARMv6-M code (arm-none-eabi-
/// objdump -d target/guests/cortex-m0plus/accuracy.elf). ALU 1, LDR/STR 2,
/// LDM/STM 1 + N, B 2, B<cc> taken 2, BL 3, BX/BLX 2, POP {.., PC} 3 + N.
#[test]
fn cortex_m0plus_inner_loops_match_trm_derived_counts() {
    let expected = [
        // MOVS, ADDS 2; BL bump 3; bump: LDR [pc] 2, LDR 2, ADDS 1, LDR 2,
        // STR 2, EORS 1, STR 2, BX LR 2 = 14; CMP 1, BNE 2 = 22
        (1, "globals", N * 22),
        // MOVS x 3, BL 3 = 6; __aeabi_memcpy(64) byte by byte: MOVS 1,
        // PUSH {r4, lr} 3, 64 x (CMP 1, BNE 2, LDRB 2, STRB 2, ADDS 1, B 2)
        // = 640, CMP, BNE not taken, POP {r4, pc} 4 = 6: 650; MOVS x 3,
        // ADDS, BL 3 = 7; memset(24): MOVS, ADDS 2, 24 x (CMP 1, BNE 2,
        // STRB 2, ADDS 1, B 2) = 192, CMP, BNE not taken, BX LR 4: 198;
        // CMP, BNE 3 = 864
        (2, "memcpy and memset", N * 864),
        // MOVS, ANDS, LSLS 3, LDR [r3, r7] 2, ADDS 1, BLX r3 2; op_add:
        // ADDS, BX LR 3 / op_xor: MOVS, EORS, BX LR 4; CMP, BNE 3 = 14 and
        // 15 alternately
        (3, "function-pointer calls", N / 2 * (14 + 15)),
        // LDRB 2, LSLS, ADDS, ADDS, ADDS 4, LDRB 2, CMP, BNE 3 = 11
        (4, "table-driven state machine", N * 11),
        // ADDS, ADDS 2, LDMIA {3} 4, STMIA {3} 4, LDR 2, ADDS 1, STR 2,
        // CMP, BNE 3 = 18
        (5, "block moves", N * 18),
        // 16 ALU instructions (the rotates are MOV r7, ip; RORS: no 32-bit
        // Thumb), BNE 2 = 18
        (6, "ALU run", N * 18),
    ];
    // The N call's section: MOVS 1, LDMIA r7!, {r6} 2, BLX r6 2; leave
    // call site MOVS, ADDS, MOVS, UXTH 4 + BL 3 = 12; the 2N call's MOVS
    // 1, BLX 2, and ADDS, MOVS, MOVS 3 + BL 3 = 9.
    check("cortex-m0plus", 12 - 9, &expected);
}

/// Cortex-M7 (targets/cortex-m7.toml), from gcc's -mcpu=cortex-m7 code.
/// "a | b" issue in one cycle. The predictor adds the difference of the
/// two runs: in the N run a loop's BNE mispredicts its first taken
/// execution (8) and a call mispredicts the first time; in the 2N run,
/// the predictor has learnt both.
#[test]
fn cortex_m7_inner_loops_match_derived_counts() {
    let expected = [
        // MOV | ADDS; BL 1; bump: LDR [pc]; LDRD (needs r3) 1; ADD (needs
        // r1); EORS (needs r0); STRD (needs r2); BX LR = 6; CMP; BNE 2 =
        // 10. N run: BL bump and the BNE mispredict once: -16
        (1, "globals", N * 10 - 16),
        // LDR [pc]; ADD.W ip (needs r4); 4 x (LDM 2, STM 2) = 16 (alone);
        // MOV | ADDS; MOVS | ADD.W; BL 1 = 21; memset: ADD | MOV; CMP; BNE
        // = 3, 24 x (STRB.W | B 1, CMP; BNE 2), CMP; BNE 2, BX LR 1 = 76;
        // CMP; BNE 2 = 99, and memset's BNE mispredicts its exit each call
        // (8) = 107. N run: BL memset and the loop's BNE mispredict once:
        // -16 (memset's own branches were learnt from the C runtime's
        // memset of .bss before main)
        (2, "memcpy and memset", N * 107 - 16),
        // LDR.W | ADDS; BLX r3 (needs r3) 1 = 2; op_add: ADDS | BX LR 1 /
        // op_xor: EOR.W | BX LR 1; CMP | AND.W; BNE 2 = 5, and BLX r3
        // mispredicts every time (its target alternates): 13. N run: the
        // entry's B and the BNE mispredict once: -16
        (3, "function-pointer calls", N * 13 - 16),
        // LDRB.W r1,[r2],#1 | ADD.W (shifted); CMP (needs r2: a byte load,
        // 2) | ADD r3, r1; LDRB r3 (its address computed just before: + 1,
        // 2 cycles) | BNE = 5. N run: -8
        (4, "table-driven state machine", N * 5 - 8),
        // ADD.W | ADD.W; ADD.W ip; LDM {4} 2 (alone); CMP 4; STM.W {4} 2;
        // BNE 7 = 8. N run: -6: the BNE issues 3 cycles after the CMP,
        // so its misprediction costs 6 (flag forwarding, measured on
        // silicon: jnk0le, cortex_m7.md, "flag forwarding can reduce
        // branch misprediction penalty from 8 to 6 cycles ... at least 3
        // cycles before branch"; -8 before it was adopted)
        (5, "block moves", N * 8 - 6),
        // ADD.W (shifted) | ADD.W ip; ADD.W (shifted, needs r3) | CMP 1;
        // EOR.W; SUB.W (shifted); ADD.W (shifted); EOR.W | BNE 5 = 6. N
        // run: -6, the BNE 4 cycles after the CMP (flag forwarding, as
        // kernel 5; -8 before)
        (6, "ALU run", N * 6 - 6),
    ];
    // The N call's LDR.W r6 | MOVS; BLX r6 (needs r6) = 2, leave call site
    // MOV | ADDS; MOVS | BL = 2; the 2N call's MOVS | BLX r6 = 1, MOV |
    // MOVS; BL = 2. Both BLX mispredict (each kernel another target).
    check("cortex-m7", 4 - 3, &expected);
}

/// Cortex-M33 (targets/cortex-m33.toml), from gcc's -mcpu=cortex-m33 code.
/// Loads' results are ready after 2, a shifted operand's after 2; a 16-bit
/// BNE pairs with the 16-bit instruction before it (taken: 1, or 2 after
/// the instruction that set its flags), a taken branch 1 more; a 32-bit
/// instruction at a halfword address that a branch lands on, 1 more.
#[test]
fn cortex_m33_inner_loops_match_derived_counts() {
    let expected = [
        // MOV, ADDS 2; BL 1 + 1; bump: LDR [pc] 1, LDRD (needs r3 at 2)
        // 2, ADD (needs r1) 1, EORS 1, STRD 2 = 8, BX LR 1 + 1; CMP | BNE
        // 1, taken 1 + 1 = 17
        (1, "globals", N * 17),
        // LDR [pc] 1, ADD.W (needs r4) at 2, 4 x (LDM 4, STM 4) = 32, MOV,
        // MOVS, ADD.W, ADDS 4, BL 1 = 40, taken 1; memset: ADD, MOV, CMP |
        // BNE 3, taken 2; 24 x (STRB.W 1, B 1 (after a 32-bit: no pair),
        // taken 1, CMP | BNE 1) = 96 and 23 x BNE taken 2 = 46, BX LR 1 +
        // 1 = 149; CMP | BNE 1, taken 2 = 193
        (2, "memcpy and memset", N * 193),
        // LDR.W 1, ADDS 1, BLX (needs r3 at 2) 1, taken 1; op_add: ADDS,
        // BX LR (alone) 2 / op_xor: EOR.W, BX LR 2, taken 1; CMP, AND.W,
        // BNE (after a 32-bit: no pair) 3, taken 1 = 11
        (3, "function-pointer calls", N * 11),
        // LDRB.W 1 (r1, r2 ready at 2), ADD.W shifted 1 (r3 at 3), ADD
        // r3, r1 at 3, CMP 1, LDRB (needs r3 at 4) 1 | BNE = 6, taken 1,
        // and the loop's first instruction is a 32-bit LDRB.W at a
        // halfword address: 1 = 8
        (4, "table-driven state machine", N * 8),
        // ADD.W x 3, CMP 4, LDM {4} 4, STM.W {4} 4, BNE 1 = 13, taken 1,
        // a 32-bit ADD.W at a halfword address: 1 = 15
        (5, "block moves", N * 15),
        // ADD.W ror 1, ADD.W lsr (needs r3: shifted, 2) at 2, EOR.W (needs
        // lr) at 4, SUB.W ror (needs r0) 5, ADD.W 6, ADD.W lsr (needs r2)
        // 7, CMP 8, EOR.W (needs lr) 9, BNE 10 = 11, taken 1 = 12
        (6, "ALU run", N * 12),
    ];
    // The N call's MOVS 1, LDR.W 1, BLX (needs r6 at 3) 1 = 4, taken 1;
    // leave call site MOV, ADDS, MOVS, UXTH 4, BL 1 + 1 = 11. The 2N
    // call's MOVS, BLX 2, taken 1, MOVS, MOV, ADD 3, BL 1 + 1 = 8.
    check("cortex-m33", 11 - 8, &expected);
}

/// SiFive E31 (targets/sifive-e31.toml): the RV32IMAC code of rv32imac's
/// derivations, with the E31's timing: ALU, loads, stores, jumps 1, LW's
/// result after 2, LBU's after 3; a correctly predicted branch costs
/// nothing more, a mispredicted one 3. In the N run a loop's branch
/// mispredicts its first taken execution and a call its first (the 2N run
/// has learnt them), unless a branch shares its target-buffer entry
/// ((pc >> 1) mod 40) with main's JALR s3 of the 2N call (0x1000024c,
/// entry 22), which evicts it between the runs.
#[test]
fn sifive_e31_inner_loops_match_manual_derived_counts() {
    let expected = [
        // C.MV, C.ADDI, C.JAL 3; bump: LUI, LW, LUI, LW, ADD (a2 ready), SW,
        // XOR (a5 ready), SW, RET 9; BNE 1 = 13. N run: JAL and BNE learnt:
        // -6
        (1, "globals", N * 13 - 6),
        // C.MV x 2 and the inner loop, run 4 times: 4 LW, 4 SW (the first
        // data ready), 2 ADDI, BNE = 11: 2 + 44; ZEXT.B, SLLI, ADD, SLLI,
        // ADD 5, 6 SW, ADDI, BNE 8 = 59, and the inner BNE mispredicts its
        // exit every time (3) = 62. N run: both BNEs' first taken: -6
        (2, "memcpy and memset", N * 62 - 6),
        // C.LW, JALR (needs a5: + 1) 3; op_add: ADDI, RET 2 / op_xor: XORI,
        // RET 2; ADDI, ANDI, SLLI, ADD, BNE 5 = 10, and JALR mispredicts
        // every time (its target alternates) = 13. N run: the BNE's first
        // taken: -3 (the entry's J at +0x24 is in entry 22: it mispredicts
        // in both runs)
        (3, "function-pointer calls", N * 13 - 3),
        // LBU 1, SLLI, ADD 2, ADD (needs a3, ready 3 after the LBU) at 3,
        // ADDI 1, LBU 1, BNE 1 = 7. N run: -3
        (4, "table-driven state machine", N * 7 - 3),
        // 4 LW, 4 SW, 2 ADDI, BNE = 11; the BNE (0x1000033c) is in entry
        // 22: its first taken execution mispredicts in both runs
        (5, "block moves", N * 11),
        // 15 ALU instructions, BNE 1 = 16. N run: -3
        (6, "ALU run", N * 16 - 3),
    ];
    // The N call's LW s3, LI, ADDI, JALR (s3 ready) 4 and the leave call
    // site MV, ADDI, LI, SLLI, JAL 5 = 9; the 2N call's LI, JALR 2 and MV,
    // LI, JAL 3 = 5. Both JALR s3 mispredict (each kernel another target).
    check("sifive-e31", 9 - 5, &expected);
}
