//! The Data Watchpoint and Trace unit (0xE0001000-0xE0001FFF) as far as
//! sim-host models it: DWT_CTRL.CYCCNTENA, the cycle counter DWT_CYCCNT
//! (ARMv7-M C1.8.8, ARMv8-M's DWT_CYCCNT), and the CoreSight software lock
//! (DWT_LAR at 0xE0001FB0, DWT_LSR at 0xE0001FB4) as each core has it:
//!
//! - **Cortex-M7** implements it: its TRM (r1p2, ARM DDI 0489F, 11.3,
//!   Table 11.1 "DWT register summary") lists DWT_LAR (WO) and DWT_LSR
//!   (RO). Per the CoreSight lock registers (e.g. Cortex-R4 TRM ARM DDI
//!   0363E 11.5.3/11.5.4, the same registers): writing 0xC5ACCE55 to LAR
//!   unlocks, any other value locks, writes to the component's other
//!   registers are ignored while locked, "the lock is set on reset"; LSR
//!   bit 0 (SLI) reads 1 (lock implemented), bit 1 (SLK) is the lock, bit
//!   2 (nTT) reads 0. On silicon: an STM32F745's DWT_CYCCNT "was stuck at
//!   zero" until 0xC5ACCE55 was written to DWT_LAR (betaflight pull request
//!   11006), and an STM32F746ZG's DWT_CTRL ignores writes "without
//!   unlocking it first" (orbcode/libtrace pull request 2).
//! - **Cortex-M3 and M4** (ARMv7-M) have none: the Cortex-M3 TRM's DWT
//!   register summary (r2p0, ARM DDI 0337E, Table 11.6) lists no register
//!   between DWT_FUNCTION3 (0xE0001058) and PID4 (0xE0001FD0), nor does
//!   the ARMv7-M manual's DWT (ARM DDI 0403, C1.8) define a DWT_LAR: the
//!   M7's is that core's own, and Arm's CMSIS headers declare DWT LAR/LSR
//!   for the M7 alone (CMSIS_6 pull request 176, "Added again LAR, LSR
//!   register to Cortex-M7 DWT").
//! - **Cortex-M33** (ARMv8-M mainline): the Software Lock is optional in
//!   ARMv8-M (ARM DDI 0553, DWT_LAR and DWT_LSR: present only if the
//!   optional Software Lock is implemented), and a Cortex-M33 part's DWT
//!   map (TI SWCU194, Table 2-56, CC1354/CC2674) lists no register between
//!   FUNCTION3 (0x58) and DEVARCH (0xFBC).
//!
//! Where no software lock is implemented the CoreSight rule holds: LSR.SLI
//! = 0 "Software Lock is not implemented. Writes to the LAR are ignored"
//! (CoreSight lock status as Arm's register descriptions give it, e.g.
//! TRCLSR in ARM DDI 0601): LAR and LSR are RAZ/WI. So
//! `cortex_m::peripheral::DWT::unlock()` (a write of 0xC5ACCE55 to LAR)
//! runs on every ARMv7-M and ARMv8-M core, and unlocks only the M7's.
//!
//! ARMv6-M's DWT has comparators only (ARMv6-M ARM C1.8), none modelled:
//! every access is refused, naming the register.

use super::error::ScsError;
use super::names::name_of;

/// The CoreSight key that unlocks a software lock (write to LAR).
pub const LAR_KEY: u32 = 0xC5AC_CE55;
pub const DWT_CTRL: u32 = 0xE000_1000;
pub const DWT_CYCCNT: u32 = 0xE000_1004;
pub const DWT_LAR: u32 = 0xE000_1FB0;
pub const DWT_LSR: u32 = 0xE000_1FB4;

const CYCCNTENA: u32 = 1;
/// LSR.SLI: the software lock is implemented.
const LSR_SLI: u32 = 1;
/// LSR.SLK: the software lock is set.
const LSR_SLK: u32 = 1 << 1;

/// The cycle counter (C1.8.8): it counts the core's cycles while
/// DEMCR.TRCENA and DWT_CTRL.CYCCNTENA are set, and wraps at 32 bits.
#[derive(Debug, Clone, Default)]
struct CycleCounter {
    value: u32,
    at: u64,
    running: bool,
}

impl CycleCounter {
    fn read(&self, now: u64) -> u32 {
        if self.running {
            self.value.wrapping_add((now - self.at) as u32)
        } else {
            self.value
        }
    }

    fn set(&mut self, value: u32, now: u64) {
        self.value = value;
        self.at = now;
    }

    fn run(&mut self, running: bool, now: u64) {
        self.value = self.read(now);
        self.at = now;
        self.running = running;
    }
}

/// The DWT of one ARMv7-M or ARMv8-M core (see the module's documentation).
#[derive(Debug, Clone)]
pub struct Dwt {
    ctrl: u32,
    cyccnt: CycleCounter,
    /// DEMCR.TRCENA, the trace enable the counter also needs.
    trace_enabled: bool,
    /// `Some(locked)` where the core implements the software lock.
    lock: Option<bool>,
    /// Writes the lock ignored, for the warning.
    ignored_writes: u64,
    /// The warning of the first read of a locked DWT, until taken.
    note: Option<String>,
    warned: bool,
}

impl Dwt {
    /// The DWT at reset of the core whose CPUID part number is `part`.
    pub fn new(part: u32) -> Dwt {
        Dwt {
            // NUMCOMP = 4 comparators, as on Cortex-M3/M4 (their TRMs' DWT)
            ctrl: 0x4000_0000,
            cyccnt: CycleCounter::default(),
            trace_enabled: false,
            // Cortex-M7 (part 0xC27): locked at reset
            lock: (part == 0xC27).then_some(true),
            ignored_writes: 0,
            note: None,
            warned: false,
        }
    }

    /// DEMCR.TRCENA changed (or was written) at cycle `now`.
    pub fn set_trace_enabled(&mut self, enabled: bool, now: u64) {
        self.trace_enabled = enabled;
        self.update_cycle_counter(now);
    }

    fn locked(&self) -> bool {
        self.lock == Some(true)
    }

    /// A word read at `addr` at cycle `now`.
    pub fn read(&mut self, addr: u32, now: u64) -> Result<u32, ScsError> {
        let value = match addr {
            DWT_CTRL => self.ctrl,
            DWT_CYCCNT => self.cyccnt.read(now),
            DWT_LAR if self.lock.is_some() => {
                return Err(ScsError::refuse(
                    addr,
                    "a read of a write-only register (its value is UNKNOWN: Cortex-M7 TRM \
                     Table 11.1)",
                ))
            }
            DWT_LSR => match self.lock {
                Some(locked) => LSR_SLI | if locked { LSR_SLK } else { 0 },
                None => 0,
            },
            // no software lock: LAR is RAZ/WI
            DWT_LAR => 0,
            _ => return Err(ScsError::not_modelled(addr)),
        };
        // the counter of a locked DWT is what silently reads 0: its enable
        // was ignored (DWT_CTRL shows that, so reading it is no surprise)
        if self.locked() && addr == DWT_CYCCNT {
            self.warn_locked_read(addr, value);
        }
        Ok(value)
    }

    fn warn_locked_read(&mut self, addr: u32, value: u32) {
        if self.warned {
            return;
        }
        self.warned = true;
        let ignored = match self.ignored_writes {
            0 => "no write was ignored yet".to_owned(),
            1 => "1 write to it was ignored".to_owned(),
            n => format!("{n} writes to it were ignored"),
        };
        self.note = Some(format!(
            "{} read as {value:#x} while the Cortex-M7 DWT's software lock is set ({ignored}): \
             a locked DWT ignores writes until 0xC5ACCE55 is written to DWT_LAR (0xE0001FB0), \
             as cortex_m::peripheral::DWT::unlock() does (Cortex-M7 TRM, ARM DDI 0489F, \
             Table 11.1)",
            name_of(addr)
        ));
    }

    /// The warning of the first read of a locked DWT, once.
    pub fn take_note(&mut self) -> Option<String> {
        self.note.take()
    }

    /// A word written at `addr` at cycle `now`.
    pub fn write(&mut self, addr: u32, value: u32, now: u64) -> Result<(), ScsError> {
        match addr {
            DWT_LAR => {
                if let Some(locked) = self.lock.as_mut() {
                    *locked = value != LAR_KEY;
                }
            }
            // read-only
            DWT_LSR => {}
            _ if self.locked() => self.ignored_writes += 1,
            DWT_CTRL => {
                if value & !CYCCNTENA & 0x0FFF_FFFF != 0 {
                    return Err(ScsError::refuse(
                        addr,
                        "only CYCCNTENA is modelled; the DWT's sampling and event counters are not",
                    ));
                }
                self.ctrl = (self.ctrl & 0xF000_0000) | (value & CYCCNTENA);
                self.update_cycle_counter(now);
            }
            DWT_CYCCNT => self.cyccnt.set(value, now),
            _ => return Err(ScsError::not_modelled(addr)),
        }
        Ok(())
    }

    fn update_cycle_counter(&mut self, now: u64) {
        let running = self.trace_enabled && self.ctrl & CYCCNTENA != 0;
        self.cyccnt.run(running, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M3: u32 = 0xC23;
    const M4: u32 = 0xC24;
    const M7: u32 = 0xC27;
    const M33: u32 = 0xD21;

    /// What `DCB::enable_trace`, `DWT::unlock` and
    /// `DWT::enable_cycle_counter` of the cortex-m crate do, at cycle 100.
    fn enable_like_cortex_m(dwt: &mut Dwt) {
        dwt.set_trace_enabled(true, 100);
        dwt.write(DWT_LAR, LAR_KEY, 100).unwrap();
        let ctrl = dwt.read(DWT_CTRL, 100).unwrap();
        dwt.write(DWT_CTRL, ctrl | CYCCNTENA, 100).unwrap();
    }

    #[test]
    fn unlock_is_ignored_where_no_software_lock_exists() {
        for part in [M3, M4, M33] {
            let mut dwt = Dwt::new(part);
            assert_eq!(dwt.read(DWT_LSR, 0).unwrap(), 0, "{part:#x}: LSR is RAZ");
            assert_eq!(dwt.read(DWT_LAR, 0).unwrap(), 0, "{part:#x}: LAR is RAZ");
            enable_like_cortex_m(&mut dwt);
            assert_eq!(dwt.read(DWT_LSR, 0).unwrap(), 0, "{part:#x}: still RAZ");
            assert_eq!(dwt.read(DWT_CYCCNT, 1100).unwrap(), 1000, "{part:#x}");
            // any value: still nothing to lock
            dwt.write(DWT_LAR, 0, 1100).unwrap();
            dwt.write(DWT_CYCCNT, 5, 1100).unwrap();
            assert_eq!(dwt.read(DWT_CYCCNT, 1107).unwrap(), 12, "{part:#x}");
            assert_eq!(dwt.take_note(), None, "{part:#x}");
        }
    }

    #[test]
    fn the_m7_dwt_is_locked_at_reset_and_unlocked_by_the_key() {
        let mut dwt = Dwt::new(M7);
        assert_eq!(dwt.read(DWT_LSR, 0).unwrap(), 0b011, "implemented, locked");
        enable_like_cortex_m(&mut dwt);
        assert_eq!(
            dwt.read(DWT_LSR, 0).unwrap(),
            0b001,
            "implemented, unlocked"
        );
        assert_eq!(dwt.read(DWT_CYCCNT, 350).unwrap(), 250);
        assert_eq!(dwt.take_note(), None);
        // any other value locks again: writes are ignored, the counter runs on
        dwt.write(DWT_LAR, 0, 400).unwrap();
        assert_eq!(dwt.read(DWT_LSR, 400).unwrap(), 0b011);
        dwt.write(DWT_CYCCNT, 0, 400).unwrap();
        dwt.write(DWT_CTRL, 0, 400).unwrap();
        assert_eq!(dwt.read(DWT_CYCCNT, 500).unwrap(), 400);
        assert!(dwt.read(DWT_LAR, 500).is_err(), "LAR is write-only");
    }

    #[test]
    fn a_read_of_a_locked_m7_dwt_warns_once() {
        let mut dwt = Dwt::new(M7);
        dwt.set_trace_enabled(true, 0);
        let ctrl = dwt.read(DWT_CTRL, 0).unwrap();
        dwt.write(DWT_CTRL, ctrl | CYCCNTENA, 0).unwrap();
        assert_eq!(
            dwt.read(DWT_CTRL, 5).unwrap(),
            0x4000_0000,
            "the write was ignored"
        );
        assert_eq!(dwt.read(DWT_LSR, 10).unwrap(), 0b011);
        assert_eq!(
            dwt.take_note(),
            None,
            "the control and status registers show it"
        );
        assert_eq!(dwt.read(DWT_CYCCNT, 10).unwrap(), 0);
        let note = dwt.take_note().expect("a warning");
        assert!(
            note.starts_with("DWT_CYCCNT (DWT Cycle Count) read as 0x0"),
            "{note}"
        );
        assert!(note.contains("1 write to it was ignored"), "{note}");
        assert!(note.contains("DWT_LAR (0xE0001FB0)"), "{note}");
        assert_eq!(dwt.read(DWT_CYCCNT, 20).unwrap(), 0);
        assert_eq!(dwt.take_note(), None, "once per run");
    }

    #[test]
    fn unmodelled_registers_are_refused_by_name() {
        let mut dwt = Dwt::new(M4);
        let e = dwt.write(0xE000_1008, 1, 0).unwrap_err();
        assert!(e.register.starts_with("DWT_CPICNT"), "{e}");
        let e = dwt.write(DWT_CTRL, 1 << 12, 0).unwrap_err();
        assert!(e.message.contains("only CYCCNTENA"), "{e}");
        // a locked M7 ignores them as the silicon does
        assert!(Dwt::new(M7).write(0xE000_1008, 1, 0).is_ok());
    }
}
