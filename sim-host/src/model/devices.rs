//! The vendor blocks a target file asks the host to answer (issue 40):
//! its clock tree (`[clocks]`) and its UARTs (`[[uart]]`), as the file
//! writes them and validated. The blocks' behaviour is
//! `host::devices`'.

use crate::model::memsys::Cited;
use serde::Deserialize;

/// The clock tree kinds the host models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClockKind {
    /// STM32F405/407: RCC and PWR (RM0090).
    Stm32f4,
    /// STM32F74x/75x: RCC and PWR with the over-drive (RM0385).
    Stm32f7,
    /// Raspberry Pi RP2040: RESETS, XOSC, PLL_SYS, PLL_USB, CLOCKS and
    /// the watchdog's tick (RP2040 datasheet 2.14 to 2.18, 4.7).
    Rp2040,
    /// Raspberry Pi RP2350: RESETS, XOSC, PLL_SYS, PLL_USB, CLOCKS and
    /// TICKS (RP2350 datasheet 7, 8.1 to 8.6).
    Rp2350,
}

impl ClockKind {
    fn is_stm32(self) -> bool {
        matches!(self, ClockKind::Stm32f4 | ClockKind::Stm32f7)
    }
}

/// Where an RP2040's clock tree starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClockStart {
    /// As the silicon leaves reset: clk_ref and clk_sys on the ring
    /// oscillator ([`RP2040_ROSC_HZ`]), the crystal and PLLs off, every
    /// block held in reset.
    Reset,
    /// As pico-sdk's runtime leaves it before `main` (runtime_init_clocks
    /// and the resets around it): the crystal and both PLLs running,
    /// clk_sys 125 MHz from PLL_SYS, clk_peri from clk_sys, clk_usb and
    /// clk_adc 48 MHz, clk_rtc 46875 Hz, the watchdog's tick at 1 MHz,
    /// every block out of reset. Needs the 12 MHz crystal the SDK's PLL
    /// settings are written for.
    PicoSdk,
}

/// The RP2040's ring oscillator at reset: "During boot the ROSC runs at a
/// nominal 6.5MHz and is guaranteed to be in the range 1.8MHz to 12MHz"
/// (RP2040 datasheet 2.17.1). The model runs it at the nominal figure.
pub const RP2040_ROSC_HZ: u64 = 6_500_000;

/// clk_sys as pico-sdk's runtime leaves it: SYS_CLK_HZ 125 MHz
/// (src/rp2040/hardware_regs/include/hardware/platform_defs.h), from a
/// 12 MHz crystal through PLL_SYS 1500 MHz / 6 / 2
/// (src/rp2_common/hardware_clocks/include/hardware/clocks.h).
pub const RP2040_SDK_SYS_HZ: u64 = 125_000_000;

/// The crystal pico-sdk's default PLL settings are written for (XOSC_HZ,
/// platform_defs.h; clocks.h has PLL settings only for 12 MHz).
pub const RP2040_SDK_XOSC_HZ: u64 = 12_000_000;

/// The RP2350's ring oscillator at reset: "During boot, the ROSC runs at
/// a nominal 11MHz" (RP2350 datasheet 8.3.1). The model runs it at the
/// nominal figure.
pub const RP2350_ROSC_HZ: u64 = 11_000_000;

/// clk_sys as pico-sdk's runtime leaves it on an RP2350: SYS_CLK_HZ 150
/// MHz (src/rp2350/hardware_regs/include/hardware/platform_defs.h), from
/// the 12 MHz crystal through PLL_SYS 1500 MHz / 5 / 2 (hardware_clocks/
/// include/hardware/clocks.h, PLL_SYS_POSTDIV1 "5 on RP2350").
pub const RP2350_SDK_SYS_HZ: u64 = 150_000_000;

/// The RP2350's rated clk_sys: RP2350 datasheet Table 540 (clk_sys,
/// nominal 150MHz).
pub const RP2350_MAX_SYS_HZ: u64 = 150_000_000;

/// `[clocks]` as a target file writes it. Which block addresses it needs
/// depends on `kind`: `rcc`, `pwr` and `hse_hz` for an STM32; `resets`,
/// `clocks`, `xosc`, `pll_sys`, `pll_usb`, `watchdog`, `xosc_hz` and
/// `start` for an RP2040; the same with `ticks` in place of `watchdog`
/// for an RP2350.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClocksFile {
    pub kind: ClockKind,
    /// RCC's base address.
    #[serde(default)]
    pub rcc: Option<Cited>,
    /// PWR's base address.
    #[serde(default)]
    pub pwr: Option<Cited>,
    /// The board's HSE crystal (0: none fitted).
    #[serde(default)]
    pub hse_hz: Option<Cited>,
    /// The RP2040's blocks' base addresses.
    #[serde(default)]
    pub resets: Option<Cited>,
    #[serde(default)]
    pub clocks: Option<Cited>,
    #[serde(default)]
    pub xosc: Option<Cited>,
    #[serde(default)]
    pub pll_sys: Option<Cited>,
    #[serde(default)]
    pub pll_usb: Option<Cited>,
    #[serde(default)]
    pub watchdog: Option<Cited>,
    /// The RP2350's tick generators (TICKS).
    #[serde(default)]
    pub ticks: Option<Cited>,
    /// The board's crystal on XIN/XOUT (0: none fitted).
    #[serde(default)]
    pub xosc_hz: Option<Cited>,
    /// Where the RP2040's tree starts.
    #[serde(default)]
    pub start: Option<ClockStart>,
    /// The core clock at reset (what `clock_hz` must say).
    pub reset_hz: Cited,
    /// The highest core clock the part allows (the flash's wait-state
    /// table must cover it).
    pub max_hz: Cited,
}

/// The RP2040's blocks, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rp2Blocks {
    pub resets: u64,
    pub clocks: u64,
    pub xosc: u64,
    pub pll_sys: u64,
    pub pll_usb: u64,
    pub watchdog: u64,
    pub xosc_hz: u64,
    pub start: ClockStart,
}

/// Bytes an RP2040 block spans with its atomic aliases: 4 KiB of
/// registers, then the XOR, SET and CLEAR aliases at +0x1000, +0x2000 and
/// +0x3000 (RP2040 datasheet 2.1.2).
pub const RP2_BLOCK: u64 = 0x4000;

/// A validated `[clocks]`. For an RP2040, `rcc`, `pwr` and `hse_hz` are 0
/// and `rp2` holds its blocks; for an STM32, `rp2` is `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClocksSpec {
    pub kind: ClockKind,
    pub rcc: u64,
    pub pwr: u64,
    pub hse_hz: u64,
    pub rp2: Option<Rp2Blocks>,
    /// TICKS' base on an RP2350 (whose `rp2.watchdog` is 0: its tick
    /// generators are TICKS'); 0 otherwise.
    pub ticks: u64,
    pub reset_hz: u64,
    pub max_hz: u64,
}

type FieldError = (String, String);

/// Checks `[clocks]` against the file's `clock_hz` (the clock at reset).
pub fn validate_clocks(f: ClocksFile, clock_hz: u64) -> Result<ClocksSpec, FieldError> {
    let err = |field: &str, m: String| Err((format!("clocks.{field}"), m));
    for (field, c) in [("reset_hz", &f.reset_hz), ("max_hz", &f.max_hz)] {
        if c.cite.trim().is_empty() {
            return err(field, "needs a `cite`".into());
        }
    }
    let (stm32, rp2, ticks) = if f.kind.is_stm32() {
        (stm32_fields(&f)?, None, 0)
    } else {
        let (blocks, ticks) = rp2_fields(&f)?;
        ((0, 0, 0), Some(blocks), ticks)
    };
    if let Some(b) = &rp2 {
        let (chip, expected) = match (f.kind, b.start) {
            (ClockKind::Rp2350, ClockStart::Reset) => ("an RP2350", RP2350_ROSC_HZ),
            (ClockKind::Rp2350, ClockStart::PicoSdk) => ("an RP2350", RP2350_SDK_SYS_HZ),
            (_, ClockStart::Reset) => ("an RP2040", RP2040_ROSC_HZ),
            (_, ClockStart::PicoSdk) => ("an RP2040", RP2040_SDK_SYS_HZ),
        };
        if f.reset_hz.value != expected {
            return err(
                "reset_hz",
                format!(
                    "{} Hz, but {chip} starting at {:?} runs clk_sys at {expected} Hz",
                    f.reset_hz.value, b.start
                ),
            );
        }
    }
    if f.reset_hz.value != clock_hz {
        return err(
            "reset_hz",
            format!(
                "{} Hz, but clock_hz is {clock_hz}: with a clock tree, clock_hz is the clock \
                 at reset",
                f.reset_hz.value
            ),
        );
    }
    if f.max_hz.value < f.reset_hz.value {
        return err("max_hz", "below the clock at reset".into());
    }
    Ok(ClocksSpec {
        kind: f.kind,
        rcc: stm32.0,
        pwr: stm32.1,
        hse_hz: stm32.2,
        rp2,
        ticks,
        reset_hz: f.reset_hz.value,
        max_hz: f.max_hz.value,
    })
}

/// A field `kind` needs, cited; or the error naming it.
fn needed<'a>(
    f: &'a ClocksFile,
    field: &str,
    c: &'a Option<Cited>,
) -> Result<&'a Cited, FieldError> {
    let at = format!("clocks.{field}");
    match c {
        None => Err((at, format!("needed for kind {:?}", f.kind))),
        Some(c) if c.cite.trim().is_empty() => Err((at, "needs a `cite`".into())),
        Some(c) => Ok(c),
    }
}

/// Fields of the other kinds are refused by name (a typo'd kind would
/// otherwise silently ignore them).
fn refuse_foreign(f: &ClocksFile, fields: &[(&str, bool)]) -> Result<(), FieldError> {
    match fields.iter().find(|(_, present)| *present) {
        Some((field, _)) => Err((
            format!("clocks.{field}"),
            format!("not a field of kind {:?}", f.kind),
        )),
        None => Ok(()),
    }
}

fn stm32_fields(f: &ClocksFile) -> Result<(u64, u64, u64), FieldError> {
    refuse_foreign(
        f,
        &[
            ("resets", f.resets.is_some()),
            ("clocks", f.clocks.is_some()),
            ("xosc", f.xosc.is_some()),
            ("pll_sys", f.pll_sys.is_some()),
            ("pll_usb", f.pll_usb.is_some()),
            ("watchdog", f.watchdog.is_some()),
            ("ticks", f.ticks.is_some()),
            ("xosc_hz", f.xosc_hz.is_some()),
            ("start", f.start.is_some()),
        ],
    )?;
    let rcc = needed(f, "rcc", &f.rcc)?.value;
    let pwr = needed(f, "pwr", &f.pwr)?.value;
    let hse_hz = needed(f, "hse_hz", &f.hse_hz)?.value;
    if rcc % 0x400 != 0 || pwr % 0x400 != 0 {
        return Err((
            "clocks.rcc".into(),
            "RCC and PWR start on 1 KiB boundaries".into(),
        ));
    }
    Ok((rcc, pwr, hse_hz))
}

/// An RP2040's or RP2350's blocks, and TICKS' base (0 on an RP2040).
fn rp2_fields(f: &ClocksFile) -> Result<(Rp2Blocks, u64), FieldError> {
    let rp2350 = f.kind == ClockKind::Rp2350;
    refuse_foreign(
        f,
        &[
            ("rcc", f.rcc.is_some()),
            ("pwr", f.pwr.is_some()),
            ("hse_hz", f.hse_hz.is_some()),
            ("watchdog", rp2350 && f.watchdog.is_some()),
            ("ticks", !rp2350 && f.ticks.is_some()),
        ],
    )?;
    // the RP2350's tick generators are TICKS, not the watchdog's
    let (tick_field, tick_base) = match rp2350 {
        true => ("ticks", &f.ticks),
        false => ("watchdog", &f.watchdog),
    };
    let bases = [
        ("resets", needed(f, "resets", &f.resets)?.value),
        ("clocks", needed(f, "clocks", &f.clocks)?.value),
        ("xosc", needed(f, "xosc", &f.xosc)?.value),
        ("pll_sys", needed(f, "pll_sys", &f.pll_sys)?.value),
        ("pll_usb", needed(f, "pll_usb", &f.pll_usb)?.value),
        (tick_field, needed(f, tick_field, tick_base)?.value),
    ];
    for (i, (field, base)) in bases.iter().enumerate() {
        if base % RP2_BLOCK != 0 {
            return Err((
                format!("clocks.{field}"),
                format!("{base:#x}: an RP2040 or RP2350 block starts on a 16 KiB boundary (its registers and their three atomic aliases)"),
            ));
        }
        if let Some((other, _)) = bases[..i].iter().find(|(_, b)| b == base) {
            return Err((
                format!("clocks.{field}"),
                format!("{base:#x} is also clocks.{other}"),
            ));
        }
    }
    let xosc_hz = needed(f, "xosc_hz", &f.xosc_hz)?.value;
    let start = f.start.ok_or_else(|| {
        (
            "clocks.start".to_string(),
            format!("needed for kind {:?}: \"reset\" (the silicon's reset state) or \"pico-sdk\" (as pico-sdk's runtime leaves the clocks)", f.kind),
        )
    })?;
    if start == ClockStart::PicoSdk && xosc_hz != RP2040_SDK_XOSC_HZ {
        return Err((
            "clocks.xosc_hz".into(),
            format!(
                "{xosc_hz} Hz: pico-sdk's PLL settings (clocks.h) are for a 12 MHz crystal only"
            ),
        ));
    }
    let blocks = Rp2Blocks {
        resets: bases[0].1,
        clocks: bases[1].1,
        xosc: bases[2].1,
        pll_sys: bases[3].1,
        pll_usb: bases[4].1,
        watchdog: if rp2350 { 0 } else { bases[5].1 },
        xosc_hz,
        start,
    };
    Ok((blocks, if rp2350 { bases[5].1 } else { 0 }))
}

/// The UART kinds the host models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UartKind {
    /// ARM's CMSDK APB UART (every MPS2 board).
    Cmsdk,
    /// The STM32F4's USART (RM0090 30.6).
    Stm32f4Usart,
    /// The STM32F7's USART (RM0385 34.8).
    Stm32f7Usart,
    /// ARM's PrimeCell PL011 (RP2040, RP2350).
    Pl011,
}

/// A clock-tree bit that must be set (or clear) for a block to work: an
/// enable bit, or a reset a block must be out of.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateFile {
    pub register: u64,
    pub bit: u8,
    /// The value the bit has while the block works.
    #[serde(default = "set")]
    pub set: bool,
    pub cite: String,
}

fn set() -> bool {
    true
}

/// A `[[uart]]` entry as a target file writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UartFile {
    pub kind: UartKind,
    /// The name firmware and manuals use ("USART2", "UART0").
    pub name: String,
    pub base: u64,
    /// The clock it counts its baud rate from, as the clock tree names it
    /// ("pclk1", "clk_peri"; without a clock tree, the core clock).
    pub clock: String,
    /// What must hold in the clock tree before it is used.
    #[serde(default)]
    pub gates: Vec<GateFile>,
    pub cite: String,
}

/// A validated `[[uart]]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct UartSpec {
    pub kind: UartKind,
    pub name: String,
    pub base: u64,
    pub clock: String,
    pub gates: Vec<GateFile>,
}

impl UartKind {
    /// Bytes of its register block: an STM32 USART's 1 KiB (RM0090 Table
    /// 1: USART2 0x4000 4400 - 0x4000 47FF), the CMSDK's and PL011's 4 KiB
    /// (their identification registers end at 0xFFC).
    pub fn block_bytes(self) -> u64 {
        match self {
            UartKind::Stm32f4Usart | UartKind::Stm32f7Usart => 0x400,
            UartKind::Cmsdk | UartKind::Pl011 => 0x1000,
        }
    }
}

/// Checks the `[[uart]]` entries: named, cited, page-aligned bases,
/// distinct.
pub fn validate_uarts(files: Vec<UartFile>) -> Result<Vec<UartSpec>, FieldError> {
    let mut out: Vec<UartSpec> = Vec::new();
    for (i, u) in files.into_iter().enumerate() {
        let field = |f: &str| format!("uart[{i}].{f}");
        if u.cite.trim().is_empty() || u.gates.iter().any(|g| g.cite.trim().is_empty()) {
            return Err((field("cite"), "every UART and gate needs a `cite`".into()));
        }
        if u.base % u.kind.block_bytes() != 0 {
            return Err((
                field("base"),
                format!(
                    "{:#x}: not aligned to its {:#x}-byte block",
                    u.base,
                    u.kind.block_bytes()
                ),
            ));
        }
        if u.gates.iter().any(|g| g.bit > 31) {
            return Err((field("gates"), "a bit is 0 to 31".into()));
        }
        if out.iter().any(|o| o.base == u.base || o.name == u.name) {
            return Err((field("name"), format!("{} listed twice", u.name)));
        }
        out.push(UartSpec {
            kind: u.kind,
            name: u.name,
            base: u.base,
            clock: u.clock,
            gates: u.gates,
        });
    }
    Ok(out)
}

/// The GPIO port kinds the host models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GpioKind {
    /// The STM32F4's GPIO port (RM0090 8.4).
    Stm32f4,
    /// The RP2040's SIO (datasheet 2.3.1): CPUID, GPIO_OUT/OE, the
    /// spinlocks and the hardware divider (`host::devices::rp2040_sio`).
    Rp2040Sio,
    /// The RP2040's IO_BANK0: each GPIO's function select (2.19.6.1).
    Rp2040IoBank0,
    /// The RP2040's PADS_BANK0: each GPIO's pad control (2.19.6.3).
    Rp2040PadsBank0,
}

impl GpioKind {
    /// Bytes of its register block: an STM32 port's 1 KiB (RM0090 Table
    /// 1), the SIO's 4 KiB page (its registers end below 0x180), an
    /// RP2040 APB block's 16 KiB (its registers and the XOR, SET and
    /// CLEAR aliases at +0x1000, +0x2000, +0x3000: datasheet 2.1.2).
    pub fn block_bytes(self) -> u64 {
        match self {
            GpioKind::Stm32f4 => 0x400,
            GpioKind::Rp2040Sio => 0x1000,
            GpioKind::Rp2040IoBank0 | GpioKind::Rp2040PadsBank0 => 0x4000,
        }
    }

    /// The name a block of this kind must have (the STM32's ports:
    /// GPIOA to GPIOK, checked apart).
    fn fixed_name(self) -> Option<&'static str> {
        match self {
            GpioKind::Stm32f4 => None,
            GpioKind::Rp2040Sio => Some("SIO"),
            GpioKind::Rp2040IoBank0 => Some("IO_BANK0"),
            GpioKind::Rp2040PadsBank0 => Some("PADS_BANK0"),
        }
    }
}

/// A `[[gpio]]` entry as a target file writes it: an STM32 port, or one
/// of the RP2040's GPIO blocks (SIO, IO_BANK0, PADS_BANK0).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpioFile {
    pub kind: GpioKind,
    /// "GPIOA" to "GPIOK": the letter picks the port's reset values (an
    /// RP2040 block: its own name, "SIO").
    pub name: String,
    pub base: u64,
    /// What must hold in the clock tree before it is used.
    #[serde(default)]
    pub gates: Vec<GateFile>,
    pub cite: String,
}

/// A validated `[[gpio]]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct GpioSpec {
    pub kind: GpioKind,
    pub name: String,
    pub base: u64,
    /// The port's letter as a number: 0 for A.
    pub port: u8,
    pub gates: Vec<GateFile>,
}

/// Checks the `[[gpio]]` entries: named GPIOA to GPIOK (an RP2040 block:
/// by its kind), cited, bases on their blocks, distinct, clear of the
/// UARTs.
pub fn validate_gpios(
    files: Vec<GpioFile>,
    uarts: &[UartSpec],
) -> Result<Vec<GpioSpec>, FieldError> {
    let mut out: Vec<GpioSpec> = Vec::new();
    for (i, g) in files.into_iter().enumerate() {
        let field = |f: &str| format!("gpio[{i}].{f}");
        if g.cite.trim().is_empty() || g.gates.iter().any(|g| g.cite.trim().is_empty()) {
            return Err((
                field("cite"),
                "every GPIO port and gate needs a `cite`".into(),
            ));
        }
        let block = g.kind.block_bytes();
        let port = match (g.kind.fixed_name(), g.name.strip_prefix("GPIO")) {
            (Some(name), _) if name == g.name => 0,
            (Some(name), _) => {
                return Err((
                    field("name"),
                    format!("`{}`: a block of this kind is named {name}", g.name),
                ))
            }
            (None, Some(letter)) if matches!(letter.as_bytes(), [b'A'..=b'K']) => {
                letter.as_bytes()[0] - b'A'
            }
            _ => {
                return Err((
                    field("name"),
                    format!("`{}`: a port is named GPIOA to GPIOK", g.name),
                ))
            }
        };
        if g.base % block != 0 {
            return Err((
                field("base"),
                format!("{:#x}: not aligned to its {block:#x}-byte block", g.base),
            ));
        }
        if g.gates.iter().any(|g| g.bit > 31) {
            return Err((field("gates"), "a bit is 0 to 31".into()));
        }
        if out.iter().any(|o| o.base == g.base || o.name == g.name) {
            return Err((field("name"), format!("{} listed twice", g.name)));
        }
        if let Some(u) = uarts
            .iter()
            .find(|u| g.base < u.base + u.kind.block_bytes() && u.base < g.base + block)
        {
            return Err((field("base"), format!("{:#x} overlaps {}", g.base, u.name)));
        }
        out.push(GpioSpec {
            kind: g.kind,
            name: g.name,
            base: g.base,
            port,
            gates: g.gates,
        });
    }
    Ok(out)
}

/// `bit_band` as a target file writes it: a peripheral bit-band region
/// and its alias (ARMv7-M's optional bit-banding, as the Cortex-M3 and
/// M4 implement it).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BitBandFile {
    /// The bit-band region's start (the peripherals' 0x4000 0000).
    pub region: u64,
    /// Its bytes.
    pub size: u64,
    /// The alias region's start: the word at alias + 32 x offset + 4 x bit
    /// is bit `bit` of the byte at region + offset.
    pub alias: u64,
    pub cite: String,
}

/// A validated `bit_band`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitBandSpec {
    pub region: u64,
    pub size: u64,
    pub alias: u64,
}

impl BitBandSpec {
    /// The alias word's (byte address, bit of that byte) for an address
    /// of the alias region, if it is one.
    pub fn target_of(&self, addr: u64) -> Option<(u64, u8)> {
        let offset = addr.checked_sub(self.alias)?;
        (offset < self.size * 32).then(|| (self.region + offset / 32, (offset % 32 / 4) as u8))
    }

    /// The alias range of the region's bytes `range`.
    pub fn alias_of(&self, range: std::ops::Range<u64>) -> std::ops::Range<u64> {
        let at = |a: u64| self.alias + (a - self.region) * 32;
        at(range.start)..at(range.end)
    }
}

/// Checks `bit_band`: cited, on 4 KiB pages (the engine maps the alias
/// of each modelled page).
pub fn validate_bit_band(f: BitBandFile) -> Result<BitBandSpec, FieldError> {
    const PAGE: u64 = 0x1000;
    if f.cite.trim().is_empty() {
        return Err(("bit_band.cite".into(), "needs a `cite`".into()));
    }
    if f.region % PAGE != 0 || f.alias % PAGE != 0 || f.size % PAGE != 0 || f.size == 0 {
        return Err((
            "bit_band".into(),
            "region, size and alias are whole 4 KiB pages".into(),
        ));
    }
    let alias_end = f.size.checked_mul(32).and_then(|n| n.checked_add(f.alias));
    if alias_end.is_none_or(|end| f.alias < f.region + f.size && f.region < end) {
        return Err((
            "bit_band.alias".into(),
            format!(
                "{:#x}: the alias region overlaps its bit-band region",
                f.alias
            ),
        ));
    }
    Ok(BitBandSpec {
        region: f.region,
        size: f.size,
        alias: f.alias,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cited(value: u64) -> Cited {
        Cited {
            value,
            cite: "test".into(),
        }
    }

    fn clocks(reset_hz: u64) -> ClocksFile {
        ClocksFile {
            kind: ClockKind::Stm32f4,
            rcc: Some(cited(0x4002_3800)),
            pwr: Some(cited(0x4000_7000)),
            hse_hz: Some(cited(8_000_000)),
            resets: None,
            clocks: None,
            xosc: None,
            pll_sys: None,
            pll_usb: None,
            watchdog: None,
            ticks: None,
            xosc_hz: None,
            start: None,
            reset_hz: cited(reset_hz),
            max_hz: cited(168_000_000),
        }
    }

    fn rp2040(start: ClockStart, reset_hz: u64) -> ClocksFile {
        ClocksFile {
            kind: ClockKind::Rp2040,
            rcc: None,
            pwr: None,
            hse_hz: None,
            resets: Some(cited(0x4000_c000)),
            clocks: Some(cited(0x4000_8000)),
            xosc: Some(cited(0x4002_4000)),
            pll_sys: Some(cited(0x4002_8000)),
            pll_usb: Some(cited(0x4002_c000)),
            watchdog: Some(cited(0x4005_8000)),
            ticks: None,
            xosc_hz: Some(cited(12_000_000)),
            start: Some(start),
            reset_hz: cited(reset_hz),
            max_hz: cited(133_000_000),
        }
    }

    #[test]
    fn an_rp2040_tree_starts_on_the_rosc_or_where_pico_sdk_leaves_it() {
        let spec = validate_clocks(rp2040(ClockStart::Reset, 6_500_000), 6_500_000).unwrap();
        let blocks = spec.rp2.unwrap();
        assert_eq!((blocks.resets, blocks.xosc_hz), (0x4000_c000, 12_000_000));
        assert!(validate_clocks(rp2040(ClockStart::PicoSdk, 125_000_000), 125_000_000).is_ok());
        let (field, message) =
            validate_clocks(rp2040(ClockStart::Reset, 125_000_000), 125_000_000).unwrap_err();
        assert_eq!(field, "clocks.reset_hz");
        assert!(message.contains("6500000 Hz"), "{message}");
    }

    /// The `[clocks]` table proposed for targets/rp2040.toml (the file's
    /// own once it has one): the whole target loads with it.
    const RP2040_CLOCKS: &str = r#"
[clocks]
kind = "rp2040"
start = "pico-sdk"
resets = { value = 0x4000c000, cite = "RP2040 addressmap.h RESETS_BASE" }
clocks = { value = 0x40008000, cite = "RP2040 addressmap.h CLOCKS_BASE" }
xosc = { value = 0x40024000, cite = "RP2040 addressmap.h XOSC_BASE" }
pll_sys = { value = 0x40028000, cite = "RP2040 addressmap.h PLL_SYS_BASE" }
pll_usb = { value = 0x4002c000, cite = "RP2040 addressmap.h PLL_USB_BASE" }
watchdog = { value = 0x40058000, cite = "RP2040 addressmap.h WATCHDOG_BASE" }
xosc_hz = { value = 12_000_000, cite = "platform_defs.h XOSC_HZ" }
reset_hz = { value = 125_000_000, cite = "platform_defs.h SYS_CLK_HZ" }
max_hz = { value = 133_000_000, cite = "RP2040 datasheet 2.18.2" }
"#;

    #[test]
    fn the_rp2040_target_loads_with_its_proposed_clock_tree() {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../targets/rp2040.toml");
        let mut text = std::fs::read_to_string(&file).unwrap();
        // until the table is applied to the file
        if !text.contains("\n[clocks]") {
            text += RP2040_CLOCKS;
        }
        let target = crate::model::target::Target::parse(&text, &file).unwrap();
        let clocks = target.clocks.unwrap();
        assert_eq!(clocks.kind, ClockKind::Rp2040);
        assert_eq!(clocks.rp2.unwrap().start, ClockStart::PicoSdk);
        assert_eq!(clocks.reset_hz, 125_000_000);
    }

    /// An RP2350's table: `ticks` in place of `watchdog`, clk_sys at the
    /// ROSC's 11 MHz or pico-sdk's 150 MHz.
    #[test]
    fn an_rp2350_tree_takes_ticks_and_its_own_clocks() {
        let rp2350 = |start, reset_hz| ClocksFile {
            kind: ClockKind::Rp2350,
            watchdog: None,
            ticks: Some(cited(0x4010_8000)),
            max_hz: cited(150_000_000),
            ..rp2040(start, reset_hz)
        };
        let spec = validate_clocks(rp2350(ClockStart::PicoSdk, 150_000_000), 150_000_000).unwrap();
        assert_eq!((spec.ticks, spec.rp2.unwrap().watchdog), (0x4010_8000, 0));
        assert!(validate_clocks(rp2350(ClockStart::Reset, 11_000_000), 11_000_000).is_ok());
        let (field, message) =
            validate_clocks(rp2350(ClockStart::Reset, 6_500_000), 6_500_000).unwrap_err();
        assert_eq!(field, "clocks.reset_hz");
        assert!(message.contains("an RP2350 starting at Reset"), "{message}");
        let mut f = rp2350(ClockStart::PicoSdk, 150_000_000);
        f.watchdog = Some(cited(0x400d_8000));
        assert_eq!(
            validate_clocks(f, 150_000_000).unwrap_err().0,
            "clocks.watchdog"
        );
        let mut f = rp2350(ClockStart::PicoSdk, 150_000_000);
        f.ticks = None;
        assert_eq!(
            validate_clocks(f, 150_000_000).unwrap_err().0,
            "clocks.ticks"
        );
        let mut f = rp2040(ClockStart::Reset, 6_500_000);
        f.ticks = Some(cited(0x4010_8000));
        assert_eq!(validate_clocks(f, 6_500_000).unwrap_err().0, "clocks.ticks");
    }

    #[test]
    fn an_rp2040_tree_names_a_missing_misplaced_or_foreign_field() {
        let mut f = rp2040(ClockStart::Reset, 6_500_000);
        f.pll_usb = None;
        assert_eq!(
            validate_clocks(f, 6_500_000).unwrap_err().0,
            "clocks.pll_usb"
        );
        let mut f = rp2040(ClockStart::Reset, 6_500_000);
        f.xosc = Some(cited(0x4002_5000));
        assert_eq!(validate_clocks(f, 6_500_000).unwrap_err().0, "clocks.xosc");
        let mut f = rp2040(ClockStart::Reset, 6_500_000);
        f.pll_usb = Some(cited(0x4002_8000));
        let (field, message) = validate_clocks(f, 6_500_000).unwrap_err();
        assert_eq!(field, "clocks.pll_usb");
        assert!(message.contains("clocks.pll_sys"), "{message}");
        let mut f = rp2040(ClockStart::Reset, 6_500_000);
        f.rcc = Some(cited(0x4002_3800));
        assert_eq!(validate_clocks(f, 6_500_000).unwrap_err().0, "clocks.rcc");
        let mut f = rp2040(ClockStart::PicoSdk, 125_000_000);
        f.xosc_hz = Some(cited(16_000_000));
        assert_eq!(
            validate_clocks(f, 125_000_000).unwrap_err().0,
            "clocks.xosc_hz"
        );
        let mut f = clocks(16_000_000);
        f.pwr = None;
        assert_eq!(validate_clocks(f, 16_000_000).unwrap_err().0, "clocks.pwr");
        let mut f = clocks(16_000_000);
        f.start = Some(ClockStart::Reset);
        assert_eq!(
            validate_clocks(f, 16_000_000).unwrap_err().0,
            "clocks.start"
        );
    }

    #[test]
    fn clock_hz_must_be_the_clock_at_reset() {
        assert!(validate_clocks(clocks(16_000_000), 16_000_000).is_ok());
        let (field, message) = validate_clocks(clocks(16_000_000), 168_000_000).unwrap_err();
        assert_eq!(field, "clocks.reset_hz");
        assert!(message.contains("clock at reset"), "{message}");
    }

    #[test]
    fn a_uart_listed_twice_is_refused() {
        let uart = UartFile {
            kind: UartKind::Pl011,
            name: "UART0".into(),
            base: 0x4003_4000,
            clock: "clk_peri".into(),
            gates: Vec::new(),
            cite: "test".into(),
        };
        let (field, _) = validate_uarts(vec![uart.clone(), uart]).unwrap_err();
        assert_eq!(field, "uart[1].name");
    }

    #[test]
    fn a_gpio_port_is_named_by_its_letter() {
        let gpio = |name: &str| GpioFile {
            kind: GpioKind::Stm32f4,
            name: name.into(),
            base: 0x4002_0400,
            gates: Vec::new(),
            cite: "test".into(),
        };
        let ports = validate_gpios(vec![gpio("GPIOB")], &[]).unwrap();
        assert_eq!(ports[0].port, 1);
        let (field, message) = validate_gpios(vec![gpio("PORTB")], &[]).unwrap_err();
        assert_eq!(field, "gpio[0].name");
        assert!(message.contains("GPIOA to GPIOK"), "{message}");
        let (field, _) = validate_gpios(vec![gpio("GPIOB"), gpio("GPIOB")], &[]).unwrap_err();
        assert_eq!(field, "gpio[1].name");
    }

    #[test]
    fn an_rp2040_block_is_named_by_its_kind_and_aligned_to_its_aliases() {
        let block = |kind, name: &str, base| GpioFile {
            kind,
            name: name.into(),
            base,
            gates: Vec::new(),
            cite: "test".into(),
        };
        let ok = validate_gpios(
            vec![
                block(GpioKind::Rp2040Sio, "SIO", 0xd000_0000),
                block(GpioKind::Rp2040IoBank0, "IO_BANK0", 0x4001_4000),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(ok.len(), 2);
        let wrong = block(GpioKind::Rp2040Sio, "GPIOA", 0xd000_0000);
        let (field, message) = validate_gpios(vec![wrong], &[]).unwrap_err();
        assert_eq!(field, "gpio[0].name");
        assert!(message.contains("named SIO"), "{message}");
        // the 16 KiB of the block and its atomic aliases
        let unaligned = block(GpioKind::Rp2040PadsBank0, "PADS_BANK0", 0x4001_d000);
        let (field, message) = validate_gpios(vec![unaligned], &[]).unwrap_err();
        assert_eq!(field, "gpio[0].base");
        assert!(message.contains("0x4000-byte"), "{message}");
    }

    /// RM0090 2.3.3's example in the peripheral region: bit 2 of the byte
    /// at 0x4000 0300 is the alias word 0x4200 0000 + 0x300 x 32 + 2 x 4.
    #[test]
    fn an_alias_word_names_its_bit() {
        let bb = validate_bit_band(BitBandFile {
            region: 0x4000_0000,
            size: 0x10_0000,
            alias: 0x4200_0000,
            cite: "test".into(),
        })
        .unwrap();
        assert_eq!(bb.target_of(0x4200_6008), Some((0x4000_0300, 2)));
        assert_eq!(bb.target_of(0x4400_0000), None);
        assert_eq!(
            bb.alias_of(0x4002_3000..0x4002_4000),
            0x4246_0000..0x4248_0000
        );
    }
}
