//! The RP2350 clock tree against pico-sdk's start-up from reset with each
//! bit's time derived by hand; the 16.16 dividers; TICKS; each warning
//! rule and refusal.

use super::*;
use crate::host::devices::rp2_common::{PLL_LOCK_PS, PLL_PD, PLL_VCOPD};
use crate::host::devices::FixedClocks;

// addressmap.h (RP2350)
const RESETS: u64 = 0x4002_0000;
const CLOCKS: u64 = 0x4001_0000;
const XOSC: u64 = 0x4004_8000;
const PLL_SYS: u64 = 0x4005_0000;
const PLL_USB: u64 = 0x4005_8000;
const TICKS: u64 = 0x4010_8000;
const XOR: u64 = 0x1000;
const SET: u64 = 0x2000;
const CLR: u64 = 0x3000;

// clocks.h (RP2350)
const REF_CTRL: u64 = CLOCKS + 0x30;
const REF_DIV: u64 = CLOCKS + 0x34;
const REF_SELECTED: u64 = CLOCKS + 0x38;
const SYS_CTRL: u64 = CLOCKS + 0x3c;
const SYS_DIV: u64 = CLOCKS + 0x40;
const SYS_SELECTED: u64 = CLOCKS + 0x44;
const PERI_CTRL: u64 = CLOCKS + 0x48;
const PERI_DIV: u64 = CLOCKS + 0x4c;
const USB_CTRL: u64 = CLOCKS + 0x60;
const RESET_DONE: u64 = RESETS + 8;
const XOSC_STATUS: u64 = XOSC + 4;
const STABLE: u32 = 1 << 31;
const US: u128 = 1_000_000;

fn blocks(start: ClockStart) -> Rp2Blocks {
    Rp2Blocks {
        resets: RESETS,
        clocks: CLOCKS,
        xosc: XOSC,
        pll_sys: PLL_SYS,
        pll_usb: PLL_USB,
        watchdog: 0,
        xosc_hz: 12_000_000,
        start,
    }
}

/// The tree driven as the engine drives it: `settle` before each access,
/// the core clock compared after each write.
struct Run {
    tree: Rp2350Clocks,
    now: u128,
    changes: Vec<(u128, u64)>,
    warnings: Vec<String>,
}

impl Run {
    fn new(start: ClockStart) -> Run {
        Run {
            tree: Rp2350Clocks::new(blocks(start), TICKS),
            now: 0,
            changes: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn at(&mut self, picos: u128) -> Now {
        assert!(picos >= self.now, "time runs forwards");
        self.now = picos;
        let now = Now { cycles: 0, picos };
        let before = self.tree.core_hz();
        if let Some(when) = self.tree.settle(now) {
            if self.tree.core_hz() != before {
                self.changes.push((when, self.tree.core_hz()));
            }
        }
        now
    }

    fn try_read(&mut self, addr: u64) -> Result<u32, Refusal> {
        let now = self.at(self.now);
        let mut fx = Effects::default();
        self.tree.read(addr, now, &FixedClocks(1), &mut fx)
    }

    fn read_at(&mut self, addr: u64, picos: u128) -> u32 {
        self.at(picos);
        self.try_read(addr).unwrap()
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

    /// Asserts `mask` is clear just before `at` and set at `at`.
    fn sets_at(&mut self, addr: u64, mask: u32, at: u128) {
        assert_eq!(self.read_at(addr, at - 1) & mask, 0, "{addr:#x} early");
        assert_eq!(self.read_at(addr, at) & mask, mask, "{addr:#x} at {at}");
    }

    fn hz(&self, name: &str) -> Option<u64> {
        self.tree.clock_hz(name)
    }
}

/// pico-sdk's start-up from reset on RP2350 (runtime_init.c's early
/// resets, runtime_init_clocks.c, xosc_init, pll_init, clock_configure,
/// start_all_ticks), each access through the aliases as the SDK makes it.
#[test]
fn pico_sdk_start_up_reaches_150_mhz_at_the_times_the_model_gives() {
    let mut r = Run::new(ClockStart::Reset);
    assert_eq!(r.tree.core_hz(), 11_000_000, "the ROSC's nominal 11 MHz");
    assert_eq!(r.read(RESETS), 0x1fff_ffff);
    // clk_sys: CTRL reads its reset value 0x41, SELECTED 0x1 (clk_ref)
    assert_eq!(r.read(SYS_CTRL), 0x41);
    assert_eq!(r.read(SYS_SELECTED), 1);
    assert_eq!(r.read(SYS_DIV), 0x1_0000);
    // early resets: release all but HSTX, ADC, SPI0/1, UART0/1, USBCTRL
    // (and the PLLs, IO_QSPI, PADS_QSPI, SYSCFG the SDK leaves alone)
    let held = (1 << 0) | (1 << 3) | (1 << 18) | (1 << 19) | (1 << 26) | (1 << 27) | (1 << 28);
    let early = 0x1fff_ffff & !held & !((1 << 14) | (1 << 15));
    r.at(US);
    r.write(RESETS + CLR, early);
    assert_eq!(r.read(RESET_DONE) & early, early);
    // xosc_init at t1: FREQ_RANGE 1_15MHZ, STARTUP 47, ENABLE set
    let t1 = 2 * US;
    r.at(t1);
    r.write(XOSC, 0xaa0);
    r.write(XOSC + 0xc, 47);
    r.write(XOSC + SET, 0xfab << 12);
    assert_eq!(r.read(XOSC), 0x00fa_baa0);
    // STABLE after 47 x 256 = 12032 cycles of 12 MHz: 1_002_666_667 ps
    let stable = t1 + 1_002_666_667;
    r.sets_at(XOSC_STATUS, STABLE, stable);
    // sys and ref away from their aux sources: clk_sys's SRC cleared
    // (the mux is already on clk_ref: SELECTED 1 at once), clk_ref on ROSC
    r.write(SYS_CTRL + CLR, 1);
    assert_eq!(r.read(SYS_SELECTED), 1);
    r.write(REF_CTRL + CLR, 3);
    assert_eq!(r.read(REF_SELECTED), 1);
    // pll_init(pll_sys, 1, 1500 MHz, 5, 2) at t2
    let t2 = stable + US;
    r.at(t2);
    r.write(RESETS + SET, 1 << 14);
    r.write(RESETS + CLR, 1 << 14);
    r.write(PLL_SYS, 1);
    r.write(PLL_SYS + 8, 125);
    r.write(PLL_SYS + 4 + CLR, PLL_PD | PLL_VCOPD);
    r.sets_at(PLL_SYS, PLL_LOCK, t2 + PLL_LOCK_PS);
    r.write(PLL_SYS + 0xc, (5 << 16) | (2 << 12));
    r.write(PLL_SYS + 4 + CLR, PLL_POSTDIVPD);
    assert_eq!(r.hz("pll_sys"), Some(150_000_000));
    // clk_ref to the XOSC at t3: 2 ROSC cycles (2 / 11 MHz = 181_818.2
    // ps, up: 181_819) and 2 XOSC cycles (166_667)
    let t3 = t2 + PLL_LOCK_PS + US;
    r.at(t3);
    r.write(REF_CTRL + XOR, 2);
    let ref_switch = t3 + 181_819 + 166_667;
    r.sets_at(REF_SELECTED, 1 << 2, ref_switch);
    assert_eq!(r.tree.core_hz(), 12_000_000, "clk_sys runs from clk_ref");
    // clk_sys to PLL_SYS at t4: 2 clk_ref cycles (166_667 ps) and 2
    // PLL_SYS cycles (2 / 150 MHz = 13_333.3 ps, up: 13_334)
    let t4 = ref_switch + US;
    r.at(t4);
    r.write(SYS_CTRL + XOR, 2 << 5); // AUXSRC 2 (ROSC) -> 0 (PLL_SYS)
    r.write(SYS_CTRL + XOR, 1);
    let sys_switch = t4 + 166_667 + 13_334;
    r.sets_at(SYS_SELECTED, 1 << 1, sys_switch);
    assert_eq!(r.tree.core_hz(), 150_000_000);
    assert_eq!(
        r.changes,
        [(ref_switch, 12_000_000), (sys_switch, 150_000_000)]
    );
    // clk_peri from clk_sys, enabled: ENABLED (bit 28) reads set
    r.write(PERI_CTRL, ENABLE);
    assert_eq!(r.read(PERI_CTRL), ENABLE | ENABLED);
    assert_eq!(r.hz("clk_peri"), Some(150_000_000));
    // UART0 out of reset: RESET_DONE with clk_peri running
    r.write(RESETS + CLR, 1 << 26);
    assert_ne!(r.read(RESET_DONE) & (1 << 26), 0);
    // start_all_ticks: CYCLES = 12 MHz / 1 MHz = 12, then ENABLE
    for t in 0..6 {
        r.write(TICKS + 12 * t + 4, 12);
        r.write(TICKS + 12 * t, 1);
    }
    assert_eq!(r.hz("tick_riscv"), Some(1_000_000));
    assert_eq!(r.read(TICKS + 0x3c), 3, "ENABLE and RUNNING");
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn a_pico_sdk_start_is_where_the_runtime_leaves_the_tree() {
    let mut r = Run::new(ClockStart::PicoSdk);
    assert_eq!(r.tree.core_hz(), 150_000_000);
    assert_eq!(
        r.tree.core_source(),
        "PLL_SYS (XOSC 12 MHz / 1 x 125 / 5 / 2)"
    );
    assert_eq!(r.hz("clk_ref"), Some(12_000_000));
    assert_eq!(r.hz("clk_peri"), Some(150_000_000));
    assert_eq!(r.hz("clk_usb"), Some(48_000_000));
    assert_eq!(r.hz("tick_proc0"), Some(1_000_000));
    assert_eq!(r.read(RESET_DONE), 0x1fff_ffff);
    assert_eq!(r.read(SYS_SELECTED), 2);
    assert_eq!(r.read(REF_SELECTED), 4);
    assert_ne!(r.read(PLL_SYS) & PLL_LOCK, 0);
    assert_ne!(r.read(XOSC_STATUS) & STABLE, 0);
}

#[test]
fn dividers_are_16_16_and_as_wide_as_their_int_field() {
    let mut r = Run::new(ClockStart::PicoSdk);
    // clk_sys / 2.5: INT 2, FRAC 0x8000 -> 150 MHz / 2.5 = 60 MHz, at once
    r.write(SYS_DIV, (2 << 16) | 0x8000);
    assert_eq!(r.tree.core_hz(), 60_000_000);
    assert_eq!(
        r.tree.core_source(),
        "PLL_SYS (XOSC 12 MHz / 1 x 125 / 5 / 2) / 2 32768/65536"
    );
    // INT 0 is 2^16 on clk_sys
    r.write(SYS_DIV, 0);
    assert_eq!(r.tree.core_hz(), 150_000_000 / 65_536);
    r.write(SYS_DIV, 1 << 16);
    // clk_peri's DIV has INT only, 2 bits: 3, and 0 -> 4; FRAC is dropped
    r.write(PERI_DIV, (3 << 16) | 0xffff);
    assert_eq!(r.read(PERI_DIV), 3 << 16);
    assert_eq!(r.hz("clk_peri"), Some(50_000_000));
    r.write(PERI_DIV, 0);
    assert_eq!(r.hz("clk_peri"), Some(37_500_000));
    // clk_ref's INT has 8 bits: / 4 -> 3 MHz, and the ticks follow it
    r.write(REF_DIV, 4 << 16);
    assert_eq!(r.hz("clk_ref"), Some(3_000_000));
    assert_eq!(r.hz("tick_riscv"), Some(250_000));
}

#[test]
fn a_tick_counts_down_clk_ref_cycles_and_warns_of_cycles_changed_while_running() {
    let mut r = Run::new(ClockStart::PicoSdk);
    // RISCV: enabled since 0 at 12 cycles of 12 MHz; at 1.5 us, 18
    // cycles have passed: COUNT = 12 - 18 % 12 = 6
    assert_eq!(r.read_at(TICKS + 0x44, 1_500_000), 6);
    r.write(TICKS + 0x40, 24);
    assert!(
        r.warnings[0].contains("TICKS_RISCV_CYCLES written while the tick generator runs"),
        "{:?}",
        r.warnings
    );
    assert_eq!(r.hz("tick_riscv"), Some(500_000));
    r.write(TICKS + 0x3c, 0);
    assert_eq!(r.hz("tick_riscv"), None);
    assert_eq!(r.read(TICKS + 0x3c), 0);
    // past RISCV_COUNT (0x44) is no register of TICKS
    let e = r.try_read(TICKS + 0x48).unwrap_err();
    assert!(e.0.contains("TICKS offset 0x048 (0x40108048)"), "{e:?}");
}

#[test]
fn a_pll_out_of_range_and_clk_sys_over_its_rating_are_warned_of() {
    let mut r = Run::new(ClockStart::PicoSdk);
    // clk_sys to clk_ref, PLL_SYS set again to FBDIV 10 (VCO 120 MHz)
    r.write(SYS_CTRL + CLR, 1);
    r.at(US);
    r.write(PLL_SYS + 4 + SET, PLL_PD | PLL_VCOPD);
    r.write(PLL_SYS + 8, 10);
    r.write(PLL_SYS + 4 + CLR, PLL_PD | PLL_VCOPD);
    assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
    assert!(r.warnings[0].contains(
        "PLL_SYS powered with FBDIV_INT = 10: pll.h and RP2350 datasheet 8.6 allow 16 to 320"
    ));
    assert!(r.warnings[1].contains("VCO of 120 MHz"));
    // 12 x 100 = 1200 MHz / 4 / 1 = 300 MHz: in range for the PLL, over
    // clk_sys's rating once clk_sys is switched to it
    r.warnings.clear();
    r.write(PLL_SYS + 4 + SET, PLL_PD | PLL_VCOPD);
    r.write(PLL_SYS + 8, 100);
    r.write(PLL_SYS + 0xc, (4 << 16) | (1 << 12));
    r.write(PLL_SYS + 4 + CLR, PLL_PD | PLL_VCOPD);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    r.at(US + PLL_LOCK_PS);
    r.write(SYS_CTRL + SET, 1);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(r.warnings[0].contains("clk_sys set to 300 MHz: above the RP2350's rated 150 MHz"));
    // a POSTDIV of 0 is named
    r.write(PLL_USB + 0xc, 0);
    assert!(r.warnings[1].contains("PLL_USB_PRIM POSTDIV1 = 0, POSTDIV2 = 0"));
}

#[test]
fn an_invalid_xosc_code_keeps_the_previous_value_and_sets_badwrite() {
    let mut r = Run::new(ClockStart::Reset);
    r.write(XOSC, (0xfab << 12) | 0xaa0);
    r.write(XOSC, (0x123 << 12) | 0xaa7);
    assert_eq!(r.read(XOSC), (0xfab << 12) | 0xaa0, "both fields kept");
    assert_ne!(r.read(XOSC_STATUS) & (1 << 24), 0, "BADWRITE");
    assert_ne!(r.read(XOSC_STATUS) & (1 << 12), 0, "ENABLED");
    r.write(XOSC_STATUS, 1 << 24);
    assert_eq!(r.read(XOSC_STATUS) & (1 << 24), 0);
    // 12 MHz is outside the 40-100 MHz range: a warning once re-enabled
    r.write(XOSC, (0xd1e << 12) | 0xaa3);
    r.write(XOSC, (0xfab << 12) | 0xaa3);
    assert!(
        r.warnings[0].contains("FREQ_RANGE 0xaa3 (40 MHz to 100 MHz, xosc.h)"),
        "{:?}",
        r.warnings
    );
}

#[test]
fn what_the_model_does_not_follow_is_refused_by_name() {
    let mut r = Run::new(ClockStart::PicoSdk);
    let e = r.try_write(REF_CTRL, 3).unwrap_err();
    assert!(e.0.contains("CLOCKS_CLK_REF_CTRL.SRC"), "{e:?}");
    assert!(e.0.contains("selects LPOSC"), "{e:?}");
    let e = r.try_read(CLOCKS + 0xa8).unwrap_err();
    assert!(e.0.contains("CLOCKS_FC0_RESULT (0x400100a8)"), "{e:?}");
    let e = r.try_write(XOSC + 8, 0x636f_6d61).unwrap_err();
    assert!(e.0.contains("XOSC_DORMANT"), "{e:?}");
    let e = r.try_read(RESETS + 0xc).unwrap_err();
    assert!(
        e.0.contains("RESETS offset 0x00c (0x4002000c) is a register of RESETS"),
        "{e:?}"
    );
    // clk_sys's aux mux to GPIN0 is refused; the tree is unchanged
    let e = r.try_write(SYS_CTRL, (4 << 5) | 1).unwrap_err();
    assert!(e.0.contains("selects GPIN0"), "{e:?}");
    assert_eq!(r.tree.core_hz(), 150_000_000);
    // stopping clk_ref's source (the XOSC disabled) is refused
    let e = r.try_write(XOSC, (0xd1e << 12) | 0xaa0).unwrap_err();
    assert!(e.0.contains("clk_ref would stop"), "{e:?}");
    // the PLL's interrupt registers: INTE held, INTF refused
    r.write(PLL_SYS + 0x14, 1);
    assert_eq!(r.read(PLL_SYS + 0x14), 1);
    assert!(r.try_write(PLL_SYS + 0x18, 1).is_err());
}

#[test]
fn changing_an_aux_mux_in_use_warns_and_a_switch_to_a_stopped_source_waits() {
    let mut r = Run::new(ClockStart::Reset);
    // clk_usb enabled on PLL_USB (not running) then its aux changed
    r.write(USB_CTRL, ENABLE);
    r.write(USB_CTRL, ENABLE | (1 << 5));
    assert!(r.warnings[0].contains("CLK_USB_CTRL.AUXSRC changed while its aux mux drives"));
    // clk_ref to the XOSC before it is enabled: it waits, then switches
    // 2 ROSC cycles + 2 XOSC cycles after the XOSC is stable
    r.write(REF_CTRL, 2);
    assert!(
        r.warnings[1].contains("which is not running"),
        "{:?}",
        r.warnings
    );
    r.at(US);
    r.write(XOSC + 0xc, 47);
    r.write(XOSC, (0xfab << 12) | 0xaa0);
    let stable = US + 1_002_666_667;
    r.sets_at(REF_SELECTED, 1 << 2, stable.max(181_819) + 166_667);
}
