//! A target file's `[system]` section: the board around the core. The
//! core's System Control Space facts (`model::cores`) with a part's own
//! values (CPUID revision, IRQ count, priority bits, latencies), the
//! board's peripheral ranges (named in faults, answered by
//! `--peripherals ignore`) and, on RISC-V, the machine timer's registers.
//! Every number a file gives carries a citation.
//!
//! ```toml
//! [system]
//! cpuid = { value = 0x410CC601, cite = "Cortex-M0+ TRM r0p1 ..." }
//! irqs = { value = 32, cite = "..." }
//! priority_bits = { value = 2, cite = "..." }
//! exception_entry = { value = 15, cite = "Cortex-M0+ TRM 3.6.1: 15 cycles" }
//! peripherals = [
//!   { name = "APB", start = 0x40000000, size = 0x10000, cite = "AN385 memory map" },
//! ]
//! machine_timer = { base = 0xd00001a4, tick_hz = 1000000, cite = "RP2350 datasheet, SIO" }
//! ```

use crate::model::cores::{self, Cited, CoreFacts};
use serde::Deserialize;

/// A number with its source, as a file writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CitedValue {
    pub value: u64,
    pub cite: String,
}

/// A vendor peripheral range of the board.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Peripheral {
    pub name: String,
    pub start: u64,
    pub size: u64,
    pub cite: String,
}

impl Peripheral {
    pub fn end(&self) -> u64 {
        self.start + self.size
    }
}

/// The RISC-V machine timer (`mtime`, `mtimecmp`) of a board: RP2350's
/// SIO layout, from `base` (MTIME_CTRL): MTIME_CTRL +0, MTIME +0xc,
/// MTIMEH +0x10, MTIMECMP +0x14, MTIMECMPH +0x18.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineTimer {
    pub base: u64,
    /// The timer's tick when MTIME_CTRL.FULLSPEED is clear (the core clock
    /// when it is set).
    pub tick_hz: u64,
    pub cite: String,
}

impl MachineTimer {
    /// The 4 KiB page that holds its registers (Unicorn maps pages).
    pub fn page(&self) -> u64 {
        self.base & !0xfff
    }
}

/// The `[system]` section as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemFile {
    cpuid: Option<CitedValue>,
    irqs: Option<CitedValue>,
    priority_bits: Option<CitedValue>,
    exception_entry: Option<CitedValue>,
    exception_return: Option<CitedValue>,
    tail_chain: Option<CitedValue>,
    #[serde(default)]
    peripherals: Vec<Peripheral>,
    machine_timer: Option<MachineTimer>,
}

/// The board around the core, validated.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct System {
    /// The System Control Space facts (Cortex-M cores only).
    pub core: Option<CoreFacts>,
    pub peripherals: Vec<Peripheral>,
    pub machine_timer: Option<MachineTimer>,
}

/// A field of `[system]` and what is wrong with it.
pub type SystemError = (String, String);

/// The most external interrupts an NVIC has (ARMv7-M B3.4: 496; ARMv6-M
/// has 32).
const MAX_IRQS: u64 = 496;

impl SystemFile {
    /// The board of a core whose Unicorn model is `cpu`.
    pub fn validate(self, cpu: &str) -> Result<System, SystemError> {
        let mut core = cores::facts(cpu);
        if let Some(facts) = core.as_mut() {
            self.apply_to(facts)?;
        } else if let Some(field) = self.first_scs_field() {
            return Err((
                format!("system.{field}"),
                format!("`{cpu}` has no System Control Space (only Cortex-M cores do)"),
            ));
        }
        for (i, p) in self.peripherals.iter().enumerate() {
            check_peripheral(i, p, &self.peripherals[..i])?;
        }
        if let Some(t) = &self.machine_timer {
            check_machine_timer(t)?;
        }
        Ok(System {
            core,
            peripherals: self.peripherals,
            machine_timer: self.machine_timer,
        })
    }

    fn first_scs_field(&self) -> Option<&'static str> {
        [
            ("cpuid", self.cpuid.is_some()),
            ("irqs", self.irqs.is_some()),
            ("priority_bits", self.priority_bits.is_some()),
            ("exception_entry", self.exception_entry.is_some()),
            ("exception_return", self.exception_return.is_some()),
            ("tail_chain", self.tail_chain.is_some()),
        ]
        .into_iter()
        .find(|(_, given)| *given)
        .map(|(name, _)| name)
    }

    /// Overrides the core's facts with the file's, each checked.
    fn apply_to(&self, facts: &mut CoreFacts) -> Result<(), SystemError> {
        if let Some(v) = &self.cpuid {
            facts.cpuid = checked("cpuid", v, 0..=u64::from(u32::MAX))? as u32;
            facts.cpuid_cite = v.cite.clone().into();
        }
        if let Some(v) = &self.irqs {
            facts.irqs = checked("irqs", v, 1..=MAX_IRQS)? as u32;
        }
        if let Some(v) = &self.priority_bits {
            facts.priority_bits = checked("priority_bits", v, 2..=8)? as u8;
        }
        for (field, given, slot) in [
            ("exception_entry", &self.exception_entry, &mut facts.entry),
            ("exception_return", &self.exception_return, &mut facts.exit),
            ("tail_chain", &self.tail_chain, &mut facts.tail_chain),
        ] {
            if let Some(v) = given {
                *slot = Cited {
                    cycles: checked(field, v, 0..=10_000)? as u32,
                    cite: v.cite.clone().into(),
                };
            }
        }
        Ok(())
    }
}

fn checked(
    field: &str,
    v: &CitedValue,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, SystemError> {
    if v.cite.trim().is_empty() {
        return Err((
            format!("system.{field}.cite"),
            "every number of [system] cites its source".into(),
        ));
    }
    if !range.contains(&v.value) {
        return Err((
            format!("system.{field}.value"),
            format!("{}: expected {} to {}", v.value, range.start(), range.end()),
        ));
    }
    Ok(v.value)
}

fn check_peripheral(i: usize, p: &Peripheral, before: &[Peripheral]) -> Result<(), SystemError> {
    let field = |name: &str| format!("system.peripherals[{i}].{name}");
    if p.cite.trim().is_empty() {
        return Err((
            field("cite"),
            "every peripheral range cites its source".into(),
        ));
    }
    if p.size == 0 || p.start.checked_add(p.size).is_none_or(|end| end > 1 << 32) {
        return Err((
            field("size"),
            format!(
                "{:#x}+{:#x}: expected a non-empty range inside the 32-bit space",
                p.start, p.size
            ),
        ));
    }
    if let Some(q) = before
        .iter()
        .find(|q| p.start < q.end() && q.start < p.end())
    {
        return Err((
            field("start"),
            format!("`{}` overlaps `{}`", p.name, q.name),
        ));
    }
    Ok(())
}

fn check_machine_timer(t: &MachineTimer) -> Result<(), SystemError> {
    if t.cite.trim().is_empty() {
        return Err((
            "system.machine_timer.cite".into(),
            "the machine timer cites its source".into(),
        ));
    }
    if t.tick_hz == 0 || t.base % 4 != 0 || t.base > u64::from(u32::MAX) - 0x1c {
        return Err((
            "system.machine_timer".into(),
            format!(
                "base {:#x}, tick_hz {}: expected a word-aligned 32-bit base and a positive tick",
                t.base, t.tick_hz
            ),
        ));
    }
    Ok(())
}
