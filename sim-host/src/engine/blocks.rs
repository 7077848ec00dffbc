//! The prices of translated blocks, packed for the block hook: a
//! direct-mapped cache of slots in front of a map of every priced block
//! (DESIGN.md decision 2: a block is priced once).

/// A block's price, packed for the hot path. Aligned to 8 so that copies
/// of it (and of `Option<Price>`) are whole aligned words: the block
/// hook's copy of the cached price read an 8-byte word at an odd offset
/// over fields stored a byte at a time, a store-forwarding stall on every
/// intercepted ARP call.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(8))]
pub(super) struct Price {
    pub(super) cycles: u32,
    pub(super) instructions: u32,
    pub(super) fallthrough: u32,
    pub(super) last_insn: u32,
    pub(super) taken_extra: u16,
    pub(super) entry_penalty: u16,
    /// An ARP entry point the block hook intercepts: 1 + its index in
    /// `ENTRY_POINTS` (0: none; see [`return_at_once`]).
    pub(super) intercept: u8,
    /// The block has instructions the cycle table does not price
    /// (`--allow-unpriced` counts its executions).
    pub(super) unpriced: bool,
    /// Its last instruction for the branch predictor (a
    /// `predictor::BranchKind`; 0 without a predictor).
    pub(super) branch: u8,
    /// The block runs from a flash with an accelerator (`flash`) or from
    /// a range the L1 caches price (`l1cache`): its fetch stalls are
    /// charged on a cold path.
    pub(super) memory: bool,
    /// WFI, WFE or SEV in the block (`sleep`'s bits): the block hook
    /// sees it.
    pub(super) power: u8,
}

/// `Price::power`'s bits (`sleep`): a WFI or a WFE ends the block, SEV
/// is in it.
pub(super) const SLEEPS_FOR_INTERRUPT: u8 = 1;
pub(super) const SLEEPS_FOR_EVENT: u8 = 2;
pub(super) const SENDS_EVENT: u8 = 4;
/// RISC-V's `mret` ends the block: a trap handler returns (`tasks`).
pub(super) const TRAP_RETURN: u8 = 8;

/// Direct-mapped slots: 16,384 x 32 bytes (512 KiB), more than the hot
/// blocks of a microcontroller program.
const SLOTS: usize = 1 << 14;

/// A block's address + 1 (0: empty) and its price: the price itself, one
/// dependent load less on the per-block path than an index into `prices`.
/// Aligned so that no slot straddles two cache lines.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(32))]
struct Slot {
    tag: u32,
    price: Price,
}

fn slot_of(addr: u32) -> usize {
    (addr as usize >> 1) & (SLOTS - 1)
}

/// Direct-mapped cache in front of a map of all priced blocks. What it
/// holds is proportional to the blocks that exist: a block the guest
/// rewrites is forgotten whole (issue 30, N12: the prices of rewritten
/// blocks were once kept for ever, 1.26 GB after 3 million rewrites).
pub(super) struct BlockCache {
    /// A fixed-size array: its index needs no bounds check.
    slots: Box<[Slot; SLOTS]>,
    /// Every priced block's price, by its address.
    index: rustc_hash::FxHashMap<u32, Price>,
    /// Start -> end of every priced block of guest code (not intercepted
    /// entry points), to forget the prices of code that is rewritten.
    spans: std::collections::BTreeMap<u32, u32>,
}

/// More than the bytes of the longest block Unicorn translates (512
/// instructions): how far below a write a block that covers it can start.
const LONGEST_BLOCK: u64 = 4096;

impl BlockCache {
    pub(super) fn new() -> BlockCache {
        BlockCache {
            slots: vec![Slot::default(); SLOTS]
                .into_boxed_slice()
                .try_into()
                .expect("SLOTS slots"),
            index: rustc_hash::FxHashMap::default(),
            spans: std::collections::BTreeMap::new(),
        }
    }

    /// The price in `addr`'s slot, if the slot holds it: the hot path's
    /// look-up, a reference so that no `Option<Price>` is moved (its
    /// copy, over fields stored a byte at a time, stalled).
    #[inline(always)]
    pub(super) fn hit(&self, addr: u32) -> Option<&Price> {
        let slot = &self.slots[slot_of(addr)];
        (slot.tag == addr.wrapping_add(1)).then_some(&slot.price)
    }

    #[inline(always)]
    pub(super) fn get(&mut self, addr: u32) -> Option<Price> {
        if let Some(price) = self.hit(addr) {
            return Some(*price);
        }
        self.fill(addr)
    }

    /// The slot of `addr` filled from the map of every priced block.
    #[cold]
    pub(super) fn fill(&mut self, addr: u32) -> Option<Price> {
        let slot = &mut self.slots[slot_of(addr)];
        let price = *self.index.get(&addr)?;
        *slot = Slot {
            tag: addr.wrapping_add(1),
            price,
        };
        Some(price)
    }

    /// The price of the block at `addr`, if priced (off the hot path: no
    /// slot is filled).
    pub(super) fn peek(&self, addr: u32) -> Option<Price> {
        let slot = &self.slots[slot_of(addr)];
        if slot.tag == addr.wrapping_add(1) {
            return Some(slot.price);
        }
        self.index.get(&addr).copied()
    }

    /// Forgets the prices of blocks with code in `start..end` (the guest
    /// or the debugger wrote there): they are priced anew when they next
    /// run. Intercepted entry points keep theirs. Returns whether any
    /// block was forgotten.
    pub(super) fn forget(&mut self, start: u64, end: u64) -> bool {
        let below = u32::try_from(end).unwrap_or(u32::MAX);
        let covering: Vec<u32> = self
            .spans
            .range(..below)
            .rev()
            .take_while(|(&a, _)| u64::from(a) + LONGEST_BLOCK > start)
            .filter(|(_, &e)| u64::from(e) > start)
            .map(|(&a, _)| a)
            .collect();
        let forgot = !covering.is_empty();
        for addr in covering {
            self.spans.remove(&addr);
            self.index.remove(&addr);
            let slot = &mut self.slots[slot_of(addr)];
            if slot.tag == addr.wrapping_add(1) {
                slot.tag = 0;
            }
        }
        forgot
    }

    pub(super) fn insert(&mut self, addr: u32, price: Price) {
        self.index.insert(addr, price);
        if price.fallthrough != u32::MAX {
            self.spans.insert(addr, price.fallthrough);
        }
        self.slots[slot_of(addr)] = Slot {
            tag: addr.wrapping_add(1),
            price,
        };
    }
}
