//! RISC-V's machine timer in the engine: its registers (`host::mtimer`,
//! RP2350's SIO or SiFive's CLINT) mapped as MMIO at the board's address,
//! and the interrupts it raises, taken as the core takes a trap
//! (`traps`): the machine timer interrupt (mcause 0x80000007, enabled by
//! mie.MTIE) and, on the CLINT, the machine software interrupt of msip
//! (0x80000003, mie.MSIE), which goes first when both are pending
//! (privileged spec 3.1.9: MEI, MSI, MTI in decreasing priority).
//!
//! Like the Cortex-M exceptions (`interrupts`), an interrupt is taken at
//! the boundary of the block during which it became pending, and the
//! handler's cycles count in the sections that are open. While its
//! handler runs (until interrupts are enabled again, by its `mret` or by
//! the handler) no interrupt is taken. `mip.MTIP` and `mip.MSIP` are not
//! driven (QEMU answers a read of `mip` with its own bits).

use super::api::{uc, MachineError};
use super::mmio::placed_access;
use super::peripherals;
use super::state::{TimerState, Uc};
use super::traps;
use crate::host::mtimer::{MachineTimer, TimerRegister};
use crate::model::devices::ClockKind;
use crate::model::target::Target;
use unicorn_engine::RegisterRISCV;

/// mie.MSIE and mie.MTIE, and their interrupts' codes (3.1.9).
const MIE_MSIE: u64 = 1 << 3;
const MIE_MTIE: u64 = 1 << 7;
const SOFTWARE: u64 = 3;
const TIMER: u64 = 7;

/// The timer of a RISC-V board that has one.
pub(super) fn state(target: &Target) -> Option<Box<TimerState>> {
    let timer = target.machine_timer()?;
    let mut device = MachineTimer::new(timer.kind, target.clock_hz, timer.tick_hz);
    // an RP2350's tree: the tick TICKS.RISCV gives at the start (none at
    // reset; `devices::follow_machine_timer` follows its changes)
    if let Some(c) = target
        .clocks
        .as_ref()
        .filter(|c| c.kind == ClockKind::Rp2350)
    {
        let tick = crate::host::devices::clock_tree(c).clock_hz("tick_riscv");
        device.retime(0, target.clock_hz, tick.unwrap_or(0));
    }
    Some(Box::new(TimerState {
        device,
        base: timer.base,
    }))
}

/// Maps the timer's pages: its registers answered here, the rest of the
/// pages as the peripheral they lie in.
pub(super) fn map(emu: &mut Uc<'static>) -> Result<(), MachineError> {
    let Some(pages) = emu.get_data().target.machine_timer().map(|t| t.pages()) else {
        return Ok(());
    };
    let start = pages.start;
    let read = move |uc: &mut Uc<'_>, offset: u64, size: usize| -> u64 {
        access(uc, start + offset, size, None)
    };
    let write = move |uc: &mut Uc<'_>, offset: u64, size: usize, value: u64| {
        access(uc, start + offset, size, Some(value as u32));
    };
    uc(
        "map the machine timer",
        emu.mmio_map(start, pages.end - start, Some(read), Some(write)),
    )
}

/// One access to the timer's pages.
fn access(uc: &mut Uc<'_>, addr: u64, size: usize, write: Option<u32>) -> u64 {
    let (base, kind) = uc
        .get_data()
        .machine_timer
        .as_ref()
        .map_or((0, None), |t| (t.base, Some(t.device.kind())));
    let register = kind.and_then(|kind| TimerRegister::at(kind, addr.checked_sub(base)?));
    let Some(register) = register.filter(|_| size == 4) else {
        return peripherals::beside_modelled(
            uc,
            addr,
            size,
            write.is_some(),
            "beside the machine timer's registers (32-bit accesses only)",
        );
    };
    let now = placed_access(uc, addr).cycles;
    let st = uc.get_data_mut();
    let Some(timer) = st.machine_timer.as_mut() else {
        return 0;
    };
    match write {
        None => u64::from(timer.device.read(register, now)),
        Some(value) => {
            timer.device.write(register, value, now);
            // a moved compare or count, msip: look at the next block boundary
            st.look_at_next_boundary();
            0
        }
    }
}

/// At a block boundary: ends a finished handler, takes the interrupt
/// that is pending and enabled in front of the block at `addr`, and sets
/// when to look next. Returns whether one was taken.
pub(super) fn take_due(uc: &mut Uc<'_>, addr: u64) -> bool {
    let mstatus = uc.reg_read(RegisterRISCV::MSTATUS).unwrap_or(0);
    if traps::interrupt_handler_runs(uc, addr, mstatus) {
        // look again at the handler's next block
        let st = uc.get_data_mut();
        let now = st.clock.cycles;
        st.limits.look_every_block(now);
        return false;
    }
    let st = uc.get_data_mut();
    let now = st.clock.cycles;
    let Some(timer) = st.machine_timer.as_ref() else {
        st.limits.next_event = u64::MAX;
        return false;
    };
    let software = timer.device.software_pending();
    let due = timer.device.pending_from(now);
    let timer_pending = due == Some(now);
    if !software && !timer_pending {
        st.limits.next_event = due.unwrap_or(u64::MAX);
        st.limits.limit = st.limits.next(now);
        return false;
    }
    let mie = uc.reg_read(RegisterRISCV::MIE).unwrap_or(0);
    let code = if software && mie & MIE_MSIE != 0 {
        Some(SOFTWARE)
    } else if timer_pending && mie & MIE_MTIE != 0 {
        Some(TIMER)
    } else {
        None
    };
    match code.filter(|_| traps::interrupts_enabled(uc, mstatus)) {
        Some(code) => traps::take_interrupt(uc, code, addr),
        None => {
            // masked: look at every block until it is taken
            uc.get_data_mut().limits.look_every_block(now);
            false
        }
    }
}

/// mtime at cycle `now`, for the `time` CSR.
pub(super) fn time(uc: &Uc<'_>, now: u64) -> Option<u64> {
    uc.get_data()
        .machine_timer
        .as_ref()
        .map(|t| t.device.time(now))
}
