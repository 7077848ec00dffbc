//! Interception (DESIGN.md decision 1): the ARP entry points and the
//! `simthread.h` calls run on the host; their bodies never execute and
//! cost nothing.

use super::api::{uc, Counting, MachineError, Stop};
use super::gpr::CallRegisters;
use super::memory::UcMemory;
use super::options::RunOptions;
use super::plugin_guest::with_machine_guest;
use super::pricing::price_at_zero;
use super::registers::regs;
use super::state::{stop_with, Uc};
use super::stop::stop_for_deadline_or_signal;
use super::thread_calls::{intercept_thread_call, THREAD_CALLS};
use crate::host::arp_host::{ArpFailure, CallArgs, EntryPoint, ENTRY_POINTS};
use crate::host::semihost::GuestMemory;
use crate::image::elf::GuestImage;
use crate::model::target::Arch;
use std::rc::Rc;

/// Runs an intercepted ARP call; `return_by_pc`: the stub's body is the
/// ELF's, so the call returns by writing PC (see [`return_at_once`]).
#[inline]
pub(super) fn intercept(uc: &mut Uc<'_>, entry: EntryPoint, return_by_pc: bool) {
    match entry {
        EntryPoint::Enter(_) | EntryPoint::Leave(_)
            if !return_by_pc && !uc.get_data().arp.has_plugins() =>
        {
            section_call(uc, entry)
        }
        _ => any_call(uc, entry, return_by_pc),
    }
}

/// An enter or leave on the fast interception without plugins (most of
/// the calls of a run that records): [`any_call`] without what only other
/// calls need, in a function small enough to keep its registers.
#[inline]
fn section_call(uc: &mut Uc<'_>, entry: EntryPoint) {
    let Some(registers) = uc.get_data().call_registers else {
        return not_installed(uc);
    };
    let [ret, tid, sid, lidx, _] = registers.read();
    let st = uc.get_data_mut();
    let call_site = (u64::from(ret) & !1).saturating_sub(4);
    set_counters(st);
    let result = st.arp.section(entry, tid, sid, lidx, call_site);
    after_call(st, ret);
    if let Err(failure) = result {
        failed(uc, failure, call_site);
    }
}

/// The core's counters, for the call's callback sets and statistics.
#[inline]
fn set_counters(st: &mut super::state::State) {
    let counters = &st.arp.counters;
    counters.cycles.set(st.clock.cycles);
    counters.instructions.set(st.clock.instructions);
    // left at None without a model: no copy of the counters per call
    if st.has_memory_model() {
        counters.memory.set(st.memory_counters());
    }
    counters.core.set(st.threads.current_core);
    counters.thread.set(st.threads.current);
}

/// The clock after a call returning to `ret`.
#[inline]
fn after_call(st: &mut super::state::State, ret: u32) {
    // playback sets the clock to the recorded cost at a leave
    st.clock.cycles = st.arp.counters.cycles.get();
    // returning skips the stub: the next block is not reached by a branch
    st.clock.prev_fallthrough = u64::from(ret) & !1;
    st.clock.prev_taken_extra = 0;
    st.clock.prev_branch = 0;
}

#[cold]
#[inline(never)]
fn not_installed(uc: &mut Uc<'_>) {
    let stop = Stop::Internal("an ARP call before its interception was installed".into());
    stop_with(uc, stop);
}

/// Any intercepted ARP call.
#[inline(never)]
fn any_call(uc: &mut Uc<'_>, entry: EntryPoint, return_by_pc: bool) {
    let arch = uc.get_data().arch;
    let Some(registers) = uc.get_data().call_registers else {
        return not_installed(uc);
    };
    // the arguments the entry point does not take read as 0 (selected in
    // registers: a loop zeroing the rest became a memset whose stores the
    // loads after it stalled on)
    let (read, taken) = (registers.read(), 1 + entry.arity());
    let values: [u32; 5] = std::array::from_fn(|i| if i < taken { read[i] } else { 0 });
    let ret = u64::from(values[0]);
    // built in place, not copied: a copy would read the four 4-byte
    // stores back as one 16-byte load, which stalls like the wrapper's
    let args = CallArgs([values[1], values[2], values[3], values[4]]);
    let name = if entry == EntryPoint::SetFileName {
        UcMemory(uc)
            .read_cstr(args.0[0])
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    } else {
        None
    };
    let st = uc.get_data_mut();
    let call_site = (ret & !1).saturating_sub(4);
    set_counters(st);
    let result = if st.arp.has_plugins() {
        // plugin callbacks may read the guest through the host API meanwhile
        let (counters, clock_hz) = (Rc::clone(&st.arp.counters), st.target.clock_hz);
        with_machine_guest(uc, arch, clock_hz, counters, |st| {
            st.arp.call(entry, &args, call_site, &|_| name.clone())
        })
    } else {
        st.arp.call(entry, &args, call_site, &|_| name.clone())
    };
    after_call(uc.get_data_mut(), values[0]);
    // only the query API returns values (0 / NULL inside a guest); the
    // record API is void, and its return register is left as it is
    // the register ids made only when written (making them every call was
    // a tenth of an ARP call's host instructions)
    if entry == EntryPoint::Query {
        let _ = uc.reg_write(regs(arch).ret_value, 0);
    }
    if return_by_pc {
        let _ = uc.reg_write(regs(arch).pc, ret);
    }
    if let Err(failure) = result {
        failed(uc, failure, call_site);
    }
}

/// An ARP call failed: a warning, or the run stops (a fatal error, or a
/// wait cut short by a signal or the time-out).
#[cold]
#[inline(never)]
fn failed(uc: &mut Uc<'_>, f: ArpFailure, call_site: u64) {
    let st = uc.get_data_mut();
    if is_stop(&f.error) {
        // a playback load or a FIFO's open given up for a signal or the
        // time-out: the run stops as for that (issue 30, N09)
        st.arp.cut_short = Some(match f.error {
            arpsim::ArpError::Stopped(why) => why,
            e => e.to_string(),
        });
        stop_for_deadline_or_signal(uc);
    } else if f.fatal {
        let at = st.image.describe(call_site);
        stop_with(uc, Stop::Arp(format!("{at}: {}", f.error)));
    } else {
        let at = st.image.describe(call_site);
        st.end.warnings.push(format!("{at}: {}", f.error));
    }
}

/// Whether an ARP call failed only because a stop signal or the time-out
/// cut a wait short.
fn is_stop(error: &arpsim::ArpError) -> bool {
    match error {
        arpsim::ArpError::Stopped(_) => true,
        arpsim::ArpError::Io { source, .. } => source.kind() == std::io::ErrorKind::Interrupted,
        _ => false,
    }
}

/// Makes the function `name` (if the guest has it) an intercepted entry
/// point: its block costs nothing and `handler` runs instead of its body.
pub(super) fn intercept_function(
    emu: &mut Uc<'static>,
    image: &GuestImage,
    name: &str,
    handler: impl Fn(&mut Uc<'_>) + 'static,
) -> Result<(), MachineError> {
    let Some(f) = image.function(name) else {
        return Ok(());
    };
    price_at_zero(emu, f.addr, 0);
    uc(
        &format!("hook {name}"),
        emu.add_code_hook(f.addr, f.addr, move |uc: &mut Uc<'_>, _, _| handler(uc)),
    )?;
    Ok(())
}

/// The fast interception of ARP entry point `index` (in `ENTRY_POINTS`):
/// the block hook, which runs at every block anyway, intercepts the stub's
/// block (no code hook, whose dispatch scans every code hook), and the
/// stub returns as its first instruction, written into the emulated
/// memory only (the ELF is untouched), so the interception needs no PC
/// write, which would make Unicorn leave the translated code and enter it
/// again. The return executes in the stub's block, priced at zero. Not
/// with a debugger (which shows and steps the stub as the ELF has it) nor
/// with observers (which would see a playback's clock change in the
/// stub's block instead of the next one).
pub(super) fn return_at_once(
    emu: &mut Uc<'static>,
    image: &GuestImage,
    index: usize,
) -> Result<(), MachineError> {
    let name = ENTRY_POINTS[index].0;
    let Some(f) = image.function(name) else {
        return Ok(());
    };
    let ret: &[u8] = match image.arch {
        Arch::Arm => &[0x70, 0x47],               // bx lr
        Arch::Riscv => &[0x67, 0x80, 0x00, 0x00], // jalr x0, 0(ra)
    };
    if f.size < ret.len() as u64 {
        let entry = ENTRY_POINTS[index].1;
        return intercept_function(emu, image, name, move |uc| intercept(uc, entry, true));
    }
    price_at_zero(emu, f.addr, 1 + index as u8);
    uc(&format!("return from {name}"), emu.mem_write(f.addr, ret))
}

/// Intercepted entry points (ARP and simthread.h): priced at zero,
/// returning at once.
pub(super) fn install_interception(
    emu: &mut Uc<'static>,
    image: &GuestImage,
    options: &RunOptions,
) -> Result<(), MachineError> {
    let counting = options.counting;
    if counting != Counting::Off {
        let registers = uc(
            "locate the call registers",
            CallRegisters::locate(emu.get_handle(), image.arch),
        )?;
        emu.get_data_mut().call_registers = Some(registers);
        let fast = counting == Counting::Blocks
            && options.debugger.is_none()
            && options.observers.is_empty();
        for (index, (name, entry)) in ENTRY_POINTS.iter().enumerate() {
            let entry = *entry;
            if fast {
                return_at_once(emu, image, index)?;
            } else {
                intercept_function(emu, image, name, move |uc| intercept(uc, entry, true))?;
            }
        }
        for (name, call) in THREAD_CALLS {
            let call = *call;
            intercept_function(emu, image, name, move |uc| intercept_thread_call(uc, call))?;
        }
    }
    Ok(())
}
