//! The RP2040's single-cycle IO block, SIO (RP2040 Datasheet, Raspberry
//! Pi Ltd, 2.3.1 "SIO"; offsets, bits and reset values from pico-sdk's
//! src/rp2040/hardware_regs/include/hardware/regs/sio.h), as start-up
//! code and HALs use it on core 0:
//!
//! - CPUID reads 0 (sio.h: "Value is 0 when read from processor core 0";
//!   the preset runs core 0 only);
//! - GPIO_OUT, GPIO_OE, GPIO_HI_OUT, GPIO_HI_OE hold what is written,
//!   with their SET, CLR and XOR aliases (2.3.1.2; 30 bits for bank 0,
//!   6 for the QSPI pins); reading an alias, write-only in sio.h, is
//!   refused;
//! - the spinlocks (2.3.1.3; sio.h SPINLOCK0-31 at 0x100-0x17c): a read
//!   of an unlocked lock claims it and returns 1 << n, of a locked one
//!   returns 0; a write of any value releases it; SPINLOCK_ST is the
//!   locks' bitmap. The locks are free at reset: the model starts the
//!   run there (the datasheet notes they survive a core reset, which
//!   rp2040-hal's entry macro answers by releasing all 32);
//! - the hardware divider (2.3.1.5): a write to DIV_UDIVIDEND,
//!   DIV_UDIVISOR (unsigned) or DIV_SDIVIDEND, DIV_SDIVISOR (signed)
//!   starts a calculation of the two operands, which "calculates the
//!   quotient / and remainder % of this division over the next 8 cycles,
//!   and on the 9th cycle the results can be read": DIV_CSR.READY reads
//!   0 at an access fewer than [`DIV_CYCLES`] + 1 cycles after the
//!   writing instruction's (accesses are placed at their instruction's
//!   first cycle, `engine::mmio`; a store to the SIO takes one cycle on
//!   the IOPORT, 2.3.1). QUOTIENT and REMAINDER read then are "undefined
//!   while CSR_READY is low" (sio.h): the model answers the result and
//!   warns once, naming the rule. A write to QUOTIENT or REMAINDER halts
//!   the calculation and sets READY (sio.h, for save and restore); DIRTY
//!   sets on any write of a divider register and clears when QUOTIENT is
//!   read. Division by zero gives what silicon was measured to give
//!   (quotient 0xffffffff unsigned, -1 or 1 against the dividend's sign
//!   signed; the remainder the dividend: vak, "RP2040 hardware divider",
//!   vak.dreamwidth.org/1097369.html, 2023, the datasheet gives none);
//!   i32::MIN / -1 gives i32::MIN, remainder 0 (the same measurement).
//!
//! Not modelled, refused by name: GPIO_IN and GPIO_HI_IN (nothing is
//! connected to the pins), the inter-core FIFOs (one core), the
//! interpolators. Only 32-bit accesses are modelled; a narrower one is
//! refused.

use super::device::{ClockView, Device, Effects, Now, Refusal};
use crate::model::devices::GpioSpec;
use std::ops::Range;

/// The divider's calculation: "over the next 8 cycles, and on the 9th
/// cycle the results can be read" (datasheet 2.3.1.5).
pub const DIV_CYCLES: u64 = 8;

const CPUID: u32 = 0x000;
const SPINLOCK_ST: u32 = 0x05c;
const DIV_UDIVIDEND: u32 = 0x060;
const DIV_UDIVISOR: u32 = 0x064;
const DIV_SDIVIDEND: u32 = 0x068;
const DIV_SDIVISOR: u32 = 0x06c;
const DIV_QUOTIENT: u32 = 0x070;
const DIV_REMAINDER: u32 = 0x074;
const DIV_CSR: u32 = 0x078;
const SPINLOCK0: u32 = 0x100;
const SPINLOCK31: u32 = 0x17c;

/// The SIO a `[[gpio]]` entry of kind `rp2040-sio` describes.
pub fn build(spec: &GpioSpec) -> Box<dyn Device> {
    Box::new(Sio {
        spec: spec.clone(),
        gpio: [0; 4],
        locks: 0,
        div: Divider::default(),
        read_early: false,
    })
}

/// The divider's registers and its calculation.
#[derive(Debug, Default)]
struct Divider {
    dividend: u32,
    divisor: u32,
    quotient: u32,
    remainder: u32,
    /// The cycle of the operand write that started the calculation under
    /// way (None: halted by a result write, or none since reset).
    started: Option<u64>,
    dirty: bool,
}

impl Divider {
    /// Whether the results can be read at cycle `now` (datasheet
    /// 2.3.1.5: on the 9th cycle after the write).
    fn ready(&self, now: u64) -> bool {
        self.started
            .is_none_or(|at| now >= at.saturating_add(DIV_CYCLES + 1))
    }

    /// An operand written at cycle `now`: a new calculation.
    fn start(&mut self, now: u64, signed: bool) {
        (self.quotient, self.remainder) = if signed {
            let (q, r) = divide_signed(self.dividend as i32, self.divisor as i32);
            (q as u32, r as u32)
        } else {
            divide_unsigned(self.dividend, self.divisor)
        };
        self.started = Some(now);
        self.dirty = true;
    }
}

/// The unsigned quotient and remainder, with the silicon's answer to a
/// zero divisor (the module's header).
fn divide_unsigned(n: u32, d: u32) -> (u32, u32) {
    match d {
        0 => (u32::MAX, n),
        _ => (n / d, n % d),
    }
}

/// The signed quotient and remainder (truncating, the remainder with the
/// dividend's sign, sio.h), with the silicon's answers to a zero divisor
/// and to i32::MIN / -1 (the module's header).
fn divide_signed(n: i32, d: i32) -> (i32, i32) {
    match d {
        0 if n < 0 => (1, n),
        0 => (-1, n),
        _ => (n.wrapping_div(d), n.wrapping_rem(d)),
    }
}

struct Sio {
    spec: GpioSpec,
    /// GPIO_OUT, GPIO_OE, GPIO_HI_OUT, GPIO_HI_OE.
    gpio: [u32; 4],
    /// One bit per spinlock, set while claimed.
    locks: u32,
    div: Divider,
    /// Whether a result was read while a calculation was under way (the
    /// run is warned once).
    read_early: bool,
}

/// The GPIO registers at 0x10-0x4c: which of `Sio::gpio`, and how the
/// offset reaches it (0 the register, 1 SET, 2 CLR, 3 XOR).
fn gpio_register(offset: u32) -> Option<(usize, u32, u32)> {
    if !(0x010..=0x04c).contains(&offset) {
        return None;
    }
    let index = ((offset - 0x010) / 0x10) as usize;
    // sio.h: GPIO_OUT/OE 30 bits (GPIO0-29), GPIO_HI_OUT/OE 6 (the QSPI
    // pins)
    let bits = if index < 2 { 0x3fff_ffff } else { 0x3f };
    Some((index, offset >> 2 & 3, bits))
}

/// sio.h's name of a register of the block.
fn register_name(offset: u32) -> String {
    const GPIO: [&str; 4] = ["GPIO_OUT", "GPIO_OE", "GPIO_HI_OUT", "GPIO_HI_OE"];
    const ALIAS: [&str; 4] = ["", "_SET", "_CLR", "_XOR"];
    if let Some((index, alias, _)) = gpio_register(offset) {
        return format!("{}{}", GPIO[index], ALIAS[alias as usize]);
    }
    let name = match offset {
        CPUID => "CPUID",
        0x004 => "GPIO_IN",
        0x008 => "GPIO_HI_IN",
        0x050 => "FIFO_ST",
        0x054 => "FIFO_WR",
        0x058 => "FIFO_RD",
        SPINLOCK_ST => "SPINLOCK_ST",
        DIV_UDIVIDEND => "DIV_UDIVIDEND",
        DIV_UDIVISOR => "DIV_UDIVISOR",
        DIV_SDIVIDEND => "DIV_SDIVIDEND",
        DIV_SDIVISOR => "DIV_SDIVISOR",
        DIV_QUOTIENT => "DIV_QUOTIENT",
        DIV_REMAINDER => "DIV_REMAINDER",
        DIV_CSR => "DIV_CSR",
        0x080..=0x0fc => "an interpolator register (INTERP0/INTERP1)",
        SPINLOCK0..=SPINLOCK31 => return format!("SPINLOCK{}", (offset - SPINLOCK0) / 4),
        _ => "no register",
    };
    name.to_owned()
}

impl Sio {
    fn refuse(&self, offset: u32, why: &str) -> Refusal {
        Refusal(format!(
            "{} offset {offset:#05x} ({:#010x}, {}) {why}",
            self.spec.name,
            self.spec.base + u64::from(offset),
            register_name(offset)
        ))
    }

    fn unmodelled(&self, offset: u32) -> Refusal {
        let block = &self.spec.name;
        self.refuse(
            offset,
            &format!("is a register of {block} the model does not answer"),
        )
    }

    /// A result read: its value, and the warning of a read before READY.
    fn result(&mut self, value: u32, offset: u32, now: Now, fx: &mut Effects) -> u32 {
        if !self.div.ready(now.cycles) && !std::mem::replace(&mut self.read_early, true) {
            let since = now.cycles - self.div.started.unwrap_or(now.cycles);
            fx.warnings.push(format!(
                "SIO {} read {since} cycle(s) after the division started: its contents are \
                 undefined while DIV_CSR.READY is low (sio.h; RP2040 datasheet 2.3.1.5: the \
                 results can be read on the 9th cycle); the model gave the result",
                register_name(offset)
            ));
        }
        value
    }

    fn read_divider(&mut self, offset: u32, now: Now, fx: &mut Effects) -> u32 {
        match offset {
            DIV_UDIVIDEND | DIV_SDIVIDEND => self.div.dividend,
            DIV_UDIVISOR | DIV_SDIVISOR => self.div.divisor,
            DIV_QUOTIENT => {
                let value = self.result(self.div.quotient, offset, now, fx);
                self.div.dirty = false;
                value
            }
            DIV_REMAINDER => self.result(self.div.remainder, offset, now, fx),
            _ => u32::from(self.div.ready(now.cycles)) | u32::from(self.div.dirty) << 1,
        }
    }

    fn write_divider(&mut self, offset: u32, value: u32, now: Now) {
        match offset {
            DIV_UDIVIDEND | DIV_SDIVIDEND => self.div.dividend = value,
            DIV_UDIVISOR | DIV_SDIVISOR => self.div.divisor = value,
            DIV_QUOTIENT => self.div.quotient = value,
            DIV_REMAINDER => self.div.remainder = value,
            // DIV_CSR: read-only (sio.h)
            _ => return,
        }
        if offset >= DIV_QUOTIENT {
            // sio.h: "halts any in-progress calculation and sets the
            // CSR_READY and CSR_DIRTY flags"
            self.div.started = None;
            self.div.dirty = true;
        } else {
            self.div.start(now.cycles, offset >= DIV_SDIVIDEND);
        }
    }
}

impl Device for Sio {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn blocks(&self) -> Vec<Range<u64>> {
        std::iter::once(self.spec.base..self.spec.base + self.spec.kind.block_bytes()).collect()
    }

    fn read(
        &mut self,
        addr: u64,
        now: Now,
        _clocks: &dyn ClockView,
        fx: &mut Effects,
    ) -> Result<u32, Refusal> {
        let offset = (addr - self.spec.base) as u32;
        if let Some((index, alias, _)) = gpio_register(offset) {
            if alias != 0 {
                return Err(self.refuse(offset, "is write-only (sio.h)"));
            }
            return Ok(self.gpio[index]);
        }
        Ok(match offset {
            CPUID => 0,
            SPINLOCK_ST => self.locks,
            DIV_UDIVIDEND..=DIV_CSR => self.read_divider(offset, now, fx),
            SPINLOCK0..=SPINLOCK31 => {
                let bit = 1 << ((offset - SPINLOCK0) / 4);
                if self.locks & bit != 0 {
                    0
                } else {
                    self.locks |= bit;
                    bit
                }
            }
            _ => return Err(self.unmodelled(offset)),
        })
    }

    fn write(
        &mut self,
        addr: u64,
        value: u32,
        mask: u32,
        now: Now,
        _clocks: &dyn ClockView,
        _fx: &mut Effects,
    ) -> Result<(), Refusal> {
        let offset = (addr - self.spec.base) as u32;
        if mask != u32::MAX {
            return Err(self.refuse(offset, "written narrower than 32 bits (not modelled)"));
        }
        if let Some((index, alias, bits)) = gpio_register(offset) {
            let r = &mut self.gpio[index];
            *r = match alias {
                0 => value,
                1 => *r | value,
                2 => *r & !value,
                _ => *r ^ value,
            } & bits;
            return Ok(());
        }
        match offset {
            // read-only (sio.h): the write is ignored
            CPUID | SPINLOCK_ST => {}
            DIV_UDIVIDEND..=DIV_CSR => self.write_divider(offset, value, now),
            SPINLOCK0..=SPINLOCK31 => self.locks &= !(1 << ((offset - SPINLOCK0) / 4)),
            _ => return Err(self.unmodelled(offset)),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::device::FixedClocks;
    use super::*;
    use crate::model::devices::GpioKind;

    const BASE: u64 = 0xd000_0000;

    fn sio() -> Box<dyn Device> {
        build(&GpioSpec {
            kind: GpioKind::Rp2040Sio,
            name: "SIO".into(),
            base: BASE,
            port: 0,
            gates: Vec::new(),
        })
    }

    fn at(cycles: u64) -> Now {
        Now { cycles, picos: 0 }
    }

    fn read_at(d: &mut dyn Device, offset: u32, cycles: u64, fx: &mut Effects) -> u32 {
        d.read(BASE + u64::from(offset), at(cycles), &FixedClocks(1), fx)
            .unwrap()
    }

    fn write_at(d: &mut dyn Device, offset: u32, value: u32, cycles: u64) {
        let fx = &mut Effects::default();
        d.write(
            BASE + u64::from(offset),
            value,
            u32::MAX,
            at(cycles),
            &FixedClocks(1),
            fx,
        )
        .unwrap();
    }

    #[test]
    fn core_0_reads_cpuid_0() {
        let mut s = sio();
        assert_eq!(read_at(&mut *s, CPUID, 0, &mut Effects::default()), 0);
    }

    /// Datasheet 2.3.1.5: written at cycle 100, the results can be read
    /// on the 9th cycle after: READY is 0 at 101 to 108, 1 from 109.
    #[test]
    fn the_divider_is_ready_on_the_ninth_cycle_after_the_write() {
        let mut s = sio();
        let fx = &mut Effects::default();
        assert_eq!(read_at(&mut *s, DIV_CSR, 0, fx), 1, "READY, clean at reset");
        write_at(&mut *s, DIV_UDIVIDEND, 1_000_003, 96);
        write_at(&mut *s, DIV_UDIVISOR, 7, 100);
        assert_eq!(read_at(&mut *s, DIV_CSR, 108, fx), 0b10, "DIRTY, not READY");
        assert_eq!(read_at(&mut *s, DIV_CSR, 109, fx), 0b11);
        assert_eq!(read_at(&mut *s, DIV_REMAINDER, 109, fx), 1_000_003 % 7);
        assert_eq!(read_at(&mut *s, DIV_QUOTIENT, 110, fx), 142_857);
        assert_eq!(read_at(&mut *s, DIV_CSR, 111, fx), 0b01, "QUOTIENT read");
        assert!(fx.warnings.is_empty(), "{:?}", fx.warnings);
    }

    #[test]
    fn a_result_read_before_ready_is_warned_once() {
        let mut s = sio();
        let fx = &mut Effects::default();
        write_at(&mut *s, DIV_SDIVIDEND, -100i32 as u32, 0);
        write_at(&mut *s, DIV_SDIVISOR, 9, 2);
        assert_eq!(read_at(&mut *s, DIV_QUOTIENT, 6, fx), -11i32 as u32);
        assert_eq!(read_at(&mut *s, DIV_REMAINDER, 7, fx), -1i32 as u32);
        assert_eq!(fx.warnings.len(), 1, "{:?}", fx.warnings);
        assert!(
            fx.warnings[0].starts_with("SIO DIV_QUOTIENT read 4 cycle(s) after"),
            "{}",
            fx.warnings[0]
        );
        assert!(fx.warnings[0].contains("2.3.1.5"));
    }

    /// sio.h: a result write halts the calculation, sets READY and DIRTY.
    #[test]
    fn a_result_write_restores_state_and_halts_the_calculation() {
        let mut s = sio();
        let fx = &mut Effects::default();
        write_at(&mut *s, DIV_UDIVISOR, 3, 0);
        write_at(&mut *s, DIV_REMAINDER, 5, 2);
        write_at(&mut *s, DIV_QUOTIENT, 77, 4);
        assert_eq!(read_at(&mut *s, DIV_CSR, 5, fx), 0b11);
        assert_eq!(read_at(&mut *s, DIV_REMAINDER, 5, fx), 5);
        assert_eq!(read_at(&mut *s, DIV_QUOTIENT, 6, fx), 77);
        assert!(fx.warnings.is_empty());
    }

    #[test]
    fn division_by_zero_and_overflow_give_the_measured_answers() {
        assert_eq!(divide_unsigned(100, 0), (u32::MAX, 100));
        assert_eq!(divide_signed(100, 0), (-1, 100));
        assert_eq!(divide_signed(-100, 0), (1, -100));
        assert_eq!(divide_signed(0, 0), (-1, 0));
        assert_eq!(divide_signed(i32::MIN, -1), (i32::MIN, 0));
        assert_eq!(divide_signed(100, -9), (-11, 1));
        assert_eq!(divide_signed(-100, -9), (11, -1));
    }

    /// sio.h SPINLOCK0: a read claims (1 << n) or finds it locked (0); a
    /// write releases.
    #[test]
    fn spinlocks_claim_on_read_and_release_on_write() {
        let mut s = sio();
        let fx = &mut Effects::default();
        let lock31 = SPINLOCK31;
        assert_eq!(read_at(&mut *s, lock31, 0, fx), 1 << 31);
        assert_eq!(read_at(&mut *s, lock31, 1, fx), 0, "already claimed");
        assert_eq!(read_at(&mut *s, SPINLOCK_ST, 2, fx), 1 << 31);
        write_at(&mut *s, lock31, 1, 3);
        assert_eq!(read_at(&mut *s, SPINLOCK_ST, 4, fx), 0);
        assert_eq!(read_at(&mut *s, SPINLOCK0 + 4, 5, fx), 1 << 1);
    }

    #[test]
    fn gpio_out_and_oe_hold_with_their_aliases() {
        let mut s = sio();
        let fx = &mut Effects::default();
        write_at(&mut *s, 0x010, u32::MAX, 0); // GPIO_OUT: 30 bits
        assert_eq!(read_at(&mut *s, 0x010, 1, fx), 0x3fff_ffff);
        write_at(&mut *s, 0x018, 1 << 25, 2); // GPIO_OUT_CLR
        write_at(&mut *s, 0x024, 1 << 25, 2); // GPIO_OE_SET
        write_at(&mut *s, 0x02c, 1 | 1 << 25, 2); // GPIO_OE_XOR
        assert_eq!(read_at(&mut *s, 0x010, 3, fx), 0x3fff_ffff & !(1 << 25));
        assert_eq!(read_at(&mut *s, 0x020, 3, fx), 1);
        write_at(&mut *s, 0x030, u32::MAX, 4); // GPIO_HI_OUT: 6 bits
        assert_eq!(read_at(&mut *s, 0x030, 5, fx), 0x3f);
    }

    #[test]
    fn what_is_not_modelled_is_refused_by_name() {
        let mut s = sio();
        let fx = &mut Effects::default();
        let refused = |s: &mut Box<dyn Device>, offset: u32, fx: &mut Effects| {
            let Refusal(text) = s
                .read(BASE + u64::from(offset), at(0), &FixedClocks(1), fx)
                .unwrap_err();
            text
        };
        let text = refused(&mut s, 0x004, fx);
        assert_eq!(
            text,
            "SIO offset 0x004 (0xd0000004, GPIO_IN) is a register of SIO the model does not answer"
        );
        assert!(refused(&mut s, 0x058, fx).contains("FIFO_RD"));
        assert!(refused(&mut s, 0x080, fx).contains("INTERP0"));
        assert!(refused(&mut s, 0x014, fx).contains("GPIO_OUT_SET) is write-only"));
        let Refusal(text) = s
            .write(BASE + 0x64, 7, 0xff, at(0), &FixedClocks(1), fx)
            .unwrap_err();
        assert!(text.contains("DIV_UDIVISOR) written narrower"), "{text}");
    }
}
