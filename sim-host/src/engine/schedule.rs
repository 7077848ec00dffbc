//! The scheduler loop: guest threads run slice by slice, in simulated
//! time; each slice is one `emu_start` (with a debugger, the stops it asks
//! for happen inside the slice).

use super::api::{uc, MachineError, Stop};
use super::debug::DebugSession;
use super::options::RunOptions;
use super::registers::{fpu_thread_registers, regs, thread_registers};
use super::resume::start;
use super::state::Uc;
use super::stop::fault;
use crate::host::threads::{State as ThreadState, ThreadId};
use crate::model::target::Arch;
use std::time::{Duration, Instant};
use unicorn_engine::unicorn_const::uc_error;

/// The scheduler loop: runs the threads slice by slice until the guest
/// stops; returns the last slice's result and the time the guest spent
/// stopped for a debugger.
pub(super) fn run_threads(
    emu: &mut Uc<'static>,
    options: &RunOptions,
    debug: &mut Option<DebugSession>,
    started: Instant,
) -> Result<(Result<(), uc_error>, Duration), MachineError> {
    let arch = emu.get_data().arch;
    let mut thread_regs = thread_registers(arch);
    thread_regs.extend(fpu_thread_registers(&emu.get_data().target));
    let mut paused = Duration::ZERO;
    let mut result: Result<(), uc_error> = Ok(());
    loop {
        // a stop signal that came during the set-up or a slice too short to
        // poll (the block hook looks every 2^20 cycles; issue 30, N09)
        if let Some(stop) = signalled(options) {
            emu.get_data_mut().end.stop = Some(stop);
            break;
        }
        let Some((next, slice_end)) = emu.get_data().threads.sched.next() else {
            let st = emu.get_data();
            let message = if st.threads.sched.alive().is_empty() {
                "every thread ended without an exit".to_owned()
            } else {
                format!("deadlock: {}", st.threads.sched.describe_waits())
            };
            let stop = fault(emu, message, None);
            emu.get_data_mut().end.stop = Some(stop);
            break;
        };
        switch_thread(emu, next, &thread_regs)?;
        let (clock, waiting, core) = begin_slice(emu, next, slice_end)?;
        for o in &options.observers {
            o.borrow_mut().thread(next, clock);
        }
        // the time a debugger held the guest does not count (issue 30, N23)
        let timeout_us = match options.timeout {
            None => 0,
            Some(t) => match t.checked_sub(started.elapsed().saturating_sub(paused)) {
                Some(left) => left.as_micros().max(1) as u64,
                None => {
                    emu.get_data_mut().end.stop = Some(Stop::Timeout(t));
                    break;
                }
            },
        };
        result = match debug.as_mut() {
            None => start(emu, timeout_us),
            Some(session) => {
                let (result, detached) = session.run_slice(emu, timeout_us, &mut paused);
                if detached {
                    *debug = None;
                }
                result
            }
        };
        end_slice(emu, next, clock, waiting, core);
        retire_if_ended(emu, next, options);
        if emu.get_data().debug.reset {
            break;
        }
        // a guest that exits within 2^20 cycles of a stop signal or past
        // the deadline never met a poll: the signal and the deadline win
        if matches!(emu.get_data().end.stop, None | Some(Stop::Exit(_))) {
            if let Some(stop) = signalled(options).or_else(|| {
                options
                    .timeout
                    .filter(|t| started.elapsed().saturating_sub(paused) >= *t)
                    .map(Stop::Timeout)
            }) {
                emu.get_data_mut().end.stop = Some(stop);
                break;
            }
        }
        if emu.get_data().end.stop.is_some() || result.is_err() {
            break;
        }
        if let Some(t) = options.timeout {
            if started.elapsed().saturating_sub(paused) >= t {
                emu.get_data_mut().end.stop = Some(Stop::Timeout(t));
                break;
            }
        }
    }
    Ok((result, paused))
}

/// The stop a signal asks for, if one came.
fn signalled(options: &RunOptions) -> Option<Stop> {
    let signal = options
        .interrupt
        .as_ref()?
        .load(std::sync::atomic::Ordering::Relaxed);
    (signal > 0).then_some(Stop::Interrupted(signal))
}

/// Starts a slice of thread `next`, ending at cycle `slice_end`: a new
/// thread's entry registers, a pending return value, the thread's clock
/// and cycle-model state. Returns its clock, waiting time and core.
pub(super) fn begin_slice(
    emu: &mut Uc<'static>,
    next: ThreadId,
    slice_end: u64,
) -> Result<(u64, u64, Option<usize>), MachineError> {
    let arch = emu.get_data().arch;
    let r = regs(arch);
    let thumb = u64::from(arch == Arch::Arm);
    let (start, pending) = {
        let t = emu.get_data_mut().threads.sched.thread_mut(next);
        (t.start.take(), t.pending_return.take())
    };
    if let Some(start) = start {
        let exit = emu.get_data().threads.exit;
        uc("start thread", emu.reg_write(r.sp, start.stack_top))?;
        uc("start thread", emu.reg_write(r.ret_addr, exit | thumb))?;
        uc(
            "start thread",
            emu.reg_write(r.args[0], u64::from(start.argument)),
        )?;
        uc("start thread", emu.reg_write(r.pc, start.function | thumb))?;
    }
    if let Some(value) = pending {
        uc("return value", emu.reg_write(r.ret_value, u64::from(value)))?;
    }
    let slice = {
        let st = emu.get_data_mut();
        let t = st.threads.sched.thread(next).clone();
        st.clock.cycles = t.clock;
        st.clock.prev_fallthrough = t.prev_fallthrough;
        st.clock.prev_taken_extra = t.prev_taken_extra;
        st.clock.prev_branch = t.prev_branch;
        st.clock.prev_last_insn = t.prev_last_insn;
        st.limits.slice_limit = st.limits.max_cycles.min(slice_end);
        st.limits.limit = st.limits.next(st.clock.cycles);
        st.clock.observed = t.clock;
        st.threads.current_core = t.core.unwrap_or(0) as u32;
        (t.clock, t.waiting, t.core)
    };
    Ok(slice)
}

/// Ends a slice of thread `next`: its clock, cycle-model state and busy
/// time.
pub(super) fn end_slice(
    emu: &mut Uc<'static>,
    next: ThreadId,
    clock: u64,
    waiting: u64,
    core: Option<usize>,
) {
    let st = emu.get_data_mut();
    let cycles = st.clock.cycles;
    let (fallthrough, taken) = (st.clock.prev_fallthrough, st.clock.prev_taken_extra);
    let (branch, last_insn) = (st.clock.prev_branch, st.clock.prev_last_insn);
    let t = st.threads.sched.thread_mut(next);
    t.clock = cycles;
    // Saturating: in playback a kernel's leave sets the clock to its
    // enter time plus the recorded cost, which may lie before this
    // slice began when the slice started inside the kernel.
    let busy = cycles
        .saturating_sub(clock)
        .saturating_sub(t.waiting - waiting);
    t.prev_fallthrough = fallthrough;
    t.prev_taken_extra = taken;
    t.prev_branch = branch;
    t.prev_last_insn = last_insn;
    st.threads.sched.add_busy(next, core, busy);
}

/// A thread that ended in its slice is forgotten, by the scheduler and the
/// observers (its end clock stays until it is joined).
fn retire_if_ended(emu: &mut Uc<'static>, id: ThreadId, options: &RunOptions) {
    let sched = &mut emu.get_data_mut().threads.sched;
    if sched.get(id).is_some_and(|t| t.state == ThreadState::Done) {
        sched.retire(id);
        for o in &options.observers {
            o.borrow_mut().thread_ended(id);
        }
    }
}

/// Makes `next` the running thread: saves the running thread's registers
/// and restores `next`'s.
pub(super) fn switch_thread(
    emu: &mut Uc<'static>,
    next: ThreadId,
    thread_regs: &[i32],
) -> Result<(), MachineError> {
    let current = emu.get_data().threads.current;
    if next == current {
        return Ok(());
    }
    // an ended thread's registers are never needed again (kept, they
    // would grow with every thread ever made)
    let ended =
        (emu.get_data().threads.sched.get(current)).is_none_or(|t| t.state == ThreadState::Done);
    if ended {
        emu.get_data_mut().threads.contexts.remove(&current);
    } else {
        let ctx = thread_regs
            .iter()
            .map(|reg| emu.reg_read(*reg))
            .collect::<Result<Vec<u64>, _>>();
        let ctx = uc("save registers", ctx)?;
        emu.get_data_mut().threads.contexts.insert(current, ctx);
    }
    // A thread that never ran starts from the registers of the one that
    // ran last, which it shares the program's global state with (RISC-V gp
    // and tp, the M-profile control registers); its own SP, PC, return
    // address and argument are set by the caller.
    if let Some(ctx) = emu.get_data_mut().threads.contexts.remove(&next) {
        for (reg, value) in thread_regs.iter().zip(&ctx) {
            uc("restore registers", emu.reg_write(*reg, *value))?;
        }
    }
    emu.get_data_mut().threads.current = next;
    Ok(())
}
