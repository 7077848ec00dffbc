//! A dynamic branch predictor, for cores whose control-flow cost depends
//! on what their predictor learnt (`[cycles.predictor]` in a target file),
//! in one of two organisations: a table of saturating direction counters
//! for conditional branches, a branch target buffer for taken branches and
//! jumps, and a return-address stack (the Cortex-M7, the SiFive E31); or
//! Hazard3's single-entry buffer of the last taken backward branch. The
//! engine resolves every executed control-flow instruction at
//! the next block's start (where it learns where it went) and charges the
//! penalty of a misprediction.
//!
//! The table's organisation (direct-mapped by halfword address, counters starting
//! weakly not-taken, a taken prediction needing the target buffer to hold
//! the target) is this model's own where a vendor gives only the sizes;
//! each target file says which of its numbers are published.

use crate::model::target::{Organisation, PredictorSpec};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// What kind of control transfer a block's last instruction is, for the
/// predictor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum BranchKind {
    /// Not a control-flow instruction (or one the predictor ignores).
    #[default]
    None = 0,
    /// A conditional direct branch.
    Conditional = 1,
    /// An unconditional direct branch.
    Jump = 2,
    /// A direct call (it pushes its return address).
    Call = 3,
    /// A return (the return-address stack predicts it).
    Return = 4,
    /// An indirect branch.
    Indirect = 5,
    /// An indirect call.
    IndirectCall = 6,
}

/// Set in a block's branch byte (next to its [`BranchKind`]) when its
/// conditional branch's flags were set early enough for flag forwarding
/// (`[cycles.predictor] flag_forwarding`).
pub const FLAGS_FORWARDED: u8 = 0x80;

impl BranchKind {
    /// The kind in a block's branch byte (without [`FLAGS_FORWARDED`]).
    pub fn from_u8(v: u8) -> BranchKind {
        match v & !FLAGS_FORWARDED {
            1 => BranchKind::Conditional,
            2 => BranchKind::Jump,
            3 => BranchKind::Call,
            4 => BranchKind::Return,
            5 => BranchKind::Indirect,
            6 => BranchKind::IndirectCall,
            _ => BranchKind::None,
        }
    }
}

/// The predictor's state during a run.
#[derive(Debug, Clone)]
pub struct Predictor {
    penalty: u32,
    /// The penalty of a conditional branch whose flags were forwarded.
    forwarded_penalty: u32,
    state: State,
    /// How many control-flow instructions were mispredicted.
    pub mispredicted: u64,
}

#[derive(Debug, Clone)]
enum State {
    Table(Table),
    /// The branch the single-entry buffer holds.
    LastTakenBackward(Option<u32>),
}

impl Predictor {
    pub fn new(spec: &PredictorSpec) -> Predictor {
        let state = match spec.organisation {
            Organisation::Table {
                entries,
                counter_bits,
                btb_entries,
                ras_entries,
            } => State::Table(Table {
                counter_bits,
                ras_entries,
                // counters start weakly not-taken
                counters: Slots::new(entries, (1u8 << (counter_bits - 1)) - 1),
                targets: Slots::new(btb_entries, NO_TARGET),
                returns: VecDeque::new(),
            }),
            Organisation::LastTakenBackward => State::LastTakenBackward(None),
        };
        Predictor {
            penalty: spec.penalty,
            forwarded_penalty: spec.forwarded.map_or(spec.penalty, |f| f.penalty),
            state,
            mispredicted: 0,
        }
    }

    /// The control-flow instruction at `pc`, whose block falls through to
    /// `fallthrough`, went to `to`: learns it, and returns the cycles a
    /// misprediction costs (0 when it was predicted).
    pub fn resolve(&mut self, kind: BranchKind, pc: u32, to: u32, fallthrough: u32) -> u32 {
        self.resolve_forwarded(kind, pc, to, fallthrough, false)
    }

    /// [`Predictor::resolve`] for a block whose conditional branch had its
    /// flags set early enough (`forwarded`): a misprediction then costs
    /// the flag-forwarding penalty.
    pub fn resolve_forwarded(
        &mut self,
        kind: BranchKind,
        pc: u32,
        to: u32,
        fallthrough: u32,
        forwarded: bool,
    ) -> u32 {
        let predicted = match &mut self.state {
            _ if kind == BranchKind::None => true,
            State::Table(table) => table.resolve(kind, pc, to, fallthrough),
            State::LastTakenBackward(buffer) => {
                kind != BranchKind::Conditional || last_taken_backward(buffer, pc, to, fallthrough)
            }
        };
        if predicted {
            0
        } else if forwarded && kind == BranchKind::Conditional {
            self.mispredicted += 1;
            self.forwarded_penalty
        } else {
            self.mispredicted += 1;
            self.penalty
        }
    }
}

/// Hazard3's predictor (RP2350 datasheet 3.8.7.10) resolves the
/// conditional branch at `pc`: predicted taken when the buffer holds it,
/// not taken otherwise. A taken backward branch is remembered; a
/// predicted one that falls through empties the buffer ("the core clears
/// the BTB"). Returns whether the prediction was right.
///
/// The caveat of 3.8.7.10.1: the predictor "does not engage" for a loop
/// whose body is one 16-bit instruction at a 32-bit-aligned address (the
/// branch then sits 2 bytes after its target). Such a branch is taken as
/// never remembered and leaving the buffer as it is: the model's reading
/// of "does not engage".
fn last_taken_backward(buffer: &mut Option<u32>, pc: u32, to: u32, fallthrough: u32) -> bool {
    let taken = to != fallthrough;
    let predicted_taken = *buffer == Some(pc);
    let delay_loop = to % 4 == 0 && pc == to.wrapping_add(2);
    if taken && to <= pc && !delay_loop {
        *buffer = Some(pc);
    } else if predicted_taken && !taken {
        *buffer = None;
    }
    predicted_taken == taken
}

/// A table predictor: direction counters, a target buffer, a return
/// stack.
#[derive(Debug, Clone)]
struct Table {
    counter_bits: u32,
    ras_entries: u32,
    counters: Slots<u8>,
    targets: Slots<(u32, u32)>,
    returns: VecDeque<u32>,
}

/// A table's entries by branch address: `n` direct-mapped slots indexed by
/// halfword address (`(pc >> 1) % n`), or one per address when `n` is 0
/// (a table the model takes as large enough never to alias). Consulted at
/// every control-flow instruction: an array with a division by
/// multiplication where the table has a size, and one hashed look-up per
/// access where it has none. A slot never written holds `empty`.
#[derive(Debug, Clone)]
enum Slots<T> {
    Direct { slots: Vec<T>, modulo: FastMod },
    PerAddress { map: FxHashMap<u32, T>, empty: T },
}

impl<T: Copy> Slots<T> {
    fn new(n: u32, empty: T) -> Slots<T> {
        match n {
            0 => Slots::PerAddress {
                map: FxHashMap::default(),
                empty,
            },
            n => Slots::Direct {
                slots: vec![empty; n as usize],
                modulo: FastMod::new(n),
            },
        }
    }

    /// The slot of the branch at `pc`.
    fn at(&mut self, pc: u32) -> &mut T {
        match self {
            Slots::Direct { slots, modulo } => &mut slots[modulo.of(pc >> 1) as usize],
            Slots::PerAddress { map, empty } => map.entry(pc).or_insert(*empty),
        }
    }
}

/// `a % n` for a fixed `n` by two multiplications (Lemire, Kaser and Kurz,
/// "Faster remainder by direct computation", 2019): exact for every u32
/// `a`; a division per access was most of the predictor's time.
#[derive(Debug, Clone, Copy)]
struct FastMod {
    n: u32,
    m: u64,
}

impl FastMod {
    fn new(n: u32) -> FastMod {
        FastMod {
            n,
            m: (u64::MAX / u64::from(n)).wrapping_add(1),
        }
    }

    fn of(self, a: u32) -> u32 {
        let low = self.m.wrapping_mul(u64::from(a));
        ((u128::from(low) * u128::from(self.n)) >> 64) as u32
    }
}

/// A target buffer's entry: the branch's address as its tag, and where it
/// went. The empty entry's tag is odd: no instruction is at an odd address.
const NO_TARGET: (u32, u32) = (u32::MAX, 0);

impl Table {
    fn push_return(&mut self, address: u32) {
        if self.ras_entries == 0 {
            return;
        }
        if self.returns.len() == self.ras_entries as usize {
            self.returns.pop_front();
        }
        self.returns.push_back(address);
    }

    /// Whether the instruction at `pc` going to `to` was predicted; it
    /// learns it.
    fn resolve(&mut self, kind: BranchKind, pc: u32, to: u32, fallthrough: u32) -> bool {
        match kind {
            BranchKind::None => true,
            BranchKind::Conditional => self.conditional(pc, to, fallthrough),
            BranchKind::Jump | BranchKind::Indirect => self.by_target(pc, to),
            BranchKind::Call | BranchKind::IndirectCall => {
                let predicted = self.by_target(pc, to);
                self.push_return(fallthrough);
                predicted
            }
            BranchKind::Return if self.ras_entries > 0 => self.returns.pop_back() == Some(to),
            BranchKind::Return => self.by_target(pc, to),
        }
    }

    /// A conditional branch: predicted taken when its counter says taken
    /// and the target buffer holds its target; the counter learns the
    /// direction, the buffer a taken branch's target.
    fn conditional(&mut self, pc: u32, to: u32, fallthrough: u32) -> bool {
        let taken = to != fallthrough;
        let bits = self.counter_bits;
        let max = (1u8 << bits) - 1;
        let threshold = 1u8 << (bits - 1);
        let slot = self.counters.at(pc);
        let counter = *slot;
        *slot = if taken {
            counter.saturating_add(1).min(max)
        } else {
            counter.saturating_sub(1)
        };
        let entry = self.targets.at(pc);
        let predicted = if counter >= threshold && entry.0 == pc {
            taken && entry.1 == to
        } else {
            !taken
        };
        if taken {
            *entry = (pc, to);
        }
        predicted
    }

    /// A jump, call or indirect branch: predicted when the target buffer
    /// holds where it went; it learns the target.
    fn by_target(&mut self, pc: u32, to: u32) -> bool {
        let entry = self.targets.at(pc);
        let predicted = *entry == (pc, to);
        *entry = (pc, to);
        predicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_remainder_is_the_remainder() {
        let edges = [
            0,
            1,
            2,
            39,
            40,
            41,
            127,
            128,
            0x7fff_ffff,
            0xffff_fffe,
            u32::MAX,
        ];
        for n in [1, 2, 3, 7, 40, 128, 1000, 0x8000_0001, u32::MAX] {
            let modulo = FastMod::new(n);
            let spread = (0..4096u32).map(|i| i.wrapping_mul(0x9e37_79b9));
            for a in edges.into_iter().chain(spread) {
                assert_eq!(modulo.of(a), a % n, "{a} % {n}");
            }
        }
    }

    fn spec(entries: u32, bits: u32, btb: u32, ras: u32) -> PredictorSpec {
        PredictorSpec {
            organisation: Organisation::Table {
                entries,
                counter_bits: bits,
                btb_entries: btb,
                ras_entries: ras,
            },
            penalty: 3,
            forwarded: None,
            cite: "test".into(),
        }
    }

    #[test]
    fn a_loop_branch_mispredicts_on_entry_twice_and_at_exit() {
        // a backward branch taken 9 times, then not: 2-bit counters start
        // weakly not-taken (1): the first taken execution mispredicts
        // (counter 1 -> 2, target learnt), then it is predicted taken;
        // the exit mispredicts.
        let mut p = Predictor::new(&spec(128, 2, 40, 2));
        let mut penalties = Vec::new();
        for i in 0..10 {
            let to = if i < 9 { 0x100 } else { 0x124 };
            penalties.push(p.resolve(BranchKind::Conditional, 0x120, to, 0x124));
        }
        assert_eq!(penalties, [3, 0, 0, 0, 0, 0, 0, 0, 0, 3]);
        assert_eq!(p.mispredicted, 2);
    }

    #[test]
    fn jumps_need_the_target_buffer_and_returns_the_stack() {
        let mut p = Predictor::new(&spec(128, 2, 40, 2));
        assert_eq!(p.resolve(BranchKind::Call, 0x10, 0x80, 0x14), 3);
        assert_eq!(p.resolve(BranchKind::Return, 0x90, 0x14, 0x92), 0);
        assert_eq!(p.resolve(BranchKind::Call, 0x10, 0x80, 0x14), 0);
        assert_eq!(p.resolve(BranchKind::Return, 0x90, 0x14, 0x92), 0);
        // without a return-address stack, a return is an indirect branch
        let mut q = Predictor::new(&spec(0, 1, 0, 0));
        assert_eq!(q.resolve(BranchKind::Return, 0x90, 0x14, 0x92), 3);
        assert_eq!(q.resolve(BranchKind::Return, 0x90, 0x14, 0x92), 0);
        assert_eq!(q.resolve(BranchKind::Return, 0x90, 0x18, 0x92), 3);
    }

    #[test]
    fn a_forwarded_conditional_branch_mispredicts_for_less() {
        // Cortex-M7 (jnk0le, cortex_m7.md): 8 cycles, 6 when the flags
        // were set 3 cycles ahead; only for conditional branches
        let mut s = spec(0, 2, 0, 0);
        s.penalty = 8;
        s.forwarded = Some(crate::model::target::FlagForwarding {
            distance: 3,
            penalty: 6,
        });
        let mut p = Predictor::new(&s);
        // first taken: mispredicted (weakly not-taken), forwarded: 6
        assert_eq!(
            p.resolve_forwarded(BranchKind::Conditional, 0x20, 0x0, 0x22, true),
            6
        );
        // predicted now: 0 either way
        assert_eq!(
            p.resolve_forwarded(BranchKind::Conditional, 0x20, 0x0, 0x22, true),
            0
        );
        // the exit, flags set late: 8
        assert_eq!(
            p.resolve_forwarded(BranchKind::Conditional, 0x20, 0x22, 0x22, false),
            8
        );
        // a jump is not forwarded: 8
        assert_eq!(
            p.resolve_forwarded(BranchKind::Jump, 0x40, 0x80, 0x44, true),
            8
        );
        assert_eq!(
            BranchKind::from_u8(1 | FLAGS_FORWARDED),
            BranchKind::Conditional
        );
    }

    #[test]
    fn one_bit_counters_predict_the_last_direction() {
        let mut p = Predictor::new(&spec(0, 1, 0, 0));
        let taken = |p: &mut Predictor| p.resolve(BranchKind::Conditional, 0x20, 0x0, 0x22);
        let not = |p: &mut Predictor| p.resolve(BranchKind::Conditional, 0x20, 0x22, 0x22);
        assert_eq!(not(&mut p), 0);
        assert_eq!(taken(&mut p), 3);
        assert_eq!(taken(&mut p), 0);
        assert_eq!(not(&mut p), 3);
    }

    #[test]
    fn aliasing_branches_share_a_counter() {
        let mut p = Predictor::new(&spec(4, 2, 4, 0));
        // 0x10 and 0x18 map to the same slot of 4 ((pc >> 1) % 4)
        for _ in 0..3 {
            p.resolve(BranchKind::Conditional, 0x10, 0x0, 0x12);
        }
        // the counter is strong-taken, but the buffer has 0x10's target
        assert_eq!(p.resolve(BranchKind::Conditional, 0x18, 0x1a, 0x1a), 0);
    }

    fn hazard3() -> Predictor {
        Predictor::new(&PredictorSpec {
            organisation: Organisation::LastTakenBackward,
            penalty: 1,
            forwarded: None,
            cite: "test".into(),
        })
    }

    #[test]
    fn hazard3_copy_loop_mispredicts_its_first_and_last_branch() {
        // RP2350 datasheet 3.8.7.10: a 10-byte copy's bltu is taken 9
        // times then falls through: "the mispredicted, taken branch at the
        // end of the first iteration costs one cycle", "the mispredicted,
        // non-taken branch at the end of the last iteration costs one"
        let mut p = hazard3();
        let penalties: Vec<u32> = (0..10)
            .map(|i| {
                let to = if i < 9 { 0x100 } else { 0x112 };
                p.resolve(BranchKind::Conditional, 0x10e, to, 0x112)
            })
            .collect();
        assert_eq!(penalties, [1, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        // the fall-through emptied the buffer: the next entry mispredicts
        assert_eq!(p.resolve(BranchKind::Conditional, 0x10e, 0x100, 0x112), 1);
    }

    #[test]
    fn hazard3_predicts_only_the_last_taken_backward_branch() {
        let mut p = hazard3();
        // forward taken branches are never remembered
        for _ in 0..3 {
            assert_eq!(p.resolve(BranchKind::Conditional, 0x40, 0x60, 0x44), 1);
        }
        // not taken and not remembered: predicted
        assert_eq!(p.resolve(BranchKind::Conditional, 0x40, 0x44, 0x44), 0);
        // two backward branches alternating replace each other
        p.resolve(BranchKind::Conditional, 0x80, 0x70, 0x84);
        assert_eq!(p.resolve(BranchKind::Conditional, 0x80, 0x70, 0x84), 0);
        assert_eq!(p.resolve(BranchKind::Conditional, 0x90, 0x70, 0x94), 1);
        assert_eq!(p.resolve(BranchKind::Conditional, 0x80, 0x70, 0x84), 1);
        // a forward taken branch leaves the buffer as it was
        p.resolve(BranchKind::Conditional, 0x40, 0x60, 0x44);
        assert_eq!(p.resolve(BranchKind::Conditional, 0x80, 0x70, 0x84), 0);
        // jumps, calls and returns are priced by their rows, not here
        assert_eq!(p.resolve(BranchKind::Jump, 0x10, 0x80, 0x14), 0);
        assert_eq!(p.resolve(BranchKind::Return, 0x90, 0x14, 0x92), 0);
        // 3 + 1 (the first 0x80) + 1 + 1 + 1 (the forward one)
        assert_eq!(p.mispredicted, 7);
    }

    #[test]
    fn hazard3_does_not_engage_on_an_aligned_one_halfword_delay_loop() {
        // 3.8.7.10.1: a 16-bit body at a 32-bit-aligned address, then the
        // branch back to it: every taken execution mispredicts
        let mut p = hazard3();
        for _ in 0..4 {
            assert_eq!(p.resolve(BranchKind::Conditional, 0x102, 0x100, 0x104), 1);
        }
        // the same loop with its body at a halfword address engages
        p.resolve(BranchKind::Conditional, 0x104, 0x102, 0x106);
        assert_eq!(p.resolve(BranchKind::Conditional, 0x104, 0x102, 0x106), 0);
        // and a two-instruction body at an aligned address too
        p.resolve(BranchKind::Conditional, 0x204, 0x200, 0x206);
        assert_eq!(p.resolve(BranchKind::Conditional, 0x204, 0x200, 0x206), 0);
    }
}
