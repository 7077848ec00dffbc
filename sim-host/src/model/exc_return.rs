//! Cortex-M exception frames and EXC_RETURN as the architecture manuals
//! define them, with no emulator: the value LR gets on exception entry,
//! what a value branched to on return means (or why it is illegal), and
//! where a frame goes on the stack.
//!
//! Sources: ARMv7-M ARM (DDI 0403E) B1.5.6 "Exception entry behavior"
//! (PushStack, ExceptionTaken) and B1.5.8 "Exception return behavior"
//! (ExceptionReturn, Table B1-8 "EXC_RETURN definition"); ARMv6-M ARM
//! (DDI 0419) B1.5.6 and B1.5.8 (Table B1-5, the three values 0xFFFFFFF1,
//! 0xFFFFFFF9, 0xFFFFFFFD); ARMv8-M ARM (DDI 0553) B3.19 / D1.2.95
//! EXC_RETURN (the fields ES, SPSEL, Mode, FType, DCRS, S; bit 1 RES0;
//! bits [31:7] RES1). QEMU's `target/arm/m_helper.c`
//! (do_v7m_exception_exit) implements the same checks and is the
//! reference the tests compare with.

use super::cores::Profile;

/// CONTROL's bits (B1.4.4; ARMv8-M adds SFPA).
pub const CONTROL_NPRIV: u32 = 1 << 0;
pub const CONTROL_SPSEL: u32 = 1 << 1;
pub const CONTROL_FPCA: u32 = 1 << 2;
pub const CONTROL_SFPA: u32 = 1 << 3;

/// EXC_RETURN's fields (ARMv8-M names; ARMv7-M has the same bits 4:0).
const ES: u32 = 1 << 0;
const RES0: u32 = 1 << 1;
const SPSEL: u32 = 1 << 2;
const MODE: u32 = 1 << 3;
const FTYPE: u32 = 1 << 4;
const DCRS: u32 = 1 << 5;
const S: u32 = 1 << 6;
/// Bits [31:7] (ARMv8-M) and [31:5] (ARMv7-M) are all ones.
const RES1_V8: u32 = !0x7f;
const RES1_V7: u32 = !0x1f;

/// Stacked xPSR bit 9: the frame was realigned by 4 bytes (B1.5.7);
/// bit 20 (ARMv8-M): the Secure FP context was active (SFPA).
pub const XPSR_SPREALIGN: u32 = 1 << 9;
pub const XPSR_SFPA: u32 = 1 << 20;

/// The basic frame (r0-r3, r12, lr, return address, xPSR) and the
/// extended frame (plus s0-s15, FPSCR and a reserved word), in bytes.
pub const BASIC_FRAME: u32 = 0x20;
pub const EXTENDED_FRAME: u32 = 0x68;

/// Where an exception return goes, from a legal EXC_RETURN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReturnTarget {
    /// Handler mode (an exception below is resumed), else Thread mode.
    pub to_handler: bool,
    /// The frame is on the process stack (Thread mode only).
    pub to_psp: bool,
    /// The frame is the extended one, with the FP context.
    pub fp_frame: bool,
}

/// The EXC_RETURN an exception entry puts in LR (B1.5.6; ARMv8-M: the
/// Secure state with the default stacking rules, as a core without
/// TrustZone code runs).
pub fn exc_return_for(profile: Profile, from: ReturnTarget) -> u32 {
    let low = match (from.to_handler, from.to_psp) {
        (true, _) => 0x1,
        (false, false) => 0x9,
        (false, true) => 0xd,
    };
    let fp = if from.fp_frame { 0 } else { FTYPE };
    match profile {
        Profile::V6M | Profile::V7M => RES1_V7 | fp | low,
        Profile::V8MMain => RES1_V8 | S | DCRS | fp | low,
    }
}

/// Why an EXC_RETURN value cannot be returned with: the rule and its
/// source, for the message that ends the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IllegalReturn(pub String);

/// Decodes the value a handler branched to (its bit 0 set, as every
/// EXC_RETURN has it), or says why the architecture refuses it.
pub fn decode(value: u32, profile: Profile, fpu: bool) -> Result<ReturnTarget, IllegalReturn> {
    let target = ReturnTarget {
        to_handler: value & MODE == 0,
        to_psp: value & SPSEL != 0,
        fp_frame: value & FTYPE == 0,
    };
    let why = match profile {
        Profile::V6M => v6m_problem(value),
        Profile::V7M => v7m_problem(value, fpu),
        Profile::V8MMain => v8m_problem(value, fpu),
    };
    match why {
        Some(why) => Err(IllegalReturn(format!(
            "exception return with EXC_RETURN {value:#010x}: {why}; on silicon an INVPC \
             UsageFault (escalated to HardFault)"
        ))),
        None => Ok(target),
    }
}

fn v6m_problem(value: u32) -> Option<String> {
    (!matches!(value, 0xFFFF_FFF1 | 0xFFFF_FFF9 | 0xFFFF_FFFD)).then(|| {
        "ARMv6-M defines only 0xFFFFFFF1, 0xFFFFFFF9 and 0xFFFFFFFD \
         (DDI 0419 B1.5.8, Table B1-5)"
            .to_owned()
    })
}

fn v7m_problem(value: u32, fpu: bool) -> Option<String> {
    if value & RES1_V7 != RES1_V7 {
        return Some("bits [27:5] must all be 1 (DDI 0403E B1.5.8, Table B1-8)".into());
    }
    if value & FTYPE == 0 && !fpu {
        return Some(
            "bit 4 clear names an FP frame on a core without the FP extension \
             (DDI 0403E B1.5.8, Table B1-8)"
                .into(),
        );
    }
    (!matches!(value & 0xf, 0x1 | 0x9 | 0xd)).then(|| {
        "bits [3:0] must be 0b0001 (Handler), 0b1001 (Thread, main stack) or 0b1101 \
         (Thread, process stack) (DDI 0403E B1.5.8, Table B1-8)"
            .to_owned()
    })
}

fn v8m_problem(value: u32, fpu: bool) -> Option<String> {
    if value & RES1_V8 != RES1_V8 {
        return Some("bits [31:7] must all be 1 (DDI 0553 D1.2.95 EXC_RETURN)".into());
    }
    if value & RES0 != 0 {
        return Some("bit 1 is RES0 (DDI 0553 D1.2.95 EXC_RETURN)".into());
    }
    if value & (S | ES) != S | ES {
        return Some(
            "S and ES clear name the Non-secure state, which this Secure-only model \
             of the core never enters (DDI 0553 D1.2.95 EXC_RETURN)"
                .into(),
        );
    }
    if value & DCRS == 0 {
        return Some(
            "DCRS clear names a frame with the callee-saved registers, which only \
             Secure-to-Non-secure exceptions stack (DDI 0553 B3.19); not modelled"
                .into(),
        );
    }
    if value & FTYPE == 0 && !fpu {
        return Some("FType clear names an FP frame on a core without an FPU".into());
    }
    (value & MODE == 0 && value & SPSEL != 0).then(|| {
        "Mode 0 (Handler) with SPSEL 1: a handler always runs on the main stack \
         (DDI 0553 D1.2.95 EXC_RETURN)"
            .to_owned()
    })
}

/// Where an exception frame goes below a stack pointer (PushStack): its
/// base and whether a padding word was added to align it to 8 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FramePlace {
    pub base: u32,
    pub size: u32,
    pub realigned: bool,
}

/// The frame of `size` bytes below `sp`; `align8`: CCR.STKALIGN on
/// ARMv7-M, always on ARMv6-M and ARMv8-M (their frames are 8-aligned).
pub fn frame_below(sp: u32, size: u32, align8: bool) -> FramePlace {
    let realigned = align8 && sp & 4 != 0;
    let pad = if realigned { 4 } else { 0 };
    FramePlace {
        base: sp.wrapping_sub(size).wrapping_sub(pad) & !3,
        size,
        realigned,
    }
}

/// The stack pointer after a frame at `base` is popped (ExceptionReturn:
/// "SP = (SP + framesize) OR spmask", spmask from the stacked xPSR's bit 9).
pub fn after_pop(base: u32, size: u32, stacked_xpsr: u32) -> u32 {
    let top = base.wrapping_add(size);
    if stacked_xpsr & XPSR_SPREALIGN != 0 {
        top | 4
    } else {
        top
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(to_psp: bool, fp_frame: bool) -> ReturnTarget {
        ReturnTarget {
            to_handler: false,
            to_psp,
            fp_frame,
        }
    }

    #[test]
    fn entry_values_are_the_manuals() {
        let handler = ReturnTarget {
            to_handler: true,
            to_psp: false,
            fp_frame: false,
        };
        assert_eq!(exc_return_for(Profile::V6M, handler), 0xFFFF_FFF1);
        assert_eq!(
            exc_return_for(Profile::V7M, thread(false, false)),
            0xFFFF_FFF9
        );
        assert_eq!(
            exc_return_for(Profile::V7M, thread(true, false)),
            0xFFFF_FFFD
        );
        assert_eq!(
            exc_return_for(Profile::V7M, thread(true, true)),
            0xFFFF_FFED
        );
        assert_eq!(
            exc_return_for(Profile::V7M, thread(false, true)),
            0xFFFF_FFE9
        );
        // ARMv8-M Secure, default rules: the same numbers (S, DCRS, ES set)
        assert_eq!(
            exc_return_for(Profile::V8MMain, thread(true, true)),
            0xFFFF_FFED
        );
        assert_eq!(exc_return_for(Profile::V8MMain, handler), 0xFFFF_FFF1);
    }

    #[test]
    fn every_entry_value_decodes_to_where_it_came_from() {
        for profile in [Profile::V6M, Profile::V7M, Profile::V8MMain] {
            for to_handler in [false, true] {
                for to_psp in [false, true] {
                    for fp_frame in [false, true] {
                        if (to_handler && to_psp) || (profile == Profile::V6M && fp_frame) {
                            continue;
                        }
                        let t = ReturnTarget {
                            to_handler,
                            to_psp,
                            fp_frame,
                        };
                        let v = exc_return_for(profile, t);
                        assert_eq!(decode(v, profile, true), Ok(t), "{profile:?} {v:#x}");
                    }
                }
            }
        }
    }

    #[test]
    fn reserved_values_are_refused_with_the_rule() {
        // issue 43 M09's values, on ARMv7-M
        for v in [
            0xFFFF_FFF5,
            0xFFFF_FFFF,
            0xFFFF_FFB9,
            0xFFFF_FF79,
            0xFFFF_FFF8,
        ] {
            let e = decode(v, Profile::V7M, true).unwrap_err();
            assert!(e.0.contains("DDI 0403E"), "{v:#x}: {}", e.0);
        }
        assert!(
            decode(0xFFFF_FFE9, Profile::V7M, false).is_err(),
            "FP frame, no FPU"
        );
        assert!(decode(0xFFFF_FFE9, Profile::V6M, true).is_err());
        assert!(
            decode(0xFFFF_FFF5, Profile::V8MMain, true).is_err(),
            "handler on PSP"
        );
        assert!(
            decode(0xFFFF_FFBD, Profile::V8MMain, true).is_err(),
            "Non-secure"
        );
        assert!(
            decode(0xFFFF_FFDD, Profile::V8MMain, true).is_err(),
            "DCRS clear"
        );
        assert!(
            decode(0xFFFF_FFFB, Profile::V8MMain, true).is_err(),
            "bit 1"
        );
    }

    #[test]
    fn frames_are_placed_and_popped_as_pushstack_says() {
        // 8-aligned: no padding
        let f = frame_below(0x2000_1000, BASIC_FRAME, true);
        assert_eq!((f.base, f.realigned), (0x2000_0FE0, false));
        assert_eq!(after_pop(f.base, f.size, 0), 0x2000_1000);
        // 4 mod 8: a padding word, xPSR bit 9 undoes it
        let f = frame_below(0x2000_0FFC, BASIC_FRAME, true);
        assert_eq!((f.base, f.realigned), (0x2000_0FD8, true));
        assert_eq!(after_pop(f.base, f.size, XPSR_SPREALIGN), 0x2000_0FFC);
        // STKALIGN clear (ARMv7-M): 4-aligned, no padding
        let f = frame_below(0x2000_0FFC, EXTENDED_FRAME, false);
        assert_eq!((f.base, f.realigned), (0x2000_0F94, false));
    }
}
