//! The one place a run enters the emulator: `emu_start` at the guest's
//! PC, for a slice of the scheduler or a resumption under a debugger.

use super::registers::regs;
use super::state::Uc;
use crate::model::target::Arch;
use std::time::Instant;
use unicorn_engine::unicorn_const::uc_error;

/// Runs the guest from its PC until a hook stops it (or `timeout_us`
/// passes); never with an instruction count (see the module docs).
///
/// A RISC-V EBREAK taken as a trap (`traps::on_breakpoint`) ends
/// `emu_start` all the same: Unicorn's RISC-V sets the error it ends with
/// before it calls the hook that takes the trap, and keeps it. The run
/// goes on from the handler, within what is left of `timeout_us`.
pub(super) fn start(emu: &mut Uc<'static>, timeout_us: u64) -> Result<(), uc_error> {
    let arch = emu.get_data().arch;
    let started = Instant::now();
    loop {
        let left = match timeout_us {
            0 => 0,
            t => match t.checked_sub(started.elapsed().as_micros() as u64) {
                Some(left) if left > 0 => left,
                // the deadline passed: as Unicorn's own timeout ends
                _ => return Ok(()),
            },
        };
        let pc = emu.reg_read(regs(arch).pc)? | u64::from(arch == Arch::Arm);
        let result = emu.emu_start(pc, u64::MAX, left, 0);
        let st = emu.get_data_mut();
        let ebreak_taken = std::mem::take(&mut st.ebreak_taken);
        if result != Err(uc_error::EXCEPTION) || !ebreak_taken || st.end.stop.is_some() {
            return result;
        }
    }
}
