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
use crate::image::elf::GuestImage;
use crate::model::memsys::FlashState;
use crate::model::target::Target;

/// The run's accelerator, when the target has one.
pub(super) fn state(target: &Target) -> Option<Box<FlashModel>> {
    let spec = target.flash.clone()?;
    Some(Box::new(FlashModel {
        state: FlashState::new(&spec),
        spec,
        blocks: rustc_hash::FxHashMap::default(),
    }))
}

/// The F7's flash seen through two interfaces (`FlashSpec::mirror`): a
/// segment loaded in either region is copied into the other, so the same
/// bytes are at both addresses (both regions are read only: the copies
/// never differ).
pub(super) fn load_mirror(emu: &mut Uc<'static>, image: &GuestImage) -> Result<(), MachineError> {
    let Some(spec) = emu.get_data().flash.as_ref().map(|f| f.spec.clone()) else {
        return Ok(());
    };
    let Some((_, mirror)) = spec.mirror else {
        return Ok(());
    };
    let size = spec.end - spec.start;
    for seg in &image.segments {
        let target = if spec.contains(seg.load_addr) {
            mirror + (seg.load_addr - spec.start)
        } else if (mirror..mirror + size).contains(&seg.load_addr) {
            spec.start + (seg.load_addr - mirror)
        } else {
            continue;
        };
        uc(
            &format!(
                "copy segment {} into the flash's other view at {target:#x}",
                seg.index
            ),
            emu.mem_write(target, &seg.data),
        )?;
    }
    Ok(())
}

/// One access to FLASH_ACR's page: the register itself, 32-bit.
pub(super) fn access(uc: &mut Uc<'_>, addr: u64, size: usize, write: Option<u32>) -> u64 {
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
            let (latency, required) = (flash.state.latency(), flash.state.required());
            if latency < required {
                let pc = super::mmio::placed_access(uc, addr).pc;
                let hz = uc.get_data().core_clock.hz();
                super::mmio::warn_at(
                    uc,
                    pc,
                    format!(
                        "FLASH_ACR.LATENCY set to {latency} at a core clock of {}: the flash's \
                         wait-state table requires {required} there ([flash] wait_states)",
                        crate::model::clocks::format_hz(hz)
                    ),
                );
            }
            0
        }
    }
}

/// A data read of the flash (`model_hooks`): its stall charged now.
pub(super) fn data_access(uc: &mut Uc<'_>, addr: u64, _size: u32, _write: bool) {
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
