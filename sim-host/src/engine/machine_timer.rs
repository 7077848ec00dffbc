//! RISC-V's machine timer in the engine: its registers (`host::mtimer`)
//! mapped as MMIO at the board's address, and the machine timer interrupt
//! taken as the core takes a trap (privileged spec 3.1.6-3.1.9, 3.3.2):
//! mepc = the interrupted instruction, mcause = 0x8000_0007, mstatus.MPIE
//! = MIE, MIE = 0, MPP = M, and the PC at mtvec (plus 4 * 7 when mtvec is
//! vectored). QEMU's own `mret` returns. The entry costs what Hazard3's
//! table gives a trap's jump to mtvec (ecall/ebreak: 3 cycles,
//! instruction_timings.adoc "Trap Request").
//!
//! Like the Cortex-M exceptions (`interrupts`), the interrupt is taken at
//! the boundary of the block during which it became pending, and the
//! handler's cycles count in the sections that are open. Traps do not
//! nest: while a handler runs (until mstatus.MIE is set again, by its
//! `mret` or by the handler) the timer is not taken again. `mip.MTIP` is
//! not driven (QEMU answers a read of `mip` with its own bits).

use super::api::{uc, MachineError};
use super::mmio::placed_access;
use super::peripherals;
use super::state::{TimerState, Uc};
use crate::host::mtimer::{MachineTimer, TimerRegister};
use crate::model::target::Target;
use unicorn_engine::RegisterRISCV;

/// Unicorn maps whole pages.
const PAGE: u64 = 0x1000;
/// mstatus.MIE, .MPIE and .MPP (privileged spec 3.1.6).
const MSTATUS_MIE: u64 = 1 << 3;
const MSTATUS_MPIE: u64 = 1 << 7;
const MSTATUS_MPP: u64 = 3 << 11;
/// mie.MTIE and the machine timer interrupt's cause.
const MIE_MTIE: u64 = 1 << 7;
const TIMER_CAUSE: u64 = 7;
const INTERRUPT: u64 = 1 << 31;
/// Hazard3's trap entry (instruction_timings.adoc, Trap Request: ecall
/// and ebreak take 3 cycles, "time given is for jumping to mtvec").
pub(super) const TRAP_ENTRY_CYCLES: u64 = 3;

/// The timer of a RISC-V board that has one.
pub(super) fn state(target: &Target) -> Option<Box<TimerState>> {
    let timer = target.machine_timer()?;
    Some(Box::new(TimerState {
        device: MachineTimer::new(target.clock_hz, timer.tick_hz),
        base: timer.base,
        trap: None,
    }))
}

/// Maps the timer's page: its registers answered here, the rest of the
/// page as the peripheral it lies in.
pub(super) fn map(emu: &mut Uc<'static>) -> Result<(), MachineError> {
    let Some(page) = emu.get_data().target.machine_timer().map(|t| t.page()) else {
        return Ok(());
    };
    let read = move |uc: &mut Uc<'_>, offset: u64, size: usize| -> u64 {
        access(uc, page + offset, size, None)
    };
    let write = move |uc: &mut Uc<'_>, offset: u64, size: usize, value: u64| {
        access(uc, page + offset, size, Some(value as u32));
    };
    uc(
        "map the machine timer",
        emu.mmio_map(page, PAGE, Some(read), Some(write)),
    )
}

/// One access to the timer's page.
fn access(uc: &mut Uc<'_>, addr: u64, size: usize, write: Option<u32>) -> u64 {
    let base = uc.get_data().machine_timer.as_ref().map_or(0, |t| t.base);
    let register = addr.checked_sub(base).and_then(TimerRegister::at);
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
            // a moved compare or count: look at the next block boundary
            st.look_at_next_boundary();
            0
        }
    }
}

/// At a block boundary: ends a finished handler, takes the timer
/// interrupt in front of the block at `addr` when it is pending and
/// enabled, and sets when to look next. Returns whether it was taken.
pub(super) fn take_due(uc: &mut Uc<'_>, addr: u64) -> bool {
    let mstatus = uc.reg_read(RegisterRISCV::MSTATUS).unwrap_or(0);
    let st = uc.get_data_mut();
    let now = st.clock.cycles;
    let Some(timer) = st.machine_timer.as_mut() else {
        st.limits.next_event = u64::MAX;
        return false;
    };
    if let Some((return_to, fallthrough, taken_extra)) = timer.trap {
        if mstatus & MSTATUS_MIE == 0 {
            // the handler runs: look again at its next block
            st.limits.look_every_block(now);
            return false;
        }
        timer.trap = None;
        if addr == return_to {
            // the branch the interrupt came in front of is paid now
            st.clock.prev_fallthrough = fallthrough;
            st.clock.prev_taken_extra = taken_extra;
        }
    }
    let pending = timer.device.pending_from(now);
    if pending != Some(now) {
        st.limits.next_event = pending.unwrap_or(u64::MAX);
        st.limits.limit = st.limits.next(now);
        return false;
    }
    let enabled = uc.reg_read(RegisterRISCV::MIE).unwrap_or(0) & MIE_MTIE != 0;
    if mstatus & MSTATUS_MIE == 0 || !enabled {
        // masked: look at every block until it is taken
        uc.get_data_mut().limits.look_every_block(now);
        return false;
    }
    enter(uc, addr, mstatus);
    true
}

/// The trap entry, in front of the block at `addr`.
fn enter(uc: &mut Uc<'_>, addr: u64, mstatus: u64) {
    let mtvec = uc.reg_read(RegisterRISCV::MTVEC).unwrap_or(0);
    let handler = if mtvec & 3 == 1 {
        (mtvec & !3) + 4 * TIMER_CAUSE
    } else {
        mtvec & !3
    };
    let mstatus = (mstatus & !(MSTATUS_MIE | MSTATUS_MPIE)) | MSTATUS_MPIE | MSTATUS_MPP;
    let _ = uc.reg_write(RegisterRISCV::MEPC, addr);
    let _ = uc.reg_write(RegisterRISCV::MCAUSE, INTERRUPT | TIMER_CAUSE);
    let _ = uc.reg_write(RegisterRISCV::MSTATUS, mstatus);
    let _ = uc.reg_write(RegisterRISCV::PC, handler);
    let st = uc.get_data_mut();
    let interrupted = (addr, st.clock.prev_fallthrough, st.clock.prev_taken_extra);
    if let Some(timer) = st.machine_timer.as_mut() {
        timer.trap = Some(interrupted);
    }
    st.clock.cycles += TRAP_ENTRY_CYCLES;
    st.clock.prev_fallthrough = handler;
    st.clock.prev_taken_extra = 0;
    // look at every block of the handler for its return
    st.limits.next_event = 0;
    st.limits.limit = 0;
}

/// mtime at cycle `now`, for the `time` CSR.
pub(super) fn time(uc: &Uc<'_>, now: u64) -> Option<u64> {
    uc.get_data()
        .machine_timer
        .as_ref()
        .map(|t| t.device.time(now))
}
