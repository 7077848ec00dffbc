//! The cycle model: prices a basic block once from its decoded instructions
//! and the target's cycle table (DESIGN.md decision 2).
//!
//! This module is pure: it knows nothing of Unicorn or capstone. `decode`
//! turns machine code into [`Insn`]s; the machine charges a block's
//! [`BlockCost`] each time the block executes, plus the two things only the
//! run time knows:
//!
//! - whether the block was entered by a taken branch (the successor block is
//!   not the predecessor's fall-through): then the predecessor's
//!   [`BlockCost::taken_extra`] is charged, plus the target's
//!   `misaligned_target` cycles if the block starts with a 32-bit instruction
//!   at an address that is not word aligned;
//! - data-dependent instructions ([`DynamicSite`]s: dividers and early
//!   terminating multipliers), whose extra cycles [`dynamic_extra`] computes
//!   from the operand values when they execute.
//!
//! Rules applied inside a block, each from the core's manual (see the
//! target files' citations and ARCHITECTURE.md, "Cycle model"):
//! - pipelined loads (Cortex-M3/M4 3.3.2): a load or store directly after a
//!   single load costs `pipelined` cycles instead of `cycles`, unless its
//!   address uses a register the first load wrote (its destination, or its
//!   base when it writes the base back);
//! - address dependency (Cortex-M3/M4 3.3.2): a load or store whose address
//!   registers were written by the directly preceding data-processing
//!   instruction costs `address_dependency` more;
//! - register-offset stores (Cortex-M3/M4 3.3.2, "other instructions cannot
//!   be pipelined after STR with register offset"): `register_offset` more,
//!   unless the store pipelines after a load;
//! - literal loads (Cortex-M3/M4 3.3.2, `LDR Rx,[PC,#imm]` "might add a
//!   cycle because of contention with the fetch unit"): `literal_contention`
//!   more when the literal is in the region the block's code is in;
//! - IT folding (Cortex-M3/M4 ACTLR.DISFOLD): an IT directly after a 16-bit
//!   instruction of the same block costs `folded` instead of `cycles`;
//! - load use (Hazard3): an instruction that reads the register loaded by the
//!   directly preceding load costs the load's `load_use` more;
//! - instruction fetch wait states: one fetch per 32-bit word of code, each
//!   costing the region's wait states.
//!
//! Effects across block boundaries (a load at the end of one block and a
//! dependent instruction at the start of the next) are not modelled: blocks
//! end at branches, which drain these pipelines anyway on the modelled cores.

use crate::model::target::{DynamicCost, InsnClass, Target};

/// A set of architectural registers: bit n is r<n> (ARM) or x<n> (RISC-V).
pub type RegMask = u64;

/// Operands of a data-dependent instruction, read when it executes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DynamicOperands {
    /// Register numbers of the two source operands.
    pub a: u8,
    pub b: u8,
    /// Whether the operation is signed (sign-magnitude for bit counting).
    pub signed: bool,
}

/// One decoded instruction, as much as the cycle model needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Insn {
    pub addr: u64,
    pub size: u8,
    pub class: InsnClass,
    /// Registers transferred by LDM/STM/PUSH/POP (for POP {.., PC} without PC).
    pub transfers: u8,
    pub reads: RegMask,
    pub writes: RegMask,
    /// Base and index registers of a load's or store's address.
    pub address_regs: RegMask,
    /// A single load/store that can pipeline with its neighbours.
    pub pipelinable: bool,
    /// A single load/store whose address has an index register (`[Rn, Rm]`).
    pub register_offset: bool,
    /// Address of the literal a PC-relative load reads (`LDR Rt, [PC, #imm]`).
    pub literal: Option<u64>,
    pub dynamic: Option<DynamicOperands>,
}

impl Insn {
    /// A plain instruction of `class` with no register information.
    pub fn simple(addr: u64, size: u8, class: InsnClass) -> Insn {
        Insn {
            addr,
            size,
            class,
            transfers: 0,
            reads: 0,
            writes: 0,
            address_regs: 0,
            pipelinable: matches!(class, InsnClass::Load | InsnClass::Store),
            register_offset: false,
            literal: None,
            dynamic: None,
        }
    }

    fn is_memory_single(&self) -> bool {
        matches!(self.class, InsnClass::Load | InsnClass::Store)
    }
}

/// A data-dependent instruction inside a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DynamicSite {
    pub addr: u64,
    pub rule: DynamicCost,
    /// The cost already included in the block's static cycles.
    pub base: u32,
    pub max: u32,
    pub operands: DynamicOperands,
}

/// The price of one basic block, computed once.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlockCost {
    /// Cycles of one execution, not counting a taken branch at its end.
    pub cycles: u32,
    pub instructions: u32,
    /// Address after the last instruction: a successor block starting
    /// anywhere else was reached by a taken branch.
    pub fallthrough: u64,
    /// Extra cycles when the block's last instruction is a taken branch.
    pub taken_extra: u32,
    /// Extra cycles when this block is entered by a taken branch (a 32-bit
    /// first instruction that is not word aligned).
    pub entry_penalty: u32,
    pub dynamic: Vec<DynamicSite>,
}

/// Prices a block. `wait_states` are the fetch wait states of the region
/// the code is in.
pub fn price_block(target: &Target, insns: &[Insn], wait_states: u32) -> BlockCost {
    let mut cost = BlockCost::default();
    let Some(first) = insns.first() else {
        return cost;
    };
    let code_region = target.region_of(first.addr, 1);
    let mut prev: Option<&Insn> = None;
    for insn in insns {
        let row = target.cost(insn.class);
        let mut cycles = row.cycles + row.per_register * u32::from(insn.transfers);
        // pipelined after the directly preceding load (3.3.2 "LDR [any] are
        // pipelined when possible")
        let mut pipelined_after_load = false;
        if let Some(p) = prev {
            let p_row = target.cost(p.class);
            if insn.is_memory_single() {
                pipelined_after_load = p.class == InsnClass::Load
                    && p.pipelinable
                    && insn.pipelinable
                    && p.writes & insn.address_regs == 0;
                if let Some(pipelined) = row.pipelined {
                    if pipelined_after_load {
                        cycles = cycles.min(pipelined);
                    }
                }
                if p.class == InsnClass::Alu && p.writes & insn.address_regs != 0 {
                    cycles += row.address_dependency;
                }
            }
            if p.class == InsnClass::Load && p.writes & insn.reads != 0 {
                cycles += p_row.load_use;
            }
            // IT folding: an IT right after a 16-bit instruction executes
            // in parallel with it
            if let Some(folded) = row.folded {
                if insn.class == InsnClass::It && p.size == 2 {
                    cycles = folded;
                }
            }
        }
        // a store with a register offset: nothing pipelines after it, so it
        // holds the pipeline a cycle more, unless it pipelined after a load
        if insn.class == InsnClass::Store && insn.register_offset && !pipelined_after_load {
            cycles += row.register_offset;
        }
        // a literal in the memory the code is fetched from: the load and the
        // instruction fetch contend for it
        if let Some(literal) = insn.literal {
            if row.literal_contention > 0
                && code_region.is_some()
                && target.region_of(literal, 4).map(|r| r.start) == code_region.map(|r| r.start)
            {
                cycles += row.literal_contention;
            }
        }
        if let Some(ops) = insn.dynamic {
            if let Some((rule, max)) = row.dynamic {
                cost.dynamic.push(DynamicSite {
                    addr: insn.addr,
                    rule,
                    base: row.cycles,
                    max,
                    operands: ops,
                });
            }
        }
        cost.cycles += cycles;
        cost.instructions += 1;
        prev = Some(insn);
    }
    let last = insns.last().expect("non-empty");
    cost.fallthrough = last.addr + u64::from(last.size);
    cost.taken_extra = target.cost(last.class).taken;
    if first.size == 4 && first.addr % 4 != 0 {
        cost.entry_penalty = target.misaligned_target;
    }
    if wait_states > 0 {
        // at most MAX_CLASS_CYCLES x a block's words: no wrap, but saturate
        // rather than wrap should a caller pass more
        let words = cost.fallthrough.div_ceil(4) - first.addr / 4;
        let fetch = u64::from(wait_states) * words;
        cost.cycles = cost
            .cycles
            .saturating_add(u32::try_from(fetch).unwrap_or(u32::MAX));
    }
    cost
}

/// Number of bits needed for the magnitude of `value`.
fn significant_bits(value: u32, signed: bool) -> u32 {
    let magnitude = if signed {
        (value as i32).unsigned_abs()
    } else {
        value
    };
    32 - magnitude.leading_zeros()
}

/// Extra cycles (above `site.base`) a data-dependent instruction takes with
/// operand values `a` (dividend / first factor) and `b` (divisor / second).
///
/// `DivideEarlyTermination` (Cortex-M3/M4 SDIV/UDIV). ARM documents only
/// the range, "2 to 12" cycles (Table 3-1), and that the divider terminates
/// early depending on the operands; it gives no formula, and no published
/// measurement is cited here. The rule below is this model's own
/// interpolation inside the documented range, with bits(x) the significant
/// bits of |x| (the quotient has about bits(a) - bits(b) + 1 bits):
///   2 (the minimum) if either operand is 0;
///   3 if bits(a) < bits(b) (the quotient is 0);
///   otherwise 5 + (bits(a) - bits(b)) / 4, i.e. about four quotient bits
///   per cycle after a fixed start, which reaches the documented maximum 12
///   only for the widest quotients; clamped to `max` (12).
///
/// `MultiplyEarlyTermination` (Cortex-M3 UMULL/SMULL 3-5, UMLAL/SMLAL 4-7,
/// "early termination depending on the size of the source values"): one
/// cycle more for each operand whose magnitude needs more than 16 bits.
pub fn dynamic_extra(site: &DynamicSite, a: u32, b: u32) -> u32 {
    let signed = site.operands.signed;
    let total = match site.rule {
        DynamicCost::DivideEarlyTermination => {
            let (bits_a, bits_b) = (significant_bits(a, signed), significant_bits(b, signed));
            if a == 0 || b == 0 {
                2
            } else if bits_a < bits_b {
                3
            } else {
                5 + (bits_a - bits_b) / 4
            }
        }
        DynamicCost::MultiplyEarlyTermination => {
            site.base
                + u32::from(significant_bits(a, signed) > 16)
                + u32::from(significant_bits(b, signed) > 16)
        }
    };
    total.clamp(site.base, site.max) - site.base
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::target::Target;

    fn m4() -> Target {
        crate::model::target::builtin("cortex-m4").unwrap()
    }

    fn load(addr: u64, dest: u8, base: u8) -> Insn {
        Insn {
            writes: 1 << dest,
            reads: 1 << base,
            address_regs: 1 << base,
            ..Insn::simple(addr, 2, InsnClass::Load)
        }
    }

    #[test]
    fn back_to_back_loads_pipeline_on_m4() {
        // 3.3.2: "LDR R0,[R1,R5]; LDR R1,[R2]; LDR R2,[R3,#4] - normally four cycles total"
        let insns = [load(0, 0, 1), load(2, 1, 2), load(4, 2, 3)];
        assert_eq!(price_block(&m4(), &insns, 0).cycles, 4);
    }

    #[test]
    fn dependent_load_does_not_pipeline() {
        // the second load's address is the first one's destination
        let insns = [load(0, 0, 1), load(2, 2, 0)];
        assert_eq!(price_block(&m4(), &insns, 0).cycles, 4);
    }

    #[test]
    fn address_dependency_on_alu_result_stalls() {
        let add = Insn {
            writes: 1 << 3,
            ..Insn::simple(0, 2, InsnClass::Alu)
        };
        let insns = [add, load(2, 0, 3)];
        assert_eq!(price_block(&m4(), &insns, 0).cycles, 1 + 2 + 1);
    }

    #[test]
    fn load_use_bubble_on_hazard3() {
        let rv = crate::model::target::builtin("rv32imac").unwrap();
        let use_it = Insn {
            reads: 1 << 5,
            writes: 1 << 6,
            ..Insn::simple(4, 4, InsnClass::Alu)
        };
        let independent = Insn {
            reads: 1 << 7,
            writes: 1 << 6,
            ..Insn::simple(4, 4, InsnClass::Alu)
        };
        let mut lw = load(0, 5, 10);
        lw.size = 4;
        assert_eq!(price_block(&rv, &[lw.clone(), use_it], 0).cycles, 3);
        assert_eq!(price_block(&rv, &[lw, independent], 0).cycles, 2);
    }

    #[test]
    fn taken_extra_and_fallthrough_come_from_the_last_instruction() {
        let insns = [
            Insn::simple(0x100, 2, InsnClass::Alu),
            Insn::simple(0x102, 2, InsnClass::BranchCond),
        ];
        let cost = price_block(&m4(), &insns, 0);
        assert_eq!(cost.cycles, 2);
        assert_eq!(cost.fallthrough, 0x104);
        assert_eq!(cost.taken_extra, 1);
    }

    #[test]
    fn misaligned_32_bit_entry_costs_a_fetch() {
        let insns = [Insn::simple(0x102, 4, InsnClass::Alu)];
        assert_eq!(price_block(&m4(), &insns, 0).entry_penalty, 1);
        let aligned = [Insn::simple(0x104, 4, InsnClass::Alu)];
        assert_eq!(price_block(&m4(), &aligned, 0).entry_penalty, 0);
    }

    #[test]
    fn wait_states_are_charged_per_fetched_word() {
        // 0x102..0x10a touches words 0x100, 0x104, 0x108: three fetches
        let insns = [
            Insn::simple(0x102, 4, InsnClass::Alu),
            Insn::simple(0x106, 4, InsnClass::Alu),
        ];
        assert_eq!(price_block(&m4(), &insns, 2).cycles, 2 + 3 * 2);
    }

    #[test]
    fn pop_with_pc_counts_registers() {
        let pop = Insn {
            transfers: 2,
            ..Insn::simple(0, 2, InsnClass::PopPc)
        };
        let cost = price_block(&m4(), &[pop], 0);
        // 1+N+P with N = 3 (r4, r5, pc) and P = 3: 2 + 2 now, 3 when taken
        assert_eq!(cost.cycles + cost.taken_extra, 1 + 3 + 3);
    }

    fn store(addr: u64, data: u8, base: u8, index: Option<u8>) -> Insn {
        let address_regs = (1 << base) | index.map_or(0, |i| 1 << i);
        Insn {
            reads: (1 << data) | address_regs,
            address_regs,
            register_offset: index.is_some(),
            ..Insn::simple(addr, 2, InsnClass::Store)
        }
    }

    #[test]
    fn register_offset_store_holds_the_pipeline() {
        // 3.3.2: "STR Rx,[Ry,#imm] is always one cycle"; "other instructions
        // cannot be pipelined after STR with register offset": 2
        let imm = [store(0, 0, 1, None), store(2, 0, 1, None)];
        assert_eq!(price_block(&m4(), &imm, 0).cycles, 1 + 1);
        let reg = [store(0, 0, 1, Some(2)), store(2, 0, 1, Some(2))];
        assert_eq!(price_block(&m4(), &reg, 0).cycles, 2 + 2);
    }

    #[test]
    fn register_offset_store_pipelines_after_a_load() {
        // 3.3.2: "LDR R0,[R1,R2]; STR R1,[R3,R2] - normally three cycles total"
        let mut ldr = load(0, 0, 1);
        ldr.address_regs |= 1 << 2;
        ldr.register_offset = true;
        let insns = [ldr, store(2, 1, 3, Some(2))];
        assert_eq!(price_block(&m4(), &insns, 0).cycles, 3);
    }

    #[test]
    fn store_then_load_has_no_extra_cycle() {
        // the write buffer takes the store; the load is not pipelined (only
        // a load pipelines what follows it): 1 + 2
        let insns = [store(0, 0, 1, None), load(2, 2, 1)];
        assert_eq!(price_block(&m4(), &insns, 0).cycles, 1 + 2);
    }

    #[test]
    fn older_target_files_price_no_new_rules() {
        // the new fields default to 0 / none: M0 and RISC-V are unchanged
        let m0 = crate::model::target::builtin("cortex-m0").unwrap();
        let reg = [store(0, 0, 1, Some(2))];
        assert_eq!(price_block(&m0, &reg, 0).cycles, 2);
        assert_eq!(m0.cost(InsnClass::Store).register_offset, 0);
        assert_eq!(m0.cost(InsnClass::Load).literal_contention, 0);
    }

    fn literal_load(addr: u64, dest: u8, literal: u64) -> Insn {
        Insn {
            literal: Some(literal),
            ..load(addr, dest, 15)
        }
    }

    #[test]
    fn literal_load_contends_with_fetch_in_the_same_region() {
        // 3.3.2: "LDR Rx,[PC,#imm] might add a cycle because of contention
        // with the fetch unit": + 1 when the literal is in the code's region
        let t = m4();
        let flash_literal = [literal_load(0x100, 0, 0x200)];
        assert_eq!(price_block(&t, &flash_literal, 0).cycles, 2 + 1);
        let ram_literal = [literal_load(0x100, 0, 0x2000_0000)];
        assert_eq!(price_block(&t, &ram_literal, 0).cycles, 2);
        // pipelined literal loads still contend: 3 + (1 + 1)
        let two = [literal_load(0x100, 0, 0x200), literal_load(0x102, 1, 0x204)];
        assert_eq!(price_block(&t, &two, 0).cycles, 3 + 2);
    }

    #[test]
    fn it_folds_onto_a_preceding_16_bit_instruction() {
        let t = m4();
        let it = Insn::simple(0x102, 2, InsnClass::It);
        let narrow = [Insn::simple(0x100, 2, InsnClass::Alu), it.clone()];
        assert_eq!(price_block(&t, &narrow, 0).cycles, 1);
        let wide = [
            Insn::simple(0x0fe, 4, InsnClass::Alu),
            Insn {
                addr: 0x102,
                ..it.clone()
            },
        ];
        assert_eq!(price_block(&t, &wide, 0).cycles, 1 + 1);
        // first in its block: nothing to fold onto
        assert_eq!(price_block(&t, &[it], 0).cycles, 1);
    }

    #[test]
    fn writeback_load_pipelines_unless_the_next_address_uses_its_base() {
        // LDR r4,[r7],#4 writes r4 and r7
        let wb = |addr, dest: u8, base: u8| Insn {
            writes: (1 << dest) | (1 << base),
            ..load(addr, dest, base)
        };
        let other_base = [wb(0, 4, 7), wb(4, 5, 1)];
        assert_eq!(price_block(&m4(), &other_base, 0).cycles, 2 + 1);
        let same_base = [wb(0, 4, 7), wb(4, 5, 7)];
        assert_eq!(price_block(&m4(), &same_base, 0).cycles, 2 + 2);
    }

    fn div_site() -> DynamicSite {
        DynamicSite {
            addr: 0,
            rule: DynamicCost::DivideEarlyTermination,
            base: 2,
            max: 12,
            operands: DynamicOperands {
                a: 0,
                b: 1,
                signed: false,
            },
        }
    }

    #[test]
    fn division_spans_the_documented_range() {
        let site = div_site();
        assert_eq!(dynamic_extra(&site, 0, 7), 0); // 2 cycles
        assert_eq!(dynamic_extra(&site, 3, 100), 1); // 3 cycles
        assert_eq!(dynamic_extra(&site, 100, 3), 5 + (7 - 2) / 4 - 2);
        assert_eq!(dynamic_extra(&site, u32::MAX, 1), 12 - 2);
        for a in [1u32, 17, 1000, 1 << 20, u32::MAX] {
            for b in [1u32, 3, 255, 1 << 16] {
                assert!(2 + dynamic_extra(&site, a, b) <= 12);
            }
        }
    }

    #[test]
    fn signed_division_counts_magnitudes() {
        let mut site = div_site();
        site.operands.signed = true;
        // -8 / 2: bits(8) = 4, bits(2) = 2 -> 5
        assert_eq!(2 + dynamic_extra(&site, (-8i32) as u32, 2), 5);
    }

    #[test]
    fn long_multiply_terminates_early_on_small_operands() {
        let site = DynamicSite {
            rule: DynamicCost::MultiplyEarlyTermination,
            base: 3,
            max: 5,
            ..div_site()
        };
        assert_eq!(dynamic_extra(&site, 1000, 1000), 0);
        assert_eq!(dynamic_extra(&site, 1 << 20, 1000), 1);
        assert_eq!(dynamic_extra(&site, 1 << 20, 1 << 20), 2);
    }
}
