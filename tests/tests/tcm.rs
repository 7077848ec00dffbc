//! The SDK's placement of code and data in a board's fast memories
//! (issue 40, `guest-shim/include/arp_memory.h`, the stm32f746 and
//! stm32f407 linker scripts).
//!
//! `guest-shim/examples/tcm` on stm32f746 runs one loop (`arm/loops.S`:
//! 16 ADD.W in two 32-byte lines, SUBS and BNE.N in a third) from its copy
//! placed in the ITCM (section `.itcm.text`, ARP_ITCM_CODE's) and from the
//! flash (AXIM), 100 times (kernel 2i+1) and 200 times (kernel 2i+2) after
//! a warm-up run through the same call site: each pair differs by exactly
//! 100 steady-state iterations. The ITCM copy with the caches off is the
//! zero-wait reference R (100 x what the cortex-m7 table charges an
//! iteration; TCM fetches are never stalled). The rules
//! (targets/stm32f746.toml, `model::l1cache`) give the others:
//! - the flash loop, caches off: each 64-bit fetch granule a block touches
//!   is an AXI read of F = 7 stall cycles (RM0385 Table 5, 7 wait states
//!   at 216 MHz): 16 ADD.W are 64 bytes = 8 granules, SUBS and BNE.N a
//!   ninth: R + 100 x 9 x 7;
//! - the flash loop, I-cache on and warmed by the warm-up run: its three
//!   lines fit the 2-way cache and hit: R;
//! - the ITCM loop with the I-cache on: TCM fetches are not looked up: R.
//!
//! It also checks where things landed: the loop and a C function placed
//! with ARP_ITCM_CODE below 0x4000 (the ITCM), the DTCM variables in the
//! DTCM with their initial values (the guest checks those and prints
//! "tcm: done"), and callgrind's fetch stalls of the ITCM loop: none. On
//! stm32f407 a table placed with ARP_CCM_DATA is in the CCM (0x10000000)
//! holding its initial values after the start-up copy.

use e2e_tests::process::{sim_host, text};
use e2e_tests::{expected_output, guest, scratch};
use sim_host::image::elf::GuestImage;
use sim_host::model::target;

const F: u64 = 7;

#[test]
fn itcm_code_runs_at_zero_wait_states() {
    // pairs 1..5: ITCM, flash, flash with the I-cache, ITCM with the
    // I-cache (pair 0 trains the predictor on the call sites)
    let d = e2e_tests::pair_differences("stm32f746", "tcm", 1..5);
    let r = d[0];
    assert!(r >= 100, "an iteration costs at least a cycle: {d:?}");
    assert_eq!(d, [r, r + 100 * 9 * F, r, r], "{d:?}");
}

#[test]
fn placed_code_and_data_land_where_the_attributes_say() {
    let t = target::builtin("stm32f746").unwrap();
    let elf = guest("stm32f746", "tcm");
    let image = GuestImage::load(&elf, &t).unwrap();
    for f in ["itcm_straight", "itcm_sum"] {
        let at = image.function(f).unwrap().addr;
        assert!(at < 0x4000, "{f} at {at:#x}: not in the ITCM");
    }
    assert!(image.function("flash_straight").unwrap().addr >= 0x0800_0000);
    for v in ["dtcm_value", "dtcm_zero"] {
        let at = image.symbol(v).unwrap();
        assert!((0x2000_0000..0x2001_0000).contains(&at), "{v} at {at:#x}");
    }
    // nothing of the program is loaded at its ITCM address: the start-up
    // copy puts it there
    assert!(image
        .segments
        .iter()
        .all(|s| s.load_addr >= 0x0800_0000 || (0x2000_0000..0x2005_0000).contains(&s.load_addr)));

    let dir = scratch("tcm-stm32f746");
    std::fs::write(dir.join("expected.txt"), expected_output("tcm")).unwrap();
    let out = sim_host(
        &dir,
        &[
            "run",
            "--target",
            "stm32f746",
            "--expect-output",
            "expected.txt",
            "--callgrind",
            "tcm.callgrind",
            elf.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let callgrind = std::fs::read_to_string(dir.join("tcm.callgrind")).unwrap();
    assert_eq!(fetch_stall(&callgrind, "itcm_straight"), 0, "{callgrind}");
    assert!(fetch_stall(&callgrind, "flash_straight") > 0, "{callgrind}");
}

/// The FetchStall cost of function `name`'s own lines in a callgrind file
/// (events: Cycles Instructions FetchStall ...): every block after a
/// `fn=(id)` line of its id, up to the next `fn=`; a call's inclusive cost
/// (the line after `calls=`) left out.
fn fetch_stall(callgrind: &str, name: &str) -> u64 {
    // the id is given with the name once, as a function or a call's
    // target (`fn=(3) name` or `cfn=(3) name`)
    let named = callgrind
        .lines()
        .map(|l| l.strip_prefix('c').unwrap_or(l))
        .find(|l| l.starts_with("fn=(") && l.ends_with(&format!(") {name}")))
        .unwrap_or_else(|| panic!("{name} is not in the profile"));
    let id = &named[..named.find(')').unwrap() + 1];
    let mut total = 0;
    let mut inside = false;
    let mut after_call = false;
    for line in callgrind.lines() {
        if line.starts_with("fn=") {
            inside = line == id || line.starts_with(&format!("{id} "));
            continue;
        }
        if std::mem::take(&mut after_call) || !inside {
            continue;
        }
        if line.starts_with("calls=") {
            after_call = true;
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let position = |f: &str| {
            f.chars()
                .all(|c| c.is_ascii_digit() || c == '+' || c == '-')
        };
        if fields.len() > 3 && position(fields[0]) {
            total += fields[3].parse::<u64>().unwrap();
        }
    }
    total
}

#[test]
fn ccm_data_lands_in_the_ccm_with_its_values() {
    let t = target::builtin("stm32f407").unwrap();
    let elf = guest("stm32f407", "tcm");
    let image = GuestImage::load(&elf, &t).unwrap();
    for v in ["ccm_table", "ccm_zero"] {
        let at = image.symbol(v).unwrap();
        assert!((0x1000_0000..0x1001_0000).contains(&at), "{v} at {at:#x}");
    }
    let dir = scratch("tcm-stm32f407");
    std::fs::write(dir.join("expected.txt"), expected_output("tcm")).unwrap();
    let out = sim_host(
        &dir,
        &[
            "run",
            "--target",
            "stm32f407",
            "--expect-output",
            "expected.txt",
            elf.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn tcm_reruns_are_identical() {
    e2e_tests::assert_reruns_identical("stm32f746", "tcm");
}
