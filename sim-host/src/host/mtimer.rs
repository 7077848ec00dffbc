//! The RISC-V machine timer (`mtime`, `mtimecmp`; RISC-V privileged spec
//! 3.2.1) of a board, on the simulated clock, in one of two layouts
//! (`TimerKind`):
//!
//! - RP2350's SIO (RP2350 datasheet 3.1.8 "RISC-V platform timer";
//!   pico-sdk hardware/regs/sio.h): from MTIME_CTRL, MTIME +0xc, MTIMEH
//!   +0x10, MTIMECMP +0x14, MTIMECMPH +0x18. MTIME_CTRL resets to EN (bit
//!   0) with FULLSPEED (bit 1) clear: the timer then counts the board's
//!   tick (`tick_hz`, 1 MHz when the tick generator is set up as
//!   pico-sdk's runtime does), with FULLSPEED every core cycle. MTIMECMP
//!   resets to all ones.
//! - SiFive's CLINT (FE310-G002 Manual chapter 9): msip +0 (bit 0 raises
//!   the machine software interrupt, the other bits read 0), mtimecmp
//!   +0x4000/+0x4004, mtime +0xbff8/+0xbffc. mtime always counts
//!   `tick_hz` (the real-time clock) and resets to 0; mtimecmp "is not
//!   reset": it starts at all ones here, never due until written.
//!
//! The timer interrupt is pending while mtime >= mtimecmp (level, not
//! edge: a handler that does not move mtimecmp is entered again), the
//! software interrupt while msip is 1.
//!
//! Ticks sit on a fixed grid of the core's cycles, tick n at cycle
//! ceil(n * clock / tick), so the same program sees the same times.

pub use crate::model::target::TimerKind;

/// MTIME_CTRL's bits.
const EN: u32 = 1;
const FULLSPEED: u32 = 1 << 1;
/// The bits MTIME_CTRL keeps (DBGPAUSE_CORE0/1 are bits 2 and 3).
const CTRL_BITS: u32 = 0xf;

/// A 32-bit register of the timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerRegister {
    /// MTIME_CTRL (the SIO's).
    Ctrl,
    Time {
        high: bool,
    },
    Compare {
        high: bool,
    },
    /// msip (the CLINT's).
    SoftwareInterrupt,
}

impl TimerRegister {
    /// The register of a `kind` timer at `offset` from its base (the
    /// padding and reserved words between are none of them).
    pub fn at(kind: TimerKind, offset: u64) -> Option<TimerRegister> {
        match (kind, offset) {
            (TimerKind::Rp2350Sio, 0) => Some(TimerRegister::Ctrl),
            (TimerKind::Rp2350Sio, 0xc) | (TimerKind::SifiveClint, 0xbff8) => {
                Some(TimerRegister::Time { high: false })
            }
            (TimerKind::Rp2350Sio, 0x10) | (TimerKind::SifiveClint, 0xbffc) => {
                Some(TimerRegister::Time { high: true })
            }
            (TimerKind::Rp2350Sio, 0x14) | (TimerKind::SifiveClint, 0x4000) => {
                Some(TimerRegister::Compare { high: false })
            }
            (TimerKind::Rp2350Sio, 0x18) | (TimerKind::SifiveClint, 0x4004) => {
                Some(TimerRegister::Compare { high: true })
            }
            (TimerKind::SifiveClint, 0) => Some(TimerRegister::SoftwareInterrupt),
            _ => None,
        }
    }
}

/// The timer's state; times are the core's cycle counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineTimer {
    kind: TimerKind,
    clock_hz: u64,
    tick_hz: u64,
    /// MTIME_CTRL (the CLINT's timer behaves as EN without FULLSPEED).
    ctrl: u32,
    /// msip's bit 0 (the CLINT's).
    msip: bool,
    /// mtime was `value` at cycle `since` (and counts from there when EN).
    value: u64,
    since: u64,
    compare: u64,
}

impl MachineTimer {
    pub fn new(kind: TimerKind, clock_hz: u64, tick_hz: u64) -> MachineTimer {
        MachineTimer {
            kind,
            clock_hz: clock_hz.max(1),
            tick_hz: tick_hz.max(1),
            ctrl: EN,
            msip: false,
            value: 0,
            since: 0,
            compare: u64::MAX,
        }
    }

    /// Its register layout.
    pub fn kind(&self) -> TimerKind {
        self.kind
    }

    /// Ticks counted from cycle 0 to `cycle` on the current rate's grid
    /// (none while the tick is stopped: `tick_hz` 0).
    fn ticks(&self, cycle: u64) -> u64 {
        if self.ctrl & FULLSPEED != 0 {
            cycle
        } else if self.tick_hz == 0 {
            0
        } else {
            (u128::from(cycle) * u128::from(self.tick_hz) / u128::from(self.clock_hz)) as u64
        }
    }

    /// The first cycle at which `ticks` reaches `n`.
    fn cycle_of_tick(&self, n: u64) -> Option<u64> {
        if self.ctrl & FULLSPEED != 0 {
            return Some(n);
        }
        if self.tick_hz == 0 {
            return None;
        }
        let cycles = (u128::from(n) * u128::from(self.clock_hz)).div_ceil(u128::from(self.tick_hz));
        u64::try_from(cycles).ok()
    }

    /// mtime at cycle `now`.
    pub fn time(&self, now: u64) -> u64 {
        if self.ctrl & EN == 0 {
            return self.value;
        }
        let counted = self.ticks(now).saturating_sub(self.ticks(self.since));
        self.value.wrapping_add(counted)
    }

    /// Restarts the count at its current value (before a change of rate,
    /// enable or value).
    fn rebase(&mut self, now: u64) {
        self.value = self.time(now);
        self.since = now;
    }

    /// The core clock or the tick changed at cycle `now` (a board clock
    /// tree's clk_sys and its RISC-V tick generator, TICKS.RISCV on the
    /// RP2350): mtime keeps its count to `now` and counts on at the new
    /// rate; `tick_hz` 0 stops it (the tick generator stopped). Returns
    /// whether the rate changed.
    pub fn retime(&mut self, now: u64, clock_hz: u64, tick_hz: u64) -> bool {
        let clock_hz = clock_hz.max(1);
        if (clock_hz, tick_hz) == (self.clock_hz, self.tick_hz) {
            return false;
        }
        self.rebase(now);
        self.clock_hz = clock_hz;
        self.tick_hz = tick_hz;
        true
    }

    pub fn read(&self, register: TimerRegister, now: u64) -> u32 {
        let half = |v: u64, high: bool| if high { (v >> 32) as u32 } else { v as u32 };
        match register {
            TimerRegister::Ctrl => self.ctrl,
            TimerRegister::Time { high } => half(self.time(now), high),
            TimerRegister::Compare { high } => half(self.compare, high),
            TimerRegister::SoftwareInterrupt => u32::from(self.msip),
        }
    }

    pub fn write(&mut self, register: TimerRegister, value: u32, now: u64) {
        let set = |old: u64, high: bool| {
            if high {
                (old & 0xFFFF_FFFF) | (u64::from(value) << 32)
            } else {
                (old & !0xFFFF_FFFF) | u64::from(value)
            }
        };
        match register {
            TimerRegister::Ctrl if self.kind == TimerKind::Rp2350Sio => {
                self.rebase(now);
                self.ctrl = value & CTRL_BITS;
            }
            TimerRegister::Ctrl => {}
            TimerRegister::Time { high } => {
                self.rebase(now);
                self.value = set(self.value, high);
            }
            TimerRegister::Compare { high } => self.compare = set(self.compare, high),
            TimerRegister::SoftwareInterrupt => self.msip = value & 1 != 0,
        }
    }

    /// Whether the machine software interrupt is pending (msip).
    pub fn software_pending(&self) -> bool {
        self.msip
    }

    /// The first cycle, from `now`, at which the interrupt is pending
    /// (mtime >= mtimecmp); `None` when the timer is stopped short of it
    /// or will not get there within 64 bits of cycles.
    pub fn pending_from(&self, now: u64) -> Option<u64> {
        let time = self.time(now);
        if time >= self.compare {
            return Some(now);
        }
        if self.ctrl & EN == 0 {
            return None;
        }
        // ticks(c) - ticks(since) >= compare - value
        let needed = self.compare - self.value;
        let tick = self.ticks(self.since).checked_add(needed)?;
        self.cycle_of_tick(tick).map(|c| c.max(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retimed_tick_keeps_the_count_and_counts_on_at_the_new_rate() {
        // 150 MHz, 1 MHz: mtime 10 at cycle 1500; clk_sys to 12 MHz there:
        // one tick per 12 cycles from then on (the grid's ticks(1500) at
        // 12 cycles a tick is 125: tick 126 at cycle 1512)
        let mut t = MachineTimer::new(TimerKind::Rp2350Sio, 150_000_000, 1_000_000);
        assert!(t.retime(1500, 12_000_000, 1_000_000));
        assert_eq!(t.time(1500), 10);
        assert_eq!(t.time(1511), 10);
        assert_eq!(t.time(1512), 11);
        t.write(TimerRegister::Compare { high: true }, 0, 1512);
        t.write(TimerRegister::Compare { high: false }, 20, 1512);
        assert_eq!(t.pending_from(1512), Some(1500 + 10 * 12));
        // the tick stopped at cycle 1600: mtime stays, never due
        assert!(t.retime(1600, 12_000_000, 0));
        assert_eq!(t.time(1600), 18);
        assert_eq!(t.time(1_000_000), 18);
        assert_eq!(t.pending_from(1_000_000), None);
        assert!(!t.retime(1700, 12_000_000, 0));
    }

    #[test]
    fn ticks_at_the_board_rate_on_a_fixed_grid() {
        // 150 MHz core, 1 MHz tick: one tick per 150 cycles
        let t = MachineTimer::new(TimerKind::Rp2350Sio, 150_000_000, 1_000_000);
        assert_eq!(t.time(149), 0);
        assert_eq!(t.time(150), 1);
        assert_eq!(t.time(1_500_000), 10_000);
        assert_eq!(t.read(TimerRegister::Ctrl, 0), EN);
    }

    #[test]
    fn fullspeed_counts_cycles_from_the_write() {
        let mut t = MachineTimer::new(TimerKind::Rp2350Sio, 150_000_000, 1_000_000);
        t.write(TimerRegister::Ctrl, EN | FULLSPEED, 300); // mtime 2 at 300
        assert_eq!(t.time(300), 2);
        assert_eq!(t.time(310), 12);
        t.write(TimerRegister::Compare { high: true }, 0, 310);
        t.write(TimerRegister::Compare { high: false }, 100, 310);
        // 100 - 2 = 98 cycles after 300
        assert_eq!(t.pending_from(310), Some(398));
        assert_eq!(t.pending_from(500), Some(500));
    }

    #[test]
    fn a_stopped_timer_keeps_its_value_and_is_never_due() {
        let mut t = MachineTimer::new(TimerKind::Rp2350Sio, 100, 10);
        t.write(TimerRegister::Compare { high: true }, 0, 0);
        t.write(TimerRegister::Compare { high: false }, 5, 0);
        assert_eq!(t.pending_from(0), Some(50));
        t.write(TimerRegister::Ctrl, 0, 25); // stopped at 2
        assert_eq!(t.time(1_000), 2);
        assert_eq!(t.pending_from(1_000), None);
        t.write(TimerRegister::Time { high: false }, 7, 1_000);
        assert_eq!(t.pending_from(1_000), Some(1_000));
        assert_eq!(t.read(TimerRegister::Time { high: false }, 9_999), 7);
    }

    #[test]
    fn the_reset_compare_is_never_reached() {
        let t = MachineTimer::new(TimerKind::Rp2350Sio, 150_000_000, 1_000_000);
        // all ones: 2^64 - 1 ticks need more than 64 bits of cycles
        assert_eq!(t.pending_from(0), None);
        assert_eq!(
            TimerRegister::at(TimerKind::Rp2350Sio, 0x14),
            Some(TimerRegister::Compare { high: false })
        );
        assert_eq!(TimerRegister::at(TimerKind::Rp2350Sio, 0x4), None);
    }

    #[test]
    fn the_clint_layout_and_its_real_time_clock() {
        let at = |offset| TimerRegister::at(TimerKind::SifiveClint, offset);
        assert_eq!(at(0), Some(TimerRegister::SoftwareInterrupt));
        assert_eq!(at(0x4000), Some(TimerRegister::Compare { high: false }));
        assert_eq!(at(0x4004), Some(TimerRegister::Compare { high: true }));
        assert_eq!(at(0xbff8), Some(TimerRegister::Time { high: false }));
        assert_eq!(at(0xbffc), Some(TimerRegister::Time { high: true }));
        assert_eq!(at(0x4008), None);
        assert_eq!(at(0xc), None);
        // the FE310: 320 MHz core, 32768 Hz mtime: tick n at ceil(n x 9765.625)
        let mut t = MachineTimer::new(TimerKind::SifiveClint, 320_000_000, 32_768);
        assert_eq!(t.time(9_765), 0);
        assert_eq!(t.time(9_766), 1);
        assert_eq!(t.time(19_532), 2);
        // no MTIME_CTRL: a write there changes nothing
        t.write(TimerRegister::Ctrl, 0, 10);
        assert_eq!(t.time(19_532), 2);
        // mtimecmp starts at all ones: never due
        assert_eq!(t.pending_from(0), None);
        t.write(TimerRegister::Compare { high: true }, 0, 0);
        t.write(TimerRegister::Compare { high: false }, 3, 0);
        assert_eq!(t.pending_from(0), Some(29_297));
        // msip: bit 0 only
        assert!(!t.software_pending());
        t.write(TimerRegister::SoftwareInterrupt, 0xffff_ffff, 5);
        assert!(t.software_pending());
        assert_eq!(t.read(TimerRegister::SoftwareInterrupt, 5), 1);
        t.write(TimerRegister::SoftwareInterrupt, 2, 6);
        assert!(!t.software_pending());
    }
}
