//! The Cortex-M7's L1 caches in the engine (`model::l1cache`): the cache
//! registers of the System Control Space answered from the model (CCR's
//! IC and DC bits, CLIDR, CTR, CCSIDR, CSSELR, the maintenance
//! operations), the lines and fetch granules of each block in a cached or
//! slow range (found when the block is priced), the fetch stalls charged
//! once per executed block on a cold path that only those blocks take
//! (the same per-block flag as the flash accelerator's), and data
//! accesses seen by a memory hook limited to the ranges that are not TCM.
//!
//! A target without `[l1cache]` maps nothing, hooks nothing and prices no
//! block with the flag: it runs as before.

use super::state::{BlockLines, L1Model, State, Uc};
use crate::model::cycles::Insn;
use crate::model::l1cache::{L1State, CCR_DC, CCR_IC};

/// CCR's address (ARMv7-M B3.2.8).
const CCR: u32 = 0xE000_ED14;

/// The run's caches, when the target has them.
pub(super) fn state(target: &crate::model::target::Target) -> Option<Box<L1Model>> {
    let spec = target.l1cache.as_ref()?;
    Some(Box::new(L1Model {
        state: L1State::new(spec),
        blocks: rustc_hash::FxHashMap::default(),
    }))
}

/// A data access in a cached or slow range (`model_hooks`): its stall
/// charged now.
pub(super) fn data_access(uc: &mut Uc<'_>, addr: u64, _size: u32, write: bool) {
    let st = uc.get_data_mut();
    if let Some(c) = st.l1cache.as_mut() {
        st.clock.cycles += u64::from(c.state.data(addr, write));
    }
}

/// A block in a cached or slow range executes: its fetch stalls charged.
#[cold]
#[inline(never)]
pub(super) fn fetch(st: &mut State, addr: u64) {
    if let Some(c) = st.l1cache.as_mut() {
        if let Some(b) = c.blocks.get(&(addr as u32)) {
            st.clock.cycles += u64::from(c.state.fetch_block(&b.lines, &b.granules));
        }
    }
}

/// When a block is priced: whether it runs from a range the caches price,
/// and if so its lines and granules are kept for [`fetch`].
pub(super) fn note_block(uc: &mut Uc<'_>, addr: u64, insns: &[Insn]) -> bool {
    let st = uc.get_data_mut();
    let Some(c) = st.l1cache.as_mut() else {
        return false;
    };
    let spec = c.state.spec();
    let priced = spec
        .range_of(addr)
        .is_some_and(|r| r.policy != crate::model::l1cache::Policy::Tcm);
    if !priced || insns.is_empty() {
        return false;
    }
    let spans = |unit: u32| -> Box<[u32]> {
        let mut out: Vec<u32> = Vec::new();
        for i in insns {
            let first = (i.addr / u64::from(unit)) as u32;
            let last = ((i.addr + u64::from(i.size) - 1) / u64::from(unit)) as u32;
            for n in first..=last {
                if out.last() != Some(&n) {
                    out.push(n);
                }
            }
        }
        out.into_boxed_slice()
    };
    let lines = BlockLines {
        lines: spans(spec.line_bytes),
        granules: spans(spec.fetch_bytes),
    };
    c.blocks.insert(addr as u32, lines);
    true
}

/// An access to the System Control Space that the caches answer: the ID
/// and maintenance registers (a read's value, or 0 for a write whose
/// write-backs are charged). `None`: the SCS answers it.
pub(super) fn register(uc: &mut Uc<'_>, addr: u32, size: u8, write: Option<u32>) -> Option<u64> {
    let st = uc.get_data_mut();
    let c = st.l1cache.as_mut()?;
    if size != 4 {
        return None;
    }
    match write {
        None => c.state.read_register(addr).map(u64::from),
        Some(value) => {
            let stall = c.state.write_register(addr, value)?;
            st.clock.cycles += u64::from(stall);
            Some(0)
        }
    }
}

/// A write of CCR: its IC and DC bits go to the caches, the rest to the
/// SCS (which keeps only the bits it models).
pub(super) fn ccr_write(uc: &mut Uc<'_>, addr: u32, write: Option<u32>) -> Option<u32> {
    let value = write?;
    match uc.get_data_mut().l1cache.as_mut() {
        Some(c) if addr == CCR => {
            c.state.set_ccr_bits(value);
            Some(value & !(CCR_IC | CCR_DC))
        }
        _ => Some(value),
    }
}

/// The IC and DC bits a read of CCR adds to the SCS's value.
pub(super) fn ccr_read_bits(uc: &Uc<'_>, addr: u32) -> u64 {
    match uc.get_data().l1cache.as_ref() {
        Some(c) if addr == CCR => u64::from(c.state.ccr_bits()),
        _ => 0,
    }
}
