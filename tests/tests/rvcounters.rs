//! RISC-V's counter CSRs wherever their instructions are (issue 43, M05):
//! the `rvcounters` example runs one position-independent routine from
//! flash, from `.data` and from a copy it writes into RAM at run time.
//! Before the fix only the image's flash code was simulated: from RAM the
//! counters were the host's time-stamp counter (a different figure every
//! run), `time` was an illegal instruction, and a write to `mcycle` did
//! not move the simulated counter.
//!
//! The routine (`guest-shim/examples/rvcounters/rvcounters.c`):
//!   csrr cycle, instret, mcycle, minstret, time      <- the "before" reads
//!   mv t5, a1 ; 1: addi t5, t5, -1 ; bnez t5, 1b    <- N iterations
//!   csrr cycle, instret, mcycle, minstret, time      <- the "after" reads
//!   (ten stores)
//!   csrr cycleh, instreth
//!   csrw mcycle, a2 ; csrr cycle, cycleh, mcycle      <- a2 = 0xfffffffe
//!   csrw minstret, a2 ; csrr minstret, instreth, timeh
//!
//! A counter read gives the count at the start of the reading instruction.
//! Between the k-th "before" read and the k-th "after" read run the
//! 5 - k remaining "before" reads, `mv`, the loop and the first k "after"
//! reads: 5 reads + `mv` + N `addi` + N `bnez` = 2N + 6 instructions,
//! whatever k. So every instret/minstret difference is 2N + 6 and every
//! cycle/mcycle (and, where mtime counts core cycles, time) difference is
//! the cost of those same instructions.

use e2e_tests::{guest, sim_host_bin};
use std::process::Command;

/// Loop iterations of the runs.
const N: u64 = 1000;
const PLACES: [&str; 3] = ["flash", "data", "ram"];

/// The readings of one place, in the guest's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Readings {
    before: [u64; 5],
    after: [u64; 5],
    cycleh: u64,
    instreth: u64,
    cycle_written: u64,
    cycleh_written: u64,
    mcycle_written: u64,
    minstret_written: u64,
    instreth_written: u64,
    timeh: u64,
}

impl Readings {
    /// after - before of cycle, instret, mcycle, minstret, time (32-bit).
    fn differences(&self) -> [u64; 5] {
        std::array::from_fn(|k| self.after[k].wrapping_sub(self.before[k]) & 0xffff_ffff)
    }
}

/// Runs the example on `target`; the printed readings of each place, and
/// the whole console output.
fn run(target: &str) -> (Vec<Readings>, String) {
    let out = Command::new(sim_host_bin())
        .args(["run", "--target", target, "-q", "--max-cycles", "10000000"])
        .arg(guest(target, "rvcounters"))
        .arg("--")
        .arg(N.to_string())
        .output()
        .expect("sim-host starts");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{target}: {stdout}\n{stderr}");
    let readings = PLACES
        .iter()
        .map(|place| {
            let line = stdout
                .lines()
                .find(|l| l.split_whitespace().next() == Some(place))
                .unwrap_or_else(|| panic!("{target}: no `{place}` line in {stdout}"));
            let v: Vec<u64> = line
                .split_whitespace()
                .skip(1)
                .map(|w| w.parse().unwrap())
                .collect();
            assert_eq!(v.len(), 18, "{target}: {line}");
            Readings {
                before: v[0..5].try_into().unwrap(),
                after: v[5..10].try_into().unwrap(),
                cycleh: v[10],
                instreth: v[11],
                cycle_written: v[12],
                cycleh_written: v[13],
                mcycle_written: v[14],
                minstret_written: v[15],
                instreth_written: v[16],
                timeh: v[17],
            }
        })
        .collect();
    (readings, stdout)
}

/// The writes, the same in every place: `csrw mcycle, 0xfffffffe` keeps
/// the high half; `cycle` one instruction later reads 0xffffffff, `cycleh`
/// two later the high half plus one (the low half wrapped), `mcycle` three
/// later 1. The same for minstret: 0xffffffff, then instreth + 1. The
/// place before wrapped each high half once, so they count the places.
fn assert_writes(target: &str, place: usize, r: &Readings) {
    let place = place as u64;
    assert_eq!((r.cycleh, r.instreth), (place, place), "{target} {r:?}");
    assert_eq!(r.cycle_written, 0xffff_ffff, "{target} {r:?}");
    assert_eq!(r.cycleh_written, place + 1, "{target} {r:?}");
    assert_eq!(r.mcycle_written, 1, "{target} {r:?}");
    assert_eq!(r.minstret_written, 0xffff_ffff, "{target} {r:?}");
    assert_eq!(r.instreth_written, place + 1, "{target} {r:?}");
    // time is not written: a few thousand cycles in, its high half is 0
    assert_eq!(r.timeh, 0, "{target} {r:?}");
}

/// rv32imac (targets/rv32imac.toml, Hazard3's Instruction Cycle Counts):
/// csrr, mv and addi 1 cycle, bnez 2 taken and 1 not taken, flash and
/// SRAM without wait states. The 2N + 6 instructions cost 5 (reads) + 1
/// (mv) + N (addi) + 2(N - 1) + 1 (bnez) = 3N + 5 cycles; mtime counts
/// core cycles (the guest sets FULLSPEED), so `time` moves as much.
#[test]
fn rv32imac_counters_are_simulated_in_flash_data_and_code_written_at_run_time() {
    let (readings, stdout) = run("rv32imac");
    let cycles = 3 * N + 5;
    assert_eq!(cycles, 3005);
    for (place, r) in readings.iter().enumerate() {
        assert_eq!(
            r.differences(),
            [cycles, 2 * N + 6, cycles, 2 * N + 6, cycles],
            "rv32imac {}: {r:?}",
            PLACES[place]
        );
        assert_writes("rv32imac", place, r);
    }
    let (_, again) = run("rv32imac");
    assert_eq!(stdout, again, "a rerun reads other counts");
}

/// sifive-e31 (targets/sifive-e31.toml, FE310-G000 3.2 and 3.3): every
/// one of the 2N + 6 instructions issues in 1 cycle (no read's result is
/// used), and the loop's `bnez` is mispredicted (3 cycles each) at least
/// on its first taken run (its BHT counter starts weakly not-taken, or
/// the BTB has no target yet) and on its last, not taken run, and once
/// more when an earlier branch of the same BHT index (halfword address
/// modulo 128) left the counter strongly not-taken: 2N + 6 + 3m cycles,
/// m = 2 or 3 by where the copy is. mtime counts the 32,768 Hz real-time
/// clock at 320 MHz: at most one tick in a few thousand cycles.
#[test]
fn sifive_e31_counters_are_simulated_in_flash_data_and_code_written_at_run_time() {
    let (readings, stdout) = run("sifive-e31");
    let instructions = 2 * N + 6;
    for (place, r) in readings.iter().enumerate() {
        let [cycle, instret, mcycle, minstret, time] = r.differences();
        let what = format!("sifive-e31 {}: {r:?}", PLACES[place]);
        assert_eq!((instret, minstret), (instructions, instructions), "{what}");
        assert_eq!(mcycle, cycle, "{what}");
        assert!(cycle >= instructions, "{what}");
        let mispredictions = (cycle - instructions) / 3;
        assert_eq!(instructions + 3 * mispredictions, cycle, "{what}");
        assert!((2..=3).contains(&mispredictions), "{what}");
        assert!(time <= 1, "{what}");
        assert_writes("sifive-e31", place, r);
    }
    let (_, again) = run("sifive-e31");
    assert_eq!(stdout, again, "a rerun reads other counts");
}
