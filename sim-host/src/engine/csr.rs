//! RISC-V counter CSRs on the simulated clock: `cycle`/`mcycle`(`h`),
//! `instret`/`minstret`(`h`) and `time`(`h`) (RISC-V privileged spec
//! 3.1.11, unprivileged spec chapter "Counters"). QEMU answers them with
//! the host's time-stamp counter (and `time` not at all), so a guest that
//! timed itself was not deterministic. Sim-host's Unicorn fails every
//! counter access (`unicorn-patch/counters.patch`; `time` has no reader in
//! Unicorn), so each one, wherever it is (flash, `.data`, code written at
//! run time), reaches the interrupt hook as an illegal instruction, and
//! [`on_exception`] gives its destination the simulated count at the
//! instruction and goes on after it: the instruction's own cost was
//! charged with its block, whose rest then runs uncharged (it already
//! was). A write to a read-only counter (`cycle`, `time`, `instret`) is
//! the illegal instruction trap.

use super::pricing::counters_at;
use super::registers::arch_reg;
use super::state::{CounterOffsets, Uc};
use super::traps::{ILLEGAL_INSTRUCTION, UNICORN_PC_ADVANCE};
use crate::model::target::Arch;
use unicorn_engine::RegisterRISCV;

/// The counter CSRs (the `h` halves are 0x80 above their low halves).
const CYCLE: u16 = 0xC00;
const TIME: u16 = 0xC01;
const INSTRET: u16 = 0xC02;
const MCYCLE: u16 = 0xB00;
const MINSTRET: u16 = 0xB02;
const HIGH: u16 = 0x80;

/// A decoded CSR instruction that reads or writes a counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CounterAccess {
    csr: u16,
    rd: u8,
    /// 1 CSRRW, 2 CSRRS, 3 CSRRC; +4 for the immediate forms.
    funct3: u8,
    /// rs1, or the 5-bit immediate.
    source: u8,
}

fn decode(word: u32) -> Option<CounterAccess> {
    if word & 0x7f != 0x73 {
        return None;
    }
    let funct3 = ((word >> 12) & 7) as u8;
    let csr = (word >> 20) as u16;
    let counter = matches!(csr & !HIGH, CYCLE | TIME | INSTRET | MCYCLE | MINSTRET);
    (funct3 & 3 != 0 && counter).then_some(CounterAccess {
        csr,
        rd: ((word >> 7) & 0x1f) as u8,
        funct3,
        source: ((word >> 15) & 0x1f) as u8,
    })
}

/// Unicorn's interrupt hook on a RISC-V core, in front of
/// [`super::traps::on_exception`]: carries out the counter CSR access that
/// trapped as an illegal instruction (every counter access does:
/// `counters.patch`), wherever its instruction is (flash, RAM, or code the
/// guest wrote at run time). False for anything else, and for a write to
/// a read-only counter, which is the illegal instruction trap (privileged
/// spec 2.1: `unimp` is `csrrw x0, cycle, x0`).
pub(super) fn on_exception(uc: &mut Uc<'_>, intno: u32) -> bool {
    if u64::from(intno) != ILLEGAL_INSTRUCTION {
        return false;
    }
    let pc = uc
        .reg_read(RegisterRISCV::PC)
        .unwrap_or(0)
        .wrapping_sub(UNICORN_PC_ADVANCE);
    let mut bytes = [0u8; 4];
    if uc.mem_read(pc, &mut bytes).is_err() {
        return false;
    }
    // a compressed instruction (low bits not 11) never decodes as one
    let Some(access) = decode(u32::from_le_bytes(bytes)) else {
        return false;
    };
    let writes = access.funct3 == 1 || access.funct3 == 5 || access.source != 0;
    if writes && access.csr & 0xF00 == 0xC00 {
        return false;
    }
    execute(uc, pc, access, writes);
    true
}

/// Carries out the instruction at `pc` on the simulated counters.
fn execute(uc: &mut Uc<'_>, pc: u64, access: CounterAccess, writes: bool) {
    let (cycles, instructions) = counters_at(uc, pc);
    let offsets = uc.get_data().counter_offsets;
    let old = read(uc, access.csr, cycles, instructions, offsets);
    if writes {
        let source = if access.funct3 >= 5 {
            u32::from(access.source)
        } else {
            register(uc, access.source)
        };
        let new = match access.funct3 & 3 {
            1 => source,
            2 => old | source,
            _ => old & !source,
        };
        write(uc, access.csr, new, cycles, instructions);
    }
    if access.rd != 0 {
        if let Some(id) = arch_reg(Arch::Riscv, u32::from(access.rd)) {
            let _ = uc.reg_write(id, u64::from(old));
        }
    }
    resume_after(uc, pc + 4);
}

fn register(uc: &Uc<'_>, n: u8) -> u32 {
    arch_reg(Arch::Riscv, u32::from(n)).map_or(0, |id| uc.reg_read(id).unwrap_or(0) as u32)
}

/// A counter's 32-bit half at the instruction.
fn read(uc: &Uc<'_>, csr: u16, cycles: u64, instructions: u64, offsets: CounterOffsets) -> u32 {
    let value = match csr & !HIGH {
        CYCLE | MCYCLE => cycles.wrapping_add(offsets.cycles),
        INSTRET | MINSTRET => instructions.wrapping_add(offsets.instructions),
        _ => time(uc, cycles),
    };
    if csr & HIGH != 0 {
        (value >> 32) as u32
    } else {
        value as u32
    }
}

/// `time`: the machine timer's count when the board has one, else the
/// core's cycles (the privileged spec leaves its rate to the platform).
fn time(uc: &Uc<'_>, cycles: u64) -> u64 {
    super::machine_timer::time(uc, cycles).unwrap_or(cycles)
}

/// `mcycle`/`minstret` (or a half) written: later reads count from it.
fn write(uc: &mut Uc<'_>, csr: u16, value: u32, cycles: u64, instructions: u64) {
    let offsets = &mut uc.get_data_mut().counter_offsets;
    let (count, offset) = match csr & !HIGH {
        MCYCLE => (cycles, &mut offsets.cycles),
        _ => (instructions, &mut offsets.instructions),
    };
    let current = count.wrapping_add(*offset);
    let wanted = if csr & HIGH != 0 {
        (current & 0xFFFF_FFFF) | (u64::from(value) << 32)
    } else {
        (current & !0xFFFF_FFFF) | u64::from(value)
    };
    *offset = wanted.wrapping_sub(count);
}

/// Continues at `next`. Inside the block whose cycles were charged whole,
/// the block hook lets the rest of it run uncharged; at its end (QEMU ends
/// a block after a CSR instruction) the next block is charged as usual.
fn resume_after(uc: &mut Uc<'_>, next: u64) {
    let st = uc.get_data_mut();
    let block_end = st
        .cache
        .peek(st.clock.block_start as u32)
        .map_or(0, |p| u64::from(p.fallthrough));
    if next < block_end {
        st.debug.resume = Some(next);
        st.debug.limit = st.limits.limit;
        st.limits.limit = 0;
    }
    let _ = uc.reg_write(super::registers::regs(Arch::Riscv).pc, next);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_reads_and_writes_are_recognised_and_others_not() {
        // csrr a0, mcycle = csrrs a0, mcycle, x0
        let read = decode(0xB000_2573).unwrap();
        assert_eq!(
            (read.csr, read.rd, read.funct3, read.source),
            (MCYCLE, 10, 2, 0)
        );
        // rdcycleh a1 = csrrs a1, cycleh, x0
        assert_eq!(decode(0xC800_25F3).map(|a| a.csr), Some(CYCLE | HIGH));
        // csrw minstret, a2 = csrrw x0, minstret, a2
        let write = decode(0xB026_1073).unwrap();
        assert_eq!(
            (write.csr, write.rd, write.funct3, write.source),
            (MINSTRET, 0, 1, 12)
        );
        // csrr a0, mstatus: not a counter
        assert_eq!(decode(0x3000_2573), None);
        // ecall (funct3 0)
        assert_eq!(decode(0x0000_0073), None);
    }
}
