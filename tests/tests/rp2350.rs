//! The RP2350 XIP cache (issue 27, `sim-host/src/model/xip/rp2350.rs`)
//! against hand-derived counts.
//!
//! `guest-shim/examples/xip-rp2350` runs each loop of `riscv/loops.S` with
//! the XIP_CTRL value of its kernel, 100 times (kernel 2i+1) and 200 times
//! (kernel 2i+2). The loop functions invalidate every line on entry and
//! set XIP_CTRL back to its reset value before they return, so the two
//! samples differ by exactly 100 iterations in the steady state: each
//! expected difference below is 100 x (the loop's cycles at zero wait
//! states + its stalls).
//!
//! Zero-wait cycles (targets/rp2350.toml, the Hazard3 table's rows): ADDI,
//! SB, LW, LB 1 (no load is followed by a use of its result); a BNEZ back
//! to its loop's head 1, predicted taken (the RP2350's branch predictor,
//! datasheet 3.8.7.10: its first taken execution and its last, falling
//! one are mispredicted once per sample, the same in both samples of a
//! pair, so their difference has none); an untaken BEQZ 1 (predicted
//! not taken); J 2 (the predictor sees only conditional branches). Every
//! instruction is 4 bytes.
//!
//! Stalls (RP2350 datasheet 4.4, the rules in xip/rp2350.rs): 16 KiB, two
//! ways, 8-byte lines (1024 sets: lines 8 KiB apart share a set);
//! - a line in the cache: 0 (a 1-cycle hit, what the table counts);
//! - a QMI transfer of B bits at SCK = clk_sys / 3 (as the bootrom
//!   leaves it) with 8 + 6 + 2 + 4 SCK of prefix, address, suffix and
//!   dummy before the quad data: 3 x (20 + B / 4); chained to the previous
//!   one (the next address, within 66 cycles, no 1 KiB boundary reached
//!   before it): 3 x B / 4. A line (64 bits): L = 108, chained C = 48; a
//!   word: W = 84, chained WC = 24; a byte: 3 x (20 + 2) = 66. No loop
//!   below crosses a 1 KiB boundary inside (64-byte aligned, at most 64
//!   bytes);
//! - through the cache a miss fills its line; the 0x14 window and a
//!   cache disabled by XIP_CTRL.EN_SECURE read what is accessed (a fetch:
//!   its 32-bit words).

use sim_host::model::target;

/// A line read, and one chained to the previous transfer.
const L: u64 = 108;
const C: u64 = 48;
/// A 32-bit read, and one chained; an 8-bit read.
const W: u64 = 84;
const WC: u64 = 24;
const B: u64 = 66;

/// The 100-iteration difference of each kernel pair, in kernel order.
fn measured() -> Vec<u64> {
    e2e_tests::pair_differences("rp2350", "xip-rp2350", 0..13)
}

#[test]
fn rp2350_xip_loops_match_hand_derived_counts() {
    // straight: 8 SB, 6 ADDI, ADDI, BNEZ predicted 1 = 16 cycles; 64 bytes
    // from a line start: eight lines, sixteen words
    let straight = 8 + 6 + 1 + 1;
    // the eight lines read in turn: the first a new transfer (the last
    // one ended after line 7), the next seven chained
    let eight_lines = L + 7 * C;
    // the sixteen words read in turn: the first new, fifteen chained
    let sixteen_words = W + 15 * WC;
    // sets<N>: ADDI 1, BEQZ not taken 1, J 2 in line A; then one J 2 in
    // each further line, 8 KiB apart, the last back to A
    let sets = |n: u64| 1 + 1 + 2 + 2 * (n - 1);
    // loads: four loads, ADDI 1, BNEZ 1: 6 cycles, three code lines
    let loads = 4 + 1 + 1;
    let expected = [
        // the cache on, the SBs clean by address (nothing dirty): warm
        straight,
        // the SBs invalidate the loop's eight lines by address: cold
        straight + eight_lines,
        // EN_SECURE clear: the words read from the flash, none cached
        straight + sixteen_words,
        // the loop run from the 0x14 window: words, never cached
        straight + sixteen_words,
        // the same loop in the SRAM: no XIP access
        straight,
        // two lines in one set: both fit the two ways
        sets(2),
        // three lines in one set, least recently used replaced: each
        // evicted before its next use, three misses, none sequential
        sets(3) + 3 * L,
        // SB, SB (invalidate both ways of the head's set), 12 ADDI, ADDI,
        // BNEZ = 16: the head line misses (not sequential), seven hit
        2 + 12 + 1 + 1 + L,
        // words from four lines of a table through 0x10: they stay
        loads,
        // through 0x14, 8 bytes apart: four new 32-bit transfers
        loads + 4 * W,
        // through 0x14, 4 bytes apart: one new, three chained
        loads + W + 3 * WC,
        // bytes through 0x14, 8 bytes apart: four new 8-bit transfers
        loads + 4 * B,
        // EN_SECURE clear: the loop's six words (one new, five chained),
        // then its four loads (new: the code ended elsewhere)
        loads + W + 5 * WC + 4 * W,
    ];
    let got = measured();
    assert_eq!(got.len(), expected.len());
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        assert_eq!(*g, 100 * e, "kernels {} and {}", 2 * i + 1, 2 * i + 2);
    }
}

/// The cache's and the QMI's state are plain data: a rerun gives the
/// same samples.
#[test]
fn rp2350_xip_reruns_are_identical() {
    e2e_tests::assert_reruns_identical("rp2350", "xip-rp2350");
}

/// The report and `--report-json` show the cache's counts, maintenance
/// writes included.
#[test]
fn the_report_shows_the_rp2350_xip_cache() {
    let dir = e2e_tests::scratch("rp2350-report");
    let elf = e2e_tests::guest("rp2350", "xip-rp2350");
    let out = std::process::Command::new(e2e_tests::sim_host_bin())
        .current_dir(&*dir)
        .args(["run", "--target", "rp2350", "--report-json", "r.json"])
        .arg(&elf)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("XIP cache of `xip`"), "{stderr}");
    assert!(stderr.contains("cache maintenance writes: "), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    let xip = &report["xip"];
    assert_eq!(xip["miss_cycles"], 108);
    assert_eq!(xip["control"], 0x83, "the loops leave XIP_CTRL at reset");
    // every xip_set invalidates 2048 lines: 26 samples, each with three
    // calls (before it, on entry, on return)
    let maintenance = xip["maintenance"].as_u64().unwrap();
    assert!(maintenance >= 26 * 3 * 2048, "{maintenance}");
    assert_eq!(xip["flushes"], 0, "the RP2350 has no FLUSH register");
}

/// What the model does not have stops the run, named: XIP's hit counter
/// (beside the modelled registers), pinning a line, SPLIT_WAYS, the
/// cache-as-SRAM window (a peripheral range of the target file), and a
/// store into the flash.
#[test]
fn what_the_rp2350_model_lacks_is_refused_by_name() {
    let dir = e2e_tests::scratch("rp2350-refused");
    let elf = e2e_tests::guest("rp2350", "xip-rp2350");
    for (mode, named) in [
        ("counter", "beside XIP_CTRL and STAT"),
        ("pin", "XIP cache maintenance: pin (operation 0x7"),
        (
            "split",
            "XIP_CTRL.SPLIT_WAYS set: its effect is not modelled",
        ),
        ("sram", "XIP cache-as-SRAM (pinned lines, not modelled)"),
        // the flash windows are read only (cached writes not modelled)
        (
            "store",
            "write to read-only memory (4 bytes) at address 0x10000000",
        ),
    ] {
        let out = std::process::Command::new(e2e_tests::sim_host_bin())
            .current_dir(&*dir)
            .args([
                "run",
                "-q",
                "--target",
                "rp2350",
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

/// A bad `[xip]` table is an error naming the file and the field.
#[test]
fn a_bad_rp2350_xip_table_names_file_and_field() {
    let text = sim_host::model::target::catalog::BUILTIN
        .iter()
        .find(|(n, _)| *n == "rp2350")
        .unwrap()
        .1;
    let fetch = "fetch_bytes = { value = 4,";
    for (from, to, field) in [
        ("kind = \"rp2350-xip\"", "kind = \"rp2351-xip\"", "xip.kind"),
        (fetch, "# no fetch_bytes", "xip.fetch_bytes"),
        (", cooldown = 66,", ",", "xip.miss.cooldown"),
        (
            "pagebreak = 1024,",
            "pagebreak = 1000,",
            "xip.miss.pagebreak",
        ),
        ("uncached = \"xip_uncached\",", "", "xip.aliases.uncached"),
        (
            "value = 0x18000000",
            "value = 0x1c000000",
            "xip.maintenance.value",
        ),
        ("value = 0x83,", "value = 0x1004,", "xip.reset.value"),
    ] {
        // a field's whole line goes when it is commented out
        let bad: String = if to.starts_with('#') {
            text.lines()
                .filter(|l| !l.starts_with(from))
                .map(|l| format!("{l}\n"))
                .collect()
        } else {
            text.replace(from, to)
        };
        assert_ne!(bad, text, "{from}");
        let err = target::Target::parse(&bad, std::path::Path::new("rp2350.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains(field) && err.contains("rp2350.toml"), "{err}");
    }
}

/// `sim-host targets` says what stands in front of the rp2350's flash.
#[test]
fn the_target_list_shows_the_rp2350_xip_cache() {
    let out = std::process::Command::new(e2e_tests::sim_host_bin())
        .arg("targets")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let rp2350 = text.split("\nrp2350").nth(1).unwrap_or_default();
    assert!(
        rp2350.contains(
            "  XIP cache in front of `xip`: 16 KiB, 2 ways, 8-byte lines, a line read from the flash 108 cycles"
        ),
        "{text}"
    );
}
