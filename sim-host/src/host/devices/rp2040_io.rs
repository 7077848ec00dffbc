//! The RP2040's IO_BANK0 and PADS_BANK0 (RP2040 Datasheet, Raspberry Pi
//! Ltd, 2.19 "GPIO"; register offsets, writable bits and reset values
//! from pico-sdk's src/rp2040/hardware_regs/include/hardware/regs/
//! {io_bank0,pads_bank0}.h), as HALs set a pin's function and pad:
//! registers that hold what firmware writes (`registers::masked`).
//! Nothing is connected to the pins, and nothing follows from these
//! values (the UART prints whichever pins it is given).
//!
//! - IO_BANK0: GPIOn_CTRL (FUNCSEL and the overrides) and the interrupt
//!   enables and forces of both processors and the dormant wake
//!   (PROCn_INTEx, PROCn_INTFx, DORMANT_WAKE_INTEx/INTFx). GPIOn_STATUS,
//!   INTRx and the INTSx registers report the pins' levels and edges,
//!   which the model does not follow: they are refused by name.
//! - PADS_BANK0: VOLTAGE_SELECT and each pad's control (GPIO0-29, SWCLK,
//!   SWD).
//!
//! Both answer through the atomic XOR, SET and CLEAR aliases at +0x1000,
//! +0x2000, +0x3000 (2.1.2; rp2040-hal sets and clears pad bits through
//! them), a narrow write replicated across the word (2.1.4), as the clock
//! tree does (`rp2040_clocks`). A block held in reset (its RESET_DONE
//! bit clear: the entry's gate) ignores the access with a warning citing
//! the gate, as the UARTs do.

use super::device::{ClockView, Device, Effects, Now, Refusal};
use super::registers::{masked, RegisterFile, RegisterSpec};
use super::rp2_common::{replicate, Alias};
use crate::model::devices::{GpioKind, GpioSpec};
use std::ops::Range;

/// The block a `[[gpio]]` entry of kind `rp2040-io-bank0` or
/// `rp2040-pads-bank0` describes.
pub fn build(spec: &GpioSpec) -> Box<dyn Device> {
    let specs: &'static [RegisterSpec] = match spec.kind {
        GpioKind::Rp2040PadsBank0 => PADS_BANK0,
        _ => IO_BANK0,
    };
    Box::new(IoBlock {
        spec: spec.clone(),
        regs: RegisterFile::new(&spec.name, spec.base, specs),
        warned: false,
    })
}

struct IoBlock {
    spec: GpioSpec,
    regs: RegisterFile,
    /// Whether the gate's warning was given (once per block).
    warned: bool,
}

impl IoBlock {
    /// The register's offset and the alias the address reaches it by.
    fn decode(&self, addr: u64) -> (u32, Alias) {
        let offset = addr - self.spec.base;
        ((offset & 0xfff) as u32, Alias::of(offset >> 12))
    }

    /// Whether a gate does not hold (warned once): the access is ignored.
    fn gated(&mut self, clocks: &dyn ClockView, fx: &mut Effects) -> bool {
        let failure = self.spec.gates.iter().find_map(|g| {
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
        });
        let Some(failure) = failure else {
            return false;
        };
        if !std::mem::replace(&mut self.warned, true) {
            fx.warnings.push(failure);
        }
        true
    }
}

impl Device for IoBlock {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn blocks(&self) -> Vec<Range<u64>> {
        std::iter::once(self.spec.base..self.spec.base + self.spec.kind.block_bytes()).collect()
    }

    fn read(
        &mut self,
        addr: u64,
        _now: Now,
        clocks: &dyn ClockView,
        fx: &mut Effects,
    ) -> Result<u32, Refusal> {
        let (offset, _) = self.decode(addr);
        let value = self.regs.read(offset)?;
        Ok(if self.gated(clocks, fx) { 0 } else { value })
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
        let (offset, alias) = self.decode(addr);
        let current = self.regs.read(offset)?;
        if self.gated(clocks, fx) {
            return Ok(());
        }
        let new = alias.apply(current, replicate(value, mask));
        self.regs.write(offset, new, u32::MAX)
    }
}

/// GPIOn_CTRL's names (io_bank0.h).
const CTRL_NAMES: [&str; 30] = [
    "GPIO0_CTRL",
    "GPIO1_CTRL",
    "GPIO2_CTRL",
    "GPIO3_CTRL",
    "GPIO4_CTRL",
    "GPIO5_CTRL",
    "GPIO6_CTRL",
    "GPIO7_CTRL",
    "GPIO8_CTRL",
    "GPIO9_CTRL",
    "GPIO10_CTRL",
    "GPIO11_CTRL",
    "GPIO12_CTRL",
    "GPIO13_CTRL",
    "GPIO14_CTRL",
    "GPIO15_CTRL",
    "GPIO16_CTRL",
    "GPIO17_CTRL",
    "GPIO18_CTRL",
    "GPIO19_CTRL",
    "GPIO20_CTRL",
    "GPIO21_CTRL",
    "GPIO22_CTRL",
    "GPIO23_CTRL",
    "GPIO24_CTRL",
    "GPIO25_CTRL",
    "GPIO26_CTRL",
    "GPIO27_CTRL",
    "GPIO28_CTRL",
    "GPIO29_CTRL",
];

/// The interrupt enables and forces (io_bank0.h: PROC0_INTE0 at 0x100,
/// PROC0_INTF0 at 0x110, PROC1_INTE0 at 0x130, PROC1_INTF0 at 0x140,
/// DORMANT_WAKE_INTE0 at 0x160, DORMANT_WAKE_INTF0 at 0x170; four
/// registers each, the last of each 24 bits wide: GPIO24-29's 4 bits).
const INT_NAMES: [(u32, [&str; 4]); 6] = [
    (
        0x100,
        ["PROC0_INTE0", "PROC0_INTE1", "PROC0_INTE2", "PROC0_INTE3"],
    ),
    (
        0x110,
        ["PROC0_INTF0", "PROC0_INTF1", "PROC0_INTF2", "PROC0_INTF3"],
    ),
    (
        0x130,
        ["PROC1_INTE0", "PROC1_INTE1", "PROC1_INTE2", "PROC1_INTE3"],
    ),
    (
        0x140,
        ["PROC1_INTF0", "PROC1_INTF1", "PROC1_INTF2", "PROC1_INTF3"],
    ),
    (
        0x160,
        [
            "DORMANT_WAKE_INTE0",
            "DORMANT_WAKE_INTE1",
            "DORMANT_WAKE_INTE2",
            "DORMANT_WAKE_INTE3",
        ],
    ),
    (
        0x170,
        [
            "DORMANT_WAKE_INTF0",
            "DORMANT_WAKE_INTF1",
            "DORMANT_WAKE_INTF2",
            "DORMANT_WAKE_INTF3",
        ],
    ),
];

/// io_bank0.h: GPIOn_CTRL at 8n + 4, bits 0x3003331f, reset 0x1f (FUNCSEL
/// 31, "null"); the interrupt enables and forces, reset 0.
const fn io_bank0() -> [RegisterSpec; 54] {
    let mut out = [masked(0, "", 0, 0); 54];
    let mut n = 0;
    while n < 30 {
        out[n] = masked(8 * n as u32 + 4, CTRL_NAMES[n], 0x1f, 0x3003_331f);
        n += 1;
    }
    let mut group = 0;
    while group < 6 {
        let (start, names) = INT_NAMES[group];
        let mut i = 0;
        while i < 4 {
            let bits = if i == 3 { 0x00ff_ffff } else { u32::MAX };
            out[30 + 4 * group + i] = masked(start + 4 * i as u32, names[i], 0, bits);
            i += 1;
        }
        group += 1;
    }
    out
}

const IO_BANK0: &[RegisterSpec] = &io_bank0();

/// The pads' names (pads_bank0.h).
const PAD_NAMES: [&str; 30] = [
    "GPIO0", "GPIO1", "GPIO2", "GPIO3", "GPIO4", "GPIO5", "GPIO6", "GPIO7", "GPIO8", "GPIO9",
    "GPIO10", "GPIO11", "GPIO12", "GPIO13", "GPIO14", "GPIO15", "GPIO16", "GPIO17", "GPIO18",
    "GPIO19", "GPIO20", "GPIO21", "GPIO22", "GPIO23", "GPIO24", "GPIO25", "GPIO26", "GPIO27",
    "GPIO28", "GPIO29",
];

/// pads_bank0.h: VOLTAGE_SELECT at 0 (1 bit, reset 0), GPIOn at 4n + 4
/// (8 bits, reset 0x56: IE, DRIVE 4 mA, PDE, SCHMITT), SWCLK at 0x7c
/// (reset 0xda), SWD at 0x80 (reset 0x5a).
const fn pads_bank0() -> [RegisterSpec; 33] {
    let mut out = [masked(0, "VOLTAGE_SELECT", 0, 1); 33];
    let mut n = 0;
    while n < 30 {
        out[1 + n] = masked(4 * n as u32 + 4, PAD_NAMES[n], 0x56, 0xff);
        n += 1;
    }
    out[31] = masked(0x7c, "SWCLK", 0xda, 0xff);
    out[32] = masked(0x80, "SWD", 0x5a, 0xff);
    out
}

const PADS_BANK0: &[RegisterSpec] = &pads_bank0();

#[cfg(test)]
mod tests {
    use super::super::device::FixedClocks;
    use super::*;
    use crate::model::devices::GateFile;

    fn block(kind: GpioKind, name: &str, base: u64, gates: Vec<GateFile>) -> Box<dyn Device> {
        build(&GpioSpec {
            kind,
            name: name.into(),
            base,
            port: 0,
            gates,
        })
    }

    /// A clock view whose every gate bit reads `value`.
    struct Gate(bool);

    impl ClockView for Gate {
        fn clock_hz(&self, _: &str) -> Option<u64> {
            Some(125_000_000)
        }
        fn bit(&self, _: u64, _: u8) -> Option<bool> {
            Some(self.0)
        }
    }

    fn read(d: &mut dyn Device, addr: u64) -> Result<u32, Refusal> {
        d.read(
            addr,
            Now::default(),
            &FixedClocks(1),
            &mut Effects::default(),
        )
    }

    fn write(d: &mut dyn Device, addr: u64, value: u32, mask: u32) {
        let fx = &mut Effects::default();
        (d.write(addr, value, mask, Now::default(), &FixedClocks(1), fx)).unwrap();
    }

    #[test]
    fn funcsel_holds_what_is_written_and_starts_null() {
        let mut io = block(GpioKind::Rp2040IoBank0, "IO_BANK0", 0x4001_4000, vec![]);
        // GPIO0_CTRL at reset: FUNCSEL 31 (null)
        assert_eq!(read(&mut *io, 0x4001_4004), Ok(0x1f));
        // FUNCSEL 2 (UART0 TX on GPIO0), written whole
        write(&mut *io, 0x4001_4004, 2, u32::MAX);
        assert_eq!(read(&mut *io, 0x4001_4004), Ok(2));
        // GPIO29_CTRL at 0xec; reserved bits stay clear
        write(&mut *io, 0x4001_40ec, u32::MAX, u32::MAX);
        assert_eq!(read(&mut *io, 0x4001_40ec), Ok(0x3003_331f));
        // PROC0_INTE3 has GPIO24-29's 24 bits
        write(&mut *io, 0x4001_410c, u32::MAX, u32::MAX);
        assert_eq!(read(&mut *io, 0x4001_410c), Ok(0x00ff_ffff));
    }

    #[test]
    fn status_and_raw_interrupts_are_refused_by_name() {
        let mut io = block(GpioKind::Rp2040IoBank0, "IO_BANK0", 0x4001_4000, vec![]);
        for addr in [0x4001_4000, 0x4001_40f0, 0x4001_4120] {
            let Refusal(text) = read(&mut *io, addr).unwrap_err();
            assert!(text.starts_with("IO_BANK0 offset"), "{text}");
        }
    }

    /// Datasheet 2.1.2: XOR at +0x1000, SET at +0x2000, CLEAR at +0x3000;
    /// 2.1.4: a byte write is replicated across the word.
    #[test]
    fn pads_answer_through_the_atomic_aliases() {
        let mut pads = block(GpioKind::Rp2040PadsBank0, "PADS_BANK0", 0x4001_c000, vec![]);
        let gpio0 = 0x4001_c004;
        assert_eq!(read(&mut *pads, gpio0), Ok(0x56));
        write(&mut *pads, gpio0 + 0x3000, 1 << 6, u32::MAX); // IE clear
        assert_eq!(read(&mut *pads, gpio0), Ok(0x16));
        write(&mut *pads, gpio0 + 0x2000, 1 << 7, u32::MAX); // OD set
        assert_eq!(read(&mut *pads, gpio0), Ok(0x96));
        write(&mut *pads, gpio0 + 0x1000, 0x81, u32::MAX); // XOR
        assert_eq!(read(&mut *pads, gpio0), Ok(0x17));
        // a byte write of 0x3 to the upper lane lands, replicated, in
        // the pad's low byte
        write(&mut *pads, gpio0, 0x0300_0000, 0xff00_0000);
        assert_eq!(read(&mut *pads, gpio0), Ok(0x03));
        assert_eq!(read(&mut *pads, 0x4001_c07c), Ok(0xda));
        assert_eq!(read(&mut *pads, 0x4001_c080), Ok(0x5a));
        assert!(read(&mut *pads, 0x4001_c084).is_err());
    }

    #[test]
    fn a_block_in_reset_ignores_the_access_with_a_warning() {
        let gate = GateFile {
            register: 0x4000_c008,
            bit: 5,
            set: true,
            cite: "RESET_DONE.IO_BANK0".into(),
        };
        let mut io = block(GpioKind::Rp2040IoBank0, "IO_BANK0", 0x4001_4000, vec![gate]);
        let mut fx = Effects::default();
        let now = Now::default();
        io.write(0x4001_4004, 2, u32::MAX, now, &Gate(false), &mut fx)
            .unwrap();
        assert_eq!(io.read(0x4001_4004, now, &Gate(false), &mut fx), Ok(0));
        assert_eq!(fx.warnings.len(), 1, "{:?}", fx.warnings);
        assert!(fx.warnings[0].contains("RESET_DONE.IO_BANK0"));
        // out of reset: the write was ignored
        assert_eq!(io.read(0x4001_4004, now, &Gate(true), &mut fx), Ok(0x1f));
    }
}
