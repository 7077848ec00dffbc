//! The vendor peripherals around a core, which sim-host does not model:
//! where they are, so that an access to one is named (the peripheral and,
//! from a CMSIS-SVD file, the register) instead of "unmapped memory", and
//! so that `--peripherals ignore` can answer them.
//!
//! Two sources: the board ranges of a target file's `[system] peripherals`
//! (coarse: a bus segment per entry) and the peripherals of an SVD file
//! (`model::svd`). An address is named by the SVD first, the board second.
//!
//! With `--peripherals ignore` a read returns the SVD's reset value of the
//! register it falls in (`PeripheralMap::reset_read`), 0 where none is
//! known; `polled_bits` finds the bits a polling loop tests.

mod polled_bits;

pub use polled_bits::polled_bits;

use super::target::Peripheral;

/// One peripheral's address range and, when known, its registers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappedPeripheral {
    pub name: String,
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// Where the range comes from: the target's board (the range) or the
    /// SVD file's name.
    pub source: String,
    /// Registers by offset from `start`, in offset order.
    pub registers: Vec<RegisterName>,
}

/// A register of a peripheral: its offset, size in bytes and name, and
/// from an SVD its reset value and fields.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RegisterName {
    pub offset: u64,
    pub size: u64,
    pub name: String,
    /// The value it holds at reset (`None`: the SVD gives none).
    pub reset: Option<ResetValue>,
    /// Its fields, in the SVD's order (empty: none described).
    pub fields: Vec<FieldBits>,
}

/// A register's reset value: `value` in the bits `mask` defines (CMSIS-SVD
/// `resetValue` and `resetMask`, inherited from the peripheral and device
/// when the register has none; the mask defaults to the register's size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResetValue {
    pub value: u64,
    pub mask: u64,
}

/// A field of a register: its name and bits `lsb .. lsb + width`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldBits {
    pub name: String,
    pub lsb: u32,
    pub width: u32,
}

impl FieldBits {
    /// The field's bits as a mask of its register.
    pub fn mask(&self) -> u64 {
        let ones = 1u64.checked_shl(self.width).map_or(u64::MAX, |b| b - 1);
        ones.checked_shl(self.lsb).unwrap_or(0)
    }

    /// `HSERDY (bit 17)` or `PLLN (bits 6-14)`.
    pub fn describe(&self) -> String {
        match self.width {
            0 | 1 => format!("{} (bit {})", self.name, self.lsb),
            w => format!("{} (bits {}-{})", self.name, self.lsb, self.lsb + w - 1),
        }
    }
}

/// What a read of a peripheral answers: the value, and whether each of
/// its bits is a known reset value (else the unknown ones read 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResetRead {
    pub value: u64,
    pub known: bool,
}

/// An address placed in a peripheral.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Located<'a> {
    pub peripheral: &'a MappedPeripheral,
    pub register: Option<&'a RegisterName>,
}

impl Located<'_> {
    /// `UART0.STATUS` or `APB` (a board range without registers).
    pub fn name(&self) -> String {
        match self.register {
            Some(r) => format!("{}.{}", self.peripheral.name, r.name),
            None => self.peripheral.name.clone(),
        }
    }
}

/// `size` bytes of register `r`'s reset value from byte `from`: the bits
/// its reset mask leaves undefined read 0, and make the read unknown.
fn bytes_of(r: &RegisterName, from: u64, size: u64) -> ResetRead {
    let Some(reset) = r.reset else {
        return ResetRead {
            value: 0,
            known: false,
        };
    };
    let width = 1u64
        .checked_shl(8 * size as u32)
        .map_or(u64::MAX, |b| b - 1);
    let bits = |v: u64| v.checked_shr(8 * from as u32).unwrap_or(0) & width;
    let (value, mask) = (bits(reset.value), bits(reset.mask));
    ResetRead {
        value: value & mask,
        known: mask == width,
    }
}

/// The peripherals of a run: the SVD's first, then the board's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeripheralMap {
    pub peripherals: Vec<MappedPeripheral>,
}

impl PeripheralMap {
    /// The map of a board's ranges and an SVD file's peripherals.
    pub fn new(board: &[Peripheral], svd: &[MappedPeripheral]) -> PeripheralMap {
        let mut peripherals = svd.to_vec();
        peripherals.extend(board.iter().map(|p| MappedPeripheral {
            name: p.name.clone(),
            start: p.start,
            end: p.end(),
            source: format!("{:#010x}..{:#010x} on the target's board", p.start, p.end()),
            registers: Vec::new(),
        }));
        PeripheralMap { peripherals }
    }

    pub fn is_empty(&self) -> bool {
        self.peripherals.is_empty()
    }

    /// The peripheral (and register) at `addr`.
    pub fn find(&self, addr: u64) -> Option<Located<'_>> {
        let peripheral = self
            .peripherals
            .iter()
            .find(|p| (p.start..p.end).contains(&addr))?;
        let offset = addr - peripheral.start;
        let register = peripheral
            .registers
            .iter()
            .find(|r| (r.offset..r.offset + r.size).contains(&offset));
        Some(Located {
            peripheral,
            register,
        })
    }

    /// A read of `size` bytes at `addr`, in peripheral `index` of the
    /// map: each byte from the reset value of the register it falls in
    /// (little-endian), 0 where the register, its reset value or the bits
    /// its reset mask defines are unknown.
    pub fn reset_read(&self, index: usize, addr: u64, size: usize) -> ResetRead {
        let peripheral = &self.peripherals[index];
        let offset = addr.wrapping_sub(peripheral.start);
        let size = size.min(8) as u64;
        let registers = &peripheral.registers;
        let holding = |at: u64| {
            registers
                .iter()
                .find(|r| (r.offset..r.offset + r.size).contains(&at))
        };
        // the common case: one register holds the whole access
        if let Some(r) = holding(offset).filter(|r| offset + size <= r.offset + r.size) {
            return bytes_of(r, offset - r.offset, size);
        }
        let mut read = ResetRead {
            value: 0,
            known: true,
        };
        for byte in 0..size {
            let at = offset + byte;
            let part = holding(at).map_or(
                ResetRead {
                    value: 0,
                    known: false,
                },
                |r| bytes_of(r, at - r.offset, 1),
            );
            read.known &= part.known;
            read.value |= part.value << (8 * byte);
        }
        read
    }

    /// What a fault at `addr` says about it: `in peripheral UART0, register
    /// STATUS (board.svd), a peripheral sim-host does not model (...)`.
    pub fn describe(&self, addr: u64) -> Option<String> {
        let at = self.find(addr)?;
        let register = at
            .register
            .map(|r| format!(", register {}", r.name))
            .unwrap_or_default();
        Some(format!(
            "in peripheral {}{register} ({}), which sim-host does not model \
             (--peripherals ignore reads its SVD reset value, or 0, and drops writes)",
            at.peripheral.name, at.peripheral.source
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map() -> PeripheralMap {
        let board = [Peripheral {
            name: "APB".into(),
            start: 0x4000_0000,
            size: 0x1_0000,
            cite: "AN385 Table 3-1".into(),
        }];
        let svd = [MappedPeripheral {
            name: "UART0".into(),
            start: 0x4000_4000,
            end: 0x4000_5000,
            source: "board.svd".into(),
            registers: vec![
                RegisterName {
                    offset: 4,
                    size: 4,
                    name: "STATE".into(),
                    reset: Some(ResetValue {
                        value: 0x1234_5678,
                        mask: 0xffff_ffff,
                    }),
                    ..RegisterName::default()
                },
                RegisterName {
                    offset: 8,
                    size: 2,
                    name: "HALF".into(),
                    // the top byte's bits are undefined at reset
                    reset: Some(ResetValue {
                        value: 0xabcd,
                        mask: 0x00ff,
                    }),
                    ..RegisterName::default()
                },
                RegisterName {
                    offset: 0xc,
                    size: 4,
                    name: "NONE".into(),
                    ..RegisterName::default()
                },
            ],
        }];
        PeripheralMap::new(&board, &svd)
    }

    #[test]
    fn the_svd_names_before_the_board() {
        let m = map();
        assert_eq!(m.find(0x4000_4006).unwrap().name(), "UART0.STATE");
        assert_eq!(m.find(0x4000_4000).unwrap().name(), "UART0");
        assert_eq!(m.find(0x4000_0010).unwrap().name(), "APB");
        assert!(m.find(0x4001_0000).is_none());
        let text = m.describe(0x4000_4004).unwrap();
        assert!(
            text.contains("peripheral UART0, register STATE (board.svd)"),
            "{text}"
        );
    }

    #[test]
    fn a_read_answers_the_bytes_of_the_reset_value_it_covers() {
        let m = map();
        let read = |addr, size| {
            let r = m.reset_read(0, addr, size);
            (r.value, r.known)
        };
        // STATE at +4 is 0x12345678: a word, the halves, each byte
        assert_eq!(read(0x4000_4004, 4), (0x1234_5678, true));
        assert_eq!(read(0x4000_4004, 2), (0x5678, true));
        assert_eq!(read(0x4000_4006, 2), (0x1234, true));
        assert_eq!(read(0x4000_4005, 1), (0x56, true));
        assert_eq!(read(0x4000_4007, 1), (0x12, true));
        // HALF at +8: 0xcd defined, the 0xab byte outside its mask
        assert_eq!(read(0x4000_4008, 1), (0xcd, true));
        assert_eq!(read(0x4000_4009, 1), (0, false));
        // a word over HALF and the 2 bytes after it (no register)
        assert_eq!(read(0x4000_4008, 4), (0xcd, false));
        // NONE has no reset value, nothing at +0
        assert_eq!(read(0x4000_400c, 4), (0, false));
        assert_eq!(read(0x4000_4000, 4), (0, false));
        // the board range holds no register
        assert_eq!(
            m.reset_read(1, 0x4000_0010, 4),
            ResetRead {
                value: 0,
                known: false
            }
        );
    }

    #[test]
    fn fields_are_described_by_their_bits() {
        let field = |lsb, width| FieldBits {
            name: "F".into(),
            lsb,
            width,
        };
        assert_eq!(field(17, 1).describe(), "F (bit 17)");
        assert_eq!(field(6, 9).describe(), "F (bits 6-14)");
        assert_eq!(field(6, 9).mask(), 0x7fc0);
        assert_eq!(field(0, 64).mask(), u64::MAX);
        assert_eq!(field(70, 2).mask(), 0);
    }
}
