//! The block hook, registered through Unicorn's C API rather than the
//! unicorn-engine crate's `add_block_hook`: the crate's proxy upgrades a
//! `Weak` to the engine and drops the `Rc` again at every block, and that
//! alone was a fifth of a run of short blocks (BENCHMARKS.md, "The
//! per-block hook"). This hook holds a handle on the engine instead, for
//! as long as it is installed.

use super::api::Stop;
use super::state::{stop_with, Uc};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use unicorn_engine::HookType;
use unicorn_engine_sys::{uc_engine, uc_error, uc_hook, uc_hook_add, uc_hook_del};

/// The installed block hook ([`super::charge::charge_block`] at every block);
/// removed from the engine when dropped.
pub(super) struct BlockHook {
    /// The handle the hook charges through. Boxed: Unicorn keeps its
    /// address as the hook's user data.
    handle: Box<Uc<'static>>,
    id: uc_hook,
}

impl BlockHook {
    pub(super) fn install(emu: &Uc<'static>) -> Result<BlockHook, uc_error> {
        let mut hook = BlockHook {
            handle: Box::new(emu.clone()),
            id: 0,
        };
        let callback: unsafe extern "C" fn(*mut uc_engine, u64, u32, *mut c_void) = on_block;
        // SAFETY: the callback has the C signature of a block hook, and its
        // user data, the boxed handle, lives until `drop` removes the hook.
        let err = unsafe {
            uc_hook_add(
                emu.get_handle(),
                &mut hook.id,
                HookType::BLOCK.0 as i32,
                callback as *mut c_void,
                std::ptr::from_mut(hook.handle.as_mut()).cast(),
                1u64,
                0u64,
            )
        };
        match err {
            uc_error::OK => Ok(hook),
            e => Err(e),
        }
    }
}

impl Drop for BlockHook {
    fn drop(&mut self) {
        // SAFETY: the hook was added to this engine, which the handle keeps
        // open.
        unsafe { uc_hook_del(self.handle.get_handle(), self.id) };
    }
}

/// # Safety
/// `handle` is the user data `BlockHook::install` registered: its boxed
/// engine handle. Like the crate's own hook proxies, the hook reaches the
/// engine's state through a second handle while `emu_start` holds the
/// first; the state is behind the crate's `UnsafeCell`.
///
/// A panic of sim-host's own code is caught here (it must not unwind into
/// C, where it would abort the process and lose data.arp): the run stops
/// with [`Stop::Internal`] naming it.
unsafe extern "C" fn on_block(_uc: *mut uc_engine, addr: u64, size: u32, handle: *mut c_void) {
    let emu = unsafe { &mut *handle.cast::<Uc<'static>>() };
    let charged = catch_unwind(AssertUnwindSafe(|| {
        super::charge::charge_block(emu, addr, size)
    }));
    if let Err(panic) = charged {
        let message = super::api::panic_text(panic.as_ref());
        stop_with(
            emu,
            Stop::Internal(format!(
                "the block hook failed at {addr:#010x}: {message} (a bug of sim-host)"
            )),
        );
    }
}
