//! Hazard3's branch predictor (RP2350 datasheet 3.8.7.10), end to end:
//! the rv32imac target (Hazard3's cycle table) with the predictor the
//! RP2350 configures (`[cycles.predictor]` organisation
//! "last-taken-backward", penalty 1; conditional branches 1 cycle, the
//! predictor charging the second of a mispredicted one), against counts
//! derived by hand from the datasheet's rules.
//!
//! The rules: the buffer holds the last taken backward branch, predicted
//! taken when seen again; every other branch is predicted not taken; a
//! predicted branch that falls through empties the buffer. "Correctly
//! predicted branches execute in one cycle", mispredicted ones in two.

use sim_host::model::target::Target;

const ITER: u64 = 100;

/// The rv32imac table with Hazard3's predictor switched on, as the
/// RP2350 has it.
fn with_predictor() -> Target {
    let path = e2e_tests::repo_root().join("targets/rv32imac.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with("branch_cond = "))
        .expect("rv32imac has a branch_cond row");
    let text = text.replace(
        row,
        "branch_cond = { cycles = 1, cite = \"RP2350 datasheet 3.8.7.1: 1 if correctly predicted\" }",
    ) + "\n[cycles.predictor]\norganisation = \"last-taken-backward\"\npenalty = 1\n\
         cite = \"RP2350 datasheet 3.8.7.10: 2 if mispredicted\"\n";
    Target::parse(&text, &path).unwrap()
}

/// Every kernel's call overhead (Hazard3 cycle counts): JAL into the
/// kernel 2, its RET (JALR, or C.JR) 2, the leave call site LI, LI, JAL
/// 1 + 1 + 2.
const OVERHEAD: u64 = 2 + 2 + 4;

#[test]
fn hazard3_predictor_kernels_match_hand_derived_counts() {
    let expected = [
        // the datasheet's copy of 10 bytes: LA, LA (AUIPC + ADDI each), LI
        // 5; BEQZ not taken, predicted 1; ADD 1; the loop "52 cycles": 5
        // a byte (LBU, SB: "though it depends on the load ... no stall",
        // 2 x ADDI, BLTU predicted), its first taken and its last falling
        // BLTU mispredicted, 1 each
        (1, "copy", 5 + 1 + 1 + (10 * 5 + 1 + 1)),
        // LI; C.ADDI at a word address + BNEZ: "does not engage", every
        // taken BNEZ mispredicted (99), the falling one predicted
        (2, "delay loop, word aligned", 1 + ITER * 2 + (ITER - 1)),
        // LI, C.NOP; the body at a halfword address: it engages, only
        // the first taken and the falling BNEZ mispredict
        (3, "delay loop, halfword", 1 + 1 + ITER * 2 + 2),
        // LI; per outer iteration LI, 2 x (ADDI, BNEZ), ADDI, BNEZ = 7;
        // the two loops' branches evict each other: the inner taken (not
        // held), the inner falling (held: predicted taken, empties the
        // buffer) and the outer taken (not held) mispredict in every
        // outer iteration, the outer falling one is predicted (empty
        // buffer): 3 x 99 + 2
        (4, "nested loops", 1 + ITER * 7 + 3 * (ITER - 1) + 2),
        // LI; per iteration BNEZ forward taken, ADDI, BNEZ back = 3; the
        // forward one is never held (100 mispredictions), the backward
        // one mispredicts on its first taken and its falling execution
        (5, "forward branch", 1 + ITER * 3 + ITER + 2),
    ];
    let r = e2e_tests::record(with_predictor(), "rv32imac", "predictor", "predictor");
    assert_eq!(r.samples.len(), expected.len());
    for ((sid, kind, cycles), (got_sid, got)) in expected.iter().zip(&r.samples) {
        assert_eq!(sid, got_sid);
        assert_eq!(*got, cycles + OVERHEAD, "kernel {sid} ({kind})");
    }
}

/// Without the predictor (rv32imac as it is: BRANCH_PREDICTOR = 0) every
/// taken conditional branch costs 2 and a falling one 1: the same kernels
/// differ from the predicted counts by exactly the rule.
#[test]
fn without_the_predictor_every_taken_branch_costs_two() {
    let t = sim_host::model::target::builtin("rv32imac").unwrap();
    let expected = [
        // 9 taken BLTU
        (1, 5 + 1 + 1 + 10 * 5 + 9),
        (2, 1 + ITER * 2 + (ITER - 1)),
        (3, 1 + 1 + ITER * 2 + (ITER - 1)),
        // 100 inner and 99 outer taken
        (4, 1 + ITER * 7 + ITER + (ITER - 1)),
        // 100 forward and 99 backward taken
        (5, 1 + ITER * 3 + ITER + (ITER - 1)),
    ];
    let r = e2e_tests::record(t, "rv32imac", "predictor", "predictor");
    let got: Vec<(u16, u64)> = r.samples;
    let want: Vec<(u16, u64)> = expected.iter().map(|&(s, c)| (s, c + OVERHEAD)).collect();
    assert_eq!(got, want);
}

/// The predictor's table is validated: a table size given to Hazard3's
/// organisation is an error naming the field, not a number ignored.
#[test]
fn a_table_size_for_hazard3s_predictor_is_refused() {
    let path = e2e_tests::repo_root().join("targets/rv32imac.toml");
    let text = std::fs::read_to_string(&path).unwrap()
        + "\n[cycles.predictor]\norganisation = \"last-taken-backward\"\nentries = 64\n\
           penalty = 1\ncite = \"x\"\n";
    let err = Target::parse(&text, &path).unwrap_err().to_string();
    assert!(err.contains("cycles.predictor.entries"), "{err}");
    assert!(err.contains("rv32imac.toml"), "{err}");
    let text = std::fs::read_to_string(&path).unwrap()
        + "\n[cycles.predictor]\norganisation = \"gshare\"\npenalty = 1\ncite = \"x\"\n";
    let err = Target::parse(&text, &path).unwrap_err().to_string();
    assert!(err.contains("gshare"), "{err}");
}
