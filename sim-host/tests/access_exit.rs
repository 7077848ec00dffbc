//! An exit requested during a data access, on our patched Unicorn
//! (`unicorn-patch/accesscheck.patch`): with the charge in the translation
//! on, the translated code has no exit test after its loads and stores;
//! the slow path that runs the access's callbacks takes the exit instead.
//! What must stay true is Unicorn's contract: `uc_emu_stop` from a memory
//! hook or an MMIO callback stops at the accessing instruction, before
//! anything after it in the same block runs, with the charge on and off.

use unicorn_engine::unicorn_const::{Arch, HookType, Mode, Prot};
use unicorn_engine::{RegisterARM, Unicorn};
use unicorn_engine_sys::{uc_charge_layout, uc_charge_price, uc_charge_setup, uc_engine, uc_error};

const CODE: u64 = 0x1000;
const RAM: u64 = 0x2_0000;
const MMIO: u64 = 0x4000_0000;

/// Thumb, one block: r0 = [r1]; [r2] = r3; bkpt.
///   ldr r0, [r1]   0x6808
///   str r3, [r2]   0x6013
///   bkpt #0        0xbe00
const CODE_BYTES: [u8; 6] = [0x08, 0x68, 0x13, 0x60, 0x00, 0xbe];

/// Prices no block: the translated code charges nothing, but the charge
/// is on (the access tests are left to the slow path).
unsafe extern "C" fn no_price(
    _uc: *mut uc_engine,
    _pc: u64,
    _size: u32,
    _price: *mut uc_charge_price,
    _user_data: *mut std::ffi::c_void,
) -> bool {
    false
}

/// Turns the charge in the translation on, with counters in `counters`.
fn charge_on(uc: &mut Unicorn<'static, ()>, counters: &mut [u64; 16]) {
    let layout = uc_charge_layout {
        base: counters.as_mut_ptr().cast(),
        cycles: 0,
        instructions: 8,
        limit: 16,
        prev_fallthrough: 24,
        prev_taken_extra: 32,
        block_start: 40,
        trail: 48,
        trail_mask: 0,
        price: Some(no_price),
        user_data: std::ptr::null_mut(),
        memory: None,
        entry: None,
    };
    // SAFETY: the counters outlive the engine's runs in each test (they
    // are declared before it); nothing is priced, so nothing is written
    // through the layout.
    let r = unsafe { uc_charge_setup(uc.get_handle(), &layout) };
    assert_eq!(r, uc_error::OK);
}

fn machine() -> Unicorn<'static, ()> {
    let mut uc = Unicorn::new(Arch::ARM, Mode::THUMB | Mode::MCLASS).unwrap();
    uc.mem_map(CODE, 0x1000, Prot::ALL).unwrap();
    uc.mem_map(RAM, 0x1000, Prot::READ | Prot::WRITE).unwrap();
    uc.mem_write(CODE, &CODE_BYTES).unwrap();
    uc.reg_write(RegisterARM::R0, 0x1111).unwrap();
    uc.reg_write(RegisterARM::R2, RAM).unwrap();
    uc.reg_write(RegisterARM::R3, 0x55).unwrap();
    uc
}

/// Runs the block; returns (pc, r0, the word the store would write).
fn run(uc: &mut Unicorn<'static, ()>, from: u64) -> (u64, u64, u32) {
    uc.reg_write(RegisterARM::R1, from).unwrap();
    let _ = uc.emu_start(CODE | 1, CODE + 4, 0, 0);
    let mut word = [0u8; 4];
    uc.mem_read(RAM, &mut word).unwrap();
    (
        uc.reg_read(RegisterARM::PC).unwrap(),
        uc.reg_read(RegisterARM::R0).unwrap(),
        u32::from_le_bytes(word),
    )
}

#[test]
fn a_stop_from_an_mmio_read_stops_at_the_reading_instruction() {
    for charge in [false, true] {
        let mut counters = [0u64; 16];
        let mut uc = machine();
        uc.mmio_map_ro(MMIO, 0x1000, |uc, _, _| {
            uc.emu_stop().unwrap();
            7
        })
        .unwrap();
        if charge {
            charge_on(&mut uc, &mut counters);
        }
        // stopped at the LDR: the STR after it in the block never ran,
        // nor did the load's write to r0
        assert_eq!(run(&mut uc, MMIO), (CODE, 0x1111, 0), "charge {charge}");
    }
}

#[test]
fn a_stop_from_a_read_hook_stops_at_the_reading_instruction() {
    for charge in [false, true] {
        let mut counters = [0u64; 16];
        let mut uc = machine();
        uc.mem_map(RAM + 0x1000, 0x1000, Prot::READ).unwrap();
        uc.add_mem_hook(
            HookType::MEM_READ,
            RAM + 0x1000,
            RAM + 0x1fff,
            |uc, _, _, _, _| {
                uc.emu_stop().unwrap();
                true
            },
        )
        .unwrap();
        if charge {
            charge_on(&mut uc, &mut counters);
        }
        assert_eq!(
            run(&mut uc, RAM + 0x1000),
            (CODE, 0x1111, 0),
            "charge {charge}"
        );
        // and a read outside the hook's range runs the whole block
        let (_, r0, word) = run(&mut uc, RAM + 0x800);
        assert_eq!((r0, word), (0, 0x55), "charge {charge}");
    }
}
