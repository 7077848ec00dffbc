//! The XIP cache of one run: its description, state, and the lines of
//! every block priced in one of its windows (what the engine keeps; plain
//! data, so the engine's modules reach it without importing each other).

use super::{Alias, XipSpec, XipState, XipStats};
use rustc_hash::FxHashMap;

#[derive(Debug)]
pub struct XipModel {
    pub spec: XipSpec,
    pub state: XipState,
    /// Per block start: its window's alias, its lines in order, and (on
    /// the RP2350) its fetch words in order.
    blocks: FxHashMap<u32, Block>,
}

#[derive(Debug)]
struct Block {
    alias: Alias,
    lines: Box<[u32]>,
    words: Box<[u32]>,
}

/// The XIP cache's counts in a run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct XipReport {
    pub region: String,
    /// XIP_CTRL at the end of the run.
    pub control: u32,
    /// The stall of a line read from the flash.
    pub miss_cycles: u32,
    #[serde(flatten)]
    pub stats: XipStats,
}

impl XipModel {
    pub fn new(spec: XipSpec) -> XipModel {
        XipModel {
            state: XipState::new(&spec),
            spec,
            blocks: FxHashMap::default(),
        }
    }

    pub fn report(&self) -> XipReport {
        XipReport {
            region: self.spec.region.clone(),
            control: self.state.ctrl(),
            miss_cycles: self.spec.miss_cycles,
            stats: self.state.stats,
        }
    }

    /// The stalls since observers were last told.
    /// When a block is priced: whether it runs from an XIP window, and if
    /// so its alias and the lines its instructions touch (in order,
    /// consecutive duplicates merged) are kept for `fetch`. `insns` are
    /// the block's instructions: address and size.
    pub fn note_block(&mut self, addr: u64, insns: &[(u64, u64)]) -> bool {
        let Some((start, alias)) = self.spec.window(addr) else {
            return false;
        };
        if insns.is_empty() {
            return false;
        }
        let lines = units(insns, |at| self.spec.line(start, at));
        let words = match &self.spec.rp2350 {
            Some(r) => units(insns, |at| ((at - start) / u64::from(r.fetch_bytes)) as u32),
            None => Vec::new(),
        };
        self.blocks.insert(
            addr as u32,
            Block {
                alias,
                lines: lines.into_boxed_slice(),
                words: words.into_boxed_slice(),
            },
        );
        true
    }

    /// The block at `addr` executes at cycle `now`: the stall of its
    /// instruction fetches.
    pub fn fetch(&mut self, addr: u64, now: u64) -> u32 {
        let Some(b) = self.blocks.get(&(addr as u32)) else {
            return 0;
        };
        match &self.spec.rp2350 {
            Some(r) => self
                .state
                .fetch_block_qmi(b.alias, &b.lines, &b.words, r.fetch_bytes, now),
            None => self.state.fetch_block(b.alias, &b.lines),
        }
    }

    /// A data read of `size` bytes at `addr` at cycle `now`: its stall (0
    /// outside the windows).
    pub fn read(&mut self, addr: u64, size: u32, now: u64) -> u32 {
        let Some((start, alias)) = self.spec.window(addr) else {
            return 0;
        };
        if self.spec.rp2350.is_some() {
            return self
                .state
                .read_data_qmi(alias, addr - start, u64::from(size), now);
        }
        let line = self.spec.line(start, addr);
        self.state.read_data(alias, line)
    }
}

/// The units (lines, fetch words) a block's instructions touch, in order,
/// consecutive duplicates merged: `unit` numbers the one of an address.
fn units(insns: &[(u64, u64)], unit: impl Fn(u64) -> u32) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for &(at, size) in insns {
        for u in unit(at)..=unit(at + size - 1) {
            if out.last() != Some(&u) {
                out.push(u);
            }
        }
    }
    out
}
