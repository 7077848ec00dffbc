//! SysTick (ARMv7-M B3.3, ARMv6-M B3.3): a 24-bit down counter clocked by
//! the core's simulated cycles. It is kept as the value it had at one
//! cycle and computed for any later cycle, so nothing runs per cycle.
//!
//! The counter counts down by one per processor clock while enabled; on
//! the clock after it reaches 0 it reloads SYST_RVR, so it reaches 0 every
//! RVR + 1 cycles (B3.3.1 "a RELOAD value ... N-1 gives a period of N").
//! Reaching 0 sets COUNTFLAG and, with TICKINT, pends the SysTick
//! exception. A reload value of 0 stops it at 0 (B3.3.3). Writing SYST_CVR
//! clears it to 0 and clears COUNTFLAG without pending anything (B3.3.4).

/// SYST_CSR bits.
pub const ENABLE: u32 = 1 << 0;
pub const TICKINT: u32 = 1 << 1;
pub const CLKSOURCE: u32 = 1 << 2;
pub const COUNTFLAG: u32 = 1 << 16;

const MASK_24: u32 = 0x00ff_ffff;

/// The SysTick timer of one core.
#[derive(Debug, Clone, Default)]
pub struct SysTick {
    /// ENABLE, TICKINT, CLKSOURCE as written (COUNTFLAG is computed).
    csr: u32,
    rvr: u32,
    /// The counter's value at cycle `at`.
    value: u32,
    at: u64,
    /// COUNTFLAG was last cleared (read, or CVR written) at this cycle.
    flag_cleared_at: u64,
    /// Wraps up to this cycle have already pended the exception.
    delivered_until: u64,
}

impl SysTick {
    pub fn enabled(&self) -> bool {
        self.csr & ENABLE != 0
    }

    fn interrupts(&self) -> bool {
        self.csr & (ENABLE | TICKINT) == ENABLE | TICKINT
    }

    /// The counter at cycle `now` (`now` is never before `at`).
    pub fn value(&self, now: u64) -> u32 {
        let elapsed = now.saturating_sub(self.at);
        if !self.enabled() || elapsed == 0 {
            return self.value;
        }
        if elapsed <= u64::from(self.value) {
            return self.value - elapsed as u32;
        }
        if self.rvr == 0 {
            return 0;
        }
        // at `at + value` it was 0; each period it reloads RVR, then counts
        let period = u64::from(self.rvr) + 1;
        let since = (elapsed - u64::from(self.value)) % period;
        if since == 0 {
            0
        } else {
            self.rvr - (since - 1) as u32
        }
    }

    /// The cycle at which the counter first reaches 0 after `at` (a
    /// counter at 0 reloads on the next clock), if it ever does.
    fn first_zero(&self) -> Option<u64> {
        if self.value > 0 {
            Some(self.at + u64::from(self.value))
        } else if self.rvr > 0 {
            Some(self.at + 1 + u64::from(self.rvr))
        } else {
            None
        }
    }

    /// The first cycle after `after` at which the counter reaches 0.
    pub fn next_zero(&self, after: u64) -> Option<u64> {
        if !self.enabled() {
            return None;
        }
        let first = self.first_zero()?;
        if first > after {
            return Some(first);
        }
        if self.rvr == 0 {
            return None;
        }
        let period = u64::from(self.rvr) + 1;
        let k = (after - first) / period + 1;
        Some(first + k * period)
    }

    /// Whether the counter reached 0 in the cycles `(from, to]`.
    fn zero_in(&self, from: u64, to: u64) -> bool {
        self.next_zero(from).is_some_and(|z| z <= to)
    }

    /// When the SysTick exception next becomes pending (with TICKINT).
    pub fn next_interrupt(&self) -> Option<u64> {
        if !self.interrupts() {
            return None;
        }
        self.next_zero(self.delivered_until.max(self.at))
    }

    /// Whether the counter reached 0 since the last delivery, with TICKINT:
    /// the exception becomes pending (once, however many times it wrapped).
    pub fn take_interrupt(&mut self, now: u64) -> bool {
        let due = self.interrupts() && self.zero_in(self.delivered_until.max(self.at), now);
        self.delivered_until = self.delivered_until.max(now);
        due
    }

    /// SYST_CSR; reading clears COUNTFLAG.
    pub fn read_csr(&mut self, now: u64) -> u32 {
        let flag = self.enabled() && self.zero_in(self.flag_cleared_at.max(self.at), now);
        self.flag_cleared_at = now;
        // no reference clock (SYST_CALIB.NOREF): CLKSOURCE reads as 1
        self.csr | CLKSOURCE | if flag { COUNTFLAG } else { 0 }
    }

    pub fn write_csr(&mut self, value: u32, now: u64) {
        self.value = self.value(now);
        self.at = now;
        if self.csr & ENABLE == 0 && value & ENABLE != 0 {
            // wraps before the counter was enabled pend nothing
            self.delivered_until = now;
        }
        self.csr = value & (ENABLE | TICKINT | CLKSOURCE);
    }

    pub fn rvr(&self) -> u32 {
        self.rvr
    }

    pub fn write_rvr(&mut self, value: u32, now: u64) {
        self.value = self.value(now);
        self.at = now;
        self.rvr = value & MASK_24;
    }

    /// Any write clears the counter and COUNTFLAG.
    pub fn write_cvr(&mut self, now: u64) {
        self.value = 0;
        self.at = now;
        self.flag_cleared_at = now;
        self.delivered_until = self.delivered_until.max(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running(rvr: u32, now: u64) -> SysTick {
        let mut t = SysTick::default();
        t.write_rvr(rvr, now);
        t.write_cvr(now);
        t.write_csr(ENABLE | TICKINT, now);
        t
    }

    #[test]
    fn a_cleared_counter_reloads_on_the_next_clock_and_wraps_every_rvr_plus_one() {
        let t = running(99, 1000);
        assert_eq!(t.value(1000), 0);
        assert_eq!(t.value(1001), 99);
        assert_eq!(t.value(1100), 0);
        assert_eq!(t.value(1101), 99);
        assert_eq!(t.next_zero(1000), Some(1100));
        assert_eq!(t.next_zero(1100), Some(1200));
    }

    #[test]
    fn every_wrap_is_counted_once_and_overdue_wraps_pend_once() {
        let mut t = running(9, 0);
        let ticks = (0..=100u64).filter(|now| t.take_interrupt(*now)).count();
        // zeros at 10, 20, ..., 100: floor(100 / (9 + 1))
        assert_eq!(ticks, 10);
        assert!(t.take_interrupt(1000), "wraps 110..1000 pend once");
        assert!(!t.take_interrupt(1000));
    }

    #[test]
    fn countflag_is_set_by_a_wrap_and_cleared_by_reading() {
        let mut t = running(9, 0);
        assert_eq!(t.read_csr(5) & COUNTFLAG, 0);
        assert_ne!(t.read_csr(10) & COUNTFLAG, 0);
        assert_eq!(t.read_csr(15) & COUNTFLAG, 0);
    }

    #[test]
    fn a_disabled_counter_holds_its_value() {
        let mut t = running(99, 0);
        t.write_csr(0, 50);
        assert_eq!(t.value(50), 50);
        assert_eq!(t.value(5000), 50);
        assert_eq!(t.next_interrupt(), None);
    }
}
