//! The `simthread.h` calls of the running thread: create (a stack with a
//! guard page), join, mutexes, barriers and exit, on the scheduler.

use super::memory::{add_fault_hook, writable};
use super::registers::regs;
use super::state::{stop_with, Uc};
use super::stop::fault;
use crate::host::threads;
use crate::image::elf::GuestImage;
use unicorn_engine::unicorn_const::Prot;

pub(super) const PAGE: u64 = crate::model::target::PAGE_SIZE;

/// The `simthread.h` entry points the host implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ThreadCall {
    Create,
    Join,
    SelfId,
    Cores,
    MutexInit,
    Lock,
    Unlock,
    BarrierInit,
    BarrierWait,
    Exit,
}

pub(super) const THREAD_CALLS: &[(&str, ThreadCall)] = &[
    ("simthread_create", ThreadCall::Create),
    ("simthread_join", ThreadCall::Join),
    ("simthread_self", ThreadCall::SelfId),
    ("simthread_cores", ThreadCall::Cores),
    ("simthread_mutex_init", ThreadCall::MutexInit),
    ("simthread_mutex_lock", ThreadCall::Lock),
    ("simthread_mutex_unlock", ThreadCall::Unlock),
    ("simthread_barrier_init", ThreadCall::BarrierInit),
    ("simthread_barrier_wait", ThreadCall::BarrierWait),
    ("simthread_exit", ThreadCall::Exit),
];

/// The end of the guest's heap: `__heap_end`, else `__stack - __stack_size`.
pub(super) fn heap_end(image: &GuestImage) -> u64 {
    image.symbol("__heap_end").unwrap_or_else(|| {
        match (image.symbol("__stack"), image.symbol("__stack_size")) {
            (Some(stack), Some(size)) => stack.saturating_sub(size),
            _ => 0,
        }
    })
}

/// A stack for a new thread: an ended thread's, else a new one with a
/// guard page below it, carved from the top of the heap.
pub(super) fn allocate_stack(uc: &mut Uc<'_>) -> Option<u64> {
    let id = uc.get_data().threads.sched.next_id();
    if let Some(top) = uc.get_data_mut().threads.free_stacks.pop() {
        let st = uc.get_data_mut();
        st.threads.stacks.insert(id, top);
        let guard = top - st.threads.stack_size - PAGE;
        if let Some(g) = st.threads.guards.iter_mut().find(|(low, _)| *low == guard) {
            g.1 = id;
        }
        return Some(top);
    }
    let st = uc.get_data();
    let top = st.threads.next_stack_top;
    let guard = top.checked_sub(st.threads.stack_size + PAGE)?;
    if top == 0 || guard < st.threads.stack_floor {
        return None;
    }
    uc.mem_protect(guard, PAGE, Prot::NONE).ok()?;
    add_fault_hook(uc, guard, guard + PAGE - 1).ok()?;
    let st = uc.get_data_mut();
    st.threads.next_stack_top = guard;
    st.threads.guards.push((guard, id));
    st.threads.stacks.insert(id, top);
    Some(top)
}

/// Runs an intercepted `simthread_*` call for the running thread.
pub(super) fn intercept_thread_call(uc: &mut Uc<'_>, call: ThreadCall) {
    use threads::Outcome::{Block, Continue};
    let arch = uc.get_data().arch;
    let r = regs(arch);
    let mut a = [0u32; 3];
    for (v, reg) in a.iter_mut().zip(r.args) {
        *v = uc.reg_read(reg).unwrap_or(0) as u32;
    }
    let ret = uc.reg_read(r.ret_addr).unwrap_or(0);
    let cur = uc.get_data().threads.current;
    {
        let st = uc.get_data_mut();
        let clock = st.clock.cycles;
        st.threads.sched.thread_mut(cur).clock = clock;
    }
    let outcome: Result<threads::Outcome, String> = match call {
        // Unicorn's mem_write ignores protections: the handle goes only
        // where the guest itself could store (never the vector table or
        // flash), checked before a thread is made
        ThreadCall::Create if !writable(uc, u64::from(a[0]), 4) => Err(format!(
            "simthread_create: the handle address {:#010x} is not writable",
            a[0]
        )),
        ThreadCall::Create => match allocate_stack(uc) {
            None => {
                let st = uc.get_data_mut();
                st.end.warnings.push(format!(
                    "simthread_create: no room for another {} KiB thread stack in the heap",
                    st.threads.stack_size / 1024
                ));
                Ok(Continue(u32::MAX))
            }
            Some(stack_top) => {
                let st = uc.get_data_mut();
                let clock = st.clock.cycles;
                let id = st.threads.sched.create(
                    clock,
                    threads::Start {
                        function: u64::from(a[1]),
                        argument: a[2],
                        stack_top,
                    },
                );
                match uc.mem_write(u64::from(a[0]), &id.to_le_bytes()) {
                    // a new runnable thread: stop so the scheduler orders
                    // the two; the creator resumes with 0
                    Ok(()) => {
                        uc.get_data_mut()
                            .threads
                            .sched
                            .thread_mut(cur)
                            .pending_return = Some(0);
                        Ok(Block)
                    }
                    Err(_) => Err(format!(
                        "simthread_create: the handle address {:#010x} is not writable",
                        a[0]
                    )),
                }
            }
        },
        ThreadCall::Join => uc
            .get_data_mut()
            .threads
            .sched
            .join(cur, a[0])
            .map_err(|e| e.to_string()),
        ThreadCall::SelfId => Ok(Continue(cur)),
        ThreadCall::Cores => Ok(Continue(uc.get_data().threads.sched.cores.len() as u32)),
        ThreadCall::MutexInit => Ok(Continue(0)),
        ThreadCall::Lock => Ok(uc.get_data_mut().threads.sched.lock(cur, a[0])),
        ThreadCall::Unlock => uc
            .get_data_mut()
            .threads
            .sched
            .unlock(cur, a[0])
            .map(|_| Continue(0))
            .map_err(|e| e.to_string()),
        ThreadCall::BarrierInit => uc
            .get_data_mut()
            .threads
            .sched
            .barrier_init(a[0], a[1])
            .map(|_| Continue(0))
            .map_err(|e| e.to_string()),
        ThreadCall::BarrierWait => uc
            .get_data_mut()
            .threads
            .sched
            .barrier_wait(cur, a[0])
            .map_err(|e| e.to_string()),
        ThreadCall::Exit => {
            if cur == 0 {
                Err("simthread_exit called by the main thread".into())
            } else {
                let st = uc.get_data_mut();
                st.threads.sched.exit(cur);
                if let Some(top) = st.threads.stacks.remove(&cur) {
                    st.threads.free_stacks.push(top);
                }
                Ok(Block)
            }
        }
    };
    // Joins and barriers may have moved the clock on (waiting time).
    let st = uc.get_data_mut();
    st.clock.cycles = st.threads.sched.thread(cur).clock;
    st.clock.prev_fallthrough = ret & !1;
    st.clock.prev_taken_extra = 0;
    st.clock.prev_branch = 0;
    let _ = uc.reg_write(r.pc, ret);
    match outcome {
        Ok(Continue(value)) => {
            let _ = uc.reg_write(r.ret_value, u64::from(value));
        }
        Ok(Block) => {
            // resumed after the call with its pending return value
            let _ = uc.emu_stop();
        }
        Err(message) => {
            let stop = fault(uc, message, None);
            stop_with(uc, stop);
        }
    }
}
