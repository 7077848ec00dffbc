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
}

const M3_M4_LATENCY: &str = "12-cycle entry, 12-cycle return and 6-cycle tail-chaining \
    with zero wait states: Cortex-M4 Devices Generic User Guide 2.3.7 \"Exception entry and \
    return\", as reproduced in TI SLAU356I section 1.5.8 (Cortex-M4F) and the TI Stellaris/Tiva \
    data sheets' Cortex-M3/M4 chapters";

/// The facts of the core Unicorn model `cpu` (a target file's `cpu`);
/// `None` for a core without a System Control Space (RISC-V).
pub fn facts(cpu: &str) -> Option<CoreFacts> {
    let m3_m4 = |cpuid, cpuid_cite: &'static str, fpu| CoreFacts {
        profile: Profile::V7M,
        cpuid,
        cpuid_cite: Cow::Borrowed(cpuid_cite),
        irqs: 32,
        priority_bits: 3,
        entry: Cited::manual(12, M3_M4_LATENCY),
        exit: Cited::manual(12, M3_M4_LATENCY),
        tail_chain: Cited::manual(6, M3_M4_LATENCY),
        fpu,
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
                    what it costs on Cortex-M3/M4 (6 cycles, Cortex-M4 Devices Generic User \
                    Guide 2.3.7)",
            ),
            fpu: false,
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
            exit: Cited::manual(12, LATER_CORES_RETURN),
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
            exit: Cited::manual(12, LATER_CORES_RETURN),
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
    and tail-chaining costs of Cortex-M3/M4 (Cortex-M4 Devices Generic User Guide 2.3.7)";

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
