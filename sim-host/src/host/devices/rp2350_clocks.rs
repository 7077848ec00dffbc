//! The clock tree of a Raspberry Pi RP2350 (RP2350 Datasheet, Raspberry
//! Pi Ltd: 7 "Resets", 8.1 "Overview" of the clocks, 8.2 "Crystal
//! oscillator (XOSC)", 8.3 "Ring oscillator (ROSC)", 8.5 "Tick
//! generators", 8.6 "PLL"; register offsets, fields and reset values from
//! pico-sdk's src/rp2350/hardware_regs/include/hardware/regs/{resets,
//! clocks,xosc,pll,ticks}.h): RESETS, XOSC, PLL_SYS, PLL_USB, CLOCKS and
//! TICKS. The core clock is clk_sys.
//!
//! How it differs from the RP2040's (`rp2040_clocks`): the dividers are
//! 16.16 (INT in DIV 31:16, FRAC in 15:0, each generator with its own
//! INT width), clk_hstx is a generator and clk_rtc is not, clk_ref's
//! glitchless mux has a fourth input (LPOSC), the tick generators are a
//! block of their own (TICKS: PROC0, PROC1, TIMER0, TIMER1, WATCHDOG,
//! RISCV), an invalid XOSC ENABLE code keeps the previous value, the
//! crystal has four frequency ranges, and the ROSC runs at a nominal 11
//! MHz. The PLLs, the atomic aliases and the crystal's start-up delay are
//! the same and shared (`rp2_common`).
//!
//! At reset clk_ref and clk_sys run from the ring oscillator at its
//! nominal 11 MHz (8.3.1, "During boot, the ROSC runs at a nominal
//! 11MHz"; the ROSC block itself is not answered), the crystal and the
//! PLLs are off and every block is held in reset (RESETS.RESET
//! 0x1fffffff). clk_sys's mux is on clk_ref at reset (SELECTED resets to
//! 0x1; Table 540: clk_sys "runs from clk_ref at power-up") although
//! CTRL.SRC reads 1 (CLK_SYS_CTRL reset 0x41): a write of SRC = 1 switches
//! it to the aux mux. A target may instead start the tree where pico-sdk's
//! runtime leaves it before `main` (`ClockStart::PicoSdk`).
//!
//! Rules (each cited where it is carried out):
//! - every block answers at its base and through the atomic aliases at
//!   +0x1000 (XOR), +0x2000 (SET) and +0x3000 (CLEAR) (2.1.3); a read of
//!   an alias reads the register (the model's assumption); a narrow write
//!   is replicated across the word (2.1.5);
//! - the crystal is stable STARTUP.DELAY x 256 (x 4 with X4) of its
//!   cycles after it is enabled (xosc.h); an ENABLE code other than
//!   ENABLE or DISABLE, or a FREQ_RANGE code not in xosc.h's list, keeps
//!   the previous value and sets STATUS.BADWRITE (xosc.h CTRL: "An
//!   invalid setting will retain the previous value");
//! - a PLL locks [`PLL_LOCK_PS`](super::rp2_common::PLL_LOCK_PS) after it
//!   is powered once the crystal is stable (the model's assumption, as on
//!   the RP2040); its output is XOSC / REFDIV x FBDIV / (POSTDIV1 x
//!   POSTDIV2) (8.6); settings outside pll.h's ranges are warnings;
//! - the glitchless muxes of clk_ref and clk_sys switch 2 cycles of the
//!   old source plus 2 cycles of the new one after SRC is written, or
//!   that long after the new source starts (8.1.2.2: "Clock generators
//!   require two cycles of the source clock to stop the output and two
//!   cycles of the new source to restart the output"); SELECTED shows the
//!   old source until then;
//! - changing an aux mux whose output is in use glitches (8.1.2.2): a
//!   warning; ENABLE and KILL act at once, CTRL.ENABLED follows ENABLE
//!   (the model's assumption: the 2 cycles to stop are not counted);
//! - clk_ref and clk_sys "must run continuously unless the chip is in
//!   DORMANT mode" (8.1.2.2): a write that would stop them is refused;
//! - clk_sys above 150 MHz (Table 540's clk_sys; pico-sdk platform_defs.h
//!   SYS_CLK_HZ 150 MHz) is a warning at the write that raises it;
//! - a block's RESET_DONE sets as soon as its RESET bit is clear (the
//!   model's assumption), except that the blocks pico-sdk keeps in reset
//!   until their clocks run (runtime_init.c runtime_init_early_resets on
//!   RP2350: HSTX, ADC, SPI0/1, UART0/1, USBCTRL) also need their clock;
//! - each tick generator of TICKS runs at clk_ref / CYCLES once enabled
//!   (8.5: "For a 12 MHz reference clock, set the cycle count to 12 to
//!   generate a 1 μs tick"); CYCLES written while it runs is a warning
//!   (8.5: "Before changing the cycle count, always stop the tick
//!   generator"). Exposed as the clocks "tick_proc0" ... "tick_riscv".
//!
//! Registers a firmware may use that the model does not follow (the
//! frequency counter, the DFT clock inputs, dormant mode, a forced resus,
//! LPOSC and the GPIN inputs as a source) are refused by name.
//!
//! The engine calls [`ClockTree::settle`] before each access: a switch
//! that became due is made there. A write can also change the core clock
//! at once (CLK_SYS_DIV, clk_sys's aux mux, its PLL's dividers): the
//! engine compares `core_hz` after each write.

#[cfg(test)]
mod tests;

use super::device::{ClockTree, ClockView, Device, Effects, Now, Refusal};
use super::registers::{masked as reg, RegisterFile, RegisterSpec};
use super::rp2_common::{
    cycles_ps, replicate, xosc_stable_at, Alias, Pll, PICOS_PER_SECOND, PLL_BYPASS, PLL_LOCK,
    PLL_POSTDIVPD,
};
use crate::model::clocks::format_hz;
use crate::model::devices::{ClockStart, Rp2Blocks, RP2350_MAX_SYS_HZ, RP2350_ROSC_HZ, RP2_BLOCK};
use std::ops::Range;

/// The blocks of the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    Resets,
    Clocks,
    Xosc,
    PllSys,
    PllUsb,
    Ticks,
}

impl Block {
    const ALL: [Block; 6] = [
        Block::Resets,
        Block::Clocks,
        Block::Xosc,
        Block::PllSys,
        Block::PllUsb,
        Block::Ticks,
    ];

    fn name(self) -> &'static str {
        match self {
            Block::Resets => "RESETS",
            Block::Clocks => "CLOCKS",
            Block::Xosc => "XOSC",
            Block::PllSys => "PLL_SYS",
            Block::PllUsb => "PLL_USB",
            Block::Ticks => "TICKS",
        }
    }
}

// ---- sources and clock generators (8.1) --------------------------------

/// A clock a generator can run from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Src {
    Rosc,
    Xosc,
    PllSys,
    PllUsb,
    /// Another generator's output.
    Gen(usize),
    /// The generator's own aux mux (a glitchless mux's input).
    Aux,
    /// An input the model does not run (GPIN0/1, LPOSC, the test clocks).
    Other(&'static str),
}

const REF: usize = 4;
const SYS: usize = 5;
const PERI: usize = 6;
const HSTX: usize = 7;
const USB: usize = 8;
const ADC: usize = 9;

/// A clock generator's registers (clocks.h: CTRL at 12 x index, DIV at
/// +4, SELECTED at +8).
struct GenSpec {
    name: &'static str,
    /// The CTRL bits software writes (clocks.h CLK_x_CTRL_BITS without
    /// the read-only ENABLED, bit 28).
    ctrl_bits: u32,
    /// CTRL.ENABLED exists (bit 28, "clock generator is enabled").
    has_enabled: bool,
    /// The DIV bits that exist (clocks.h CLK_x_DIV_BITS).
    div_bits: u32,
    /// CTRL.SRC's bits (0: no glitchless mux).
    src_bits: u32,
    src: &'static [Src],
    /// CTRL.AUXSRC's bits (shifted by 5 in every generator).
    aux_bits: u32,
    aux: &'static [Src],
}

const ENABLE: u32 = 1 << 11;
const KILL: u32 = 1 << 10;
const ENABLED: u32 = 1 << 28;
const AUX_SHIFT: u32 = 5;
const GPIN0: Src = Src::Other("GPIN0");
const GPIN1: Src = Src::Other("GPIN1");
const LPOSC: Src = Src::Other("LPOSC");
const OPCG: Src = Src::Other("PLL_USB_PRIMARY_REF_OPCG");

const GPOUT_AUX: &[Src] = &[
    Src::PllSys,
    GPIN0,
    GPIN1,
    Src::PllUsb,
    OPCG,
    Src::Rosc,
    Src::Xosc,
    LPOSC,
    Src::Gen(SYS),
    Src::Gen(USB),
    Src::Gen(ADC),
    Src::Gen(REF),
    Src::Gen(PERI),
    Src::Gen(HSTX),
    Src::Other("OTP_CLK2FC"),
];
const SLOW_AUX: &[Src] = &[Src::PllUsb, Src::PllSys, Src::Rosc, Src::Xosc, GPIN0, GPIN1];

const fn gpout(name: &'static str) -> GenSpec {
    GenSpec {
        name,
        ctrl_bits: 0x0013_1de0,
        has_enabled: true,
        div_bits: u32::MAX,
        src_bits: 0,
        src: &[],
        aux_bits: 0x1e0,
        aux: GPOUT_AUX,
    }
}

const fn peripheral(name: &'static str, div_bits: u32, aux: &'static [Src]) -> GenSpec {
    GenSpec {
        name,
        ctrl_bits: 0x0013_0ce0,
        has_enabled: true,
        div_bits,
        src_bits: 0,
        src: &[],
        aux_bits: 0xe0,
        aux,
    }
}

/// The RP2350's generators (clocks.h, the CTRL AUXSRC and SRC field
/// descriptions, the DIV and CTRL BITS).
const GENS: [GenSpec; 10] = [
    gpout("CLK_GPOUT0"),
    gpout("CLK_GPOUT1"),
    gpout("CLK_GPOUT2"),
    gpout("CLK_GPOUT3"),
    GenSpec {
        name: "CLK_REF",
        ctrl_bits: 0x63,
        has_enabled: false,
        div_bits: 0x00ff_0000,
        src_bits: 0x3,
        src: &[Src::Rosc, Src::Aux, Src::Xosc, LPOSC],
        aux_bits: 0x60,
        aux: &[Src::PllUsb, GPIN0, GPIN1, OPCG],
    },
    GenSpec {
        name: "CLK_SYS",
        ctrl_bits: 0xe1,
        has_enabled: false,
        div_bits: u32::MAX,
        src_bits: 0x1,
        src: &[Src::Gen(REF), Src::Aux],
        aux_bits: 0xe0,
        aux: &[Src::PllSys, Src::PllUsb, Src::Rosc, Src::Xosc, GPIN0, GPIN1],
    },
    GenSpec {
        // no phase or DC50 bits (CLK_PERI_CTRL_BITS 0x10000ce0)
        ctrl_bits: 0xce0,
        ..peripheral(
            "CLK_PERI",
            0x0003_0000,
            &[
                Src::Gen(SYS),
                Src::PllSys,
                Src::PllUsb,
                Src::Rosc,
                Src::Xosc,
                GPIN0,
                GPIN1,
            ],
        )
    },
    peripheral(
        "CLK_HSTX",
        0x0003_0000,
        &[Src::Gen(SYS), Src::PllSys, Src::PllUsb, GPIN0, GPIN1],
    ),
    peripheral("CLK_USB", 0x000f_0000, SLOW_AUX),
    peripheral("CLK_ADC", 0x000f_0000, SLOW_AUX),
];

/// The clock names `ClockView::clock_hz` answers for the generators.
const GEN_CLOCKS: [&str; 10] = [
    "clk_gpout0",
    "clk_gpout1",
    "clk_gpout2",
    "clk_gpout3",
    "clk_ref",
    "clk_sys",
    "clk_peri",
    "clk_hstx",
    "clk_usb",
    "clk_adc",
];

/// CLOCKS offsets past the generators.
const GENS_END: u32 = 0x78;

/// A glitchless switch asked for and not yet made.
#[derive(Debug, Clone, Copy)]
struct Switch {
    to: u32,
    asked_at: u128,
    /// The old source's frequency (its 2 cycles to stop).
    old_hz: u64,
}

#[derive(Debug, Clone)]
struct Gen {
    ctrl: u32,
    div: u32,
    /// The SRC the glitchless mux has switched to.
    selected: u32,
    pending: Option<Switch>,
}

/// A generator's divider: INT in DIV 31:16 (as wide as the generator's
/// DIV_INT field; "0 -> max+1", clocks.h), FRAC in 15:0 (where it exists):
/// the input over INT + FRAC / 65536 (8.1.2.3).
fn divide(hz: u64, div: u32, div_bits: u32) -> u64 {
    let int_max = u128::from(div_bits >> 16);
    let int = match u128::from(div >> 16) & int_max {
        0 => int_max + 1,
        n => n,
    };
    let raw = (int << 16) + u128::from(div & div_bits & 0xffff);
    (u128::from(hz) * 65_536 / raw) as u64
}

// ---- XOSC (8.2) -------------------------------------------------------

const XOSC_ENABLE: u32 = 0xfab;
const XOSC_DISABLE: u32 = 0xd1e;
const XOSC_RANGE_CODE: u32 = 0xaa0;
const XOSC_BADWRITE: u32 = 1 << 24;
/// xosc.h CTRL.FREQ_RANGE: 0xaa0 1_15MHZ, 0xaa1 10_30MHZ, 0xaa2
/// 25_60MHZ, 0xaa3 40_100MHZ.
const XOSC_RANGES: [(u64, u64); 4] = [
    (1_000_000, 15_000_000),
    (10_000_000, 30_000_000),
    (25_000_000, 60_000_000),
    (40_000_000, 100_000_000),
];

#[derive(Debug, Clone)]
struct Xosc {
    /// ENABLE and FREQ_RANGE as last validly written (0 at reset:
    /// xosc.h gives no reset value).
    ctrl: u32,
    startup: u32,
    enabled_at: Option<u128>,
    /// Stable before the run began (`ClockStart::PicoSdk`).
    settled: bool,
    badwrite: bool,
    count: u32,
    count_at: u128,
}

// ---- RESETS (7) ---------------------------------------------------------

/// RESETS.RESET's bits (resets.h), bit 0 first.
const RESET_NAMES: [&str; 29] = [
    "ADC",
    "BUSCTRL",
    "DMA",
    "HSTX",
    "I2C0",
    "I2C1",
    "IO_BANK0",
    "IO_QSPI",
    "JTAG",
    "PADS_BANK0",
    "PADS_QSPI",
    "PIO0",
    "PIO1",
    "PIO2",
    "PLL_SYS",
    "PLL_USB",
    "PWM",
    "SHA256",
    "SPI0",
    "SPI1",
    "SYSCFG",
    "SYSINFO",
    "TBMAN",
    "TIMER0",
    "TIMER1",
    "TRNG",
    "UART0",
    "UART1",
    "USBCTRL",
];
const RESET_ALL: u32 = 0x1fff_ffff;
const RESET_PLLS: [u32; 2] = [14, 15];

/// The blocks whose reset completes only with their clock running, and
/// that clock (runtime_init.c runtime_init_early_resets keeps exactly
/// these in reset on RP2350 until the clocks are configured).
const RESET_CLOCKS: [(u32, usize); 7] = [
    (0, ADC),
    (3, HSTX),
    (18, PERI),
    (19, PERI),
    (26, PERI),
    (27, PERI),
    (28, USB),
];

// ---- TICKS (8.5) --------------------------------------------------------

/// ticks.h: the generators, 12 bytes apart (CTRL, CYCLES, COUNT).
const TICK_NAMES: [&str; 6] = ["PROC0", "PROC1", "TIMER0", "TIMER1", "WATCHDOG", "RISCV"];
const TICK_CLOCKS: [&str; 6] = [
    "tick_proc0",
    "tick_proc1",
    "tick_timer0",
    "tick_timer1",
    "tick_watchdog",
    "tick_riscv",
];

#[derive(Debug, Clone, Copy, Default)]
struct Tick {
    enabled: bool,
    cycles: u32,
    /// When it was last enabled or its CYCLES written.
    since: u128,
}

// ---- the tree ---------------------------------------------------------

/// RESETS, XOSC, PLL_SYS, PLL_USB, CLOCKS and TICKS of an RP2350 (see the
/// module's documentation).
#[derive(Debug, Clone)]
pub struct Rp2350Clocks {
    p: Rp2Blocks,
    ticks_base: u64,
    /// The latest time an access or `settle` was at.
    now: u128,
    reset: u32,
    wdsel: u32,
    xosc: Xosc,
    /// PLL_SYS, PLL_USB.
    plls: [Pll; 2],
    /// PLL_SYS's and PLL_USB's INTE and INTF (LOCK_N_STICKY), held.
    pll_ints: [RegisterFile; 2],
    gens: Vec<Gen>,
    clocks_plain: RegisterFile,
    ticks: [Tick; 6],
}

const RESUS_CTRL: u32 = 0x84;

impl Rp2350Clocks {
    /// The tree at reset, or as pico-sdk's runtime leaves it; `ticks` is
    /// TICKS' base.
    pub fn new(p: Rp2Blocks, ticks: u64) -> Rp2350Clocks {
        let mut gens: Vec<Gen> = GENS
            .iter()
            .map(|_| Gen {
                ctrl: 0,
                div: 0x1_0000,
                selected: 0,
                pending: None,
            })
            .collect();
        gens[SYS].ctrl = 0x41;
        let mut tree = Rp2350Clocks {
            p,
            ticks_base: ticks,
            now: 0,
            reset: RESET_ALL,
            wdsel: 0,
            xosc: Xosc {
                ctrl: 0,
                startup: 0,
                enabled_at: None,
                settled: false,
                badwrite: false,
                count: 0,
                count_at: 0,
            },
            plls: [Pll::at_reset(), Pll::at_reset()],
            pll_ints: [
                RegisterFile::new("PLL_SYS", p.pll_sys, PLL_PLAIN),
                RegisterFile::new("PLL_USB", p.pll_usb, PLL_PLAIN),
            ],
            gens,
            clocks_plain: RegisterFile::new("CLOCKS", p.clocks, CLOCKS_PLAIN),
            ticks: [Tick::default(); 6],
        };
        if p.start == ClockStart::PicoSdk {
            tree.start_as_pico_sdk();
        }
        tree
    }

    /// The state pico-sdk's runtime leaves before `main` (pico-sdk
    /// src/rp2_common/pico_runtime_init/runtime_init_clocks.c
    /// runtime_init_clocks, hardware_xosc/xosc.c, hardware_pll/pll.c and
    /// runtime_init.c's resets), for the 12 MHz crystal (XOSC_HZ):
    /// - XOSC enabled (1_15MHZ), STARTUP.DELAY ((12000 + 128) / 256) = 47;
    /// - PLL_SYS REFDIV 1, FBDIV 125 (1500 MHz), POSTDIV 5 and 2 (150 MHz:
    ///   hardware_clocks/include/hardware/clocks.h on RP2350); PLL_USB
    ///   REFDIV 1, FBDIV 100 (1200 MHz), POSTDIV 5 and 5 (48 MHz);
    /// - clk_ref from the XOSC, clk_sys from PLL_SYS's aux, clk_usb and
    ///   clk_adc from PLL_USB, clk_peri and clk_hstx from clk_sys, each
    ///   enabled, dividers 1;
    /// - the resus off, every tick generator at clk_ref / 12 (1 MHz:
    ///   start_all_ticks);
    /// - every block out of reset (runtime_init_post_clock_resets).
    fn start_as_pico_sdk(&mut self) {
        self.reset = 0;
        self.xosc.ctrl = (XOSC_ENABLE << 12) | XOSC_RANGE_CODE;
        self.xosc.startup = 47;
        self.xosc.enabled_at = Some(0);
        self.xosc.settled = true;
        self.plls = [Pll::started(125, (5, 2)), Pll::started(100, (5, 5))];
        self.gens[REF].ctrl = 2;
        self.gens[REF].selected = 2;
        self.gens[SYS].ctrl = 1;
        self.gens[SYS].selected = 1;
        for g in [PERI, HSTX, USB, ADC] {
            self.gens[g].ctrl = ENABLE;
        }
        self.clocks_plain.set(RESUS_CTRL, 0);
        self.ticks = [Tick {
            enabled: true,
            cycles: 12,
            since: 0,
        }; 6];
    }

    fn base(&self, block: Block) -> u64 {
        match block {
            Block::Resets => self.p.resets,
            Block::Clocks => self.p.clocks,
            Block::Xosc => self.p.xosc,
            Block::PllSys => self.p.pll_sys,
            Block::PllUsb => self.p.pll_usb,
            Block::Ticks => self.ticks_base,
        }
    }

    /// The block, register offset and alias an address reaches.
    fn locate(&self, addr: u64) -> Option<(Block, u32, Alias)> {
        let block = Block::ALL
            .into_iter()
            .find(|b| (self.base(*b)..self.base(*b) + RP2_BLOCK).contains(&addr))?;
        let within = addr - self.base(block);
        Some((block, (within & 0xffc) as u32, Alias::of(within >> 12)))
    }

    // ---- sources --------------------------------------------------------

    fn xosc_stable_at(&self) -> Option<u128> {
        if self.p.xosc_hz == 0 {
            return None;
        }
        let on = self.xosc.enabled_at?;
        if self.xosc.settled {
            return Some(on);
        }
        Some(xosc_stable_at(on, self.xosc.startup, self.p.xosc_hz))
    }

    fn pll_in_reset(&self, i: usize) -> bool {
        self.reset & (1 << RESET_PLLS[i]) != 0
    }

    fn pll_lock_at(&self, i: usize) -> Option<u128> {
        if !self.plls[i].powered() || self.pll_in_reset(i) {
            return None;
        }
        self.plls[i].lock_at(self.xosc_stable_at()?)
    }

    /// When the PLL's output runs: locked with its post-dividers powered;
    /// bypassed, when the crystal runs (the model's assumption).
    fn pll_ready_at(&self, i: usize) -> Option<u128> {
        let pll = &self.plls[i];
        if self.pll_in_reset(i) {
            return None;
        }
        if pll.cs & PLL_BYPASS != 0 {
            return self.xosc_stable_at();
        }
        if pll.pwr & PLL_POSTDIVPD != 0 {
            return None;
        }
        Some(self.pll_lock_at(i)?.max(pll.postdiv_on_at?))
    }

    fn pll_out_hz(&self, i: usize) -> u64 {
        self.plls[i].out_hz(self.p.xosc_hz)
    }

    fn src_of(&self, g: usize, src: u32) -> Src {
        match GENS[g].src.get(src as usize) {
            Some(Src::Aux) | None => self.aux_of(g, self.gens[g].ctrl),
            Some(s) => *s,
        }
    }

    fn aux_of(&self, g: usize, ctrl: u32) -> Src {
        let spec = &GENS[g];
        let index = ((ctrl & spec.aux_bits) >> AUX_SHIFT) as usize;
        spec.aux.get(index).copied().unwrap_or(GPIN0)
    }

    fn gen_input(&self, g: usize) -> Src {
        if GENS[g].src_bits == 0 {
            return self.aux_of(g, self.gens[g].ctrl);
        }
        self.src_of(g, self.gens[g].selected)
    }

    fn gen_stopped(&self, g: usize) -> bool {
        let bits = GENS[g].ctrl_bits;
        let ctrl = self.gens[g].ctrl;
        (bits & ENABLE != 0 && ctrl & ENABLE == 0) || ctrl & bits & KILL != 0
    }

    fn src_nominal_hz(&self, s: Src) -> u64 {
        match s {
            Src::Rosc => RP2350_ROSC_HZ,
            Src::Xosc => self.p.xosc_hz,
            Src::PllSys => self.pll_out_hz(0),
            Src::PllUsb => self.pll_out_hz(1),
            Src::Other(_) | Src::Aux => 0,
            Src::Gen(g) => self.gen_nominal_hz(g),
        }
    }

    fn src_ready_at(&self, s: Src) -> Option<u128> {
        match s {
            Src::Rosc => Some(0),
            Src::Xosc => self.xosc_stable_at(),
            Src::PllSys => self.pll_ready_at(0),
            Src::PllUsb => self.pll_ready_at(1),
            Src::Other(_) | Src::Aux => None,
            Src::Gen(g) if self.gen_stopped(g) => None,
            Src::Gen(g) => self.src_ready_at(self.gen_input(g)),
        }
    }

    fn src_hz(&self, s: Src) -> Option<u64> {
        let running = self.src_ready_at(s).is_some_and(|t| t <= self.now);
        running.then(|| self.src_nominal_hz(s))
    }

    fn gen_nominal_hz(&self, g: usize) -> u64 {
        let input = self.src_nominal_hz(self.gen_input(g));
        divide(input, self.gens[g].div, GENS[g].div_bits)
    }

    fn gen_hz(&self, g: usize) -> Option<u64> {
        if self.gen_stopped(g) {
            return None;
        }
        let input = self.src_hz(self.gen_input(g))?;
        Some(divide(input, self.gens[g].div, GENS[g].div_bits))
    }

    fn tick_hz(&self, t: usize) -> Option<u64> {
        let tick = &self.ticks[t];
        if !tick.enabled || tick.cycles == 0 {
            return None;
        }
        Some(self.gen_hz(REF)? / u64::from(tick.cycles))
    }

    fn switch_due(&self, g: usize) -> Option<u128> {
        let sw = self.gens[g].pending?;
        let target = self.src_of(g, sw.to);
        let ready = self.src_ready_at(target)?;
        let stopped = sw.asked_at + cycles_ps(2, sw.old_hz);
        Some(stopped.max(ready) + cycles_ps(2, self.src_nominal_hz(target)))
    }

    /// clk_sys once a pending switch of its mux is made (the clock a
    /// write asks for).
    fn sys_target_hz(&self) -> u64 {
        let Some(sw) = self.gens[SYS].pending else {
            return self.core_hz();
        };
        let input = self.src_nominal_hz(self.src_of(SYS, sw.to));
        divide(input, self.gens[SYS].div, GENS[SYS].div_bits)
    }

    /// Why clk_ref or clk_sys would stop, if one would (8.1.2.2: they
    /// "must run continuously unless the chip is in DORMANT mode").
    fn core_clock_stopped(&self) -> Option<String> {
        [REF, SYS].into_iter().find_map(|g| {
            self.gen_hz(g).is_none_or(|hz| hz == 0).then(|| {
                format!(
                    "{} would stop: its source ({}) would no longer run. RP2350 datasheet \
                     8.1.2.2: clk_ref and clk_sys \"must run continuously unless the chip is \
                     in DORMANT mode\"; a stopped core clock is not modelled",
                    GEN_CLOCKS[g],
                    self.describe(self.gen_input(g))
                )
            })
        })
    }
}

mod access;
mod report;

/// PLL INTR (LOCK_N_STICKY: LOCK never drops in the model, so it reads
/// 0), INTE, INTF (forcing is refused) and INTS (pll.h, 0x10 to 0x1c).
const PLL_PLAIN: &[RegisterSpec] = &[
    reg(0x10, "INTR", 0, 0),
    reg(0x14, "INTE", 0, 1),
    reg(0x1c, "INTS", 0, 0),
];

/// clocks.h: the resus and the sleep/wake enables, held as written (the
/// resus never fires: a stopped clk_sys is refused); RESUS_STATUS, INTR
/// and INTS read 0.
const CLOCKS_PLAIN: &[RegisterSpec] = &[
    reg(RESUS_CTRL, "CLK_SYS_RESUS_CTRL", 0xff, 0x0001_01ff),
    reg(0x88, "CLK_SYS_RESUS_STATUS", 0, 0),
    reg(0xac, "WAKE_EN0", u32::MAX, u32::MAX),
    reg(0xb0, "WAKE_EN1", 0x7fff_ffff, 0x7fff_ffff),
    reg(0xb4, "SLEEP_EN0", u32::MAX, u32::MAX),
    reg(0xb8, "SLEEP_EN1", 0x7fff_ffff, 0x7fff_ffff),
    reg(0xc4, "INTR", 0, 0),
    reg(0xc8, "INTE", 0, 1),
    reg(0xd0, "INTS", 0, 0),
];

fn outside(addr: u64) -> Refusal {
    Refusal(format!(
        "{addr:#010x} is outside the RP2350 clock tree's blocks"
    ))
}

impl ClockView for Rp2350Clocks {
    fn clock_hz(&self, name: &str) -> Option<u64> {
        if let Some(g) = GEN_CLOCKS.iter().position(|c| *c == name) {
            return self.gen_hz(g);
        }
        if let Some(t) = TICK_CLOCKS.iter().position(|c| *c == name) {
            return self.tick_hz(t);
        }
        match name {
            "rosc" => Some(RP2350_ROSC_HZ),
            "xosc" => self.src_hz(Src::Xosc),
            "pll_sys" => self.src_hz(Src::PllSys),
            "pll_usb" => self.src_hz(Src::PllUsb),
            // the watchdog's tick, as the RP2040's tree names it
            "tick" => self.tick_hz(4),
            _ => None,
        }
    }

    fn bit(&self, addr: u64, bit: u8) -> Option<bool> {
        let (block, offset, _) = self.locate(addr)?;
        if bit > 31 {
            return None;
        }
        let value = self.value(block, offset).ok()?;
        Some(value & (1 << bit) != 0)
    }
}

impl ClockTree for Rp2350Clocks {
    fn core_hz(&self) -> u64 {
        self.gen_nominal_hz(SYS)
    }

    fn core_source(&self) -> String {
        format!(
            "{}{}",
            self.describe(self.gen_input(SYS)),
            self.div_text(SYS)
        )
    }

    /// Makes the glitchless switches due by `now` (clk_ref's first, as
    /// clk_sys may run from it): the latest time one was made, whether or
    /// not clk_sys changed (a clk_ref switch moves the ticks).
    fn settle(&mut self, now: Now) -> Option<u128> {
        self.now = self.now.max(now.picos);
        let mut made = None;
        for g in [REF, SYS] {
            let Some(due) = self.switch_due(g).filter(|t| *t <= self.now) else {
                continue;
            };
            if let Some(sw) = self.gens[g].pending.take() {
                self.gens[g].selected = sw.to;
                made = made.max(Some(due));
            }
        }
        made
    }
}

impl Device for Rp2350Clocks {
    fn name(&self) -> &str {
        "CLOCKS"
    }

    fn blocks(&self) -> Vec<Range<u64>> {
        Block::ALL
            .iter()
            .map(|b| self.base(*b)..self.base(*b) + RP2_BLOCK)
            .collect()
    }

    fn read(
        &mut self,
        addr: u64,
        now: Now,
        _clocks: &dyn ClockView,
        _fx: &mut Effects,
    ) -> Result<u32, Refusal> {
        self.now = self.now.max(now.picos);
        let (block, offset, _) = self.locate(addr).ok_or_else(|| outside(addr))?;
        self.value(block, offset)
    }

    fn write(
        &mut self,
        addr: u64,
        value: u32,
        mask: u32,
        now: Now,
        _clocks: &dyn ClockView,
        fx: &mut Effects,
    ) -> Result<(), Refusal> {
        self.now = self.now.max(now.picos);
        let (block, offset, alias) = self.locate(addr).ok_or_else(|| outside(addr))?;
        let mut v = replicate(value, mask);
        if alias != Alias::Normal {
            v = alias.apply(self.value(block, offset)?, v);
        }
        let before = self.clone();
        let hz_before = self.sys_target_hz();
        let result = self.write_register(block, offset, v, fx).and_then(|()| {
            self.core_clock_stopped()
                .map_or(Ok(()), |why| Err(Refusal(why)))
        });
        if result.is_err() {
            *self = before;
            return result;
        }
        let hz = self.sys_target_hz();
        if hz > RP2350_MAX_SYS_HZ && hz != hz_before {
            fx.warnings.push(format!(
                "clk_sys set to {}: above the RP2350's rated {} (RP2350 datasheet Table \
                 540: clk_sys 150MHz; pico-sdk platform_defs.h SYS_CLK_HZ 150000000)",
                format_hz(hz),
                format_hz(RP2350_MAX_SYS_HZ)
            ));
        }
        Ok(())
    }

    fn summary(&self) -> Vec<String> {
        let clock = |g: usize| self.gen_hz(g).map_or("stopped".to_string(), format_hz);
        let tick = |t: usize| self.tick_hz(t).map_or("stopped".to_string(), format_hz);
        vec![
            format!(
                "clk_sys {} from {}",
                format_hz(self.core_hz()),
                self.core_source()
            ),
            format!(
                "clk_ref {}, clk_peri {}, clk_hstx {}, clk_usb {}, clk_adc {}",
                clock(REF),
                clock(PERI),
                clock(HSTX),
                clock(USB),
                clock(ADC)
            ),
            format!(
                "ticks: proc0 {}, proc1 {}, timer0 {}, timer1 {}, watchdog {}, riscv {}",
                tick(0),
                tick(1),
                tick(2),
                tick(3),
                tick(4),
                tick(5)
            ),
        ]
    }
}
