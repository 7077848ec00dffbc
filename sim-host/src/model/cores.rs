//! What the System Control Space and the exception model of each Cortex-M
//! core look like, as their manuals give them: the CPUID value, the
//! architecture profile (which registers exist), the NVIC's size and
//! priority bits, and the exception latencies. A target file's optional
//! `[system]` section overrides any of these (a vendor's part: its
//! revision, its IRQ count, its priority bits), each with a citation.
//!
//! Latencies are zero-wait-state figures: entry is from the interrupt to
//! the handler's first instruction (stacking, vector fetch and the
//! handler's fetch in parallel), return from the `BX LR` to the first
//! instruction back (unstacking), tail-chaining from one handler's return
//! to the next handler's first instruction (no unstacking or stacking).

use std::borrow::Cow;

/// The Cortex-M architecture profile: which System Control Space
/// registers exist (ARMv6-M has no DWT cycle counter, no CPACR, no
/// configurable fault handlers; ARMv8-M mainline adds to ARMv7-M what this
/// model does not use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// ARMv6-M: Cortex-M0, M0+ (ARM DDI 0419).
    V6M,
    /// ARMv7-M: Cortex-M3, M4, M7 (ARM DDI 0403).
    V7M,
    /// ARMv8-M mainline: Cortex-M33 (ARM DDI 0553).
    V8MMain,
}

/// A source: the manuals' text is static, a target file's is its own.
pub type Cite = Cow<'static, str>;

/// A cycle count with the source that gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cited {
    pub cycles: u32,
    pub cite: Cite,
}

impl Cited {
    fn manual(cycles: u32, cite: &'static str) -> Cited {
        Cited {
            cycles,
            cite: Cow::Borrowed(cite),
        }
    }
}

/// The facts of one core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreFacts {
    pub profile: Profile,
    pub cpuid: u32,
    pub cpuid_cite: Cite,
    /// External interrupts the NVIC implements (a multiple of 32 in the
    /// registers; the vendor chooses how many are wired).
    pub irqs: u32,
    /// Implemented priority bits (the top bits of each 8-bit field).
    pub priority_bits: u8,
    pub entry: Cited,
    pub exit: Cited,
    pub tail_chain: Cited,
    /// Whether the core has an FPU whose context exceptions stack.
    pub fpu: bool,
    /// What stacking the FP context (s0-s15 and FPSCR, 17 words) adds to
    /// an entry when it is pushed at once (FPCCR.LSPEN clear).
    pub fp_stacking: Cited,
    /// What unstacking it adds to a return that reads it from the frame.
    pub fp_unstacking: Cited,
    /// What a lazy preservation costs, at the handler's first FP
    /// instruction (FPCCR.LSPEN set).
    pub lazy_fp_push: Cited,
}

const M3_M4_ENTRY: &str = "12 cycles with zero wait states: Cortex-M4 TRM r0p1 (ARM DDI \
    0439D) 3.9.1 \"Exception handling\": \"a maximum of a twelve cycle latency from asserting the \
    interrupt to execution of the first instruction of the ISR when the memory being accessed has \
    no wait states\"; the same for Cortex-M3 (Arm Knowledge Article 103489845)";
const M3_M4_RETURN: &str = "10 cycles: Cortex-M4 TRM r0p1 (ARM DDI 0439D) 3.9.1: \"Returns from \
    interrupts similarly take ten cycles where the instruction being returned to is fetched in \
    parallel to the stack pop\"; Arm Knowledge Article 103489845: the Cortex-M3 TRM's 12 is a \
    typographical error, \"the Cortex-M3 has a latency on exit of ten cycles, just like the \
    Cortex-M4\"";
const M3_M4_TAIL_CHAIN: &str = "6 cycles: Cortex-M4 TRM r0p1 (ARM DDI 0439D) 3.9.1: \"Tail \
    chaining requires six cycles when using zero wait state memory. No stack pushes or pops are \
    performed\"";
const FP_STACKING: &str = "17 cycles: Cortex-M4 TRM r0p1 (ARM DDI 0439D) 3.9.1: \"When the FPU \
    option is implemented and a floating point context is active and the lazy stacking is not \
    enabled, this maximum latency is increased to twenty nine cycles\" (12 + 17, Arm Knowledge \
    Article 103489845: \"plus a possible 17 cycles more\")";
const FP_UNSTACKING: &str = "17 cycles: Cortex-M4 TRM r0p1 (ARM DDI 0439D) 3.9.1: \"If the \
    floating point option is implemented and an active floating point context is included in the \
    stack frame, the return from interrupt takes twenty-seven cycles\" (10 + 17)";
const LAZY_FP_PUSH: &str = "17 cycles: not published; this model's derivation: the deferred push \
    stores the same 17 words (s0-s15, FPSCR) whose eager stacking the Cortex-M4 TRM (ARM DDI \
    0439D 3.9.1) prices at 29 - 12 = 17 cycles, one word per cycle, before the FP instruction \
    that triggers it";
const NO_FPU: &str = "no FPU: no FP context is ever stacked";

/// The FP context's 17 words cost 17 cycles where there is an FPU.
fn fp_cost(fpu: bool, cite: &'static str) -> Cited {
    if fpu {
        Cited::manual(17, cite)
    } else {
        Cited::manual(0, NO_FPU)
    }
}

/// The facts of the core Unicorn model `cpu` (a target file's `cpu`);
/// `None` for a core without a System Control Space (RISC-V).
pub fn facts(cpu: &str) -> Option<CoreFacts> {
    let m3_m4 = |cpuid, cpuid_cite: &'static str, fpu| CoreFacts {
        profile: Profile::V7M,
        cpuid,
        cpuid_cite: Cow::Borrowed(cpuid_cite),
        irqs: 32,
        priority_bits: 3,
        entry: Cited::manual(12, M3_M4_ENTRY),
        exit: Cited::manual(10, M3_M4_RETURN),
        tail_chain: Cited::manual(6, M3_M4_TAIL_CHAIN),
        fpu,
        fp_stacking: fp_cost(fpu, FP_STACKING),
        fp_unstacking: fp_cost(fpu, FP_UNSTACKING),
        lazy_fp_push: fp_cost(fpu, LAZY_FP_PUSH),
    };
    Some(match cpu {
        "cortex-m0" => CoreFacts {
            profile: Profile::V6M,
            cpuid: 0x410C_C200,
            cpuid_cite: Cow::Borrowed(
                "Cortex-M0 TRM r0p0 (ARM DDI 0432C) 4.2.1, Table 4-2: \
                implementer 0x41, variant 0, architecture 0xC (ARMv6-M), part 0xC20, revision 0",
            ),
            irqs: 32,
            priority_bits: 2,
            entry: Cited::manual(
                16,
                "16 cycles with zero wait states: ARM's interrupt latency table for \
                    Cortex-M processors (J. Yiu, \"A Beginner's Guide on Interrupt Latency - and \
                    Interrupt Latency of the ARM Cortex-M processors\", ARM Community, 2016)",
            ),
            exit: Cited::manual(
                16,
                "not published for Cortex-M0; this model takes the unstacking to cost \
                    what the stacking of the same 8 words costs (the entry's 16 cycles)",
            ),
            tail_chain: Cited::manual(
                6,
                "not published for Cortex-M0; this model takes ARMv6-M tail-chaining \
                    (no stacking or unstacking, the vector fetch and refill only) to cost \
                    what it costs on Cortex-M3/M4 (6 cycles, Cortex-M4 TRM r0p1, ARM DDI \
                    0439D 3.9.1)",
            ),
            fpu: false,
            fp_stacking: Cited::manual(0, NO_FPU),
            fp_unstacking: Cited::manual(0, NO_FPU),
            lazy_fp_push: Cited::manual(0, NO_FPU),
        },
        "cortex-m3" => m3_m4(
            0x412F_C231,
            "Cortex-M3 TRM r2p1 (ARM DDI 0337I) 4.3.2, Table 4.3: implementer 0x41, \
             variant 2, part 0xC23, revision 1",
            false,
        ),
        "cortex-m4" => m3_m4(
            0x410F_C241,
            "Cortex-M4 TRM r0p1 (ARM DDI 0439D) 4.1, Table 4-1: CPUID reset value 0x410FC241",
            true,
        ),
        "cortex-m7" => CoreFacts {
            entry: Cited::manual(12, LATER_CORES_ENTRY),
            exit: Cited::manual(10, LATER_CORES_RETURN),
            fp_stacking: Cited::manual(17, LATER_CORES_FP),
            fp_unstacking: Cited::manual(17, LATER_CORES_FP),
            lazy_fp_push: Cited::manual(17, LATER_CORES_FP),
            ..m3_m4(
                0x411F_C272,
                "Cortex-M7 TRM r1p2 (ARM DDI 0489F) 4.1, System control registers: CPUID \
                 0x411FC272 (implementer 0x41, variant 1, part 0xC27, revision 2)",
                true,
            )
        },
        "cortex-m33" => CoreFacts {
            profile: Profile::V8MMain,
            entry: Cited::manual(12, LATER_CORES_ENTRY),
            exit: Cited::manual(10, LATER_CORES_RETURN),
            fp_stacking: Cited::manual(17, LATER_CORES_FP),
            fp_unstacking: Cited::manual(17, LATER_CORES_FP),
            lazy_fp_push: Cited::manual(17, LATER_CORES_FP),
            ..m3_m4(
                0x410F_D214,
                "Cortex-M33 TRM r0p4 (ARM 100230_0004) B2.3, Table B2-2: implementer 0x41, \
                 variant 0, part 0xD21, revision 4",
                true,
            )
        },
        _ => return None,
    })
}

const LATER_CORES_ENTRY: &str = "12 cycles with zero wait states: ARM's interrupt latency \
    table for Cortex-M processors (J. Yiu, \"A Beginner's Guide on Interrupt Latency\", ARM \
    Community, 2016)";
const LATER_CORES_RETURN: &str = "not published for this core; this model takes the return \
    and tail-chaining costs of Cortex-M3/M4 (10 cycles: Cortex-M4 TRM r0p1, ARM DDI 0439D \
    3.9.1)";
const LATER_CORES_FP: &str = "not published for this core; this model takes the Cortex-M4's \
    17 cycles for the 17 words of the FP context (Cortex-M4 TRM r0p1, ARM DDI 0439D 3.9.1: 29 \
    and 27 cycles against 12 and 10)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuid_fields_are_those_of_the_manuals() {
        // [31:24] implementer 0x41 (Arm), [19:16] 0xF on ARMv7-M and 0xC on
        // ARMv6-M, [15:4] the part number
        let part = |cpu: &str| facts(cpu).map(|f| (f.cpuid >> 24, (f.cpuid >> 4) & 0xfff));
        assert_eq!(part("cortex-m0"), Some((0x41, 0xC20)));
        assert_eq!(part("cortex-m3"), Some((0x41, 0xC23)));
        assert_eq!(part("cortex-m4"), Some((0x41, 0xC24)));
        assert_eq!(facts("rv32"), None);
        assert_eq!(facts("cortex-m0").unwrap().profile, Profile::V6M);
    }
}
