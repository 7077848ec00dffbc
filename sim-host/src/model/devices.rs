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
}

/// `[clocks]` as a target file writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClocksFile {
    pub kind: ClockKind,
    /// RCC's base address.
    pub rcc: Cited,
    /// PWR's base address.
    pub pwr: Cited,
    /// The board's HSE crystal (0: none fitted).
    pub hse_hz: Cited,
    /// The core clock at reset (what `clock_hz` must say).
    pub reset_hz: Cited,
    /// The highest core clock the part allows (the flash's wait-state
    /// table must cover it).
    pub max_hz: Cited,
}

/// A validated `[clocks]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClocksSpec {
    pub kind: ClockKind,
    pub rcc: u64,
    pub pwr: u64,
    pub hse_hz: u64,
    pub reset_hz: u64,
    pub max_hz: u64,
}

type FieldError = (String, String);

/// Checks `[clocks]` against the file's `clock_hz` (the clock at reset).
pub fn validate_clocks(f: ClocksFile, clock_hz: u64) -> Result<ClocksSpec, FieldError> {
    let err = |field: &str, m: String| Err((format!("clocks.{field}"), m));
    for (field, c) in [
        ("rcc", &f.rcc),
        ("pwr", &f.pwr),
        ("hse_hz", &f.hse_hz),
        ("reset_hz", &f.reset_hz),
        ("max_hz", &f.max_hz),
    ] {
        if c.cite.trim().is_empty() {
            return err(field, "needs a `cite`".into());
        }
    }
    if f.rcc.value % 0x400 != 0 || f.pwr.value % 0x400 != 0 {
        return err("rcc", "RCC and PWR start on 1 KiB boundaries".into());
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
        rcc: f.rcc.value,
        pwr: f.pwr.value,
        hse_hz: f.hse_hz.value,
        reset_hz: f.reset_hz.value,
        max_hz: f.max_hz.value,
    })
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
}

/// A `[[gpio]]` entry as a target file writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpioFile {
    pub kind: GpioKind,
    /// "GPIOA" to "GPIOK": the letter picks the port's reset values.
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

/// Checks the `[[gpio]]` entries: named GPIOA to GPIOK, cited, bases on
/// their 1 KiB blocks, distinct, clear of the UARTs.
pub fn validate_gpios(
    files: Vec<GpioFile>,
    uarts: &[UartSpec],
) -> Result<Vec<GpioSpec>, FieldError> {
    const BLOCK: u64 = 0x400;
    let mut out: Vec<GpioSpec> = Vec::new();
    for (i, g) in files.into_iter().enumerate() {
        let field = |f: &str| format!("gpio[{i}].{f}");
        if g.cite.trim().is_empty() || g.gates.iter().any(|g| g.cite.trim().is_empty()) {
            return Err((
                field("cite"),
                "every GPIO port and gate needs a `cite`".into(),
            ));
        }
        let port = match g.name.strip_prefix("GPIO").map(str::as_bytes) {
            Some(&[letter @ b'A'..=b'K']) => letter - b'A',
            _ => {
                return Err((
                    field("name"),
                    format!("`{}`: a port is named GPIOA to GPIOK", g.name),
                ))
            }
        };
        if g.base % BLOCK != 0 {
            return Err((
                field("base"),
                format!("{:#x}: not aligned to its {BLOCK:#x}-byte block", g.base),
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
            .find(|u| g.base < u.base + u.kind.block_bytes() && u.base < g.base + BLOCK)
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
            rcc: cited(0x4002_3800),
            pwr: cited(0x4000_7000),
            hse_hz: cited(8_000_000),
            reset_hz: cited(reset_hz),
            max_hz: cited(168_000_000),
        }
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
