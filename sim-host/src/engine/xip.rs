//! The XIP cache in the engine (`model::xip`): the RP2040's XIP_CTRL,
//! FLUSH and STAT, or the RP2350's XIP_CTRL and STAT and its cache
//! maintenance window, mapped at the board's addresses, the flash's image
//! copied into its aliases, the lines each block's instructions touch (found
//! when the block is priced), the fetch stalls charged once per executed
//! block on the cold path that only flagged blocks take, and the data
//! reads of the four windows seen by a read hook limited to them (never
//! writable RAM).
//!
//! A target without `[xip]` maps nothing, hooks nothing and flags no
//! block: it runs as before.

use super::api::{uc, MachineError};
use super::mmio::placed_access;
use super::peripherals;
use super::state::stop_with;
use super::state::{State, Uc};
use super::stop::fault_at;
use crate::image::elf::GuestImage;
use crate::model::target::Target;
use crate::model::xip::rp2350::{self, MAINTENANCE_BYTES};
use crate::model::xip::run::XipModel;
use crate::model::xip::{FLUSH_OFFSET, STAT_OFFSET, STAT_VALUE};

/// Unicorn maps whole pages.
const PAGE: u64 = 0x1000;

/// The run's XIP cache, when the target has one.
pub(super) fn state(target: &Target) -> Option<Box<XipModel>> {
    Some(Box::new(XipModel::new(target.xip.clone()?)))
}

/// Maps the control registers' page (the windows' data reads are hooked
/// by `model_hooks`).
pub(super) fn map(emu: &mut Uc<'static>) -> Result<(), MachineError> {
    let Some(spec) = emu.get_data().xip.as_ref().map(|x| x.spec.clone()) else {
        return Ok(());
    };
    let page = spec.control & !(PAGE - 1);
    let registers = if spec.rp2350.is_some() {
        access_rp2350
    } else {
        access
    };
    let read = move |uc: &mut Uc<'_>, offset: u64, size: usize| -> u64 {
        registers(uc, page + offset, size, None)
    };
    let write = move |uc: &mut Uc<'_>, offset: u64, size: usize, value: u64| {
        registers(uc, page + offset, size, Some(value as u32));
    };
    uc(
        "map the XIP control registers",
        emu.mmio_map(page, PAGE, Some(read), Some(write)),
    )?;
    if let Some(r) = &spec.rp2350 {
        map_maintenance(emu, r.maintenance)?;
    }
    Ok(())
}

/// The RP2350's cache maintenance window: a write is an operation, a read
/// is refused.
fn map_maintenance(emu: &mut Uc<'static>, base: u64) -> Result<(), MachineError> {
    let read = move |uc: &mut Uc<'_>, offset: u64, size: usize| -> u64 {
        let what = "read of the XIP cache maintenance window (it takes writes only)";
        refuse(uc, base + offset, size, false, what.into());
        0
    };
    let write = move |uc: &mut Uc<'_>, offset: u64, size: usize, _value: u64| {
        let st = uc.get_data_mut();
        let Some(xip) = st.xip.as_mut() else {
            return;
        };
        if let Err(what) = xip.state.maintain(offset) {
            let what = format!("XIP cache maintenance: {what}");
            refuse(uc, base + offset, size, true, what);
        }
    };
    uc(
        "map the XIP cache maintenance window",
        emu.mmio_map(base, MAINTENANCE_BYTES, Some(read), Some(write)),
    )?;
    Ok(())
}

/// What the model does not have stops the run, named (also with
/// `--peripherals ignore`: it is the cache's, not a peripheral's).
fn refuse(uc: &mut Uc<'_>, addr: u64, size: usize, write: bool, what: String) {
    let verb = if write { "write" } else { "read" };
    let kind = format!("{verb} ({size} bytes): {what},");
    let pc = placed_access(uc, addr).pc;
    let stop = fault_at(uc, pc, kind, Some(addr));
    stop_with(uc, stop);
}

/// One access to the RP2350's XIP_CTRL page: XIP_CTRL and STAT, 32-bit.
/// The counters and the streaming registers beside them are refused.
fn access_rp2350(uc: &mut Uc<'_>, addr: u64, size: usize, write: Option<u32>) -> u64 {
    let st = uc.get_data_mut();
    let Some(xip) = st.xip.as_mut() else {
        return 0;
    };
    let offset = addr.wrapping_sub(xip.spec.control);
    if size != 4 || ![0, rp2350::STAT_OFFSET].contains(&offset) {
        let what = "beside XIP_CTRL and STAT (the XIP registers modelled, 32-bit accesses only)";
        refuse(uc, addr, size, write.is_some(), what.into());
        return 0;
    }
    match (offset, write) {
        (0, None) => u64::from(xip.state.ctrl()),
        (0, Some(v)) => {
            if let Err(bit) = xip.state.write_ctrl_rp2350(v) {
                let what = format!("XIP_CTRL.{bit} set: its effect is not modelled");
                refuse(uc, addr, size, true, what);
            }
            0
        }
        (_, None) => u64::from(rp2350::STAT_VALUE),
        // STAT is read only
        (_, Some(_)) => 0,
    }
}

/// The flash's image, loaded at the cached window, copied into the three
/// aliases (the same flash seen at four addresses; the windows are read
/// only, so the copies never differ).
pub(super) fn load_aliases(emu: &mut Uc<'static>, image: &GuestImage) -> Result<(), MachineError> {
    let Some(spec) = emu.get_data().xip.as_ref().map(|x| x.spec.clone()) else {
        return Ok(());
    };
    let (start, end, _) = spec.windows[0];
    for seg in image
        .segments
        .iter()
        .filter(|s| (start..end).contains(&s.load_addr))
    {
        for &(alias, _, _) in &spec.windows[1..] {
            uc(
                &format!(
                    "copy segment {} into the XIP alias at {alias:#x}",
                    seg.index
                ),
                emu.mem_write(alias + (seg.load_addr - start), &seg.data),
            )?;
        }
    }
    Ok(())
}

/// One access to the control registers' page: XIP_CTRL, FLUSH and STAT,
/// 32-bit.
fn access(uc: &mut Uc<'_>, addr: u64, size: usize, write: Option<u32>) -> u64 {
    let st = uc.get_data_mut();
    let Some(xip) = st.xip.as_mut() else {
        return 0;
    };
    let offset = addr.wrapping_sub(xip.spec.control);
    let modelled = size == 4 && [0, FLUSH_OFFSET, STAT_OFFSET].contains(&offset);
    if !modelled {
        return peripherals::beside_modelled(
            uc,
            addr,
            size,
            write.is_some(),
            "beside XIP_CTRL, FLUSH and STAT (the XIP registers modelled, 32-bit accesses only)",
        );
    }
    match (offset, write) {
        (0, None) => u64::from(xip.state.ctrl()),
        (0, Some(v)) => {
            xip.state.write_ctrl(v);
            0
        }
        (FLUSH_OFFSET, Some(v)) => {
            xip.state.write_flush(v);
            0
        }
        // FLUSH reads 0 once the (instant) flush is done; STAT is constant
        (FLUSH_OFFSET, None) => 0,
        (_, None) => u64::from(STAT_VALUE),
        // STAT is read only
        (_, Some(_)) => 0,
    }
}

/// A data read of a window: its stall charged now.
pub(super) fn data_access(uc: &mut Uc<'_>, addr: u64, size: u32, _write: bool) {
    let st = uc.get_data_mut();
    if let Some(xip) = st.xip.as_mut() {
        st.clock.cycles += u64::from(xip.read(addr, size, st.clock.cycles));
    }
}

/// A block in an XIP window executes: its fetch stalls charged.
#[cold]
#[inline(never)]
pub(super) fn fetch(st: &mut State, addr: u64) {
    if let Some(xip) = st.xip.as_mut() {
        st.clock.cycles += u64::from(xip.fetch(addr, st.clock.cycles));
    }
}
