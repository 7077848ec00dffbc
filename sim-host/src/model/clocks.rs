//! The core clock over a run (issue 40): cycles stay cycles, but a board
//! whose firmware sets its own clock tree (an STM32's RCC, an RP2040's
//! CLOCKS) runs its cycles at the frequency in force when they ran. The
//! timeline turns a cycle count into simulated time, and keeps each
//! change (when, at which instruction, from what, to what) for the
//! report.
//!
//! Time is kept in picoseconds as an integer so reruns are identical and
//! conversions at any cycle agree with each other.

/// Clock changes a run may make; one more stops it (a firmware toggling
/// its clock in a loop would otherwise grow the list without bound).
pub const MAX_CLOCK_CHANGES: usize = 65_536;

const PICOS_PER_SECOND: u128 = 1_000_000_000_000;

/// One change of the core clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClockChange {
    /// The core's cycle count when it took effect.
    pub cycle: u64,
    /// The instruction that made it.
    pub pc: u64,
    pub from_hz: u64,
    pub to_hz: u64,
    /// What the clock runs from afterwards, as the clock tree names it
    /// ("PLL (HSE 8 MHz / 8 x 336 / 2)").
    pub source: String,
}

/// The core clock's history over a run.
#[derive(Debug, Clone)]
pub struct ClockTimeline {
    reset_hz: u64,
    changes: Vec<ClockChange>,
    /// Picoseconds elapsed at each change (parallel to `changes`).
    picos_at_change: Vec<u128>,
}

/// The clock changed more often than [`MAX_CLOCK_CHANGES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooManyChanges;

impl ClockTimeline {
    /// A clock running at `reset_hz` from cycle 0 (`reset_hz` > 0).
    pub fn new(reset_hz: u64) -> ClockTimeline {
        ClockTimeline {
            reset_hz: reset_hz.max(1),
            changes: Vec::new(),
            picos_at_change: Vec::new(),
        }
    }

    /// The clock at reset.
    pub fn reset_hz(&self) -> u64 {
        self.reset_hz
    }

    /// The clock in force now.
    pub fn hz(&self) -> u64 {
        self.changes.last().map_or(self.reset_hz, |c| c.to_hz)
    }

    /// Every change, in order.
    pub fn changes(&self) -> &[ClockChange] {
        &self.changes
    }

    /// The clock becomes `to_hz` at `cycle` (not before the last change);
    /// a change to the clock in force is no change.
    pub fn change(
        &mut self,
        cycle: u64,
        pc: u64,
        to_hz: u64,
        source: String,
    ) -> Result<(), TooManyChanges> {
        let from_hz = self.hz();
        if to_hz == from_hz || to_hz == 0 {
            return Ok(());
        }
        if self.changes.len() >= MAX_CLOCK_CHANGES {
            return Err(TooManyChanges);
        }
        let cycle = cycle.max(self.changes.last().map_or(0, |c| c.cycle));
        let picos = self.picos_at(cycle);
        self.changes.push(ClockChange {
            cycle,
            pc,
            from_hz,
            to_hz,
            source,
        });
        self.picos_at_change.push(picos);
        Ok(())
    }

    /// Picoseconds elapsed when the cycle count was `cycles`.
    pub fn picos_at(&self, cycles: u64) -> u128 {
        let last = self.changes.partition_point(|c| c.cycle <= cycles);
        let (base_cycle, base_picos, hz) = match last {
            0 => (0, 0, self.reset_hz),
            n => (
                self.changes[n - 1].cycle,
                self.picos_at_change[n - 1],
                self.changes[n - 1].to_hz,
            ),
        };
        base_picos + u128::from(cycles - base_cycle) * PICOS_PER_SECOND / u128::from(hz)
    }

    /// The first cycle at or after which `picos` have elapsed.
    pub fn cycle_at_picos(&self, picos: u128) -> u64 {
        let last = self.picos_at_change.partition_point(|p| *p <= picos);
        let (base_cycle, base_picos, hz) = match last {
            0 => (0, 0, self.reset_hz),
            n => (
                self.changes[n - 1].cycle,
                self.picos_at_change[n - 1],
                self.changes[n - 1].to_hz,
            ),
        };
        let cycles = ((picos - base_picos) * u128::from(hz)).div_ceil(PICOS_PER_SECOND);
        base_cycle.saturating_add(cycles.min(u128::from(u64::MAX)) as u64)
    }

    /// Seconds elapsed when the cycle count was `cycles`: each stretch's
    /// cycles over its clock, summed in floating point (a clock that never
    /// changed gives exactly cycles / Hz, as before there were clock trees).
    pub fn seconds_at(&self, cycles: u64) -> f64 {
        let mut seconds = 0.0;
        let (mut from, mut hz) = (0u64, self.reset_hz);
        for c in self.changes.iter().take_while(|c| c.cycle <= cycles) {
            seconds += (c.cycle - from) as f64 / hz as f64;
            (from, hz) = (c.cycle, c.to_hz);
        }
        seconds + (cycles - from) as f64 / hz as f64
    }
}

/// A frequency for people: "168 MHz", "12.5 MHz", "32.768 kHz".
pub fn format_hz(hz: u64) -> String {
    let (value, unit) = match hz {
        h if h >= 1_000_000 => (h as f64 / 1e6, "MHz"),
        h if h >= 1_000 => (h as f64 / 1e3, "kHz"),
        h => (h as f64, "Hz"),
    };
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_that_never_changes_is_cycles_over_its_frequency() {
        let t = ClockTimeline::new(16_000_000);
        assert_eq!(t.picos_at(16_000_000), PICOS_PER_SECOND);
        assert_eq!(t.hz(), 16_000_000);
        assert!(t.changes().is_empty());
    }

    #[test]
    fn time_integrates_each_stretch_at_its_own_clock() {
        // 16,000 cycles at 16 MHz (1 ms), then 168,000 at 168 MHz (1 ms)
        let mut t = ClockTimeline::new(16_000_000);
        t.change(16_000, 0x800_0100, 168_000_000, "PLL".into())
            .unwrap();
        assert_eq!(t.picos_at(16_000), 1_000_000_000);
        assert_eq!(t.picos_at(16_000 + 168_000), 2_000_000_000);
        // a cycle before the change is still at the reset clock
        assert_eq!(t.picos_at(8_000), 500_000_000);
        assert_eq!(t.changes()[0].from_hz, 16_000_000);
        assert_eq!(t.hz(), 168_000_000);
        assert_eq!(t.cycle_at_picos(500_000_000), 8_000);
        assert_eq!(t.cycle_at_picos(1_500_000_000), 16_000 + 84_000);
        // a time between two cycles rounds up to the next
        assert_eq!(t.cycle_at_picos(1), 1);
    }

    #[test]
    fn a_change_to_the_clock_in_force_is_not_recorded() {
        let mut t = ClockTimeline::new(16_000_000);
        t.change(5, 0, 16_000_000, "HSI".into()).unwrap();
        assert!(t.changes().is_empty());
    }

    #[test]
    fn changes_beyond_the_cap_are_refused() {
        let mut t = ClockTimeline::new(1_000);
        for n in 0..MAX_CLOCK_CHANGES as u64 {
            t.change(n, 0, 2_000 + (n % 2), String::new()).unwrap();
        }
        assert_eq!(t.change(1 << 40, 0, 7, String::new()), Err(TooManyChanges));
    }

    #[test]
    fn frequencies_print_in_their_unit() {
        assert_eq!(format_hz(168_000_000), "168 MHz");
        assert_eq!(format_hz(12_500_000), "12.5 MHz");
        assert_eq!(format_hz(32_768), "32.768 kHz");
    }
}
