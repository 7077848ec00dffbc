//! The System Control Space in the engine: the SCS and the DWT are mapped
//! as MMIO answered by `host::scs` from the simulated state. A counter
//! read returns the cycle count at the reading instruction, not at its
//! block's start: Unicorn's PC is not kept per instruction, but the
//! registers are current when an MMIO access is made (TCG writes them back
//! before its memory helpers), so the accessing instruction is the next
//! load or store of the running block whose address, from those registers,
//! is the one accessed. Only Cortex-M targets have it; nothing here runs
//! for code that never touches it.

use super::api::{uc, MachineError, Stop};
use super::mmio::placed_access;
use super::state::{stop_with, Uc};
use super::stop::fault_at;
use crate::host::scs::{Effects, ScsError, BLOCK_SIZE, DWT_BASE, SCS_BASE};
use unicorn_engine::RegisterARM;

/// Maps the SCS and the DWT pages of a core that has them.
pub(super) fn map(emu: &mut Uc<'static>) -> Result<(), MachineError> {
    if emu.get_data().system.is_none() {
        return Ok(());
    }
    for base in [SCS_BASE, DWT_BASE] {
        let base = u64::from(base);
        let read = move |uc: &mut Uc<'_>, offset: u64, size: usize| -> u64 {
            access(uc, (base + offset) as u32, size as u8, None)
        };
        let write = move |uc: &mut Uc<'_>, offset: u64, size: usize, value: u64| {
            access(uc, (base + offset) as u32, size as u8, Some(value as u32));
        };
        uc(
            "map the System Control Space",
            emu.mmio_map(base, u64::from(BLOCK_SIZE), Some(read), Some(write)),
        )?;
    }
    Ok(())
}

/// One access to the SCS or the DWT: the register's value for a read (0
/// for a write), its effects carried out; a refused access ends the run.
fn access(uc: &mut Uc<'_>, addr: u32, size: u8, write: Option<u32>) -> u64 {
    let at = placed_access(uc, u64::from(addr));
    let (now, pc) = (at.cycles, at.pc);
    let ipsr = uc.reg_read(RegisterARM::IPSR).unwrap_or(0) as u32;
    // the Cortex-M7's cache registers, when the target models the caches
    if let Some(value) = super::l1cache::register(uc, addr, size, write) {
        return value;
    }
    // the FP context registers, which QEMU's lazy FP machinery reads
    if let Some(answer) = fp_register(uc, addr, size, write) {
        return match answer {
            Ok(value) => value,
            Err(e) => refuse(uc, pc, addr, write.is_some(), e),
        };
    }
    let write = super::l1cache::ccr_write(uc, addr, write);
    let Some(sys) = uc.get_data_mut().system.as_mut() else {
        return 0;
    };
    let result = match write {
        None => sys
            .scs
            .read(addr, size, now, ipsr)
            .map(|v| (u64::from(v), Effects::default())),
        Some(value) => sys.scs.write(addr, size, value, now).map(|e| (0, e)),
    };
    if let Some(note) = sys.scs.take_note() {
        let at = uc.get_data().image.describe(pc);
        uc.get_data_mut()
            .end
            .warnings
            .push(format!("{note}; first at {at}"));
    }
    match result {
        Ok((value, effects)) => {
            apply(uc, effects);
            value | super::l1cache::ccr_read_bits(uc, addr)
        }
        Err(e) => refuse(uc, pc, addr, write.is_some(), e),
    }
}

/// FPCCR, FPCAR or FPDSCR on a core with the FP extension (a word
/// access), from QEMU's state (`fp_context`).
fn fp_register(
    uc: &mut Uc<'_>,
    addr: u32,
    size: u8,
    write: Option<u32>,
) -> Option<Result<u64, ScsError>> {
    let profile = uc.get_data().system.as_ref()?.scs.facts().profile;
    if size != 4 {
        return None;
    }
    let answer = super::fp_context::register(uc, profile, addr, write)?;
    Some(answer.map_err(|message| ScsError {
        register: crate::host::scs::name_of(addr),
        message,
    }))
}

/// A refused access ends the run (exit 125) naming the register.
fn refuse(uc: &mut Uc<'_>, pc: u64, addr: u32, is_write: bool, e: ScsError) -> u64 {
    let verb = if is_write { "write to" } else { "read of" };
    let kind = format!("{verb} {e}");
    let stop = match fault_at(uc, pc, kind, Some(u64::from(addr))) {
        Stop::Fault(f) => Stop::Unsupported(f),
        other => other,
    };
    stop_with(uc, stop);
    0
}

/// What a write asks of the core: a reset ends the run; a new pending
/// exception or a moved timer event makes the block hook look at the next
/// block boundary.
fn apply(uc: &mut Uc<'_>, effects: Effects) {
    if effects.reset {
        return stop_with(uc, Stop::SystemReset);
    }
    if effects.check_exceptions || effects.timers_changed {
        uc.get_data_mut().look_at_next_boundary();
    }
}
