//! A `G` packet (write all registers) whose data is not the register
//! file's length is an error reply, and the session goes on (issue 43,
//! M11). gdbstub turns a `gdb_deserialize` failure into a fatal
//! "Received a packet with too much data" that ends the session; so
//! [`Checked`] wraps an architecture's registers, takes any length, and
//! remembers a wrong one for [`super::target::GdbTarget`]'s
//! `write_registers` to refuse with EINVAL (`E16`), writing nothing.

use gdbstub::arch::{Arch, Registers};
use std::marker::PhantomData;

/// Architecture `A` with length-checked registers (a type, never built).
#[derive(Debug)]
pub struct Checked<A>(PhantomData<A>);

impl<A: Arch> Arch for Checked<A> {
    type Usize = A::Usize;
    type Registers = CheckedRegs<A::Registers>;
    type BreakpointKind = A::BreakpointKind;
    type RegId = A::RegId;

    fn target_description_xml() -> Option<&'static str> {
        A::target_description_xml()
    }
}

/// Registers `R`, and the length of a `G` packet's data that was not
/// theirs (nothing of it was taken).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CheckedRegs<R> {
    pub regs: R,
    pub wrong_length: Option<WrongLength>,
}

/// A `G` packet's data length and the register file's, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrongLength {
    pub sent: usize,
    pub expected: usize,
}

/// The register file's length: what `R` serialises to.
fn file_length<R: Registers>() -> usize {
    let mut n = 0;
    R::default().gdb_serialize(|_| n += 1);
    n
}

impl<R: Registers> Registers for CheckedRegs<R> {
    type ProgramCounter = R::ProgramCounter;

    fn pc(&self) -> R::ProgramCounter {
        self.regs.pc()
    }

    fn gdb_serialize(&self, write_byte: impl FnMut(Option<u8>)) {
        self.regs.gdb_serialize(write_byte);
    }

    /// Never fails: a wrong length is kept for the write to refuse.
    fn gdb_deserialize(&mut self, bytes: &[u8]) -> Result<(), ()> {
        let expected = file_length::<R>();
        let wrong = WrongLength {
            sent: bytes.len(),
            expected,
        };
        self.wrong_length = if bytes.len() != expected {
            Some(wrong)
        } else {
            self.regs.gdb_deserialize(bytes).err().map(|()| wrong)
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::gdb::arch_m::{MProfileRegs, REGISTERS, VFP_REGISTERS};
    use gdbstub_arch::riscv::reg::RiscvCoreRegs;

    #[test]
    fn only_the_register_file_s_length_is_taken() {
        let mut regs = CheckedRegs::<MProfileRegs<false>>::default();
        assert_eq!(file_length::<MProfileRegs<false>>(), REGISTERS * 4);
        assert_eq!(
            file_length::<MProfileRegs<true>>(),
            REGISTERS * 4 + (VFP_REGISTERS - 1) * 8 + 4
        );
        for sent in [0, 2, 4, REGISTERS * 4 - 4, REGISTERS * 4 + 4] {
            assert_eq!(regs.gdb_deserialize(&vec![7; sent]), Ok(()));
            assert_eq!(
                regs.wrong_length,
                Some(WrongLength {
                    sent,
                    expected: REGISTERS * 4
                })
            );
            assert_eq!(regs.regs, MProfileRegs::default(), "nothing taken");
        }
        let whole: Vec<u8> = (0..REGISTERS * 4).map(|i| i as u8).collect();
        regs.gdb_deserialize(&whole).unwrap();
        assert_eq!(regs.wrong_length, None);
        assert_eq!(regs.pc(), u32::from_le_bytes([60, 61, 62, 63]));
        let mut rv = CheckedRegs::<RiscvCoreRegs<u32>>::default();
        rv.gdb_deserialize(&[1; 33 * 4]).unwrap();
        assert_eq!((rv.wrong_length, rv.pc()), (None, 0x0101_0101));
        rv.gdb_deserialize(&[1; 32 * 4]).unwrap();
        assert_eq!(rv.wrong_length.map(|w| w.expected), Some(33 * 4));
    }
}
