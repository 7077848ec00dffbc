//! The ARM M-profile (Cortex-M) for gdbstub: `gdbstub_arch` has only
//! A-profile ARM (`Armv4t`, with CPSR and the FPA registers), whose
//! register file gdb would read as that of another core.
//!
//! The target description names the M-profile feature gdb knows
//! (`org.gnu.gdb.arm.m-profile`: r0-r12, sp, lr, pc, xpsr) and the system
//! feature with the two stack pointers (`org.gnu.gdb.arm.m-system`: msp,
//! psp). On a core with an FPU (`CortexM<true>`) it adds the VFP feature
//! (`org.gnu.gdb.arm.vfp`: d0-d15, 64-bit, and fpscr), from which gdb
//! derives s0-s31. With no `regnum` attributes gdb numbers them in order,
//! 0 to 18 and 19 to 35, which is the order of `engine::DebugGuest`'s Arm
//! registers.

use gdbstub::arch::{Arch, RegId, Registers};
use gdbstub_arch::arm::ArmBreakpointKind;
use std::num::NonZeroUsize;

/// How many core registers the description lists (r0-r15, xpsr, msp, psp).
pub const REGISTERS: usize = 19;
/// How many registers the VFP feature adds (d0-d15, fpscr).
pub const VFP_REGISTERS: usize = 17;
const ALL: usize = REGISTERS + VFP_REGISTERS;
const PC: usize = 15;

/// The registers of a description: 19, or 36 with the VFP feature.
pub const fn register_count(vfp: bool) -> usize {
    if vfp {
        ALL
    } else {
        REGISTERS
    }
}

/// Register `n`'s size in bytes: 8 for d0-d15, 4 for the others.
pub const fn register_size(n: usize) -> usize {
    if n >= REGISTERS && n < REGISTERS + 16 {
        8
    } else {
        4
    }
}

macro_rules! m_profile_features {
    () => {
        r#"<?xml version="1.0"?>
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
"#
    };
}

const TARGET_XML: &str = concat!(m_profile_features!(), "</target>\n");

/// gdb's own VFPv2 feature (gdb/features/arm/arm-vfpv2.xml): FPv4-SP and
/// FPv5 have 16 double registers (a single-precision FPU too: gdb shows
/// them whole and as the s registers they hold).
const TARGET_XML_VFP: &str = concat!(
    m_profile_features!(),
    r#"  <feature name="org.gnu.gdb.arm.vfp">
    <reg name="d0" bitsize="64" type="ieee_double"/>
    <reg name="d1" bitsize="64" type="ieee_double"/>
    <reg name="d2" bitsize="64" type="ieee_double"/>
    <reg name="d3" bitsize="64" type="ieee_double"/>
    <reg name="d4" bitsize="64" type="ieee_double"/>
    <reg name="d5" bitsize="64" type="ieee_double"/>
    <reg name="d6" bitsize="64" type="ieee_double"/>
    <reg name="d7" bitsize="64" type="ieee_double"/>
    <reg name="d8" bitsize="64" type="ieee_double"/>
    <reg name="d9" bitsize="64" type="ieee_double"/>
    <reg name="d10" bitsize="64" type="ieee_double"/>
    <reg name="d11" bitsize="64" type="ieee_double"/>
    <reg name="d12" bitsize="64" type="ieee_double"/>
    <reg name="d13" bitsize="64" type="ieee_double"/>
    <reg name="d14" bitsize="64" type="ieee_double"/>
    <reg name="d15" bitsize="64" type="ieee_double"/>
    <reg name="fpscr" bitsize="32" type="int" group="float"/>
  </feature>
</target>
"#
);

/// A Cortex-M core (ARMv6-M, ARMv7-M, ARMv7E-M, ARMv8-M mainline), with
/// the VFP registers if `VFP`.
#[derive(Debug)]
pub enum CortexM<const VFP: bool> {}

impl<const VFP: bool> Arch for CortexM<VFP> {
    type Usize = u32;
    type Registers = MProfileRegs<VFP>;
    type RegId = MProfileRegId<VFP>;
    type BreakpointKind = ArmBreakpointKind;

    fn target_description_xml() -> Option<&'static str> {
        Some(if VFP { TARGET_XML_VFP } else { TARGET_XML })
    }
}

/// The registers in the description's order: r0-r12, sp, lr, pc, xpsr,
/// msp, psp, then with `VFP` d0-d15 and fpscr (the slots past
/// [`register_count`] stay unused).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MProfileRegs<const VFP: bool>(pub [u64; ALL]);

impl<const VFP: bool> Default for MProfileRegs<VFP> {
    fn default() -> Self {
        MProfileRegs([0; ALL])
    }
}

impl<const VFP: bool> Registers for MProfileRegs<VFP> {
    type ProgramCounter = u32;

    fn pc(&self) -> u32 {
        self.0[PC] as u32
    }

    fn gdb_serialize(&self, mut write_byte: impl FnMut(Option<u8>)) {
        for (n, r) in self.0[..register_count(VFP)].iter().enumerate() {
            for byte in &r.to_le_bytes()[..register_size(n)] {
                write_byte(Some(*byte));
            }
        }
    }

    /// Takes all registers or a prefix of them (whole registers only).
    fn gdb_deserialize(&mut self, mut bytes: &[u8]) -> Result<(), ()> {
        for (n, r) in self.0[..register_count(VFP)].iter_mut().enumerate() {
            if bytes.is_empty() {
                return Ok(());
            }
            let size = register_size(n);
            let (value, rest) = bytes.split_at_checked(size).ok_or(())?;
            let mut word = [0u8; 8];
            word[..size].copy_from_slice(value);
            *r = u64::from_le_bytes(word);
            bytes = rest;
        }
        match bytes.is_empty() {
            true => Ok(()),
            false => Err(()),
        }
    }
}

/// A register by its number in the description (0-18, with `VFP` 0-35).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MProfileRegId<const VFP: bool>(pub usize);

impl<const VFP: bool> RegId for MProfileRegId<VFP> {
    fn from_raw_id(id: usize) -> Option<(Self, Option<NonZeroUsize>)> {
        (id < register_count(VFP))
            .then(|| (MProfileRegId(id), NonZeroUsize::new(register_size(id))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_round_trip_and_reject_bad_lengths() {
        let regs = MProfileRegs::<false>(std::array::from_fn(|i| {
            if i < REGISTERS {
                i as u64 * 0x0101_0101
            } else {
                0
            }
        }));
        let mut bytes = Vec::new();
        regs.gdb_serialize(|b| bytes.push(b.unwrap_or(0)));
        assert_eq!(bytes.len(), REGISTERS * 4);
        let mut back = MProfileRegs::default();
        back.gdb_deserialize(&bytes).unwrap();
        assert_eq!(back, regs);
        assert_eq!(back.pc(), 15 * 0x0101_0101);
        assert!(back.gdb_deserialize(&bytes[..5]).is_err());
        assert!(back.gdb_deserialize(&[0; REGISTERS * 4 + 4]).is_err());
        assert!(MProfileRegId::<false>::from_raw_id(REGISTERS).is_none());
        assert!(!TARGET_XML.contains("vfp"));
    }

    #[test]
    fn vfp_registers_are_64_bit_d_registers_then_fpscr() {
        let regs = MProfileRegs::<true>(std::array::from_fn(|i| match i {
            0..REGISTERS => i as u64,
            35 => 0x0300_0010,
            _ => 0x3ff0_0000_0000_0000 | i as u64,
        }));
        let mut bytes = Vec::new();
        regs.gdb_serialize(|b| bytes.push(b.unwrap_or(0)));
        assert_eq!(bytes.len(), REGISTERS * 4 + 16 * 8 + 4);
        // d0 follows psp, whole and little-endian
        assert_eq!(bytes[76..84], (0x3ff0_0000_0000_0000u64 | 19).to_le_bytes());
        let mut back = MProfileRegs::default();
        back.gdb_deserialize(&bytes).unwrap();
        assert_eq!(back, regs);
        // half a d register is refused
        assert!(back.gdb_deserialize(&bytes[..80]).is_err());
        assert!(back.gdb_deserialize(&bytes[..84]).is_ok());
        let (id, size) = MProfileRegId::<true>::from_raw_id(19).unwrap();
        assert_eq!((id.0, size.map(NonZeroUsize::get)), (19, Some(8)));
        let (_, size) = MProfileRegId::<true>::from_raw_id(35).unwrap();
        assert_eq!(size.map(NonZeroUsize::get), Some(4));
        assert!(MProfileRegId::<true>::from_raw_id(36).is_none());
        assert!(TARGET_XML_VFP.contains(r#"<feature name="org.gnu.gdb.arm.vfp">"#));
        assert!(TARGET_XML_VFP.ends_with("</target>\n"));
        assert!(TARGET_XML_VFP.starts_with(TARGET_XML.trim_end_matches("</target>\n")));
    }
}
