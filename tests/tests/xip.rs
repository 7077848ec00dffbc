//! The RP2040 XIP cache (issue 27, `sim-host/src/model/xip.rs`) against
//! hand-derived counts.
//!
//! `guest-shim/examples/xip` runs each loop of `arm/loops.S` with the
//! XIP_CTRL value of its kernel, 100 times (kernel 2i+1) and 200 times
//! (kernel 2i+2). The loop functions flush the cache on entry and set
//! XIP_CTRL back to its reset value before they return, so the two samples
//! differ by exactly 100 iterations in the steady state: each expected
//! difference below is 100 x (the loop's cycles at zero wait states + its
//! stalls).
//!
//! Zero-wait cycles (targets/rp2040.toml, the Cortex-M0+ TRM's Table 3-1
//! rows): ADDS, SUBS 1; STR, LDR 2; a taken BNE 2, an untaken BEQ 1; BL 3.
//!
//! Stalls (RP2040 datasheet 2.6.3, the rules in xip.rs): 16 KiB, two
//! ways, 8-byte lines (1024 sets: lines 8 KiB apart share a set);
//! - a line in the cache: 0 (a 1-cycle hit, what the table counts);
//! - any other line: M = 2 x (8 + 4 + 16) = 56 cycles, the SSI's
//!   quad-I/O read of 8 bytes at SCK = clk_sys / 2 (boot2_w25q080.S);
//! - the 0x11 alias looks up but never fills, 0x12 never looks up but
//!   fills, 0x13 does neither; XIP_CTRL.EN clear: neither.

/// The stall of a line read from the flash.
const M: u64 = 56;

/// The 100-iteration difference of each kernel pair, in kernel order.
fn measured() -> Vec<u64> {
    e2e_tests::pair_differences("rp2040", "xip", 0..12)
}

#[test]
fn xip_cache_loops_match_hand_derived_counts() {
    // straight: STR to FLUSH 2, 13 ADDS, SUBS 1, BNE 2 = 18 cycles; 32
    // bytes from a line start: four lines, looked up when the block starts
    let straight = 2 + 13 + 1 + 2;
    // sets<N>: SUBS 1, BEQ not taken 1, BL 3 in line A; then one BL 3 in
    // each further line, 8 KiB apart, the last back to A
    let sets = |n: u64| 1 + 1 + 3 + 3 * (n - 1);
    // loads: four LDR 2 (one line), SUBS 1, BNE 2 (a second line), the
    // loads from four lines of a table in the flash
    let loads = 4 * 2 + 1 + 2;
    let expected = [
        // the cache on, FLUSH written 0: the four lines stay (warm)
        straight,
        // FLUSH written 1 each iteration: the four lines miss (cold)
        straight + 4 * M,
        // XIP_CTRL.EN clear: every line read from the flash
        straight + 4 * M,
        // the same loop in the SRAM, the cache off: no XIP access
        straight,
        // two lines in one set: both fit the two ways
        sets(2),
        // three lines in one set, least recently used replaced: each
        // evicted before its next use, three misses
        sets(3) + 3 * M,
        // data through 0x10: the table's four lines stay
        loads,
        // through 0x11 (not allocating), 0x12 (not looked up), 0x13
        // (bypassing): four line reads an iteration
        loads + 4 * M,
        loads + 4 * M,
        loads + 4 * M,
        // the cache off: the loop's two code lines and four data lines
        loads + 6 * M,
        // one line through 0x12 (read, allocated), then through 0x11 (a
        // hit): LDR, LDR, SUBS, BNE = 7, one line read
        2 + 2 + 1 + 2 + M,
    ];
    let got = measured();
    assert_eq!(got.len(), expected.len());
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        assert_eq!(*g, 100 * e, "kernels {} and {}", 2 * i + 1, 2 * i + 2);
    }
}

/// The cache's state is plain data: a rerun gives the same samples.
#[test]
fn xip_cache_reruns_are_identical() {
    e2e_tests::assert_reruns_identical("rp2040", "xip");
}

/// The report, `--report-json` and callgrind show the cache's counts:
/// callgrind's summary is the report's totals and stalls, and the report
/// says what the run did.
#[test]
fn the_report_and_callgrind_show_the_xip_cache() {
    let dir = e2e_tests::scratch("xip-report");
    let elf = e2e_tests::guest("rp2040", "xip");
    let out = std::process::Command::new(e2e_tests::sim_host_bin())
        .current_dir(&*dir)
        .args(["run", "--target", "rp2040", "--callgrind", "cg.out"])
        .args(["--report-json", "r.json"])
        .arg(&elf)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("XIP cache of `xip`"), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    let xip = &report["xip"];
    assert_eq!(xip["miss_cycles"], 56);
    assert_eq!(
        xip["control"], 3,
        "the loops leave XIP_CTRL at its reset value"
    );
    // 24 kernels flush before the sample, on entry and on return, and
    // straight_cold once an iteration (100 + 200)
    assert_eq!(xip["flushes"], 3 * 24 + 300);
    let n = |k: &str| xip[k].as_u64().unwrap();
    assert_eq!(n("fetch_stall"), M * n("fetch_misses"));
    assert_eq!(n("data_stall"), M * n("data_misses"));
    let cg = std::fs::read_to_string(dir.join("cg.out")).unwrap();
    assert!(
        cg.lines()
            .any(|l| l == "events: Cycles Instructions FetchStall DataStall FetchHit FetchMiss DataHit DataMiss"),
        "{cg}"
    );
    let summary = format!(
        "summary: {} {} {} {} {} {} {} {}",
        report["totals"]["cycles"],
        report["totals"]["instructions"],
        xip["fetch_stall"],
        xip["data_stall"],
        xip["fetch_hits"],
        xip["fetch_misses"],
        xip["data_hits"],
        xip["data_misses"]
    );
    assert!(cg.lines().any(|l| l == summary), "{summary}\n{cg}");
    // each section has its share (model::memory_counters), within the run's
    let sections = report["sections"].as_array().unwrap();
    let in_sections: u64 = sections
        .iter()
        .map(|r| r["memory"]["fetch_misses"].as_u64().unwrap())
        .sum();
    assert!(in_sections > 0 && in_sections <= n("fetch_misses"));
}

/// What the model does not have stops the run, named: the cache-as-SRAM
/// window (a peripheral range of the target file) and XIP_CTRL's hit
/// counter (beside the modelled registers).
#[test]
fn the_cache_as_sram_and_the_counters_are_refused_by_name() {
    let dir = e2e_tests::scratch("xip-refused");
    let elf = e2e_tests::guest("rp2040", "xip");
    for (mode, named) in [
        ("sram", "XIP cache-as-SRAM (not modelled)"),
        ("counter", "beside XIP_CTRL, FLUSH and STAT"),
    ] {
        let out = std::process::Command::new(e2e_tests::sim_host_bin())
            .current_dir(&*dir)
            .args([
                "run",
                "-q",
                "--target",
                "rp2040",
                "--max-cycles",
                "10000000",
            ])
            .arg(&elf)
            .args(["--", mode])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(120), "{mode}: {err}");
        assert!(err.contains(named), "{mode}: {err}");
    }
}

/// `sim-host targets` says what stands in front of the rp2040's flash.
#[test]
fn the_target_list_shows_the_xip_cache() {
    let out = std::process::Command::new(e2e_tests::sim_host_bin())
        .arg("targets")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "  XIP cache in front of `xip`: 16 KiB, 2 ways, 8-byte lines, a line read from the flash 56 cycles"
        ),
        "{text}"
    );
}
