//! The STM32F4 flash accelerator (issue 27, `sim-host/src/model/memsys.rs`)
//! against hand-derived counts.
//!
//! `guest-shim/examples/flash` runs each loop of `arm/loops.S` with the
//! FLASH_ACR value of its kernel, 100 times (kernel 2i+1) and 200 times
//! (kernel 2i+2). The loop functions empty the caches on entry and set
//! FLASH_ACR back to 0 before they return, so the two samples differ by
//! exactly 100 iterations in the steady state: each expected difference
//! below is 100 x (the loop's cycles at zero wait states + its stalls).
//!
//! Zero-wait cycles (targets/stm32f407.toml, the Cortex-M4 TRM's Table 3-1
//! rows): ADD.W, SUBS 1; B 1 + P = 2; a taken BNE 1 + P = 2; LDR 2, a load
//! after a load pipelines: 1 (3.3.2).
//!
//! Stalls (RM0090 3.5, the rules in memsys.rs), LATENCY = L:
//! - a line read from the flash: L;
//! - the line being executed: 0;
//! - with PRFTEN, the next sequential line: max(0, min(L, L + 1 - E)), E
//!   the cycles spent in the current line;
//! - with ICEN, a line in the 64-line instruction cache: 0 (lines read on
//!   a miss are copied in, and so are prefetched lines the core executes:
//!   the model's reading, which RM0090 3.5.2's CoreMark statement calls
//!   for; memsys.rs says why);
//! - a data read of the flash: L, or 0 in the 8-line data cache (DCEN).

use sim_host::model::target;

const PRFTEN: u64 = 1 << 8;
const ICEN: u64 = 1 << 9;
const DCEN: u64 = 1 << 10;

/// The 100-iteration difference of each kernel pair, in kernel order.
fn measured() -> Vec<u64> {
    e2e_tests::pair_differences("stm32f407", "flash", 0..13)
}

#[test]
fn flash_accelerator_loops_match_hand_derived_counts() {
    // straight: 16 ADD.W in lines L0..L3 (4 each, 4 cycles a line), SUBS
    // and BNE in L4; 16 + 1 + 2 = 19 cycles at zero wait states. The BNE
    // goes back from L4 to L0: never sequential.
    let straight = 19;
    // lines<N>: N - 1 taken B (2 each) and SUBS, BNE.W (1 + 2), each in a
    // line of its own, none sequential: N lines an iteration
    let lines = |n: u64| 2 * (n - 1) + 3;
    // flash_data: LDR 2, then 3 pipelined LDR 1 each, SUBS 1, BNE 2; one
    // line (the current line after the first iteration); four data lines
    let data = 2 + 3 + 1 + 2;
    let _ = (PRFTEN, ICEN, DCEN);
    let expected = [
        // FLASH_ACR = 0, its reset value: zero wait states, no stall
        straight,
        // LATENCY 5: L0 read after the branch, L1..L4 read in turn: 5 x 5
        straight + 5 * 5,
        // LATENCY 5, PRFTEN: L0 5; L1..L4 prefetched while the previous
        // line's 4 ADD.W ran: 5 + 1 - 4 = 2 each
        straight + 5 + 4 * 2,
        // LATENCY 5, ICEN: all five lines stay in the cache
        straight,
        // LATENCY 5, PRFTEN, ICEN: L0 hits (it was read on a miss), and so
        // do L1..L4 (prefetched in the first iteration and kept in the
        // cache; read literally, RM0090 3.5.2 would prefetch them again on
        // every pass: 2 each)
        straight,
        // LATENCY 2: five line reads x 2 (wait-state scaling)
        straight + 5 * 2,
        // lines64, LATENCY 5, ICEN: 64 lines fit the 64-line cache
        lines(64),
        // lines65, LATENCY 5, ICEN: 65 lines in turn, least recently used
        // replaced: every line was evicted before its next use, 65 x 5
        lines(65) + 65 * 5,
        // lines65, LATENCY 5, no cache: the same 65 x 5
        lines(65) + 65 * 5,
        // flash_data, LATENCY 5, ICEN: four data reads x 5
        data + 4 * 5,
        // flash_data, LATENCY 5, ICEN, DCEN: the four lines stay in the
        // 8-line data cache
        data,
        // the same loads from the SRAM and from the CCM data RAM, LATENCY
        // 5, ICEN: no flash access, no stall
        data,
        data,
    ];
    let got = measured();
    assert_eq!(got.len(), expected.len());
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        assert_eq!(*g, 100 * e, "kernels {} and {}", 2 * i + 1, 2 * i + 2);
    }
}

/// The accelerator's state is plain data: a rerun gives the same samples.
#[test]
fn flash_accelerator_reruns_are_identical() {
    e2e_tests::assert_reruns_identical("stm32f407", "flash");
}

/// Callgrind gets the stalls, hits and misses as six more events: the
/// file's summary is the report's totals, and lines65's own FetchStall and
/// FetchMiss are their hand-derived counts.
#[test]
fn callgrind_has_the_flash_stalls_as_events() {
    let dir = e2e_tests::scratch("flash-callgrind");
    let elf = e2e_tests::guest("stm32f407", "flash");
    let out = std::process::Command::new(e2e_tests::sim_host_bin())
        .current_dir(&*dir)
        .args([
            "run",
            "-q",
            "--target",
            "stm32f407",
            "--callgrind",
            "cg.out",
        ])
        .args(["--report-json", "r.json"])
        .arg(&elf)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let cg = std::fs::read_to_string(dir.join("cg.out")).unwrap();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    assert!(
        cg.lines()
            .any(|l| l == "events: Cycles Instructions FetchStall DataStall FetchHit FetchMiss DataHit DataMiss"),
        "{cg}"
    );
    let f = &report["flash"];
    let summary = format!(
        "summary: {} {} {} {} {} {} {} {}",
        report["totals"]["cycles"],
        report["totals"]["instructions"],
        f["fetch_stall"],
        f["data_stall"],
        f["icache_hits"],
        f["icache_misses"],
        f["dcache_hits"],
        f["dcache_misses"]
    );
    assert!(cg.lines().any(|l| l == summary), "{summary}\n{cg}");
    // lines65 runs four times (kernels 15..18: 100, 200, 100, 200
    // iterations), with LATENCY 5 and ICEN or no cache: 65 lines missed
    // per iteration (tests above), 300 x 2 x 65 x 5. Per call, the block
    // that acr_set returns to reads the function's first line again (5),
    // and the alignment NOPs before the loop head (.p2align 5) read the
    // next line (5 more) when the function starts in the first half of a
    // 32-byte block; its last line (POP) runs after FLASH_ACR = 0: free.
    let t = target::builtin("stm32f407").unwrap();
    let image = sim_host::image::elf::GuestImage::load(&elf, &t).unwrap();
    let start = image.function("lines65").unwrap().addr;
    let prologue_lines = if start % 32 == 0 { 2 } else { 1 };
    let expected = 300 * 2 * 65 * 5 + 4 * 5 * prologue_lines;
    let mut own = cg.lines().skip_while(|l| !l.ends_with(" lines65"));
    let line = own.nth(1).unwrap();
    let column = |n: usize| -> u64 { line.split(' ').nth(n).unwrap().parse().unwrap() };
    assert_eq!(column(3), expected, "{line}");
    // each of those line reads is a miss; so are, per call, the two reads
    // of lines65's own lines at LATENCY 0, which stall nothing: its first
    // line before `acr_set` switches the accelerator on, and the line of
    // its POP after `acr_set` sets FLASH_ACR back to 0
    assert_eq!(column(6), expected / 5 + 4 * 2, "{line}");
}

/// Each section's share of the stalls, hits and misses (`sections[].memory`
/// of the JSON report): the 100-iteration difference of a kernel pair is
/// 100 x one iteration's, derived from the rules at the head of this file
/// for the loops `flash_accelerator_loops_match_hand_derived_counts`
/// describes.
#[test]
fn each_section_has_its_own_stalls_hits_and_misses() {
    let dir = e2e_tests::scratch("flash-sections");
    let elf = e2e_tests::guest("stm32f407", "flash");
    let out = std::process::Command::new(e2e_tests::sim_host_bin())
        .current_dir(&*dir)
        .args([
            "run",
            "-q",
            "--target",
            "stm32f407",
            "--report-json",
            "r.json",
        ])
        .arg(&elf)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    let memory = |sid: u64| -> [u64; 6] {
        let rows = report["sections"].as_array().unwrap();
        let row = rows
            .iter()
            .find(|r| r["path"].as_array().unwrap().last().unwrap() == sid)
            .unwrap_or_else(|| panic!("no section {sid}"));
        let m = &row["memory"];
        [
            "fetch_stall",
            "data_stall",
            "fetch_hits",
            "fetch_misses",
            "data_hits",
            "data_misses",
        ]
        .map(|k| m[k].as_u64().unwrap_or_else(|| panic!("{k} of {row}")))
    };
    // per iteration: [fetch stall, data stall, I hits, I misses, D hits,
    // D misses], kernel pair index
    let expected: [(u16, [u64; 6]); 7] = [
        // straight, LATENCY 5: five line reads, 5 each
        (1, [25, 0, 0, 5, 0, 0]),
        // PRFTEN: L0 read (a miss, 5), L1..L4 prefetched (2 each, neither
        // a hit nor a miss)
        (2, [13, 0, 0, 1, 0, 0]),
        // PRFTEN, ICEN: L0..L4 hit (the prefetched lines were kept)
        (4, [0, 0, 5, 0, 0, 0]),
        // lines65, ICEN: every line missed, 5 each
        (7, [325, 0, 0, 65, 0, 0]),
        // flash_data, no DCEN: the loop is its current line; four data
        // reads missed, 5 each
        (9, [0, 20, 0, 0, 0, 4]),
        // DCEN: the four data lines hit
        (10, [0, 0, 0, 0, 4, 0]),
        // the same loads from the SRAM: nothing
        (11, [0; 6]),
    ];
    for (pair, per_iteration) in expected {
        let (a, b) = (
            memory(2 * u64::from(pair) + 1),
            memory(2 * u64::from(pair) + 2),
        );
        let got: Vec<u64> = b.iter().zip(a).map(|(b, a)| b - a).collect();
        let want: Vec<u64> = per_iteration.iter().map(|n| 100 * n).collect();
        assert_eq!(got, want, "kernels {} and {}", 2 * pair + 1, 2 * pair + 2);
    }
}

/// An access to FLASH_ACR's page that is not a 32-bit access of FLASH_ACR
/// (FLASH_KEYR at +4, a 16-bit read of FLASH_ACR) is not modelled: it
/// faults naming the board's peripheral range, or, on a board file with no
/// peripheral map, the register it is beside; `--peripherals ignore` reads
/// it as 0.
#[test]
fn accesses_beside_flash_acr_fault_naming_what_they_are_beside() {
    let dir = e2e_tests::scratch("flash-beside");
    let elf = e2e_tests::guest("stm32f407", "flash");
    let run = |target: &str, extra: &[&str], mode: &str| {
        let choice = if target.ends_with(".toml") {
            "--target-file"
        } else {
            "--target"
        };
        let out = std::process::Command::new(e2e_tests::sim_host_bin())
            .current_dir(&*dir)
            .args(["run", "-q", "--max-cycles", "10000000", choice, target])
            .args(extra)
            .arg(&elf)
            .args(["--", mode])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for (mode, size) in [("keyr", 4), ("acr16", 2)] {
        let (code, _, err) = run("stm32f407", &[], mode);
        assert_eq!(code, Some(120), "{mode}: {err}");
        assert!(
            err.contains(&format!("read ({size} bytes) in peripheral AHB1")),
            "{mode}: {err}"
        );
        let (code, out, err) = run("stm32f407", &["--peripherals", "ignore"], mode);
        assert_eq!((code, out.as_str()), (Some(0), "0\n"), "{mode}: {err}");
    }
    // the same board with no peripheral map: the fault says what the
    // access is beside
    let builtin = e2e_tests::repo_root().join("targets/stm32f407.toml");
    let text = std::fs::read_to_string(builtin).unwrap();
    let start = text.find("\n[system]\n").unwrap();
    let end = text.find("\n[flash]\n").unwrap();
    let unmapped = format!("{}{}", &text[..start], &text[end..]).replace(
        "guest-shim/ld/",
        &format!("{}/guest-shim/ld/", e2e_tests::repo_root().display()),
    );
    std::fs::write(dir.join("bare.toml"), unmapped).unwrap();
    let (code, _, err) = run("bare.toml", &[], "keyr");
    assert_eq!(code, Some(120), "{err}");
    assert!(
        err.contains("read (4 bytes) beside FLASH_ACR (the one flash register modelled"),
        "{err}"
    );
}
