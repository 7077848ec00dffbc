//! The last taken branches, for fault reports, kept at almost no cost per
//! block: each charged block writes only its start, at an index given by
//! the instruction count, and the branches are found again when a report
//! asks, walking back over the blocks by their sizes.
//!
//! The translated code writes the trail too (`translation_charge`): it
//! holds the instruction count in a register after charging the block, so
//! the write is one store with no count of its own to load and store
//! (the trail of (from, to) pairs it replaced, with its own count, was
//! about a tenth of a run of short blocks: BENCHMARKS.md).

use super::blocks::Price;
use crate::image::elf::GuestImage;

/// The branches a fault report shows, at most.
const SHOWN: usize = 16;

/// Instructions the trail looks back over; a power of two (the translated
/// code masks the count with `TRAIL_SLOTS - 1`).
pub(super) const TRAIL_SLOTS: usize = 1024;

/// The start of each block charged, at index `n % TRAIL_SLOTS` where `n`
/// is the instruction count with the block charged. Blocks of at least one
/// instruction end at distinct counts, so within the last `TRAIL_SLOTS`
/// instructions no two share an index: the block before the one ending at
/// `n` ends at `n` less that block's instructions. Blocks of none (the
/// intercepted entry points) are not written.
pub(super) struct BlockTrail {
    pub(super) starts: [u32; TRAIL_SLOTS],
    /// The instruction count when code was last rewritten: entries up to
    /// it may name blocks whose price has changed since, and the walk
    /// stops there.
    pub(super) floor: u64,
}

impl Default for BlockTrail {
    fn default() -> BlockTrail {
        BlockTrail {
            starts: [0; TRAIL_SLOTS],
            floor: 0,
        }
    }
}

impl BlockTrail {
    /// A block starting at `start` was charged; `instructions` is the
    /// count with it.
    #[inline(always)]
    pub(super) fn record(&mut self, instructions: u64, start: u64) {
        self.starts[instructions as usize % TRAIL_SLOTS] = start as u32;
    }

    /// The blocks charged in the last `TRAIL_SLOTS` instructions before
    /// `instructions`, newest first, with their prices. The walk stops at
    /// a block whose price is no longer known (`price`: rewritten code),
    /// and at the last rewrite of code (`floor`).
    fn blocks(&self, instructions: u64, price: impl Fn(u32) -> Option<Price>) -> Vec<(u32, Price)> {
        let mut blocks = Vec::new();
        let mut end = instructions;
        while end > self.floor && instructions - end < TRAIL_SLOTS as u64 {
            let start = self.starts[end as usize % TRAIL_SLOTS];
            let Some(p) = price(start) else { break };
            if p.instructions == 0 || u64::from(p.instructions) > end {
                break;
            }
            blocks.push((start, p));
            end -= u64::from(p.instructions);
        }
        blocks
    }

    /// The last taken branches as (from, to), oldest first: between two
    /// blocks charged one after the other, where the second is not the
    /// first's fall-through.
    pub(super) fn taken_branches(
        &self,
        instructions: u64,
        price: impl Fn(u32) -> Option<Price>,
    ) -> Vec<(u32, u32)> {
        let blocks = self.blocks(instructions, price);
        let mut branches: Vec<(u32, u32)> = blocks
            .windows(2)
            .filter(|w| w[1].1.fallthrough != w[0].0)
            .map(|w| (w[1].1.last_insn, w[0].0))
            .take(SHOWN)
            .collect();
        branches.reverse();
        branches
    }

    /// The last taken branches as `from -> to`, oldest first.
    pub(super) fn describe(
        &self,
        instructions: u64,
        price: impl Fn(u32) -> Option<Price>,
        image: &GuestImage,
    ) -> Vec<String> {
        self.taken_branches(instructions, price)
            .into_iter()
            .map(|(from, to)| {
                format!(
                    "{} -> {}",
                    image.describe(u64::from(from)),
                    image.describe(u64::from(to))
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A block of `n` 2-byte instructions at `start`.
    fn block(start: u32, n: u32) -> (u32, Price) {
        let price = Price {
            instructions: n,
            fallthrough: start + 2 * n,
            last_insn: start + 2 * (n - 1),
            ..Price::default()
        };
        (start, price)
    }

    /// Charges `run` (block starts, in order) into a trail, as the block
    /// hook and the translated code do; returns the trail and the count.
    fn charge(run: &[u32], prices: &HashMap<u32, Price>) -> (BlockTrail, u64) {
        let mut trail = BlockTrail::default();
        let mut instructions = 0;
        for start in run {
            instructions += u64::from(prices[start].instructions);
            trail.record(instructions, u64::from(*start));
        }
        (trail, instructions)
    }

    #[test]
    fn a_loop_shows_its_back_edge_and_the_entry_but_no_fall_through() {
        // 0x100 (3 insns) falls through into the loop body at 0x106 (2
        // insns), which branches back to itself twice, then to 0x200
        let prices: HashMap<u32, Price> = [block(0x100, 3), block(0x106, 2), block(0x200, 1)]
            .into_iter()
            .collect();
        let (trail, n) = charge(&[0x100, 0x106, 0x106, 0x106, 0x200], &prices);
        let got = trail.taken_branches(n, |a| prices.get(&a).copied());
        // 0x106's last instruction is at 0x108
        assert_eq!(got, vec![(0x108, 0x106), (0x108, 0x106), (0x108, 0x200)]);
    }

    #[test]
    fn only_the_last_sixteen_and_only_within_the_window() {
        // a one-instruction loop, 3000 times: the window of 1024
        // instructions holds 1024 runs of it, the report the last 16
        let prices: HashMap<u32, Price> = [block(0x40, 1)].into_iter().collect();
        let (trail, n) = charge(&[0x40; 3000], &prices);
        assert_eq!(
            trail.blocks(n, |a| prices.get(&a).copied()).len(),
            TRAIL_SLOTS
        );
        let got = trail.taken_branches(n, |a| prices.get(&a).copied());
        assert_eq!(got, vec![(0x40, 0x40); SHOWN]);
    }

    #[test]
    fn the_walk_stops_at_a_forgotten_price_and_at_the_start() {
        let mut prices: HashMap<u32, Price> = [block(0x10, 2), block(0x30, 2), block(0x50, 2)]
            .into_iter()
            .collect();
        let (trail, n) = charge(&[0x10, 0x30, 0x50], &prices);
        assert_eq!(
            trail.taken_branches(n, |a| prices.get(&a).copied()).len(),
            2
        );
        // the code at 0x30 was rewritten: nothing before it is trusted
        prices.remove(&0x30);
        let got = trail.taken_branches(n, |a| prices.get(&a).copied());
        assert_eq!(got, vec![]);
        assert_eq!(trail.blocks(n, |a| prices.get(&a).copied()).len(), 1);
    }

    #[test]
    fn the_walk_stops_at_the_last_rewrite_of_code() {
        // 0x10 was rewritten after it ran and priced anew at 1 instruction
        // (it ran as 2): before the floor, nothing is walked
        let mut prices: HashMap<u32, Price> = [block(0x10, 2), block(0x30, 2), block(0x50, 2)]
            .into_iter()
            .collect();
        let (mut trail, n) = charge(&[0x10, 0x30, 0x50], &prices);
        trail.floor = 2;
        prices.insert(0x10, block(0x10, 1).1);
        let got = trail.taken_branches(n, |a| prices.get(&a).copied());
        assert_eq!(got, vec![(0x32, 0x50)]);
    }
}
