//! A dynamic branch predictor, for cores whose control-flow cost depends
//! on what their predictor learnt (`[cycles.predictor]` in a target file):
//! a table of saturating direction counters for conditional branches, a
//! branch target buffer for taken branches and jumps, and a return-address
//! stack. The engine resolves every executed control-flow instruction at
//! the next block's start (where it learns where it went) and charges the
//! penalty of a misprediction.
//!
//! The organisation (direct-mapped by halfword address, counters starting
//! weakly not-taken, a taken prediction needing the target buffer to hold
//! the target) is this model's own where a vendor gives only the sizes;
//! each target file says which of its numbers are published.

use crate::model::target::PredictorSpec;
use std::collections::HashMap;

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

impl BranchKind {
    pub fn from_u8(v: u8) -> BranchKind {
        match v {
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
    spec: PredictorSpec,
    counters: HashMap<u32, u8>,
    targets: HashMap<u32, (u32, u32)>,
    returns: Vec<u32>,
    /// How many control-flow instructions were mispredicted.
    pub mispredicted: u64,
}

impl Predictor {
    pub fn new(spec: &PredictorSpec) -> Predictor {
        Predictor {
            spec: spec.clone(),
            counters: HashMap::new(),
            targets: HashMap::new(),
            returns: Vec::new(),
            mispredicted: 0,
        }
    }

    fn counter_slot(&self, pc: u32) -> u32 {
        match self.spec.entries {
            0 => pc,
            n => (pc >> 1) % n,
        }
    }

    fn target_slot(&self, pc: u32) -> u32 {
        match self.spec.btb_entries {
            0 => pc,
            n => (pc >> 1) % n,
        }
    }

    /// The target buffer's target for the branch at `pc`.
    fn predicted_target(&self, pc: u32) -> Option<u32> {
        self.targets
            .get(&self.target_slot(pc))
            .filter(|(tag, _)| *tag == pc)
            .map(|(_, target)| *target)
    }

    fn remember_target(&mut self, pc: u32, to: u32) {
        let slot = self.target_slot(pc);
        self.targets.insert(slot, (pc, to));
    }

    fn push_return(&mut self, address: u32) {
        if self.spec.ras_entries == 0 {
            return;
        }
        if self.returns.len() == self.spec.ras_entries as usize {
            self.returns.remove(0);
        }
        self.returns.push(address);
    }

    /// The control-flow instruction at `pc`, whose block falls through to
    /// `fallthrough`, went to `to`: learns it, and returns the cycles a
    /// misprediction costs (0 when it was predicted).
    pub fn resolve(&mut self, kind: BranchKind, pc: u32, to: u32, fallthrough: u32) -> u32 {
        let predicted = match kind {
            BranchKind::None => return 0,
            BranchKind::Conditional => self.conditional(pc, to, fallthrough),
            BranchKind::Jump | BranchKind::Indirect => self.by_target(pc, to),
            BranchKind::Call | BranchKind::IndirectCall => {
                let predicted = self.by_target(pc, to);
                self.push_return(fallthrough);
                predicted
            }
            BranchKind::Return if self.spec.ras_entries > 0 => self.returns.pop() == Some(to),
            BranchKind::Return => self.by_target(pc, to),
        };
        if predicted {
            0
        } else {
            self.mispredicted += 1;
            self.spec.penalty
        }
    }

    /// A conditional branch: predicted taken when its counter says taken
    /// and the target buffer holds its target; the counter learns the
    /// direction, the buffer a taken branch's target.
    fn conditional(&mut self, pc: u32, to: u32, fallthrough: u32) -> bool {
        let taken = to != fallthrough;
        let bits = self.spec.counter_bits;
        let max = (1u8 << bits) - 1;
        let threshold = 1u8 << (bits - 1);
        let slot = self.counter_slot(pc);
        let counter = *self.counters.entry(slot).or_insert(threshold - 1);
        let guess = (counter >= threshold)
            .then(|| self.predicted_target(pc))
            .flatten();
        let predicted = match guess {
            Some(target) => taken && target == to,
            None => !taken,
        };
        let updated = if taken {
            counter.saturating_add(1).min(max)
        } else {
            counter.saturating_sub(1)
        };
        self.counters.insert(slot, updated);
        if taken {
            self.remember_target(pc, to);
        }
        predicted
    }

    /// A jump, call or indirect branch: predicted when the target buffer
    /// holds where it went; it learns the target.
    fn by_target(&mut self, pc: u32, to: u32) -> bool {
        let predicted = self.predicted_target(pc) == Some(to);
        self.remember_target(pc, to);
        predicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(entries: u32, bits: u32, btb: u32, ras: u32) -> PredictorSpec {
        PredictorSpec {
            entries,
            counter_bits: bits,
            btb_entries: btb,
            ras_entries: ras,
            penalty: 3,
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
}
