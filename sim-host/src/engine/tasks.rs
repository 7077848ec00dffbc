//! Which task runs (issue 39, RTOS-aware accounting): the engine tells the
//! run's [`TaskClock`] (`host::tasks`) of every switch between the code
//! before any task ("main"), the exception handlers and the tasks of an
//! RTOS, at the cycle it happens.
//!
//! A task is told apart by how an RTOS switches tasks on a Cortex-M core:
//! through an exception that returns onto another process stack. A task
//! interrupted on its process stack resumes with the very stack pointer it
//! had (its frame popped): so at each exception entry from Thread mode on
//! the process stack the interrupted task is noted under its stack
//! pointer, and an exception return onto the process stack resumes the
//! task noted under the stack pointer returned to, or a new one (a task's
//! first start). This needs nothing of the RTOS. For FreeRTOS
//! (`image::rtos`) the task is its control block, read from `pxCurrentTCB`
//! after the return, and its name is the block's.

use super::api::{uc, MachineError};
use super::state::{Uc, MAX_SUSPENDED};
use crate::host::tasks::{ContextId, ContextKind};
use crate::image::elf::GuestImage;

/// A RISC-V trap of `cause` (mcause) is taken at cycle `now` (before its
/// latency), from code whose stack pointer is `sp`.
pub(super) fn trap_entered(uc: &mut Uc<'_>, cause: u64, sp: u32, now: u64) {
    // the handler contexts of RISC-V's causes, apart from exception numbers
    let key = 0x1_0000 + (cause as u32 & 0xfff) + if cause >> 31 != 0 { 0x1000 } else { 0 };
    entered_as(uc, key, || trap_name(cause), Some(sp), now);
}

/// A RISC-V `mret` has run (its block was charged): the code resumed
/// runs at the stack pointer it had when the trap was taken.
pub(super) fn trap_returned(uc: &mut Uc<'_>) {
    let sp = uc.reg_read(unicorn_engine::RegisterRISCV::SP).unwrap_or(0) as u32;
    let now = uc.get_data().clock.cycles;
    returned(uc, Some(sp), now);
}

fn trap_name(cause: u64) -> String {
    match (cause >> 31 != 0, cause & 0xfff) {
        (true, 3) => "machine software interrupt".into(),
        (true, 7) => "machine timer interrupt".into(),
        (true, c) => format!("interrupt {c}"),
        (false, 8 | 11) => "ecall".into(),
        (false, 3) => "ebreak".into(),
        (false, 2) => "illegal instruction".into(),
        (false, c) => format!("exception {c}"),
    }
}

/// Exception `number` is entered at cycle `now` (before its latency); the
/// code it interrupts ran on the process stack at `psp` if `Some`.
pub(super) fn entered(uc: &mut Uc<'_>, number: u32, interrupted_psp: Option<u32>, now: u64) {
    entered_as(uc, number, || exception_name(number), interrupted_psp, now);
}

/// A handler (`key`: its exception or trap, `name` when first seen)
/// interrupts the code running on the stack at `sp` (`None`: not a
/// task's stack).
fn entered_as(
    uc: &mut Uc<'_>,
    key: u32,
    name: impl FnOnce() -> String,
    interrupted_psp: Option<u32>,
    now: u64,
) {
    let st = uc.get_data_mut();
    let mut clock = st.arp.counters.tasks.borrow_mut();
    let running = clock.current();
    let t = &mut st.tasks;
    t.interrupted.push(running);
    if let Some(sp) = interrupted_psp {
        if t.suspended.len() < MAX_SUSPENDED {
            t.suspended.insert(sp, running);
        }
    }
    let handler = *t
        .handlers
        .entry(key)
        .or_insert_with(|| clock.add(name(), ContextKind::Handler));
    clock.switch(handler, now);
}

/// A pending exception `next` is tail-chained at cycle `now`.
pub(super) fn tail_chained(uc: &mut Uc<'_>, next: u32, now: u64) {
    let st = uc.get_data_mut();
    let mut clock = st.arp.counters.tasks.borrow_mut();
    let handler = *st
        .tasks
        .handlers
        .entry(next)
        .or_insert_with(|| clock.add(exception_name(next), ContextKind::Handler));
    clock.switch(handler, now);
}

/// An exception returned at cycle `now` (after its latency): to Thread
/// mode on the process stack at `psp` if `Some`, else to the code it
/// interrupted.
pub(super) fn returned(uc: &mut Uc<'_>, resumed_psp: Option<u32>, now: u64) {
    let tcb = freertos_current(uc);
    let st = uc.get_data_mut();
    let mut clock = st.arp.counters.tasks.borrow_mut();
    let t = &mut st.tasks;
    let below = t.interrupted.pop().unwrap_or(0);
    // FreeRTOS's own word wins (a task it started with no exception
    // return, as its RISC-V port starts the first, ran as main until then);
    // else what was interrupted at this stack pointer resumes (a task, or
    // a handler a nested trap interrupted)
    let to = match (resumed_psp, tcb) {
        (None, _) => below,
        (Some(sp), Some((block, name))) => {
            t.suspended.remove(&sp);
            // a control block reused by a task of another name is a new task
            match t.by_tcb.get(&block) {
                Some(id) if clock.name(*id) == name => *id,
                _ => {
                    let id = clock.add(name, ContextKind::Task);
                    t.by_tcb.insert(block, id);
                    id
                }
            }
        }
        (Some(sp), None) if t.suspended.contains_key(&sp) => t.suspended.remove(&sp).unwrap_or(0),
        (Some(sp), None) => {
            t.tasks_seen += 1;
            let name = format!("task {} (stack {sp:#010x})", t.tasks_seen);
            clock.add(name, ContextKind::Task)
        }
    };
    clock.switch(to, now);
    drop(clock);
    if resumed_psp.is_some() || t.interrupted.is_empty() {
        thread_mode_runs(st, to);
    }
}

/// Thread mode runs context `to` again: if that is another task, the
/// observers switch to its thread.
fn thread_mode_runs(st: &mut super::state::State, to: ContextId) {
    if st.tasks.thread_context == to {
        return;
    }
    st.tasks.thread_context = to;
    if let Some(events) = st.system.as_mut().and_then(|s| s.observed.as_mut()) {
        if let Some(last) = events.last_mut().filter(|e| e.task.is_none()) {
            last.task = Some(observer_thread(to));
        }
    }
}

/// The observers' thread of a context: main is thread 0 (as the guest's
/// main thread); a task's is far above simthread ids (exceptions, and so
/// tasks, are only ever delivered to a single-threaded guest).
pub(super) fn observer_thread(context: ContextId) -> u32 {
    if context == 0 {
        0
    } else {
        (1 << 20) + u32::from(context)
    }
}

/// With FreeRTOS: at an exception or trap entry, the running task's stack
/// must not reach below the stack FreeRTOS gave it (`pxStack`): `at` is
/// where its exception frame would go (Cortex-M), or its stack pointer
/// (RISC-V, whose port saves the context there). The refusal names the
/// task.
pub(super) fn check_task_stack(uc: &Uc<'_>, at: u32) -> Result<(), String> {
    let Some(layout) = uc.get_data().tasks.freertos else {
        return Ok(());
    };
    let Some((block, name)) = freertos_current(uc) else {
        return Ok(());
    };
    let mut word = [0u8; 4];
    if uc
        .mem_read(u64::from(block) + layout.stack_offset, &mut word)
        .is_err()
    {
        return Ok(());
    }
    let base = u32::from_le_bytes(word);
    if at >= base {
        return Ok(());
    }
    Err(format!(
        "exception entry: task `{name}`'s stack overflowed: it reached {at:#010x}, below the \
         stack FreeRTOS gave it (pxStack {base:#010x}); on silicon the memory below is \
         overwritten (ARMv7-M and RISC-V check no stack limit; ARMv8-M raises a STKOF \
         UsageFault where PSPLIM is set, DDI 0553 B3.20)"
    ))
}

/// With FreeRTOS: a code hook at its port's `xPortStartFirstTask`, where
/// the first task starts running (the RISC-V port starts it with no trap
/// return, so nothing else would tell its first cycles from main's).
pub(super) fn install(emu: &mut Uc<'static>, image: &GuestImage) -> Result<(), MachineError> {
    if emu.get_data().tasks.freertos.is_none() {
        return Ok(());
    }
    let Some(start) = image.symbol("xPortStartFirstTask").map(|a| a & !1) else {
        return Ok(());
    };
    uc(
        "FreeRTOS first-task hook",
        emu.add_code_hook(start, start, |uc: &mut Uc<'_>, _, _| first_task_starts(uc)),
    )?;
    Ok(())
}

/// The first task starts: from here the core runs it (pxCurrentTCB).
fn first_task_starts(uc: &mut Uc<'_>) {
    let Some((block, name)) = freertos_current(uc) else {
        return;
    };
    let now = uc.get_data().clock.cycles;
    let st = uc.get_data_mut();
    let mut clock = st.arp.counters.tasks.borrow_mut();
    let id = match st.tasks.by_tcb.get(&block) {
        Some(id) => *id,
        None => {
            let id = clock.add(name, ContextKind::Task);
            st.tasks.by_tcb.insert(block, id);
            id
        }
    };
    clock.switch(id, now);
    drop(clock);
    thread_mode_runs(st, id);
}

/// FreeRTOS's running task: its control block's address and name.
fn freertos_current(uc: &Uc<'_>) -> Option<(u32, String)> {
    let layout = uc.get_data().tasks.freertos?;
    let mut word = [0u8; 4];
    uc.mem_read(layout.current_tcb, &mut word).ok()?;
    let block = u32::from_le_bytes(word);
    if block == 0 {
        return None;
    }
    let mut name = vec![0u8; layout.name_len.min(64) as usize];
    uc.mem_read(u64::from(block) + layout.name_offset, &mut name)
        .ok()?;
    let end = name.iter().position(|b| *b == 0).unwrap_or(name.len());
    Some((block, String::from_utf8_lossy(&name[..end]).into_owned()))
}

/// The name of exception `number` (ARMv7-M B1.5.2, Table B1-4).
fn exception_name(number: u32) -> String {
    match number {
        2 => "NMI".into(),
        3 => "HardFault".into(),
        11 => "SVCall".into(),
        14 => "PendSV".into(),
        15 => "SysTick".into(),
        n if n >= 16 => format!("IRQ {}", n - 16),
        n => format!("exception {n}"),
    }
}
