//! The RP2040 clock tree against the sequences pico-sdk and rp2040-hal
//! run, with each bit's time derived by hand; each warning rule; each
//! refusal; the atomic aliases.

use super::*;
use crate::host::devices::FixedClocks;

const RESETS: u64 = 0x4000_c000;
const CLOCKS: u64 = 0x4000_8000;
const XOSC: u64 = 0x4002_4000;
const PLL_SYS: u64 = 0x4002_8000;
const PLL_USB: u64 = 0x4002_c000;
const WATCHDOG: u64 = 0x4005_8000;
const XOR: u64 = 0x1000;
const SET: u64 = 0x2000;
const CLR: u64 = 0x3000;

// CLOCKS offsets (clocks.h)
const REF_CTRL: u64 = CLOCKS + 0x30;
const REF_SELECTED: u64 = CLOCKS + 0x38;
const SYS_CTRL: u64 = CLOCKS + 0x3c;
const SYS_DIV: u64 = CLOCKS + 0x40;
const SYS_SELECTED: u64 = CLOCKS + 0x44;
const PERI_CTRL: u64 = CLOCKS + 0x48;
const USB_CTRL: u64 = CLOCKS + 0x54;
const USB_DIV: u64 = CLOCKS + 0x58;
const ADC_CTRL: u64 = CLOCKS + 0x60;
const ADC_DIV: u64 = CLOCKS + 0x64;
const RTC_CTRL: u64 = CLOCKS + 0x6c;
const RTC_DIV: u64 = CLOCKS + 0x70;
const RESET_DONE: u64 = RESETS + 8;
const XOSC_STATUS: u64 = XOSC + 4;
const STABLE: u32 = 1 << 31;

fn blocks(start: ClockStart) -> Rp2Blocks {
    Rp2Blocks {
        resets: RESETS,
        clocks: CLOCKS,
        xosc: XOSC,
        pll_sys: PLL_SYS,
        pll_usb: PLL_USB,
        watchdog: WATCHDOG,
        xosc_hz: 12_000_000,
        start,
    }
}

/// The tree driven as the engine drives it: `settle` before each access,
/// the core clock compared after each write; every change and warning
/// kept.
struct Run {
    tree: Rp2040Clocks,
    now: u128,
    changes: Vec<(u128, u64)>,
    warnings: Vec<String>,
}

impl Run {
    fn new(start: ClockStart) -> Run {
        Run {
            tree: Rp2040Clocks::new(blocks(start)),
            now: 0,
            changes: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn at(&mut self, picos: u128) -> Now {
        assert!(picos >= self.now, "time runs forwards");
        self.now = picos;
        let now = Now { cycles: 0, picos };
        if let Some(when) = self.tree.settle(now) {
            self.changes.push((when, self.tree.core_hz()));
        }
        now
    }

    fn read_at(&mut self, addr: u64, picos: u128) -> u32 {
        let now = self.at(picos);
        let mut fx = Effects::default();
        self.tree.read(addr, now, &FixedClocks(1), &mut fx).unwrap()
    }

    fn read(&mut self, addr: u64) -> u32 {
        self.read_at(addr, self.now)
    }

    fn try_write(&mut self, addr: u64, value: u32) -> Result<(), Refusal> {
        let now = self.at(self.now);
        let before = self.tree.core_hz();
        let mut fx = Effects::default();
        let result = self
            .tree
            .write(addr, value, u32::MAX, now, &FixedClocks(1), &mut fx);
        if self.tree.core_hz() != before {
            self.changes.push((self.now, self.tree.core_hz()));
        }
        self.warnings.extend(fx.warnings);
        result
    }

    fn write(&mut self, addr: u64, value: u32) {
        self.try_write(addr, value).unwrap();
    }

    /// Asserts `mask` of the register is clear just before `at` and set
    /// at `at` (the time derived by hand), leaving the run at `at`.
    fn sets_at(&mut self, addr: u64, mask: u32, at: u128) {
        assert_eq!(self.read_at(addr, at - 1) & mask, 0, "{addr:#x} early");
        assert_eq!(self.read_at(addr, at) & mask, mask, "{addr:#x} at {at}");
    }

    /// Polls the register until `mask` is set, 1 us between reads (at
    /// most 100 ms).
    fn wait_for(&mut self, addr: u64, mask: u32) {
        for _ in 0..100_000 {
            if self.read(addr) & mask == mask {
                return;
            }
            self.at(self.now + US);
        }
        panic!("{addr:#x} & {mask:#x} never set");
    }

    fn hz(&self, name: &str) -> Option<u64> {
        self.tree.clock_hz(name)
    }
}

const US: u128 = 1_000_000;

/// pico-sdk's start-up from reset (pico_runtime_init: runtime_init.c's
/// early resets, runtime_init_clocks.c, hardware_xosc/xosc.c
/// xosc_init, hardware_pll/pll.c pll_init, hardware_clocks/clocks.c
/// clock_configure, the post-clock resets), each access as the SDK makes
/// it (hw_set_bits / hw_clear_bits / hw_xor_bits through the aliases).
#[test]
fn pico_sdk_start_up_reaches_125_mhz_at_the_times_the_model_gives() {
    let mut r = Run::new(ClockStart::Reset);
    assert_eq!(r.tree.core_hz(), 6_500_000);
    assert_eq!(r.read(RESETS), 0x01ff_ffff);
    // runtime_init_early_resets: reset all but IO_QSPI, PADS_QSPI,
    // PLL_USB, USBCTRL, SYSCFG, PLL_SYS; release all but ADC, RTC, SPI0/1,
    // UART0/1, USBCTRL, and wait for RESET_DONE: done at once (the model's
    // assumption), their clocks not needed.
    r.at(US);
    r.write(
        RESETS + SET,
        !((1 << 6) | (1 << 9) | (1 << 13) | (1 << 24) | (1 << 18) | (1 << 12)),
    );
    let early = 0x01ff_ffff
        & !((1 << 0) | (1 << 15) | (1 << 16) | (1 << 17) | (1 << 22) | (1 << 23) | (1 << 24));
    r.write(RESETS + CLR, early);
    assert_eq!(r.read(RESET_DONE) & early, early);
    // xosc_init at t1: CTRL = FREQ_RANGE 1_15MHZ (ENABLE field 0: "an
    // invalid setting will enable the oscillator"), STARTUP = (12000 +
    // 128) / 256 = 47, then ENABLE 0xfab set through the SET alias.
    let t1 = 2 * US;
    r.at(t1);
    r.write(XOSC, 0xaa0);
    r.at(t1 + 10_000);
    r.write(XOSC + 0xc, 47);
    r.write(XOSC + SET, 0xfab << 12);
    assert_eq!(r.read(XOSC), 0x00fa_baa0);
    // STABLE 47 x 256 = 12032 cycles of 12 MHz after t1:
    // 12032 / 12e6 s = 1_002_666_666.7 ps, rounded up.
    let stable = t1 + 1_002_666_667;
    r.sets_at(XOSC_STATUS, STABLE, stable);
    // switch clk_sys and clk_ref away from their aux sources: already on
    // clk_ref and the ROSC, SELECTED 1 at once
    r.write(SYS_CTRL + CLR, 1);
    assert_eq!(r.read(SYS_SELECTED), 1);
    r.write(REF_CTRL + CLR, 3);
    assert_eq!(r.read(REF_SELECTED), 1);
    // pll_init(pll_sys, 1, 1500 MHz, 6, 2) at t2: reset and release
    // PLL_SYS, CS = REFDIV 1, FBDIV = 1500 / 12 = 125, clear PD and VCOPD:
    // LOCK PLL_LOCK_PS after (the crystal is already stable).
    let t2 = stable + US;
    r.at(t2);
    assert_eq!(r.read(PLL_SYS) & PLL_LOCK, 0);
    r.write(RESETS + SET, 1 << 12);
    r.write(RESETS + CLR, 1 << 12);
    assert_ne!(r.read(RESET_DONE) & (1 << 12), 0);
    r.write(PLL_SYS, 1);
    r.write(PLL_SYS + 8, 125);
    r.write(PLL_SYS + 4 + CLR, PLL_PD | PLL_VCOPD);
    r.sets_at(PLL_SYS, PLL_LOCK, t2 + PLL_LOCK_PS);
    r.write(PLL_SYS + 0xc, (6 << 16) | (2 << 12));
    r.write(PLL_SYS + 4 + CLR, PLL_POSTDIVPD);
    assert_eq!(r.hz("pll_sys"), Some(125_000_000));
    // pll_init(pll_usb, 1, 1200 MHz, 5, 5) at t3
    let t3 = t2 + PLL_LOCK_PS + US;
    r.at(t3);
    r.write(RESETS + SET, 1 << 13);
    r.write(RESETS + CLR, 1 << 13);
    r.write(PLL_USB, 1);
    r.write(PLL_USB + 8, 100);
    r.write(PLL_USB + 4 + CLR, PLL_PD | PLL_VCOPD);
    r.sets_at(PLL_USB, PLL_LOCK, t3 + PLL_LOCK_PS);
    r.write(PLL_USB + 0xc, (5 << 16) | (5 << 12));
    r.write(PLL_USB + 4 + CLR, PLL_POSTDIVPD);
    assert_eq!(r.hz("pll_usb"), Some(48_000_000));
    // clk_ref to the XOSC at t4 (clock_configure: ENABLE cleared, a no-op
    // here; AUXSRC and SRC through hw_write_masked, an XOR of the change)
    let t4 = t3 + PLL_LOCK_PS + US;
    r.at(t4);
    r.write(REF_CTRL + CLR, ENABLE);
    r.write(REF_CTRL + XOR, 0);
    r.write(REF_CTRL + XOR, 2);
    // the glitchless mux: 2 ROSC cycles (2 / 6.5 MHz = 307_692.3 ps, up:
    // 307_693) and 2 XOSC cycles (166_666.7 ps, up: 166_667)
    let ref_switch = t4 + 307_693 + 166_667;
    r.sets_at(REF_SELECTED, 1 << 2, ref_switch);
    assert_eq!(r.tree.core_hz(), 12_000_000, "clk_sys runs from clk_ref");
    // clk_sys to PLL_SYS at t5: SRC cleared (already), AUXSRC 0 (already),
    // SRC = aux: 2 clk_ref cycles (166_667 ps) and 2 PLL_SYS cycles
    // (2 / 125 MHz = 16_000 ps)
    let t5 = ref_switch + US;
    r.at(t5);
    r.write(SYS_CTRL + CLR, 1);
    r.write(SYS_CTRL + XOR, 0);
    r.write(SYS_CTRL + XOR, 1);
    let sys_switch = t5 + 166_667 + 16_000;
    r.sets_at(SYS_SELECTED, 1 << 1, sys_switch);
    // clk_usb, clk_adc from PLL_USB; clk_rtc from PLL_USB / 1024 (the
    // divisor written first: it is larger); clk_peri from clk_sys (its
    // DIV at 0x4c ignored)
    for (ctrl, div, divisor) in [
        (USB_CTRL, USB_DIV, 1),
        (ADC_CTRL, ADC_DIV, 1),
        (RTC_CTRL, RTC_DIV, 1024),
    ] {
        if divisor > 1 {
            r.write(div, divisor << 8);
        }
        r.write(ctrl + CLR, ENABLE);
        r.write(ctrl + XOR, 0);
        r.write(ctrl + SET, ENABLE);
        r.write(div, divisor << 8);
    }
    r.write(PERI_CTRL + CLR, ENABLE);
    r.write(PERI_CTRL + XOR, 0);
    r.write(PERI_CTRL + SET, ENABLE);
    r.write(CLOCKS + 0x4c, 1 << 8);
    // start_all_ticks: clk_ref / 12 = 1 MHz; the post-clock resets
    r.write(WATCHDOG + 0x2c, 12 | (1 << 9));
    r.write(RESETS + CLR, 0x01ff_ffff);
    assert_eq!(r.read(RESET_DONE), 0x01ff_ffff);

    assert_eq!(
        r.changes,
        vec![(ref_switch, 12_000_000), (sys_switch, 125_000_000)]
    );
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(
        r.tree.core_source(),
        "PLL_SYS (XOSC 12 MHz / 1 x 125 / 6 / 2)"
    );
    for (name, hz) in [
        ("clk_sys", 125_000_000),
        ("clk_ref", 12_000_000),
        ("clk_peri", 125_000_000),
        ("clk_usb", 48_000_000),
        ("clk_adc", 48_000_000),
        ("clk_rtc", 46_875),
        ("xosc", 12_000_000),
        ("tick", 1_000_000),
    ] {
        assert_eq!(r.hz(name), Some(hz), "{name}");
    }
}

/// rp2040-hal's init_clocks_and_plls (rp2040-hal src/xosc.rs
/// setup_xosc_blocking, watchdog.rs enable_tick_generation, pll.rs
/// setup_pll_blocking with PLL_SYS_125MHZ and PLL_USB_48MHZ,
/// clocks/mod.rs init_default and clocks/macros.rs configure_clock), its
/// PAC writes whole registers, then a UART brought out of reset.
#[test]
fn rp2040_hal_init_clocks_and_plls_reaches_125_mhz_and_brings_up_uart0() {
    let mut r = Run::new(ClockStart::Reset);
    // setup_xosc_blocking(12 MHz): CTRL written with FREQ_RANGE only (the
    // ENABLE field 0 enables it, BADWRITE), STARTUP = 12e6 / (1000 x 256)
    // = 46 x the multiplier 64 = 2944, then CTRL = ENABLE alone (FREQ_RANGE
    // 0, invalid: the previous 0xaa0 retained)
    let t0 = US;
    r.at(t0);
    r.write(XOSC, 0xaa0);
    r.write(XOSC + 0xc, 2944);
    r.write(XOSC, 0xfab << 12);
    assert_eq!(r.read(XOSC), 0x00fa_baa0);
    // 2944 x 256 = 753_664 cycles of 12 MHz after t0: 62_805_333_333.3 ps,
    // rounded up
    let stable = t0 + 62_805_333_334;
    r.sets_at(XOSC_STATUS, STABLE, stable);
    assert_ne!(r.read(XOSC_STATUS) & XOSC_BADWRITE, 0);
    r.write(WATCHDOG + 0x2c, (1 << 9) | 12);
    // ClocksManager::new: CLK_SYS_RESUS_CTRL written with zero
    r.write(CLOCKS + 0x78, 0);
    for (base, bit, fbdiv, postdivs) in [(PLL_SYS, 12, 125, (6, 2)), (PLL_USB, 13, 100, (5, 5))] {
        // reset_source_await on clk_sys and clk_ref: SRC written 0
        r.write(SYS_CTRL, 0);
        assert_eq!(r.read(SYS_SELECTED), 1);
        r.write(REF_CTRL, 0);
        assert_eq!(r.read(REF_SELECTED), 1);
        let reset = r.read(RESETS);
        r.write(RESETS, reset & !(1 << bit));
        assert_ne!(r.read(RESET_DONE) & (1 << bit), 0);
        r.write(base + 4, 0x2d);
        r.write(base + 8, 0);
        r.write(base, 1);
        r.write(base + 8, fbdiv);
        let on = r.now + 10_000;
        r.at(on);
        r.write(base + 4, 0x2d & !(PLL_PD | PLL_VCOPD));
        r.sets_at(base, PLL_LOCK, on + PLL_LOCK_PS);
        r.write(base + 0xc, (postdivs.0 << 16) | (postdivs.1 << 12));
        r.write(base + 4, 0x04);
        r.at(r.now + US);
    }
    // clk_ref: SRC = XOSC (2); 2 ROSC + 2 XOSC cycles as in the SDK's run
    let t1 = r.now;
    r.write(REF_CTRL, 2);
    r.sets_at(REF_SELECTED, 1 << 2, t1 + 307_693 + 166_667);
    r.write(CLOCKS + 0x34, 0x100);
    // clk_sys: SRC 0, AUXSRC PLL_SYS (0), SRC aux (1); 2 clk_ref cycles
    // and 2 PLL_SYS cycles
    r.write(SYS_CTRL, 0);
    r.write(SYS_CTRL, 0);
    let t2 = r.now;
    r.write(SYS_CTRL, 1);
    r.sets_at(SYS_SELECTED, 1 << 1, t2 + 166_667 + 16_000);
    r.write(SYS_DIV, 0x100);
    // usb, adc, rtc (48 MHz / 46875 Hz: div 1024 << 8, set first), peri
    for (ctrl, div, value) in [
        (USB_CTRL, USB_DIV, 0x100),
        (ADC_CTRL, ADC_DIV, 0x100),
        (RTC_CTRL, RTC_DIV, 0x4_0000),
    ] {
        if value > 0x100 {
            r.write(div, value);
        }
        r.write(ctrl, 0);
        r.write(ctrl, 0);
        r.write(ctrl, ENABLE);
        r.write(div, value);
    }
    r.write(PERI_CTRL, 0);
    r.write(PERI_CTRL, 0);
    r.write(PERI_CTRL, ENABLE);
    // UartPeripheral::new: reset_bring_up(UART0), bit 22
    let reset = r.read(RESETS);
    r.write(RESETS, reset & !(1 << 22));
    assert_ne!(r.read(RESET_DONE) & (1 << 22), 0);
    assert_eq!(r.tree.bit(RESET_DONE, 22), Some(true));

    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(r.tree.core_hz(), 125_000_000);
    assert_eq!(r.hz("clk_peri"), Some(125_000_000));
    assert_eq!(r.hz("clk_rtc"), Some(46_875));
    assert_eq!(r.hz("tick"), Some(1_000_000));
}

#[test]
fn the_pico_sdk_start_is_the_state_its_runtime_leaves() {
    let mut r = Run::new(ClockStart::PicoSdk);
    assert_eq!(r.tree.core_hz(), crate::model::devices::RP2040_SDK_SYS_HZ);
    assert_eq!(r.read(RESET_DONE), 0x01ff_ffff);
    assert_eq!(r.read(XOSC_STATUS) & STABLE, STABLE);
    assert_eq!(r.read(PLL_SYS) & PLL_LOCK, PLL_LOCK);
    assert_eq!(r.read(SYS_SELECTED), 2);
    assert_eq!(r.read(REF_SELECTED), 4);
    assert_eq!(r.hz("clk_peri"), Some(125_000_000));
    assert_eq!(r.hz("clk_usb"), Some(48_000_000));
    assert_eq!(r.hz("clk_rtc"), Some(46_875));
    assert_eq!(r.hz("tick"), Some(1_000_000));
    assert_eq!(r.tree.summary().len(), 2);
    // rp2040-hal run again from here: clk_sys back to clk_ref at once
    // (2 PLL_SYS cycles, 16_000 ps, and 2 clk_ref cycles, 166_667 ps)
    r.at(US);
    r.write(SYS_CTRL, 0);
    r.sets_at(SYS_SELECTED, 1, US + 16_000 + 166_667);
    assert_eq!(r.changes, vec![(US + 182_667, 12_000_000)]);
}

#[test]
fn at_reset_clk_sys_runs_from_the_rosc_and_the_peripheral_clocks_are_stopped() {
    let mut r = Run::new(ClockStart::Reset);
    assert_eq!(r.hz("clk_sys"), Some(6_500_000));
    assert_eq!(r.hz("clk_ref"), Some(6_500_000));
    assert_eq!(r.tree.core_source(), "clk_ref (ROSC 6.5 MHz (nominal))");
    for name in ["clk_peri", "clk_usb", "xosc", "pll_sys", "tick"] {
        assert_eq!(r.hz(name), None, "{name}");
    }
    assert_eq!(r.read(RESET_DONE), 0);
    assert_eq!(r.read(PLL_SYS + 4), 0x2d);
    assert_eq!(r.read(PLL_SYS + 0xc), 0x7_7000);
    assert_eq!(r.read(WATCHDOG + 0x2c), 0x200, "ENABLE, CYCLES 0: no tick");
}

/// A switch to a PLL not yet locked waits for it: the mux switches 2 of
/// its cycles after it locks.
#[test]
fn a_switch_to_a_source_not_running_happens_when_it_runs() {
    let mut r = Run::new(ClockStart::Reset);
    r.write(XOSC, 0xfab << 12); // STARTUP.DELAY 0: stable at once
    r.write(RESETS + CLR, 1 << 12);
    r.write(PLL_SYS + 8, 100); // 1200 MHz
    r.write(PLL_SYS + 0xc, (6 << 16) | (2 << 12)); // 100 MHz
    r.write(PLL_SYS + 4, 0x04); // everything powered at 0
    r.write(SYS_CTRL, 1);
    assert!(
        r.warnings[0].contains("which is not running"),
        "{:?}",
        r.warnings
    );
    assert!(r.warnings[0].contains("2.15.3.2"));
    // locked at PLL_LOCK_PS; then 2 cycles of 100 MHz: 20_000 ps
    let due = PLL_LOCK_PS + 20_000;
    r.sets_at(SYS_SELECTED, 2, due);
    assert_eq!(r.changes, vec![(due, 100_000_000)]);
}

#[test]
fn pll_settings_outside_the_datasheets_ranges_are_warned_of() {
    let mut r = Run::new(ClockStart::Reset);
    r.write(XOSC, 0xfab << 12);
    r.write(RESETS + CLR, 3 << 12);
    // FBDIV 10: 120 MHz VCO; REFDIV 3: a 4 MHz reference
    r.write(PLL_SYS, 3);
    r.write(PLL_SYS + 8, 10);
    r.write(PLL_SYS + 4, 0x0c);
    let w = std::mem::take(&mut r.warnings);
    assert!(w.iter().any(|w| w.contains("reference of 4 MHz")), "{w:?}");
    assert!(
        w.iter().any(
            |w| w.contains("FBDIV_INT = 10: pll.h and RP2040 datasheet 2.18.2 allow 16 to 320")
        ),
        "{w:?}"
    );
    assert!(w.iter().any(|w| w.contains("VCO of 40 MHz")), "{w:?}");
    // REFDIV 0
    r.write(PLL_USB, 0);
    r.write(PLL_USB + 8, 100);
    r.write(PLL_USB + 4, 0x0c);
    assert!(r.warnings[0].contains("REFDIV = 0"), "{:?}", r.warnings);
    // POSTDIV 0, and a 1600 MHz / 1 / 1 output above 133 MHz
    let mut r = Run::new(ClockStart::Reset);
    r.write(XOSC, 0xfab << 12);
    r.write(RESETS + CLR, 1 << 12);
    r.write(PLL_SYS + 8, 125);
    r.write(PLL_SYS + 4, 0x0c);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    r.write(PLL_SYS + 0xc, 0);
    r.write(PLL_SYS + 4, 0x04);
    assert!(r.warnings[0].contains("allows 1 to 7"), "{:?}", r.warnings);
    r.write(PLL_SYS + 0xc, (1 << 16) | (1 << 12));
    assert!(
        r.warnings[1].contains("output is 1.5 GHz") || r.warnings[1].contains("1500 MHz"),
        "{:?}",
        r.warnings
    );
    assert!(r.warnings[1].contains("133 MHz"));
}

#[test]
fn reconfiguring_a_running_pll_and_writing_one_held_in_reset_are_warned_of() {
    let mut r = Run::new(ClockStart::PicoSdk);
    r.write(PLL_SYS + 8, 100);
    assert!(
        r.warnings[0].contains("FBDIV_INT changed while the PLL runs"),
        "{:?}",
        r.warnings
    );
    // PLL_USB in reset (clk_usb and clk_adc stop with it: not core clocks)
    r.write(RESETS + SET, 1 << 13);
    assert_eq!(r.hz("clk_usb"), None);
    r.write(PLL_USB + 8, 40);
    assert!(r.warnings[1].contains("PLL_USB written while RESETS.RESET holds it in reset"));
    assert_eq!(r.read(PLL_USB + 8), 0, "reset value, the write lost");
}

#[test]
fn changing_an_aux_mux_in_use_is_warned_of() {
    let mut r = Run::new(ClockStart::PicoSdk);
    // clk_sys runs from its aux (PLL_SYS): AUXSRC to PLL_USB glitches
    r.write(SYS_CTRL, 1 | (1 << 5));
    assert!(
        r.warnings[0].contains("CLK_SYS_CTRL.AUXSRC changed"),
        "{:?}",
        r.warnings
    );
    assert_eq!(r.tree.core_hz(), 48_000_000);
    // clk_usb enabled: AUXSRC to PLL_SYS without disabling it first
    r.write(USB_CTRL, ENABLE | (1 << 5));
    assert!(r.warnings[1].contains("CLK_USB_CTRL.AUXSRC changed"));
    assert!(r.warnings[1].contains("2.15.3.2"));
    // disabled first: no warning
    r.write(ADC_CTRL, 0);
    r.write(ADC_CTRL, 1 << 5);
    r.write(ADC_CTRL, ENABLE | (1 << 5));
    assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
    assert_eq!(r.hz("clk_adc"), Some(125_000_000), "AUXSRC 1: PLL_SYS");
}

#[test]
fn dividers_follow_the_fraction_and_a_divisor_below_2_is_warned_of() {
    let mut r = Run::new(ClockStart::PicoSdk);
    // 125 MHz x 256 / (2 x 256 + 128) = 50 MHz
    r.write(SYS_DIV, (2 << 8) | 128);
    assert_eq!(r.tree.core_hz(), 50_000_000);
    assert!(r.warnings.is_empty());
    assert_eq!(
        r.tree.core_source(),
        "PLL_SYS (XOSC 12 MHz / 1 x 125 / 6 / 2) / 2 128/256"
    );
    r.write(SYS_DIV, (1 << 8) | 128);
    assert!(
        r.warnings[0].contains("only clock divider of 1, or >= 2"),
        "{:?}",
        r.warnings
    );
    // INT 0 divides by 2^16
    r.write(SYS_DIV, 0);
    assert_eq!(r.tree.core_hz(), 125_000_000 / 65_536);
    assert_eq!(r.changes.len(), 3);
}

#[test]
fn a_block_released_while_its_clock_is_stopped_is_done_when_it_runs() {
    let mut r = Run::new(ClockStart::Reset);
    r.write(RESETS + CLR, 1 << 22);
    assert!(
        r.warnings[0].contains("releases UART0 while its clock clk_peri is stopped"),
        "{:?}",
        r.warnings
    );
    assert_eq!(r.read(RESET_DONE) & (1 << 22), 0);
    assert_eq!(r.tree.bit(RESET_DONE, 22), Some(false));
    assert_eq!(r.tree.bit(RESETS, 22), Some(false));
    r.write(PERI_CTRL, ENABLE); // clk_peri from clk_sys (ROSC)
    assert_eq!(r.hz("clk_peri"), Some(6_500_000));
    assert_eq!(r.tree.bit(RESET_DONE, 22), Some(true));
}

#[test]
fn the_crystal_is_checked_and_counts_down() {
    let mut blocks = blocks(ClockStart::Reset);
    blocks.xosc_hz = 0;
    let mut tree = Rp2040Clocks::new(blocks);
    let mut fx = Effects::default();
    tree.write(
        XOSC,
        0xfab << 12,
        u32::MAX,
        Now::default(),
        &FixedClocks(1),
        &mut fx,
    )
    .unwrap();
    assert!(fx.warnings[0].contains("never sets"), "{:?}", fx.warnings);

    // COUNT: 200 written at 1 us with the crystal stable counts 12 a us
    let mut r = Run::new(ClockStart::PicoSdk);
    r.at(US);
    r.write(XOSC + 0x1c, 200);
    assert_eq!(r.read_at(XOSC + 0x1c, US + 10 * US), 80);
    assert_eq!(r.read_at(XOSC + 0x1c, US + 20 * US), 0);
    // disabling it while clk_ref runs from it is refused
    let err = r.try_write(XOSC, 0xd1e << 12).unwrap_err();
    assert!(err.0.contains("clk_ref would stop"), "{err:?}");
    assert!(err.0.contains("2.15.3.2"));
    assert_eq!(r.read(XOSC_STATUS) & STABLE, STABLE, "the write undone");
}

#[test]
fn stopping_the_core_clocks_source_is_refused() {
    let mut r = Run::new(ClockStart::PicoSdk);
    let err = r.try_write(PLL_SYS + 4 + SET, PLL_PD).unwrap_err();
    assert!(err.0.contains("clk_sys would stop"), "{err:?}");
    let err = r.try_write(RESETS + SET, 1 << 12).unwrap_err();
    assert!(err.0.contains("PLL_SYS"), "{err:?}");
    // POSTDIV1 0: the PLL's output divided to nothing
    let err = r.try_write(PLL_SYS + 0xc, 2 << 12).unwrap_err();
    assert!(err.0.contains("clk_sys would stop"), "{err:?}");
    assert_eq!(r.read(PLL_SYS + 0xc), (6 << 16) | (2 << 12));
    assert_eq!(r.tree.core_hz(), 125_000_000);
    assert_eq!(r.read(RESETS), 0);
}

#[test]
fn registers_the_model_does_not_follow_are_refused_by_name() {
    let mut r = Run::new(ClockStart::PicoSdk);
    let mut fx = Effects::default();
    let mut read = |addr: u64| {
        r.tree
            .read(addr, Now::default(), &FixedClocks(1), &mut fx)
            .unwrap_err()
            .0
    };
    assert!(read(XOSC + 8).contains("XOSC_DORMANT"));
    assert!(read(CLOCKS + 0x94).contains("CLOCKS_FC0_SRC"));
    assert!(read(CLOCKS + 0xb0).contains("CLOCKS_ENABLED0"));
    assert!(read(RESETS + 0xc).contains("RESETS offset 0x00c (0x4000c00c)"));
    assert!(read(PLL_SYS + 0x10).contains("PLL_SYS offset 0x010"));
    assert!(read(WATCHDOG + 0x30).contains("WATCHDOG offset 0x030"));
    for (addr, value, name) in [
        (WATCHDOG, 1 << 31, "WATCHDOG_CTRL.TRIGGER"),
        (CLOCKS + 0x78, 1 << 12, "CLK_SYS_RESUS_CTRL.FRCE"),
        (PERI_CTRL, 5 << 5, "GPIN"),
        (SYS_CTRL, 7 << 5, "CLK_SYS_CTRL.AUXSRC"),
        (XOSC + 8, 0x636f_6d61, "XOSC_DORMANT"),
    ] {
        let err = r.try_write(addr, value).unwrap_err();
        assert!(err.0.contains(name), "{name}: {err:?}");
    }
    assert_eq!(r.tree.core_hz(), 125_000_000);
}

#[test]
fn writes_through_the_atomic_aliases_xor_set_and_clear() {
    let mut r = Run::new(ClockStart::Reset);
    let scratch = WATCHDOG + 0xc;
    r.write(scratch, 0xff00_00ff);
    r.write(scratch + XOR, 0x0ff0_0ff0);
    assert_eq!(r.read(scratch), 0xf0f0_0f0f);
    r.write(scratch + SET, 0x0000_f000);
    assert_eq!(r.read(scratch), 0xf0f0_ff0f);
    r.write(scratch + CLR, 0xf000_000f);
    assert_eq!(r.read(scratch), 0x00f0_ff00);
    assert_eq!(
        r.read(scratch + SET),
        0x00f0_ff00,
        "an alias read reads the register"
    );
    // a byte written is replicated across the word (2.1.4)
    let mut fx = Effects::default();
    r.tree
        .write(
            scratch + 1,
            0xa500,
            0xff00,
            Now::default(),
            &FixedClocks(1),
            &mut fx,
        )
        .unwrap();
    assert_eq!(r.read(scratch), 0xa5a5_a5a5);
    let blocks = r.tree.blocks();
    assert!(blocks.contains(&(WATCHDOG..WATCHDOG + 0x4000)));
    assert!(blocks.contains(&(RESETS..RESETS + 0x4000)));
    assert_eq!(blocks.len(), 6);
}

#[test]
fn the_watchdog_tick_follows_clk_ref_and_its_enable() {
    let mut r = Run::new(ClockStart::PicoSdk);
    assert_eq!(r.read(WATCHDOG + 0x2c) & TICK_RUNNING, TICK_RUNNING);
    r.write(WATCHDOG + 0x2c + CLR, TICK_ENABLE);
    assert_eq!(r.hz("tick"), None);
    assert_eq!(r.read(WATCHDOG + 0x2c) & TICK_RUNNING, 0);
    r.write(WATCHDOG + 0x2c, TICK_ENABLE | 6);
    assert_eq!(r.hz("tick"), Some(2_000_000));
    r.write(WATCHDOG, 1 << 30);
    assert!(
        r.warnings[0].contains("countdown is not modelled"),
        "{:?}",
        r.warnings
    );
}

#[test]
fn a_reserved_ref_source_is_warned_of_and_ignored() {
    let mut r = Run::new(ClockStart::Reset);
    r.write(REF_CTRL, 3);
    assert!(
        r.warnings[0].contains("CLK_REF_CTRL.SRC = 3"),
        "{:?}",
        r.warnings
    );
    assert_eq!(r.read(REF_CTRL) & 3, 0);
}

/// rp2040-hal's init_clocks_and_plls (the sequence of the test above,
/// polling) on a tree that starts where pico-sdk leaves it: clk_sys goes
/// to clk_ref (12 MHz), clk_ref to the ROSC while the PLLs restart, then
/// back to the XOSC and PLL_SYS, with no warning on the way.
#[test]
fn rp2040_hal_init_runs_again_from_the_pico_sdk_start() {
    let mut r = Run::new(ClockStart::PicoSdk);
    r.at(US);
    r.write(XOSC, 0xaa0);
    r.write(XOSC + 0xc, 2944);
    r.write(XOSC, 0xfab << 12);
    r.wait_for(XOSC_STATUS, STABLE);
    r.write(WATCHDOG + 0x2c, (1 << 9) | 12);
    r.write(CLOCKS + 0x78, 0);
    for (base, bit, fbdiv, postdivs) in [(PLL_SYS, 12, 125, (6, 2)), (PLL_USB, 13, 100, (5, 5))] {
        r.write(SYS_CTRL, 0);
        r.wait_for(SYS_SELECTED, 1);
        r.write(REF_CTRL, 0);
        r.wait_for(REF_SELECTED, 1);
        let reset = r.read(RESETS);
        r.write(RESETS, reset & !(1 << bit));
        r.wait_for(RESET_DONE, 1 << bit);
        r.write(base + 4, 0x2d);
        r.write(base + 8, 0);
        r.write(base, 1);
        r.write(base + 8, fbdiv);
        r.write(base + 4, 0x0c);
        r.wait_for(base, PLL_LOCK);
        r.write(base + 0xc, (postdivs.0 << 16) | (postdivs.1 << 12));
        r.write(base + 4, 0x04);
    }
    r.write(REF_CTRL, 2);
    r.wait_for(REF_SELECTED, 1 << 2);
    r.write(SYS_CTRL, 0);
    r.write(SYS_CTRL, 1);
    r.wait_for(SYS_SELECTED, 1 << 1);
    for (ctrl, div, value) in [
        (USB_CTRL, USB_DIV, 0x100),
        (ADC_CTRL, ADC_DIV, 0x100),
        (RTC_CTRL, RTC_DIV, 0x4_0000),
    ] {
        r.write(div, value);
        r.write(ctrl, 0);
        r.write(ctrl, ENABLE);
    }
    r.write(PERI_CTRL, 0);
    r.write(PERI_CTRL, ENABLE);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let path: Vec<u64> = r.changes.iter().map(|c| c.1).collect();
    assert_eq!(path, vec![12_000_000, 6_500_000, 12_000_000, 125_000_000]);
    assert_eq!(r.hz("clk_peri"), Some(125_000_000));
    assert_eq!(r.hz("clk_usb"), Some(48_000_000));
}
