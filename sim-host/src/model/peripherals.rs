//! The vendor peripherals around a core, which sim-host does not model:
//! where they are, so that an access to one is named (the peripheral and,
//! from a CMSIS-SVD file, the register) instead of "unmapped memory", and
//! so that `--peripherals ignore` can answer them.
//!
//! Two sources: the board ranges of a target file's `[system] peripherals`
//! (coarse: a bus segment per entry) and the peripherals of an SVD file
//! (`model::svd`). An address is named by the SVD first, the board second.

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

/// A register of a peripheral: its offset, size in bytes and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisterName {
    pub offset: u64,
    pub size: u64,
    pub name: String,
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
             (--peripherals ignore reads it as 0 and drops writes)",
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
            registers: vec![RegisterName {
                offset: 4,
                size: 4,
                name: "STATE".into(),
            }],
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
}
