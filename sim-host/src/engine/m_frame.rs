//! Exception frames of an M-profile core, stacked and unstacked as the
//! architecture's PushStack() and PopStack() do (ARMv7-M B1.5.6-B1.5.8,
//! ARMv6-M B1.5.6-B1.5.8, ARMv8-M's Secure state with the default
//! stacking rules; `model::exc_return` has the rules without the
//! emulator): the basic frame, the extended frame with the FP context
//! (pushed at once, or allocated for lazy preservation: `fp_context`),
//! the stack the frame goes on and comes from, CONTROL and the banked
//! stack pointers (`m_mode`).
//!
//! A frame is stacked only into the target's memory (RAM, never a device,
//! the System Control Space or unmapped space), and unstacked only from
//! it: anything else ends the run naming the frame's place and the rule.

use super::fp_context::{self, FpControl, LSPACT, LSPEN, THREAD, USER};
use super::m_mode::{self, CoreMode};
use super::memory::in_target_memory;
use super::state::Uc;
use crate::model::cores::Profile;
use crate::model::exc_return::{
    after_pop, exc_return_for, frame_below, ReturnTarget, BASIC_FRAME, CONTROL_FPCA, CONTROL_SFPA,
    CONTROL_SPSEL, EXTENDED_FRAME, XPSR_SFPA, XPSR_SPREALIGN,
};
use unicorn_engine::RegisterARM;

/// The registers an exception frame holds first, in frame order.
const FRAME: [RegisterARM; 6] = [
    RegisterARM::R0,
    RegisterARM::R1,
    RegisterARM::R2,
    RegisterARM::R3,
    RegisterARM::R12,
    RegisterARM::LR,
];
/// xPSR's exception number, and EPSR's Thumb bit.
const XPSR_EXCEPTION: u32 = 0x1ff;
const EPSR_T: u32 = 1 << 24;
/// Words of the FP part of an extended frame that are stacked: s0-s15
/// and FPSCR (the last word of the 0x68 bytes is reserved, not written).
const FP_WORDS: usize = 17;

/// What the core's facts say about stacking: the profile, whether it has
/// the FP extension, and CCR.STKALIGN.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stacking {
    pub(super) profile: Profile,
    pub(super) fpu: bool,
    pub(super) stkalign: bool,
}

impl Stacking {
    /// Frames are 8-byte aligned always on ARMv6-M and ARMv8-M, on
    /// ARMv7-M when CCR.STKALIGN is set (B1.5.7).
    fn align8(&self) -> bool {
        self.profile != Profile::V7M || self.stkalign
    }
}

/// An exception entry's frame, stacked: the new mode to enter, LR's
/// EXC_RETURN, and whether the FP context was pushed at once (the cost
/// the core's facts give to the 17 extra words).
pub(super) struct Stacked {
    pub(super) mode: CoreMode,
    pub(super) exc_return: u32,
    pub(super) fp_pushed: bool,
}

fn reg_error(e: unicorn_engine::unicorn_const::uc_error) -> String {
    format!("a register cannot be accessed ({e:?})")
}

/// PushStack(): stacks the running code's frame where its stack is and
/// returns the Handler mode the exception enters; `return_to` is the
/// instruction the frame resumes at.
pub(super) fn push(
    uc: &mut Uc<'_>,
    how: Stacking,
    return_to: u32,
    execution_priority_ready: u32,
) -> Result<Stacked, String> {
    let mode = m_mode::read(uc).map_err(reg_error)?;
    let fp = how.fpu && mode.control & CONTROL_FPCA != 0;
    let fp_control = if fp { fp_context::read(uc) } else { None };
    let lazy = fp_control.is_some_and(|f| f.fpccr & LSPEN != 0);
    let size = if fp { EXTENDED_FRAME } else { BASIC_FRAME };
    let place = frame_below(mode.sp(), size, how.align8());
    if !in_target_memory(uc, u64::from(place.base), u64::from(size), true) {
        return Err(format!(
            "exception entry: the {size}-byte frame below the {} ({:#010x}) would be stacked \
             at {:#010x}, outside the target's RAM (a stack overflow, or a stack pointer set \
             outside memory); on silicon a stacking fault (MSTKERR/STKERR)",
            if mode.on_psp() {
                "process stack"
            } else {
                "main stack"
            },
            mode.sp(),
            place.base
        ));
    }
    let mut words = integer_frame(uc, return_to, mode, how, place.realigned)?;
    if fp && !lazy {
        words.extend(fp_registers(uc)?);
    }
    write_words(uc, place.base, &words)?;
    if let (Some(control), true) = (fp_control, lazy) {
        allocate_lazy(uc, control, place.base, mode, execution_priority_ready);
    }
    let exc_return = exc_return_for(
        how.profile,
        ReturnTarget {
            to_handler: mode.ipsr != 0,
            to_psp: mode.on_psp(),
            fp_frame: fp,
        },
    );
    let mut entered = CoreMode {
        control: mode.control & !(CONTROL_SPSEL | CONTROL_FPCA | CONTROL_SFPA),
        ..mode
    };
    if mode.on_psp() {
        entered.psp = place.base;
    } else {
        entered.msp = place.base;
    }
    Ok(Stacked {
        mode: entered,
        exc_return,
        fp_pushed: fp && !lazy,
    })
}

/// r0-r3, r12, lr, the return address and xPSR (bit 9 when realigned;
/// ARMv8-M: bit 20 the Secure FP context's CONTROL.SFPA).
fn integer_frame(
    uc: &Uc<'_>,
    return_to: u32,
    mode: CoreMode,
    how: Stacking,
    realigned: bool,
) -> Result<Vec<u32>, String> {
    let read = |r: RegisterARM| uc.reg_read(r).map(|v| v as u32).map_err(reg_error);
    let mut words = FRAME
        .iter()
        .map(|r| read(*r))
        .collect::<Result<Vec<_>, _>>()?;
    let mut xpsr = read(RegisterARM::XPSR)? & !(XPSR_SPREALIGN | XPSR_SFPA);
    if realigned {
        xpsr |= XPSR_SPREALIGN;
    }
    if how.profile == Profile::V8MMain && mode.control & CONTROL_SFPA != 0 {
        xpsr |= XPSR_SFPA;
    }
    words.push(return_to & !1);
    words.push(xpsr);
    Ok(words)
}

/// s0-s15 and FPSCR, as the extended frame holds them.
fn fp_registers(uc: &Uc<'_>) -> Result<Vec<u32>, String> {
    let mut words = (0..16)
        .map(|n| uc.reg_read(fp_register(n)).map(|v| v as u32))
        .collect::<Result<Vec<_>, _>>()
        .map_err(reg_error)?;
    words.push(uc.reg_read(RegisterARM::FPSCR).map_err(reg_error)? as u32);
    Ok(words)
}

/// UpdateFPCCR() (ARMv7-M B1.5.6): the frame's FP area reserved, the
/// running code's privilege, mode and the faults that could have
/// preempted it recorded, LSPACT set; the handler's first FP
/// instruction then stacks the registers (QEMU's PreserveFPState()).
fn allocate_lazy(uc: &mut Uc<'_>, control: FpControl, frame: u32, mode: CoreMode, ready: u32) {
    let recorded = LSPACT
        | if mode.privileged() { 0 } else { USER }
        | if mode.ipsr == 0 { THREAD } else { 0 }
        | ready;
    const RECORDED_BITS: u32 = 0x17B; // LSPACT USER THREAD HFRDY MMRDY BFRDY MONRDY
    fp_context::write(
        uc,
        FpControl {
            fpccr: (control.fpccr & !RECORDED_BITS) | recorded,
            fpcar: frame + BASIC_FRAME,
            ..control
        },
    );
}

/// What an exception return unstacked: the mode it returns to and
/// whether the FP registers were read from the frame (the cost of the 17
/// extra words), or left as they are because their lazy preservation
/// never happened (FPCCR.LSPACT still set).
pub(super) struct Unstacked {
    pub(super) fp_popped: bool,
}

/// PopStack() of the frame `target` names, and the mode it returns to.
pub(super) fn pop(
    uc: &mut Uc<'_>,
    how: Stacking,
    target: ReturnTarget,
    mode: CoreMode,
) -> Result<Unstacked, String> {
    let base = if target.to_psp { mode.psp } else { mode.msp };
    let size = if target.fp_frame {
        EXTENDED_FRAME
    } else {
        BASIC_FRAME
    };
    if !in_target_memory(uc, u64::from(base), u64::from(size), false) {
        return Err(format!(
            "exception return: the {size}-byte frame at {base:#010x} ({}) lies outside the \
             target's memory; on silicon an unstacking fault (UNSTKERR)",
            if target.to_psp {
                "process stack"
            } else {
                "main stack"
            },
        ));
    }
    let count = if target.fp_frame { 8 + FP_WORDS } else { 8 };
    let words = read_words(uc, base, count)?;
    let xpsr = words[7];
    check_stacked_mode(xpsr, target)?;
    let fp_popped = target.fp_frame && restore_fp(uc, &words[8..])?;
    let returned = returned_mode(how, target, mode, base, size, xpsr);
    m_mode::write(uc, returned).map_err(reg_error)?;
    for (r, v) in FRAME.iter().zip(&words) {
        uc.reg_write(*r, u64::from(*v)).map_err(reg_error)?;
    }
    restore_psr(uc, xpsr)?;
    uc.reg_write(RegisterARM::PC, u64::from(words[6] & !1) | 1)
        .map_err(reg_error)?;
    Ok(Unstacked { fp_popped })
}

/// The stacked IPSR must agree with the mode returned to (B1.5.8: an
/// INVPC UsageFault otherwise).
fn check_stacked_mode(xpsr: u32, target: ReturnTarget) -> Result<(), String> {
    let stacked = xpsr & XPSR_EXCEPTION;
    if target.to_handler == (stacked != 0) {
        return Ok(());
    }
    Err(format!(
        "exception return to {} mode, but the frame's stacked IPSR is {stacked}: an INVPC \
         UsageFault on silicon (DDI 0403E B1.5.8, ExceptionReturn)",
        if target.to_handler {
            "Handler"
        } else {
            "Thread"
        }
    ))
}

/// The FP part of an extended frame: nothing to read while the lazy
/// preservation is still pending (PopStack: LSPACT is cleared, the
/// registers still hold the state); else s0-s15 and FPSCR from the frame.
/// Returns whether they were read.
fn restore_fp(uc: &mut Uc<'_>, fp_words: &[u32]) -> Result<bool, String> {
    let Some(control) = fp_context::read(uc) else {
        return Ok(false);
    };
    if control.fpccr & LSPACT != 0 {
        fp_context::write(
            uc,
            FpControl {
                fpccr: control.fpccr & !LSPACT,
                ..control
            },
        );
        return Ok(false);
    }
    for (n, word) in fp_words.iter().take(16).enumerate() {
        uc.reg_write(fp_register(n as u32), u64::from(*word))
            .map_err(reg_error)?;
    }
    uc.reg_write(RegisterARM::FPSCR, u64::from(fp_words[16]))
        .map_err(reg_error)?;
    Ok(true)
}

/// The mode an exception return enters (ExceptionReturn, PopStack):
/// CONTROL.SPSEL from EXC_RETURN, FPCA = the frame had the FP context,
/// (ARMv8-M) SFPA from the stacked xPSR, the stack pointer past the
/// frame (and its padding word), IPSR the stacked one in Handler mode.
fn returned_mode(
    how: Stacking,
    target: ReturnTarget,
    mode: CoreMode,
    base: u32,
    size: u32,
    xpsr: u32,
) -> CoreMode {
    let top = after_pop(base, size, if how.align8() { xpsr } else { 0 });
    let mut control = mode.control & !(CONTROL_SPSEL | CONTROL_FPCA | CONTROL_SFPA);
    if target.to_psp {
        control |= CONTROL_SPSEL;
    }
    if target.fp_frame {
        control |= CONTROL_FPCA;
    }
    if how.profile == Profile::V8MMain && xpsr & XPSR_SFPA != 0 {
        control |= CONTROL_SFPA;
    }
    let mut returned = CoreMode {
        ipsr: if target.to_handler {
            xpsr & XPSR_EXCEPTION
        } else {
            0
        },
        control,
        ..mode
    };
    if target.to_psp {
        returned.psp = top;
    } else {
        returned.msp = top;
    }
    returned
}

/// APSR's flags and EPSR's IT state and Thumb bit from a stacked xPSR.
fn restore_psr(uc: &mut Uc<'_>, xpsr: u32) -> Result<(), String> {
    if xpsr & EPSR_T == 0 {
        return Err(format!(
            "exception return: the frame's stacked xPSR {xpsr:#010x} has the Thumb bit \
             clear: an INVSTATE UsageFault on silicon (DDI 0403E B1.5.8)"
        ));
    }
    uc.reg_write(
        RegisterARM::EPSR,
        u64::from(xpsr & !(XPSR_SPREALIGN | XPSR_SFPA)),
    )
    .map_err(reg_error)?;
    // APSR last: the write rebuilds QEMU's cached flags (the mode among them)
    rebuild_flags(uc, xpsr).map_err(reg_error)
}

/// QEMU caches whether the core is in Handler mode in the flags its
/// translations are looked up by, and Unicorn's register writes of IPSR or
/// CONTROL do not refresh them; a write of the condition flags does (and
/// sets APSR's NZCVQ and GE from `xpsr`).
pub(super) fn rebuild_flags(
    uc: &mut Uc<'_>,
    xpsr: u32,
) -> Result<(), unicorn_engine::unicorn_const::uc_error> {
    uc.reg_write(RegisterARM::APSR_NZCVQG, u64::from(xpsr & 0xF80F_0000))?;
    uc.reg_write(RegisterARM::APSR_NZCV, u64::from(xpsr & 0xF000_0000))
}

fn fp_register(n: u32) -> RegisterARM {
    const S: [RegisterARM; 16] = [
        RegisterARM::S0,
        RegisterARM::S1,
        RegisterARM::S2,
        RegisterARM::S3,
        RegisterARM::S4,
        RegisterARM::S5,
        RegisterARM::S6,
        RegisterARM::S7,
        RegisterARM::S8,
        RegisterARM::S9,
        RegisterARM::S10,
        RegisterARM::S11,
        RegisterARM::S12,
        RegisterARM::S13,
        RegisterARM::S14,
        RegisterARM::S15,
    ];
    S[n as usize % 16]
}

/// Writes a frame (the caller checked the place is the target's memory).
fn write_words(uc: &mut Uc<'_>, at: u32, words: &[u32]) -> Result<(), String> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    uc.mem_write(u64::from(at), &bytes)
        .map_err(|e| format!("exception entry: stacking at {at:#010x} failed ({e:?})"))
}

pub(super) fn read_words(uc: &Uc<'_>, at: u32, count: usize) -> Result<Vec<u32>, String> {
    let mut bytes = vec![0u8; count * 4];
    uc.mem_read(u64::from(at), &mut bytes)
        .map_err(|e| format!("exception return: unstacking at {at:#010x} failed ({e:?})"))?;
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect())
}
