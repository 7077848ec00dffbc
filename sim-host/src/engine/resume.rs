//! The one place a run enters the emulator: `emu_start` at the guest's
//! PC, for a slice of the scheduler or a resumption under a debugger.

use super::registers::regs;
use super::state::Uc;
use crate::model::target::Arch;
use unicorn_engine::unicorn_const::uc_error;

/// Runs the guest from its PC until a hook stops it (or `timeout_us`
/// passes); never with an instruction count (see the module docs).
pub(super) fn start(emu: &mut Uc<'static>, timeout_us: u64) -> Result<(), uc_error> {
    let arch = emu.get_data().arch;
    let pc = emu.reg_read(regs(arch).pc)? | u64::from(arch == Arch::Arm);
    emu.emu_start(pc, u64::MAX, timeout_us, 0)
}
