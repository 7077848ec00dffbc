//! The float DSP kernels (issue 25): `guest-shim/examples/dsp`, a 16-tap
//! FIR filter and a biquad, run for N and for 2N output samples under
//! section ids K and K + 10. The difference of the two samples, plus the
//! difference of the two calls' own cycles, is N times one output
//! sample's cycles, derived here by hand from the -O2 disassembly of each
//! core (arm-none-eabi-objdump -d target/guests/<core>/dsp.elf) and the
//! core's cycle table. If gcc's output changes, re-derive.

use sim_host::model::target;
use std::collections::BTreeMap;

/// Output samples of the shorter run (dsp.c's N).
const N: u64 = 64;
/// Taps of the FIR filter (dsp.c's TAPS).
const TAPS: u64 = 16;

fn samples(target: &str) -> BTreeMap<u16, u64> {
    let t = target::builtin(target).unwrap();
    let mut out = BTreeMap::new();
    for (sid, value) in e2e_tests::record(t, target, "dsp", "dsp").samples {
        assert!(out.insert(sid, value).is_none(), "one sample per section");
    }
    out
}

/// Each kernel's 2N sample minus its N sample, plus the calls' difference
/// `call_sites`, is `n_samples`.
fn check(target: &str, call_sites: u64, expected: &[(u16, &str, u64)]) {
    let got = samples(target);
    for &(k, kernel, n_samples) in expected {
        let (short, long) = (got[&k], got[&(k + 10)]);
        assert_eq!(
            long + call_sites - short,
            n_samples,
            "{target} kernel {k} ({kernel}): samples {short} (N) and {long} (2N)"
        );
    }
}

/// Cortex-M4F (DDI 0439D Table 7-1 and 7.2.3, targets/cortex-m4f.toml).
#[test]
fn cortex_m4f_float_kernels_match_trm_derived_counts() {
    // fir_f32, per output sample:
    //   first block: LDR r3,[pc] 2 + 1 (a literal in the code's memory);
    //   VLDR s15,[pc] pipelined after the load 1 + 1 (literal); MOV 1;
    //   the first tap: VLDMIA {s13} 1 + 1, VLDMIA {s14} 2, CMP 1, VFMA 3
    //   (its operands ready), BNE 1                             = 15
    //   15 more taps: the BNE's taken 1 + the same 9            = 150
    //   after the taps: ADD.W, CMP 2, VSTMIA {s15} 1 + 1, ADD.W, BNE 2
    //                                                           = 6
    //   the outer BNE's taken 1                                 = 1
    let fir = 15 + (TAPS - 1) * (1 + 9) + 6 + 1;
    // biquad_f32, per sample: VLDMIA {s14} 2 (s14 at 2); VFMA s15 (needs
    // s14) 3, its result at 2 + 4 = 6; CMP 1; VMUL s13 (needs s15 at 6) 1,
    // ready at 8; VNMUL 1; VFMA s13 (the addend s13 read a cycle late: 8 -
    // 1, in time) 3, ready at 12; VSTMIA {s15} 2; VADD (needs s13 at 12) 1;
    // VMOV s12 1; VFMA s12 (addend s12 late) 3; BNE 1 = 19; taken 1; the
    // loop's first instruction, a 32-bit VLDMIA at a halfword address,
    // 1 more when a branch lands on it (misaligned_target)    = 21
    let biquad = 19 + 1 + 1;
    // The N call's MOVS 1, LDR.W 2, BLX 1 + P(2), and its return lands on a
    // 32-bit SUBW at a halfword address (1), leave call site SUBW, MOV, MOVS
    // 3, BL 1 + P(1) = 12; the 2N call's MOVS 1, BLX 3, MOV, MOVS 2, BL 2
    // = 8.
    check(
        "cortex-m4f",
        12 - 8,
        &[(2, "fir_f32", N * fir), (4, "biquad_f32", N * biquad)],
    );
}

/// Cortex-M7 (targets/cortex-m7.toml): "a | b" issue in one cycle; the
/// predictor charges 8 for a misprediction, 6 for a BNE 3 or more cycles
/// after its flags were set. In the N run the outer loop's
/// BNE mispredicts its first taken execution and the tap loop's BNE
/// mispredicts twice in the first sample (its first taken and its exit),
/// once in every later one; the 2N run has learnt them.
#[test]
fn cortex_m7_float_kernels_match_derived_counts() {
    // fir_f32, per output sample:
    //   first block: LDR r3,[pc] | MOV; VLDR s15,[pc]; VLDMIA {s13} 1
    //   (alone); VLDMIA {s14} 1; CMP | VFMA (s14 ready); BNE (CMP's flags)
    //                                                           = 6
    //   15 more taps: VLDMIA, VLDMIA, CMP | VFMA, BNE           = 15 x 4
    //   after the taps: ADD.W | ADDS; VSTMIA 1; CMP; BNE        = 4
    //   the tap loop's exit mispredicts every sample            = 8
    let fir = 6 + (TAPS - 1) * 4 + 4 + 8;
    // biquad_f32, per sample: VLDMIA 1; VFMA s15 (needs s14) | CMP at 1,
    // its result at 1 + 5 = 6; VMUL s13 (needs s15) at 6, ready at 9;
    // VSTMIA 1 (alone) at 7; VNMUL at 8, ready at 11; VMOV s15, s13 at 9
    // (one VFP pipe), ready at 12; VFMA s15 (its addend read 2 late) at 10,
    // ready at 15; VADD (needs s15) at 15, VMOV s12, s10 at 16; VFMA s12
    // (its addend s12, ready at 19, read 2 late) at 17 | BNE    = 18
    let biquad = 18;
    // The N call's MOVS | LDR.W; BLX (needs fp) 2, MOV | MOVS; BL 2 = 4;
    // the 2N call's MOVS | BLX 1, MOV | MOVS; BL 2 = 3. Both BLX mispredict
    // (each kernel another target).
    check(
        "cortex-m7",
        4 - 3,
        &[
            // N run: the outer BNE's first taken and the tap loop's first
            // taken (the second misprediction of its first sample)
            (2, "fir_f32", N * fir - 8 - 8),
            // N run: the loop's first taken, for 6: the BNE issues 16
            // cycles after the CMP that set its flags (flag forwarding,
            // measured on silicon: jnk0le, cortex_m7.md, "flag forwarding
            // can reduce branch misprediction penalty from 8 to 6 cycles
            // ... at least 3 cycles before branch"; 8 before it was
            // adopted)
            (4, "biquad_f32", N * biquad - 6),
        ],
    );
}

/// Cortex-M33 (targets/cortex-m33.toml): VFMA issues in 1, its result after
/// 3, and keeps the FPU from any floating-point instruction for 3; VADD and
/// VMUL results after 2; VLDR a cycle a word [measured]; the other FPU
/// instructions the Cortex-M4's (LLVM's CortexM4Model); a
/// 16-bit BNE after a 32-bit instruction does not pair; a taken branch 1
/// more.
#[test]
fn cortex_m33_float_kernels_match_derived_counts() {
    // fir_f32, per output sample:
    //   first block: MOV 1; VLDR s15,[pc] 1 (a cycle a word, measured
    //   on silicon: jnk0le, cortex_m33.md, "load/store double execute in
    //   2 cycles (applies to FPU)", which overrules the M4 TRM's VLDR.32
    //   2 this block was priced with: 11); LDR r3,[pc] 1 (r3 at 4);
    //   VLDMIA {s13} 1 at 4; VLDMIA {s14} 1; CMP 1; VFMA at 7 (the FPU busy
    //   until 10); BNE at 8; the block ends when the FPU is free  = 10
    //   15 more taps: taken 1, VLDMIA, VLDMIA, CMP, VFMA at 3, BNE, the
    //   FPU free at 6                                          = 15 x 7
    //   after the taps: ADD.W, CMP, VSTMIA 1, ADD.W, BNE        = 5
    //   the outer BNE's taken                                   = 1
    let fir = 10 + (TAPS - 1) * 7 + 5 + 1;
    // biquad_f32, per sample: VLDMIA 1; VFMA s15 at 1 (busy, its result at
    // 4); VMUL at 4 (s13 after 2 [measured]: at 6); VNMUL 5 (s10 at 7);
    // VSTMIA 6; VMOV s15, s13 7; VFMA s15 at 8 (result at 11); VADD at 11;
    // VMOV s12, s10 12; CMP 13; VFMA s12 at 14 (busy until 17); BNE 15;
    // the block's end 17; taken 1; the loop's 32-bit VLDMIA at a halfword
    // address 1                                                 = 19
    let biquad = 17 + 1 + 1;
    // The N call's MOVS 1, LDR.W 1, BLX (needs fp, loaded 2 before) at 3,
    // 1, taken 1, the return onto a 32-bit SUBW at a halfword address 1,
    // leave call site SUBW, MOV, MOVS 3, BL 1 + 1 = 11; the 2N call's MOVS,
    // BLX 2, taken 1, MOV, MOVS 2, BL 2 = 7.
    check(
        "cortex-m33",
        11 - 7,
        &[(2, "fir_f32", N * fir), (4, "biquad_f32", N * biquad)],
    );
}
