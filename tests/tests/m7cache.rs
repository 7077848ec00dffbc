//! The Cortex-M7 L1 caches of the stm32f746 preset (issue 27,
//! `sim-host/src/model/l1cache.rs`) against hand-derived counts.
//!
//! `guest-shim/examples/m7cache` runs each loop of `arm/loops.S` with the
//! caches its kernel names, 100 times (kernel 2i+1) and 200 times (kernel
//! 2i+2), after a short run of the same loop through the same call site
//! (the cortex-m7 table's branch predictor learns its branches and its
//! call's target the same way for both) and after cleaning, invalidating
//! and enabling the caches the same way for both: the two samples differ
//! by exactly 100 steady-state iterations. A loop run from its copy in the ITCM, on data in the DTCM,
//! has no stall (TCM): its difference is the reference, 100 x what the
//! core's cycle table charges an iteration. Each other difference is that
//! reference + 100 x the iteration's stalls, derived below from the rules
//! (targets/stm32f746.toml):
//! - flash (AXIM, write-through): latency F = 7; SRAM1 (write-back,
//!   write-allocate): latency S = 2; ITCM, DTCM: none;
//! - instruction side, per executed block: with CCR.IC, each 32-byte line
//!   the block touches is looked up, a miss costs the latency; without
//!   it, each 64-bit fetch granule the block touches costs the latency;
//!   the instruction cache has 64 sets of 2 ways (4 KiB), least recently
//!   used replaced;
//! - data side, per access: with CCR.DC a hit costs nothing and a miss the
//!   latency, plus the latency again when it evicts a dirty line; without
//!   it a read costs the latency and a write nothing (store buffer); the
//!   data cache has 32 sets of 4 ways (4 KiB).

const F: u64 = 7;
const S: u64 = 2;

/// The 100-iteration difference of each kernel pair, in kernel order,
/// from the second pair (the first trains the branch predictor on the
/// guest's call sites, whose first calls mispredict).
fn measured() -> Vec<u64> {
    e2e_tests::pair_differences("stm32f746", "m7cache", 1..22)
}

#[test]
fn l1_cache_loops_match_hand_derived_counts() {
    let d = measured();
    assert_eq!(d.len(), 21);
    // the references: loops from the ITCM copy (kernels 2, 5, 8) and on
    // DTCM data (9, 14, 16, 18)
    let (straight, conflict2, conflict3) = (d[2], d[5], d[8]);
    let (dload4, dload5, dstore5, dstore4) = (d[9], d[14], d[16], d[18]);
    for r in [
        straight, conflict2, conflict3, dload4, dload5, dstore5, dstore4,
    ] {
        assert!(
            r >= 100,
            "a reference iteration costs at least a cycle: {d:?}"
        );
    }
    let expected = [
        // straight from the flash, caches off: 16 ADD.W (8 granules) and
        // SUBS, BNE.N (a ninth): 9 AXI reads x F
        straight + 100 * 9 * F,
        // with the I-cache: its 3 lines stay cached
        straight,
        straight,
        // conflict2, I-cache: 2 blocks in 2 lines of one set; 2 ways hold
        // both
        conflict2,
        // conflict2, caches off: B.W, then SUBS + BNE.W, one granule each
        conflict2 + 100 * 2 * F,
        conflict2,
        // conflict3, I-cache: 3 lines of one set, 2 ways, least recently
        // used replaced: each line was evicted before its next use, 3
        // misses
        conflict3 + 100 * 3 * F,
        // conflict3, caches off: 3 granules
        conflict3 + 100 * 3 * F,
        conflict3,
        // dload4 (4 loads, 4 lines in 4 sets): DTCM; SRAM with the D-cache
        // (all hit once filled); SRAM without it: 4 reads x S
        dload4,
        dload4,
        dload4 + 100 * 4 * S,
        // the same loads of a table in the flash: cached (write-through
        // region, read-allocate); uncached: 4 x F
        dload4,
        dload4 + 100 * 4 * F,
        // dload5: 5 lines of one set, 4 ways: every load misses, 5 x S
        dload5,
        dload5 + 100 * 5 * S,
        // dstore5: 5 stores to lines of one set, write-allocate: each
        // misses (S) and evicts the dirty line stored 4 stores before (S)
        dstore5,
        dstore5 + 100 * 5 * (S + S),
        // dstore4: 4 lines fit the 4 ways: hits, no write-back
        dstore4,
        dstore4,
        // dstore5 without the D-cache: stores go to the store buffer
        dstore5,
    ];
    for (i, (g, e)) in d.iter().zip(expected).enumerate() {
        assert_eq!(*g, e, "kernels {} and {}: {d:?}", 2 * i + 3, 2 * i + 4);
    }
}

/// The caches' state is plain data: a rerun gives the same samples.
#[test]
fn l1_cache_reruns_are_identical() {
    e2e_tests::assert_reruns_identical("stm32f746", "m7cache");
}

/// The report and --report-json carry the caches' counts; the dstore5
/// kernels' write-backs alone are (5 n - 4) for n = 100 and 200 (the
/// first four stores of a call fill invalid ways), and conflict3's
/// instruction-cache misses 3 n.
#[test]
fn the_report_has_the_cache_counts() {
    let dir = e2e_tests::scratch("m7cache-report");
    let elf = e2e_tests::guest("stm32f746", "m7cache");
    let out = std::process::Command::new(e2e_tests::sim_host_bin())
        .current_dir(&*dir)
        .args(["run", "--target", "stm32f746", "--report-json", "r.json"])
        .arg(&elf)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("L1 caches (I-cache off, D-cache off at the end)"),
        "{text}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    let c = &report["l1cache"];
    let n = |k: &str| c[k].as_u64().unwrap_or_else(|| panic!("{k}: {c}"));
    assert!(n("write_backs") >= 5 * 300 - 8, "{c}");
    assert!(n("icache_misses") >= 3 * 300, "{c}");
    assert!(n("fetch_stall") + n("data_stall") < report["totals"]["cycles"].as_u64().unwrap());
    // a target without the model reports nothing of it
    let plain = std::process::Command::new(e2e_tests::sim_host_bin())
        .current_dir(&*dir)
        .args([
            "run",
            "-q",
            "--target",
            "cortex-m7",
            "--report-json",
            "p.json",
        ])
        .arg(e2e_tests::guest("cortex-m7", "arpcalls"))
        .output()
        .unwrap();
    assert_eq!(plain.status.code(), Some(0), "{plain:?}");
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("p.json")).unwrap()).unwrap();
    assert!(p.get("l1cache").is_none());
}
