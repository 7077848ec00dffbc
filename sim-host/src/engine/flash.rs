//! The flash accelerator in the engine (`model::memsys`): its control
//! register (FLASH_ACR) mapped at the board's address, the lines each
//! block's instructions are in (found when the block is priced), the
//! fetch stalls charged once per executed block on a cold path that only
//! blocks in the accelerated flash take, and the data reads of that flash
//! seen by a read hook limited to its range (never writable RAM).
//!
//! A target without `[flash]` maps nothing, hooks nothing and prices no
//! block with the flag: it runs as before.

use super::api::{uc, MachineError};
use super::peripherals;
use super::state::{FlashModel, Uc};
use crate::model::memsys::FlashState;
use crate::model::target::Target;
use std::ffi::c_void;
use unicorn_engine::unicorn_const::HookType;
use unicorn_engine_sys::{uc_engine, uc_error, uc_hook, uc_hook_add, uc_hook_del};

/// Unicorn maps whole pages.
const PAGE: u64 = 0x1000;

/// The run's accelerator, when the target has one.
pub(super) fn state(target: &Target) -> Option<Box<FlashModel>> {
    let spec = target.flash.clone()?;
    Some(Box::new(FlashModel {
        state: FlashState::new(&spec),
        spec,
        blocks: rustc_hash::FxHashMap::default(),
    }))
}

/// Maps FLASH_ACR's page (the data reads are [`DataReadHook`]'s).
pub(super) fn map(emu: &mut Uc<'static>) -> Result<(), MachineError> {
    let Some(spec) = emu.get_data().flash.as_ref().map(|f| f.spec.clone()) else {
        return Ok(());
    };
    let page = spec.control & !(PAGE - 1);
    let read = move |uc: &mut Uc<'_>, offset: u64, size: usize| -> u64 {
        access(uc, page + offset, size, None)
    };
    let write = move |uc: &mut Uc<'_>, offset: u64, size: usize, value: u64| {
        access(uc, page + offset, size, Some(value as u32));
    };
    uc(
        "map the flash interface registers",
        emu.mmio_map(page, PAGE, Some(read), Some(write)),
    )?;
    Ok(())
}

/// The read hook on the flash's range, registered through Unicorn's C API
/// as the block hook is (`block_hook.rs`: the crate's proxy upgrades a
/// `Weak` and drops an `Rc` at every call); removed when dropped.
pub(super) struct DataReadHook {
    /// The handle the hook charges through. Boxed: Unicorn keeps its
    /// address as the hook's user data.
    handle: Box<Uc<'static>>,
    id: uc_hook,
}

impl DataReadHook {
    /// Hooks the data reads of the accelerated flash, if the target has one.
    pub(super) fn install(emu: &Uc<'static>) -> Result<Option<DataReadHook>, MachineError> {
        let Some((start, end)) = emu
            .get_data()
            .flash
            .as_ref()
            .map(|f| (f.spec.start, f.spec.end))
        else {
            return Ok(None);
        };
        let mut hook = DataReadHook {
            handle: Box::new(emu.clone()),
            id: 0,
        };
        let callback: unsafe extern "C" fn(*mut uc_engine, u32, u64, u32, i64, *mut c_void) =
            on_read;
        // SAFETY: the callback has the C signature of a memory hook, and its
        // user data, the boxed handle, lives until `drop` removes the hook.
        let err = unsafe {
            uc_hook_add(
                emu.get_handle(),
                &mut hook.id,
                HookType::MEM_READ.0 as i32,
                callback as *mut c_void,
                std::ptr::from_mut(hook.handle.as_mut()).cast(),
                start,
                end - 1,
            )
        };
        match err {
            uc_error::OK => Ok(Some(hook)),
            e => Err(MachineError::Unicorn {
                what: "hook the flash's data reads".into(),
                error: e,
            }),
        }
    }
}

impl Drop for DataReadHook {
    fn drop(&mut self) {
        // SAFETY: the hook was added to this engine, which the handle keeps
        // open.
        unsafe { uc_hook_del(self.handle.get_handle(), self.id) };
    }
}

/// # Safety
/// `handle` is the user data `DataReadHook::install` registered (see
/// `block_hook::on_block` for how the state is reached). Nothing here
/// panics but an arithmetic overflow of the cycle count; a panic is caught
/// all the same, as in the block hook.
unsafe extern "C" fn on_read(
    _uc: *mut uc_engine,
    _kind: u32,
    addr: u64,
    _size: u32,
    _value: i64,
    handle: *mut c_void,
) {
    let emu = unsafe { &mut *handle.cast::<Uc<'static>>() };
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| data_read(emu, addr)));
    if let Err(panic) = read {
        let message = super::api::panic_text(panic.as_ref());
        super::state::stop_with(
            emu,
            super::api::Stop::Internal(format!(
                "the flash's read hook failed at {addr:#010x}: {message} (a bug of sim-host)"
            )),
        );
    }
}

/// One access to FLASH_ACR's page: the register itself, 32-bit.
fn access(uc: &mut Uc<'_>, addr: u64, size: usize, write: Option<u32>) -> u64 {
    let st = uc.get_data_mut();
    let Some(flash) = st.flash.as_mut() else {
        return 0;
    };
    if addr != flash.spec.control || size != 4 {
        return peripherals::beside_modelled(
            uc,
            addr,
            size,
            write.is_some(),
            "beside FLASH_ACR (the one flash register modelled, 32-bit accesses only)",
        );
    }
    match write {
        None => u64::from(flash.state.acr()),
        Some(value) => {
            flash.state.write_acr(value);
            0
        }
    }
}

/// A data read of the flash: its stall charged now.
fn data_read(uc: &mut Uc<'_>, addr: u64) {
    let st = uc.get_data_mut();
    if let Some(flash) = st.flash.as_mut() {
        let line = flash.spec.line(addr);
        st.clock.cycles += u64::from(flash.state.read_data(line));
    }
}

/// A block in the accelerated flash executes: its fetch stalls charged.
#[cold]
#[inline(never)]
pub(super) fn fetch(st: &mut super::state::State, addr: u64) {
    if let Some(flash) = st.flash.as_mut() {
        if let Some(lines) = flash.blocks.get(&(addr as u32)) {
            st.clock.cycles += u64::from(flash.state.fetch_block(lines));
        }
    }
}
