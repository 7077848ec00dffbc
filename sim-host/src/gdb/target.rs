//! The gdbstub `Target`: registers, memory, breakpoints, resume and the
//! monitor commands, all through `machine::DebugGuest` while the guest is
//! stopped. Nothing here can fault the guest: a bad address is an error
//! reply to gdb.

use super::arch_m::{CortexM, MProfileRegs, REGISTERS};
use crate::machine::{DebugGuest, DebugResume};
use gdbstub::arch::Arch;
use gdbstub::common::Signal;
use gdbstub::outputln;
use gdbstub::target::ext::base::singlethread::{
    SingleThreadBase, SingleThreadResume, SingleThreadResumeOps, SingleThreadSingleStep,
    SingleThreadSingleStepOps,
};
use gdbstub::target::ext::base::BaseOps;
use gdbstub::target::ext::breakpoints::{
    Breakpoints, BreakpointsOps, SwBreakpoint, SwBreakpointOps,
};
use gdbstub::target::ext::monitor_cmd::{ConsoleOutput, MonitorCmd, MonitorCmdOps};
use gdbstub::target::{Target, TargetError, TargetResult};
use gdbstub_arch::riscv::reg::RiscvCoreRegs;
use gdbstub_arch::riscv::Riscv32;
use std::marker::PhantomData;

/// A gdbstub architecture whose registers come from a [`DebugGuest`].
pub trait GuestArch: Arch<Usize = u32> {
    fn read(guest: &DebugGuest, regs: &mut Self::Registers);
    /// Whether every register was written.
    fn write(guest: &mut DebugGuest, regs: &Self::Registers) -> bool;
}

fn read32(guest: &DebugGuest, n: usize) -> u32 {
    guest.register(n).unwrap_or(0) as u32
}

impl GuestArch for CortexM {
    fn read(guest: &DebugGuest, regs: &mut MProfileRegs) {
        for (n, r) in regs.0.iter_mut().enumerate() {
            *r = read32(guest, n);
        }
    }

    fn write(guest: &mut DebugGuest, regs: &MProfileRegs) -> bool {
        (0..REGISTERS).all(|n| guest.set_register(n, u64::from(regs.0[n])))
    }
}

/// x0-x31, then pc (register 32).
impl GuestArch for Riscv32 {
    fn read(guest: &DebugGuest, regs: &mut RiscvCoreRegs<u32>) {
        for (n, r) in regs.x.iter_mut().enumerate() {
            *r = read32(guest, n);
        }
        regs.pc = read32(guest, 32);
    }

    fn write(guest: &mut DebugGuest, regs: &RiscvCoreRegs<u32>) -> bool {
        // x0 is hard-wired to zero
        let x = (1..32).all(|n| guest.set_register(n, u64::from(regs.x[n])));
        x && guest.set_register(32, u64::from(regs.pc))
    }
}

/// The stopped guest as gdbstub sees it.
pub struct GdbTarget<A> {
    pub guest: DebugGuest,
    /// How gdb asked the guest to go on (set by a resume packet).
    pub resume: Option<DebugResume>,
    arch: PhantomData<A>,
}

impl<A> GdbTarget<A> {
    pub fn new(guest: DebugGuest) -> GdbTarget<A> {
        GdbTarget {
            guest,
            resume: None,
            arch: PhantomData,
        }
    }
}

impl<A: GuestArch> Target for GdbTarget<A> {
    type Arch = A;
    type Error = &'static str;

    fn base_ops(&mut self) -> BaseOps<'_, A, Self::Error> {
        BaseOps::SingleThread(self)
    }

    fn support_breakpoints(&mut self) -> Option<BreakpointsOps<'_, Self>> {
        Some(self)
    }

    fn support_monitor_cmd(&mut self) -> Option<MonitorCmdOps<'_, Self>> {
        Some(self)
    }
}

impl<A: GuestArch> SingleThreadBase for GdbTarget<A> {
    fn read_registers(&mut self, regs: &mut A::Registers) -> TargetResult<(), Self> {
        A::read(&self.guest, regs);
        Ok(())
    }

    fn write_registers(&mut self, regs: &A::Registers) -> TargetResult<(), Self> {
        match A::write(&mut self.guest, regs) {
            true => Ok(()),
            false => Err(TargetError::NonFatal),
        }
    }

    /// The mapped bytes from `start_addr` on; an error if there are none.
    fn read_addrs(&mut self, start_addr: u32, data: &mut [u8]) -> TargetResult<usize, Self> {
        match self.guest.read_memory(u64::from(start_addr), data) {
            0 if !data.is_empty() => Err(TargetError::NonFatal),
            n => Ok(n),
        }
    }

    fn write_addrs(&mut self, start_addr: u32, data: &[u8]) -> TargetResult<(), Self> {
        match self.guest.write_memory(u64::from(start_addr), data) {
            true => Ok(()),
            false => Err(TargetError::NonFatal),
        }
    }

    fn support_resume(&mut self) -> Option<SingleThreadResumeOps<'_, Self>> {
        Some(self)
    }
}

/// Signals gdb passes on resuming are not delivered: the guest has no
/// signal handlers.
impl<A: GuestArch> SingleThreadResume for GdbTarget<A> {
    fn resume(&mut self, _signal: Option<Signal>) -> Result<(), Self::Error> {
        self.resume = Some(DebugResume::Continue);
        Ok(())
    }

    fn support_single_step(&mut self) -> Option<SingleThreadSingleStepOps<'_, Self>> {
        Some(self)
    }
}

impl<A: GuestArch> SingleThreadSingleStep for GdbTarget<A> {
    fn step(&mut self, _signal: Option<Signal>) -> Result<(), Self::Error> {
        self.resume = Some(DebugResume::Step);
        Ok(())
    }
}

impl<A: GuestArch> Breakpoints for GdbTarget<A> {
    fn support_sw_breakpoint(&mut self) -> Option<SwBreakpointOps<'_, Self>> {
        Some(self)
    }
}

/// Software breakpoints without writing a breakpoint instruction: the
/// machine stops in front of the address (guest memory is untouched).
impl<A: GuestArch> SwBreakpoint for GdbTarget<A> {
    fn add_sw_breakpoint(
        &mut self,
        addr: u32,
        _kind: A::BreakpointKind,
    ) -> TargetResult<bool, Self> {
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

impl<A: GuestArch> MonitorCmd for GdbTarget<A> {
    fn handle_monitor_cmd(
        &mut self,
        cmd: &[u8],
        mut out: ConsoleOutput<'_>,
    ) -> Result<(), Self::Error> {
        match String::from_utf8_lossy(cmd).trim() {
            "cycles" => {
                let (cycles, instructions) = self.guest.counters();
                outputln!(out, "cycles: {cycles}  instructions: {instructions}");
            }
            "sections" => match self.guest.innermost_section() {
                Some(sid) => outputln!(out, "innermost open ARP section: {sid}"),
                None => outputln!(out, "no ARP section is open"),
            },
            _ => {
                outputln!(out, "sim-host monitor commands:");
                outputln!(
                    out,
                    "  cycles    simulated cycles (running thread) and instructions so far"
                );
                outputln!(out, "  sections  the innermost open ARP section");
            }
        }
        Ok(())
    }
}
