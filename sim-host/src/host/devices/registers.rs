//! Registers that hold what firmware writes (enable and reset bits,
//! prescalers no model reads): a table of offsets, names, reset values
//! and writable bits, each block's from its manual. An offset not in the
//! table is refused with the block's name.

use super::device::Refusal;

/// One register of a block.
#[derive(Debug, Clone, Copy)]
pub struct RegisterSpec {
    pub offset: u32,
    pub name: &'static str,
    pub reset: u32,
    /// The bits a write changes (the others are read-only or reserved).
    pub writable: u32,
}

/// A register every bit of which holds what is written.
pub const fn held(offset: u32, name: &'static str, reset: u32) -> RegisterSpec {
    masked(offset, name, reset, u32::MAX)
}

/// A register whose `writable` bits hold what is written.
pub const fn masked(offset: u32, name: &'static str, reset: u32, writable: u32) -> RegisterSpec {
    RegisterSpec {
        offset,
        name,
        reset,
        writable,
    }
}

/// A block's registers and their values.
#[derive(Debug, Clone)]
pub struct RegisterFile {
    block: String,
    base: u64,
    specs: &'static [RegisterSpec],
    values: Vec<u32>,
}

impl RegisterFile {
    pub fn new(block: &str, base: u64, specs: &'static [RegisterSpec]) -> RegisterFile {
        RegisterFile {
            block: block.to_owned(),
            base,
            specs,
            values: specs.iter().map(|s| s.reset).collect(),
        }
    }

    fn index(&self, offset: u32) -> Option<usize> {
        self.specs.iter().position(|s| s.offset == offset)
    }

    /// The register's value, if the table has it.
    pub fn get(&self, offset: u32) -> Option<u32> {
        self.index(offset).map(|i| self.values[i])
    }

    /// Sets a register whole (the model's own updates: ready flags).
    pub fn set(&mut self, offset: u32, value: u32) {
        if let Some(i) = self.index(offset) {
            self.values[i] = value;
        }
    }

    /// A read, or the refusal naming the offset.
    pub fn read(&self, offset: u32) -> Result<u32, Refusal> {
        self.get(offset).ok_or_else(|| self.unmodelled(offset))
    }

    /// A write of the bytes `mask` selects, limited to the writable bits.
    pub fn write(&mut self, offset: u32, value: u32, mask: u32) -> Result<(), Refusal> {
        let i = self.index(offset).ok_or_else(|| self.unmodelled(offset))?;
        let bits = mask & self.specs[i].writable;
        self.values[i] = (self.values[i] & !bits) | (value & bits);
        Ok(())
    }

    /// The register's name ("RCC_CR").
    pub fn name(&self, offset: u32) -> Option<&'static str> {
        self.index(offset).map(|i| self.specs[i].name)
    }

    /// The refusal of an offset the table lacks.
    pub fn unmodelled(&self, offset: u32) -> Refusal {
        Refusal(format!(
            "{} offset {offset:#05x} ({:#010x}) is a register of {} the model does not answer",
            self.block,
            self.base + u64::from(offset),
            self.block
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[RegisterSpec] = &[RegisterSpec {
        offset: 0x30,
        name: "X_ENR",
        reset: 0x0010_0000,
        writable: 0x00ff_ffff,
    }];

    #[test]
    fn writes_change_only_writable_bits_of_their_bytes() {
        let mut r = RegisterFile::new("X", 0x4000_0000, SPECS);
        assert_eq!(r.read(0x30), Ok(0x0010_0000));
        r.write(0x30, 0xffff_ffff, 0x0000_ff00).unwrap();
        assert_eq!(r.read(0x30), Ok(0x0010_ff00));
        r.write(0x30, 0xffff_ffff, u32::MAX).unwrap();
        assert_eq!(r.read(0x30), Ok(0x00ff_ffff));
    }

    #[test]
    fn an_offset_not_in_the_table_is_refused_by_name() {
        let r = RegisterFile::new("X", 0x4000_0000, SPECS);
        let Refusal(text) = r.read(0x34).unwrap_err();
        assert!(text.contains("X offset 0x034 (0x40000034)"), "{text}");
    }
}
