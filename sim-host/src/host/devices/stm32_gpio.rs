//! An STM32F4's GPIO port (RM0090 Rev 19, chapter 8 "General-purpose
//! I/Os"), as start-up code and HALs use it: the configuration registers
//! hold what firmware writes (a HAL's read-modify-write of MODER or AFRL
//! reads back what it wrote), BSRR sets and resets ODR bits, IDR reads
//! the pins' levels. Nothing is connected to the pins: a pin the port
//! drives (general-purpose output) reads what ODR drives, an analog pin
//! reads 0 (RM0090 8.3.12), any other pin reads its pull (1 with the
//! pull-up, else 0: the model's assumption; the levels a peripheral
//! drives on an alternate-function pin are not modelled). The lock
//! (LCKR) holds what is written but is not enforced. A port whose clock
//! is off ignores the access with a warning citing its gate, as the
//! UARTs do (`uart`).

use super::device::{ClockView, Device, Effects, Now, Refusal};
use super::registers::{masked as reg, RegisterFile, RegisterSpec};
use crate::model::devices::GpioSpec;
use std::ops::Range;

/// A port's register block: 1 KiB (RM0090 Table 1: GPIOA 0x4002 0000 -
/// 0x4002 03FF).
pub const BLOCK_BYTES: u64 = 0x400;

const MODER: u32 = 0x00;
const OTYPER: u32 = 0x04;
const PUPDR: u32 = 0x0c;
const IDR: u32 = 0x10;
const ODR: u32 = 0x14;
const BSRR: u32 = 0x18;

/// The port a `[[gpio]]` entry describes.
pub fn build(spec: &GpioSpec) -> Box<dyn Device> {
    let specs = match spec.port {
        0 => PORT_A,
        1 => PORT_B,
        _ => OTHER_PORTS,
    };
    Box::new(Gpio {
        spec: spec.clone(),
        regs: RegisterFile::new(&spec.name, spec.base, specs),
        warned: false,
    })
}

struct Gpio {
    spec: GpioSpec,
    regs: RegisterFile,
    /// Whether the gate's warning was given (once per port).
    warned: bool,
}

impl Gpio {
    /// The gate that does not hold, as a warning's text.
    fn gate_failure(&self, clocks: &dyn ClockView) -> Option<String> {
        self.spec.gates.iter().find_map(|g| {
            let value = clocks.bit(g.register, g.bit)?;
            (value != g.set).then(|| {
                format!(
                    "{}: accessed while bit {} of {:#010x} is {} ({}); the access is ignored",
                    self.spec.name,
                    g.bit,
                    g.register,
                    u8::from(value),
                    g.cite
                )
            })
        })
    }

    fn gated(&mut self, clocks: &dyn ClockView, fx: &mut Effects) -> bool {
        let Some(failure) = self.gate_failure(clocks) else {
            return false;
        };
        if !std::mem::replace(&mut self.warned, true) {
            fx.warnings.push(failure);
        }
        true
    }

    /// IDR: each pin's level with nothing connected (see the module's
    /// documentation).
    fn input(&self) -> u32 {
        let r = |o| self.regs.get(o).unwrap_or(0);
        let (moder, otyper, pupdr, odr) = (r(MODER), r(OTYPER), r(PUPDR), r(ODR));
        (0..16)
            .filter(|pin| {
                let mode = moder >> (2 * pin) & 3;
                let pulled_up = pupdr >> (2 * pin) & 3 == 1;
                let driven_high = odr >> pin & 1 == 1;
                let open_drain = otyper >> pin & 1 == 1;
                match mode {
                    // RM0090 8.3.10: the output drives ODR's level; an
                    // open-drain 1 leaves the pin to its pull
                    1 => driven_high && (!open_drain || pulled_up),
                    // RM0090 8.3.12: analog, "read access to the input data
                    // register gets the value 0"
                    3 => false,
                    _ => pulled_up,
                }
            })
            .fold(0, |idr, pin| idr | 1 << pin)
    }

    /// RM0090 8.4.7: BSRR's low half sets ODR bits, its high half resets
    /// them; "if both BSx and BRx are set, BSx has priority".
    fn set_reset(&mut self, value: u32) {
        let set = value & 0xffff;
        let reset = value >> 16 & !set;
        let odr = self.regs.get(ODR).unwrap_or(0);
        self.regs.set(ODR, (odr & !reset) | set);
    }
}

impl Device for Gpio {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn blocks(&self) -> Vec<Range<u64>> {
        std::iter::once(self.spec.base..self.spec.base + BLOCK_BYTES).collect()
    }

    fn read(
        &mut self,
        addr: u64,
        _now: Now,
        clocks: &dyn ClockView,
        fx: &mut Effects,
    ) -> Result<u32, Refusal> {
        let offset = (addr - self.spec.base) as u32;
        let value = self.regs.read(offset)?;
        if self.gated(clocks, fx) {
            return Ok(0);
        }
        Ok(match offset {
            IDR => self.input(),
            // RM0090 8.4.7: BSRR is write-only, "a read to these bits
            // returns the value 0x0000"
            BSRR => 0,
            _ => value,
        })
    }

    fn write(
        &mut self,
        addr: u64,
        value: u32,
        mask: u32,
        _now: Now,
        clocks: &dyn ClockView,
        fx: &mut Effects,
    ) -> Result<(), Refusal> {
        let offset = (addr - self.spec.base) as u32;
        self.regs.read(offset)?;
        if self.gated(clocks, fx) {
            return Ok(());
        }
        if offset == BSRR {
            self.set_reset(value & mask);
            return Ok(());
        }
        self.regs.write(offset, value, mask)
    }
}

/// The registers of RM0090 8.4 (8.4.11, GPIO register map, Table 39),
/// with the reset values of a port whose MODER, OSPEEDR and PUPDR reset
/// to `moder`, `ospeedr` and `pupdr`. IDR (8.4.5) is read-only, BSRR
/// (8.4.7) write-only; OTYPER, ODR (8.4.2, 8.4.6) have 16 bits, LCKR
/// (8.4.8) 17 (LCKK and LCK15:0).
const fn port(moder: u32, ospeedr: u32, pupdr: u32) -> [RegisterSpec; 10] {
    [
        reg(MODER, "GPIOx_MODER", moder, u32::MAX),
        reg(OTYPER, "GPIOx_OTYPER", 0, 0xffff),
        reg(0x08, "GPIOx_OSPEEDR", ospeedr, u32::MAX),
        reg(PUPDR, "GPIOx_PUPDR", pupdr, u32::MAX),
        reg(IDR, "GPIOx_IDR", 0, 0),
        reg(ODR, "GPIOx_ODR", 0, 0xffff),
        reg(BSRR, "GPIOx_BSRR", 0, 0),
        reg(0x1c, "GPIOx_LCKR", 0, 0x1_ffff),
        reg(0x20, "GPIOx_AFRL", 0, u32::MAX),
        reg(0x24, "GPIOx_AFRH", 0, u32::MAX),
    ]
}

/// Port A: the debug pins PA13-PA15 (JTMS-SWDIO, JTCK-SWCLK, JTDI) in
/// their alternate function at reset. RM0090 8.4.1 (MODER 0xA800 0000
/// for port A), 8.4.3 (OSPEEDR 0x0000 0000 for ports other than B),
/// 8.4.4 (PUPDR 0x6400 0000 for port A).
const PORT_A: &[RegisterSpec] = &port(0xa800_0000, 0, 0x6400_0000);
/// Port B: PB3 and PB4 (JTDO-SWO, NJTRST). RM0090 8.4.1 (MODER
/// 0x0000 0280 for port B), 8.4.3 (OSPEEDR 0x0000 00C0 for port B),
/// 8.4.4 (PUPDR 0x0000 0100 for port B).
const PORT_B: &[RegisterSpec] = &port(0x0000_0280, 0x0000_00c0, 0x0000_0100);
/// Every other port: RM0090 8.4.1, 8.4.3, 8.4.4 (0x0000 0000 for the
/// other ports).
const OTHER_PORTS: &[RegisterSpec] = &port(0, 0, 0);

#[cfg(test)]
mod tests {
    use super::super::device::FixedClocks;
    use super::*;
    use crate::model::devices::{GateFile, GpioKind};

    const BASE: u64 = 0x4002_0000;

    fn gpio(port: u8, gates: Vec<GateFile>) -> Box<dyn Device> {
        build(&GpioSpec {
            kind: GpioKind::Stm32f4,
            name: format!("GPIO{}", char::from(b'A' + port)),
            base: BASE + 0x400 * u64::from(port),
            port,
            gates,
        })
    }

    fn r(g: &mut dyn Device, offset: u64) -> u32 {
        let base = g.blocks()[0].start;
        g.read(
            base + offset,
            Now::default(),
            &FixedClocks(1),
            &mut Effects::default(),
        )
        .unwrap()
    }

    fn w(g: &mut dyn Device, offset: u64, value: u32, mask: u32) {
        let base = g.blocks()[0].start;
        g.write(
            base + offset,
            value,
            mask,
            Now::default(),
            &FixedClocks(1),
            &mut Effects::default(),
        )
        .unwrap();
    }

    #[test]
    fn each_port_starts_at_rm0090s_reset_values() {
        let (mut a, mut b, mut c) = (gpio(0, vec![]), gpio(1, vec![]), gpio(2, vec![]));
        assert_eq!(r(&mut *a, 0x00), 0xa800_0000, "8.4.1 port A");
        assert_eq!(r(&mut *b, 0x00), 0x0000_0280, "8.4.1 port B");
        assert_eq!(r(&mut *c, 0x00), 0);
        assert_eq!(r(&mut *b, 0x08), 0x0000_00c0, "8.4.3 port B");
        assert_eq!(r(&mut *a, 0x0c), 0x6400_0000, "8.4.4 port A");
        assert_eq!(r(&mut *b, 0x0c), 0x0000_0100, "8.4.4 port B");
    }

    /// stm32f4xx-hal's PA2 as USART2_TX: AF7 into AFRL[11:8], then MODER
    /// bits 5:4 = 10, each a read-modify-write.
    #[test]
    fn a_read_modify_write_keeps_what_was_written() {
        let mut a = gpio(0, vec![]);
        let afrl = r(&mut *a, 0x20);
        w(&mut *a, 0x20, (afrl & !(0xf << 8)) | 7 << 8, u32::MAX);
        let moder = r(&mut *a, 0x00);
        w(&mut *a, 0x00, (moder & !(3 << 4)) | 2 << 4, u32::MAX);
        assert_eq!(r(&mut *a, 0x20), 0x700);
        assert_eq!(r(&mut *a, 0x00), 0xa800_0020);
        // a byte write changes only its byte
        w(&mut *a, 0x20, 0x0000_5500, 0x0000_ff00);
        assert_eq!(r(&mut *a, 0x20), 0x5500);
    }

    #[test]
    fn bsrr_sets_and_resets_odr_and_reads_as_0() {
        let mut c = gpio(2, vec![]);
        w(&mut *c, 0x18, 0b1011, u32::MAX);
        assert_eq!(r(&mut *c, 0x14), 0b1011);
        // reset bit 1, set bit 2; bit 3 both: set wins (8.4.7)
        w(&mut *c, 0x18, (0b1010 << 16) | 0b1100, u32::MAX);
        assert_eq!(r(&mut *c, 0x14), 0b1101);
        assert_eq!(r(&mut *c, 0x18), 0);
        // a half-word write to BSRR's upper half resets only
        w(&mut *c, 0x18, 0b0001 << 16, 0xffff_0000);
        assert_eq!(r(&mut *c, 0x14), 0b1100);
    }

    #[test]
    fn idr_reads_the_driven_outputs_the_pulls_and_0_for_analog() {
        let mut c = gpio(2, vec![]);
        // pin 0 output high, pin 1 output low, pin 2 input pulled up,
        // pin 3 analog pulled up (reads 0), pin 4 open-drain high, floating
        w(
            &mut *c,
            0x00,
            0b01 | 0b01 << 2 | 0b11 << 6 | 0b01 << 8,
            u32::MAX,
        );
        w(&mut *c, 0x04, 1 << 4, u32::MAX);
        w(&mut *c, 0x0c, 0b01 << 4 | 0b01 << 6, u32::MAX);
        w(&mut *c, 0x14, 0b1_0001, u32::MAX);
        assert_eq!(r(&mut *c, 0x10), 0b0101);
        // writes to IDR change nothing
        w(&mut *c, 0x10, u32::MAX, u32::MAX);
        assert_eq!(r(&mut *c, 0x10), 0b0101);
    }

    #[test]
    fn a_port_without_its_clock_ignores_the_access_with_a_warning() {
        let gate = GateFile {
            register: 0x4002_3830,
            bit: 0,
            set: true,
            cite: "RM0090 6.3.10 RCC_AHB1ENR.GPIOAEN".into(),
        };
        let mut a = gpio(0, vec![gate]);
        // FixedClocks answers no bit: the gate holds
        assert_eq!(r(&mut *a, 0x00), 0xa800_0000);
        struct Off;
        impl ClockView for Off {
            fn clock_hz(&self, _: &str) -> Option<u64> {
                None
            }
            fn bit(&self, _: u64, _: u8) -> Option<bool> {
                Some(false)
            }
        }
        let mut fx = Effects::default();
        let read = a.read(BASE, Now::default(), &Off, &mut fx).unwrap();
        assert_eq!(read, 0);
        a.write(BASE, 0, u32::MAX, Now::default(), &Off, &mut fx)
            .unwrap();
        assert_eq!(fx.warnings.len(), 1, "{:?}", fx.warnings);
        assert!(fx.warnings[0].contains("GPIOAEN"), "{:?}", fx.warnings);
        assert_eq!(r(&mut *a, 0x00), 0xa800_0000, "the write was ignored");
    }

    #[test]
    fn an_offset_outside_the_map_is_refused_by_name() {
        let mut a = gpio(0, vec![]);
        let err = a
            .read(
                BASE + 0x28,
                Now::default(),
                &FixedClocks(1),
                &mut Effects::default(),
            )
            .unwrap_err();
        assert!(err.0.contains("GPIOA offset 0x028"), "{err:?}");
    }
}
