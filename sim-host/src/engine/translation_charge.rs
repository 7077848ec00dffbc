//! The charge in the translation (ARCHITECTURE.md decision 2): Unicorn,
//! patched (`unicorn-patch/charge.patch`), asks for a block's price as it
//! translates the block, and the translated code then charges it at every
//! execution, on the fields of [`State`] themselves, exactly as
//! [`super::charge::charge_block`] would, with no call. The block hook
//! stays: the translated code calls it at or past `limits.limit` (the
//! slice's end, a poll, an event, a debugger's resume), and for every
//! execution of a block it must not charge itself (intercepted entry
//! points, unpriced instructions, a WFI). On a core with a branch
//! predictor the translated code first calls [`on_entry`] (`entrycall.patch`),
//! which resolves the block before's branch and notes this block's, as the
//! block hook would. A block in a modelled memory (a flash accelerator, L1
//! caches, an XIP cache: its price's `memory` flag) is charged inline too,
//! and the translated code then calls [`on_memory`] for its fetch stalls,
//! as the block hook would after charging it.

use super::blocks::Price;
use super::charge::block_price;
use super::state::{State, Uc};
use super::trail::TRAIL_SLOTS;
use std::ffi::c_void;
use std::mem::offset_of;
use std::panic::{catch_unwind, AssertUnwindSafe};
use unicorn_engine_sys::{uc_charge_layout, uc_charge_price, uc_charge_setup, uc_engine, uc_error};

/// The charge in the translation, turned on; off again when dropped.
pub(super) struct TranslationCharge {
    /// The handle the pricing callback prices through. Boxed: Unicorn
    /// keeps its address as the callback's user data.
    handle: Box<Uc<'static>>,
}

impl TranslationCharge {
    /// Turns it on: call before the first `emu_start`, with the block hook
    /// installed (and no other block hook).
    pub(super) fn install(emu: &mut Uc<'static>) -> Result<TranslationCharge, uc_error> {
        let mut charge = TranslationCharge {
            handle: Box::new(emu.clone()),
        };
        let base: *mut State = emu.get_data_mut();
        let layout = uc_charge_layout {
            base: base.cast(),
            cycles: offset(offset_of!(State, clock.cycles)),
            instructions: offset(offset_of!(State, clock.instructions)),
            limit: offset(offset_of!(State, limits.limit)),
            prev_fallthrough: offset(offset_of!(State, clock.prev_fallthrough)),
            prev_taken_extra: offset(offset_of!(State, clock.prev_taken_extra)),
            block_start: offset(offset_of!(State, clock.block_start)),
            trail: offset(offset_of!(State, trail.starts)),
            trail_mask: TRAIL_SLOTS as u64 - 1,
            price: Some(on_translated),
            user_data: std::ptr::from_mut(charge.handle.as_mut()).cast(),
            memory: Some(on_memory),
            entry: emu.get_data().predictor.as_ref().map(|_| on_entry as _),
        };
        // SAFETY: `base` is the engine's state, which lives (at one
        // address, in the engine's allocation) as long as the engine; the
        // fields at the offsets have the types the patch's header gives
        // them (u64; u32 for prev_taken_extra; `TRAIL_SLOTS` u32 for
        // the trail); the user data, the boxed handle, lives until `drop`
        // turns the charge off.
        match unsafe { uc_charge_setup(emu.get_handle(), &layout) } {
            uc_error::OK => Ok(charge),
            e => Err(e),
        }
    }
}

impl Drop for TranslationCharge {
    fn drop(&mut self) {
        // SAFETY: turning the charge off only clears the engine's flag.
        unsafe { uc_charge_setup(self.handle.get_handle(), std::ptr::null()) };
    }
}

fn offset(bytes: usize) -> i64 {
    bytes as i64
}

/// Whether the translated code may charge a block at this price itself:
/// what the block hook does besides the additions (intercepting, counting
/// unpriced runs, a WFI's sleep) needs the hook; the predictor
/// (`call_entry`) and a memory model's fetch stalls (`call_memory`) are
/// the calls the translated code makes. The last block's branch kind and
/// last instruction (`prev_branch`, `prev_last_insn`) are the predictor's
/// alone: the entry call keeps them. A block of no instructions (an
/// intercepted function's) would write over the trail's last entry.
fn charged_inline(st: &State, price: &Price) -> bool {
    price.intercept == 0
        && price.power == 0
        && !price.unpriced
        && price.instructions != 0
        && (price.branch == 0 || st.predictor.is_some())
}

/// What the entry call passes [`on_entry`]: the block's branch kind and
/// last instruction, for the predictor to resolve at the next block.
fn entry_info(price: &Price) -> u64 {
    u64::from(price.branch) << 32 | u64::from(price.last_insn)
}

/// # Safety
/// `handle` is the user data `TranslationCharge::install` registered, and
/// `out` the patch's price to fill. The state is reached through a second
/// handle while `emu_start` holds the first, as the block hook does.
unsafe extern "C" fn on_translated(
    _uc: *mut uc_engine,
    pc: u64,
    size: u32,
    out: *mut uc_charge_price,
    handle: *mut c_void,
) -> bool {
    let emu = unsafe { &mut *handle.cast::<Uc<'static>>() };
    // a panic must not unwind into C: the block's hook charges it instead,
    // and reports the panic if it happens again there
    let priced = catch_unwind(AssertUnwindSafe(|| {
        let price = block_price(emu, pc, size);
        (price, charged_inline(emu.get_data(), &price))
    }));
    let Ok((price, inline)) = priced else {
        return false;
    };
    let predicted = emu.get_data().predictor.is_some();
    let out = unsafe { &mut *out };
    *out = uc_charge_price {
        cycles: u64::from(price.cycles),
        instructions: u64::from(price.instructions),
        entry_penalty: u64::from(price.entry_penalty),
        fallthrough: u64::from(price.fallthrough),
        taken_extra: u64::from(price.taken_extra),
        inline_charge: u32::from(inline),
        call_memory: u32::from(inline && price.memory),
        call_entry: u32::from(inline && predicted),
        entry_info: entry_info(&price),
    };
    inline
}

/// # Safety
/// `handle` is the user data `TranslationCharge::install` registered. The
/// translated code calls this before charging a block, on a core with a
/// branch predictor: the counters still describe the block before. What
/// the block hook's `charge_block` does for the predictor: the block
/// before's branch resolved (its misprediction charged), this block's
/// noted. Nothing here panics.
unsafe extern "C" fn on_entry(pc: u64, info: u64, handle: *mut c_void) {
    let emu = unsafe { &mut *handle.cast::<Uc<'static>>() };
    let st = emu.get_data_mut();
    if st.clock.prev_branch != 0 {
        super::charge::predict(st, pc);
    }
    st.clock.prev_branch = (info >> 32) as u8;
    st.clock.prev_last_insn = info & 0xffff_ffff;
}

/// # Safety
/// `handle` is the user data `TranslationCharge::install` registered. The
/// translated code calls this right after charging a block whose price has
/// the `memory` flag: the fetch stalls the block hook's `charge_block`
/// would add at that point. Nothing here panics but an overflow of the
/// cycle count; a panic stops the run, as in the block hook.
unsafe extern "C" fn on_memory(pc: u64, handle: *mut c_void) {
    let emu = unsafe { &mut *handle.cast::<Uc<'static>>() };
    let fetched = catch_unwind(AssertUnwindSafe(|| {
        super::charge::memory_fetch(emu.get_data_mut(), pc)
    }));
    if let Err(panic) = fetched {
        let message = super::api::panic_text(panic.as_ref());
        super::state::stop_with(
            emu,
            super::api::Stop::Internal(format!(
                "the memory model failed at {pc:#010x}: {message} (a bug of sim-host)"
            )),
        );
    }
}
