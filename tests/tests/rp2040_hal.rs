//! rp2040-hal as its users write it, run unmodified on the rp2040 preset
//! (issue 40, item 5): the firmware of `tests/rp2040-hal-firmware/`
//! (rp2040-hal 0.12 with rp2040-boot2 in `.boot2`, cortex-m-rt, fetched by
//! cargo from crates.io and pinned by its Cargo.lock), linked with its own
//! memory.x as an rp2040-hal project is (BOOT2 at 0x10000000, the vector
//! table at 0x10000100), run with no `--peripherals` option.
//!
//! What the HAL does, read from its source (rp2040-hal 0.12.0,
//! src/clocks/mod.rs `init_clocks_and_plls`, src/pll.rs, src/xosc.rs):
//! the preset starts where pico-sdk's runtime leaves the tree (clk_ref on
//! the 12 MHz XOSC, clk_sys on PLL_SYS at 125 MHz); `setup_pll_blocking`
//! first moves clk_sys to clk_ref and clk_ref to the ROSC
//! (`reset_source_await`, each waiting on SELECTED), holds the PLL in
//! reset, sets it and waits for LOCK, for PLL_SYS and then PLL_USB; then
//! `init_default` puts clk_ref on the XOSC and clk_sys on PLL_SYS's aux
//! source: 125 MHz -> 12 MHz (clk_ref, XOSC) -> 6.5 MHz (clk_ref, ROSC)
//! -> 12 MHz (clk_ref, XOSC) -> 125 MHz (PLL_SYS 12 MHz / 1 x 125 / 6 /
//! 2: PLL_SYS_125MHZ's vco 1.5 GHz, post dividers 6 and 2). The second
//! `setup_pll_blocking` (PLL_USB) finds clk_sys already on clk_ref, on
//! the ROSC: no change.
//!
//! The UART (src/uart/peripheral.rs `calculate_baudrate_dividers`) from
//! clk_peri = clk_sys = 125 MHz: baud_rate_div = 8 x 125,000,000 /
//! 115,200 = 8,680 (integer division), IBRD = 8,680 >> 7 = 67, FBRD =
//! ((8,680 & 0x7f) + 1) / 2 = (104 + 1) / 2 = 52; the line runs at
//! 125e6 x 64 / (16 x (67 x 64 + 52)) = 8e9 / 69,440 = 115,207.4 baud.
//!
//! The divider (src/bin/divider.rs), the 8-cycle rule of RP2040 datasheet
//! 2.3.1.5 ("calculates ... over the next 8 cycles, and on the 9th cycle
//! the results can be read", `host::devices::rp2040_sio`) on the
//! cortex-m0plus cycle table (LDR, STR 2; LSRS, NOP 1; B<cc> 2 taken, 1
//! not), every access at its instruction's first cycle. The SysTick read
//! at T gives the count at T; the DIV_UDIVISOR store is at W = T + 2;
//! the K no-ops run from T + 4; the first poll's LDR is at W + 2 + K:
//! - K = 6: the first poll at W + 8 reads READY 0 (8 < 9); LSRS, BCC
//!   taken (3 cycles) bring the second to W + 13, READY 1; LSRS, BCC not
//!   taken (2): the second SysTick read at W + 17 = T + 19: 19 cycles;
//! - K = 7: the first poll at W + 9 reads READY 1; T + 2 + 2 + 7 + 4 =
//!   T + 15: 15 cycles;
//! - pico-sdk's and rp2040-hal's delay, four `b` to the next instruction
//!   (B: 2 cycles, taken though its target is its fall-through): the
//!   first poll at W + 2 + 8 = W + 10 reads READY 1; T + 2 + 2 + 8 + 4 =
//!   T + 16: 16 cycles.
//!
//! One no-op more saves a whole poll (4 cycles): the rule's boundary.

use e2e_tests::board_run::clock_changes;
use e2e_tests::firmware::{self, Firmware};
use e2e_tests::process::text;
use e2e_tests::scratch;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The Rust target the rp2040 preset builds for.
const TRIPLE: &str = "thumbv6m-none-eabi";

/// What the firmware prints through UART0 (the clocks as the HAL reports
/// them; 1,000,003 = 7 x 142,857 + 4; 125,000,000 / 11,520 = 10,850
/// remainder 8,000).
const TEXT: &str = "rp2040-hal: clk_sys 125000000 Hz, clk_peri 125000000 Hz, clk_usb 48000000 Hz\n\
                    1000003 / 7 = 142857 remainder 4\n\
                    -1000003 / 7 = -142857 remainder -4\n\
                    clk_sys cycles per 10-bit frame: 10850\n";

/// Builds both firmwares into `dir`: (`firmware`, `divider`).
fn build(dir: &Path) -> (PathBuf, PathBuf) {
    let t = sim_host::model::target::builtin("rp2040").unwrap();
    assert_eq!(t.guest.rust_target.as_deref(), Some(TRIPLE));
    let built = Firmware {
        project: "rp2040-hal-firmware",
        triple: TRIPLE,
        memory_x: None,
        bins: &["firmware", "divider"],
    }
    .build(dir);
    (built[0].clone(), built[1].clone())
}

/// `sim-host run --target rp2040 elf` with its JSON report in `dir` under
/// `name`.
fn run(elf: &Path, dir: &Path, name: &str) -> (Output, Value) {
    firmware::run_with_report("rp2040", 20_000_000, elf, dir, name)
}

fn warnings(report: &Value) -> Vec<String> {
    firmware::report_warnings(report)
}

#[test]
#[cfg_attr(
    not(all(has_cargo, has_rust_thumbv6m)),
    ignore = "needs cargo and the Rust target thumbv6m-none-eabi (scripts/bootstrap.sh adds it)"
)]
fn rp2040_hal_sets_its_clocks_and_prints_through_uart0_unmodified() {
    let dir = scratch("rp2040-hal");
    let (firmware, divider) = build(&dir);

    let (out, report) = run(&firmware, &dir, "firmware");
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), TEXT, "{all}");

    let xosc = "clk_ref (XOSC 12 MHz)";
    let rosc = "clk_ref (ROSC 6.5 MHz (nominal))";
    let pll = "PLL_SYS (XOSC 12 MHz / 1 x 125 / 6 / 2)";
    assert_eq!(
        clock_changes(&report),
        [
            (125_000_000, 12_000_000, xosc),
            (12_000_000, 6_500_000, rosc),
            (6_500_000, 12_000_000, xosc),
            (12_000_000, 125_000_000, pll),
        ],
        "{report}"
    );

    // both PLLs lock on the ROSC's 6.5 MHz, each 100 us after its power
    // up (the model's PLL_LOCK_PS): at least 2 x 650 cycles between the
    // switch to the ROSC and the one back to the crystal
    let cycle = |i: usize| report["clock_changes"][i]["cycle"].as_u64().unwrap();
    assert!(cycle(2) - cycle(1) >= 2 * 650, "{report}");

    // IBRD 67, FBRD 52: 115207 baud (the header)
    let uarts = report["uarts"].as_array().expect("uarts");
    let expected = format!(
        "UART0: {} bytes sent at 115207 baud (IBRD 67, FBRD 52)",
        TEXT.len()
    );
    assert_eq!(uarts, &[Value::from(expected)], "{report}");
    let w = warnings(&report);
    assert!(w.is_empty(), "no warning expected: {w:?}");

    // a rerun is byte-identical: console, report (but the host's own
    // time)
    let (again, report_again) = run(&firmware, &dir, "firmware-again");
    assert_eq!((&out.stdout, &out.stderr), (&again.stdout, &again.stderr));
    let strip = |mut v: Value| {
        v["totals"]["host_seconds"] = Value::Null;
        v["totals"]["mips"] = Value::Null;
        v
    };
    assert_eq!(strip(report), strip(report_again));

    // the divider's 8 cycles (the header's derivation)
    let (out, report) = run(&divider, &dir, "divider");
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "6 nops: 19 cycles, quotient 142857 remainder 4\n\
         7 nops: 15 cycles, quotient 142857 remainder 4\n\
         4 branches: 16 cycles, quotient 142857 remainder 4\n",
        "{all}"
    );
    let w = warnings(&report);
    assert!(w.is_empty(), "no warning expected: {w:?}");
}
