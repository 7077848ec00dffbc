//! The vendor blocks of `host::devices` in the engine (issue 40): their
//! pages mapped as MMIO (shared, page by page, with the flash
//! accelerator's FLASH_ACR: an STM32's RCC and flash interface share a
//! page), each access placed at its instruction and handed to its block,
//! and what the block asks for carried out: UART bytes to the console,
//! warnings at the instruction, the core clock's changes on the run's
//! timeline (`State::core_clock`), and the flash's wait-state requirement
//! at the new clock.
//!
//! A target with no `[clocks]` and no `[[uart]]` maps nothing here.

use super::api::{uc, MachineError};
use super::mmio::{placed_access, warn_at};
use super::peripherals;
use super::state::{stop_with, DeviceOwner as Owner, DeviceRun, Uc};
use super::stop::fault_at;
use crate::host::devices::{self, ClockView, Device, Effects, FixedClocks, Now};
use crate::host::semihost::Console;
use crate::model::clocks::format_hz;
use crate::model::devices::ClockKind;
use crate::model::target::Target;

const PAGE: u64 = 0x1000;

/// The run's blocks, when the target lists any.
pub(super) fn state(target: &Target) -> Option<Box<DeviceRun>> {
    let tree = target.clocks.as_ref().map(devices::clock_tree);
    // the GPIO ports are answered as the UARTs are (gated, no clock of
    // their own): one list
    let uarts: Vec<Box<dyn Device>> = (target.uarts.iter().map(devices::uart::build))
        .chain(target.gpios.iter().map(devices::gpio))
        .collect();
    // the tree first: its blocks are looked up before the UARTs'
    let tree_blocks = tree.iter().flat_map(|t| t.blocks());
    let mut owners: Vec<_> = tree_blocks.map(|b| (b, Owner::Tree)).collect();
    for (i, u) in uarts.iter().enumerate() {
        owners.extend(u.blocks().into_iter().map(|b| (b, Owner::Uart(i))));
    }
    (tree.is_some() || !uarts.is_empty()).then(|| {
        Box::new(DeviceRun {
            tree,
            uarts,
            owners,
        })
    })
}

/// Maps the blocks' pages and FLASH_ACR's page, each once.
pub(super) fn map(emu: &mut Uc<'static>, target: &Target) -> Result<(), MachineError> {
    let mut pages = devices::pages(target);
    let flash_page = target.flash.as_ref().map(|f| f.control & !(PAGE - 1));
    pages.extend(flash_page);
    pages.sort_unstable();
    pages.dedup();
    for page in pages {
        let read = move |uc: &mut Uc<'_>, offset: u64, size: usize| -> u64 {
            route(uc, page + offset, size, None)
        };
        let write = move |uc: &mut Uc<'_>, offset: u64, size: usize, value: u64| {
            route(uc, page + offset, size, Some(value as u32));
        };
        uc(
            "map the board's modelled blocks",
            emu.mmio_map(page, PAGE, Some(read), Some(write)),
        )?;
        map_alias(emu, target, page)?;
    }
    Ok(())
}

/// The bit-band alias of a mapped page, if the target has bit-banding and
/// the page is in its region: each alias word reads or writes one bit.
fn map_alias(emu: &mut Uc<'static>, target: &Target, page: u64) -> Result<(), MachineError> {
    let Some(bb) = target.bit_band.clone() else {
        return Ok(());
    };
    if !(bb.region..bb.region + bb.size).contains(&page) {
        return Ok(());
    }
    let alias = bb.alias_of(page..page + PAGE);
    let (bb_read, bb_write) = (bb.clone(), bb);
    let start = alias.start;
    let read = move |uc: &mut Uc<'_>, offset: u64, _size: usize| -> u64 {
        let (byte, bit) = bb_read.target_of(start + offset).unwrap_or_default();
        bit_band(uc, start + offset, byte, bit, None)
    };
    let write = move |uc: &mut Uc<'_>, offset: u64, _size: usize, value: u64| {
        let (byte, bit) = bb_write.target_of(start + offset).unwrap_or_default();
        bit_band(uc, start + offset, byte, bit, Some(value & 1 != 0));
    };
    uc(
        "map the bit-band alias of the board's modelled blocks",
        emu.mmio_map(
            alias.start,
            alias.end - alias.start,
            Some(read),
            Some(write),
        ),
    )
}

/// An access to a bit-band alias word: a read gives bit `bit` of the byte
/// at `byte`; a write is a read-modify-write of the word holding it (ARM
/// DDI 0439D, Cortex-M4 TRM, 3.7 "Bit-banding"; RM0090 2.3.3: "writing to
/// a word in the alias region updates a single bit in the bit-band
/// region"). Both accesses are placed at the instruction that accessed
/// the alias word `alias`.
fn bit_band(uc: &mut Uc<'_>, alias: u64, byte: u64, bit: u8, write: Option<bool>) -> u64 {
    let (word, shift) = (byte & !3, (byte & 3) * 8 + u64::from(bit));
    let placed = placed_access(uc, alias);
    uc.get_data_mut().mmio.placed = Some((placed.pc, placed.cycles));
    let value = route(uc, word, 4, None);
    let answer = match write {
        None => value >> shift & 1,
        Some(set) => {
            let new = if set {
                value | 1 << shift
            } else {
                value & !(1 << shift)
            };
            route(uc, word, 4, Some(new as u32));
            0
        }
    };
    uc.get_data_mut().mmio.placed = None;
    answer
}

/// One access to a mapped page: its block, FLASH_ACR, or what is beside.
fn route(uc: &mut Uc<'_>, addr: u64, size: usize, write: Option<u32>) -> u64 {
    let st = uc.get_data();
    if let Some(owner) = st.devices.as_ref().and_then(|d| d.owner(addr)) {
        return access(uc, owner, addr, size, write);
    }
    if st
        .flash
        .as_ref()
        .is_some_and(|f| f.spec.control & !(PAGE - 1) == addr & !(PAGE - 1))
    {
        return super::flash::access(uc, addr, size, write);
    }
    peripherals::beside_modelled(
        uc,
        addr,
        size,
        write.is_some(),
        "beside the modelled blocks",
    )
}

/// An access to a block: placed at its instruction, answered, and what it
/// asked for carried out.
fn access(uc: &mut Uc<'_>, owner: Owner, addr: u64, size: usize, write: Option<u32>) -> u64 {
    let placed = placed_access(uc, addr);
    let (word, (mask, shift)) = (addr & !3, devices::lane(addr, size));
    let st = uc.get_data_mut();
    let now = Now {
        cycles: placed.cycles,
        picos: st.core_clock.picos_at(placed.cycles),
    };
    settle(uc, now, placed.pc);
    let st = uc.get_data_mut();
    let Some(run) = st.devices.as_mut() else {
        return 0;
    };
    let mut fx = Effects::default();
    let fixed = FixedClocks(st.core_clock.hz());
    let value = write.map(|v| v << shift);
    let result = match owner {
        Owner::Tree => match run.tree.as_mut() {
            Some(t) => answer(&mut **t, word, value, mask, now, &fixed, &mut fx),
            None => Ok(0),
        },
        Owner::Uart(i) => {
            let DeviceRun { tree, uarts, .. } = &mut **run;
            let clocks: &dyn ClockView = match tree.as_deref() {
                Some(t) => t,
                None => &fixed,
            };
            answer(&mut *uarts[i], word, value, mask, now, clocks, &mut fx)
        }
    };
    carry_out(uc, fx, placed.pc);
    if matches!(owner, Owner::Tree) && write.is_some() {
        follow_core_clock(uc, placed.cycles, placed.pc);
        follow_machine_timer(uc, placed.cycles);
    }
    match result {
        Ok(value) => u64::from((value & mask) >> shift),
        Err(devices::Refusal(kind)) => {
            let verb = if write.is_some() { "write" } else { "read" };
            let kind = format!("{verb} ({size} bytes): {kind},");
            let stop = fault_at(uc, placed.pc, kind, Some(addr));
            stop_with(uc, stop);
            0
        }
    }
}

/// A read, or a write of `value` (already in its lane).
fn answer(
    device: &mut dyn Device,
    word: u64,
    value: Option<u32>,
    mask: u32,
    now: Now,
    clocks: &dyn ClockView,
    fx: &mut Effects,
) -> Result<u32, devices::Refusal> {
    match value {
        None => device.read(word, now, clocks, fx),
        Some(v) => device.write(word, v, mask, now, clocks, fx).map(|()| 0),
    }
}

/// A switch the clock tree made when its source became ready: put on the
/// timeline at the cycle it happened.
fn settle(uc: &mut Uc<'_>, now: Now, pc: u64) {
    let st = uc.get_data_mut();
    let Some(tree) = st.devices.as_mut().and_then(|d| d.tree.as_mut()) else {
        return;
    };
    if let Some(picos) = tree.settle(now) {
        let cycle = st.core_clock.cycle_at_picos(picos).min(now.cycles);
        follow_core_clock(uc, cycle, pc);
        follow_machine_timer(uc, cycle);
    }
}

/// The RISC-V machine timer on an RP2350 counts TICKS.RISCV's tick
/// (datasheet 3.1.8, 8.5): its rate follows the tick generator and the
/// core clock from the cycle they change (stopped while the generator
/// is). Other trees leave the timer at its target-file rate.
fn follow_machine_timer(uc: &mut Uc<'_>, cycle: u64) {
    let st = uc.get_data_mut();
    if !st
        .target
        .clocks
        .as_ref()
        .is_some_and(|c| c.kind == ClockKind::Rp2350)
    {
        return;
    }
    let Some(tree) = st.devices.as_ref().and_then(|d| d.tree.as_ref()) else {
        return;
    };
    let (core, tick) = (tree.core_hz(), tree.clock_hz("tick_riscv").unwrap_or(0));
    let Some(timer) = st.machine_timer.as_mut() else {
        return;
    };
    if timer.device.retime(cycle, core, tick) {
        st.look_at_next_boundary();
    }
}

/// The clock tree's core clock onto the timeline, if it changed.
fn follow_core_clock(uc: &mut Uc<'_>, cycle: u64, pc: u64) {
    let st = uc.get_data_mut();
    let Some(tree) = st.devices.as_ref().and_then(|d| d.tree.as_ref()) else {
        return;
    };
    let (hz, source) = (tree.core_hz(), tree.core_source());
    if hz == st.core_clock.hz() {
        return;
    }
    if st.core_clock.change(cycle, pc, hz, source).is_err() {
        let kind = format!(
            "the core clock changed more than {} times (the cap on a run's clock changes);",
            crate::model::clocks::MAX_CLOCK_CHANGES
        );
        let stop = fault_at(uc, pc, kind, None);
        return stop_with(uc, stop);
    }
    flash_at_new_clock(uc, hz, pc);
}

/// The flash's wait-state requirement at the new clock, and a warning
/// when FLASH_ACR.LATENCY is below it.
fn flash_at_new_clock(uc: &mut Uc<'_>, hz: u64, pc: u64) {
    let st = uc.get_data_mut();
    let Some(flash) = st.flash.as_mut() else {
        return;
    };
    let (table, mask) = (&flash.spec.wait_state_table, flash.spec.kind.latency_mask());
    let Ok(required) = crate::model::memsys::required_wait_states(table, hz, mask) else {
        // above the table: the clock tree has warned of the clock itself
        return;
    };
    flash.state.set_required(required);
    let latency = flash.state.latency();
    if latency < required {
        let message = format!(
            "the core clock became {} with FLASH_ACR.LATENCY = {latency}: the flash's \
             wait-state table ({} [flash] wait_states) requires {required} at that clock; \
             firmware raises LATENCY before switching to a faster clock",
            format_hz(hz),
            st.target.name
        );
        warn_at(uc, pc, message);
    }
}

/// Effects of an access: console bytes, warnings.
fn carry_out(uc: &mut Uc<'_>, fx: Effects, pc: u64) {
    if !fx.console.is_empty() {
        uc.get_data_mut().io.console.stdout(&fx.console);
    }
    for message in fx.warnings {
        warn_at(uc, pc, message);
    }
}
