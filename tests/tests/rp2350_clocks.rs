//! The RP2350's clock tree and PL011 UART0 (issue 40) on both of its
//! presets (`rp2350`: Hazard3; `rp2350-arm`: Cortex-M33), with the
//! `rp2350-startup` example: the clock set-up pico-sdk's
//! runtime_init_clocks does, from where pico-sdk's runtime leaves the tree
//! (clk_sys 150 MHz on PLL_SYS), with PLL_SYS set to 120 MHz
//! (sim-host/src/host/devices/rp2350_clocks.rs has the rules).
//!
//! The switches, each derived from the model's rule (RP2350 datasheet
//! 8.1.2.2: two cycles of the old source to stop, two of the new one to
//! restart):
//! 1. clk_sys to clk_ref (the 12 MHz crystal): 150 MHz -> 12 MHz;
//! 2. clk_ref to the ROSC (nominal 11 MHz, datasheet 8.3.1), clk_sys
//!    following it: 12 MHz -> 11 MHz;
//! 3. PLL_SYS reset and set to 12 MHz / 1 x 120 = 1440 MHz, / 6 / 2 =
//!    120 MHz; LOCK 100 us after PD and VCOPD clear (the model's
//!    assumption): 1,100 cycles at 11 MHz;
//! 4. clk_ref back on the crystal: 11 MHz -> 12 MHz;
//! 5. clk_sys to PLL_SYS: 12 MHz -> 120 MHz.
//!
//! UART0 at clk_peri = clk_sys = 120 MHz, IBRD 65, FBRD 7 (pico-sdk's
//! uart_set_baudrate: 8 x 120e6 / 115200 + 1 = 8334; 8334 >> 7 = 65,
//! (8334 & 0x7f) >> 1 = 7): a bit lasts 16 x (65 + 7/64) = 1,041.75 clk_peri
//! cycles (PL011 TRM 3.3.6), a frame (start, 8 bits, stop) 10,417.5; the
//! FIFO (32) and the shifter take the first 33 bytes at once and the loop
//! then waits on TXFF and BUSY until the 42nd frame has gone: 42 x
//! 10,417.5 = 437,535 cycles, plus the loop's own instructions and its
//! first fetches (under 800); 120e6 x 64 / (16 x (65 x 64 + 7)) =
//! 115,190.8 baud.

use e2e_tests::board_run::{self, Run};
use serde_json::Value;

fn run(target: &str, mode: &str, tag: &str) -> Run {
    let tag = format!("rp2350-clocks-{target}-{mode}-{tag}");
    board_run::run(&tag, target, "rp2350-startup", &[], &[mode])
}

fn sample(r: &Run, sid: u16) -> u64 {
    r.sample(sid)
}

fn warnings(r: &Run) -> Vec<String> {
    r.warnings()
}

const TARGETS: [&str; 2] = ["rp2350", "rp2350-arm"];

#[test]
fn the_rp2350s_clock_tree_and_uart0_follow_the_datasheet_on_both_cores() {
    for target in TARGETS {
        let r = run(target, "full", "a");
        assert_eq!(r.code, Some(0), "{target}: {}", r.stderr);
        assert_eq!(
            r.stdout, "hello from the RP2350's UART0 at 120 MHz\r\nsemihosting: done\n",
            "{target}"
        );
        let seen = board_run::clock_changes(&r.report);
        assert_eq!(
            seen,
            [
                (150_000_000, 12_000_000, "clk_ref (XOSC 12 MHz)"),
                (12_000_000, 11_000_000, "clk_ref (ROSC 11 MHz (nominal))"),
                (11_000_000, 12_000_000, "clk_ref (XOSC 12 MHz)"),
                (
                    12_000_000,
                    120_000_000,
                    "PLL_SYS (XOSC 12 MHz / 1 x 120 / 6 / 2)"
                ),
            ],
            "{target}"
        );
        // the lock: 1,100 cycles at 11 MHz, plus the section's first
        // fetches through the XIP cache (at most 4 lines at 108 cycles, the
        // report's figure for a line: 432) and its few instructions
        // (under 30)
        let lock = sample(&r, 1);
        assert!(
            (1_100..1_100 + 432 + 30).contains(&lock),
            "{target}: pll_lock took {lock} cycles"
        );
        let puts = sample(&r, 2);
        assert!(
            (437_535..437_535 + 800).contains(&puts),
            "{target}: uart_puts took {puts} cycles"
        );
        assert_eq!(
            r.report["uarts"].as_array().expect("uarts"),
            &[Value::from(
                "UART0: 42 bytes sent at 115190 baud (IBRD 65, FBRD 7)"
            )],
            "{target}"
        );
        assert!(warnings(&r).is_empty(), "{target}: {:?}", warnings(&r));
        times_follow_the_clock_in_force(target, &r);
    }
}

/// The report's time is each stretch of cycles at the clock in force:
/// 150 MHz to the first change, then 12, 11, 12 and 120 MHz.
fn times_follow_the_clock_in_force(target: &str, r: &Run) {
    let changes = r.report["clock_changes"].as_array().unwrap();
    let cycle = |i: usize| changes[i]["cycle"].as_u64().unwrap() as f64;
    let total = r.report["totals"]["cycles"].as_u64().unwrap() as f64;
    let expected = cycle(0) / 150e6
        + (cycle(1) - cycle(0)) / 12e6
        + (cycle(2) - cycle(1)) / 11e6
        + (cycle(3) - cycle(2)) / 12e6
        + (total - cycle(3)) / 120e6;
    let seconds = r.report["totals"]["simulated_seconds"].as_f64().unwrap();
    assert!(
        (seconds - expected).abs() < 1e-9,
        "{target}: {seconds} s, expected {expected} s"
    );
    // and the first change's own time: its cycles at 150 MHz
    let first = changes[0]["seconds"].as_f64().unwrap();
    assert!((first - cycle(0) / 150e6).abs() < 1e-12, "{target}");
}

#[test]
fn reruns_of_the_rp2350_start_up_are_byte_identical() {
    for target in TARGETS {
        let (a, b) = (run(target, "full", "a1"), run(target, "full", "b1"));
        assert_eq!(a.code, Some(0), "{target}: {}", a.stderr);
        assert!(!a.arp.is_empty(), "{target}");
        assert_eq!(a.arp, b.arp, "{target}: data.arp differs");
        assert_eq!(a.stdout, b.stdout, "{target}");
        // the JSON report holds host seconds and MIPS: compare the rest
        let strip = |r: &Run| {
            let mut v: Value = serde_json::from_slice(&r.report_text).unwrap();
            for k in ["host_seconds", "mips"] {
                v["totals"][k] = Value::Null;
            }
            for k in ["elf", "arp_file"] {
                v[k] = Value::Null;
            }
            v
        };
        assert_eq!(strip(&a), strip(&b), "{target}: the reports differ");
    }
}

/// PLL_SYS powered with FBDIV 10: pll.h's "Feedback divider min=16" and
/// a VCO of 12 MHz x 10 = 120 MHz below its "min=750MHz", each a warning
/// at the write that powers it.
#[test]
fn a_pll_out_of_range_is_warned_of_at_its_instruction() {
    for target in TARGETS {
        let r = run(target, "badpll", "w");
        assert_eq!(r.code, Some(0), "{target}: {}", r.stderr);
        let w = warnings(&r);
        assert_eq!(w.len(), 2, "{target}: {w:?}");
        assert!(
            w[0].contains(
                "PLL_SYS powered with FBDIV_INT = 10: pll.h and RP2350 datasheet 8.6 allow 16 \
                 to 320"
            ),
            "{target}: {w:?}"
        );
        assert!(
            w[1].contains("a VCO of 120 MHz (12 MHz x FBDIV 10)")
                && w[1].contains("require 750 MHz to 1600 MHz"),
            "{target}: {w:?}"
        );
    }
}

/// PLL_SYS at 1200 MHz / 6 / 1 = 200 MHz (every PLL range kept) and
/// clk_sys switched to it: above the rated 150 MHz, warned of at the
/// write of CLK_SYS_CTRL.SRC; the core runs at 200 MHz from the switch.
#[test]
fn clk_sys_above_its_rating_is_warned_of() {
    for target in TARGETS {
        let r = run(target, "overclock", "w");
        assert_eq!(r.code, Some(0), "{target}: {}", r.stderr);
        let w = warnings(&r);
        assert_eq!(w.len(), 1, "{target}: {w:?}");
        assert!(
            w[0].contains("clk_sys set to 200 MHz: above the RP2350's rated 150 MHz"),
            "{target}: {w:?}"
        );
        let changes = r.report["clock_changes"].as_array().unwrap();
        assert_eq!(changes.last().unwrap()["to_hz"], 200_000_000, "{target}");
    }
}

/// Hazard3's machine timer counts TICKS.RISCV's tick (RP2350 datasheet
/// 3.1.8, 8.5), which the model follows through the clock tree: with the
/// generator stopped mtime does not move; at clk_ref 12 MHz / 6 = 2 MHz
/// it counts 2 ticks per 150 core cycles (clk_sys 150 MHz). The span read
/// between the two reads of mtime lies within the section (its ARP calls
/// add under 150 cycles, one tick, on either side) and the ticks sit on
/// a grid: the count is the section's cycles x 2 / 150 less at most 2,
/// plus at most 1. At the preset's former fixed 1 MHz it would be half.
#[test]
fn hazard3s_machine_timer_follows_ticks_riscv() {
    let r = run("rp2350", "mtime", "t");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let mut lines = r.stdout.lines();
    assert_eq!(lines.next(), Some("mtime stopped 0"), "{}", r.stdout);
    let ticks: u64 = lines
        .next()
        .and_then(|l| l.strip_prefix("mtime ticks "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}", r.stdout));
    let spans: Vec<u64> = r
        .samples
        .iter()
        .filter(|(s, _)| *s == 3)
        .map(|s| s.1)
        .collect();
    assert_eq!(spans.len(), 2, "{:?}", r.samples);
    let expected = spans[1] * 2 / 150;
    assert!(
        (expected - 2..=expected + 1).contains(&ticks),
        "{ticks} ticks over {} cycles (expected about {expected})",
        spans[1]
    );
    assert!(warnings(&r).is_empty(), "{:?}", warnings(&r));
}
