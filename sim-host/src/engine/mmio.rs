//! Device registers the host answers (the System Control Space, RISC-V's
//! machine timer, peripherals read as 0): which instruction of the running
//! block made an access, and the counters at that instruction.
//!
//! A memory callback runs inside a block that was charged whole when it
//! started, and Unicorn's PC is only synchronised per block: the host
//! finds the accessing instruction by decoding the block and evaluating
//! each load's or store's address with the registers as they are now,
//! from the instruction after the one that made the block's previous
//! access.

use super::pricing::counters_at;
use super::registers::arch_reg;
use super::state::Uc;
use crate::model::target::Arch;

/// Where an access was made: its instruction and the cycle count there.
#[derive(Debug, Clone, Copy)]
pub(super) struct PlacedAccess {
    pub(super) pc: u64,
    pub(super) cycles: u64,
}

/// The access to `addr` placed at its instruction; an access that cannot
/// be placed gets the counters of its block's end (and is counted).
pub(super) fn placed_access(uc: &mut Uc<'_>, addr: u64) -> PlacedAccess {
    if let Some((pc, cycles)) = uc.get_data().mmio.placed {
        return PlacedAccess { pc, cycles };
    }
    match accessing_instruction(uc, addr) {
        Some(pc) => {
            let (cycles, _) = counters_at(uc, pc);
            PlacedAccess { pc, cycles }
        }
        None => {
            let st = uc.get_data_mut();
            st.mmio.unplaced += 1;
            PlacedAccess {
                pc: st.clock.block_start,
                cycles: st.clock.cycles,
            }
        }
    }
}

/// The instruction of the running block that accessed `addr`: the first
/// load or store after the last one matched in this execution of the
/// block whose address, from the registers as they are now, covers `addr`.
fn accessing_instruction(uc: &mut Uc<'_>, addr: u64) -> Option<u64> {
    let st = uc.get_data();
    let start = st.clock.block_start;
    let execution = (start, st.clock.instructions);
    let end = u64::from(st.cache.peek(start as u32)?.fallthrough);
    let from = match st.mmio.last {
        Some((e, next)) if e == execution => next,
        _ => start,
    };
    let mut code = vec![0u8; end.checked_sub(from)? as usize];
    uc.mem_read(from, &mut code).ok()?;
    let insns = st.decoder.decode(&code, from, false).ok()?;
    let found = insns.iter().find(|i| {
        let offset = (i.addr - from) as usize;
        let Some((form, _)) = st.decoder.data_address(&code[offset..], i.addr) else {
            return false;
        };
        let at = form.evaluate(|n| register(uc, n, i.addr));
        let span = 4 * u64::from(i.transfers.max(1));
        (at..at + span).contains(&addr)
    })?;
    let (pc, next) = (found.addr, found.addr + u64::from(found.size));
    uc.get_data_mut().mmio.last = Some((execution, next));
    Some(pc)
}

/// Register `n`'s value for an address computed by the instruction at
/// `pc` (on ARM, PC reads as the instruction's address plus 4, word
/// aligned).
fn register(uc: &Uc<'_>, n: u8, pc: u64) -> u64 {
    let arch = uc.get_data().arch;
    if arch == Arch::Arm && n == 15 {
        return (pc + 4) & !3;
    }
    arch_reg(arch, u32::from(n)).map_or(0, |id| uc.reg_read(id).unwrap_or(0))
}

/// A warning naming the instruction that caused it (a device's rule
/// broken there).
pub(super) fn warn_at(uc: &mut Uc<'_>, pc: u64, message: String) {
    let st = uc.get_data_mut();
    let at = st.image.describe(pc);
    st.end.warnings.push(format!("{at}: {message}"));
}
