//! How a run stops: faults described (instruction, source line, the last
//! branches, stack overflows named), and the outcome gathered at the end.

use super::api::{Fault, RunOutcome, Stop, UnpricedCount};
use super::registers::{regs, thumb_state};
use super::state::{stop_with, State, Uc, UnpricedLog};
use crate::host::threads::ThreadId;
use crate::image::elf::GuestImage;
use crate::model::target::{Arch, InsnClass, Target, PAGE_SIZE};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use unicorn_engine::unicorn_const::{uc_error, MemType};

/// An emulator error in words (`READ_UNMAPPED` → "read unmapped").
pub(super) fn emulation_error_text(error: uc_error) -> String {
    let name = format!("{error:?}").to_lowercase().replace('_', " ");
    format!("emulation error: {name}")
}

pub(super) fn fault(uc: &mut Uc<'_>, kind: String, address: Option<u64>) -> Stop {
    let arch = uc.get_data().arch;
    let pc = uc.reg_read(regs(arch).pc).unwrap_or(0);
    fault_at(uc, pc, kind, address)
}

/// A fault of the instruction at `pc` (where the PC register may lag).
pub(super) fn fault_at(uc: &mut Uc<'_>, pc: u64, kind: String, address: Option<u64>) -> Stop {
    let mut code = [0u8; 4];
    let instruction = uc
        .mem_read(pc, &mut code)
        .ok()
        .and_then(|_| uc.get_data().decoder.disassemble_one(&code, pc));
    let st = uc.get_data();
    // The source line too, where the debug information knows it.
    let source = crate::image::symbols::locate_all(&st.image, &[pc])
        .remove(&pc)
        .and_then(|l| l.file_line())
        .map_or_else(String::new, |place| format!(" at {place}"));
    Stop::Fault(Fault {
        kind,
        address,
        pc,
        location: format!("{}{source}", st.image.describe(pc)),
        instruction,
        branches: st.branches(),
    })
}

/// Stops a run whose console read gave up: for a stop signal, or for the
/// deadline of `--timeout`.
pub(super) fn stop_for_deadline_or_signal(uc: &mut Uc<'_>) {
    let st = uc.get_data();
    let signal = st
        .limits
        .interrupt
        .as_ref()
        .map_or(0, |f| f.load(Ordering::Relaxed));
    let stop = match (signal, st.limits.timeout) {
        (s, _) if s > 0 => Stop::Interrupted(s),
        (_, Some(t)) => Stop::Timeout(t),
        (s, None) => Stop::Interrupted(s),
    };
    stop_with(uc, stop);
}

/// Why the run stopped when no hook said so: the emulator's error as a
/// fault (the faulting instruction, stack overflows named), or an end
/// without an exit.
pub(super) fn stop_of(
    emu: &mut Uc<'static>,
    result: Result<(), uc_error>,
    target: &Target,
) -> Stop {
    let r = regs(target.arch);
    match result {
        Err(error) => {
            let access = emu.get_data().end.bad_access;
            let (kind, address) = match access {
                Some((kind, addr, size, pc)) => {
                    let pc = faulting_instruction(emu, pc, kind);
                    let _ = emu.reg_write(r.pc, pc);
                    let text = match emu.get_data().peripherals.map.describe(addr) {
                        Some(place) => format!("{} {place},", access_verb(kind, size)),
                        None => memory_fault_kind(kind, size),
                    };
                    (text, Some(addr))
                }
                None if error == uc_error::INSN_INVALID && !thumb_state(emu) => (
                    "a branch to an ARM-state address (bit 0 clear): a Thumb-only core \
                         cannot execute it (invalid state)"
                        .to_owned(),
                    None,
                ),
                None if error == uc_error::INSN_INVALID => {
                    ("undefined instruction".to_owned(), None)
                }
                None => (emulation_error_text(error), None),
            };
            let mut stop = fault(emu, kind, address);
            if let (Stop::Fault(f), Some(addr)) = (&mut stop, address) {
                let sp = emu.reg_read(r.sp).unwrap_or(0);
                let st = emu.get_data();
                if let Some((_, thread)) = st
                    .threads
                    .guards
                    .iter()
                    .find(|(g, _)| (*g..*g + PAGE_SIZE).contains(&addr))
                {
                    f.kind = format!(
                            "stack overflow in thread {thread}: {} (the guard page below its {} KiB stack; sp = {sp:#010x})",
                            f.kind,
                            st.threads.stack_size / 1024
                        );
                } else if looks_like_stack_overflow(target, addr, sp) {
                    f.kind = format!(
                        "stack overflow: {} (the stack ran out of RAM; sp = {sp:#010x})",
                        f.kind
                    );
                } else if st.arch == Arch::Arm && addr & !3 == super::memory::CPACR {
                    f.kind = format!(
                        "{} of CPACR (a hard-float build's C runtime enables the FPU there; target `{}` has no FPU: build soft float, or use a core with one: cortex-m4f, cortex-m7, cortex-m33)",
                        f.kind, target.name
                    );
                }
            }
            stop
        }
        Ok(()) => fault(emu, "emulation ended without an exit".into(), None),
    }
}

/// The run's outcome: its stop, counters, recording and warnings.
pub(super) fn outcome(
    emu: &mut Uc<'static>,
    image: &Rc<GuestImage>,
    host_time: Duration,
) -> RunOutcome {
    let st = emu.get_data_mut();
    let mut stop = st.end.stop.clone().expect("set above");
    if let Stop::Fault(f) = &mut stop {
        if st.threads.sched.threads_created() > 0 {
            f.location = format!("{} in thread {}", f.location, st.threads.current);
        }
    }
    let complete = matches!(stop, Stop::Exit(_));
    let alive: Vec<ThreadId> = st
        .threads
        .sched
        .alive()
        .into_iter()
        .filter(|t| *t != st.threads.current)
        .collect();
    if complete && !alive.is_empty() {
        st.end.warnings.push(format!(
            "the program exited with {} thread(s) still running: {:?} (their remaining work is not counted)",
            alive.len(),
            alive
        ));
    }
    st.arp.counters.cycles.set(st.clock.cycles);
    st.arp.counters.instructions.set(st.clock.instructions);
    st.arp.counters.memory.set(st.memory_counters());
    let (arp_file, arp_error) = match st.arp.conclude(complete) {
        None => (None, None),
        Some(Ok(summary)) => (
            summary
                .path
                .clone()
                .map(|p| (p, summary.records, summary.partial)),
            None,
        ),
        Some(Err(e)) => (None, Some(e.to_string())),
    };
    let mut warnings = std::mem::take(&mut st.end.warnings).into_messages();
    warnings.extend(std::mem::take(&mut st.arp.warnings).into_messages());
    warnings.extend(device_warnings(st, &stop));
    let unpriced = unpriced_counts(&st.unpriced);
    if !unpriced.is_empty() {
        warnings.push(unpriced_warning(&unpriced, &st.target));
    }
    let sections = st.section_traces();
    let all = st.arp.stats().len();
    if sections.len() < all {
        warnings.push(format!(
            "the section table lists the {} costliest of {all} section traces: their paths \
             hold at most {} section ids in all",
            sections.len(),
            crate::host::arp_host::REPORT_SECTION_ENTRIES
        ));
    }
    let playback = st.arp.playback_report();
    let cycles = st.threads.sched.latest_clock().max(st.clock.cycles);
    let tasks = {
        let clock = st.arp.counters.tasks.borrow();
        if clock.active() {
            clock.finish(cycles)
        } else {
            Vec::new()
        }
    };
    RunOutcome {
        image: Rc::clone(image),
        stop,
        cycles,
        tasks,
        instructions: st.clock.instructions,
        host_time,
        console: std::mem::take(&mut st.io.console.captured),
        console_bytes: st.io.console.written,
        output_check: st.io.console.check.take().map(|c| c.finish()),
        sections,
        arp_file,
        arp_error,
        warnings,
        cores: st.threads.sched.core_report(),
        threads_created: st.threads.sched.threads_created(),
        peripheral_accesses: st.peripherals.accesses(),
        flash: st.flash.as_ref().map(|f| f.report()),
        l1cache: st.l1cache.as_ref().map(|c| c.report()),
        xip: st.xip.as_ref().map(|x| x.report()),
        core_events: st.core_events(),
        playback,
        section_events: st.arp.take_events(),
        section_events_dropped: st.arp.events_dropped,
        unpriced,
        clock: st.core_clock.clone(),
        uarts: st
            .devices
            .as_deref()
            .map(|d| d.summaries())
            .unwrap_or_default(),
    }
}

/// What the run's device registers make worth saying: a peripheral
/// polled when a limit ended the run, accesses whose counters are those
/// of their block's end.
fn device_warnings(st: &State, stop: &Stop) -> Vec<String> {
    let mut out = Vec::new();
    let limited = matches!(
        stop,
        Stop::CycleLimit(_) | Stop::Timeout(_) | Stop::Interrupted(_)
    );
    if limited {
        out.extend(st.peripherals.polling(st.clock.cycles));
    }
    if st.mmio.unplaced > 0 {
        out.push(format!(
            "{} device-register access(es) could not be placed at their instruction: the \
             counters they read are those of their block's end",
            st.mmio.unplaced
        ));
    }
    out
}

/// How often each unpriced mnemonic ran, most often first.
fn unpriced_counts(log: &UnpricedLog) -> Vec<UnpricedCount> {
    let mut by_mnemonic: std::collections::BTreeMap<(String, &'static str), u64> =
        std::collections::BTreeMap::new();
    for (mnemonics, runs) in log.blocks.values() {
        for (mnemonic, class) in mnemonics {
            *by_mnemonic
                .entry((mnemonic.clone(), class.name()))
                .or_default() += runs;
        }
    }
    let mut counts: Vec<UnpricedCount> = by_mnemonic
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|((mnemonic, class), executions)| UnpricedCount {
            mnemonic,
            class,
            executions,
        })
        .collect();
    counts.sort_by(|a, b| {
        b.executions
            .cmp(&a.executions)
            .then(a.mnemonic.cmp(&b.mnemonic))
    });
    counts
}

/// The report's warning for `--allow-unpriced`: how many executions, of
/// which mnemonics, and what they were charged.
fn unpriced_warning(counts: &[UnpricedCount], target: &Target) -> String {
    let total: u64 = counts.iter().map(|c| c.executions).sum();
    let alu = target.required_row(InsnClass::Alu).cycles;
    let list: Vec<String> = counts
        .iter()
        .map(|c| format!("{} ({}) {}", c.mnemonic, c.class, c.executions))
        .collect();
    format!(
        "--allow-unpriced: {total} execution(s) of instructions target `{}`'s cycle table does not \
         price, each counted as {alu} cycle(s) (an `alu` instruction): {}",
        target.name,
        list.join(", ")
    )
}

/// Unicorn's PC at a memory fault can lag behind the faulting instruction
/// (it is synchronised per block, not per instruction, on Thumb). The
/// faulting instruction is the first one from there on that accesses
/// memory the way the fault says; decoding stops at the first branch.
pub(super) fn faulting_instruction(emu: &Uc<'_>, pc: u64, kind: MemType) -> u64 {
    use InsnClass::*;
    let write = matches!(kind, MemType::WRITE_UNMAPPED | MemType::WRITE_PROT);
    let read = matches!(kind, MemType::READ_UNMAPPED | MemType::READ_PROT);
    if !write && !read {
        return pc;
    }
    let mut code = [0u8; 32];
    if emu.mem_read(pc, &mut code).is_err() {
        return pc;
    }
    let insns = emu
        .get_data()
        .decoder
        .decode(&code, pc, true)
        .unwrap_or_default();
    insns
        .iter()
        .find(|i| {
            // a PC-relative (literal) load reads the code it sits in
            let literal = emu.get_data().arch == Arch::Arm && i.address_regs & (1 << 15) != 0;
            if write {
                matches!(i.class, Store | StoreMultiple)
            } else {
                matches!(i.class, Load | LoadMultiple | PopPc) && !literal
            }
        })
        .map_or(pc, |i| i.addr)
}

/// `write (4 bytes)`: a fault's access, for a place that names itself.
fn access_verb(kind: MemType, size: usize) -> String {
    let verb = match kind {
        MemType::WRITE_UNMAPPED | MemType::WRITE_PROT => "write",
        MemType::FETCH_UNMAPPED | MemType::FETCH_PROT => "instruction fetch",
        _ => "read",
    };
    format!("{verb} ({size} bytes)")
}

pub(super) fn memory_fault_kind(kind: MemType, size: usize) -> String {
    let what = match kind {
        MemType::READ_UNMAPPED => "read of unmapped memory",
        MemType::WRITE_UNMAPPED => "write to unmapped memory",
        MemType::FETCH_UNMAPPED => "instruction fetch from unmapped memory",
        MemType::WRITE_PROT => "write to read-only memory",
        MemType::READ_PROT => "read of unreadable memory",
        MemType::FETCH_PROT => "instruction fetch from non-executable memory",
        _ => "invalid memory access",
    };
    format!("{what} ({size} bytes)")
}

/// A write just below a RAM region, with the stack pointer there too.
pub(super) fn looks_like_stack_overflow(target: &Target, addr: u64, sp: u64) -> bool {
    target
        .regions
        .iter()
        .any(|r| r.access.write && addr < r.start && r.start - addr <= 4096 && sp < r.start + 4096)
}

pub(super) fn describe_intr(arch: Arch, intno: u32) -> String {
    match arch {
        // QEMU's EXCP_* numbers, as Unicorn reports them for ARM
        Arch::Arm => match intno {
            1 => "undefined instruction (UsageFault)".into(),
            2 => "SVC with no operating system to take it".into(),
            3 => "prefetch abort (instruction fetch fault)".into(),
            4 => "data abort (BusFault)".into(),
            7 => "breakpoint (BKPT other than semihosting 0xAB)".into(),
            8 => "exception return with no exception active".into(),
            17 => "coprocessor or FPU instruction on a core without one (UsageFault NOCP)".into(),
            18 => "invalid state: branch to ARM (non-Thumb) code (UsageFault INVSTATE)".into(),
            19 => "stack limit exceeded: a push below the stack pointer's limit (PSPLIM or \
                   MSPLIM), a STKOF UsageFault (ARMv8-M, DDI 0553 B3.20; an RTOS sets PSPLIM \
                   to the running task's stack: it overflowed)"
                .into(),
            22 => "unaligned access (UsageFault UNALIGNED)".into(),
            n => format!("exception {n} (HardFault)"),
        },
        // RISC-V mcause codes of the exceptions `traps` does not take to
        // mtvec (the others are taken there)
        Arch::Riscv => match intno {
            1 => "instruction access fault".into(),
            5 => "load access fault".into(),
            7 => "store/AMO access fault".into(),
            12 | 13 | 15 => format!("page fault (mcause {intno}) on a core without an MMU"),
            n => format!("exception {n}"),
        },
    }
}
