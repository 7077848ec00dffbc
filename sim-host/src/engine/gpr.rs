//! The guest's call registers read in place, for the ARP interception
//! (`unicorn-patch/registers.patch`).

use crate::model::target::Arch;
use unicorn_engine_sys::{uc_engine, uc_error, uc_gpr_base};

/// The architectural numbers of a call's return address and its four
/// arguments (Arm lr, r0-r3; RISC-V ra, a0-a3): the one place the calling
/// convention is written (`registers::regs` gives their Unicorn ids).
pub(super) fn call_numbers(arch: Arch) -> [u32; 5] {
    match arch {
        Arch::Arm => [14, 0, 1, 2, 3],
        Arch::Riscv => [1, 10, 11, 12, 13],
    }
}

/// The guest's integer registers where Unicorn keeps them
/// (`uc_gpr_base`, `unicorn-patch/registers.patch`), for the ARP
/// interception: a call's return address and arguments read in place,
/// where a `uc_reg_read_batch2` of them was a sixth of an ARP-call-dense
/// run. Read only from a hook, where the translated code has stored them.
#[derive(Clone, Copy, Debug)]
pub(super) struct CallRegisters {
    base: *const u32,
    /// Indices of the return address and the four arguments.
    indices: [usize; 5],
}

impl CallRegisters {
    /// An error when Unicorn has no 32-bit register file for `arch`.
    pub(super) fn locate(engine: *mut uc_engine, arch: Arch) -> Result<CallRegisters, uc_error> {
        let mut base = std::ptr::null_mut::<std::ffi::c_void>();
        let mut width = 0u32;
        // SAFETY: both outputs are live locals.
        let err = unsafe { uc_gpr_base(engine, &mut base, &mut width) };
        if err != uc_error::OK {
            return Err(err);
        }
        if base.is_null() || width != 4 {
            return Err(uc_error::ARCH);
        }
        let indices = call_numbers(arch).map(|n| n as usize);
        Ok(CallRegisters {
            base: base.cast_const().cast(),
            indices,
        })
    }

    /// The return address and the four arguments, as the guest has them.
    #[inline(always)]
    pub(super) fn read(&self) -> [u32; 5] {
        // SAFETY: `base` is the engine's register file (16 or 32 u32s,
        // every index below 32 is in it on RISC-V, below 16 on ARM), at
        // one address for the engine's life; the state holding this lives
        // in the engine. Volatile: Unicorn writes them outside Rust's view.
        std::array::from_fn(|i| unsafe { std::ptr::read_volatile(self.base.add(self.indices[i])) })
    }
}
