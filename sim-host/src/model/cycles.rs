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
//! - a store followed by a load (Cortex-M3/M4 measured on silicon, jnk0le's
//!   "pipeline cycle test": "stores cannot be pipelined with following load
//!   instructions (adds extra cycle to store)"): the store row's
//!   `before_load` more, charged with the load; not after a register-offset
//!   store, which holds the pipeline already;
//! - literal loads (Cortex-M3/M4 3.3.2, `LDR Rx,[PC,#imm]` "might add a
//!   cycle because of contention with the fetch unit"): `literal_contention`
//!   more when the literal is in the region the block's code is in;
//! - IT folding (Cortex-M3/M4 ACTLR.DISFOLD): an IT directly after a 16-bit
//!   instruction of the same block costs `folded` instead of `cycles`;
//! - load use (Hazard3): an instruction that reads the register loaded by the
//!   directly preceding load costs the load's `load_use` more; a store only
//!   through its address ("a load data -> store data dependency is not an
//!   example of this, because data is produced and consumed in stage 3",
//!   RP2350 datasheet 3.8.7.9 note 2);
//! - instruction fetch wait states: one fetch per 32-bit word of code, each
//!   costing the region's wait states.
//!
//! On top of those, a schedule of the block's instructions (the rows'
//! optional `latency`, `late_operand`, `busy`, `slot` and `units`, and
//! `[cycles.issue]`): an instruction issues when the registers it reads
//! are ready (a result is ready `latency` cycles after its instruction
//! issued), when the unit a `busy` instruction holds is free again, and,
//! on a dual-issue core, in the same cycle as the instruction before it
//! when the two may pair. A table without these fields prices a block as
//! the sum of its instructions' cycles, as before.
//!
//! Two Cortex-M7 rules measured on silicon (jnk0le/random, pipeline cycle
//! test/doc/cortex_m7.md, STM32H743) ride on the schedule:
//! `[cycles.issue] fp_mac_shadow` keeps FP loads, stores and moves out of
//! the younger slot for that many cycles after a single-precision
//! multiply-accumulate, and a block ending in a conditional branch whose
//! flags were set `[cycles.predictor] flag_forwarding.distance` cycles
//! before it is marked [`BlockCost::flags_forwarded`], for the
//! predictor's cheaper misprediction.
//!
//! Effects across block boundaries (a load at the end of one block and a
//! dependent instruction at the start of the next) are not modelled: blocks
//! end at branches, which drain these pipelines anyway on the modelled cores;
//! a unit still `busy` at the block's end delays its end (its work is not
//! lost), a result not yet ready does not.
//!
//! An instruction whose class has no row is unpriced: the block lists it
//! in [`BlockCost::unpriced`] (the engine stops the run, or with
//! `--allow-unpriced` counts it) and charges it the `alu` row's cycles.

use crate::model::predictor::BranchKind;
use crate::model::target::{ClassCost, DynamicCost, InsnClass, Slot, Target, Unit};

/// A set of architectural registers: bit n is r<n> (ARM) or x<n> (RISC-V);
/// on Arm bits 16..48 are s0..s31 (d<n> is s<2n> and s<2n+1>), bit 48 the
/// APSR flags and bit 49 the FPSCR flags.
pub type RegMask = u64;

/// The Arm condition flags (N, Z, C, V) as a register of the mask.
pub const ARM_FLAGS: RegMask = 1 << 48;

/// The FPSCR condition flags as a register of the mask.
pub const ARM_FPSCR: RegMask = 1 << 49;

/// The mask bit of Arm floating-point register s<n>.
pub const fn arm_s(n: u32) -> RegMask {
    1 << (16 + n)
}

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
    /// The operands read late: a multiply-accumulate's accumulator
    /// (addend), a store's data (a row's `late_operand`).
    pub late_reads: RegMask,
    /// An operand is shifted before the ALU (a shifted register or a
    /// rotated immediate).
    pub shifted: bool,
    /// A bit-field, extend, reverse, CLZ or DSP instruction.
    pub bitfield: bool,
    /// A byte or halfword load.
    pub subword: bool,
    /// What a branch predictor sees of it.
    pub branch: BranchKind,
    /// An unconditional direct branch to the instruction after it (`b
    /// 1f; 1:`, pico-sdk's and rp2040-hal's 2-cycle delay): taken,
    /// though its successor is its fall-through.
    pub jumps_to_next: bool,
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
            late_reads: 0,
            shifted: false,
            bitfield: false,
            subword: false,
            branch: BranchKind::None,
            jumps_to_next: false,
        }
    }

    fn is_memory_single(&self) -> bool {
        matches!(
            self.class,
            InsnClass::Load | InsnClass::Store | InsnClass::FpLoad | InsnClass::FpStore
        )
    }

    fn is_load_single(&self) -> bool {
        matches!(self.class, InsnClass::Load | InsnClass::FpLoad)
    }
}

/// An instruction whose class the target's cycle table does not price.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unpriced {
    pub addr: u64,
    pub size: u8,
    pub class: InsnClass,
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
    /// Instructions the cycle table has no row for (charged as `alu`).
    pub unpriced: Vec<Unpriced>,
    /// The last instruction, for the target's branch predictor
    /// ([`BranchKind::None`] when the target has none).
    pub branch: BranchKind,
    /// The last instruction is a conditional branch whose flags were set
    /// early enough for the predictor's flag forwarding (its cheaper
    /// misprediction).
    pub flags_forwarded: bool,
}

/// Prices a block. `wait_states` are the fetch wait states of the region
/// the code is in.
pub fn price_block(target: &Target, insns: &[Insn], wait_states: u32) -> BlockCost {
    let mut cost = BlockCost::default();
    let Some(first) = insns.first() else {
        return cost;
    };
    let code_region = target.region_of(first.addr, 1);
    let mut schedule = Schedule::new(target);
    let mut prev: Option<&Insn> = None;
    for insn in insns {
        cost.instructions += 1;
        let Some(row) = target.row(insn.class) else {
            cost.unpriced.push(Unpriced {
                addr: insn.addr,
                size: insn.size,
                class: insn.class,
            });
            schedule.unpriced(target.required_row(InsnClass::Alu).cycles);
            prev = None;
            continue;
        };
        let cycles = instruction_cycles(target, code_region, insn, row, prev);
        schedule.issue(insn, row, cycles, prev);
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
        prev = Some(insn);
    }
    let last = insns.last().expect("non-empty");
    cost.cycles = schedule.end();
    cost.fallthrough = last.addr + u64::from(last.size);
    cost.taken_extra = target.row(last.class).map_or(0, |r| r.taken) + schedule.taken_extra;
    if last.jumps_to_next && target.predictor.is_none() {
        // a B is always taken (DDI 0484C Table 3-1, B: 2; DDI 0337I
        // Table 18-1, B: 1 + P), also to its fall-through, where the
        // engine sees no taken branch: its refill is the block's own
        cost.cycles += cost.taken_extra;
    }
    if let Some(predictor) = &target.predictor {
        cost.branch = last.branch;
        cost.flags_forwarded = predictor
            .forwarded
            .is_some_and(|f| schedule.flags_lead(last) >= f.distance);
    }
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

/// The registers whose load in the instruction before costs a load-use
/// bubble: a store's data is consumed in the stage the load produces it,
/// only its address is needed earlier (see the module's doc).
fn load_use_reads(insn: &Insn) -> RegMask {
    if insn.class == InsnClass::Store {
        insn.address_regs
    } else {
        insn.reads
    }
}

/// The cycles an instruction occupies the pipeline by its row and the
/// Cortex-M3/M4 and Hazard3 rules on its neighbour (see the module's doc).
fn instruction_cycles(
    target: &Target,
    code_region: Option<&crate::model::target::Region>,
    insn: &Insn,
    row: &ClassCost,
    prev: Option<&Insn>,
) -> u32 {
    let transfers = u32::from(insn.transfers).div_ceil(row.registers_per_cycle);
    let mut cycles = row.cycles + row.per_register * transfers;
    if row.flags_extra > 0 && insn.writes & ARM_FLAGS != 0 {
        cycles += row.flags_extra;
    }
    // pipelined after the directly preceding load (3.3.2 "LDR [any] are
    // pipelined when possible")
    let mut pipelined_after_load = false;
    if let Some(p) = prev {
        let p_row = target.row(p.class);
        if insn.is_memory_single() {
            pipelined_after_load = p.is_load_single()
                && p.pipelinable
                && insn.pipelinable
                && p.writes & insn.address_regs == 0;
            if let Some(pipelined) = row.pipelined {
                if pipelined_after_load {
                    cycles = cycles.min(pipelined + row.per_register * transfers.saturating_sub(1));
                }
            }
            let data_processing = matches!(
                p.class,
                InsnClass::Alu | InsnClass::Dsp | InsnClass::Saturate
            );
            if data_processing && p.writes & insn.address_regs != 0 {
                cycles += row.address_dependency;
            }
        }
        // a store holds its cycle when a load follows it (silicon: jnk0le,
        // Cortex-M3/M4); a register-offset store holds it already
        let load_follows = matches!(insn.class, InsnClass::Load | InsnClass::LoadMultiple);
        if load_follows && p.class == InsnClass::Store && p.is_memory_single() && !p.register_offset
        {
            cycles += p_row.map_or(0, |r| r.before_load);
        }
        if p.class == InsnClass::Load && p.writes & load_use_reads(insn) != 0 {
            cycles += p_row.map_or(0, |r| r.load_use);
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
    cycles
}

/// The issue schedule of one block: when each register's value is ready,
/// when each busy unit is free, and the open pair of a dual-issue core.
struct Schedule<'a> {
    target: &'a Target,
    /// The cycle the next instruction can issue in (from the block's start).
    next: u32,
    /// The cycle each register's value can be read in.
    ready: [u32; 64],
    /// The cycle each busy family (floating point, multiplier) is free.
    free: [u32; 2],
    /// The instruction that issued alone in cycle `.0` and may still take
    /// a partner: its units and whether it wrote the flags.
    open: Option<(u32, [u32; Unit::COUNT], bool)>,
    /// Extra cycles of a taken branch at the block's end (an unpaired
    /// flag pair, Cortex-M33).
    taken_extra: u32,
    /// The cycle the last single-precision multiply-accumulate issued in
    /// (`fp_mac_shadow`).
    fp_mac_at: Option<u32>,
    /// The cycle the last instruction that wrote the flags issued in, and
    /// the cycle the last instruction issued in.
    flags_at: Option<u32>,
    last_at: u32,
}

impl<'a> Schedule<'a> {
    fn new(target: &'a Target) -> Schedule<'a> {
        Schedule {
            target,
            next: 0,
            ready: [0; 64],
            free: [0; 2],
            open: None,
            taken_extra: 0,
            fp_mac_at: None,
            flags_at: None,
            last_at: 0,
        }
    }

    /// An instruction without a row: `cycles`, nothing else.
    fn unpriced(&mut self, cycles: u32) {
        // it may have set the flags: taken as set now (no forwarding)
        self.flags_at = Some(self.next);
        self.last_at = self.next;
        self.next += cycles;
        self.open = None;
    }

    /// Schedules `insn` (of `row`, occupying `cycles`) after `prev`.
    fn issue(&mut self, insn: &Insn, row: &ClassCost, cycles: u32, prev: Option<&Insn>) {
        // when its operands are ready (late operands are read later); a
        // conditional branch or IT that may pair with the instruction that
        // set its flags does not wait for them (Cortex-M33: the taken
        // branch pays `flag_pair_taken` instead)
        let mut need = 0;
        let mut reads = insn.reads & !self.flags_exempt(insn);
        while reads != 0 {
            let r = reads.trailing_zeros();
            reads &= reads - 1;
            let early = if insn.late_reads & 1 << r != 0 {
                row.late_operand
            } else {
                0
            };
            need = need.max(self.ready[r as usize].saturating_sub(early));
        }
        let family = insn.class.busy_family();
        if let Some(f) = family {
            need = need.max(self.free[f]);
        }
        let units = self.units(insn, row);
        let issued = match self.open {
            Some((at, used, flags))
                if need <= at && self.pairs(insn, row, prev, &used, &units, at) =>
            {
                self.open = None;
                if insn.class == InsnClass::BranchCond && flags {
                    self.taken_extra = self.target.issue.flag_pair_taken;
                }
                self.next = self.next.max(at + cycles);
                at
            }
            _ => {
                let at = self.next.max(need);
                self.next = at + cycles;
                let can_lead = self.target.issue.width == 2
                    && matches!(row.slot, Slot::Any | Slot::First)
                    && (!self.target.issue.narrow_only || insn.size == 2);
                self.open = can_lead.then_some((at, units, insn.writes & ARM_FLAGS != 0));
                at
            }
        };
        let latency = if insn.subword {
            row.subword_latency.or(row.latency)
        } else if insn.shifted {
            row.shifted_latency.or(row.latency)
        } else {
            row.latency
        }
        .unwrap_or(cycles);
        let mut writes = insn.writes;
        while writes != 0 {
            let r = writes.trailing_zeros();
            writes &= writes - 1;
            self.ready[r as usize] = issued + latency;
        }
        if let (Some(f), Some(busy)) = (family, row.busy) {
            self.free[f] = self.free[f].max(issued + busy);
        }
        if matches!(insn.class, InsnClass::FpMac | InsnClass::FpFma) {
            self.fp_mac_at = Some(issued);
        }
        if insn.writes & ARM_FLAGS != 0 {
            self.flags_at = Some(issued);
        }
        self.last_at = issued;
    }

    /// How many cycles before `last` (the block's last instruction, a
    /// conditional branch on the flags) the flags were set: 0 for any
    /// other instruction. Flags set before the block were set before the
    /// branch that ended the block before it, at cycle -1 at the latest:
    /// the lead is then at least the branch's cycle + 1, which is what
    /// is counted.
    fn flags_lead(&self, last: &Insn) -> u32 {
        if last.class != InsnClass::BranchCond || last.reads & ARM_FLAGS == 0 {
            return 0;
        }
        match self.flags_at {
            Some(at) => self.last_at - at,
            None => self.last_at + 1,
        }
    }

    /// The units `insn` uses in its issue cycle.
    fn units(&self, insn: &Insn, row: &ClassCost) -> [u32; Unit::COUNT] {
        let mut used = [0; Unit::COUNT];
        for u in &row.units {
            used[u.index()] += 1;
        }
        if insn.shifted {
            used[Unit::Shift.index()] += 1;
        }
        if insn.bitfield && self.target.issue.bitfield_first {
            used[Unit::Simd.index()] += 1;
        }
        used
    }

    /// Whether `insn` may issue in the same cycle as the open instruction
    /// (`prev`), which issued in cycle `at` and used `open_units`.
    fn pairs(
        &self,
        insn: &Insn,
        row: &ClassCost,
        prev: Option<&Insn>,
        open_units: &[u32; Unit::COUNT],
        units: &[u32; Unit::COUNT],
        at: u32,
    ) -> bool {
        let issue = &self.target.issue;
        let Some(prev) = prev else {
            return false;
        };
        if !matches!(row.slot, Slot::Any | Slot::Second)
            || (issue.narrow_only && insn.size != 2)
            || (issue.bitfield_first && insn.bitfield)
            || self.in_fp_mac_shadow(insn, at)
        {
            return false;
        }
        // no result of the older one (a write-after-write pair issues:
        // MOVW, MOVT)
        let late = if row.late_operand > 0 {
            insn.late_reads
        } else {
            0
        };
        if prev.writes & insn.reads & !self.flags_exempt(insn) & !late != 0 {
            return false;
        }
        (0..Unit::COUNT).all(|u| open_units[u] + units[u] <= issue.units[u])
    }

    /// Whether `insn`, an FP load, store or move, would be the younger of
    /// a pair in cycle `at` within `fp_mac_shadow` cycles after a
    /// single-precision multiply-accumulate (Cortex-M7, jnk0le's
    /// measurement: "after executing multiply accumulate instructions
    /// vldr.f, vstr.f, vmov instructions cannot be executed from younger
    /// opcode slot for 3 next cycles").
    fn in_fp_mac_shadow(&self, insn: &Insn, at: u32) -> bool {
        let shadow = self.target.issue.fp_mac_shadow;
        let moves_fp_data = matches!(
            insn.class,
            InsnClass::FpLoad | InsnClass::FpStore | InsnClass::FpMove | InsnClass::FpTransfer
        );
        match self.fp_mac_at {
            Some(mac) if shadow > 0 && moves_fp_data => at > mac && at - mac <= shadow,
            _ => false,
        }
    }

    /// The flags, for a conditional branch or IT on a core whose branch
    /// pairs with the instruction that set them (`flag_pair_taken`).
    fn flags_exempt(&self, insn: &Insn) -> RegMask {
        let pairs_on_flags = self.target.issue.flag_pair_taken > 0
            && matches!(insn.class, InsnClass::BranchCond | InsnClass::It);
        if pairs_on_flags {
            ARM_FLAGS
        } else {
            0
        }
    }

    /// The block's end: the last issue, or a busy unit's end if later.
    fn end(&self) -> u32 {
        self.free.iter().copied().fold(self.next, u32::max)
    }
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
///
/// `DivideBitSerial` (SiFive E31: "a 1-bit per cycle hardware divide",
/// "between a 2-cycle and 33-cycle result latency, depending on the
/// operand values"; the formula is this model's): 2 when the divisor is 0
/// or larger than the dividend, else 2 plus one cycle per quotient bit,
/// bits(a) - bits(b) + 1, at most `max` (33).
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
        DynamicCost::DivideBitSerial => {
            let (bits_a, bits_b) = (significant_bits(a, signed), significant_bits(b, signed));
            if b == 0 || bits_a < bits_b {
                2
            } else {
                2 + (bits_a - bits_b + 1)
            }
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
        assert_eq!(price_block(&rv, &[lw.clone(), independent], 0).cycles, 2);
        // sw x5, 0(x8) after the load of x5: no bubble (the data is used
        // in stage 3); sw x8, 0(x5): the address needs it, a bubble
        let store = |data: u8, base: u8| Insn {
            reads: (1 << data) | (1 << base),
            address_regs: 1 << base,
            ..Insn::simple(4, 4, InsnClass::Store)
        };
        assert_eq!(price_block(&rv, &[lw.clone(), store(5, 8)], 0).cycles, 2);
        assert_eq!(price_block(&rv, &[lw, store(8, 5)], 0).cycles, 3);
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

    /// An unconditional B to its own fall-through still pays its taken
    /// cycle (the engine sees no taken branch there): pico-sdk's `b 1f;
    /// 1:` delays 2 cycles on the M0+ (DDI 0484C Table 3-1, B: 2).
    #[test]
    fn a_b_to_the_next_instruction_is_taken() {
        let target = crate::model::target::builtin("cortex-m0plus").unwrap();
        let b = Insn {
            jumps_to_next: true,
            ..Insn::simple(0x100, 2, InsnClass::Branch)
        };
        let cost = price_block(&target, &[b], 0);
        assert_eq!((cost.cycles, cost.taken_extra), (2, 1));
        let elsewhere = Insn::simple(0x100, 2, InsnClass::Branch);
        let cost = price_block(&target, &[elsewhere], 0);
        assert_eq!((cost.cycles, cost.taken_extra), (1, 1));
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
    fn a_store_followed_by_a_load_holds_its_cycle() {
        // silicon (jnk0le's pipeline cycle test on the STM32F103/F407):
        // "stores cannot be pipelined with following load instructions
        // (adds extra cycle to store)": STR 1 + 1, LDR 2 (not pipelined:
        // only a load pipelines what follows it)
        let insns = [store(0, 0, 1, None), load(2, 2, 1)];
        assert_eq!(price_block(&m4(), &insns, 0).cycles, 1 + 1 + 2);
        // a store followed by a store: the write buffer, no extra cycle
        let stores = [store(0, 0, 1, None), store(2, 2, 1, None)];
        assert_eq!(price_block(&m4(), &stores, 0).cycles, 1 + 1);
        // a register-offset store holds the pipeline already: 2, then 2
        let reg = [store(0, 0, 1, Some(3)), load(4, 2, 1)];
        assert_eq!(price_block(&m4(), &reg, 0).cycles, 2 + 2);
    }

    #[test]
    fn older_target_files_price_no_new_rules() {
        // the new fields default to 0 / none: M0 and RISC-V are unchanged
        let m0 = crate::model::target::builtin("cortex-m0").unwrap();
        let reg = [store(0, 0, 1, Some(2))];
        assert_eq!(price_block(&m0, &reg, 0).cycles, 2);
        assert_eq!(m0.required_row(InsnClass::Store).register_offset, 0);
        assert_eq!(m0.required_row(InsnClass::Load).literal_contention, 0);
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

    fn target(name: &str) -> Target {
        crate::model::target::builtin(name).unwrap()
    }

    /// An instruction of `class` writing `writes` and reading `reads`.
    fn op(addr: u64, size: u8, class: InsnClass, writes: RegMask, reads: RegMask) -> Insn {
        Insn {
            writes,
            reads,
            ..Insn::simple(addr, size, class)
        }
    }

    #[test]
    fn a_result_consumed_next_waits_for_its_latency() {
        // Cortex-M4F 7.2.3: VADD 1, one cycle longer if its result is
        // consumed by the following instruction
        let t = target("cortex-m4f");
        let (s0, s1, s2) = (arm_s(0), arm_s(1), arm_s(2));
        let dependent = [
            op(0, 4, InsnClass::FpAdd, s0, s1),
            op(4, 4, InsnClass::FpAdd, s2, s0),
        ];
        assert_eq!(price_block(&t, &dependent, 0).cycles, 1 + 2);
        let independent = [
            op(0, 4, InsnClass::FpAdd, s0, s1),
            op(4, 4, InsnClass::FpAdd, s2, s1),
        ];
        assert_eq!(price_block(&t, &independent, 0).cycles, 2);
    }

    #[test]
    fn a_multiply_accumulate_chain_reads_its_accumulator_late() {
        // VMLA 3, latency 4, the addend read a cycle late: 3 each
        let t = target("cortex-m4f");
        let mla = |addr| Insn {
            late_reads: arm_s(0),
            ..op(
                addr,
                4,
                InsnClass::FpMac,
                arm_s(0),
                arm_s(0) | arm_s(1) | arm_s(2),
            )
        };
        assert_eq!(price_block(&t, &[mla(0), mla(4), mla(8)], 0).cycles, 9);
        // the product's operand depends on the last result: no advance
        let use_as_factor = op(12, 4, InsnClass::FpMul, arm_s(3), arm_s(0));
        assert_eq!(
            price_block(&t, &[mla(0), use_as_factor], 0).cycles,
            3 + 1 + 1
        );
    }

    #[test]
    fn a_busy_unit_lets_integer_instructions_run_and_holds_the_next_fp_one() {
        // VDIV issues in 1 and keeps the FPU 14: two ALU instructions run
        // meanwhile, a VADD waits until cycle 14; a block ending with the
        // FPU still busy ends when it is free
        let t = target("cortex-m4f");
        let div = op(0, 4, InsnClass::FpDiv, arm_s(0), arm_s(1) | arm_s(2));
        let alu = |addr| op(addr, 2, InsnClass::Alu, 1 << 3, 1 << 4);
        let add = op(8, 4, InsnClass::FpAdd, arm_s(5), arm_s(6));
        assert_eq!(
            price_block(&t, &[div.clone(), alu(4), alu(6), add], 0).cycles,
            14 + 1
        );
        assert_eq!(price_block(&t, &[div, alu(4)], 0).cycles, 14);
    }

    #[test]
    fn the_cortex_m7_pairs_independent_instructions() {
        let t = target("cortex-m7");
        let alu = |addr, w: u8, r: u8| op(addr, 4, InsnClass::Alu, 1 << w, 1 << r);
        // two independent ALU instructions: one cycle; dependent: two
        assert_eq!(price_block(&t, &[alu(0, 1, 2), alu(4, 3, 4)], 0).cycles, 1);
        assert_eq!(price_block(&t, &[alu(0, 1, 2), alu(4, 3, 1)], 0).cycles, 2);
        // four independent: two pairs
        let four = [alu(0, 1, 2), alu(4, 3, 4), alu(8, 5, 6), alu(12, 7, 8)];
        assert_eq!(price_block(&t, &four, 0).cycles, 2);
        // two stores do not pair (one store unit); a load and a store do
        let store = |addr| Insn {
            address_regs: 1 << 9,
            late_reads: 1,
            ..op(addr, 4, InsnClass::Store, 0, (1 << 9) | 1)
        };
        assert_eq!(price_block(&t, &[store(0), store(4)], 0).cycles, 2);
        let load = Insn {
            address_regs: 1 << 10,
            ..op(0, 4, InsnClass::Load, 1 << 2, 1 << 10)
        };
        assert_eq!(price_block(&t, &[load, store(4)], 0).cycles, 1);
        // a bit-field instruction issues only first: it does not pair after
        let bitfield = Insn {
            bitfield: true,
            ..alu(4, 3, 4)
        };
        assert_eq!(
            price_block(&t, &[alu(0, 1, 2), bitfield.clone()], 0).cycles,
            2
        );
        assert_eq!(price_block(&t, &[bitfield, alu(8, 5, 6)], 0).cycles, 1);
        // a store of the value computed in the same cycle pairs (its data
        // is read late)
        let compute = alu(0, 0, 2);
        assert_eq!(price_block(&t, &[compute, store(4)], 0).cycles, 1);
        // load and store multiples: two registers a cycle, alone
        let ldm = Insn {
            transfers: 4,
            ..op(0, 2, InsnClass::LoadMultiple, 0xf, 1 << 9)
        };
        assert_eq!(price_block(&t, &[ldm, alu(2, 5, 6)], 0).cycles, 2 + 1);
    }

    /// Cortex-M7 FP instructions for the silicon rules below: VFMA.F32
    /// s<acc>, s1, s2; VMOV.F32 s<d>, s3; VLDR s<d>, [r7]; VMOV r0, s9;
    /// VSTR s9, [r7].
    fn m7_fma(addr: u64, acc: u32) -> Insn {
        Insn {
            late_reads: arm_s(acc),
            ..op(
                addr,
                4,
                InsnClass::FpFma,
                arm_s(acc),
                arm_s(acc) | arm_s(1) | arm_s(2),
            )
        }
    }

    fn m7_vmov(addr: u64, d: u32) -> Insn {
        op(addr, 4, InsnClass::FpMove, arm_s(d), arm_s(3))
    }

    fn m7_vldr(addr: u64, d: u32) -> Insn {
        Insn {
            address_regs: 1 << 7,
            ..op(addr, 4, InsnClass::FpLoad, arm_s(d), 1 << 7)
        }
    }

    #[test]
    fn the_cortex_m7_keeps_fp_moves_out_of_the_younger_slot_after_a_mac() {
        // jnk0le/random, pipeline cycle test/doc/cortex_m7.md (STM32H743,
        // DWT.CYCCNT): "after executing multiply accumulate instructions
        // vldr.f, vstr.f, vmov instructions cannot be executed from
        // younger opcode slot for 3 next cycles"
        let t = target("cortex-m7");
        // VMOV | VLDR pair (two FP ports) with no MAC before them: 1
        assert_eq!(
            price_block(&t, &[m7_vmov(0, 12), m7_vldr(4, 16)], 0).cycles,
            1
        );
        // VFMA 0 (no VMOV beside it: one VFP pipe); VMOV 1; VLDR, the
        // younger, 1 cycle after the MAC: not paired, 2 = 3 cycles
        let triple = [m7_fma(0, 8), m7_vmov(4, 12), m7_vldr(8, 16)];
        assert_eq!(price_block(&t, &triple, 0).cycles, 3);
        // LLVM's model (no shadow) paired them: 2
        let mut llvm = t.clone();
        llvm.issue.fp_mac_shadow = 0;
        assert_eq!(price_block(&llvm, &triple, 0).cycles, 2);
        // the same with VMOV r0, s9 and VSTR s9, [r7]: 3
        let vmov_r = op(4, 4, InsnClass::FpTransfer, 1, arm_s(9));
        let vstr = Insn {
            address_regs: 1 << 7,
            late_reads: arm_s(9),
            ..op(8, 4, InsnClass::FpStore, 0, arm_s(9) | 1 << 7)
        };
        assert_eq!(price_block(&t, &[m7_fma(0, 8), vmov_r, vstr], 0).cycles, 3);
        // the window is 3 cycles: VFMA | ADD 0, ADD | ADD 1, ADD | ADD 2,
        // ADD | ADD 3, VMOV | VLDR 4 (4 cycles after the MAC) = 5
        let alu = |addr, w: u8| op(addr, 4, InsnClass::Alu, 1 << w, 1 << 14);
        let mut late = vec![m7_fma(0, 8)];
        late.extend((0..7).map(|i| alu(4 + 4 * i, 1 + i as u8)));
        late.extend([m7_vmov(32, 12), m7_vldr(36, 16)]);
        assert_eq!(price_block(&t, &late, 0).cycles, 5);
    }

    #[test]
    fn the_cortex_m7_divider_pairs_with_an_integer_instruction_only() {
        // jnk0le cortex_m7.md: "vdiv.f/vsqrt.f execute in 16/14 cycles,
        // dual issues with one integer instruction and locks pipeline for
        // the rest of the duration"
        let t = target("cortex-m7");
        let div = op(0, 4, InsnClass::FpDiv, arm_s(0), arm_s(1) | arm_s(2));
        let add = op(4, 4, InsnClass::Alu, 1 << 3, 1 << 4);
        // VDIV | ADD 0, locked until 16
        assert_eq!(price_block(&t, &[div.clone(), add.clone()], 0).cycles, 16);
        // VDIV 0; VLDR (an FP port) does not pair: 16 = 17
        assert_eq!(price_block(&t, &[div.clone(), m7_vldr(4, 5)], 0).cycles, 17);
        // VDIV | ADD; ADD waits for the lock: 16 = 17
        let add2 = op(8, 4, InsnClass::Alu, 1 << 5, 1 << 4);
        assert_eq!(price_block(&t, &[div, add, add2], 0).cycles, 17);
    }

    #[test]
    fn the_cortex_m7_forwards_flags_set_three_cycles_before_the_branch() {
        // jnk0le cortex_m7.md: "flag forwarding can reduce branch
        // misprediction penalty from 8 to 6 cycles (in case of subs +
        // bne), instruction generating flags have to be placed at least 3
        // cycles before branch"
        let t = target("cortex-m7");
        let subs = op(0, 4, InsnClass::Alu, (1 << 3) | ARM_FLAGS, 1 << 3);
        let alu = |addr, w: u8| op(addr, 4, InsnClass::Alu, 1 << w, 1 << 14);
        let bne = |addr| Insn {
            branch: BranchKind::Conditional,
            ..op(addr, 2, InsnClass::BranchCond, 0, ARM_FLAGS)
        };
        // SUBS | ADD 0; ADD | ADD 1; ADD | ADD 2; BNE 3: forwarded
        let mut early = vec![subs.clone()];
        early.extend((0..5).map(|i| alu(4 + 4 * i, 4 + i as u8)));
        early.push(bne(24));
        let cost = price_block(&t, &early, 0);
        assert_eq!((cost.cycles, cost.flags_forwarded), (4, true));
        // SUBS | ADD 0; ADD | ADD 1; BNE 2: 2 cycles, not forwarded
        let mut late = vec![subs];
        late.extend((0..3).map(|i| alu(4 + 4 * i, 4 + i as u8)));
        late.push(bne(16));
        let cost = price_block(&t, &late, 0);
        assert_eq!((cost.cycles, cost.flags_forwarded), (3, false));
        // no flags set in the block: set before it, at cycle -1 at the
        // latest; BNE at 2 (ADD | ADD, ADD | ADD): 3 cycles, forwarded;
        // a BNE first in its block: 1 cycle, not
        let none = [alu(0, 4), alu(4, 5), alu(8, 6), alu(12, 7), bne(16)];
        assert!(price_block(&t, &none, 0).flags_forwarded);
        assert!(!price_block(&t, &[bne(0)], 0).flags_forwarded);
        // a core without flag forwarding never marks it
        let mut eight = t.clone();
        eight.predictor.as_mut().unwrap().forwarded = None;
        assert!(!price_block(&eight, &early, 0).flags_forwarded);
    }

    #[test]
    fn the_cortex_m33_pairs_a_branch_with_the_narrow_instruction_before_it() {
        let t = target("cortex-m33");
        let subs = op(0, 2, InsnClass::Alu, (1 << 7) | ARM_FLAGS, 1 << 7);
        let add = op(0, 2, InsnClass::Alu, 1 << 0, 1 << 1);
        let bne = op(2, 2, InsnClass::BranchCond, 0, ARM_FLAGS);
        // not taken: 0 (paired); taken after the flag-setting SUBS: 2
        let cost = price_block(&t, &[subs.clone(), bne.clone()], 0);
        assert_eq!((cost.cycles, cost.taken_extra), (1, 1 + 1));
        // taken after an instruction that does not set the flags: 1
        let cost = price_block(&t, &[add, bne.clone()], 0);
        assert_eq!((cost.cycles, cost.taken_extra), (1, 1));
        // after a 32-bit instruction: no pair, 1 + 1 taken
        let wide = op(0, 4, InsnClass::Alu, (1 << 7) | ARM_FLAGS, 1 << 7);
        let cost = price_block(&t, &[wide, Insn { addr: 4, ..bne }], 0);
        assert_eq!((cost.cycles, cost.taken_extra), (2, 1));
        // two narrow ALU instructions do not pair
        let a = op(0, 2, InsnClass::Alu, 1, 2);
        let b = op(2, 2, InsnClass::Alu, 4, 8);
        assert_eq!(price_block(&t, &[a, b], 0).cycles, 2);
    }

    #[test]
    fn an_instruction_without_a_row_is_listed_and_charged_as_alu() {
        let t = m4();
        let div = op(2, 4, InsnClass::FpDiv, arm_s(0), arm_s(1));
        let cost = price_block(&t, &[Insn::simple(0, 2, InsnClass::Alu), div], 0);
        assert_eq!(cost.cycles, 2);
        assert_eq!(
            cost.unpriced,
            [Unpriced {
                addr: 2,
                size: 4,
                class: InsnClass::FpDiv
            }]
        );
    }

    #[test]
    fn the_multiplier_option_changes_the_row() {
        let fast = target("cortex-m0plus");
        let small = target("cortex-m0plus:multiplier=small");
        let mul = [Insn::simple(0, 2, InsnClass::Mul)];
        assert_eq!(price_block(&fast, &mul, 0).cycles, 1);
        assert_eq!(price_block(&small, &mul, 0).cycles, 32);
        assert_eq!(small.name, "cortex-m0plus:multiplier=small");
        assert!(crate::model::target::builtin("cortex-m0plus:multiplier=huge").is_err());
        assert!(crate::model::target::builtin("cortex-m4:multiplier=small").is_err());
    }

    #[test]
    fn the_bit_serial_divider_costs_a_cycle_per_quotient_bit() {
        let site = DynamicSite {
            rule: DynamicCost::DivideBitSerial,
            base: 2,
            max: 33,
            ..div_site()
        };
        assert_eq!(dynamic_extra(&site, 7, 1000), 0); // quotient 0: 2
        assert_eq!(dynamic_extra(&site, 1000, 7), 10 - 3 + 1); // 2 + 8
        assert_eq!(2 + dynamic_extra(&site, u32::MAX, 1), 33);
        assert_eq!(dynamic_extra(&site, 5, 0), 0);
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
