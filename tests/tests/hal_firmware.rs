//! A vendor HAL's start-up code run unmodified (issue 40, item 5): the
//! firmware of `tests/hal-firmware/` (stm32f4xx-hal 0.23 with cortex-m-rt,
//! fetched by cargo from crates.io and pinned by its Cargo.lock) built for
//! the stm32f407 preset with its memory map (`scaffold::memory_x`, what
//! `sim-host new --lang rust` writes), run with no `--peripherals` option:
//! every register the HAL touches (RCC, FLASH_ACR, GPIOA, USART2) is
//! answered by the model, and its polls end because the flags become set.
//!
//! What the HAL does, read from its source (stm32f4xx-hal 0.23.0,
//! src/rcc/f4/mod.rs `freeze_internal` and src/rcc/f4/pll.rs
//! `MainPll::fast_setup`), for `Config::hse(8.MHz()).sysclk(168.MHz())`:
//! - FLASH_ACR: LATENCY = (168,000,000 - 1) / 30,000,000 = 5, with PRFTEN,
//!   ICEN and DCEN, before anything else;
//! - the PLL: PLLM between ceil(8 MHz / 2 MHz) = 4 and 8 MHz / 1 MHz = 8;
//!   the P divider min(8, (432 MHz / 168 MHz) & !1) = 2; the VCO target
//!   168 MHz x 2 = 336 MHz; the first PLLM leaving no remainder of 336 MHz
//!   over the VCO input is 4 (8 MHz / 4 = 2 MHz, 336 / 2 = 168 exactly),
//!   so PLLM 4, PLLN 336 MHz / 2 MHz = 168, PLLP /2, PLLQ ceil(336 / 48) =
//!   7: "PLL (HSE 8 MHz / 4 x 168 / 2)";
//! - HSEON, a poll of HSERDY, PLLON, a poll of PLLRDY, then HPRE /1,
//!   PPRE1 /4 (PCLK1 at most 42 MHz), PPRE2 /2 (PCLK2 at most 84 MHz),
//!   `delay(16)`, and SW = PLL (no poll of SWS).
//! - From the HSI alone (`Config::hsi()`, the `hsi` binary): PLLM between
//!   ceil(16 / 2) = 8 and 16; 16 MHz / 8 = 2 MHz leaves no remainder, so
//!   PLLM 8, PLLN 168, PLLP /2: "PLL (HSI 16 MHz / 8 x 168 / 2)"; no HSE
//!   to wait for, the PLL locks 100 us (1,600 cycles at 16 MHz) after
//!   PLLON.
//!
//! The USART (src/serial.rs `calculate_brr`): USART2 is on APB1, PCLK1 =
//! 168 MHz / 4 = 42 MHz; 42 MHz / 16 >= 115,200, so OVER8 = 0 and BRR =
//! (42,000,000 + 115,200 / 2) / 115,200 = 42,057,600 / 115,200 = 365
//! (0x16d); the line then runs at 42,000,000 / 365 = 115,068.49 baud,
//! 115068 in whole baud.
//!
//! The switch's time: the core runs on the 16 MHz HSI until the switch;
//! the model's HSE starts 2 ms after HSEON (`HSE_STARTUP_PS`) and the PLL
//! locks 100 us after that (`PLL_LOCK_PS`, its input being ready later
//! than PLLON), so the switch comes at least 2.1 ms x 16 MHz = 33,600
//! cycles after HSEON, and after the poll ends only the prescaler write,
//! `delay(16)` and the SW write run: the change is within 33,600 cycles
//! plus the start-up before HSEON (cortex-m-rt's `.data`/`.bss`, the HAL's
//! PLL search, a few thousand cycles at most) and those few instructions.

use e2e_tests::firmware::{self, Firmware};
use e2e_tests::process::text;
use e2e_tests::scratch;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The Rust target the stm32f407 preset builds for.
const TRIPLE: &str = "thumbv7em-none-eabihf";
/// 2 ms + 100 us at the HSI's 16 MHz (see the header).
const HSE_AND_LOCK_CYCLES: u64 = 33_600;
/// 100 us at 16 MHz: the PLL's lock from the HSI, ready at once.
const LOCK_CYCLES: u64 = 1_600;
/// What the start-up may add to it (see the header).
const START_UP_SLACK: u64 = 5_000;

/// The line the firmware prints: the clocks as the HAL computed them.
const LINE: &str =
    "stm32f4xx-hal: SYSCLK 168000000 Hz, HCLK 168000000 Hz, PCLK1 42000000 Hz, PCLK2 84000000 Hz\n";

/// Builds both firmwares into `dir`: (`firmware`, `hsi`).
fn build(dir: &Path) -> (PathBuf, PathBuf) {
    let t = sim_host::model::target::builtin("stm32f407").unwrap();
    assert_eq!(t.guest.rust_target.as_deref(), Some(TRIPLE));
    let memory = e2e_tests::firmware::memory_x(&t, dir);
    let built = Firmware {
        project: "hal-firmware",
        triple: TRIPLE,
        memory_x: Some(&memory),
        bins: &["firmware", "hsi"],
    }
    .build(dir);
    (built[0].clone(), built[1].clone())
}

/// `sim-host run --target stm32f407 elf` with its JSON report in `dir` under
/// `name`.
fn run(elf: &Path, dir: &Path, name: &str) -> (Output, Value) {
    firmware::run_with_report("stm32f407", 10_000_000, elf, dir, name)
}

/// The run's warnings as text.
fn warnings(report: &Value) -> Vec<String> {
    firmware::report_warnings(report)
}

/// What both firmwares' runs share: the line on USART2, one switch from
/// the HSI to `source` at 168 MHz, the flash at 5 wait states before it,
/// no warning; the switch `wait` cycles (the oscillators' start-up) after
/// their enable.
fn check_run(out: &Output, report: &Value, source: &str, wait: u64) {
    let all = text(out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), LINE, "{all}");

    let changes = report["clock_changes"].as_array().expect("clock changes");
    assert_eq!(changes.len(), 1, "{changes:?}");
    let change = &changes[0];
    assert_eq!(
        (change["from_hz"].as_u64(), change["to_hz"].as_u64()),
        (Some(16_000_000), Some(168_000_000)),
        "{change}"
    );
    assert_eq!(change["source"], source, "{change}");
    let at = change["cycle"].as_u64().unwrap();
    assert!(
        (wait..wait + START_UP_SLACK).contains(&at),
        "the switch at cycle {at}"
    );

    // 115200 baud from PCLK1 42 MHz: BRR 0x16d, 115068 baud (the header)
    let uarts = report["uarts"].as_array().expect("uarts");
    let expected = format!(
        "USART2: {} bytes sent at 115068 baud (BRR 0x16d)",
        LINE.len()
    );
    assert_eq!(uarts, &[Value::from(expected)], "{report}");

    // FLASH_ACR raised to 5 before the switch: no LATENCY warning, no
    // block fetched below the wait states required
    assert_eq!(report["flash"]["required_wait_states"], 5, "{report}");
    assert_eq!(report["flash"]["blocks_below_required_latency"], 0);
    let w = warnings(report);
    assert!(w.is_empty(), "no warning expected: {w:?}");
}

#[test]
#[cfg_attr(
    not(all(has_cargo, has_rust_thumbv7em_hf)),
    ignore = "needs cargo and the Rust target thumbv7em-none-eabihf (scripts/bootstrap.sh adds it)"
)]
fn stm32f4xx_hal_sets_168_mhz_and_prints_through_usart2_unmodified() {
    let dir = scratch("hal-firmware");
    let (firmware, hsi) = build(&dir);

    let (out, report) = run(&firmware, &dir, "hse");
    check_run(
        &out,
        &report,
        "PLL (HSE 8 MHz / 4 x 168 / 2)",
        HSE_AND_LOCK_CYCLES,
    );

    // a rerun is byte-identical: console, report (but the host's own
    // time)
    let (again, report_again) = run(&firmware, &dir, "hse-again");
    assert_eq!((&out.stdout, &out.stderr), (&again.stdout, &again.stderr));
    let strip = |mut v: Value| {
        v["totals"]["host_seconds"] = Value::Null;
        v["totals"]["mips"] = Value::Null;
        v
    };
    assert_eq!(strip(report.clone()), strip(report_again));

    let (out, report) = run(&hsi, &dir, "hsi");
    check_run(&out, &report, "PLL (HSI 16 MHz / 8 x 168 / 2)", LOCK_CYCLES);
}
