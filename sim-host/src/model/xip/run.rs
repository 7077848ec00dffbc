//! The XIP cache of one run: its description, state, and the lines of
//! every block priced in one of its windows (what the engine keeps; plain
//! data, so the engine's modules reach it without importing each other).

use super::{Alias, XipSpec, XipState, XipStats};
use std::collections::HashMap;

#[derive(Debug)]
pub struct XipModel {
    pub spec: XipSpec,
    pub state: XipState,
    /// Per block start: its window's alias and its lines in order.
    blocks: HashMap<u32, (Alias, Box<[u32]>)>,
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
            blocks: HashMap::new(),
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
        let mut lines: Vec<u32> = Vec::new();
        for &(at, size) in insns {
            let first = self.spec.line(start, at);
            let last = self.spec.line(start, at + size - 1);
            for line in first..=last {
                if lines.last() != Some(&line) {
                    lines.push(line);
                }
            }
        }
        self.blocks
            .insert(addr as u32, (alias, lines.into_boxed_slice()));
        true
    }

    /// The block at `addr` executes: the stall of its instruction lines.
    pub fn fetch(&mut self, addr: u64) -> u32 {
        match self.blocks.get(&(addr as u32)) {
            Some((alias, lines)) => self.state.fetch_block(*alias, lines),
            None => 0,
        }
    }

    /// A data read at `addr`: its stall (0 outside the windows).
    pub fn read(&mut self, addr: u64) -> u32 {
        match self.spec.window(addr) {
            Some((start, alias)) => {
                let line = self.spec.line(start, addr);
                self.state.read_data(alias, line)
            }
            None => 0,
        }
    }
}
