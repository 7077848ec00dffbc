//! The contract of every API our patches add to Unicorn, on bare Unicorn
//! (no sim-host): what a caller may rely on after an upgrade. Each test
//! names the patch whose promise it checks.
//!
//! Guest code is given as encoded bytes, with the assembly each encodes
//! beside it (assembled with GNU as 2.40 for the named CPU).

use std::cell::Cell;
use std::ffi::c_void;
use std::mem::offset_of;
use std::rc::Rc;
use unicorn_engine::unicorn_const::{Arch, ArmCpuModel, HookType, Mode, Prot, Riscv32CpuModel};
use unicorn_engine::{RegisterARM, RegisterRISCV, Unicorn};
use unicorn_engine_sys::{
    uc_arm_m_core_state, uc_arm_m_fp_context, uc_arm_m_lazy_fp_callback, uc_charge_layout,
    uc_charge_price, uc_charge_setup, uc_engine, uc_error, uc_gpr_base, uc_hook, uc_hook_add,
    uc_hook_no_sync,
};

const CODE: u64 = 0x1000;

/// A Thumb loop of one block, run `r1` times, then a block of its own:
/// `loop: adds r0, #1; cmp r0, r1; bne loop; nop`. The run ends after the
/// `nop`: Unicorn invalidates the block holding the byte before the end
/// address at every stop, and that must not be the loop's.
const THUMB_LOOP: [u8; 8] = [0x01, 0x30, 0x88, 0x42, 0xfc, 0xd1, 0x00, 0xbf];
const THUMB_LOOP_END: u64 = CODE + 8;
/// Blocks run by `run_loop(n)`: the loop's n, and the `nop`'s.
fn blocks(iterations: u64) -> u64 {
    iterations + 1
}

fn arm(model: ArmCpuModel) -> Unicorn<'static, ()> {
    // Not Mode::MCLASS: Unicorn 2.1.5 would force a Cortex-M33
    let mut emu = Unicorn::new(Arch::ARM, Mode::THUMB).expect("engine");
    emu.ctl_set_cpu_model(model as i32).expect("cpu model");
    emu.mem_map(CODE, 0x1000, Prot::ALL).expect("map");
    emu
}

/// An rv32 core of `model` (SIFIVE_E31: rv32imac; ANY: with F and D).
fn rv32_of(model: Riscv32CpuModel) -> Unicorn<'static, ()> {
    let mut emu = Unicorn::new(Arch::RISCV, Mode::RISCV32).expect("engine");
    emu.ctl_set_cpu_model(model as i32).expect("cpu model");
    emu.mem_map(CODE, 0x1000, Prot::ALL).expect("map");
    emu
}

fn rv32() -> Unicorn<'static, ()> {
    rv32_of(Riscv32CpuModel::SIFIVE_E31)
}

fn run_loop(emu: &mut Unicorn<'static, ()>, iterations: u64) {
    emu.reg_write(RegisterARM::R0, 0).unwrap();
    emu.reg_write(RegisterARM::R1, iterations).unwrap();
    emu.emu_start(CODE | 1, THUMB_LOOP_END, 0, 0).expect("run");
    assert_eq!(emu.reg_read(RegisterARM::R0).unwrap(), iterations);
}

// registers.patch
#[test]
fn gpr_base_is_where_the_integer_registers_are() {
    let mut emu = arm(ArmCpuModel::CORTEX_M4);
    for (i, reg) in [RegisterARM::R0, RegisterARM::R7, RegisterARM::R12]
        .into_iter()
        .enumerate()
    {
        emu.reg_write(reg, 0x1111_0000 + i as u64).unwrap();
    }
    let (base, width) = gpr_base(emu.get_handle());
    assert_eq!(width, 4);
    // SAFETY: the patch promises `base` points at the 16 registers, 4 bytes each
    let regs = unsafe { std::slice::from_raw_parts(base.cast::<u32>(), 16) };
    assert_eq!(
        [regs[0], regs[7], regs[12]],
        [0x1111_0000, 0x1111_0001, 0x1111_0002]
    );

    let mut emu = rv32();
    emu.reg_write(RegisterRISCV::X10, 0xa0a0_0010).unwrap();
    let (base, width) = gpr_base(emu.get_handle());
    assert_eq!(width, 4, "rv32's registers are 32 bits wide");
    // SAFETY: as above, x0..x31
    let regs = unsafe { std::slice::from_raw_parts(base.cast::<u32>(), 32) };
    assert_eq!(regs[10], 0xa0a0_0010);
}

fn gpr_base(handle: *mut uc_engine) -> (*mut c_void, u32) {
    let (mut base, mut width) = (std::ptr::null_mut(), 0u32);
    // SAFETY: a live engine and two out-parameters
    let err = unsafe { uc_gpr_base(handle, &mut base, &mut width) };
    assert_eq!(err, uc_error::OK);
    assert!(!base.is_null());
    (base, width)
}

/// The counters the inline charge adds to, at the offsets the layout names.
#[repr(C)]
#[derive(Default)]
struct Counters {
    cycles: u64,
    instructions: u64,
    limit: u64,
    prev_fallthrough: u64,
    prev_taken_extra: u32,
    block_start: u64,
    trail: [u32; 8],
}

const BLOCK_CYCLES: u64 = 5;

/// The user data of the entry-call test: whether blocks ask for the call,
/// the counters, and what each call saw.
struct EntryCalls {
    call_entry: u32,
    counters: *const Counters,
    /// (block start, info, cycles when called)
    seen: Vec<(u64, u64, u64)>,
}

/// The info constant a block passes its entry call here.
fn info_of(pc: u64) -> u64 {
    pc << 8 | 0x5e
}

/// Prices every block at 5 cycles, its instruction count at 3 (the
/// loop's block), to be charged inline; with `EntryCalls` as user data,
/// asks for the entry call as it says.
unsafe extern "C" fn price_inline(
    _uc: *mut uc_engine,
    pc: u64,
    size: u32,
    price: *mut uc_charge_price,
    user: *mut c_void,
) -> bool {
    // SAFETY: the user data is null or the test's EntryCalls
    let call_entry = unsafe { user.cast::<EntryCalls>().as_ref() }.map_or(0, |e| e.call_entry);
    // SAFETY: the patch passes a price to fill
    let price = unsafe { &mut *price };
    *price = uc_charge_price {
        cycles: BLOCK_CYCLES,
        instructions: 3,
        entry_penalty: 0,
        fallthrough: pc + u64::from(size),
        taken_extra: 0,
        inline_charge: 1,
        call_memory: 0,
        call_entry,
        entry_info: info_of(pc),
    };
    true
}

unsafe extern "C" fn record_entry(pc: u64, info: u64, user: *mut c_void) {
    // SAFETY: the entry-call test's user data
    let calls = unsafe { &mut *user.cast::<EntryCalls>() };
    // SAFETY: the counters outlive the run
    let cycles = unsafe { (*calls.counters).cycles };
    calls.seen.push((pc, info, cycles));
}

fn layout(counters: &mut Counters) -> uc_charge_layout {
    let off = |o: usize| o as i64;
    uc_charge_layout {
        base: std::ptr::from_mut(counters).cast(),
        cycles: off(offset_of!(Counters, cycles)),
        instructions: off(offset_of!(Counters, instructions)),
        limit: off(offset_of!(Counters, limit)),
        prev_fallthrough: off(offset_of!(Counters, prev_fallthrough)),
        prev_taken_extra: off(offset_of!(Counters, prev_taken_extra)),
        block_start: off(offset_of!(Counters, block_start)),
        trail: off(offset_of!(Counters, trail)),
        trail_mask: 7,
        price: Some(price_inline),
        user_data: std::ptr::null_mut(),
        memory: None,
        entry: None,
    }
}

fn counting_block_hook(emu: &mut Unicorn<'static, ()>) -> Rc<Cell<u64>> {
    let calls = Rc::new(Cell::new(0));
    let seen = Rc::clone(&calls);
    emu.add_block_hook(1, 0, move |_, _, _| seen.set(seen.get() + 1))
        .expect("block hook");
    calls
}

// charge.patch
#[test]
fn charge_setup_refuses_a_layout_it_cannot_use() {
    let emu = arm(ArmCpuModel::CORTEX_M4);
    let mut counters = Counters::default();
    let good = layout(&mut counters);
    let broken = [
        uc_charge_layout {
            base: std::ptr::null_mut(),
            ..good
        },
        uc_charge_layout {
            price: None,
            ..good
        },
        uc_charge_layout {
            trail_mask: 6,
            ..good
        },
    ];
    for layout in broken {
        // SAFETY: a live engine and a layout the call only reads
        let err = unsafe { uc_charge_setup(emu.get_handle(), &layout) };
        assert_eq!(err, uc_error::ARG);
    }
}

// charge.patch: below the limit the translated code charges the block and
// skips the one block hook; at the limit the hook runs instead.
#[test]
fn the_inline_charge_adds_each_blocks_price_below_the_limit() {
    let mut emu = arm(ArmCpuModel::CORTEX_M4);
    emu.mem_write(CODE, &THUMB_LOOP).unwrap();
    let hook_calls = counting_block_hook(&mut emu);
    let mut counters = Box::new(Counters {
        limit: u64::MAX,
        ..Counters::default()
    });
    let layout = layout(&mut counters);
    // SAFETY: `counters` outlives the engine's use of it (charge off below)
    assert_eq!(
        unsafe { uc_charge_setup(emu.get_handle(), &layout) },
        uc_error::OK
    );

    run_loop(&mut emu, 10);
    assert_eq!(
        hook_calls.get(),
        0,
        "below the limit no block reaches the hook"
    );
    assert_eq!(counters.cycles, blocks(10) * BLOCK_CYCLES);
    assert_eq!(counters.instructions, blocks(10) * 3);
    assert_eq!(counters.block_start, CODE + 6, "the last block charged");

    counters.limit = 0;
    run_loop(&mut emu, 4);
    assert_eq!(
        hook_calls.get(),
        blocks(4),
        "at the limit every block calls the hook"
    );
    let unchanged = blocks(10) * BLOCK_CYCLES;
    assert_eq!(counters.cycles, unchanged, "and this hook charges nothing");
    // SAFETY: turning the charge off
    assert_eq!(
        unsafe { uc_charge_setup(emu.get_handle(), std::ptr::null()) },
        uc_error::OK
    );
}

// hookflush.patch: a block hook added while the charge is on sees blocks
// translated before it (they had the inline charge, which skips hooks).
#[test]
fn a_block_hook_added_later_sees_blocks_translated_before_it() {
    let mut emu = arm(ArmCpuModel::CORTEX_M4);
    emu.mem_write(CODE, &THUMB_LOOP).unwrap();
    let first = counting_block_hook(&mut emu);
    let mut counters = Box::new(Counters {
        limit: u64::MAX,
        ..Counters::default()
    });
    let layout = layout(&mut counters);
    // SAFETY: as above
    assert_eq!(
        unsafe { uc_charge_setup(emu.get_handle(), &layout) },
        uc_error::OK
    );
    run_loop(&mut emu, 3);
    assert_eq!(
        (first.get(), counters.cycles),
        (0, blocks(3) * BLOCK_CYCLES)
    );

    let second = counting_block_hook(&mut emu);
    run_loop(&mut emu, 6);
    assert_eq!(second.get(), blocks(6), "the new hook sees every block");
    assert_eq!(
        first.get(),
        blocks(6),
        "so does the first: no inline charge with two"
    );
    // SAFETY: turning the charge off
    assert_eq!(
        unsafe { uc_charge_setup(emu.get_handle(), std::ptr::null()) },
        uc_error::OK
    );
}

// entrycall.patch: a block charged inline whose price asks for it calls
// the entry callback first, with its start and info, while the counters
// still describe the block before; without the ask, no call.
#[test]
fn the_entry_call_comes_before_the_blocks_charge() {
    for call_entry in [1, 0] {
        let mut emu = arm(ArmCpuModel::CORTEX_M4);
        emu.mem_write(CODE, &THUMB_LOOP).unwrap();
        counting_block_hook(&mut emu);
        let mut counters = Box::new(Counters {
            limit: u64::MAX,
            ..Counters::default()
        });
        let mut calls = Box::new(EntryCalls {
            call_entry,
            counters: &*counters,
            seen: Vec::new(),
        });
        let layout = uc_charge_layout {
            user_data: std::ptr::from_mut(calls.as_mut()).cast(),
            entry: Some(record_entry),
            ..layout(&mut counters)
        };
        // SAFETY: counters and calls outlive the engine's use (charge off below)
        assert_eq!(
            unsafe { uc_charge_setup(emu.get_handle(), &layout) },
            uc_error::OK
        );
        run_loop(&mut emu, 3);
        let expected: Vec<_> = [CODE, CODE, CODE, CODE + 6]
            .into_iter()
            .zip(0..)
            .map(|(pc, i)| (pc, info_of(pc), i * BLOCK_CYCLES))
            .collect();
        let expected = if call_entry == 1 {
            expected
        } else {
            Vec::new()
        };
        assert_eq!(calls.seen, expected, "call_entry {call_entry}");
        assert_eq!(counters.cycles, blocks(3) * BLOCK_CYCLES);
        // SAFETY: turning the charge off
        assert_eq!(
            unsafe { uc_charge_setup(emu.get_handle(), std::ptr::null()) },
            uc_error::OK
        );
    }
}

// hooksync.patch
#[test]
fn hook_no_sync_is_for_memory_hooks_only() {
    let mut emu = arm(ArmCpuModel::CORTEX_M4);
    let read = raw_hook(&mut emu, HookType::MEM_READ);
    let code = raw_hook(&mut emu, HookType::CODE);
    // SAFETY: live engine, hook handles it returned (or none)
    unsafe {
        assert_eq!(uc_hook_no_sync(emu.get_handle(), read), uc_error::OK);
        assert_eq!(uc_hook_no_sync(emu.get_handle(), code), uc_error::ARG);
        assert_eq!(uc_hook_no_sync(emu.get_handle(), 0), uc_error::ARG);
    }
}

/// A hook of `kind` on every address whose callback is never run here.
fn raw_hook(emu: &mut Unicorn<'static, ()>, kind: HookType) -> uc_hook {
    unsafe extern "C" fn never() {}
    let mut hook: uc_hook = 0;
    // SAFETY: live engine, an out-parameter, a callback never called (no
    // code runs), and the begin/end of an all-address hook
    let err = unsafe {
        uc_hook_add(
            emu.get_handle(),
            &mut hook,
            kind.0 as i32,
            never as *mut c_void,
            std::ptr::null_mut(),
            1,
            0,
        )
    };
    assert_eq!(err, uc_error::OK);
    hook
}

// mprofile.patch
#[test]
fn core_state_writes_the_banked_stack_pointers_and_reads_them_back() {
    let mut emu = arm(ArmCpuModel::CORTEX_M4);
    let (msp, psp) = (0x2000_1000u32, 0x2000_0800u32);
    let spsel = 1 << 1;
    let mut state = [0u32, spsel, msp, psp];
    core_state(&mut emu, true, &mut state);
    let mut back = [0u32; 4];
    core_state(&mut emu, false, &mut back);
    assert_eq!(back, [0, spsel, msp, psp]);
    assert_eq!(
        emu.reg_read(RegisterARM::SP).unwrap(),
        u64::from(psp),
        "Thread mode with SPSEL set runs on the process stack"
    );

    let emu = rv32();
    let [mut i, mut c, mut m, mut p] = [0u32; 4];
    // SAFETY: live engine, four out-parameters
    let err = unsafe { uc_arm_m_core_state(emu.get_handle(), 0, &mut i, &mut c, &mut m, &mut p) };
    assert_eq!(err, uc_error::ARCH);
}

fn core_state(emu: &mut Unicorn<'static, ()>, write: bool, s: &mut [u32; 4]) {
    let [ipsr, control, msp, psp] = s;
    // SAFETY: live engine, four in/out parameters
    let err =
        unsafe { uc_arm_m_core_state(emu.get_handle(), write.into(), ipsr, control, msp, psp) };
    assert_eq!(err, uc_error::OK);
}

// mprofile.patch
#[test]
fn fp_context_exists_only_on_a_core_with_an_fpu() {
    let emu = arm(ArmCpuModel::CORTEX_M4);
    let (lspen_aspen, fpcar) = (0xC000_0000u32, 0x2000_0104u32);
    let (mut ccr, mut car, mut dscr) = (lspen_aspen, fpcar, 0u32);
    // SAFETY: live engine, three in/out parameters
    unsafe {
        let h = emu.get_handle();
        assert_eq!(
            uc_arm_m_fp_context(h, 1, &mut ccr, &mut car, &mut dscr),
            uc_error::OK
        );
        let (mut ccr, mut car, mut dscr) = (0, 0, 0);
        assert_eq!(
            uc_arm_m_fp_context(h, 0, &mut ccr, &mut car, &mut dscr),
            uc_error::OK
        );
        assert_eq!(ccr & lspen_aspen, lspen_aspen);
        assert_eq!(car, 0x2000_0100, "FPCAR is 8-byte aligned");
        assert_eq!(
            uc_arm_m_lazy_fp_callback(h, None, std::ptr::null_mut()),
            uc_error::OK
        );
    }
    let emu = arm(ArmCpuModel::CORTEX_M3);
    // SAFETY: as above
    let err = unsafe { uc_arm_m_fp_context(emu.get_handle(), 0, &mut ccr, &mut car, &mut dscr) };
    assert_eq!(err, uc_error::ARCH, "a Cortex-M3 has no FP context");
    let emu = rv32();
    // SAFETY: as above
    let err = unsafe { uc_arm_m_lazy_fp_callback(emu.get_handle(), None, std::ptr::null_mut()) };
    assert_eq!(err, uc_error::ARCH);
}

/// `fmadd.s ft3, ft0, ft1, ft2; fsw ft3, 0(a1)` (rv32imafc).
const RV_FMADD: [u8; 8] = [0xc3, 0x71, 0x10, 0x10, 0x27, 0xa0, 0x35, 0x00];

// hostfma.patch: the host's FMA gives the fused result, rounded once.
#[test]
fn a_fused_multiply_add_rounds_once() {
    // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24; minus (1 + 2^-11) leaves 2^-24
    // fused, and 0 when the product is rounded first (a tie to even).
    let a = 1.0f32 + f32::powi(2.0, -12);
    let c = -(1.0f32 + f32::powi(2.0, -11));
    assert_eq!(a * a + c, 0.0, "unfused, for contrast");
    let mut emu = rv32_of(Riscv32CpuModel::ANY);
    emu.mem_write(CODE, &RV_FMADD).unwrap();
    let fs_initial = 1 << 13;
    emu.reg_write(RegisterRISCV::MSTATUS, fs_initial).unwrap();
    for (reg, v) in [
        (RegisterRISCV::F0, a),
        (RegisterRISCV::F1, a),
        (RegisterRISCV::F2, c),
    ] {
        // NaN-boxed: this core has D, whose registers hold singles so
        let boxed = 0xffff_ffff_0000_0000 | u64::from(v.to_bits());
        emu.reg_write(reg, boxed).unwrap();
    }
    emu.reg_write(RegisterRISCV::X11, CODE + 0x800).unwrap();
    emu.emu_start(CODE, CODE + 8, 0, 0).expect("run");
    let mut out = [0u8; 4];
    emu.mem_read(CODE + 0x800, &mut out).unwrap();
    assert_eq!(f32::from_le_bytes(out), f32::powi(2.0, -24));
    assert_eq!(f32::from_le_bytes(out), a.mul_add(a, c));
}

/// `rdcycle a0` (csrrs a0, cycle, zero).
const RV_RDCYCLE: [u8; 4] = [0x73, 0x25, 0x00, 0xc0];

// counters.patch: the counter CSRs trap as illegal instructions, for the
// host to carry them out on its own clock.
#[test]
fn reading_a_counter_csr_traps_as_an_illegal_instruction() {
    let mut emu = rv32();
    emu.mem_write(CODE, &RV_RDCYCLE).unwrap();
    let cause = Rc::new(Cell::new(None));
    let seen = Rc::clone(&cause);
    emu.add_intr_hook(move |uc, intno| {
        seen.set(Some(intno));
        uc.emu_stop().unwrap();
    })
    .unwrap();
    emu.emu_start(CODE, CODE + 4, 0, 0).expect("run");
    let illegal_instruction = 2;
    assert_eq!(cause.get(), Some(illegal_instruction));
}
