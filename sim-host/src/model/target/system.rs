//! A target file's `[system]` section: the board around the core. The
//! core's System Control Space facts (`model::cores`) with a part's own
//! values (CPUID revision, IRQ count, priority bits, latencies), the
//! board's peripheral ranges (named in faults, answered by
//! `--peripherals ignore`) and, on RISC-V, how the core takes traps
//! (`trap_entry`, `interrupt_entry`, `mtval`) and the machine timer's
//! registers. Every number a file gives carries a citation.
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
//! # RISC-V
//! trap_entry = { value = 3, cite = "Hazard3 instruction_timings.adoc, Trap Request" }
//! interrupt_entry = { value = 3, cite = "..." }
//! mtval = { value = "zero", cite = "Hazard3 csr.adoc: mtval hardwired to 0" }
//! machine_timer = { kind = "rp2350-sio", base = 0xd00001a4, tick_hz = 1000000, cite = "RP2350 datasheet, SIO" }
//! ```

use crate::model::cores::{self, Cite, Cited, CoreFacts};
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

/// The register layout of a board's RISC-V machine timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimerKind {
    /// RP2350's SIO platform timer, from `base` (MTIME_CTRL): MTIME_CTRL
    /// +0, MTIME +0xc, MTIMEH +0x10, MTIMECMP +0x14, MTIMECMPH +0x18;
    /// the machine timer interrupt only.
    Rp2350Sio,
    /// SiFive's Core-Local Interruptor (CLINT), from `base`: msip +0
    /// (the machine software interrupt), mtimecmp +0x4000 and mtime
    /// +0xbff8, both 64 bits as two words.
    SifiveClint,
}

impl TimerKind {
    /// As a target file writes it.
    pub fn name(self) -> &'static str {
        match self {
            TimerKind::Rp2350Sio => "rp2350-sio",
            TimerKind::SifiveClint => "sifive-clint",
        }
    }

    /// The bytes from `base` its registers span.
    pub fn span(self) -> u64 {
        match self {
            TimerKind::Rp2350Sio => 0x1c,
            TimerKind::SifiveClint => 0xc000,
        }
    }
}

/// The RISC-V machine timer (`mtime`, `mtimecmp`) of a board.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineTimer {
    pub kind: TimerKind,
    pub base: u64,
    /// The rate mtime counts at (on the RP2350's SIO, while
    /// MTIME_CTRL.FULLSPEED is clear; set, it counts core cycles).
    pub tick_hz: u64,
    pub cite: String,
}

/// Unicorn maps whole pages.
const PAGE: u64 = 0x1000;

impl MachineTimer {
    /// The 4 KiB pages that hold its registers (Unicorn maps pages).
    pub fn pages(&self) -> std::ops::Range<u64> {
        let end = (self.base + self.kind.span()).div_ceil(PAGE) * PAGE;
        (self.base & !(PAGE - 1))..end
    }

    /// Its registers, what mtime counts and the interrupts it raises, in
    /// words.
    pub fn describe(&self) -> String {
        let (kind, b) = (self.kind.name(), self.base);
        match self.kind {
            TimerKind::Rp2350Sio => format!(
                "{kind} at {b:#010x} (MTIME_CTRL): mtime at {:#010x} counts {} Hz (with \
                 MTIME_CTRL.FULLSPEED the core clock), mtimecmp at {:#010x} raises the machine \
                 timer interrupt",
                b + 0xc,
                self.tick_hz,
                b + 0x14
            ),
            TimerKind::SifiveClint => format!(
                "{kind} at {b:#010x}: mtime at {:#010x} counts {} Hz, mtimecmp at {:#010x} \
                 raises the machine timer interrupt, msip at {b:#010x} the machine software \
                 interrupt",
                b + 0xbff8,
                self.tick_hz,
                b + 0x4000
            ),
        }
    }
}

/// What a RISC-V core writes to `mtval` when it takes an exception
/// (privileged spec 3.1.16: the platform says which exceptions write it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TrapValue {
    /// Read-only zero: no exception writes it.
    Zero,
    /// The faulting address of a misaligned access, the instruction bits
    /// of an illegal instruction, the address of an EBREAK; 0 otherwise.
    Informative,
}

/// `mtval = { value = "zero", cite = "..." }` as a file writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CitedTrapValue {
    pub value: TrapValue,
    pub cite: String,
}

/// How a RISC-V core takes a trap, each fact with its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrapFacts {
    /// A synchronous trap: the cycles from the trapping instruction's
    /// issue to the handler's first instruction (in place of the
    /// instruction's own price).
    pub entry: Cited,
    /// An interrupt: the cycles from the interrupted instruction boundary
    /// to the handler's first instruction.
    pub interrupt_entry: Option<Cited>,
    pub mtval: TrapValue,
    pub mtval_cite: Cite,
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
    trap_entry: Option<CitedValue>,
    interrupt_entry: Option<CitedValue>,
    mtval: Option<CitedTrapValue>,
    machine_timer: Option<MachineTimer>,
}

/// The board around the core, validated.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct System {
    /// The System Control Space facts (Cortex-M cores only).
    pub core: Option<CoreFacts>,
    pub peripherals: Vec<Peripheral>,
    /// How the core takes traps (RISC-V cores that say so).
    pub traps: Option<TrapFacts>,
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
        let traps = self.trap_facts(core.is_some())?;
        Ok(System {
            core,
            peripherals: self.peripherals,
            traps,
            machine_timer: self.machine_timer,
        })
    }

    /// The RISC-V trap facts, checked: none, or `trap_entry` and `mtval`,
    /// with `interrupt_entry` where there is a machine timer (its
    /// interrupts need it). None on a Cortex-M core.
    fn trap_facts(&self, cortex_m: bool) -> Result<Option<TrapFacts>, SystemError> {
        let given = [
            ("trap_entry", self.trap_entry.is_some()),
            ("interrupt_entry", self.interrupt_entry.is_some()),
            ("mtval", self.mtval.is_some()),
        ];
        if let Some((field, _)) = given.iter().find(|(_, g)| *g).filter(|_| cortex_m) {
            return Err((
                format!("system.{field}"),
                "RISC-V trap facts: a Cortex-M core takes exceptions as `model::cores` \
                 and exception_entry say"
                    .into(),
            ));
        }
        if cortex_m || !(given.iter().any(|(_, g)| *g) || self.machine_timer.is_some()) {
            return Ok(None);
        }
        let entry = self
            .trap_entry
            .as_ref()
            .ok_or_else(|| missing("trap_entry"))?;
        let mtval = self.mtval.as_ref().ok_or_else(|| missing("mtval"))?;
        if self.machine_timer.is_some() && self.interrupt_entry.is_none() {
            return Err(missing("interrupt_entry"));
        }
        if mtval.cite.trim().is_empty() {
            return Err((
                "system.mtval.cite".into(),
                "every fact of [system] cites its source".into(),
            ));
        }
        let cited = |field: &str, v: &CitedValue| -> Result<Cited, SystemError> {
            Ok(Cited {
                cycles: checked(field, v, 1..=1_000)? as u32,
                cite: v.cite.clone().into(),
            })
        };
        Ok(Some(TrapFacts {
            entry: cited("trap_entry", entry)?,
            interrupt_entry: self
                .interrupt_entry
                .as_ref()
                .map(|v| cited("interrupt_entry", v))
                .transpose()?,
            mtval: mtval.value,
            mtval_cite: mtval.cite.clone().into(),
        }))
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

/// A RISC-V trap fact the file does not give.
fn missing(field: &str) -> SystemError {
    (
        format!("system.{field}"),
        "missing: a RISC-V board that gives any of trap_entry, interrupt_entry, mtval or \
         machine_timer gives trap_entry and mtval, and with a machine timer interrupt_entry \
         (the cycles its interrupt takes to reach the handler)"
            .into(),
    )
}

fn check_machine_timer(t: &MachineTimer) -> Result<(), SystemError> {
    if t.cite.trim().is_empty() {
        return Err((
            "system.machine_timer.cite".into(),
            "the machine timer cites its source".into(),
        ));
    }
    // the CLINT's registers lie on their own pages (Unicorn maps pages)
    let align = match t.kind {
        TimerKind::Rp2350Sio => 4,
        TimerKind::SifiveClint => PAGE,
    };
    let in_range = t
        .base
        .checked_add(t.kind.span())
        .is_some_and(|end| end <= 1 << 32);
    if t.tick_hz == 0 || t.base % align != 0 || !in_range {
        return Err((
            "system.machine_timer".into(),
            format!(
                "base {:#x}, tick_hz {}: expected a {align}-byte aligned base whose {} registers \
                 fit the 32-bit space, and a positive tick",
                t.base,
                t.tick_hz,
                t.kind.name()
            ),
        ));
    }
    Ok(())
}
