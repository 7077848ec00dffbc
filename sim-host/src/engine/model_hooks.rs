//! The memory models' data hooks (`flash`, `l1cache`, `xip`): one hook per
//! range a model prices, each limited to that range (with
//! `unicorn-patch/memhook.patch`, only its pages leave Unicorn's fast
//! path), registered through Unicorn's C API as the block hook is
//! (`block_hook.rs`: the unicorn-engine crate's proxy upgrades a `Weak`
//! and drops an `Rc` at every call). Installed only in counting runs: a
//! run that counts nothing has no stall to charge.

use super::api::{panic_text, MachineError, Stop};
use super::state::{stop_with, State, Uc};
use std::ffi::c_void;
use unicorn_engine::unicorn_const::{HookType, MemType};
use unicorn_engine_sys::{uc_engine, uc_error, uc_hook, uc_hook_add, uc_hook_del, uc_hook_no_sync};

/// A model's charge for one data access: address, size in bytes,
/// `write` (a store).
type OnAccess = fn(&mut Uc<'_>, u64, u32, bool);

/// What a hook calls, and the engine handle it calls it with. Boxed:
/// Unicorn keeps its address as the hook's user data.
struct HookData {
    handle: Uc<'static>,
    on_access: OnAccess,
}

/// An installed model hook; removed from the engine when dropped.
pub(super) struct ModelHook {
    data: Box<HookData>,
    id: uc_hook,
}

/// One range a model hooks: [start, end), the accesses, the charge.
struct Range {
    start: u64,
    end: u64,
    kinds: HookType,
    on_access: OnAccess,
    what: &'static str,
}

/// The ranges every model of the target prices data accesses in.
fn ranges(st: &State) -> Vec<Range> {
    let mut out = Vec::new();
    if let Some(f) = &st.flash {
        out.push(Range {
            start: f.spec.start,
            end: f.spec.end,
            kinds: HookType::MEM_READ,
            on_access: super::flash::data_access,
            what: "hook the flash's data reads",
        });
    }
    if let Some(c) = &st.l1cache {
        out.extend(c.state.spec().priced_ranges().map(|r| Range {
            start: r.start,
            end: r.end,
            kinds: HookType::MEM_READ | HookType::MEM_WRITE,
            on_access: super::l1cache::data_access,
            what: "hook the cached ranges' data accesses",
        }));
    }
    if let Some(x) = &st.xip {
        let (start, end) = x.spec.span();
        out.push(Range {
            start,
            end,
            kinds: HookType::MEM_READ,
            on_access: super::xip::data_access,
            what: "hook the XIP windows' data reads",
        });
    }
    out
}

/// Hooks every range the target's memory models price data accesses in.
pub(super) fn install(emu: &Uc<'static>) -> Result<Vec<ModelHook>, MachineError> {
    ranges(emu.get_data())
        .into_iter()
        .map(|r| ModelHook::install(emu, &r))
        .collect()
}

impl ModelHook {
    fn install(emu: &Uc<'static>, range: &Range) -> Result<ModelHook, MachineError> {
        let mut hook = ModelHook {
            data: Box::new(HookData {
                handle: emu.clone(),
                on_access: range.on_access,
            }),
            id: 0,
        };
        let callback: unsafe extern "C" fn(*mut uc_engine, MemType, u64, u32, i64, *mut c_void) =
            on_access;
        // SAFETY: the callback has the C signature of a memory hook, and its
        // user data, the boxed `HookData`, lives until `drop` removes the
        // hook.
        let err = unsafe {
            uc_hook_add(
                emu.get_handle(),
                &mut hook.id,
                range.kinds.0 as i32,
                callback as *mut c_void,
                std::ptr::from_mut(hook.data.as_mut()).cast(),
                range.start,
                range.end - 1,
            )
        };
        // the models read no register: Unicorn need not restore the
        // guest's PC before each call (`hooksync.patch`)
        let err = match err {
            // SAFETY: `hook.id` is the hook just added to this engine.
            uc_error::OK => unsafe { uc_hook_no_sync(emu.get_handle(), hook.id) },
            error => error,
        };
        match err {
            uc_error::OK => Ok(hook),
            error => Err(MachineError::Unicorn {
                what: range.what.into(),
                error,
            }),
        }
    }
}

impl Drop for ModelHook {
    fn drop(&mut self) {
        // SAFETY: the hook was added to this engine, which the handle keeps
        // open.
        unsafe { uc_hook_del(self.data.handle.get_handle(), self.id) };
    }
}

/// # Safety
/// `data` is the user data `ModelHook::install` registered (see
/// `block_hook::on_block` for how the state is reached). A panic is
/// caught, as in the block hook, and stops the run.
unsafe extern "C" fn on_access(
    _uc: *mut uc_engine,
    kind: MemType,
    addr: u64,
    size: u32,
    _value: i64,
    data: *mut c_void,
) {
    let data = unsafe { &mut *data.cast::<HookData>() };
    let write = kind == MemType::WRITE;
    let (emu, charge) = (&mut data.handle, data.on_access);
    let charged = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        charge(emu, addr, size, write)
    }));
    if let Err(panic) = charged {
        let message = panic_text(panic.as_ref());
        stop_with(
            emu,
            Stop::Internal(format!(
                "a memory model's data hook failed at {addr:#010x}: {message} (a bug of sim-host)"
            )),
        );
    }
}
