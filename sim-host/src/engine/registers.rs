//! The register map: architectural registers to Unicorn's ids, the
//! argument and return registers of a call, what a thread switch saves,
//! and fast 32-bit reads. The one place register numbers are translated.

use super::gpr::call_numbers;
use super::state::Uc;
use crate::model::cycles::DynamicSite;
use crate::model::target::Arch;
use unicorn_engine::unicorn_const::uc_error;
use unicorn_engine::{RegisterARM, RegisterRISCV};

/// The registers of the calling convention, as Unicorn ids.
pub(super) struct Regs {
    pub(super) args: [i32; 4],
    pub(super) ret_addr: i32,
    pub(super) ret_value: i32,
    pub(super) pc: i32,
    pub(super) sp: i32,
}

pub(super) fn regs(arch: Arch) -> Regs {
    let [ret_addr, a0, a1, a2, a3] = call_numbers(arch).map(|n| core_reg(arch, n));
    let (pc, sp) = match arch {
        Arch::Arm => (RegisterARM::PC as i32, RegisterARM::SP as i32),
        Arch::Riscv => (RegisterRISCV::PC as i32, RegisterRISCV::X2 as i32),
    };
    Regs {
        args: [a0, a1, a2, a3],
        ret_addr,
        ret_value: a0,
        pc,
        sp,
    }
}

/// Reads the 32-bit registers `ids` (at most 8) in one call; an error if
/// Unicorn refuses any of them (an argument must never read as 0 unseen). Not the wrapper's `reg_read`: it reads each into a
/// `u64` that Unicorn fills with a 4-byte store, and the 8-byte load after
/// it stalls on the store buffer (a third of an ARP interception). For the
/// same reason the values are read back one by one (volatile: a merged
/// 16-byte load would stall the same way).
pub(super) fn read_regs32(uc: &Uc<'_>, ids: &[i32]) -> Result<[u32; 8], uc_error> {
    let mut buffer = [0u32; 8];
    let mut sizes = [4usize; 8];
    let mut pointers = [std::ptr::null_mut::<std::ffi::c_void>(); 8];
    for (p, v) in pointers.iter_mut().zip(buffer.iter_mut()) {
        *p = (v as *mut u32).cast();
    }
    let n = ids.len().min(8);
    // SAFETY: the first n pointers are live, distinct u32s, and their sizes
    // say 4 bytes, which Unicorn checks against each register's width.
    let err = unsafe {
        unicorn_engine_sys::uc_reg_read_batch2(
            uc.get_handle(),
            ids.as_ptr(),
            pointers.as_ptr(),
            sizes.as_mut_ptr(),
            n as i32,
        )
    };
    if err != unicorn_engine_sys::uc_error::OK {
        return Err(err);
    }
    // SAFETY: reads of initialised u32s of a live local array.
    Ok(std::array::from_fn(|i| unsafe {
        std::ptr::read_volatile(&buffer[i])
    }))
}

/// Unicorn's id of architectural register `n`: Arm r0-r15 (13 = sp,
/// 14 = lr, 15 = pc), RISC-V x0-x31 and 32 = pc (the numbering of
/// `sim_host_plugin.h` and of the decoder's operands); `None` beyond.
pub(super) fn arch_reg(arch: Arch, n: u32) -> Option<i32> {
    let n = i32::try_from(n).ok()?;
    Some(match arch {
        Arch::Arm => match n {
            0..=12 => RegisterARM::R0 as i32 + n,
            13 => RegisterARM::SP as i32,
            14 => RegisterARM::LR as i32,
            15 => RegisterARM::PC as i32,
            _ => return None,
        },
        Arch::Riscv => match n {
            0..=31 => RegisterRISCV::X0 as i32 + n,
            32 => RegisterRISCV::PC as i32,
            _ => return None,
        },
    })
}

/// The Unicorn ids of a data-dependent instruction's two operands.
pub(super) fn operand_regs(arch: Arch, site: &DynamicSite) -> Option<[i32; 2]> {
    let reg = |n: u8| arch_reg(arch, u32::from(n));
    Some([reg(site.operands.a)?, reg(site.operands.b)?])
}

/// [`arch_reg`] of registers that exist on every core of `arch`.
fn core_reg(arch: Arch, n: u32) -> i32 {
    arch_reg(arch, n).expect("an architectural register")
}

/// The registers a thread switch saves and restores: everything a
/// soft-float M-profile or RV32 program keeps per thread. (Explicit rather
/// than Unicorn's context save, which does not restore RV32's registers in
/// Unicorn 2.1.5.)
pub(super) fn thread_registers(arch: Arch) -> Vec<i32> {
    match arch {
        Arch::Arm => {
            let mut r: Vec<i32> = (0..13).map(|n| core_reg(arch, n)).collect();
            r.extend([
                RegisterARM::SP as i32,
                RegisterARM::LR as i32,
                RegisterARM::XPSR as i32,
                RegisterARM::PC as i32,
            ]);
            r
        }
        Arch::Riscv => {
            let mut r: Vec<i32> = (1..32).map(|n| core_reg(arch, n)).collect();
            r.push(RegisterRISCV::PC as i32);
            r
        }
    }
}

/// Whether an ARM core is in Thumb state (EPSR.T, xPSR bit 24); always
/// true for other architectures.
pub(super) fn thumb_state(uc: &Uc<'_>) -> bool {
    if uc.get_data().arch != Arch::Arm {
        return true;
    }
    uc.reg_read(RegisterARM::XPSR as i32)
        .map_or(true, |xpsr| xpsr & (1 << 24) != 0)
}

/// What a thread switch saves besides [`thread_registers`] on an Arm core
/// with an FPU: S0-S31 (which hold D0-D15) and FPSCR, the floating-point
/// state a hard-float thread keeps in registers (AAPCS: S16-S31 are
/// callee-saved, the rest live across a switch inside a function).
/// Appended after the core registers, so a saved context's first slots
/// keep the order the debugger reads ([`thread_registers`]).
pub(super) fn fpu_thread_registers(target: &crate::model::target::Target) -> Vec<i32> {
    if !has_fpu(target) {
        return Vec::new();
    }
    let mut r: Vec<i32> = (0..32).map(|n| RegisterARM::S0 as i32 + n).collect();
    r.push(RegisterARM::FPSCR as i32);
    r
}

/// Whether `target` is an Arm core with an FPU (its `[isa]` names one).
pub(super) fn has_fpu(target: &crate::model::target::Target) -> bool {
    target.isa.has_fpu()
}

/// The FPU registers a debugger numbers after [`debug_registers`] on an
/// Arm core with an FPU, as Unicorn ids: d0-d15 (64-bit, each the pair
/// s2n, s2n+1) and fpscr (19-35); none on other cores.
pub(super) fn debug_fpu_registers(target: &crate::model::target::Target) -> Vec<i32> {
    if !has_fpu(target) {
        return Vec::new();
    }
    let mut r: Vec<i32> = (0..16).map(|n| RegisterARM::D0 as i32 + n).collect();
    r.push(RegisterARM::FPSCR as i32);
    r
}

/// The registers a debugger numbers, as Unicorn ids: Arm r0-r12, sp, lr,
/// pc, xpsr, msp, psp (0-18); RISC-V x0-x31, pc (0-32).
pub(super) fn debug_registers(arch: Arch) -> Vec<i32> {
    let mut r = thread_registers(arch);
    if arch == Arch::Arm {
        // thread_registers ends with xpsr, pc: gdb's order is pc, xpsr
        r.swap(15, 16);
        r.extend([RegisterARM::MSP as i32, RegisterARM::PSP as i32]);
    } else {
        r.insert(0, RegisterRISCV::X0 as i32);
    }
    r
}
