//! The RP2350's Arm side (issue 40, `targets/rp2350-arm.toml`): the
//! cortex-m33 cycle table on the RP2350's map, its flash behind the same
//! XIP cache model as the Hazard3 preset's (`rp2350-xip`).
//!
//! The manual's filter example, built for rp2350-arm, prints what it
//! prints on every core, and the report holds the XIP cache's counts.
//! The cache adds only its stalls: the same ELF on the same target without
//! `[xip]` (every fetch zero-wait, as the cortex-m33 table assumes) takes
//! exactly the fetch and data stalls the report names fewer cycles.

use e2e_tests::process::{sim_host, text};
use e2e_tests::{expected_output, guest, scratch};
use serde_json::Value;
use std::path::Path;

fn report(dir: &Path, name: &str) -> Value {
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn filter_runs_on_rp2350_arm_through_the_xip_cache() {
    let dir = scratch("rp2350-arm-filter");
    let elf = guest("rp2350-arm", "filter");
    std::fs::write(dir.join("expected.txt"), expected_output("filter")).unwrap();
    let elf = elf.to_str().unwrap();
    let out = sim_host(
        &dir,
        &[
            "run",
            "--target",
            "rp2350-arm",
            "--expect-output",
            "expected.txt",
            "--report-json",
            "xip.json",
            elf,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("XIP cache of `xip`"), "{}", text(&out));
    let with = report(&dir, "xip.json");
    let xip = &with["xip"];
    assert_eq!(
        xip["miss_cycles"], 108,
        "the Hazard3 preset's QMI line read"
    );
    assert_eq!(xip["control"], 0x83, "XIP_CTRL at its reset value");
    for field in ["fetch_hits", "fetch_misses", "fetch_stall", "data_misses"] {
        assert!(xip[field].as_u64().unwrap() > 0, "{field}: {xip}");
    }

    // the same core and map without the cache model
    let file = target_without_xip(&dir);
    let out = sim_host(
        &dir,
        &[
            "run",
            "--target-file",
            file.to_str().unwrap(),
            "--expect-output",
            "expected.txt",
            "--report-json",
            "plain.json",
            elf,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let without = report(&dir, "plain.json");
    assert!(without.get("xip").is_none(), "{without}");
    let cycles = |r: &Value| r["totals"]["cycles"].as_u64().unwrap();
    let stalls = xip["fetch_stall"].as_u64().unwrap() + xip["data_stall"].as_u64().unwrap();
    assert_eq!(cycles(&with), cycles(&without) + stalls);
    assert_eq!(
        with["totals"]["instructions"],
        without["totals"]["instructions"]
    );
}

/// targets/rp2350-arm.toml without its `[xip]` table, as a file in `dir`.
fn target_without_xip(dir: &Path) -> std::path::PathBuf {
    let (text, _) = sim_host::model::target::catalog::find("rp2350-arm").unwrap();
    let start = text.find("\n[xip]\n").expect("rp2350-arm has [xip]");
    let end = start + 1 + text[start + 1..].find("\n[guest]\n").unwrap();
    let plain = format!("{}{}", &text[..start], &text[end..]).replacen(
        "name = \"rp2350-arm\"",
        "name = \"rp2350-arm-plain\"",
        1,
    );
    let file = dir.join("rp2350-arm-plain.toml");
    std::fs::write(&file, plain).unwrap();
    file
}

/// `sim-host targets` lists the new preset with its cache.
#[test]
fn the_target_list_shows_rp2350_arm() {
    let dir = scratch("rp2350-arm-targets");
    let out = sim_host(&dir, &["targets"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let listing = text(&out);
    let entry = listing
        .split("\n\n")
        .find(|e| e.starts_with("rp2350-arm "))
        .unwrap_or_else(|| panic!("{listing}"));
    assert!(entry.contains("150 MHz"), "{entry}");
    assert!(entry.contains("XIP"), "{entry}");
}
