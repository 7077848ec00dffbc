//! The block hook's work: charge a block's cached price (pricing it the
//! first time), end the slice at its limit, poll for Ctrl-C and the status
//! line, and intercept ARP stubs.

use super::api::Stop;
use super::blocks::Price;
use super::intercept::intercept;
use super::interrupts::take_due;
use super::pricing::price_at;
use super::state::{stop_with, Uc};
use crate::host::arp_host::ENTRY_POINTS;
use std::sync::atomic::Ordering;

/// The block hook: charges the block's cached price (pricing it the first
/// time), ends the slice at its limit, and intercepts ARP stubs. Inlined
/// into the C callback (`block_hook.rs`): as a call of its own the whole
/// run became 5-20 % slower or faster with unrelated changes (code
/// placement).
#[inline(always)]
pub(super) fn charge_block(uc: &mut Uc<'_>, addr: u64, size: u32) {
    let price = block_price(uc, addr, size);
    let st = uc.get_data_mut();
    // Stop *before* charging: a block whose hook stops the
    // emulation does not execute now; Unicorn runs it again on
    // the next emu_start, and it is charged then (charging it
    // here too would count it twice at every thread switch).
    if st.clock.cycles >= st.limits.limit && !at_slice_boundary(uc, addr) {
        return;
    }
    let st = uc.get_data_mut();
    if st.clock.prev_fallthrough != addr {
        st.clock.cycles += u64::from(st.clock.prev_taken_extra) + u64::from(price.entry_penalty);
    }
    // an intercepted function's block (priced at zero, no fall-through)
    // is never predicted: its call costs the guest nothing more
    if st.clock.prev_branch != 0 && price.fallthrough != u32::MAX {
        predict(st, addr);
    }
    st.clock.cycles += u64::from(price.cycles);
    st.clock.instructions += u64::from(price.instructions);
    if price.instructions != 0 {
        st.trail.record(st.clock.instructions, addr);
    }
    st.clock.block_start = addr;
    st.clock.prev_fallthrough = u64::from(price.fallthrough);
    st.clock.prev_taken_extra = u32::from(price.taken_extra);
    st.clock.prev_last_insn = u64::from(price.last_insn);
    st.clock.prev_branch = price.branch;
    if price.unpriced {
        count_unpriced(st, addr);
    }
    if price.memory {
        memory_fetch(st, addr);
    }
    if price.power != 0 {
        super::sleep::note(st, price.power, price.last_insn);
    }
    if price.intercept != 0 {
        intercept(uc, ENTRY_POINTS[usize::from(price.intercept - 1)].1, false);
    }
}

/// A block in a modelled memory executes: each model's fetch stalls for
/// it (from the block hook, or from the translated code that charged it:
/// `translation_charge::on_memory`).
#[cold]
#[inline(never)]
pub(super) fn memory_fetch(st: &mut super::state::State, addr: u64) {
    super::flash::fetch(st, addr);
    super::l1cache::fetch(st, addr);
    super::xip::fetch(st, addr);
}

/// The block's cached price, priced and cached the first time (by the
/// block hook, or as the block is translated: `translation_charge`).
#[inline(always)]
pub(super) fn block_price(uc: &mut Uc<'_>, addr: u64, size: u32) -> Price {
    if let Some(p) = uc.get_data().cache.hit(addr as u32) {
        return *p;
    }
    cached_or_priced(uc, addr, size)
}

/// A block not in its slot: from the map of priced blocks, else priced
/// now.
#[cold]
#[inline(never)]
fn cached_or_priced(uc: &mut Uc<'_>, addr: u64, size: u32) -> Price {
    if let Some(p) = uc.get_data_mut().cache.fill(addr as u32) {
        return p;
    }
    let p = price_at(uc, addr, size);
    uc.get_data_mut().cache.insert(addr as u32, p);
    p
}

/// The branch predictor learns where the last block's control-flow
/// instruction went (here, `addr`) and its misprediction is charged. A
/// call of an intercepted ARP stub is not resolved: the stub costs nothing,
/// and its return never runs.
#[cold]
pub(super) fn predict(st: &mut super::state::State, addr: u64) {
    let kind = crate::model::predictor::BranchKind::from_u8(st.clock.prev_branch);
    if let Some(p) = &mut st.predictor {
        let forwarded = st.clock.prev_branch & crate::model::predictor::FLAGS_FORWARDED != 0;
        let penalty = p.resolve_forwarded(
            kind,
            st.clock.prev_last_insn as u32,
            addr as u32,
            st.clock.prev_fallthrough as u32,
            forwarded,
        );
        st.clock.cycles += u64::from(penalty);
    }
}

/// One more execution of a block with unpriced instructions.
#[cold]
fn count_unpriced(st: &mut super::state::State, addr: u64) {
    if let Some((_, runs)) = st.unpriced.blocks.get_mut(&(addr as u32)) {
        *runs += 1;
    }
}

/// The block hook at a slice boundary (the clock reached `limit`): returns
/// whether the hook goes on to charge the block at `addr`. Not when it
/// stops the slice (the scheduler chooses) or the run (the cycle limit, or
/// Ctrl-C seen at a poll); nor for the rest of a block a debugger resumed
/// in, which was charged before the debugger stopped inside it (`limit` is
/// 0 until then).
#[cold]
pub(super) fn at_slice_boundary(uc: &mut Uc<'_>, addr: u64) -> bool {
    let st = uc.get_data_mut();
    if let Some(resumed_at) = st.debug.resume.take() {
        st.limits.limit = st.debug.limit;
        if resumed_at == addr {
            return false;
        }
        if st.clock.cycles < st.limits.limit {
            return true;
        }
    }
    if st.clock.cycles < st.limits.slice_limit {
        // an exception taken here runs first; this block after its return
        return poll(uc) && !take_due(uc, addr);
    }
    if st.clock.cycles >= st.limits.max_cycles {
        let limit = st.limits.max_cycles;
        stop_with(uc, Stop::CycleLimit(limit));
    } else {
        let _ = uc.emu_stop();
    }
    false
}

/// A poll inside a slice: stops the run at Ctrl-C, hands the status line a
/// snapshot when it asks, and sets the next poll. Returns whether the run
/// goes on.
pub(super) fn poll(uc: &mut Uc<'_>) -> bool {
    let st = uc.get_data_mut();
    if let Some(signal) = st
        .limits
        .interrupt
        .as_ref()
        .map(|f| f.load(Ordering::Relaxed))
    {
        if signal != 0 {
            stop_with(uc, Stop::Interrupted(signal));
            return false;
        }
    }
    if st.limits.progress.as_ref().is_some_and(|p| p.wanted()) {
        st.publish_progress();
    }
    st.limits.limit = st.limits.next(st.clock.cycles);
    true
}
