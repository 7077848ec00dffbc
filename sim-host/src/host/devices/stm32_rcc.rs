//! The clock tree of an STM32F4 (RM0090 Rev 19, chapter 6 "Reset and
//! clock control for STM32F405xx/07xx and STM32F415xx/17xx", chapter 5
//! "Power controller") or STM32F7 (RM0385 Rev 8, chapters 5 and 4): RCC
//! and PWR. The core starts on the 16 MHz HSI (RM0090 6.2.2: "the HSI
//! clock signal is generated from an internal 16 MHz RC oscillator ...
//! used as system clock source after a reset"), and follows SW/SWS,
//! HPRE and the main PLL as firmware sets them.
//!
//! Rules (each cited where it is carried out):
//! - an oscillator or PLL is ready a fixed time after it is switched on;
//! - a switch to a ready source happens at the write; to a source not
//!   ready, when it becomes ready (RM0090 6.2.6), with a warning;
//! - a clock in use cannot be switched off (RM0090 6.3.1);
//! - PLL settings outside RM0090 6.3.2's ranges, HCLK or an APB clock
//!   above the datasheet's maximum, and PLLCFGR written while the PLL
//!   runs are warnings at the instruction (the silicon's behaviour then
//!   is undefined; the model goes on with what was written).
//!
//! Timing assumptions (named, not from a table in the stored sources):
//! the HSE crystal is stable [`HSE_STARTUP_PS`] after HSEON, a PLL locks
//! [`PLL_LOCK_PS`] after PLLON once its input runs, the HSI, the
//! over-drive and the voltage scaling are ready at once.

use super::device::{ClockTree, ClockView, Device, Effects, Now, Refusal};
use super::registers::{held as reg, RegisterFile, RegisterSpec};
use crate::model::clocks::format_hz;
use std::ops::Range;

/// The model's HSE start-up: 2 ms, the typical crystal start-up time
/// ST's STM32F4 datasheets give (DS8626 5.3.7, tSU(HSE) 2 ms typical,
/// "VDD is stabilized"); the table was not among the stored sources, so
/// this is the model's assumption until checked.
pub const HSE_STARTUP_PS: u128 = 2_000_000_000;
/// The model's PLL lock time: 100 us, the model's assumption (ST's
/// datasheets give tLOCK per VCO frequency; the table was not among the
/// stored sources).
pub const PLL_LOCK_PS: u128 = 100_000_000;

/// Which family's registers and limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// STM32F405/407/415/417 (RM0090, DS8626).
    F4,
    /// STM32F74x/75x (RM0385, DS10916).
    F7,
}

/// A board's RCC and PWR.
#[derive(Debug, Clone, Copy)]
pub struct Stm32Params {
    pub family: Family,
    pub rcc: u64,
    pub pwr: u64,
    /// The board's HSE crystal (0: none).
    pub hse_hz: u64,
}

const HSI_HZ: u64 = 16_000_000;
const BLOCK: u64 = 0x400;

// RCC_CR bits (RM0090 6.3.1, RM0385 5.3.1)
const HSION: u32 = 1 << 0;
const HSIRDY: u32 = 1 << 1;
const HSEON: u32 = 1 << 16;
const HSERDY: u32 = 1 << 17;
const PLLON: u32 = 1 << 24;
const PLLRDY: u32 = 1 << 25;
const PLLI2SON: u32 = 1 << 26;
const PLLI2SRDY: u32 = 1 << 27;
const PLLSAION: u32 = 1 << 28;
const PLLSAIRDY: u32 = 1 << 29;
/// HSION, HSITRIM, HSEON, HSEBYP, CSSON, PLLON, PLLI2SON, PLLSAION.
const CR_WRITABLE: u32 = 0x1 | 0xf8 | (0xf << 16) | PLLON | PLLI2SON | PLLSAION;
/// RCC_CR at reset: HSION, HSIRDY, HSITRIM 16 (0x0000 XX83; HSICAL,
/// factory calibration, read as 0 here).
const CR_RESET: u32 = 0x83;
/// RCC_PLLCFGR at reset (RM0090 6.3.2, RM0385 5.3.2): 0x2400 3010.
const PLLCFGR_RESET: u32 = 0x2400_3010;

const CR: u32 = 0x00;
const PLLCFGR: u32 = 0x04;
const CFGR: u32 = 0x08;

/// The system clock's sources, as SW and SWS number them (RM0090 6.3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Hsi = 0,
    Hse = 1,
    Pll = 2,
}

impl Source {
    fn from_bits(bits: u32) -> Option<Source> {
        match bits & 3 {
            0 => Some(Source::Hsi),
            1 => Some(Source::Hse),
            2 => Some(Source::Pll),
            _ => None,
        }
    }
}

/// The main PLL's fields (RM0090 6.3.2).
#[derive(Debug, Clone, Copy)]
struct PllConfig {
    m: u32,
    n: u32,
    p: u32,
    q: u32,
    from_hse: bool,
}

impl PllConfig {
    fn of(bits: u32) -> PllConfig {
        PllConfig {
            m: bits & 0x3f,
            n: (bits >> 6) & 0x1ff,
            p: 2 * (((bits >> 16) & 3) + 1),
            q: (bits >> 24) & 0xf,
            from_hse: bits & (1 << 22) != 0,
        }
    }
}

/// RCC and PWR of an STM32F4 or F7 (see the module's documentation).
#[derive(Debug, Clone)]
pub struct Stm32Rcc {
    p: Stm32Params,
    cr: u32,
    pllcfgr: u32,
    cfgr: u32,
    /// The source SWS says the system clock runs from.
    sws: Source,
    /// When each oscillator or PLL was switched on (picoseconds).
    hse_on: Option<u128>,
    pll_on: Option<u128>,
    plli2s_on: Option<u128>,
    pllsai_on: Option<u128>,
    plain: RegisterFile,
    pwr: RegisterFile,
}

impl Stm32Rcc {
    pub fn new(p: Stm32Params) -> Stm32Rcc {
        let (rcc_specs, pwr_specs) = match p.family {
            Family::F4 => (F4_RCC, F4_PWR),
            Family::F7 => (F7_RCC, F7_PWR),
        };
        Stm32Rcc {
            p,
            cr: CR_RESET,
            pllcfgr: PLLCFGR_RESET,
            cfgr: 0,
            sws: Source::Hsi,
            hse_on: None,
            pll_on: None,
            plli2s_on: None,
            pllsai_on: None,
            plain: RegisterFile::new("RCC", p.rcc, rcc_specs),
            pwr: RegisterFile::new("PWR", p.pwr, pwr_specs),
        }
    }

    fn manual(&self) -> &'static str {
        match self.p.family {
            Family::F4 => "RM0090",
            Family::F7 => "RM0385",
        }
    }

    /// When a source is (or will be) ready, if it is on.
    fn ready_at(&self, source: Source) -> Option<u128> {
        match source {
            Source::Hsi => (self.cr & HSION != 0).then_some(0),
            Source::Hse => {
                let on = self.hse_on.filter(|_| self.p.hse_hz > 0)?;
                Some(on + HSE_STARTUP_PS)
            }
            Source::Pll => {
                let input = if PllConfig::of(self.pllcfgr).from_hse {
                    Source::Hse
                } else {
                    Source::Hsi
                };
                Some(self.pll_on?.max(self.ready_at(input)?) + PLL_LOCK_PS)
            }
        }
    }

    fn ready(&self, source: Source, now: Now) -> bool {
        self.ready_at(source).is_some_and(|t| t <= now.picos)
    }

    fn source_hz(&self, source: Source) -> u64 {
        match source {
            Source::Hsi => HSI_HZ,
            Source::Hse => self.p.hse_hz,
            Source::Pll => {
                let c = PllConfig::of(self.pllcfgr);
                let input = if c.from_hse { self.p.hse_hz } else { HSI_HZ };
                if c.m == 0 {
                    return 0;
                }
                input / u64::from(c.m) * u64::from(c.n) / u64::from(c.p)
            }
        }
    }

    fn sysclk_hz(&self) -> u64 {
        self.source_hz(self.sws)
    }

    /// HCLK: SYSCLK through HPRE (RM0090 6.3.3: 0xxx /1, 1000 /2 ... 1111 /512).
    fn hclk_hz(&self) -> u64 {
        let hpre = (self.cfgr >> 4) & 0xf;
        let div = if hpre < 8 {
            1
        } else {
            [2, 4, 8, 16, 64, 128, 256, 512][(hpre - 8) as usize]
        };
        self.sysclk_hz() / div
    }

    /// An APB clock: HCLK through PPRE (0xx /1, 100 /2 ... 111 /16).
    fn pclk_hz(&self, shift: u32) -> u64 {
        let ppre = (self.cfgr >> shift) & 0x7;
        let div = if ppre < 4 { 1 } else { 1 << (ppre - 3) };
        self.hclk_hz() / div
    }

    fn read_cr(&self, now: Now) -> u32 {
        let mut v = self.cr;
        if self.ready(Source::Hsi, now) {
            v |= HSIRDY;
        }
        if self.ready(Source::Hse, now) {
            v |= HSERDY;
        }
        if self.ready(Source::Pll, now) {
            v |= PLLRDY;
        }
        let locked = |on: Option<u128>| on.is_some_and(|t| t + PLL_LOCK_PS <= now.picos);
        if locked(self.plli2s_on) {
            v |= PLLI2SRDY;
        }
        if locked(self.pllsai_on) {
            v |= PLLSAIRDY;
        }
        v
    }

    /// Whether `source` feeds the system clock now (directly or through
    /// the PLL).
    fn in_use(&self, source: Source) -> bool {
        let through_pll = self.sws == Source::Pll
            && match source {
                Source::Hse => PllConfig::of(self.pllcfgr).from_hse,
                Source::Hsi => !PllConfig::of(self.pllcfgr).from_hse,
                Source::Pll => true,
            };
        self.sws == source || through_pll
    }

    fn write_cr(&mut self, value: u32, mask: u32, now: Now, fx: &mut Effects) {
        let bits = mask & CR_WRITABLE;
        let mut new = (self.cr & !bits) | (value & bits);
        // RM0090 6.3.1: HSION, HSEON and PLLON cannot be reset while
        // their clock is used, directly or not, as the system clock.
        for (on, source) in [
            (HSION, Source::Hsi),
            (HSEON, Source::Hse),
            (PLLON, Source::Pll),
        ] {
            if new & on == 0 && self.cr & on != 0 && self.in_use(source) {
                new |= on;
            }
        }
        let rose = |bit: u32| new & bit != 0 && self.cr & bit == 0;
        let stamp = |bit: u32, at: Option<u128>| match new & bit {
            0 => None,
            _ if rose(bit) => Some(now.picos),
            _ => at,
        };
        self.hse_on = stamp(HSEON, self.hse_on);
        self.plli2s_on = stamp(PLLI2SON, self.plli2s_on);
        self.pllsai_on = stamp(PLLSAION, self.pllsai_on);
        if rose(PLLON) {
            self.check_pll(fx);
        }
        self.pll_on = stamp(PLLON, self.pll_on);
        if rose(HSEON) && self.p.hse_hz == 0 {
            fx.warnings.push(format!(
                "RCC_CR.HSEON set, but the board has no HSE crystal ([clocks] hse_hz = 0): \
                 HSERDY will never be set ({} 6.2.1)",
                self.manual()
            ));
        }
        self.cr = new;
    }

    /// RM0090 6.3.2 / RM0385 5.3.2: the PLL's ranges, checked when it is
    /// switched on.
    fn check_pll(&self, fx: &mut Effects) {
        let c = PllConfig::of(self.pllcfgr);
        let rule = format!("{} {}", self.manual(), self.pll_section());
        let input = if c.from_hse { self.p.hse_hz } else { HSI_HZ };
        if c.m < 2 {
            fx.warnings.push(format!(
                "PLL switched on with PLLM = {}: {rule} allows 2 to 63",
                c.m
            ));
            return;
        }
        let vco_in = input / u64::from(c.m);
        let vco_out = vco_in * u64::from(c.n);
        if !(1_000_000..=2_000_000).contains(&vco_in) {
            fx.warnings.push(format!(
                "PLL switched on with a VCO input of {} (PLL input {} / PLLM {}): {rule} \
                 requires 1 MHz to 2 MHz",
                format_hz(vco_in),
                format_hz(input),
                c.m
            ));
        }
        if !(50..=432).contains(&c.n) || !(100_000_000..=432_000_000).contains(&vco_out) {
            fx.warnings.push(format!(
                "PLL switched on with PLLN = {} (VCO output {}): {rule} requires 50 <= PLLN \
                 <= 432 and a VCO output of 100 MHz to 432 MHz",
                c.n,
                format_hz(vco_out)
            ));
        }
        if c.q < 2 {
            fx.warnings.push(format!(
                "PLL switched on with PLLQ = {}: {rule} allows 2 to 15",
                c.q
            ));
        }
    }

    fn pll_section(&self) -> &'static str {
        match self.p.family {
            Family::F4 => "6.3.2 (RCC_PLLCFGR)",
            Family::F7 => "5.3.2 (RCC_PLLCFGR)",
        }
    }

    fn write_cfgr(&mut self, value: u32, mask: u32, now: Now, fx: &mut Effects) {
        let old_hclk = self.hclk_hz();
        // SWS (bits 3:2) is read-only
        let bits = mask & !0xc;
        self.cfgr = (self.cfgr & !bits) | (value & bits);
        if mask & 3 != 0 {
            self.request_switch(now, fx);
        }
        if self.hclk_hz() != old_hclk || mask & 0xfc00 != 0 {
            self.check_limits(fx);
        }
    }

    /// SW written: switch now if the source is ready, else when it is.
    fn request_switch(&mut self, now: Now, fx: &mut Effects) {
        let Some(wanted) = Source::from_bits(self.cfgr) else {
            fx.warnings.push(format!(
                "RCC_CFGR.SW = 11: {} 6.3.3 calls it not allowed; the system clock stays on {}",
                self.manual(),
                self.core_source()
            ));
            self.cfgr = (self.cfgr & !3) | self.sws as u32;
            return;
        };
        if wanted == self.sws {
            return;
        }
        if self.ready(wanted, now) {
            self.sws = wanted;
            return;
        }
        fx.warnings.push(format!(
            "RCC_CFGR.SW selects {wanted:?}, which is not ready: {} 6.2.6 (\"if a clock \
             source that is not yet ready is selected, the switch will occur when the clock \
             source will be ready\"); the system clock stays on {} until then",
            self.manual(),
            self.core_source()
        ));
    }

    /// The maximum HCLK the voltage scaling and over-drive allow.
    fn max_hclk(&self) -> (u64, String) {
        match self.p.family {
            Family::F4 => {
                let vos = self.pwr.get(0).unwrap_or(0) & (1 << 14) != 0;
                let max = if vos { 168_000_000 } else { 144_000_000 };
                (
                    max,
                    format!(
                        "DS8626 Table 14 (fHCLK at most 168 MHz with PWR_CR.VOS = 1, 144 MHz \
                         with VOS = 0; VOS is {})",
                        u32::from(vos)
                    ),
                )
            }
            Family::F7 => {
                let overdrive = self.pwr.get(0).unwrap_or(0) & ODSWEN != 0;
                let max = if overdrive { 216_000_000 } else { 180_000_000 };
                (
                    max,
                    format!(
                        "RM0385 4.1.4 (HCLK up to 180 MHz in Scale 1, 216 MHz with the \
                         over-drive switched on; PWR_CR1.ODSWEN is {})",
                        u32::from(overdrive)
                    ),
                )
            }
        }
    }

    /// HCLK and the APB clocks against the datasheet's maxima.
    fn check_limits(&self, fx: &mut Effects) {
        let (max, rule) = self.max_hclk();
        if self.hclk_hz() > max {
            fx.warnings.push(format!(
                "HCLK is {}, above {}: {rule}",
                format_hz(self.hclk_hz()),
                format_hz(max)
            ));
        }
        let (apb1, apb2, source) = match self.p.family {
            Family::F4 => (42_000_000, 84_000_000, "DS8626 Table 14"),
            Family::F7 => (54_000_000, 108_000_000, "RM0385 5.2"),
        };
        for (name, hz, max) in [
            ("APB1 (PCLK1)", self.pclk_hz(10), apb1),
            ("APB2 (PCLK2)", self.pclk_hz(13), apb2),
        ] {
            if hz > max {
                fx.warnings.push(format!(
                    "{name} is {}, above the {} {source} allows",
                    format_hz(hz),
                    format_hz(max)
                ));
            }
        }
    }

    fn read_pwr(&self, offset: u32, now: Now) -> Result<u32, Refusal> {
        let value = self.pwr.read(offset)?;
        if offset != PWR_CSR {
            return Ok(value);
        }
        // VOSRDY: the model's assumption, ready once the PLL is (RM0090
        // 5.4.1: the VOS setting takes effect only when the PLL is on);
        // F7 ODRDY / ODSWRDY follow ODEN / ODSWEN at once.
        let mut v = value;
        if self.ready(Source::Pll, now) {
            v |= 1 << 14;
        }
        if self.p.family == Family::F7 {
            let cr1 = self.pwr.get(0).unwrap_or(0);
            v |= (cr1 & (ODEN | ODSWEN)) & (ODEN | ODSWEN);
        }
        Ok(v)
    }
}

const PWR_CSR: u32 = 0x04;
/// PWR_CR1 over-drive enable and switching (RM0385 4.4.1), the same bit
/// positions in PWR_CSR1 as ODRDY and ODSWRDY (4.4.2).
const ODEN: u32 = 1 << 16;
const ODSWEN: u32 = 1 << 17;

fn within(range: &Range<u64>, addr: u64) -> Option<u32> {
    range.contains(&addr).then(|| (addr - range.start) as u32)
}

impl Device for Stm32Rcc {
    fn name(&self) -> &str {
        "RCC"
    }

    fn blocks(&self) -> Vec<Range<u64>> {
        vec![
            self.p.rcc..self.p.rcc + BLOCK,
            self.p.pwr..self.p.pwr + BLOCK,
        ]
    }

    fn read(
        &mut self,
        addr: u64,
        now: Now,
        _clocks: &dyn ClockView,
        _fx: &mut Effects,
    ) -> Result<u32, Refusal> {
        if let Some(offset) = within(&(self.p.pwr..self.p.pwr + BLOCK), addr) {
            return self.read_pwr(offset, now);
        }
        let offset = (addr - self.p.rcc) as u32;
        match offset {
            CR => Ok(self.read_cr(now)),
            PLLCFGR => Ok(self.pllcfgr),
            CFGR => Ok((self.cfgr & !0xc) | ((self.sws as u32) << 2)),
            _ => self.plain.read(offset),
        }
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
        if let Some(offset) = within(&(self.p.pwr..self.p.pwr + BLOCK), addr) {
            self.pwr.write(offset, value, mask)?;
            if offset == 0 {
                self.check_limits(fx);
            }
            return Ok(());
        }
        let offset = (addr - self.p.rcc) as u32;
        match offset {
            CR => self.write_cr(value, mask, now, fx),
            PLLCFGR => {
                if self.cr & PLLON != 0 {
                    fx.warnings.push(format!(
                        "RCC_PLLCFGR written while the PLL is on: {} {} (\"these bits should \
                         be written only if PLL is disabled\")",
                        self.manual(),
                        self.pll_section()
                    ));
                }
                self.pllcfgr = (self.pllcfgr & !mask) | (value & mask & 0x7f43_7fff);
            }
            CFGR => self.write_cfgr(value, mask, now, fx),
            _ => self.plain.write(offset, value, mask)?,
        }
        Ok(())
    }
}

impl ClockView for Stm32Rcc {
    fn clock_hz(&self, name: &str) -> Option<u64> {
        match name {
            "sysclk" => Some(self.sysclk_hz()),
            "hclk" => Some(self.hclk_hz()),
            "pclk1" => Some(self.pclk_hz(10)),
            "pclk2" => Some(self.pclk_hz(13)),
            _ => None,
        }
    }

    fn bit(&self, addr: u64, bit: u8) -> Option<bool> {
        let offset = within(&(self.p.rcc..self.p.rcc + BLOCK), addr)?;
        let value = match offset {
            CR => self.cr,
            PLLCFGR => self.pllcfgr,
            CFGR => self.cfgr,
            _ => self.plain.get(offset)?,
        };
        Some(value & (1 << bit) != 0)
    }
}

impl ClockTree for Stm32Rcc {
    fn core_hz(&self) -> u64 {
        self.hclk_hz()
    }

    fn core_source(&self) -> String {
        let hclk = match (self.cfgr >> 4) & 0xf {
            h if h >= 8 => format!(" / HPRE {}", self.sysclk_hz() / self.hclk_hz().max(1)),
            _ => String::new(),
        };
        let source = match self.sws {
            Source::Hsi => format!("HSI {}", format_hz(HSI_HZ)),
            Source::Hse => format!("HSE {}", format_hz(self.p.hse_hz)),
            Source::Pll => {
                let c = PllConfig::of(self.pllcfgr);
                let input = if c.from_hse {
                    format!("HSE {}", format_hz(self.p.hse_hz))
                } else {
                    format!("HSI {}", format_hz(HSI_HZ))
                };
                format!("PLL ({input} / {} x {} / {})", c.m, c.n, c.p)
            }
        };
        format!("{source}{hclk}")
    }

    fn settle(&mut self, now: Now) -> Option<u128> {
        let wanted = Source::from_bits(self.cfgr)?;
        if wanted == self.sws {
            return None;
        }
        let at = self.ready_at(wanted).filter(|t| *t <= now.picos)?;
        self.sws = wanted;
        Some(at)
    }
}

/// RM0090 6.3 (RCC register map, Table 34): the registers held as
/// written, with their reset values. CIR's flags never set (the ready
/// interrupts are not modelled: only its enable bits 13:8 hold).
const F4_RCC: &[RegisterSpec] = &[
    RegisterSpec {
        offset: 0x0c,
        name: "RCC_CIR",
        reset: 0,
        writable: 0x3f00,
    },
    reg(0x10, "RCC_AHB1RSTR", 0),
    reg(0x14, "RCC_AHB2RSTR", 0),
    reg(0x18, "RCC_AHB3RSTR", 0),
    reg(0x20, "RCC_APB1RSTR", 0),
    reg(0x24, "RCC_APB2RSTR", 0),
    reg(0x30, "RCC_AHB1ENR", 0x0010_0000),
    reg(0x34, "RCC_AHB2ENR", 0),
    reg(0x38, "RCC_AHB3ENR", 0),
    reg(0x40, "RCC_APB1ENR", 0),
    reg(0x44, "RCC_APB2ENR", 0),
    reg(0x50, "RCC_AHB1LPENR", 0x7e67_91ff),
    reg(0x54, "RCC_AHB2LPENR", 0x0000_00f1),
    reg(0x58, "RCC_AHB3LPENR", 0x0000_0001),
    reg(0x60, "RCC_APB1LPENR", 0x36fe_c9ff),
    reg(0x64, "RCC_APB2LPENR", 0x0007_5f33),
    reg(0x70, "RCC_BDCR", 0),
    reg(0x74, "RCC_CSR", 0x0e00_0000),
    reg(0x80, "RCC_SSCGR", 0),
    reg(0x84, "RCC_PLLI2SCFGR", 0x2000_3000),
];

/// RM0385 5.3 (RCC register map): as the F4's, without the low-power
/// enable registers (not modelled: refused by name), with PLLSAI and the
/// dedicated clock configuration registers.
const F7_RCC: &[RegisterSpec] = &[
    RegisterSpec {
        offset: 0x0c,
        name: "RCC_CIR",
        reset: 0,
        writable: 0x7f00,
    },
    reg(0x10, "RCC_AHB1RSTR", 0),
    reg(0x14, "RCC_AHB2RSTR", 0),
    reg(0x18, "RCC_AHB3RSTR", 0),
    reg(0x20, "RCC_APB1RSTR", 0),
    reg(0x24, "RCC_APB2RSTR", 0),
    reg(0x30, "RCC_AHB1ENR", 0x0010_0000),
    reg(0x34, "RCC_AHB2ENR", 0),
    reg(0x38, "RCC_AHB3ENR", 0),
    reg(0x40, "RCC_APB1ENR", 0),
    reg(0x44, "RCC_APB2ENR", 0),
    reg(0x70, "RCC_BDCR", 0),
    reg(0x74, "RCC_CSR", 0x0e00_0000),
    reg(0x80, "RCC_SSCGR", 0),
    reg(0x84, "RCC_PLLI2SCFGR", 0x2400_3000),
    reg(0x88, "RCC_PLLSAICFGR", 0x2400_3000),
    reg(0x8c, "RCC_DCKCFGR1", 0),
    reg(0x90, "RCC_DCKCFGR2", 0),
];

/// RM0090 5.4: PWR_CR (reset 0x0000 4000: VOS = 1, Scale 1) and PWR_CSR.
const F4_PWR: &[RegisterSpec] = &[
    reg(0x00, "PWR_CR", 0x0000_4000),
    RegisterSpec {
        offset: PWR_CSR,
        name: "PWR_CSR",
        reset: 0,
        writable: 0x0000_0300,
    },
];

/// RM0385 4.4: PWR_CR1 (reset 0x0000 C000: VOS = 11, Scale 1), PWR_CSR1,
/// PWR_CR2, PWR_CSR2.
const F7_PWR: &[RegisterSpec] = &[
    reg(0x00, "PWR_CR1", 0x0000_c000),
    RegisterSpec {
        offset: PWR_CSR,
        name: "PWR_CSR1",
        reset: 0,
        writable: 0x0000_0300,
    },
    reg(0x08, "PWR_CR2", 0),
    reg(0x0c, "PWR_CSR2", 0),
];

#[cfg(test)]
mod tests {
    use super::*;

    const RCC: u64 = 0x4002_3800;
    const PWR: u64 = 0x4000_7000;

    fn f4() -> Stm32Rcc {
        Stm32Rcc::new(Stm32Params {
            family: Family::F4,
            rcc: RCC,
            pwr: PWR,
            hse_hz: 8_000_000,
        })
    }

    fn at(picos: u128) -> Now {
        Now { cycles: 0, picos }
    }

    fn read(r: &mut Stm32Rcc, offset: u64, picos: u128) -> u32 {
        let mut fx = Effects::default();
        r.read(
            RCC + offset,
            at(picos),
            &super::super::device::FixedClocks(1),
            &mut fx,
        )
        .unwrap()
    }

    fn write(r: &mut Stm32Rcc, offset: u64, value: u32, picos: u128) -> Vec<String> {
        let mut fx = Effects::default();
        r.write(
            RCC + offset,
            value,
            u32::MAX,
            at(picos),
            &super::super::device::FixedClocks(1),
            &mut fx,
        )
        .unwrap();
        fx.warnings
    }

    /// ST's sequence (system_stm32f4xx.c SetSysClock): HSE on, PLL from
    /// HSE 8 MHz / 8 x 336 / 2, prescalers, switch to the PLL.
    #[test]
    fn st_start_up_reaches_168_mhz_at_the_times_the_model_gives() {
        let mut r = f4();
        assert_eq!(r.core_hz(), 16_000_000);
        assert_eq!(read(&mut r, 0, 0) & (HSION | HSIRDY), HSION | HSIRDY);
        write(&mut r, 0, CR_RESET | HSEON, 1_000);
        assert_eq!(read(&mut r, 0, 1_000 + HSE_STARTUP_PS - 1) & HSERDY, 0);
        let hse_ready = 1_000 + HSE_STARTUP_PS;
        assert_ne!(read(&mut r, 0, hse_ready) & HSERDY, 0);
        // PLLM 8, PLLN 336, PLLP /2 (00), PLLSRC HSE, PLLQ 7
        let cfg = 8 | (336 << 6) | (1 << 22) | (7 << 24);
        assert!(write(&mut r, 4, cfg, hse_ready).is_empty());
        // HPRE /1, PPRE1 /4 (101), PPRE2 /2 (100)
        assert!(write(&mut r, 8, (5 << 10) | (4 << 13), hse_ready).is_empty());
        assert!(write(&mut r, 0, CR_RESET | HSEON | PLLON, hse_ready).is_empty());
        let locked = hse_ready + PLL_LOCK_PS;
        assert_eq!(read(&mut r, 0, locked - 1) & PLLRDY, 0);
        assert_ne!(read(&mut r, 0, locked) & PLLRDY, 0);
        let cfgr = (5 << 10) | (4 << 13) | 2;
        assert!(write(&mut r, 8, cfgr, locked).is_empty());
        assert_eq!(read(&mut r, 8, locked) & 0xc, 0x8, "SWS = PLL");
        assert_eq!(r.core_hz(), 168_000_000);
        assert_eq!(r.clock_hz("pclk1"), Some(42_000_000));
        assert_eq!(r.clock_hz("pclk2"), Some(84_000_000));
        assert_eq!(r.core_source(), "PLL (HSE 8 MHz / 8 x 336 / 2)");
    }

    #[test]
    fn a_switch_to_an_unready_pll_waits_for_its_lock_with_a_warning() {
        let mut r = f4();
        // PLL from the HSI: 16 / 16 x 336 / 2 = 168 MHz
        write(&mut r, 4, 16 | (336 << 6) | (7 << 24), 0);
        write(&mut r, 0, CR_RESET | PLLON, 0);
        let warnings = write(&mut r, 8, (5 << 10) | (4 << 13) | 2, 10);
        assert!(warnings[0].contains("RM0090 6.2.6"), "{warnings:?}");
        assert_eq!(r.core_hz(), 16_000_000);
        assert_eq!(r.settle(at(PLL_LOCK_PS - 1)), None);
        assert_eq!(r.settle(at(PLL_LOCK_PS + 5)), Some(PLL_LOCK_PS));
        assert_eq!(r.core_hz(), 168_000_000);
    }

    #[test]
    fn pll_settings_outside_the_manuals_ranges_are_warned_of() {
        let mut r = f4();
        // PLLM 4 from the HSI: VCO input 4 MHz
        write(&mut r, 4, 4 | (100 << 6) | (7 << 24), 0);
        let w = write(&mut r, 0, CR_RESET | PLLON, 0);
        assert!(w.iter().any(|w| w.contains("VCO input of 4 MHz")), "{w:?}");
        assert!(w.iter().all(|w| w.contains("RM0090 6.3.2")), "{w:?}");
    }

    #[test]
    fn an_apb_clock_above_its_maximum_is_warned_of() {
        let mut r = f4();
        write(&mut r, 4, 16 | (336 << 6) | (7 << 24), 0);
        write(&mut r, 0, CR_RESET | PLLON, 0);
        // PPRE1 /2: APB1 at 84 MHz
        let w = write(&mut r, 8, (4 << 10) | (4 << 13) | 2, PLL_LOCK_PS);
        assert!(
            w.iter().any(|w| w.contains("APB1 (PCLK1) is 84 MHz")),
            "{w:?}"
        );
    }

    #[test]
    fn the_clock_in_use_cannot_be_switched_off() {
        let mut r = f4();
        write(&mut r, 0, 0, 0);
        assert_ne!(read(&mut r, 0, 0) & HSION, 0, "RM0090 6.3.1");
    }

    #[test]
    fn an_unmodelled_rcc_register_is_refused_by_name() {
        let mut r = f4();
        let mut fx = Effects::default();
        let err = r
            .read(
                RCC + 0x88,
                at(0),
                &super::super::device::FixedClocks(1),
                &mut fx,
            )
            .unwrap_err();
        assert!(err.0.contains("RCC offset 0x088"), "{err:?}");
    }
}
