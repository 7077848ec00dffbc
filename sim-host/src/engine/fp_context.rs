//! The FP context on exceptions (ARMv7-M B1.5.7 "Context state stacking
//! on exception entry with the FP extension", B3.2.21-B3.2.23 FPCCR,
//! FPCAR, FPDSCR): the registers QEMU's own lazy FP machinery reads,
//! through `unicorn-patch/mprofile.patch`, and the price of each lazy
//! preservation.
//!
//! Lazy preservation is QEMU's: the exception entry (`interrupts`) only
//! allocates the frame's FP area and sets FPCCR.LSPACT and FPCAR as
//! UpdateFPCCR() does; the handler's first FP instruction then stacks
//! s0-s15 and FPSCR there (QEMU's PreserveFPState(), translated into the
//! code of blocks that run while LSPACT is set) and the patch calls
//! [`on_preserved`], which charges what the core's facts say the push
//! costs, at that instruction.

use super::state::Uc;
use crate::model::cores::Profile;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use unicorn_engine_sys::{uc_arm_m_fp_context, uc_arm_m_lazy_fp_callback, uc_engine, uc_error};

/// FPCCR's bits (B3.2.21).
pub(super) const LSPACT: u32 = 1 << 0;
pub(super) const USER: u32 = 1 << 1;
pub(super) const THREAD: u32 = 1 << 3;
pub(super) const LSPEN: u32 = 1 << 30;
const ASPEN: u32 = 1 << 31;
/// The bits this model keeps as written: ARMv7-M's (LSPACT, USER, THREAD,
/// HFRDY, MMRDY, BFRDY, MONRDY, LSPEN, ASPEN); ARMv8-M adds S (read only
/// here), SFRDY, SPLIMVIOL and UFRDY.
const FPCCR_V7M: u32 = 0xC000_017B;
const FPCCR_V8M: u32 = FPCCR_V7M | 1 << 2 | 1 << 7 | 1 << 9 | 1 << 10;
/// ARMv8-M's TS, CLRONRETS, CLRONRET and LSPENS: not modelled.
const FPCCR_V8M_REFUSED: u32 = 0x3C00_0000;

/// The three FP context control registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FpControl {
    pub(super) fpccr: u32,
    pub(super) fpcar: u32,
    pub(super) fpdscr: u32,
}

/// Reads them (`None` on a core without the FP extension).
pub(super) fn read(uc: &Uc<'_>) -> Option<FpControl> {
    let (mut fpccr, mut fpcar, mut fpdscr) = (0, 0, 0);
    // SAFETY: the engine is open; the three pointers are to locals.
    let err =
        unsafe { uc_arm_m_fp_context(uc.get_handle(), 0, &mut fpccr, &mut fpcar, &mut fpdscr) };
    (err == uc_error::OK).then_some(FpControl {
        fpccr,
        fpcar,
        fpdscr,
    })
}

/// Writes them; false on a core without the FP extension.
pub(super) fn write(uc: &mut Uc<'_>, regs: FpControl) -> bool {
    let (mut fpccr, mut fpcar, mut fpdscr) = (regs.fpccr, regs.fpcar, regs.fpdscr);
    // SAFETY: as in `read`.
    let err =
        unsafe { uc_arm_m_fp_context(uc.get_handle(), 1, &mut fpccr, &mut fpcar, &mut fpdscr) };
    err == uc_error::OK
}

/// FPCCR as the guest reads it: the profile's bits.
fn visible_fpccr(profile: Profile, fpccr: u32) -> u32 {
    fpccr
        & match profile {
            Profile::V8MMain => FPCCR_V8M,
            _ => FPCCR_V7M,
        }
}

/// The guest's access to FPCCR, FPCAR or FPDSCR (0xE000EF34-0xE000EF3C)
/// on a core with the FP extension: `Some(value read)`, or `Some(Err)`
/// naming what is not modelled; `None` for any other register or core.
pub(super) fn register(
    uc: &mut Uc<'_>,
    profile: Profile,
    addr: u32,
    write_value: Option<u32>,
) -> Option<Result<u64, String>> {
    if !(0xE000_EF34..=0xE000_EF3C).contains(&addr) || addr % 4 != 0 {
        return None;
    }
    let mut regs = read(uc)?;
    let Some(value) = write_value else {
        return Some(Ok(u64::from(match addr {
            0xE000_EF34 => visible_fpccr(profile, regs.fpccr),
            0xE000_EF38 => regs.fpcar & !7,
            _ => regs.fpdscr & 0x07C0_0000,
        })));
    };
    match addr {
        0xE000_EF34 if profile == Profile::V8MMain && value & FPCCR_V8M_REFUSED != 0 => {
            return Some(Err(
                "TS, CLRONRET, CLRONRETS and LSPENS are not modelled".to_owned()
            ));
        }
        0xE000_EF34 => {
            let kept = visible_fpccr(profile, !0) & !(1 << 2);
            regs.fpccr = (regs.fpccr & !kept) | (value & kept);
        }
        0xE000_EF38 => regs.fpcar = value & !7,
        // FPDSCR: AHP, DN, FZ, RMode (B3.2.23)
        _ => regs.fpdscr = value & 0x07C0_0000,
    }
    write(uc, regs);
    Some(Ok(0))
}

/// On an M-profile core with the FP extension: the FP context control
/// registers at their reset values (FPCCR.ASPEN and LSPEN set, ARMv7-M
/// B3.2.21; QEMU keeps FPCCR.S equal to the security state from here on)
/// and the lazy preservation callback installed. `None` elsewhere.
pub(super) fn install(emu: &mut Uc<'static>) -> Option<LazyFpHook> {
    let reset = FpControl {
        fpccr: ASPEN | LSPEN,
        fpcar: 0,
        fpdscr: 0,
    };
    if emu.get_data().system.is_none() || !write(emu, reset) {
        return None;
    }
    LazyFpHook::install(emu)
}

/// The lazy preservation callback, installed on a core with an FPU;
/// removed when dropped.
pub(super) struct LazyFpHook {
    /// The handle the callback charges through. Boxed: Unicorn keeps its
    /// address as the callback's user data.
    handle: Box<Uc<'static>>,
}

impl LazyFpHook {
    pub(super) fn install(emu: &Uc<'static>) -> Option<LazyFpHook> {
        let mut hook = LazyFpHook {
            handle: Box::new(emu.clone()),
        };
        let callback: unsafe extern "C" fn(*mut uc_engine, *mut c_void) = on_preserved;
        // SAFETY: the callback has the C signature the patch declares; its
        // user data, the boxed handle, lives until `drop` removes it.
        let err = unsafe {
            uc_arm_m_lazy_fp_callback(
                emu.get_handle(),
                Some(callback),
                std::ptr::from_mut(hook.handle.as_mut()).cast(),
            )
        };
        (err == uc_error::OK).then_some(hook)
    }
}

impl Drop for LazyFpHook {
    fn drop(&mut self) {
        // SAFETY: the engine is kept open by the handle.
        unsafe { uc_arm_m_lazy_fp_callback(self.handle.get_handle(), None, std::ptr::null_mut()) };
    }
}

/// # Safety
/// `handle` is the user data [`LazyFpHook::install`] registered. Called
/// by QEMU's PreserveFPState() helper from the translated code, as a
/// memory helper would be: the guest's state is current.
unsafe extern "C" fn on_preserved(_uc: *mut uc_engine, handle: *mut c_void) {
    let emu = unsafe { &mut *handle.cast::<Uc<'static>>() };
    let _ = catch_unwind(AssertUnwindSafe(|| charge_preservation(emu)));
}

/// Charges one lazy preservation and counts it.
fn charge_preservation(uc: &mut Uc<'_>) {
    let st = uc.get_data_mut();
    let Some(sys) = st.system.as_mut() else {
        return;
    };
    let cycles = sys.scs.facts().lazy_fp_push.cycles;
    sys.lazy_preservations += 1;
    st.clock.cycles += u64::from(cycles);
}
