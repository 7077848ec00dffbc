//! The ARM M-profile (Cortex-M) for gdbstub: `gdbstub_arch` has only
//! A-profile ARM (`Armv4t`, with CPSR and the FPA registers), whose
//! register file gdb would read as that of another core.
//!
//! The target description names the M-profile feature gdb knows
//! (`org.gnu.gdb.arm.m-profile`: r0-r12, sp, lr, pc, xpsr) and the system
//! feature with the two stack pointers (`org.gnu.gdb.arm.m-system`: msp,
//! psp). With no `regnum` attributes gdb numbers them in order, 0 to 18,
//! which is the order of `machine::DebugGuest`'s Arm registers.

use gdbstub::arch::{Arch, RegId, Registers};
use gdbstub_arch::arm::ArmBreakpointKind;
use std::num::NonZeroUsize;

/// How many registers the description lists.
pub const REGISTERS: usize = 19;
const PC: usize = 15;

const TARGET_XML: &str = r#"<?xml version="1.0"?>
<!DOCTYPE target SYSTEM "gdb-target.dtd">
<target version="1.0">
  <architecture>arm</architecture>
  <feature name="org.gnu.gdb.arm.m-profile">
    <reg name="r0" bitsize="32"/>
    <reg name="r1" bitsize="32"/>
    <reg name="r2" bitsize="32"/>
    <reg name="r3" bitsize="32"/>
    <reg name="r4" bitsize="32"/>
    <reg name="r5" bitsize="32"/>
    <reg name="r6" bitsize="32"/>
    <reg name="r7" bitsize="32"/>
    <reg name="r8" bitsize="32"/>
    <reg name="r9" bitsize="32"/>
    <reg name="r10" bitsize="32"/>
    <reg name="r11" bitsize="32"/>
    <reg name="r12" bitsize="32"/>
    <reg name="sp" bitsize="32" type="data_ptr"/>
    <reg name="lr" bitsize="32"/>
    <reg name="pc" bitsize="32" type="code_ptr"/>
    <reg name="xpsr" bitsize="32"/>
  </feature>
  <feature name="org.gnu.gdb.arm.m-system">
    <reg name="msp" bitsize="32" type="data_ptr"/>
    <reg name="psp" bitsize="32" type="data_ptr"/>
  </feature>
</target>
"#;

/// A Cortex-M core (ARMv6-M, ARMv7-M, ARMv7E-M, ARMv8-M mainline).
#[derive(Debug)]
pub enum CortexM {}

impl Arch for CortexM {
    type Usize = u32;
    type Registers = MProfileRegs;
    type RegId = MProfileRegId;
    type BreakpointKind = ArmBreakpointKind;

    fn target_description_xml() -> Option<&'static str> {
        Some(TARGET_XML)
    }
}

/// The registers in the description's order: r0-r12, sp, lr, pc, xpsr,
/// msp, psp.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MProfileRegs(pub [u32; REGISTERS]);

impl Registers for MProfileRegs {
    type ProgramCounter = u32;

    fn pc(&self) -> u32 {
        self.0[PC]
    }

    fn gdb_serialize(&self, mut write_byte: impl FnMut(Option<u8>)) {
        for byte in self.0.iter().flat_map(|r| r.to_le_bytes()) {
            write_byte(Some(byte));
        }
    }

    /// Takes all registers or a prefix of them (whole words only).
    fn gdb_deserialize(&mut self, bytes: &[u8]) -> Result<(), ()> {
        if bytes.len() % 4 != 0 || bytes.len() > REGISTERS * 4 {
            return Err(());
        }
        for (r, word) in self.0.iter_mut().zip(bytes.chunks_exact(4)) {
            *r = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
        }
        Ok(())
    }
}

/// A register by its number in the description (0-18).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MProfileRegId(pub usize);

impl RegId for MProfileRegId {
    fn from_raw_id(id: usize) -> Option<(Self, Option<NonZeroUsize>)> {
        (id < REGISTERS).then(|| (MProfileRegId(id), NonZeroUsize::new(4)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_round_trip_and_reject_bad_lengths() {
        let regs = MProfileRegs(std::array::from_fn(|i| i as u32 * 0x0101_0101));
        let mut bytes = Vec::new();
        regs.gdb_serialize(|b| bytes.push(b.unwrap_or(0)));
        assert_eq!(bytes.len(), REGISTERS * 4);
        let mut back = MProfileRegs::default();
        back.gdb_deserialize(&bytes).unwrap();
        assert_eq!(back, regs);
        assert_eq!(back.pc(), 15 * 0x0101_0101);
        assert!(back.gdb_deserialize(&bytes[..5]).is_err());
        assert!(back.gdb_deserialize(&[0; REGISTERS * 4 + 4]).is_err());
        assert!(MProfileRegId::from_raw_id(REGISTERS).is_none());
    }
}
