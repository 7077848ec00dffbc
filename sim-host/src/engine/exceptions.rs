//! What the guest's traps reach: semihosting (ARM `BKPT 0xAB`, the RISC-V
//! `ebreak` sequence), RISC-V traps to mtvec (`traps`), other exceptions
//! as faults, and the memory fault hook.

use super::api::{uc, MachineError};
use super::api::{Counting, Stop};
use super::interrupts;
use super::memory::{add_fault_hook, fault_hook_ranges, UcMemory};
use super::registers::regs;
use super::state::{stop_with, Uc};
use super::stop::{describe_intr, fault, stop_for_deadline_or_signal};
use super::traps;
use crate::host::sandbox::Sandbox;
use crate::host::semihost::{self, Console, Outcome, Semihost};
use crate::image::elf::GuestImage;
use crate::model::target::{Arch, Target};
use unicorn_engine::RegisterARM;
use unicorn_engine::RegisterRISCV;

/// Carries out a semihosting call whose operation and parameter are in the
/// first two argument registers.
pub(super) fn semihosting_call(uc: &mut Uc<'_>) {
    let r = regs(uc.get_data().arch);
    let op = uc.reg_read(r.args[0]).unwrap_or(0) as u32;
    let param = uc.reg_read(r.args[1]).unwrap_or(0) as u32;
    let request = match semihost::decode(op, param, &UcMemory(uc)) {
        Ok(req) => req,
        Err(e) => {
            let stop = fault(
                uc,
                format!("bad semihosting call {op:#x}: {e}"),
                Some(u64::from(e.addr)),
            );
            return stop_with(uc, stop);
        }
    };
    // Take the semihosting state and console out so the guest memory can be
    // borrowed mutably alongside them.
    let cycles = uc.get_data().clock.cycles;
    let now = crate::host::devices::Now {
        cycles,
        picos: uc.get_data().core_clock.picos_at(cycles),
    };
    let mut sh = std::mem::replace(
        &mut uc.get_data_mut().io.semihost,
        Semihost::new(Sandbox::none(), String::new(), 1, [0; 4]),
    );
    let mut console = std::mem::take(&mut uc.get_data_mut().io.console);
    let result = sh.handle(
        request,
        now,
        &mut UcMemory(uc),
        &mut console as &mut dyn Console,
    );
    let cut_short = std::mem::take(&mut console.read_cut_short);
    uc.get_data_mut().io.semihost = sh;
    uc.get_data_mut().io.console = console;
    if cut_short {
        // A read from stdin gave up: stop now, as the block hook would.
        return stop_for_deadline_or_signal(uc);
    }
    match result {
        Ok(Outcome::Return(v)) => {
            let _ = uc.reg_write(r.ret_value, u64::from(v));
        }
        Ok(Outcome::Exit(status)) => stop_with(uc, Stop::Exit(status)),
        Err(e) => {
            let stop = fault(
                uc,
                format!("bad semihosting call {op:#x}: {e}"),
                Some(u64::from(e.addr)),
            );
            stop_with(uc, stop);
        }
    }
}

/// Addresses of the `ebreak` of RISC-V semihosting sequences
/// (`slli x0,x0,0x1f; ebreak; srai x0,x0,7`) in executable segments.
pub(super) fn riscv_semihosting_sites(image: &GuestImage) -> Vec<u64> {
    const SLLI: [u8; 4] = 0x01f0_1013u32.to_le_bytes();
    const EBREAK: [u8; 4] = 0x0010_0073u32.to_le_bytes();
    const SRAI: [u8; 4] = 0x4070_5013u32.to_le_bytes();
    let mut sites = Vec::new();
    for seg in image.segments.iter().filter(|s| s.executable) {
        let d = &seg.data;
        let mut i = 0;
        while i + 12 <= d.len() {
            if d[i..i + 4] == SLLI && d[i + 4..i + 8] == EBREAK && d[i + 8..i + 12] == SRAI {
                sites.push(seg.load_addr + i as u64 + 4);
                i += 12;
            } else {
                i += 2;
            }
        }
    }
    sites
}

/// QEMU's ARM exception numbers, as Unicorn reports them.
const EXCP_SWI: u32 = 2;
const EXCP_BKPT: u32 = 7;
const EXCP_EXCEPTION_EXIT: u32 = 8;

/// A trap of an ARM core: semihosting (`BKPT 0xAB`), an SVC and an
/// exception return (`interrupts`, on a core with a System Control
/// Space), or a fault.
fn arm_trap(uc: &mut Uc<'_>, intno: u32) {
    let pc = uc.reg_read(RegisterARM::PC).unwrap_or(0);
    let mut insn = [0u8; 2];
    let is_semihosting = intno == EXCP_BKPT
        && uc.mem_read(pc, &mut insn).is_ok()
        && u16::from_le_bytes(insn) == 0xbeab;
    let has_scs = uc.get_data().system.is_some();
    match intno {
        _ if is_semihosting => {
            semihosting_call(uc);
            let _ = uc.reg_write(RegisterARM::PC, (pc + 2) | 1);
        }
        EXCP_SWI if has_scs => interrupts::svc(uc),
        EXCP_EXCEPTION_EXIT if has_scs => interrupts::exception_return(uc),
        _ => {
            let stop = fault(uc, describe_intr(Arch::Arm, intno), None);
            stop_with(uc, stop);
        }
    }
}

/// Semihosting, exceptions and memory faults.
pub(super) fn install_exception_hooks(
    emu: &mut Uc<'static>,
    image: &GuestImage,
    target: &Target,
    counting: Counting,
) -> Result<(), MachineError> {
    match target.arch {
        Arch::Arm => {
            uc("interrupt hook", emu.add_intr_hook(arm_trap))?;
        }
        Arch::Riscv => {
            for site in riscv_semihosting_sites(image) {
                uc(
                    "semihosting hook",
                    emu.add_code_hook(site, site, move |uc: &mut Uc<'_>, _, _| {
                        semihosting_call(uc);
                        let _ = uc.reg_write(RegisterRISCV::PC, site + 4);
                    }),
                )?;
            }
            // traps to mtvec (`traps`); EBREAK comes to the invalid
            // instruction hook
            // (every counter CSR access comes as an illegal instruction:
            // `csr` carries it out)
            uc(
                "interrupt hook",
                emu.add_intr_hook(|uc: &mut Uc<'_>, intno| {
                    if !super::csr::on_exception(uc, intno) {
                        traps::on_exception(uc, intno);
                    }
                }),
            )?;
            uc(
                "ebreak hook",
                emu.add_insn_invalid_hook(traps::on_breakpoint),
            )?;
        }
    }

    if counting != Counting::Off {
        for (first, last) in fault_hook_ranges(target) {
            uc("memory fault hook", add_fault_hook(emu, first, last))?;
        }
    }
    Ok(())
}
