//! What the RP2040's and the RP2350's clock trees share, where the two
//! chips behave the same (`rp2040_clocks`, `rp2350_clocks`): the atomic
//! register aliases, narrow writes, a PLL's registers and arithmetic
//! (pico-sdk's pll.h is the same for both chips: CS, PWR, FBDIV_INT, PRIM
//! at 0x0 to 0xc, the same fields, reset values and ranges), and the
//! crystal's start-up delay (xosc.h STARTUP, the same on both).

use crate::model::clocks::format_hz;

/// The model's PLL lock time: 100 us after the PLL is powered with its
/// reference running. Neither datasheet (RP2040 2.18, RP2350 8.6) gives a
/// lock time; the firmware polls CS.LOCK. The model's assumption until
/// measured.
pub const PLL_LOCK_PS: u128 = 100_000_000;

pub const PICOS_PER_SECOND: u128 = 1_000_000_000_000;

/// `n` cycles of a clock at `hz` in picoseconds, rounded up (a wait of
/// `n` cycles is not over earlier).
pub fn cycles_ps(n: u128, hz: u64) -> u128 {
    (n * PICOS_PER_SECOND).div_ceil(u128::from(hz.max(1)))
}

/// How an address reaches its register (RP2040 datasheet 2.1.2, RP2350
/// datasheet 2.1.3: the XOR, SET and CLEAR aliases at +0x1000, +0x2000,
/// +0x3000).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alias {
    Normal,
    Xor,
    Set,
    Clear,
}

impl Alias {
    pub fn of(window: u64) -> Alias {
        match window {
            1 => Alias::Xor,
            2 => Alias::Set,
            3 => Alias::Clear,
            _ => Alias::Normal,
        }
    }

    /// The value an alias write leaves for the register to take.
    pub fn apply(self, current: u32, v: u32) -> u32 {
        match self {
            Alias::Normal => v,
            Alias::Xor => current ^ v,
            Alias::Set => current | v,
            Alias::Clear => current & !v,
        }
    }
}

/// RP2040 datasheet 2.1.4, RP2350 datasheet 2.1.5 (Narrow IO Register
/// Writes): an IO register samples the whole 32-bit write bus, on which a
/// byte or halfword is replicated.
pub fn replicate(value: u32, mask: u32) -> u32 {
    if mask == u32::MAX || mask == 0 {
        return value;
    }
    let data = (value & mask) >> mask.trailing_zeros();
    match mask.count_ones() {
        8 => data * 0x0101_0101,
        _ => data * 0x0001_0001,
    }
}

/// When a crystal enabled at `enabled_at` is stable: STARTUP.DELAY x 256
/// (x 4 with X4) of its cycles (xosc.h STARTUP.DELAY "in multiples of
/// 256*xtal_period", X4 "multiplies the startup_delay by 4").
pub fn xosc_stable_at(enabled_at: u128, startup: u32, xosc_hz: u64) -> u128 {
    let x4 = if startup & (1 << 20) != 0 { 4 } else { 1 };
    let delay = u128::from(startup & 0x3fff) * x4;
    enabled_at + cycles_ps(delay * 256, xosc_hz)
}

pub const PLL_PD: u32 = 1 << 0;
pub const PLL_POSTDIVPD: u32 = 1 << 3;
pub const PLL_VCOPD: u32 = 1 << 5;
pub const PLL_BYPASS: u32 = 1 << 8;
pub const PLL_LOCK: u32 = 1 << 31;

/// A PLL's registers (pll.h) and when it was powered.
#[derive(Debug, Clone)]
pub struct Pll {
    pub cs: u32,
    pub pwr: u32,
    pub fbdiv: u32,
    pub prim: u32,
    /// When PD and VCOPD were last cleared together.
    pub on_at: Option<u128>,
    /// When POSTDIVPD was last cleared.
    pub postdiv_on_at: Option<u128>,
    /// Locked before the run began (a pico-sdk start).
    pub settled: bool,
}

impl Pll {
    /// pll.h reset values: CS 0x1, PWR 0x2d, FBDIV_INT 0, PRIM 0x77000.
    pub fn at_reset() -> Pll {
        Pll {
            cs: 1,
            pwr: 0x2d,
            fbdiv: 0,
            prim: 0x7_7000,
            on_at: None,
            postdiv_on_at: None,
            settled: false,
        }
    }

    /// Locked and running before the run began, at `fbdiv` and
    /// `postdivs` with REFDIV 1 (pico-sdk's pll_init leaves PWR 0x04:
    /// only DSMPD set).
    pub fn started(fbdiv: u32, postdivs: (u32, u32)) -> Pll {
        Pll {
            fbdiv,
            prim: (postdivs.0 << 16) | (postdivs.1 << 12),
            pwr: 0x04,
            on_at: Some(0),
            postdiv_on_at: Some(0),
            settled: true,
            ..Pll::at_reset()
        }
    }

    pub fn powered(&self) -> bool {
        self.pwr & (PLL_PD | PLL_VCOPD) == 0
    }

    pub fn refdiv(&self) -> u32 {
        self.cs & 0x3f
    }

    pub fn postdivs(&self) -> (u32, u32) {
        ((self.prim >> 16) & 7, (self.prim >> 12) & 7)
    }

    /// XOSC / REFDIV x FBDIV (0 with REFDIV 0).
    pub fn vco_hz(&self, xosc_hz: u64) -> u64 {
        match self.refdiv() {
            0 => 0,
            r => xosc_hz / u64::from(r) * u64::from(self.fbdiv),
        }
    }

    /// The output: the VCO over both post-dividers (0 with either at 0);
    /// bypassed, the crystal (the model's assumption: REFDIV not applied).
    pub fn out_hz(&self, xosc_hz: u64) -> u64 {
        if self.cs & PLL_BYPASS != 0 {
            return xosc_hz;
        }
        match self.postdivs() {
            (0, _) | (_, 0) => 0,
            (a, b) => self.vco_hz(xosc_hz) / u64::from(a * b),
        }
    }

    /// When LOCK sets (or set), given when the reference became stable.
    pub fn lock_at(&self, reference: u128) -> Option<u128> {
        if !self.powered() {
            return None;
        }
        if self.settled {
            return Some(reference);
        }
        Some(self.on_at?.max(reference) + PLL_LOCK_PS)
    }

    /// PWR written: when the VCO and the post-dividers were powered.
    /// Returns whether the VCO and whether the post-dividers were just
    /// powered up.
    pub fn write_pwr(&mut self, new: u32, now: u128) -> (bool, bool) {
        let was_on = self.powered();
        let postdiv_was_on = self.pwr & PLL_POSTDIVPD == 0;
        self.pwr = new;
        if !self.powered() {
            self.on_at = None;
            self.settled = false;
        } else if !was_on {
            self.on_at = Some(now);
        }
        if new & PLL_POSTDIVPD != 0 {
            self.postdiv_on_at = None;
        } else if !postdiv_was_on {
            self.postdiv_on_at = Some(now);
        }
        (
            self.powered() && !was_on,
            new & PLL_POSTDIVPD == 0 && !postdiv_was_on,
        )
    }

    /// The ranges when it is powered (pll.h CS: "Reference clock
    /// frequency min=5MHz, max=800MHz; Feedback divider min=16, max=320;
    /// VCO frequency min=750MHz, max=1600MHz"), each broken one a warning
    /// citing `rule` (the chip's datasheet section beside pll.h).
    pub fn range_warnings(&self, name: &str, xosc_hz: u64, rule: &str) -> Vec<String> {
        if xosc_hz == 0 {
            return vec![format!(
                "{name} powered, but the board has no crystal ([clocks] xosc_hz = 0): its \
                 reference never runs and LOCK never sets"
            )];
        }
        if self.refdiv() == 0 {
            return vec![format!(
                "{name} powered with REFDIV = 0: pll.h, \"behaviour is undefined for div=0\""
            )];
        }
        let mut out = Vec::new();
        let reference = xosc_hz / u64::from(self.refdiv());
        if !(5_000_000..=800_000_000).contains(&reference) {
            out.push(format!(
                "{name} powered with a reference of {} (XOSC {} / REFDIV {}): {rule} require \
                 5 MHz to 800 MHz",
                format_hz(reference),
                format_hz(xosc_hz),
                self.refdiv()
            ));
        }
        if !(16..=320).contains(&self.fbdiv) {
            out.push(format!(
                "{name} powered with FBDIV_INT = {}: {rule} allow 16 to 320",
                self.fbdiv
            ));
        }
        let vco = self.vco_hz(xosc_hz);
        if !(750_000_000..=1_600_000_000).contains(&vco) {
            out.push(format!(
                "{name} powered with a VCO of {} ({} x FBDIV {}): {rule} require 750 MHz to \
                 1600 MHz",
                format_hz(vco),
                format_hz(reference),
                self.fbdiv
            ));
        }
        out
    }

    /// How the report names the PLL's output.
    pub fn describe(&self, name: &str, xosc_hz: u64) -> String {
        if self.cs & PLL_BYPASS != 0 {
            return format!("{name} bypassed (XOSC {})", format_hz(xosc_hz));
        }
        let (a, b) = self.postdivs();
        format!(
            "{name} (XOSC {} / {} x {} / {a} / {b})",
            format_hz(xosc_hz),
            self.refdiv(),
            self.fbdiv
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pll_divides_its_vco_by_both_post_dividers() {
        // 12 MHz / 1 x 125 = 1500 MHz, / 5 / 2 = 150 MHz (the RP2350's
        // pico-sdk PLL_SYS); / 6 / 2 = 125 MHz (the RP2040's)
        assert_eq!(Pll::started(125, (5, 2)).out_hz(12_000_000), 150_000_000);
        assert_eq!(Pll::started(125, (6, 2)).out_hz(12_000_000), 125_000_000);
        let mut p = Pll::started(125, (0, 2));
        assert_eq!(p.out_hz(12_000_000), 0);
        p.cs |= PLL_BYPASS;
        assert_eq!(p.out_hz(12_000_000), 12_000_000);
    }

    #[test]
    fn a_pll_locks_its_lock_time_after_power_and_reference() {
        let mut p = Pll::at_reset();
        assert_eq!(p.lock_at(0), None);
        assert_eq!(p.write_pwr(0x0d, 7), (false, false)); // PD still set
        assert_eq!(p.write_pwr(0x0c, 10), (true, false));
        assert_eq!(p.lock_at(0), Some(10 + PLL_LOCK_PS));
        assert_eq!(p.lock_at(50), Some(50 + PLL_LOCK_PS));
        assert_eq!(p.write_pwr(0x04, 20), (false, true));
        assert_eq!(p.postdiv_on_at, Some(20));
    }

    #[test]
    fn the_crystal_is_stable_after_256_of_its_cycles_per_delay_unit() {
        // 47 x 256 cycles of 12 MHz = 1,002,666.67 ns, rounded up
        assert_eq!(xosc_stable_at(0, 47, 12_000_000), 1_002_666_667);
        assert_eq!(
            xosc_stable_at(5, 47 | (1 << 20), 12_000_000),
            5 + 4_010_666_667
        );
    }

    #[test]
    fn out_of_range_settings_each_name_their_rule() {
        let p = Pll::started(10, (1, 1));
        let w = p.range_warnings("PLL_SYS", 12_000_000, "the rule");
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("FBDIV_INT = 10: the rule allow 16 to 320"));
        assert!(w[1].contains("VCO of 120 MHz"));
        assert!(Pll::started(125, (5, 2))
            .range_warnings("PLL_SYS", 12_000_000, "r")
            .is_empty());
    }

    #[test]
    fn aliases_and_narrow_writes() {
        assert_eq!(Alias::of(2).apply(0b100, 0b011), 0b111);
        assert_eq!(Alias::of(3).apply(0b111, 0b011), 0b100);
        assert_eq!(Alias::of(1).apply(0b101, 0b011), 0b110);
        assert_eq!(replicate(0xab00, 0xff00), 0xabab_abab);
        assert_eq!(replicate(0x1234_0000, 0xffff_0000), 0x1234_1234);
    }
}
