//! The exception state of the NVIC (ARMv7-M B1.5, B3.4; ARMv6-M B1.5,
//! B3.4): which exceptions are enabled, pending and active, their
//! priorities, and which one the core takes next.
//!
//! Exception numbers: 1 Reset, 2 NMI, 3 HardFault, 4 MemManage, 5
//! BusFault, 6 UsageFault, 11 SVCall, 12 DebugMonitor, 14 PendSV, 15
//! SysTick, 16 + n external interrupt n.

pub const NMI: u32 = 2;
pub const HARD_FAULT: u32 = 3;
pub const SVCALL: u32 = 11;
pub const PENDSV: u32 = 14;
pub const SYSTICK: u32 = 15;
pub const FIRST_IRQ: u32 = 16;

/// The priority of thread mode with no exception active and no mask:
/// lower than any configurable priority (B1.5.4 "execution priority").
pub const THREAD_PRIORITY: i32 = 256;

/// The exception state of one core.
#[derive(Debug, Clone)]
pub struct Exceptions {
    /// Per exception number (index 0 unused).
    pending: Vec<bool>,
    active: Vec<bool>,
    /// The 8-bit priority fields of exceptions 4.. (only the top
    /// `priority_bits` are implemented; the rest read as zero).
    priority: Vec<u8>,
    /// External interrupts' enables (index n for IRQ n).
    irq_enabled: Vec<bool>,
    /// AIRCR.PRIGROUP: priority bits [7:PRIGROUP+1] are the group priority.
    pub prigroup: u8,
    priority_bits: u8,
}

impl Exceptions {
    pub fn new(irqs: u32, priority_bits: u8) -> Exceptions {
        let n = (FIRST_IRQ + irqs) as usize;
        Exceptions {
            pending: vec![false; n],
            active: vec![false; n],
            priority: vec![0; n],
            irq_enabled: vec![false; irqs as usize],
            prigroup: 0,
            priority_bits,
        }
    }

    pub fn irqs(&self) -> u32 {
        self.irq_enabled.len() as u32
    }

    /// Whether `number` names an exception this core has.
    pub fn exists(&self, number: u32) -> bool {
        let n = number as usize;
        n < self.pending.len() && matches!(number, 2 | 3 | 11 | 14 | 15 | 16..)
    }

    /// The implemented bits of an 8-bit priority field.
    pub fn implemented(&self, priority: u8) -> u8 {
        priority & !(0xffu8 >> self.priority_bits)
    }

    pub fn priority_field(&self, number: u32) -> u8 {
        self.priority.get(number as usize).copied().unwrap_or(0)
    }

    pub fn set_priority_field(&mut self, number: u32, value: u8) {
        let value = self.implemented(value);
        if let Some(p) = self.priority.get_mut(number as usize) {
            if number >= 4 {
                *p = value;
            }
        }
    }

    /// The priority of exception `number` (fixed for NMI and HardFault).
    pub fn priority(&self, number: u32) -> i32 {
        match number {
            1 => -3,
            NMI => -2,
            HARD_FAULT => -1,
            n => i32::from(self.priority_field(n)),
        }
    }

    /// The group priority of a priority value (B1.5.4): the bits above
    /// PRIGROUP; fixed priorities are their own group.
    pub fn group(&self, priority: i32) -> i32 {
        if priority < 0 {
            return priority;
        }
        let subpriority_bits = u32::from(self.prigroup) + 1;
        priority & !((1 << subpriority_bits) - 1)
    }

    pub fn is_pending(&self, number: u32) -> bool {
        self.pending.get(number as usize).copied().unwrap_or(false)
    }

    pub fn is_active(&self, number: u32) -> bool {
        self.active.get(number as usize).copied().unwrap_or(false)
    }

    pub fn set_pending(&mut self, number: u32, pending: bool) {
        if let Some(p) = self.pending.get_mut(number as usize) {
            *p = pending;
        }
    }

    pub fn irq_enabled(&self, irq: u32) -> bool {
        self.irq_enabled.get(irq as usize).copied().unwrap_or(false)
    }

    pub fn set_irq_enabled(&mut self, irq: u32, enabled: bool) {
        if let Some(e) = self.irq_enabled.get_mut(irq as usize) {
            *e = enabled;
        }
    }

    fn enabled(&self, number: u32) -> bool {
        match number {
            NMI | HARD_FAULT | SVCALL | PENDSV | SYSTICK => true,
            n if n >= FIRST_IRQ => self.irq_enabled(n - FIRST_IRQ),
            _ => false,
        }
    }

    /// Marks `number` active and no longer pending (exception entry).
    pub fn activate(&mut self, number: u32) {
        self.set_pending(number, false);
        if let Some(a) = self.active.get_mut(number as usize) {
            *a = true;
        }
    }

    pub fn deactivate(&mut self, number: u32) {
        if let Some(a) = self.active.get_mut(number as usize) {
            *a = false;
        }
    }

    /// How many exceptions are active.
    pub fn active_count(&self) -> usize {
        self.active.iter().filter(|a| **a).count()
    }

    /// The core's execution priority (B1.5.4): the highest group priority
    /// of the active exceptions, raised by PRIMASK (to 0), a non-zero
    /// BASEPRI, and FAULTMASK (to -1).
    pub fn execution_priority(&self, primask: bool, basepri: u8, faultmask: bool) -> i32 {
        let mut priority = THREAD_PRIORITY;
        for (n, _) in self.active.iter().enumerate().filter(|(_, a)| **a) {
            priority = priority.min(self.group(self.priority(n as u32)));
        }
        if basepri != 0 {
            priority = priority.min(self.group(i32::from(self.implemented(basepri))));
        }
        if primask {
            priority = priority.min(0);
        }
        if faultmask {
            priority = priority.min(-1);
        }
        priority
    }

    /// The pending, enabled exception of the highest priority (lowest
    /// number among equals), whether or not it can preempt.
    pub fn highest_pending(&self) -> Option<u32> {
        (1..self.pending.len() as u32)
            .filter(|n| self.is_pending(*n) && self.enabled(*n))
            .min_by_key(|n| (self.priority(*n), *n))
    }

    /// The exception the core takes now, if any: the highest pending one
    /// whose group priority is higher (lower) than `execution_priority`.
    pub fn to_take(&self, execution_priority: i32) -> Option<u32> {
        self.highest_pending()
            .filter(|n| self.group(self.priority(*n)) < execution_priority)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_exception_preempts_only_a_lower_group_priority() {
        let mut e = Exceptions::new(32, 3);
        e.set_priority_field(SYSTICK, 0x40);
        e.set_priority_field(PENDSV, 0xe0);
        e.set_pending(PENDSV, true);
        e.set_pending(SYSTICK, true);
        assert_eq!(e.to_take(THREAD_PRIORITY), Some(SYSTICK));
        e.activate(SYSTICK);
        // PendSV (0xe0) cannot preempt the active SysTick (0x40)
        assert_eq!(e.to_take(e.execution_priority(false, 0, false)), None);
        e.deactivate(SYSTICK);
        assert_eq!(
            e.to_take(e.execution_priority(false, 0, false)),
            Some(PENDSV)
        );
        // PRIMASK masks every configurable priority
        assert_eq!(e.to_take(e.execution_priority(true, 0, false)), None);
    }

    #[test]
    fn priorities_keep_only_the_implemented_bits_and_group_by_prigroup() {
        let mut e = Exceptions::new(32, 3);
        e.set_priority_field(FIRST_IRQ, 0xff);
        assert_eq!(e.priority_field(FIRST_IRQ), 0xe0);
        e.prigroup = 5; // group = bits [7:6]
        assert_eq!(e.group(0xe0), 0xc0);
        assert_eq!(e.group(-1), -1);
    }

    #[test]
    fn a_disabled_irq_is_never_taken() {
        let mut e = Exceptions::new(32, 3);
        e.set_pending(FIRST_IRQ + 3, true);
        assert_eq!(e.to_take(THREAD_PRIORITY), None);
        e.set_irq_enabled(3, true);
        assert_eq!(e.to_take(THREAD_PRIORITY), Some(FIRST_IRQ + 3));
    }
}
