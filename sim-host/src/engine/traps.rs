//! RISC-V traps taken as the core takes them (RISC-V privileged spec,
//! version 20211203, machine ISA 1.12): the synchronous exceptions
//! (`ecall`, `ebreak` outside a semihosting sequence, illegal
//! instructions, misaligned AMOs and LR) and the interrupts of the board's
//! machine timer (`machine_timer`).
//!
//! Unicorn does no trap entry of its own: its interrupt hook gets QEMU's
//! exception number with the PC moved 4 past the trapping instruction
//! (whatever its length), EBREAK comes to its invalid-instruction hook
//! with the PC on it, and the host does the entry: mepc = the trapping
//! instruction (3.1.14, 3.3.1) or the interrupted one, mcause (3.1.15),
//! mtval as the target file says the core writes it (3.1.16), mstatus
//! MPIE = MIE, MIE = 0, MPP = the privilege trapped from, which becomes M
//! (3.1.6.1), and the PC at mtvec's BASE: plus 4 x cause for an interrupt
//! when mtvec is vectored, never for an exception (3.1.7). QEMU's own
//! `mret` returns (3.3.2): MIE = MPIE, MPIE = 1, the privilege from MPP,
//! the PC from mepc.
//!
//! Time: a synchronous trap costs `[system] trap_entry` from the trapping
//! instruction's start (it costs nothing else; what its block charged for
//! it and for the instructions after it is taken back), an interrupt
//! `interrupt_entry` between two instructions. Traps nest as the spec
//! says: an exception is taken whatever MIE, an interrupt only while MIE
//! is set (or below M-mode); a handler that wants to survive a nested
//! trap saves mepc and mstatus itself.
//!
//! Bookkeeping: an interrupt taken in front of a block keeps that block's
//! entry state (the taken branch into it, the predictor's pending branch),
//! which the block pays when the handler returns to it, as it would have
//! without the interrupt. The record lives until the first block boundary
//! where interrupts are enabled again; a synchronous trap, nested or not,
//! never touches it (its trapping block was charged, and its handler's
//! return is an ordinary jump to the block at mepc).

use super::pricing::counters_at;
use super::registers::arch_reg;
use super::state::{stop_with, Interrupted, Uc};
use super::stop::{describe_intr, fault_at};
use crate::model::target::{Arch, TrapValue};
use unicorn_engine::RegisterRISCV;

/// mstatus.MIE, .MPIE and .MPP (3.1.6).
pub(super) const MSTATUS_MIE: u64 = 1 << 3;
const MSTATUS_MPIE: u64 = 1 << 7;
const MPP_SHIFT: u64 = 11;
const MSTATUS_MPP: u64 = 3 << MPP_SHIFT;
/// mcause's interrupt bit (RV32).
const INTERRUPT: u64 = 1 << 31;
/// Machine mode.
const PRV_M: u64 = 3;
/// How far Unicorn has moved the PC past a trapping instruction when its
/// interrupt hook runs (qemu/accel/tcg/cpu-exec.c, TARGET_RISCV).
pub(super) const UNICORN_PC_ADVANCE: u64 = 4;

/// Synchronous exception codes (3.1.15, Table 3.6).
pub(super) const ILLEGAL_INSTRUCTION: u64 = 2;
const INSTRUCTION_MISALIGNED: u64 = 0;
const BREAKPOINT: u64 = 3;
const LOAD_MISALIGNED: u64 = 4;
const STORE_MISALIGNED: u64 = 6;
const ECALL_U: u64 = 8;
const ECALL_M: u64 = 11;

/// A trap's name in messages.
fn name(cause: u64) -> String {
    if cause & INTERRUPT != 0 {
        return match cause & !INTERRUPT {
            3 => "machine software interrupt (mcause 0x80000003)".into(),
            7 => "machine timer interrupt (mcause 0x80000007)".into(),
            n => format!("interrupt {n}"),
        };
    }
    let what = match cause {
        INSTRUCTION_MISALIGNED => "instruction address misaligned",
        ILLEGAL_INSTRUCTION => "illegal instruction",
        BREAKPOINT => "ebreak (breakpoint)",
        LOAD_MISALIGNED => "load address misaligned",
        STORE_MISALIGNED => "store/AMO address misaligned",
        ECALL_U => "ecall from U-mode",
        9 => "ecall from S-mode",
        ECALL_M => "ecall from M-mode",
        _ => "exception",
    };
    format!("{what} (mcause {cause})")
}

/// Unicorn's interrupt hook on a RISC-V core: the exceptions the spec
/// sends to mtvec are taken, others end the run as faults.
pub(super) fn on_exception(uc: &mut Uc<'_>, intno: u32) {
    let pc = uc
        .reg_read(RegisterRISCV::PC)
        .unwrap_or(0)
        .wrapping_sub(UNICORN_PC_ADVANCE);
    let cause = u64::from(intno);
    match cause {
        // QEMU raises every ECALL as U-mode's; its trap entry, which
        // Unicorn skips, adds the privilege (3.3.1: 8 + mode)
        ECALL_U => {
            let privilege = uc.reg_read(RegisterRISCV::PRIV).unwrap_or(PRV_M) & 3;
            take_exception(uc, ECALL_U + privilege, pc);
        }
        LOAD_MISALIGNED if is_amo(uc, pc) => take_exception(uc, STORE_MISALIGNED, pc),
        INSTRUCTION_MISALIGNED | ILLEGAL_INSTRUCTION | LOAD_MISALIGNED | STORE_MISALIGNED => {
            take_exception(uc, cause, pc)
        }
        _ => {
            let stop = fault_at(uc, pc, describe_intr(Arch::Riscv, intno), None);
            stop_with(uc, stop);
        }
    }
}

/// Whether the instruction at `pc` is an AMO (or SC): a misaligned one is
/// a store/AMO address misaligned exception (3.1.15), which QEMU, doing
/// the AMO as a load and a store on one thread, raises as its load's.
fn is_amo(uc: &Uc<'_>, pc: u64) -> bool {
    const OPCODE_AMO: u32 = 0x2f;
    const FUNCT5_LR: u32 = 0b00010;
    let mut bytes = [0u8; 4];
    let word = match uc.mem_read(pc, &mut bytes) {
        Ok(()) => u32::from_le_bytes(bytes),
        Err(_) => return false,
    };
    word & 0x7f == OPCODE_AMO && word >> 27 != FUNCT5_LR
}

/// Unicorn's invalid-instruction hook on a RISC-V core, which QEMU's
/// EBREAK reaches (its `riscv_stop_interrupt`): the breakpoint exception.
/// Always handled: taken, or the run stopped.
pub(super) fn on_breakpoint(uc: &mut Uc<'_>) -> bool {
    let pc = uc.reg_read(RegisterRISCV::PC).unwrap_or(0);
    take_exception(uc, BREAKPOINT, pc);
    // Unicorn ends this emu_start anyway (`resume::start` goes on)
    uc.get_data_mut().ebreak_taken = true;
    true
}

/// Takes the synchronous exception `cause` of the instruction at `pc`,
/// or ends the run saying why it cannot be taken.
pub(super) fn take_exception(uc: &mut Uc<'_>, cause: u64, pc: u64) {
    let Some(entry) = uc
        .get_data()
        .target
        .system
        .traps
        .as_ref()
        .map(|t| t.entry.cycles)
    else {
        let kind = format!(
            "{} with no trap entry cost: target `{}` does not say how its core takes traps \
             ([system] trap_entry and mtval)",
            name(cause),
            uc.get_data().target.name
        );
        let stop = fault_at(uc, pc, kind, None);
        return stop_with(uc, stop);
    };
    let mtvec = uc.reg_read(RegisterRISCV::MTVEC).unwrap_or(0);
    // a synchronous exception goes to BASE in both modes (3.1.7)
    let Some(handler) = handler(uc, cause, pc, mtvec & !3) else {
        return;
    };
    let tval = trap_value(uc, cause, pc);
    let (cycles, instructions) = counters_at(uc, pc);
    let st = uc.get_data_mut();
    if instructions + 1 < st.clock.instructions {
        // taken inside its block: the rest of the block never runs, and
        // the fault trail cannot walk back across a block cut short
        st.clock.instructions = instructions + 1;
        st.trail.floor = st.clock.instructions;
    }
    st.clock.cycles = cycles;
    let sp = uc.reg_read(RegisterRISCV::SP).unwrap_or(0) as u32;
    if let Err(kind) = super::tasks::check_task_stack(uc, sp) {
        let stop = fault_at(uc, pc, kind, None);
        return stop_with(uc, stop);
    }
    super::tasks::trap_entered(uc, cause, sp, cycles);
    uc.get_data_mut().clock.cycles = cycles + u64::from(entry);
    enter(uc, cause, pc, tval, handler);
}

/// The handler a trap jumps to, if it is executable memory; otherwise
/// the run ends naming the trap, where it happened and the rule.
fn handler(uc: &mut Uc<'_>, cause: u64, pc: u64, handler: u64) -> Option<u64> {
    let st = uc.get_data();
    let refusal = if st.threads.sched.threads_created() > 0 {
        Some(
            "while simthread threads exist: traps are taken only in a single-threaded guest \
             (the trap CSRs are the core's, not a thread's)"
                .to_owned(),
        )
    } else if !st
        .target
        .region_of(handler, 2)
        .is_some_and(|r| r.access.execute)
    {
        let why = if handler == 0 {
            "mtvec is 0: no trap handler is installed".to_owned()
        } else {
            format!("its handler address {handler:#010x} (from mtvec) is not executable memory")
        };
        Some(format!(
            "with no handler to take it: {why} (RISC-V privileged spec 3.1.7: a trap sets the \
             pc to mtvec's BASE, plus 4 x cause for an interrupt in vectored mode)"
        ))
    } else {
        None
    };
    let Some(refusal) = refusal else {
        return Some(handler);
    };
    let stop = fault_at(uc, pc, format!("{} {refusal}", name(cause)), None);
    stop_with(uc, stop);
    None
}

/// What mtval gets (3.1.16), as the target says its core writes it.
fn trap_value(uc: &Uc<'_>, cause: u64, pc: u64) -> u64 {
    let informative = uc
        .get_data()
        .target
        .system
        .traps
        .as_ref()
        .is_some_and(|t| t.mtval == TrapValue::Informative);
    if !informative {
        return 0;
    }
    let mut bytes = [0u8; 4];
    let _ = uc.mem_read(pc, &mut bytes);
    let word = u32::from_le_bytes(bytes);
    match cause {
        // the instruction's bits: 16 of a compressed one (low bits not 11)
        ILLEGAL_INSTRUCTION if word & 3 != 3 => u64::from(word & 0xffff),
        ILLEGAL_INSTRUCTION => u64::from(word),
        BREAKPOINT => pc,
        // LR and the AMOs address memory by rs1 alone
        LOAD_MISALIGNED | STORE_MISALIGNED => {
            arch_reg(Arch::Riscv, (word >> 15) & 0x1f).map_or(0, |id| uc.reg_read(id).unwrap_or(0))
        }
        _ => 0,
    }
}

/// The trap entry's registers and block-to-block state: the handler's
/// first block is entered by the trap's jump, with no branch of its own.
fn enter(uc: &mut Uc<'_>, cause: u64, epc: u64, tval: u64, handler: u64) {
    let mstatus = uc.reg_read(RegisterRISCV::MSTATUS).unwrap_or(0);
    let privilege = uc.reg_read(RegisterRISCV::PRIV).unwrap_or(PRV_M) & 3;
    let mpie = if mstatus & MSTATUS_MIE != 0 {
        MSTATUS_MPIE
    } else {
        0
    };
    let mstatus =
        (mstatus & !(MSTATUS_MIE | MSTATUS_MPIE | MSTATUS_MPP)) | mpie | (privilege << MPP_SHIFT);
    let _ = uc.reg_write(RegisterRISCV::MEPC, epc);
    let _ = uc.reg_write(RegisterRISCV::MCAUSE, cause);
    let _ = uc.reg_write(RegisterRISCV::MTVAL, tval);
    let _ = uc.reg_write(RegisterRISCV::MSTATUS, mstatus);
    if privilege != PRV_M {
        let _ = uc.reg_write(RegisterRISCV::PRIV, PRV_M);
    }
    let _ = uc.reg_write(RegisterRISCV::PC, handler);
    let clock = &mut uc.get_data_mut().clock;
    clock.prev_fallthrough = handler;
    clock.prev_taken_extra = 0;
    clock.prev_branch = 0;
}

/// Whether interrupts can be taken now: MIE set, or the hart below M-mode
/// (3.1.6.1: "interrupts for higher-privilege modes ... are always
/// globally enabled").
pub(super) fn interrupts_enabled(uc: &Uc<'_>, mstatus: u64) -> bool {
    mstatus & MSTATUS_MIE != 0 || uc.reg_read(RegisterRISCV::PRIV).unwrap_or(PRV_M) & 3 != PRV_M
}

/// At a block boundary, with `mstatus` as it is: whether an interrupt's
/// handler still runs (interrupts still disabled since it was taken).
/// When it has ended, its record goes, and when the block at `addr` is
/// the one it was taken in front of, that block's entry state is back.
pub(super) fn interrupt_handler_runs(uc: &mut Uc<'_>, addr: u64, mstatus: u64) -> bool {
    if uc.get_data().riscv_interrupted.is_none() {
        return false;
    }
    if !interrupts_enabled(uc, mstatus) {
        return true;
    }
    let st = uc.get_data_mut();
    if let Some(was) = st.riscv_interrupted.take() {
        if addr == was.return_to {
            st.clock.prev_fallthrough = was.fallthrough;
            st.clock.prev_taken_extra = was.taken_extra;
            st.clock.prev_last_insn = was.last_insn;
            st.clock.prev_branch = was.branch;
        }
    }
    false
}

/// Takes the interrupt `code` (3 software, 7 timer) in front of the block
/// at `addr`, or ends the run saying why it cannot. Either way the block
/// does not run now: returns true.
pub(super) fn take_interrupt(uc: &mut Uc<'_>, code: u64, addr: u64) -> bool {
    let cause = INTERRUPT | code;
    let entry = uc
        .get_data()
        .target
        .system
        .traps
        .as_ref()
        .and_then(|t| t.interrupt_entry.as_ref())
        .map_or(0, |c| c.cycles);
    let mtvec = uc.reg_read(RegisterRISCV::MTVEC).unwrap_or(0);
    let target = if mtvec & 3 == 1 {
        (mtvec & !3) + 4 * code
    } else {
        mtvec & !3
    };
    let Some(handler) = handler(uc, cause, addr, target) else {
        return true;
    };
    let now = uc.get_data().clock.cycles;
    let sp = uc.reg_read(RegisterRISCV::SP).unwrap_or(0) as u32;
    if let Err(kind) = super::tasks::check_task_stack(uc, sp) {
        let stop = fault_at(uc, addr, kind, None);
        stop_with(uc, stop);
        return true;
    }
    super::tasks::trap_entered(uc, cause, sp, now);
    let st = uc.get_data_mut();
    st.riscv_interrupted = Some(Interrupted {
        return_to: addr,
        fallthrough: st.clock.prev_fallthrough,
        taken_extra: st.clock.prev_taken_extra,
        last_insn: st.clock.prev_last_insn,
        branch: st.clock.prev_branch,
    });
    st.clock.cycles += u64::from(entry);
    enter(uc, cause, addr, 0, handler);
    // look at every block of the handler for its return
    let limits = &mut uc.get_data_mut().limits;
    limits.next_event = 0;
    limits.limit = 0;
    true
}
