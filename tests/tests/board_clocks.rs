//! Board presets that boot their vendors' start-up code (issue 40): the
//! STM32F4's clock tree from reset (the 16 MHz HSI) to 168 MHz through
//! RCC, PWR and FLASH_ACR as ST's SetSysClock does it
//! (`guest-shim/examples/stm32-startup`, written from RM0090's register
//! descriptions), USART2 to the console, and the MPS2 boards' CMSDK
//! UART0 against qemu-system-arm (`guest-shim/examples/uart`).
//!
//! The model's times (sim-host/src/host/devices/stm32_rcc.rs): the HSE
//! crystal is stable 2 ms after HSEON, the PLL locks 100 us after PLLON,
//! a switch to a ready source happens at the write. At the 16 MHz HSI
//! those are 32,000 and 1,600 core cycles.

use e2e_tests::board_run::{self, Run};
use e2e_tests::{guest, require_tool, scratch};
use serde_json::Value;
use std::process::Command;

fn run(target: &str, example: &str, extra: &[&str], mode: &str) -> Run {
    let tag = format!("board-clocks-{target}-{example}-{mode}");
    board_run::run(&tag, target, example, extra, &[mode])
}

fn sample(r: &Run, sid: u16) -> u64 {
    r.sample(sid)
}

fn warnings(r: &Run) -> Vec<String> {
    r.warnings()
}

const HSE_STARTUP_CYCLES: u64 = 32_000; // 2 ms at the 16 MHz HSI
const PLL_LOCK_CYCLES: u64 = 1_600; // 100 us at the 16 MHz HSI
/// What a wait costs beyond the model's time: the section's read-modify-
/// write of RCC_CR before the wait (ldr, orr, str: 2 + 1 + 1 on the
/// Cortex-M4's Table 3-1), the poll that first saw the flag (ldr 2, a
/// test 1, the branch not taken 1) and one poll iteration the ready time
/// may fall inside (ldr 2, test 1, bpl taken 1 + 2), plus the call of
/// arp_leave_kernel's argument set-up (2): 4 + 4 + 6 + 2 = 16.
const WAIT_OVERHEAD: u64 = 16;

#[test]
fn st_start_up_reaches_168_mhz_and_prints_through_usart2() {
    let r = run("stm32f407", "stm32-startup", &[], "full");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "hello from USART2 at 168000000 Hz\r\nsemihosting: done at 168000000 Hz\n"
    );
    let hse = sample(&r, 1);
    assert!(
        (HSE_STARTUP_CYCLES..=HSE_STARTUP_CYCLES + WAIT_OVERHEAD).contains(&hse),
        "hse_on took {hse} cycles"
    );
    let pll = sample(&r, 2);
    assert!(
        (PLL_LOCK_CYCLES..=PLL_LOCK_CYCLES + WAIT_OVERHEAD).contains(&pll),
        "pll_on took {pll} cycles"
    );
    // the switch: one change, 16 MHz -> 168 MHz, from the PLL ST's values give
    let changes = r.report["clock_changes"].as_array().expect("clock changes");
    assert_eq!(changes.len(), 1, "{changes:?}");
    let change = &changes[0];
    assert_eq!(
        (change["from_hz"].as_u64(), change["to_hz"].as_u64()),
        (Some(16_000_000), Some(168_000_000))
    );
    assert_eq!(change["source"], "PLL (HSE 8 MHz / 8 x 336 / 2)");
    // time: the cycles before the switch at 16 MHz, the rest at 168 MHz
    let at = change["cycle"].as_u64().unwrap();
    let cycles = r.report["totals"]["cycles"].as_u64().unwrap();
    let expected = at as f64 / 16e6 + (cycles - at) as f64 / 168e6;
    let seconds = r.report["totals"]["simulated_seconds"].as_f64().unwrap();
    assert!(
        (seconds - expected).abs() < 1e-12,
        "{seconds} s, expected {expected}"
    );
    assert!((change["seconds"].as_f64().unwrap() - at as f64 / 16e6).abs() < 1e-12);
    // FLASH_ACR was raised before the switch: no latency warning
    let w = warnings(&r);
    assert!(w.iter().all(|w| !w.contains("LATENCY")), "{w:?}");
    assert_eq!(r.report["flash"]["blocks_below_required_latency"], 0);
    assert_eq!(r.report["flash"]["required_wait_states"], 5);
}

/// 115200 baud from PCLK1 = 168 MHz / 4 = 42 MHz: BRR = (42,000,000 +
/// 57,600) / 115,200 = 365 (0x16d); a bit lasts 365 PCLK1 cycles, 1,460
/// core cycles; a frame (start, 8 data bits, stop) 14,600. The first byte
/// starts at once, the second waits in the holding register, and byte k
/// (k >= 3) is written when byte k-2 has gone, 14,600 x (k - 2) cycles
/// after the first; the 35th at 33 x 14,600 and TC waits for the last two
/// frames: 35 x 14,600 = 511,000 cycles, plus the loop's own instructions
/// before the first byte and after the last read (under 100).
#[test]
fn usart2s_frames_take_their_bits_time_at_the_programmed_baud_rate() {
    let r = run("stm32f407", "stm32-startup", &[], "full");
    let puts = sample(&r, 5);
    assert!(
        (511_000..511_100).contains(&puts),
        "usart2_puts took {puts} cycles"
    );
    let uarts = r.report["uarts"].as_array().expect("uarts");
    // 42e6 / 365 = 115,068.49: the line's rate in whole baud
    assert_eq!(
        uarts,
        &[Value::from(
            "USART2: 35 bytes sent at 115068 baud (BRR 0x16d)"
        )]
    );
}

#[test]
fn reruns_of_the_start_up_are_byte_identical() {
    let (a, b) = (
        run("stm32f407", "stm32-startup", &[], "full"),
        run("stm32f407", "stm32-startup", &[], "full"),
    );
    assert_eq!((a.stdout, a.arp), (b.stdout, b.arp));
    // all but the host's timing and the scratch folder's name
    let strip = |mut v: Value| {
        v["totals"]["host_seconds"] = Value::Null;
        v["totals"]["mips"] = Value::Null;
        v["arp_file"]["path"] = Value::Null;
        v
    };
    assert_eq!(strip(a.report), strip(b.report));
}

#[test]
fn firmware_that_never_sets_its_clock_runs_on_the_hsi() {
    let r = run("stm32f407", "stm32-startup", &[], "slow");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.starts_with("hello from USART2 at 16000000 Hz\r\n"),
        "{}",
        r.stdout
    );
    assert!(r.report.get("clock_changes").is_none(), "{}", r.report);
    let cycles = r.report["totals"]["cycles"].as_u64().unwrap();
    let seconds = r.report["totals"]["simulated_seconds"].as_f64().unwrap();
    assert!((seconds - cycles as f64 / 16e6).abs() < 1e-12);
    // at 16 MHz the flash needs no wait state (RM0090 Table 10): no warning
    assert!(
        warnings(&r).iter().all(|w| !w.contains("LATENCY")),
        "{:?}",
        warnings(&r)
    );
    // APB1 runs at HCLK at reset: BRR = (16e6 + 57,600) / 115,200 = 139
    let uarts = r.report["uarts"].as_array().expect("uarts");
    assert_eq!(
        uarts,
        &[Value::from(
            "USART2: 34 bytes sent at 115107 baud (BRR 0x8b)"
        )]
    );
}

#[test]
fn a_switch_before_the_flash_latency_is_raised_is_warned_at_its_instruction() {
    let r = run("stm32f407", "stm32-startup", &[], "late-latency");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let w = warnings(&r);
    let at_switch = w
        .iter()
        .find(|w| w.contains("the core clock became 168 MHz with FLASH_ACR.LATENCY = 0"));
    let at_switch = at_switch.unwrap_or_else(|| panic!("{w:?}"));
    assert!(
        at_switch.contains("requires 5 at that clock"),
        "{at_switch}"
    );
    assert!(
        at_switch.contains("SystemClock_Config") || at_switch.contains("switch_to_pll"),
        "{at_switch}"
    );
    assert!(
        r.report["flash"]["blocks_below_required_latency"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn a_usart_used_before_its_clock_is_enabled_is_warned_of_and_stays_silent() {
    // as on silicon, the status register reads 0 without the clock: the
    // firmware polls TXE until the cycle limit
    let r = run(
        "stm32f407",
        "stm32-startup",
        &["--max-cycles", "3000000"],
        "no-uart-clock",
    );
    assert_ne!(r.code, Some(0), "{}", r.stderr);
    assert!(!r.stdout.contains("hello"), "{}", r.stdout);
    let all = format!("{}{}", r.stderr, warnings(&r).join("\n"));
    assert!(all.contains("RM0090 6.3.13 RCC_APB1ENR.USART2EN"), "{all}");
    assert!(
        all.contains("USART2: accessed while bit 17 of 0x40023840 is 0"),
        "{all}"
    );
}

#[test]
fn a_register_of_rcc_the_model_does_not_have_stops_the_run_naming_it() {
    let r = run("stm32f407", "stm32-startup", &[], "bad-register");
    assert_eq!(r.code, Some(120), "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "RCC offset 0x100 (0x40023900) is a register of RCC the model does not answer"
        ),
        "{}",
        r.stderr
    );
}

/// 25 MHz / BAUDDIV 16: a frame of 10 bits every 160 cycles. The first
/// byte shifts at once, the second waits in the buffer, byte k (k >= 3)
/// is written when byte k-2 has gone: the 33rd of "uart0: hello from the
/// CMSDK UART\n" at 31 x 160 = 4,960 cycles, plus the loop's own
/// instructions (under 40).
#[test]
fn the_mps2_uart0_sends_what_qemus_sends_at_its_frames_pace() {
    require_tool("qemu-system-arm");
    let boards = [
        ("cortex-m3", "mps2-an385", None),
        ("cortex-m4f", "mps2-an386", None),
        ("cortex-m7", "mps2-an500", None),
        ("cortex-m33", "mps2-an505", Some("cortex-m33")),
    ];
    for (target, machine, cpu) in boards {
        let r = run(target, "uart", &[], "on");
        assert_eq!(r.code, Some(0), "{target}: {}", r.stderr);
        let uart = "uart0: hello from the CMSDK UART\n";
        assert_eq!(r.stdout, format!("{uart}semihosting: bye\n"), "{target}");
        let puts = sample(&r, 1);
        assert!((4_960..5_000).contains(&puts), "{target}: {puts} cycles");
        let dir = scratch(&format!("board-clocks-qemu-{target}"));
        let serial = dir.join("uart0.txt");
        let mut cmd = Command::new("timeout");
        cmd.args(["20", "qemu-system-arm", "-M", machine]);
        if let Some(cpu) = cpu {
            cmd.args(["-cpu", cpu]);
        }
        let out = cmd
            .args(["-display", "none", "-monitor", "none", "-serial"])
            .arg(format!("file:{}", serial.display()))
            .args(["-chardev", "stdio,id=semihosting", "-semihosting-config"])
            .args(["enable=on,target=native,chardev=semihosting", "-kernel"])
            .arg(guest(target, "uart"))
            .output()
            .expect("qemu-system-arm starts");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "semihosting: bye\n",
            "{target}"
        );
        assert_eq!(std::fs::read_to_string(&serial).unwrap(), uart, "{target}");
    }
}

#[test]
fn a_byte_written_with_the_cmsdk_transmitter_off_is_lost_with_a_warning() {
    let r = run("cortex-m4f", "uart", &[], "disabled");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "semihosting: bye\n");
    let w = warnings(&r);
    assert!(
        w.iter()
            .any(|w| w
                .contains("UART0: a byte written while CTRL.TXEN is 0 (DDI 0479C 4.3) is lost")),
        "{w:?}"
    );
}

/// The RP2040's clock tree (sim-host/src/host/devices/rp2040_clocks.rs)
/// from where pico-sdk's runtime leaves it (clk_sys 125 MHz on PLL_SYS):
/// clk_sys to clk_ref (the 12 MHz crystal), PLL_SYS set to 12 x 133 / 6 /
/// 2 = 133 MHz, clk_sys back on it; UART0 at IBRD 72, FBRD 10.
///
/// The PLL locks 100 us after PD and VCOPD clear (the model's assumption):
/// 1,200 cycles at 12 MHz, plus that section's first fetches through the
/// XIP cache (at most 4 lines read at 56 cycles each, the report's
/// figure for a line: 224) and its own few instructions (under 20).
///
/// A bit lasts 16 x (72 + 10/64) = 1,154.5 clk_peri cycles (PL011 TRM
/// 3.3.6; clk_peri = clk_sys here), a frame (start, 8 bits, stop) 11,545;
/// the FIFO (32) and the shifter take the first 33 bytes at once and the
/// loop then waits on TXFF and BUSY until the 42nd frame has gone: 42 x
/// 11,545 = 484,890 cycles, plus the loop's own instructions and its
/// first fetches (under 800).
#[test]
fn the_rp2040s_clock_tree_and_uart0_follow_the_datasheet() {
    let r = run("rp2040", "rp2040-startup", &[], "full");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "hello from the RP2040's UART0 at 133 MHz\r\nsemihosting: done\n"
    );
    let seen = board_run::clock_changes(&r.report);
    assert_eq!(
        seen,
        [
            (125_000_000, 12_000_000, "clk_ref (XOSC 12 MHz)"),
            (
                12_000_000,
                133_000_000,
                "PLL_SYS (XOSC 12 MHz / 1 x 133 / 6 / 2)"
            ),
        ]
    );
    let relock = sample(&r, 1);
    assert!(
        (1_200..1_200 + 224 + 20).contains(&relock),
        "pll_relock took {relock} cycles"
    );
    let puts = sample(&r, 2);
    assert!(
        (484_890..484_890 + 800).contains(&puts),
        "uart_puts took {puts} cycles"
    );
    // 133e6 x 64 / (16 x (72 x 64 + 10)) = 115,201.4 baud
    let uarts = r.report["uarts"].as_array().expect("uarts");
    assert_eq!(
        uarts,
        &[Value::from(
            "UART0: 42 bytes sent at 115201 baud (IBRD 72, FBRD 10)"
        )]
    );
    assert!(warnings(&r).is_empty(), "{:?}", warnings(&r));
}

/// The STM32F746 from its 25 MHz HSE (STM32F746G-DISCO): PLLM 25, PLLN
/// 432, PLLP /2 = 216 MHz after the over-drive (RM0385 4.1.4), FLASH_ACR
/// 7 wait states with the ART before the switch; APB1 at 216 / 4 = 54
/// MHz: BRR = (54,000,000 + 57,600) / 115,200 = 469 (0x1d5), 54e6 / 469
/// = 115,138 baud. The HSE wait is at least 32,000 cycles at the HSI
/// (its polls here also pay the AXIM flash's fetch stalls, the L1 caches
/// being off: no tighter bound is derived for it).
#[test]
fn st_start_up_reaches_216_mhz_on_the_stm32f746() {
    let r = run("stm32f746", "stm32-startup", &[], "full");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "hello from USART2 at 216000000 Hz\r\nsemihosting: done at 216000000 Hz\n"
    );
    assert!(
        sample(&r, 1) >= HSE_STARTUP_CYCLES,
        "hse_on {}",
        sample(&r, 1)
    );
    assert!(sample(&r, 2) >= PLL_LOCK_CYCLES, "pll_on {}", sample(&r, 2));
    let changes = r.report["clock_changes"].as_array().expect("clock changes");
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["to_hz"], 216_000_000);
    assert_eq!(changes[0]["source"], "PLL (HSE 25 MHz / 25 x 432 / 2)");
    let uarts = r.report["uarts"].as_array().expect("uarts");
    assert_eq!(
        uarts,
        &[Value::from(
            "USART2: 35 bytes sent at 115138 baud (BRR 0x1d5)"
        )]
    );
    let w = warnings(&r);
    assert!(
        w.iter()
            .all(|w| !w.contains("LATENCY") && !w.contains("HCLK")),
        "{w:?}"
    );
}

/// The public benchmarks' board layer (scripts/public-benchmarks/board.c),
/// which CoreMark and Dhrystone are built with: its `cfg=st` includes the
/// ST start-up, which must leave the layer's own ARP section 1 in place
/// (it once compiled it away), and must time the workload exactly as the
/// same FLASH_ACR 0x705 written by hand does: the start-up's clock change
/// moves times, not cycles.
#[test]
fn the_benchmark_board_layer_times_the_same_with_the_st_start_up() {
    require_tool("arm-none-eabi-gcc");
    let by_hand = run("stm32f407", "board-harness", &[], "cfg=0x705");
    let st = run("stm32f407", "board-harness", &[], "cfg=st");
    for r in [&by_hand, &st] {
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert!(r.stdout.contains("workload 0xae6b7651"), "{}", r.stdout);
        assert_eq!(r.samples.len(), 1, "one timed part: {:?}", r.samples);
    }
    assert!(st.stdout.contains("HCLK 168000000 Hz, FLASH_ACR = 0x705"));
    assert_eq!(sample(&st, 1), sample(&by_hand, 1));
    let changes = st.report["clock_changes"].as_array().expect("a list");
    assert_eq!(changes.len(), 1, "{changes:?}");
}
