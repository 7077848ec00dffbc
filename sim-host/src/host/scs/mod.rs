//! The Cortex-M System Control Space (0xE000E000-0xE000EFFF) and the DWT
//! (0xE0001000-0xE0001FFF) as the host answers them, from the simulated
//! state of the core: the System Control Block (ARMv7-M B3.2, ARMv6-M
//! B3.2), SysTick (B3.3), the NVIC (B3.4), the debug registers DEMCR and
//! DHCSR (C1.6) and the DWT's cycle counter (C1.8). Nothing here knows the
//! emulator: the engine maps the range, passes each access with the cycle
//! count at the accessing instruction, and carries out the effects.
//!
//! A register is modelled or refused: an access to one this model does
//! not implement (the MPU's control, the cache maintenance operations, the
//! DWT's profiling counters, an ID register) is an error naming it, never
//! a number the tool cannot stand behind. Registers that hold state only
//! software reads back (SCR, ACTLR, the FP context registers) keep what is
//! written; registers that report faults read as zero (a fault ends the run
//! before any handler could read them).

pub mod dwt;
mod error;
mod names;
pub mod nvic;
pub mod systick;

use crate::model::cores::{CoreFacts, Profile};
use dwt::Dwt;
use nvic::Exceptions;
use systick::SysTick;

pub use error::ScsError;
pub use names::name_of;

/// Where the System Control Space and the DWT are (ARMv7-M B3.2.1, C1.8).
pub const SCS_BASE: u32 = 0xE000_E000;
pub const DWT_BASE: u32 = 0xE000_1000;
pub const BLOCK_SIZE: u32 = 0x1000;

/// What a write asks of the core beyond the register's own state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Effects {
    /// An exception became pending (or priorities changed): the engine
    /// looks for one to take at the next instruction boundary.
    pub check_exceptions: bool,
    /// AIRCR.SYSRESETREQ: the program asked for a system reset.
    pub reset: bool,
    /// SysTick's configuration changed: its next interrupt moved.
    pub timers_changed: bool,
}

const TRCENA: u32 = 1 << 24;
/// AIRCR.VECTKEY (writes) and VECTKEYSTAT (reads), B3.2.6.
const VECTKEY: u32 = 0x05FA;
const VECTKEYSTAT: u32 = 0xFA05;

/// The System Control Space of one core.
#[derive(Debug, Clone)]
pub struct Scs {
    facts: CoreFacts,
    pub exceptions: Exceptions,
    pub systick: SysTick,
    vtor: u32,
    scr: u32,
    ccr: u32,
    actlr: u32,
    shcsr_enables: u32,
    cpacr: u32,
    demcr: u32,
    dwt: Dwt,
}

impl Scs {
    pub fn new(facts: CoreFacts) -> Scs {
        let v6m = facts.profile == Profile::V6M;
        Scs {
            exceptions: Exceptions::new(facts.irqs, facts.priority_bits),
            systick: SysTick::default(),
            vtor: 0,
            scr: 0,
            // ARMv7-M: STKALIGN resets to 1 on these cores (B3.2.8);
            // ARMv6-M: STKALIGN and UNALIGN_TRP are RAO (B3.2.7)
            ccr: if v6m { 0x208 } else { 0x200 },
            actlr: 0,
            shcsr_enables: 0,
            cpacr: 0,
            demcr: 0,
            dwt: Dwt::new(facts.cpuid >> 4 & 0xfff),
            facts,
        }
    }

    pub fn facts(&self) -> &CoreFacts {
        &self.facts
    }

    pub fn vtor(&self) -> u32 {
        self.vtor
    }

    /// VTOR's value at reset: where the part's boot left the vector table
    /// (0 on a core without VTOR, whose table is always at 0).
    pub fn reset_vtor(&mut self, table: u32) {
        if self.has_vtor() {
            self.vtor = table & 0xFFFF_FF80;
        }
    }

    /// Whether an exception return may go to Thread mode while other
    /// exceptions are active: CCR.NONBASETHRDENA on ARMv7-M (B3.2.8);
    /// never on ARMv6-M (B1.5.8); always on ARMv8-M, which has no such
    /// check (the bit is RES1).
    pub fn returns_to_thread_while_active(&self) -> bool {
        match self.facts.profile {
            Profile::V6M => false,
            Profile::V7M => self.ccr & 1 != 0,
            Profile::V8MMain => true,
        }
    }

    /// FPCCR's HFRDY, MMRDY, BFRDY and MONRDY (bits 4, 5, 6, 8) as
    /// UpdateFPCCR() records them at a lazy FP allocation (ARMv7-M
    /// B1.5.6): whether HardFault, MemManage, BusFault and DebugMonitor
    /// could have preempted code running at `execution_priority`.
    pub fn fp_ready_bits(&self, execution_priority: i32) -> u32 {
        let e = &self.exceptions;
        let ready = |enabled: bool, number: u32| enabled && execution_priority > e.priority(number);
        let mut bits = 0;
        if execution_priority > -1 {
            bits |= 1 << 4;
        }
        if ready(self.shcsr_enables & (1 << 16) != 0, 4) {
            bits |= 1 << 5;
        }
        if ready(self.shcsr_enables & (1 << 17) != 0, 5) {
            bits |= 1 << 6;
        }
        if ready(self.demcr & (1 << 16) != 0, 12) {
            bits |= 1 << 8;
        }
        bits
    }

    /// CCR.STKALIGN: exception frames are 8-byte aligned.
    pub fn stack_align_8(&self) -> bool {
        self.ccr & (1 << 9) != 0
    }

    /// The cycle at which a timer next pends an exception.
    pub fn next_timer_event(&self) -> Option<u64> {
        self.systick.next_interrupt()
    }

    /// Pends what the timers have raised up to `now`.
    pub fn deliver_timers(&mut self, now: u64) {
        if self.systick.take_interrupt(now) {
            self.exceptions.set_pending(nvic::SYSTICK, true);
        }
    }

    fn v6m(&self) -> bool {
        self.facts.profile == Profile::V6M
    }

    fn refuse(addr: u32, message: impl Into<String>) -> ScsError {
        ScsError::refuse(addr, message)
    }

    fn not_modelled(addr: u32) -> ScsError {
        ScsError::not_modelled(addr)
    }

    fn absent(&self, addr: u32) -> ScsError {
        let profile = match self.facts.profile {
            Profile::V6M => "ARMv6-M",
            Profile::V7M => "ARMv7-M",
            Profile::V8MMain => "ARMv8-M",
        };
        Scs::refuse(addr, format!("does not exist on this {profile} core"))
    }

    /// A read of `size` bytes at `addr`; `now` is the cycle count at the
    /// reading instruction, `current` the exception the core is in (IPSR).
    pub fn read(&mut self, addr: u32, size: u8, now: u64, current: u32) -> Result<u32, ScsError> {
        if let Some(value) = self.read_bytes(addr, size) {
            return Ok(value);
        }
        if size != 4 || addr % 4 != 0 {
            return Err(Scs::refuse(
                addr,
                format!("a {size}-byte access (this register is word accessible only)"),
            ));
        }
        if (DWT_BASE..DWT_BASE + BLOCK_SIZE).contains(&addr) {
            return self.read_dwt(addr, now);
        }
        self.read_word(addr, now, current)
    }

    fn read_word(&mut self, addr: u32, now: u64, current: u32) -> Result<u32, ScsError> {
        let v6m = self.v6m();
        Ok(match addr {
            0xE000_E004 if !v6m => (self.facts.irqs.div_ceil(32)).saturating_sub(1),
            0xE000_E008 if !v6m => self.actlr,
            0xE000_E010 => self.systick.read_csr(now),
            0xE000_E014 => self.systick.rvr(),
            0xE000_E018 => self.systick.value(now),
            // NOREF (no reference clock), SKEW, TENMS unknown (B3.3.5)
            0xE000_E01C => 0xC000_0000,
            0xE000_E100..=0xE000_E13F => {
                self.nvic_bits(addr - 0xE000_E100, |e, n| e.irq_enabled(n))?
            }
            0xE000_E180..=0xE000_E1BF => {
                self.nvic_bits(addr - 0xE000_E180, |e, n| e.irq_enabled(n))?
            }
            0xE000_E200..=0xE000_E23F => {
                self.nvic_bits(addr - 0xE000_E200, |e, n| e.is_pending(n + nvic::FIRST_IRQ))?
            }
            0xE000_E280..=0xE000_E2BF => {
                self.nvic_bits(addr - 0xE000_E280, |e, n| e.is_pending(n + nvic::FIRST_IRQ))?
            }
            0xE000_E300..=0xE000_E33F if !v6m => {
                self.nvic_bits(addr - 0xE000_E300, |e, n| e.is_active(n + nvic::FIRST_IRQ))?
            }
            0xE000_ED00 => self.facts.cpuid,
            0xE000_ED04 => self.icsr(current),
            0xE000_ED08 => self.vtor,
            0xE000_ED0C => (VECTKEYSTAT << 16) | (u32::from(self.exceptions.prigroup) << 8),
            0xE000_ED10 => self.scr,
            0xE000_ED14 => self.ccr,
            0xE000_ED24 if !v6m => self.shcsr(),
            // fault status and address: no fault is ever taken (it ends the run)
            0xE000_ED28..=0xE000_ED3C if !v6m => 0,
            0xE000_ED88 if !v6m => self.cpacr & self.cpacr_implemented(),
            // no MPU (DREGION = 0, B3.5.5): nothing to program
            0xE000_ED90 => 0,
            0xE000_EDF0 => 0,
            0xE000_EDFC => self.demcr,
            0xE000_E004
            | 0xE000_E008
            | 0xE000_E300..=0xE000_E33F
            | 0xE000_ED24..=0xE000_ED3C
            | 0xE000_ED88
            | 0xE000_EF34..=0xE000_EF3C => return Err(self.absent(addr)),
            _ => return Err(Scs::not_modelled(addr)),
        })
    }

    /// Cortex-M0 implements none of VTOR's bits: ARMv6-M makes "the
    /// number of bits in the VTOR IMPLEMENTATION DEFINED. Unimplemented
    /// bits are RAZ/WI" (DDI 0419E B3.2.5), so it reads 0 and ignores
    /// writes, and the table stays at 0. The other cores implement it
    /// (Cortex-M0+: an option, which the RP2040 and most parts take).
    fn has_vtor(&self) -> bool {
        self.facts.cpuid >> 4 & 0xfff != 0xC20
    }

    /// CPACR's CP10 and CP11 fields: RAZ/WI without an FPU (B3.2.20).
    fn cpacr_implemented(&self) -> u32 {
        if self.facts.fpu {
            0xf << 20
        } else {
            0
        }
    }

    /// The registers byte (or halfword) accessible on ARMv7-M: SHPR1-3 and
    /// the NVIC_IPRs, one priority field per byte.
    fn read_bytes(&self, addr: u32, size: u8) -> Option<u32> {
        let number = self.priority_number(addr, size)?;
        Some((0..u32::from(size)).fold(0, |v, i| {
            v | u32::from(self.exceptions.priority_field(number + i)) << (8 * i)
        }))
    }

    /// The exception whose priority byte is at `addr`, for an access of
    /// `size` bytes that the profile allows there.
    fn priority_number(&self, addr: u32, size: u8) -> Option<u32> {
        let number = match addr {
            0xE000_ED18..=0xE000_ED23 => 4 + (addr - 0xE000_ED18),
            0xE000_E400..=0xE000_E5EF => nvic::FIRST_IRQ + (addr - 0xE000_E400),
            _ => return None,
        };
        let aligned = addr % u32::from(size) == 0 && matches!(size, 1 | 2 | 4);
        // ARMv6-M: word access only (B3.2.2, B3.4.2)
        let allowed = aligned && (!self.v6m() || size == 4);
        (allowed && number + u32::from(size) <= nvic::FIRST_IRQ + self.exceptions.irqs())
            .then_some(number)
    }

    fn nvic_bits(
        &self,
        offset: u32,
        bit: impl Fn(&Exceptions, u32) -> bool,
    ) -> Result<u32, ScsError> {
        let first = offset / 4 * 32;
        Ok((0..32)
            .filter(|i| first + i < self.exceptions.irqs() && bit(&self.exceptions, first + i))
            .fold(0, |v, i| v | 1 << i))
    }

    fn icsr(&self, current: u32) -> u32 {
        let e = &self.exceptions;
        let pending = e.highest_pending().unwrap_or(0);
        let irq_pending = (nvic::FIRST_IRQ..nvic::FIRST_IRQ + e.irqs()).any(|n| e.is_pending(n));
        let others_active = e.active_count() > usize::from(current != 0);
        (u32::from(e.is_pending(nvic::PENDSV)) << 28)
            | (u32::from(e.is_pending(nvic::SYSTICK)) << 26)
            | (u32::from(irq_pending) << 22)
            | ((pending & 0x1ff) << 12)
            | (u32::from(!others_active) << 11)
            | (current & 0x1ff)
    }

    fn shcsr(&self) -> u32 {
        let e = &self.exceptions;
        self.shcsr_enables
            | (u32::from(e.is_pending(nvic::SVCALL)) << 15)
            | (u32::from(e.is_active(nvic::SYSTICK)) << 11)
            | (u32::from(e.is_active(nvic::PENDSV)) << 10)
            | (u32::from(e.is_active(nvic::SVCALL)) << 7)
    }

    fn read_dwt(&mut self, addr: u32, now: u64) -> Result<u32, ScsError> {
        if self.v6m() {
            return Err(Scs::refuse(addr, "ARMv6-M's DWT has no cycle counter (C1.8 of ARMv6-M: comparators only), and its comparators are not modelled"));
        }
        self.dwt.read(addr, now)
    }

    /// The warning a DWT read gave (a read of the Cortex-M7's locked
    /// DWT), once.
    pub fn take_note(&mut self) -> Option<String> {
        self.dwt.take_note()
    }

    /// A write of `size` bytes at `addr` at cycle `now`.
    pub fn write(
        &mut self,
        addr: u32,
        size: u8,
        value: u32,
        now: u64,
    ) -> Result<Effects, ScsError> {
        if let Some(number) = self.priority_number(addr, size) {
            for i in 0..u32::from(size) {
                self.exceptions
                    .set_priority_field(number + i, (value >> (8 * i)) as u8);
            }
            return Ok(Effects {
                check_exceptions: true,
                ..Effects::default()
            });
        }
        if size != 4 || addr % 4 != 0 {
            return Err(Scs::refuse(
                addr,
                format!("a {size}-byte access (this register is word accessible only)"),
            ));
        }
        if (DWT_BASE..DWT_BASE + BLOCK_SIZE).contains(&addr) {
            return self.write_dwt(addr, value, now).map(|_| Effects::default());
        }
        self.write_word(addr, value, now)
    }

    fn write_word(&mut self, addr: u32, value: u32, now: u64) -> Result<Effects, ScsError> {
        let v6m = self.v6m();
        let mut effects = Effects::default();
        match addr {
            0xE000_E008 if !v6m => self.actlr = value,
            0xE000_E010 => {
                self.systick.write_csr(value, now);
                effects.timers_changed = true;
            }
            0xE000_E014 => {
                self.systick.write_rvr(value, now);
                effects.timers_changed = true;
            }
            0xE000_E018 => {
                self.systick.write_cvr(now);
                effects.timers_changed = true;
            }
            0xE000_E100..=0xE000_E13F => {
                self.set_irq_bits(addr - 0xE000_E100, value, |e, n| e.set_irq_enabled(n, true))
            }
            0xE000_E180..=0xE000_E1BF => self.set_irq_bits(addr - 0xE000_E180, value, |e, n| {
                e.set_irq_enabled(n, false)
            }),
            0xE000_E200..=0xE000_E23F => self.set_irq_bits(addr - 0xE000_E200, value, |e, n| {
                e.set_pending(n + nvic::FIRST_IRQ, true)
            }),
            0xE000_E280..=0xE000_E2BF => self.set_irq_bits(addr - 0xE000_E280, value, |e, n| {
                e.set_pending(n + nvic::FIRST_IRQ, false)
            }),
            0xE000_ED04 => self.write_icsr(value),
            // TBLOFF: bits [31:7] on ARMv7-M (B3.2.5); on ARMv6-M the
            // implemented bits (none on Cortex-M0: RAZ/WI, `has_vtor`)
            0xE000_ED08 if self.has_vtor() => self.vtor = value & 0xFFFF_FF80,
            0xE000_ED08 => {}
            0xE000_ED0C => effects.reset = self.write_aircr(value),
            0xE000_ED10 => self.scr = value & 0x16,
            0xE000_ED14 if v6m => {}
            0xE000_ED14 => self.write_ccr(addr, value)?,
            0xE000_ED24 if !v6m => self.shcsr_enables = value & (0b111 << 16),
            // the fault status registers are write-one-to-clear: nothing is set
            0xE000_ED28..=0xE000_ED3C if !v6m => {}
            0xE000_ED88 if !v6m => self.cpacr = value & (0xf << 20),
            0xE000_ED94 if value & 1 != 0 => {
                return Err(Scs::refuse(
                    addr,
                    "enabling the MPU: memory protection is not modelled",
                ))
            }
            0xE000_ED94 => {}
            0xE000_EDF0 => {} // DHCSR: only a debugger with DBGKEY may write it
            0xE000_EDFC => {
                self.demcr = value & 0x010F_07F1;
                self.dwt.set_trace_enabled(self.demcr & TRCENA != 0, now);
            }
            0xE000_EF00 if !v6m => {
                let irq = value & 0x1ff;
                if irq < self.exceptions.irqs() {
                    self.exceptions.set_pending(irq + nvic::FIRST_IRQ, true);
                }
            }
            // read-only registers: writes are ignored
            0xE000_ED00 | 0xE000_E01C | 0xE000_E004 => {}
            0xE000_E300..=0xE000_E33F if !v6m => {}
            0xE000_E008
            | 0xE000_E300..=0xE000_E33F
            | 0xE000_ED24..=0xE000_ED3C
            | 0xE000_ED88
            | 0xE000_EF00
            | 0xE000_EF34..=0xE000_EF3C => return Err(self.absent(addr)),
            _ => return Err(Scs::not_modelled(addr)),
        }
        effects.check_exceptions = true;
        Ok(effects)
    }

    fn set_irq_bits(&mut self, offset: u32, value: u32, set: impl Fn(&mut Exceptions, u32)) {
        let first = offset / 4 * 32;
        for i in (0..32).filter(|i| value & (1 << i) != 0) {
            if first + i < self.exceptions.irqs() {
                set(&mut self.exceptions, first + i);
            }
        }
    }

    /// ICSR (B3.2.4): PENDSVSET/CLR, PENDSTSET/CLR, NMIPENDSET.
    fn write_icsr(&mut self, value: u32) {
        let e = &mut self.exceptions;
        if value & (1 << 31) != 0 {
            e.set_pending(nvic::NMI, true);
        }
        if value & (1 << 28) != 0 {
            e.set_pending(nvic::PENDSV, true);
        } else if value & (1 << 27) != 0 {
            e.set_pending(nvic::PENDSV, false);
        }
        if value & (1 << 26) != 0 {
            e.set_pending(nvic::SYSTICK, true);
        } else if value & (1 << 25) != 0 {
            e.set_pending(nvic::SYSTICK, false);
        }
    }

    /// AIRCR (B3.2.6): writes without VECTKEY are ignored; returns whether
    /// SYSRESETREQ was set.
    fn write_aircr(&mut self, value: u32) -> bool {
        if value >> 16 != VECTKEY {
            return false;
        }
        if !self.v6m() {
            self.exceptions.prigroup = ((value >> 8) & 7) as u8;
        }
        value & (1 << 2) != 0
    }

    /// CCR (B3.2.8): the traps this model cannot take are refused.
    fn write_ccr(&mut self, addr: u32, value: u32) -> Result<(), ScsError> {
        if value & (1 << 4) != 0 {
            return Err(Scs::refuse(
                addr,
                "DIV_0_TRP (a UsageFault on division by zero) is not modelled",
            ));
        }
        if value & (1 << 3) != 0 {
            return Err(Scs::refuse(
                addr,
                "UNALIGN_TRP (a UsageFault on unaligned access) is not modelled",
            ));
        }
        self.ccr = value & 0x0000_0303;
        Ok(())
    }

    fn write_dwt(&mut self, addr: u32, value: u32, now: u64) -> Result<(), ScsError> {
        if self.v6m() {
            return Err(self.absent(addr));
        }
        self.dwt.write(addr, value, now)
    }
}
