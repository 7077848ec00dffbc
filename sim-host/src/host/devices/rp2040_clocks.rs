//! The clock tree of a Raspberry Pi RP2040 (RP2040 Datasheet, Raspberry
//! Pi Ltd: 2.14 "Subsystem Resets", 2.15 "Clocks", 2.16 "Crystal
//! Oscillator (XOSC)", 2.17 "Ring Oscillator (ROSC)", 2.18 "PLL", 4.7
//! "Watchdog"; register offsets, fields and reset values from pico-sdk's
//! src/rp2040/hardware_regs/include/hardware/regs/{resets,clocks,xosc,
//! pll,watchdog}.h): RESETS, XOSC, PLL_SYS, PLL_USB, CLOCKS and the
//! watchdog's tick. The core clock is clk_sys.
//!
//! At reset clk_ref and clk_sys run from the ring oscillator at its
//! nominal 6.5 MHz (2.17.1; the ROSC block itself is not answered), the
//! crystal and the PLLs are off and every block is held in reset
//! (RESETS.RESET 0x01ffffff). A target may instead start the tree where
//! pico-sdk's runtime leaves it before `main` (`ClockStart::PicoSdk`).
//!
//! Rules (each cited where it is carried out):
//! - every block answers at its base and through the atomic aliases at
//!   +0x1000 (XOR), +0x2000 (SET) and +0x3000 (CLEAR) (2.1.2); a read of
//!   an alias reads the register (the model's assumption); a narrow write
//!   is replicated across the word, which the register samples whole
//!   (2.1.4);
//! - the crystal is stable STARTUP.DELAY x 256 (x 4 with X4) of its
//!   cycles after it is enabled (xosc.h STARTUP.DELAY "in multiples of
//!   256*xtal_period"); an ENABLE code other than DISABLE enables it
//!   (xosc.h CTRL.ENABLE: "An invalid setting will enable the
//!   oscillator"), an invalid code also sets STATUS.BADWRITE;
//! - a PLL locks [`PLL_LOCK_PS`](super::rp2_common::PLL_LOCK_PS) after it is powered (PD and VCOPD clear)
//!   once the crystal is stable; its output runs once locked with its
//!   post-dividers powered: XOSC / REFDIV x FBDIV / (POSTDIV1 x POSTDIV2)
//!   (2.18.2); settings outside pll.h's and 2.18.2's ranges are warnings;
//!   REFDIV or FBDIV rewritten while it runs is a warning, and the model
//!   keeps it locked at the new frequency;
//! - the glitchless muxes of clk_ref and clk_sys switch 2 cycles of the
//!   old source plus 2 cycles of the new one after SRC is written, or,
//!   if the new source is not running, that long after it starts (2.15.3.2
//!   "2 cycles of the source clock to stop the output and 2 cycles of the
//!   new source to restart the output"); SELECTED shows the old source
//!   until then (the datasheet's "may briefly show all-0s" is not
//!   modelled);
//! - changing an aux mux whose output is in use glitches (2.15.3.2): a
//!   warning; a generator's ENABLE and KILL act at once (the model's
//!   assumption: the datasheet's 2 cycles to stop are not counted);
//! - clk_ref and clk_sys "must run continuously" (2.15.3.2): a write that
//!   would stop their source is refused (so the resus never fires);
//! - a block's RESET_DONE sets as soon as its RESET bit is clear (the
//!   model's assumption: no time is given), except that the blocks
//!   pico-sdk keeps in reset until their clocks run (ADC, RTC, SPI0/1,
//!   UART0/1, USBCTRL: runtime_init.c, "Remove reset from peripherals
//!   which are clocked only by clk_sys and clk_ref. Other peripherals stay
//!   in reset until we've configured clocks.") also need their clock
//!   running;
//! - the watchdog's tick runs at clk_ref / TICK.CYCLES once enabled
//!   (4.7), exposed as the clock "tick".
//!
//! Registers a firmware may use that the model does not follow (the
//! frequency counter, dormant mode, a forced resus or watchdog reset) are
//! refused by name.
//!
//! The engine calls [`ClockTree::settle`] before each access (as for the
//! STM32's SWS): a switch that became due is made there, and SELECTED
//! reads what `settle` last made. A write can also change the core clock
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
#[cfg(test)]
use super::rp2_common::{PLL_LOCK_PS, PLL_PD, PLL_VCOPD};
use crate::model::clocks::format_hz;
use crate::model::devices::{ClockStart, Rp2Blocks, RP2040_ROSC_HZ, RP2_BLOCK};
use std::ops::Range;

/// The blocks of the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    Resets,
    Clocks,
    Xosc,
    PllSys,
    PllUsb,
    Watchdog,
}

impl Block {
    const ALL: [Block; 6] = [
        Block::Resets,
        Block::Clocks,
        Block::Xosc,
        Block::PllSys,
        Block::PllUsb,
        Block::Watchdog,
    ];

    fn name(self) -> &'static str {
        match self {
            Block::Resets => "RESETS",
            Block::Clocks => "CLOCKS",
            Block::Xosc => "XOSC",
            Block::PllSys => "PLL_SYS",
            Block::PllUsb => "PLL_USB",
            Block::Watchdog => "WATCHDOG",
        }
    }
}

// ---- sources and clock generators (2.15) ------------------------------

/// A clock a generator can run from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Src {
    Rosc,
    Xosc,
    PllSys,
    PllUsb,
    Gpin0,
    Gpin1,
    /// Another generator's output.
    Gen(usize),
    /// The generator's own aux mux (a glitchless mux's input).
    Aux,
}

const REF: usize = 4;
const SYS: usize = 5;
const PERI: usize = 6;
const USB: usize = 7;
const ADC: usize = 8;
const RTC: usize = 9;

/// A clock generator's registers (clocks.h: CTRL at 12 x index, DIV at
/// +4, SELECTED at +8).
struct GenSpec {
    name: &'static str,
    /// The CTRL bits that exist (clocks.h CLK_x_CTRL_BITS).
    ctrl_bits: u32,
    /// The DIV bits that exist (0: no divider).
    div_bits: u32,
    /// CTRL.SRC's bits (0: no glitchless mux).
    src_bits: u32,
    /// CTRL.SRC's sources, in order.
    src: &'static [Src],
    /// CTRL.AUXSRC's bits (shifted by 5 in every generator).
    aux_bits: u32,
    aux: &'static [Src],
}

const ENABLE: u32 = 1 << 11;
const KILL: u32 = 1 << 10;
const AUX_SHIFT: u32 = 5;

const GPOUT_AUX: &[Src] = &[
    Src::PllSys,
    Src::Gpin0,
    Src::Gpin1,
    Src::PllUsb,
    Src::Rosc,
    Src::Xosc,
    Src::Gen(SYS),
    Src::Gen(USB),
    Src::Gen(ADC),
    Src::Gen(RTC),
    Src::Gen(REF),
];
const SLOW_AUX: &[Src] = &[
    Src::PllUsb,
    Src::PllSys,
    Src::Rosc,
    Src::Xosc,
    Src::Gpin0,
    Src::Gpin1,
];

const fn gpout(name: &'static str) -> GenSpec {
    GenSpec {
        name,
        ctrl_bits: 0x0013_1de0,
        div_bits: u32::MAX,
        src_bits: 0,
        src: &[],
        aux_bits: 0x1e0,
        aux: GPOUT_AUX,
    }
}

const fn slow(name: &'static str, div_bits: u32) -> GenSpec {
    GenSpec {
        name,
        ctrl_bits: 0x0013_0ce0,
        div_bits,
        src_bits: 0,
        src: &[],
        aux_bits: 0xe0,
        aux: SLOW_AUX,
    }
}

/// The RP2040's generators (clocks.h, the CTRL AUXSRC and SRC field
/// descriptions).
const GENS: [GenSpec; 10] = [
    gpout("CLK_GPOUT0"),
    gpout("CLK_GPOUT1"),
    gpout("CLK_GPOUT2"),
    gpout("CLK_GPOUT3"),
    GenSpec {
        name: "CLK_REF",
        ctrl_bits: 0x63,
        div_bits: 0x300,
        src_bits: 0x3,
        src: &[Src::Rosc, Src::Aux, Src::Xosc],
        aux_bits: 0x60,
        aux: &[Src::PllUsb, Src::Gpin0, Src::Gpin1],
    },
    GenSpec {
        name: "CLK_SYS",
        ctrl_bits: 0xe1,
        div_bits: u32::MAX,
        src_bits: 0x1,
        src: &[Src::Gen(REF), Src::Aux],
        aux_bits: 0xe0,
        aux: &[
            Src::PllSys,
            Src::PllUsb,
            Src::Rosc,
            Src::Xosc,
            Src::Gpin0,
            Src::Gpin1,
        ],
    },
    GenSpec {
        name: "CLK_PERI",
        ctrl_bits: 0xce0,
        // no CLK_PERI_DIV in clocks.h: offset 0x4c reads 0 and ignores
        // writes (the model's assumption; pico-sdk's clock_configure
        // writes 1 << 8 there)
        div_bits: 0,
        src_bits: 0,
        src: &[],
        aux_bits: 0xe0,
        aux: &[
            Src::Gen(SYS),
            Src::PllSys,
            Src::PllUsb,
            Src::Rosc,
            Src::Xosc,
            Src::Gpin0,
            Src::Gpin1,
        ],
    },
    slow("CLK_USB", 0x300),
    slow("CLK_ADC", 0x300),
    slow("CLK_RTC", u32::MAX),
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
    "clk_usb",
    "clk_adc",
    "clk_rtc",
];

/// A glitchless switch asked for and not yet made.
#[derive(Debug, Clone, Copy)]
struct Switch {
    /// The SRC value asked for.
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

impl Gen {
    fn at_reset(spec: &GenSpec) -> Gen {
        Gen {
            ctrl: 0,
            div: if spec.div_bits == 0 { 0 } else { 0x100 },
            selected: 0,
            pending: None,
        }
    }
}

/// A generator's divider: INT in DIV 31:8, FRAC in 7:0 (clocks.h: "0 ->
/// divide by 2^16").
fn divide(hz: u64, div: u32, div_bits: u32) -> u64 {
    if div_bits == 0 {
        return hz;
    }
    let int = u128::from(div >> 8);
    let int = if int == 0 { 1 << 16 } else { int };
    let raw = int * 256 + u128::from(div & 0xff);
    (u128::from(hz) * 256 / raw) as u64
}

// ---- XOSC (2.16) and the PLLs (2.18) ----------------------------------

const XOSC_ENABLE: u32 = 0xfab;
const XOSC_DISABLE: u32 = 0xd1e;
const XOSC_1_15MHZ: u32 = 0xaa0;
const XOSC_BADWRITE: u32 = 1 << 24;

#[derive(Debug, Clone)]
struct Xosc {
    ctrl: u32,
    startup: u32,
    /// When it was enabled, if it is.
    enabled_at: Option<u128>,
    /// Stable before the run began (`ClockStart::PicoSdk`).
    settled: bool,
    badwrite: bool,
    count: u32,
    count_at: u128,
}

// ---- RESETS (2.14) ----------------------------------------------------

/// RESETS.RESET's bits (resets.h), bit 0 first.
const RESET_NAMES: [&str; 25] = [
    "ADC",
    "BUSCTRL",
    "DMA",
    "I2C0",
    "I2C1",
    "IO_BANK0",
    "IO_QSPI",
    "JTAG",
    "PADS_BANK0",
    "PADS_QSPI",
    "PIO0",
    "PIO1",
    "PLL_SYS",
    "PLL_USB",
    "PWM",
    "RTC",
    "SPI0",
    "SPI1",
    "SYSCFG",
    "SYSINFO",
    "TBMAN",
    "TIMER",
    "UART0",
    "UART1",
    "USBCTRL",
];
const RESET_ALL: u32 = 0x01ff_ffff;
const RESET_PLL_SYS: u32 = 12;
const RESET_PLL_USB: u32 = 13;

/// The blocks whose reset completes only with their clock running, and
/// that clock (pico-sdk runtime_init.c runtime_init_early_resets keeps
/// exactly these in reset until the clocks are configured).
const RESET_CLOCKS: [(u32, usize); 7] = [
    (0, ADC),
    (15, RTC),
    (16, PERI),
    (17, PERI),
    (22, PERI),
    (23, PERI),
    (24, USB),
];

// ---- the tree ---------------------------------------------------------

/// RESETS, XOSC, PLL_SYS, PLL_USB, CLOCKS and WATCHDOG of an RP2040 (see
/// the module's documentation).
#[derive(Debug, Clone)]
pub struct Rp2040Clocks {
    p: Rp2Blocks,
    /// The latest time an access or `settle` was at.
    now: u128,
    reset: u32,
    wdsel: u32,
    xosc: Xosc,
    /// PLL_SYS, PLL_USB.
    plls: [Pll; 2],
    gens: Vec<Gen>,
    /// CLOCKS' registers held as written.
    clocks_plain: RegisterFile,
    /// WATCHDOG's registers held as written (TICK is the model's own).
    watchdog: RegisterFile,
    tick: u32,
    tick_at: u128,
}

const TICK: u32 = 0x2c;
const TICK_ENABLE: u32 = 1 << 9;
const TICK_RUNNING: u32 = 1 << 10;

impl Rp2040Clocks {
    /// The tree at reset, or as pico-sdk's runtime leaves it.
    pub fn new(p: Rp2Blocks) -> Rp2040Clocks {
        let mut tree = Rp2040Clocks {
            p,
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
            gens: GENS.iter().map(Gen::at_reset).collect(),
            clocks_plain: RegisterFile::new("CLOCKS", p.clocks, CLOCKS_PLAIN),
            watchdog: RegisterFile::new("WATCHDOG", p.watchdog, WATCHDOG_PLAIN),
            tick: 0x200,
            tick_at: 0,
        };
        if p.start == ClockStart::PicoSdk {
            tree.start_as_pico_sdk();
        }
        tree
    }

    /// The state pico-sdk's runtime leaves before `main` (pico-sdk
    /// src/rp2_common/pico_runtime_init/runtime_init_clocks.c
    /// runtime_init_clocks, hardware_xosc/xosc.c, hardware_pll/pll.c, and
    /// runtime_init.c's resets), for the 12 MHz crystal (XOSC_HZ):
    /// - XOSC enabled, STARTUP.DELAY ((12000 + 128) / 256) = 47;
    /// - PLL_SYS REFDIV 1, FBDIV 125 (1500 MHz), POSTDIV 6 and 2;
    ///   PLL_USB REFDIV 1, FBDIV 100 (1200 MHz), POSTDIV 5 and 5 (clocks.h
    ///   defaults); both powered (PWR 0x04: only DSMPD left set);
    /// - clk_ref from the XOSC, clk_sys from PLL_SYS's aux, clk_usb and
    ///   clk_adc from PLL_USB, clk_rtc from PLL_USB / 1024, clk_peri from
    ///   clk_sys, each enabled, dividers 1;
    /// - the resus off, the watchdog's tick at clk_ref / 12 (start_all_ticks);
    /// - every block out of reset (runtime_init_post_clock_resets).
    fn start_as_pico_sdk(&mut self) {
        self.reset = 0;
        self.xosc.ctrl = (XOSC_ENABLE << 12) | XOSC_1_15MHZ;
        self.xosc.startup = 47;
        self.xosc.enabled_at = Some(0);
        self.xosc.settled = true;
        self.plls = [Pll::started(125, (6, 2)), Pll::started(100, (5, 5))];
        self.gens[REF].ctrl = 2;
        self.gens[REF].selected = 2;
        self.gens[SYS].ctrl = 1;
        self.gens[SYS].selected = 1;
        for g in [PERI, USB, ADC, RTC] {
            self.gens[g].ctrl = ENABLE;
        }
        self.gens[RTC].div = 1024 << 8;
        self.clocks_plain.set(RESUS_CTRL, 0);
        self.tick = TICK_ENABLE | 12;
    }

    fn base(&self, block: Block) -> u64 {
        match block {
            Block::Resets => self.p.resets,
            Block::Clocks => self.p.clocks,
            Block::Xosc => self.p.xosc,
            Block::PllSys => self.p.pll_sys,
            Block::PllUsb => self.p.pll_usb,
            Block::Watchdog => self.p.watchdog,
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
        let bit = [RESET_PLL_SYS, RESET_PLL_USB][i];
        self.reset & (1 << bit) != 0
    }

    /// When the PLL's LOCK sets (or set), if it is powered.
    fn pll_lock_at(&self, i: usize) -> Option<u128> {
        if !self.plls[i].powered() || self.pll_in_reset(i) {
            return None;
        }
        self.plls[i].lock_at(self.xosc_stable_at()?)
    }

    /// When the PLL's output runs: locked with its post-dividers powered;
    /// bypassed, when the crystal runs (the model's assumption: BYPASS
    /// passes the XOSC through, REFDIV not applied).
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

    /// What a glitchless generator's SRC value selects.
    fn src_of(&self, g: usize, src: u32) -> Src {
        match GENS[g].src.get(src as usize) {
            Some(Src::Aux) | None => self.aux_of(g, self.gens[g].ctrl),
            Some(s) => *s,
        }
    }

    /// What the aux mux selects with CTRL `ctrl` (a reserved value:
    /// nothing; writes of one are refused).
    fn aux_of(&self, g: usize, ctrl: u32) -> Src {
        let spec = &GENS[g];
        let index = ((ctrl & spec.aux_bits) >> AUX_SHIFT) as usize;
        spec.aux.get(index).copied().unwrap_or(Src::Gpin0)
    }

    /// The source a generator runs from now.
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

    /// A source's frequency as configured, running or not.
    fn src_nominal_hz(&self, s: Src) -> u64 {
        match s {
            Src::Rosc => RP2040_ROSC_HZ,
            Src::Xosc => self.p.xosc_hz,
            Src::PllSys => self.pll_out_hz(0),
            Src::PllUsb => self.pll_out_hz(1),
            Src::Gpin0 | Src::Gpin1 | Src::Aux => 0,
            Src::Gen(g) => self.gen_nominal_hz(g),
        }
    }

    /// When a source runs (or ran) from, if it is set to run.
    fn src_ready_at(&self, s: Src) -> Option<u128> {
        match s {
            Src::Rosc => Some(0),
            Src::Xosc => self.xosc_stable_at(),
            Src::PllSys => self.pll_ready_at(0),
            Src::PllUsb => self.pll_ready_at(1),
            Src::Gpin0 | Src::Gpin1 | Src::Aux => None,
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

    /// A generator's output frequency, if it runs now.
    fn gen_hz(&self, g: usize) -> Option<u64> {
        if self.gen_stopped(g) {
            return None;
        }
        let input = self.src_hz(self.gen_input(g))?;
        Some(divide(input, self.gens[g].div, GENS[g].div_bits))
    }

    fn tick_hz(&self) -> Option<u64> {
        let cycles = self.tick & 0x1ff;
        if self.tick & TICK_ENABLE == 0 || cycles == 0 {
            return None;
        }
        Some(self.gen_hz(REF)? / u64::from(cycles))
    }

    /// When a pending glitchless switch completes, if its source will run.
    fn switch_due(&self, g: usize) -> Option<u128> {
        let sw = self.gens[g].pending?;
        let target = self.src_of(g, sw.to);
        let ready = self.src_ready_at(target)?;
        let stopped = sw.asked_at + cycles_ps(2, sw.old_hz);
        Some(stopped.max(ready) + cycles_ps(2, self.src_nominal_hz(target)))
    }

    /// Why clk_ref or clk_sys would stop, if one would: they "must run
    /// continuously unless the chip is in DORMANT mode" (2.15.3.2). A
    /// source divided down to 0 Hz (a PLL with REFDIV or a POSTDIV of 0)
    /// counts as stopped.
    fn core_clock_stopped(&self) -> Option<String> {
        [REF, SYS].into_iter().find_map(|g| {
            self.gen_hz(g).is_none_or(|hz| hz == 0).then(|| {
                format!(
                    "{} would stop: its source ({}) would no longer run. RP2040 datasheet \
                     2.15.3.2: clk_ref and clk_sys \"must run continuously unless the chip is \
                     in DORMANT mode\"; a stopped core clock is not modelled",
                    GEN_CLOCKS[g],
                    self.describe(self.gen_input(g))
                )
            })
        })
    }

    // ---- reads ----------------------------------------------------------

    /// A register's value (reads have no side effects here).
    fn value(&self, block: Block, offset: u32) -> Result<u32, Refusal> {
        match block {
            Block::Resets => match offset {
                0x0 => Ok(self.reset),
                0x4 => Ok(self.wdsel),
                0x8 => Ok(self.reset_done()),
                _ => Err(self.unmodelled(block, offset)),
            },
            Block::Clocks => self.clocks_value(offset),
            Block::Xosc => self.xosc_value(offset),
            Block::PllSys => self.pll_value(0, offset),
            Block::PllUsb => self.pll_value(1, offset),
            Block::Watchdog if offset == TICK => Ok(self.tick_value()),
            Block::Watchdog => self.watchdog.read(offset),
        }
    }

    fn reset_done(&self) -> u32 {
        let mut done = !self.reset & RESET_ALL;
        for (bit, g) in RESET_CLOCKS {
            if self.gen_hz(g).is_none() {
                done &= !(1 << bit);
            }
        }
        done
    }

    fn clocks_value(&self, offset: u32) -> Result<u32, Refusal> {
        if offset >= 0x78 {
            if let Some(refusal) = self.refused_clocks_register(offset) {
                return Err(refusal);
            }
            return self.clocks_plain.read(offset);
        }
        let (g, reg) = ((offset / 12) as usize, offset % 12);
        let gen = &self.gens[g];
        Ok(match reg {
            0 => gen.ctrl,
            4 => gen.div,
            // one-hot of the glitchless mux's source; hardwired to 1
            // without one (clocks.h CLK_x_SELECTED)
            _ if GENS[g].src_bits != 0 => 1 << gen.selected,
            _ => 1,
        })
    }

    fn xosc_value(&self, offset: u32) -> Result<u32, Refusal> {
        let x = &self.xosc;
        match offset {
            0x00 => Ok(x.ctrl),
            0x04 => {
                let stable = self.xosc_stable_at().is_some_and(|t| t <= self.now);
                Ok((u32::from(stable) << 31)
                    | if x.badwrite { XOSC_BADWRITE } else { 0 }
                    | (u32::from(x.enabled_at.is_some()) << 12))
            }
            0x08 => Err(self.dormant_refused()),
            0x0c => Ok(x.startup),
            0x1c => Ok(self.xosc_count()),
            _ => Err(self.unmodelled(Block::Xosc, offset)),
        }
    }

    /// XOSC.COUNT: "A down counter running at the xosc frequency which
    /// counts to zero and stops" (xosc.h), counting while the crystal is
    /// stable.
    fn xosc_count(&self) -> u32 {
        let x = &self.xosc;
        let Some(stable) = self.xosc_stable_at() else {
            return x.count;
        };
        let from = x.count_at.max(stable);
        if self.now <= from {
            return x.count;
        }
        let elapsed = (self.now - from) * u128::from(self.p.xosc_hz) / PICOS_PER_SECOND;
        u128::from(x.count).saturating_sub(elapsed) as u32
    }

    fn pll_value(&self, i: usize, offset: u32) -> Result<u32, Refusal> {
        let pll = &self.plls[i];
        match offset {
            0x0 => {
                let locked = self.pll_lock_at(i).is_some_and(|t| t <= self.now);
                Ok(pll.cs | if locked { PLL_LOCK } else { 0 })
            }
            0x4 => Ok(pll.pwr),
            0x8 => Ok(pll.fbdiv),
            0xc => Ok(pll.prim),
            _ => Err(self.unmodelled([Block::PllSys, Block::PllUsb][i], offset)),
        }
    }

    /// WATCHDOG.TICK with RUNNING and COUNT: running while enabled with a
    /// CYCLES above 0 (the model's assumption for CYCLES 0, its reset
    /// value: no tick); COUNT counts down from CYCLES at the clk_ref in
    /// force, from the last TICK write (the model's assumption: earlier
    /// clk_ref changes are not followed).
    fn tick_value(&self) -> u32 {
        let cycles = u128::from(self.tick & 0x1ff);
        let (Some(ref_hz), true) = (self.gen_hz(REF), self.tick_hz().is_some()) else {
            return self.tick;
        };
        let elapsed = self.now.saturating_sub(self.tick_at) * u128::from(ref_hz) / PICOS_PER_SECOND;
        let count = cycles - elapsed % cycles;
        self.tick | TICK_RUNNING | ((count as u32 & 0x1ff) << 11)
    }

    // ---- refusals -------------------------------------------------------

    fn unmodelled(&self, block: Block, offset: u32) -> Refusal {
        Refusal(format!(
            "{} offset {offset:#05x} ({:#010x}) is a register of {} the model does not answer",
            block.name(),
            self.base(block) + u64::from(offset),
            block.name()
        ))
    }

    fn refused(&self, block: Block, offset: u32, name: &str, why: &str) -> Refusal {
        Refusal(format!(
            "{}_{name} ({:#010x}): {why}",
            block.name(),
            self.base(block) + u64::from(offset)
        ))
    }

    fn dormant_refused(&self) -> Refusal {
        self.refused(
            Block::Xosc,
            0x08,
            "DORMANT",
            "dormant mode (RP2040 datasheet 2.16; xosc.h DORMANT) is not modelled",
        )
    }

    /// CLOCKS registers a firmware may use that the model does not follow.
    fn refused_clocks_register(&self, offset: u32) -> Option<Refusal> {
        let name = match offset {
            0x80 => "FC0_REF_KHZ",
            0x84 => "FC0_MIN_KHZ",
            0x88 => "FC0_MAX_KHZ",
            0x8c => "FC0_DELAY",
            0x90 => "FC0_INTERVAL",
            0x94 => "FC0_SRC",
            0x98 => "FC0_STATUS",
            0x9c => "FC0_RESULT",
            0xb0 => "ENABLED0",
            0xb4 => "ENABLED1",
            0xc0 => "INTF",
            _ => return None,
        };
        let why = match offset {
            0x80..=0x9c => {
                "the frequency counter (RP2040 datasheet 2.15; clocks.h FC0) is not modelled"
            }
            0xc0 => "forcing the resus interrupt is not modelled",
            _ => "which clocks the sleep and wake enables leave running is not modelled",
        };
        Some(self.refused(Block::Clocks, offset, name, why))
    }

    // ---- writes ---------------------------------------------------------

    /// A write of the whole register (after the alias's operation).
    fn write_register(
        &mut self,
        block: Block,
        offset: u32,
        v: u32,
        fx: &mut Effects,
    ) -> Result<(), Refusal> {
        match block {
            Block::Resets => self.write_resets(offset, v, fx),
            Block::Clocks => self.write_clocks(offset, v, fx),
            Block::Xosc => self.write_xosc(offset, v, fx),
            Block::PllSys => self.write_pll(0, offset, v, fx),
            Block::PllUsb => self.write_pll(1, offset, v, fx),
            Block::Watchdog => self.write_watchdog(offset, v, fx),
        }
    }

    fn write_resets(&mut self, offset: u32, v: u32, fx: &mut Effects) -> Result<(), Refusal> {
        match offset {
            0x0 => {}
            0x4 => {
                self.wdsel = v & RESET_ALL;
                return Ok(());
            }
            0x8 => return Ok(()),
            _ => return Err(self.unmodelled(Block::Resets, offset)),
        }
        let new = v & RESET_ALL;
        let asserted = new & !self.reset;
        let released = self.reset & !new;
        for (i, bit) in [RESET_PLL_SYS, RESET_PLL_USB].into_iter().enumerate() {
            if asserted & (1 << bit) != 0 {
                self.plls[i] = Pll::at_reset();
            }
        }
        self.reset = new;
        for (bit, g) in RESET_CLOCKS {
            if released & (1 << bit) != 0 && self.gen_hz(g).is_none() {
                fx.warnings.push(format!(
                    "RESETS.RESET releases {} while its clock {} is stopped: its RESET_DONE \
                     bit stays clear until {} runs (pico-sdk runtime_init.c keeps it in reset \
                     \"until we've configured clocks\")",
                    RESET_NAMES[bit as usize], GEN_CLOCKS[g], GEN_CLOCKS[g]
                ));
            }
        }
        Ok(())
    }

    fn write_clocks(&mut self, offset: u32, v: u32, fx: &mut Effects) -> Result<(), Refusal> {
        if offset < 0x78 {
            let g = (offset / 12) as usize;
            return match offset % 12 {
                0 => self.write_ctrl(g, v, fx),
                4 => {
                    self.write_div(g, v, fx);
                    Ok(())
                }
                _ => Ok(()), // SELECTED is read-only
            };
        }
        if let Some(refusal) = self.refused_clocks_register(offset) {
            return Err(refusal);
        }
        if offset == RESUS_CTRL && v & (1 << 12) != 0 {
            return Err(self.refused(
                Block::Clocks,
                offset,
                "CLK_SYS_RESUS_CTRL.FRCE",
                "a forced resus (clocks.h: \"Force a resus, for test purposes only\") is not modelled",
            ));
        }
        self.clocks_plain.write(offset, v, u32::MAX)
    }

    fn write_ctrl(&mut self, g: usize, v: u32, fx: &mut Effects) -> Result<(), Refusal> {
        let spec = &GENS[g];
        let old = self.gens[g].ctrl;
        let mut new = v & spec.ctrl_bits;
        let aux = ((new & spec.aux_bits) >> AUX_SHIFT) as usize;
        let offset = 12 * g as u32;
        match spec.aux.get(aux) {
            None => {
                return Err(self.refused(
                    Block::Clocks,
                    offset,
                    &format!("{}_CTRL.AUXSRC", spec.name),
                    &format!(
                        "{aux} selects no source (clocks.h lists 0 to {})",
                        spec.aux.len() - 1
                    ),
                ))
            }
            Some(Src::Gpin0 | Src::Gpin1) if g >= REF => {
                return Err(self.refused(
                    Block::Clocks,
                    offset,
                    &format!("{}_CTRL.AUXSRC", spec.name),
                    "selects a GPIN clock input: external clocks are not modelled",
                ))
            }
            Some(_) => {}
        }
        if (new ^ old) & spec.aux_bits != 0 && self.aux_in_use(g) {
            fx.warnings.push(format!(
                "{}_CTRL.AUXSRC changed while its aux mux drives {}: the output glitches \
                 (RP2040 datasheet 2.15.3.2: \"any clock generator with only an aux mux must \
                 be disabled while switching the clock source\"; a glitchless one \"should \
                 switch away from the aux mux while changing the aux mux source\")",
                spec.name, GEN_CLOCKS[g]
            ));
        }
        let src_changed = (new ^ old) & spec.src_bits != 0;
        if src_changed && spec.src.get((new & spec.src_bits) as usize).is_none() {
            fx.warnings.push(format!(
                "{}_CTRL.SRC = {}: clocks.h lists no such source; the mux stays on {}",
                spec.name,
                new & spec.src_bits,
                self.describe(self.gen_input(g))
            ));
            new = (new & !spec.src_bits) | (old & spec.src_bits);
        }
        self.gens[g].ctrl = new;
        if (new ^ old) & spec.src_bits != 0 {
            self.request_switch(g, new & spec.src_bits, fx);
        }
        Ok(())
    }

    /// Whether a generator's aux mux output is in use: selected by the
    /// glitchless mux, or the generator enabled.
    fn aux_in_use(&self, g: usize) -> bool {
        let spec = &GENS[g];
        if spec.src_bits != 0 {
            let gen = &self.gens[g];
            let aux_selected = |src: u32| spec.src.get(src as usize) == Some(&Src::Aux);
            return aux_selected(gen.selected) || gen.pending.is_some_and(|p| aux_selected(p.to));
        }
        !self.gen_stopped(g)
    }

    /// SRC written: the glitchless mux switches when the old source has
    /// stopped and the new one given two cycles (see `switch_due`).
    fn request_switch(&mut self, g: usize, to: u32, fx: &mut Effects) {
        if to == self.gens[g].selected {
            self.gens[g].pending = None;
            return;
        }
        let old_hz = self.src_nominal_hz(self.gen_input(g));
        self.gens[g].pending = Some(Switch {
            to,
            asked_at: self.now,
            old_hz,
        });
        let target = self.src_of(g, to);
        if self.src_hz(target).is_none() {
            fx.warnings.push(format!(
                "{}_CTRL.SRC selects {}, which is not running: the glitchless mux needs \"2 \
                 cycles of the new source to restart the output\" (RP2040 datasheet 2.15.3.2); \
                 {} stays on {} until it runs",
                GENS[g].name,
                self.describe(target),
                GEN_CLOCKS[g],
                self.describe(self.gen_input(g))
            ));
        }
    }

    fn write_div(&mut self, g: usize, v: u32, fx: &mut Effects) {
        let spec = &GENS[g];
        if spec.div_bits == 0 {
            return;
        }
        let new = v & spec.div_bits;
        if new >> 8 == 1 && new & 0xff != 0 {
            fx.warnings.push(format!(
                "{}_DIV = {new:#x} (a divisor between 1 and 2): pico-sdk clocks.c, \"on RP2040 \
                 only clock divider of 1, or >= 2 are supported\"",
                spec.name
            ));
        }
        self.gens[g].div = new;
    }

    fn write_xosc(&mut self, offset: u32, v: u32, fx: &mut Effects) -> Result<(), Refusal> {
        match offset {
            0x00 => self.write_xosc_ctrl(v, fx),
            0x04 => {
                // STATUS: only BADWRITE, write 1 to clear
                if v & XOSC_BADWRITE != 0 {
                    self.xosc.badwrite = false;
                }
            }
            0x08 => return Err(self.dormant_refused()),
            0x0c => self.xosc.startup = v & 0x0010_3fff,
            0x1c => {
                self.xosc.count = v & 0xff;
                self.xosc.count_at = self.now;
            }
            _ => return Err(self.unmodelled(Block::Xosc, offset)),
        }
        Ok(())
    }

    /// XOSC.CTRL (xosc.h): ENABLE 0xfab enables, 0xd1e disables, "an
    /// invalid setting will enable the oscillator"; FREQ_RANGE only
    /// 0xaa0 (1-15 MHz) is usable, "an invalid setting will retain the
    /// previous value"; both invalid settings set STATUS.BADWRITE.
    fn write_xosc_ctrl(&mut self, v: u32, fx: &mut Effects) {
        let enable = (v >> 12) & 0xfff;
        let mut range = v & 0xfff;
        if !(XOSC_1_15MHZ..=XOSC_1_15MHZ + 3).contains(&range) {
            self.xosc.badwrite = true;
            range = self.xosc.ctrl & 0xfff;
        }
        if enable != XOSC_ENABLE && enable != XOSC_DISABLE {
            self.xosc.badwrite = true;
        }
        self.xosc.ctrl = (enable << 12) | range;
        if enable == XOSC_DISABLE {
            self.xosc.enabled_at = None;
            self.xosc.settled = false;
            return;
        }
        if self.xosc.enabled_at.is_some() {
            return;
        }
        self.xosc.enabled_at = Some(self.now);
        let hz = self.p.xosc_hz;
        if !(1_000_000..=15_000_000).contains(&hz) {
            fx.warnings.push(format!(
                "XOSC enabled with a {} crystal ([clocks] xosc_hz): xosc.h's only frequency \
                 range is 1 to 15 MHz (FREQ_RANGE 1_15MHZ){}",
                format_hz(hz),
                if hz == 0 {
                    "; with none fitted STATUS.STABLE never sets"
                } else {
                    ""
                }
            ));
        }
    }

    fn write_pll(
        &mut self,
        i: usize,
        offset: u32,
        v: u32,
        fx: &mut Effects,
    ) -> Result<(), Refusal> {
        let name = ["PLL_SYS", "PLL_USB"][i];
        if offset > 0xc {
            return Err(self.unmodelled([Block::PllSys, Block::PllUsb][i], offset));
        }
        if self.pll_in_reset(i) {
            fx.warnings.push(format!(
                "{name} written while RESETS.RESET holds it in reset: the write is lost (RP2040 \
                 datasheet 2.14)"
            ));
            return Ok(());
        }
        let powered = self.plls[i].powered();
        let pll = &mut self.plls[i];
        match offset {
            0x0 => {
                let old = pll.cs;
                pll.cs = v & 0x13f;
                if powered && (old ^ pll.cs) & 0x3f != 0 {
                    fx.warnings.push(format!(
                        "{name}_CS.REFDIV changed while the PLL runs: pll.h, \"PLL output will be \
                         unpredictable during refdiv changes, wait for lock=1 before using it\" \
                         (the model keeps it locked)"
                    ));
                }
            }
            0x4 => self.write_pll_pwr(i, v & 0x2d, fx),
            0x8 => {
                let old = pll.fbdiv;
                pll.fbdiv = v & 0xfff;
                if powered && old != pll.fbdiv {
                    fx.warnings.push(format!(
                        "{name}_FBDIV_INT changed while the PLL runs: its output is unpredictable \
                         until it locks again (pll.h; the model keeps it locked)"
                    ));
                }
            }
            _ => {
                pll.prim = v & 0x7_7000;
                if pll.pwr & PLL_POSTDIVPD == 0 {
                    self.check_postdivs(i, fx);
                }
            }
        }
        Ok(())
    }

    fn write_pll_pwr(&mut self, i: usize, new: u32, fx: &mut Effects) {
        let (vco_up, postdivs_up) = self.plls[i].write_pwr(new, self.now);
        if vco_up {
            self.check_pll(i, fx);
        }
        if postdivs_up {
            self.check_postdivs(i, fx);
        }
    }

    /// The PLL's ranges when it is powered (pll.h CS: "Reference clock
    /// frequency min=5MHz, max=800MHz; Feedback divider min=16, max=320;
    /// VCO frequency min=750MHz, max=1600MHz"; RP2040 datasheet 2.18.2).
    fn check_pll(&self, i: usize, fx: &mut Effects) {
        let name = ["PLL_SYS", "PLL_USB"][i];
        let rule = "pll.h and RP2040 datasheet 2.18.2";
        let warnings = self.plls[i].range_warnings(name, self.p.xosc_hz, rule);
        fx.warnings.extend(warnings);
    }

    /// POSTDIV1 and POSTDIV2 "divide by 1-7" (pll.h PRIM), and the
    /// generators' maxima: "For the system PLL this is 133 MHz, and for the
    /// USB PLL, 48 MHz" (RP2040 datasheet 2.18.2).
    fn check_postdivs(&self, i: usize, fx: &mut Effects) {
        let name = ["PLL_SYS", "PLL_USB"][i];
        let (a, b) = self.plls[i].postdivs();
        if a == 0 || b == 0 {
            fx.warnings.push(format!(
                "{name}_PRIM POSTDIV1 = {a}, POSTDIV2 = {b}: pll.h allows 1 to 7 each"
            ));
            return;
        }
        let max = [133_000_000, 48_000_000][i];
        let out = self.pll_out_hz(i);
        if out > max {
            fx.warnings.push(format!(
                "{name}'s output is {}, above the {} RP2040 datasheet 2.18.2 gives for the \
                 clock generators it feeds",
                format_hz(out),
                format_hz(max)
            ));
        }
    }

    fn write_watchdog(&mut self, offset: u32, v: u32, fx: &mut Effects) -> Result<(), Refusal> {
        match offset {
            TICK => {
                self.tick = v & 0x3ff;
                self.tick_at = self.now;
                Ok(())
            }
            0x0 if v & (1 << 31) != 0 => Err(self.refused(
                Block::Watchdog,
                offset,
                "CTRL.TRIGGER",
                "a watchdog reset of the chip (RP2040 datasheet 4.7) is not modelled",
            )),
            0x0 => {
                if v & (1 << 30) != 0 {
                    fx.warnings.push(
                        "WATCHDOG_CTRL.ENABLE set: the watchdog's countdown is not modelled, it \
                         will never reset the chip (RP2040 datasheet 4.7)"
                            .into(),
                    );
                }
                self.watchdog.write(offset, v, u32::MAX)
            }
            _ => self.watchdog.write(offset, v, u32::MAX),
        }
    }

    // ---- the report -----------------------------------------------------

    /// A source as the report names it, with how it is derived.
    fn describe(&self, s: Src) -> String {
        match s {
            Src::Rosc => format!("ROSC {} (nominal)", format_hz(RP2040_ROSC_HZ)),
            Src::Xosc => format!("XOSC {}", format_hz(self.p.xosc_hz)),
            Src::PllSys | Src::PllUsb => {
                let i = usize::from(s == Src::PllUsb);
                self.plls[i].describe(["PLL_SYS", "PLL_USB"][i], self.p.xosc_hz)
            }
            Src::Gpin0 => "GPIN0".into(),
            Src::Gpin1 => "GPIN1".into(),
            Src::Aux => "aux".into(),
            Src::Gen(g) => format!(
                "{} ({}{})",
                GEN_CLOCKS[g],
                self.describe(self.gen_input(g)),
                self.div_text(g)
            ),
        }
    }

    fn div_text(&self, g: usize) -> String {
        let div = self.gens[g].div;
        if GENS[g].div_bits == 0 || div == 0x100 {
            return String::new();
        }
        match div & 0xff {
            0 => format!(" / {}", div >> 8),
            frac => format!(" / {} {frac}/256", div >> 8),
        }
    }
}

impl Device for Rp2040Clocks {
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
        let result = self.write_register(block, offset, v, fx).and_then(|()| {
            self.core_clock_stopped()
                .map_or(Ok(()), |why| Err(Refusal(why)))
        });
        if result.is_err() {
            *self = before;
        }
        result
    }

    fn summary(&self) -> Vec<String> {
        let clock = |g: usize| self.gen_hz(g).map_or("stopped".to_string(), format_hz);
        vec![
            format!(
                "clk_sys {} from {}",
                format_hz(self.core_hz()),
                self.core_source()
            ),
            format!(
                "clk_ref {}, clk_peri {}, clk_usb {}, clk_adc {}, clk_rtc {}, watchdog tick {}",
                clock(REF),
                clock(PERI),
                clock(USB),
                clock(ADC),
                clock(RTC),
                self.tick_hz().map_or("stopped".to_string(), format_hz)
            ),
        ]
    }
}

fn outside(addr: u64) -> Refusal {
    Refusal(format!(
        "{addr:#010x} is outside the RP2040 clock tree's blocks"
    ))
}

impl ClockView for Rp2040Clocks {
    fn clock_hz(&self, name: &str) -> Option<u64> {
        if let Some(g) = GEN_CLOCKS.iter().position(|c| *c == name) {
            return self.gen_hz(g);
        }
        match name {
            "rosc" => Some(RP2040_ROSC_HZ),
            "xosc" => self.src_hz(Src::Xosc),
            "pll_sys" => self.src_hz(Src::PllSys),
            "pll_usb" => self.src_hz(Src::PllUsb),
            "tick" => self.tick_hz(),
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

impl ClockTree for Rp2040Clocks {
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
    /// clk_sys may run from it). If both fall due in one call, the later
    /// time is returned with the final clock.
    fn settle(&mut self, now: Now) -> Option<u128> {
        self.now = self.now.max(now.picos);
        let before = self.core_hz();
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
        made.filter(|_| self.core_hz() != before)
    }
}

const RESUS_CTRL: u32 = 0x78;

/// clocks.h: the resus and the sleep/wake enables, held as written
/// (RESUS_CTRL.ENABLE holds, but the resus never fires: a stopped
/// clk_sys is refused); RESUS_STATUS, INTR and INTS read 0.
const CLOCKS_PLAIN: &[RegisterSpec] = &[
    reg(RESUS_CTRL, "CLK_SYS_RESUS_CTRL", 0xff, 0x0001_01ff),
    reg(0x7c, "CLK_SYS_RESUS_STATUS", 0, 0),
    reg(0xa0, "WAKE_EN0", u32::MAX, u32::MAX),
    reg(0xa4, "WAKE_EN1", 0x7fff, 0x7fff),
    reg(0xa8, "SLEEP_EN0", u32::MAX, u32::MAX),
    reg(0xac, "SLEEP_EN1", 0x7fff, 0x7fff),
    reg(0xb8, "INTR", 0, 0),
    reg(0xbc, "INTE", 0, 1),
    reg(0xc4, "INTS", 0, 0),
];

/// watchdog.h: CTRL (reset 0x07000000: the PAUSE bits; TIME reads 0, the
/// countdown is not modelled), LOAD, REASON (0: a power-on reset),
/// SCRATCH0-7.
const WATCHDOG_PLAIN: &[RegisterSpec] = &[
    reg(0x00, "WATCHDOG_CTRL", 0x0700_0000, 0x4700_0000),
    reg(0x04, "WATCHDOG_LOAD", 0, 0x00ff_ffff),
    reg(0x08, "WATCHDOG_REASON", 0, 0),
    reg(0x0c, "WATCHDOG_SCRATCH0", 0, u32::MAX),
    reg(0x10, "WATCHDOG_SCRATCH1", 0, u32::MAX),
    reg(0x14, "WATCHDOG_SCRATCH2", 0, u32::MAX),
    reg(0x18, "WATCHDOG_SCRATCH3", 0, u32::MAX),
    reg(0x1c, "WATCHDOG_SCRATCH4", 0, u32::MAX),
    reg(0x20, "WATCHDOG_SCRATCH5", 0, u32::MAX),
    reg(0x24, "WATCHDOG_SCRATCH6", 0, u32::MAX),
    reg(0x28, "WATCHDOG_SCRATCH7", 0, u32::MAX),
];
