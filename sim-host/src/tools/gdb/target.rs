//! The gdbstub `Target`: every guest thread is a GDB thread (all-stop:
//! the guest stops as a whole), with its registers, memory, breakpoints,
//! watchpoints, resume and the monitor commands, all through
//! `machine::DebugGuest` while the guest is stopped. Nothing here can
//! fault the guest: a bad address is an error reply to gdb.

use super::arch_m::{register_count, CortexM, MProfileRegs};
use super::checked::{Checked, CheckedRegs, WrongLength};
use super::ids::{thread_of, tid};
use crate::engine::{DebugGuest, DebugResume, Watch};
use crate::host::threads::ThreadId;
use gdbstub::arch::Arch;
use gdbstub::common::{Signal, Tid};
use gdbstub::target::ext::base::multithread::{
    MultiThreadBase, MultiThreadResume, MultiThreadResumeOps, MultiThreadSchedulerLocking,
    MultiThreadSchedulerLockingOps, MultiThreadSingleStep, MultiThreadSingleStepOps,
};
use gdbstub::target::ext::base::BaseOps;
use gdbstub::target::ext::breakpoints::{
    Breakpoints, BreakpointsOps, HwBreakpoint, HwBreakpointOps, HwWatchpoint, HwWatchpointOps,
    SwBreakpoint, SwBreakpointOps, WatchKind,
};
use gdbstub::target::ext::monitor_cmd::{ConsoleOutput, MonitorCmd, MonitorCmdOps};
use gdbstub::target::ext::thread_extra_info::{ThreadExtraInfo, ThreadExtraInfoOps};
use gdbstub::target::{Target, TargetError, TargetResult};
use gdbstub_arch::riscv::reg::RiscvCoreRegs;
use gdbstub_arch::riscv::Riscv32;
use std::marker::PhantomData;

/// A gdbstub architecture whose registers come from a [`DebugGuest`].
pub trait GuestArch: Arch<Usize = u32> {
    fn read(guest: &DebugGuest, thread: ThreadId, regs: &mut Self::Registers);
    /// Whether every register was written.
    fn write(guest: &mut DebugGuest, thread: ThreadId, regs: &Self::Registers) -> bool;
    /// A `G` packet's data that was not the register file's length.
    fn wrong_length(_regs: &Self::Registers) -> Option<WrongLength> {
        None
    }
}

/// `A`'s registers, refused when a `G` packet had the wrong length.
impl<A: GuestArch> GuestArch for Checked<A> {
    fn read(guest: &DebugGuest, thread: ThreadId, regs: &mut CheckedRegs<A::Registers>) {
        A::read(guest, thread, &mut regs.regs);
    }

    fn write(guest: &mut DebugGuest, thread: ThreadId, regs: &CheckedRegs<A::Registers>) -> bool {
        A::write(guest, thread, &regs.regs)
    }

    fn wrong_length(regs: &CheckedRegs<A::Registers>) -> Option<WrongLength> {
        regs.wrong_length
    }
}

fn read32(guest: &DebugGuest, thread: ThreadId, n: usize) -> u32 {
    guest.thread_register(thread, n).unwrap_or(0) as u32
}

/// r0-r12, sp, lr, pc, xpsr, msp, psp, and with `VFP` d0-d15 (whole, 64
/// bits) and fpscr.
impl<const VFP: bool> GuestArch for CortexM<VFP> {
    fn read(guest: &DebugGuest, thread: ThreadId, regs: &mut MProfileRegs<VFP>) {
        for (n, r) in regs.0[..register_count(VFP)].iter_mut().enumerate() {
            *r = guest.thread_register(thread, n).unwrap_or(0);
        }
    }

    fn write(guest: &mut DebugGuest, thread: ThreadId, regs: &MProfileRegs<VFP>) -> bool {
        (0..register_count(VFP)).all(|n| guest.set_thread_register(thread, n, regs.0[n]))
    }
}

/// x0-x31, then pc (register 32).
impl GuestArch for Riscv32 {
    fn read(guest: &DebugGuest, thread: ThreadId, regs: &mut RiscvCoreRegs<u32>) {
        for (n, r) in regs.x.iter_mut().enumerate() {
            *r = read32(guest, thread, n);
        }
        regs.pc = read32(guest, thread, 32);
    }

    fn write(guest: &mut DebugGuest, thread: ThreadId, regs: &RiscvCoreRegs<u32>) -> bool {
        // x0 is hard-wired to zero
        let x = (1..32).all(|n| guest.set_thread_register(thread, n, u64::from(regs.x[n])));
        x && guest.set_thread_register(thread, 32, u64::from(regs.pc))
    }
}

/// The errno of a malformed request (Linux's EINVAL, which gdb shows).
const EINVAL: u8 = 22;

/// The stopped guest as gdbstub sees it.
pub struct GdbTarget<A> {
    pub guest: DebugGuest,
    /// How gdb asked the guest to go on (set by a resume packet).
    pub resume: Option<DebugResume>,
    /// The thread a pending resume steps, if it steps one.
    step: Option<ThreadId>,
    /// `monitor reset` was asked for.
    pub reset: bool,
    arch: PhantomData<A>,
}

impl<A> GdbTarget<A> {
    pub fn new(guest: DebugGuest) -> GdbTarget<A> {
        GdbTarget {
            guest,
            resume: None,
            step: None,
            reset: false,
            arch: PhantomData,
        }
    }
}

impl<A: GuestArch> Target for GdbTarget<A> {
    type Arch = A;
    type Error = &'static str;

    fn base_ops(&mut self) -> BaseOps<'_, A, Self::Error> {
        BaseOps::MultiThread(self)
    }

    fn support_breakpoints(&mut self) -> Option<BreakpointsOps<'_, Self>> {
        Some(self)
    }

    fn support_monitor_cmd(&mut self) -> Option<MonitorCmdOps<'_, Self>> {
        Some(self)
    }
}

impl<A: GuestArch> MultiThreadBase for GdbTarget<A> {
    /// An error for a thread that is gone (ended, or from before a reset).
    fn read_registers(&mut self, regs: &mut A::Registers, tid: Tid) -> TargetResult<(), Self> {
        if !self.guest.thread_exists(thread_of(tid)) {
            return Err(TargetError::NonFatal);
        }
        A::read(&self.guest, thread_of(tid), regs);
        Ok(())
    }

    /// A `G` packet of the wrong length is EINVAL, and nothing written.
    fn write_registers(&mut self, regs: &A::Registers, tid: Tid) -> TargetResult<(), Self> {
        if let Some(wrong) = A::wrong_length(regs) {
            crate::say!(
                "sim-host: gdb: a `G` packet with {} bytes of register data refused (E16): \
                 the register file is {} bytes; no register was written",
                wrong.sent,
                wrong.expected
            );
            return Err(TargetError::Errno(EINVAL));
        }
        match A::write(&mut self.guest, thread_of(tid), regs) {
            true => Ok(()),
            false => Err(TargetError::NonFatal),
        }
    }

    /// The mapped bytes from `start_addr` on; an error if there are none.
    /// Threads share one memory.
    fn read_addrs(
        &mut self,
        start_addr: u32,
        data: &mut [u8],
        _tid: Tid,
    ) -> TargetResult<usize, Self> {
        match self.guest.read_memory(u64::from(start_addr), data) {
            0 if !data.is_empty() => Err(TargetError::NonFatal),
            n => Ok(n),
        }
    }

    fn write_addrs(&mut self, start_addr: u32, data: &[u8], _tid: Tid) -> TargetResult<(), Self> {
        match self.guest.write_memory(u64::from(start_addr), data) {
            true => Ok(()),
            false => Err(TargetError::NonFatal),
        }
    }

    fn list_active_threads(
        &mut self,
        thread_is_active: &mut dyn FnMut(Tid),
    ) -> Result<(), Self::Error> {
        for t in self.guest.threads() {
            thread_is_active(tid(t.id));
        }
        Ok(())
    }

    fn support_resume(&mut self) -> Option<MultiThreadResumeOps<'_, Self>> {
        Some(self)
    }

    fn support_thread_extra_info(&mut self) -> Option<ThreadExtraInfoOps<'_, Self>> {
        Some(self)
    }
}

/// Signals gdb passes on resuming are not delivered: the guest has no
/// signal handlers.
impl<A: GuestArch> MultiThreadResume for GdbTarget<A> {
    fn resume(&mut self) -> Result<(), Self::Error> {
        self.resume = Some(match self.step.take() {
            Some(thread) => DebugResume::Step(thread),
            None => DebugResume::Continue,
        });
        Ok(())
    }

    fn clear_resume_actions(&mut self) -> Result<(), Self::Error> {
        self.step = None;
        Ok(())
    }

    fn set_resume_action_continue(
        &mut self,
        _tid: Tid,
        _signal: Option<Signal>,
    ) -> Result<(), Self::Error> {
        Ok(())
    }

    fn support_single_step(&mut self) -> Option<MultiThreadSingleStepOps<'_, Self>> {
        Some(self)
    }

    fn support_scheduler_locking(&mut self) -> Option<MultiThreadSchedulerLockingOps<'_, Self>> {
        Some(self)
    }
}

/// gdb holds the other threads while it steps one over a breakpoint. The
/// simulated schedule is part of what is measured, so threads are never
/// held: the others run as they would without the debugger until the
/// stepped thread has run its instruction.
impl<A: GuestArch> MultiThreadSchedulerLocking for GdbTarget<A> {
    fn set_resume_action_scheduler_lock(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

impl<A: GuestArch> MultiThreadSingleStep for GdbTarget<A> {
    fn set_resume_action_step(
        &mut self,
        tid: Tid,
        _signal: Option<Signal>,
    ) -> Result<(), Self::Error> {
        self.step = Some(thread_of(tid));
        Ok(())
    }
}

/// `info threads`: each thread's core, clock, state and innermost section.
impl<A: GuestArch> ThreadExtraInfo for GdbTarget<A> {
    fn thread_extra_info(&self, tid: Tid, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let thread = thread_of(tid);
        let Some(t) = self.guest.threads().into_iter().find(|t| t.id == thread) else {
            return Ok(0);
        };
        let text = format!("thread {}, {}", t.id, super::monitor::thread_summary(&t));
        let n = text.len().min(buf.len());
        buf[..n].copy_from_slice(&text.as_bytes()[..n]);
        Ok(n)
    }
}

impl<A: GuestArch> Breakpoints for GdbTarget<A> {
    fn support_sw_breakpoint(&mut self) -> Option<SwBreakpointOps<'_, Self>> {
        Some(self)
    }

    fn support_hw_breakpoint(&mut self) -> Option<HwBreakpointOps<'_, Self>> {
        Some(self)
    }

    fn support_hw_watchpoint(&mut self) -> Option<HwWatchpointOps<'_, Self>> {
        Some(self)
    }
}

/// Software breakpoints without writing a breakpoint instruction: the
/// machine stops in front of the address (guest memory is untouched).
impl<A: GuestArch> SwBreakpoint for GdbTarget<A> {
    /// An odd address is refused (EINVAL): no instruction starts there
    /// (gdb clears the Thumb bit itself), so it could never stop.
    fn add_sw_breakpoint(
        &mut self,
        addr: u32,
        _kind: A::BreakpointKind,
    ) -> TargetResult<bool, Self> {
        if addr & 1 != 0 {
            crate::say!(
                "sim-host: gdb: a breakpoint at the odd address {addr:#010x} refused (E16): \
                 instructions start at even addresses"
            );
            return Err(TargetError::Errno(EINVAL));
        }
        Ok(self.guest.add_breakpoint(u64::from(addr)))
    }

    fn remove_sw_breakpoint(
        &mut self,
        addr: u32,
        _kind: A::BreakpointKind,
    ) -> TargetResult<bool, Self> {
        Ok(self.guest.remove_breakpoint(u64::from(addr)))
    }
}

/// Hardware breakpoints are the software ones (code hooks, with no limit
/// on their number).
impl<A: GuestArch> HwBreakpoint for GdbTarget<A> {
    fn add_hw_breakpoint(
        &mut self,
        addr: u32,
        kind: A::BreakpointKind,
    ) -> TargetResult<bool, Self> {
        self.add_sw_breakpoint(addr, kind)
    }

    fn remove_hw_breakpoint(
        &mut self,
        addr: u32,
        kind: A::BreakpointKind,
    ) -> TargetResult<bool, Self> {
        self.remove_sw_breakpoint(addr, kind)
    }
}

fn watch_of(kind: WatchKind) -> Watch {
    match kind {
        WatchKind::Write => Watch::Write,
        WatchKind::Read => Watch::Read,
        WatchKind::ReadWrite => Watch::Access,
    }
}

/// Watchpoints: memory hooks on the watched bytes, installed only while
/// set.
impl<A: GuestArch> HwWatchpoint for GdbTarget<A> {
    fn add_hw_watchpoint(
        &mut self,
        addr: u32,
        len: u32,
        kind: WatchKind,
    ) -> TargetResult<bool, Self> {
        let watch = watch_of(kind);
        Ok(self
            .guest
            .add_watchpoint(u64::from(addr), u64::from(len), watch))
    }

    fn remove_hw_watchpoint(
        &mut self,
        addr: u32,
        len: u32,
        kind: WatchKind,
    ) -> TargetResult<bool, Self> {
        let watch = watch_of(kind);
        Ok(self
            .guest
            .remove_watchpoint(u64::from(addr), u64::from(len), watch))
    }
}

impl<A: GuestArch> MonitorCmd for GdbTarget<A> {
    fn handle_monitor_cmd(
        &mut self,
        cmd: &[u8],
        mut out: ConsoleOutput<'_>,
    ) -> Result<(), Self::Error> {
        let command = String::from_utf8_lossy(cmd);
        match super::monitor::run(&self.guest, command.trim()) {
            super::monitor::Reply::Text(text) => {
                for line in text.lines() {
                    gdbstub::outputln!(out, "{line}");
                }
            }
            super::monitor::Reply::Reset => {
                self.reset = true;
                gdbstub::outputln!(
                    out,
                    "the guest is reset: the run starts again from its first instruction \
                     (gdb keeps what it read before: `maintenance flush register-cache` and `thread 1` show the new state)"
                );
            }
        }
        Ok(())
    }
}
