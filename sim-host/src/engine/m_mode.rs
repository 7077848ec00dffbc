//! An M-profile core's mode, CONTROL and banked stack pointers, read and
//! set as one architectural state (ARMv7-M B1.4.1-B1.4.4: Handler mode
//! always uses the main stack; Thread mode uses the process stack when
//! CONTROL.SPSEL is set).
//!
//! Why not Unicorn's register writes: QEMU keeps the stack pointer in use
//! in r13 and the other one aside, swapping them only when CONTROL.SPSEL
//! is written in a mode where that changes the stack in use. A write of
//! IPSR (the mode) swaps nothing, a write of SPSEL in Handler mode is
//! ignored on ARMv7-M, and MSP, PSP and CONTROL read as zero and ignore
//! writes while Thread mode is unprivileged (QEMU's `HELPER(v7m_mrs)`,
//! `HELPER(v7m_msr)`). `unicorn-patch/mprofile.patch` reads and sets the
//! state as a whole (`uc_arm_m_core_state`).

use super::state::Uc;
use crate::host::scs::nvic;
use crate::model::cores::Profile;
use crate::model::exc_return::{CONTROL_NPRIV, CONTROL_SPSEL};
use unicorn_engine::unicorn_const::uc_error;
use unicorn_engine::RegisterARM;
use unicorn_engine_sys::uc_arm_m_core_state;

/// The architectural state an exception entry or return changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CoreMode {
    /// The exception number in IPSR: 0 in Thread mode.
    pub(super) ipsr: u32,
    /// CONTROL: nPRIV, SPSEL, FPCA and (ARMv8-M) SFPA.
    pub(super) control: u32,
    pub(super) msp: u32,
    pub(super) psp: u32,
}

impl CoreMode {
    /// Whether the stack in use is the process stack.
    pub(super) fn on_psp(&self) -> bool {
        self.ipsr == 0 && self.control & CONTROL_SPSEL != 0
    }

    /// The stack pointer in use.
    pub(super) fn sp(&self) -> u32 {
        if self.on_psp() {
            self.psp
        } else {
            self.msp
        }
    }

    /// Whether the code running is privileged (Handler mode always is).
    pub(super) fn privileged(&self) -> bool {
        self.ipsr != 0 || self.control & CONTROL_NPRIV == 0
    }
}

/// The core's mode as it is now.
pub(super) fn read(uc: &Uc<'_>) -> Result<CoreMode, uc_error> {
    let mut state = [0; 4];
    core_state(uc, false, &mut state)?;
    let [ipsr, control, msp, psp] = state;
    Ok(CoreMode {
        ipsr,
        control,
        msp,
        psp,
    })
}

/// Sets the core to `mode`. QEMU's cached translation flags (the mode
/// among them) are rebuilt.
pub(super) fn write(uc: &mut Uc<'_>, mode: CoreMode) -> Result<(), uc_error> {
    let mut state = [mode.ipsr, mode.control, mode.msp, mode.psp];
    core_state(uc, true, &mut state)
}

/// `uc_arm_m_core_state` on [IPSR, CONTROL, MSP, PSP].
fn core_state(uc: &Uc<'_>, write: bool, state: &mut [u32; 4]) -> Result<(), uc_error> {
    let [ipsr, control, msp, psp] = state;
    // SAFETY: the engine is open; the pointers are to the caller's array.
    let err =
        unsafe { uc_arm_m_core_state(uc.get_handle(), i32::from(write), ipsr, control, msp, psp) };
    match err {
        uc_error::OK => Ok(()),
        e => Err(e),
    }
}

/// The execution priority (B1.5.4) of the code running now.
pub(super) fn execution_priority(uc: &Uc<'_>, with_primask: bool) -> i32 {
    let read = |r: RegisterARM| uc.reg_read(r).unwrap_or(0) as u32;
    let (primask, basepri, faultmask) = (
        with_primask && read(RegisterARM::PRIMASK) & 1 != 0,
        read(RegisterARM::BASEPRI) as u8,
        read(RegisterARM::FAULTMASK) & 1 != 0,
    );
    let Some(sys) = uc.get_data().system.as_ref() else {
        return nvic::THREAD_PRIORITY;
    };
    let basepri = if sys.scs.facts().profile == Profile::V6M {
        0
    } else {
        basepri
    };
    sys.scs
        .exceptions
        .execution_priority(primask, basepri, faultmask)
}
