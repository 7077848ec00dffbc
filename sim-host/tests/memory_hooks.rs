//! Memory hooks on our patched Unicorn (`unicorn-patch/memhook.patch`):
//! a hook sends to the slow path only the pages it covers (their TLB
//! entries carry a flag), instead of every load and store of the
//! translated code. What must stay true is Unicorn's own contract:
//! every access in a hook's range calls it, none outside does, also for
//! code translated and TLB entries filled before the hook was added, and
//! none after it was deleted.

use std::cell::RefCell;
use std::rc::Rc;
use unicorn_engine::unicorn_const::{Arch, HookType, Mode, Prot};
use unicorn_engine::{RegisterARM, Unicorn};

const CODE: u64 = 0x1000;
const DATA: u64 = 0x2_0000;
/// A second data page, far enough not to share a target page with DATA.
const OTHER: u64 = 0x3_0000;

/// Thumb: r0 = [r1]; [r2] = r0; r3 -= 1; loop while r3 != 0; then bkpt.
///   ldr r0, [r1]   0x6808
///   str r0, [r2]   0x6010
///   subs r3, #1    0x3b01
///   bne .-6        0xd1fb
///   bkpt #0        0xbe00
const LOOP: [u8; 10] = [0x08, 0x68, 0x10, 0x60, 0x01, 0x3b, 0xfb, 0xd1, 0x00, 0xbe];

fn machine() -> Unicorn<'static, ()> {
    let mut uc = Unicorn::new(Arch::ARM, Mode::THUMB | Mode::MCLASS).unwrap();
    uc.mem_map(CODE, 0x1000, Prot::ALL).unwrap();
    uc.mem_map(DATA, 0x1000, Prot::READ | Prot::WRITE).unwrap();
    uc.mem_map(OTHER, 0x1000, Prot::READ | Prot::WRITE).unwrap();
    uc.mem_write(CODE, &LOOP).unwrap();
    uc
}

/// Runs the loop `n` times loading from `from` and storing to `to`.
fn run(uc: &mut Unicorn<'static, ()>, n: u64, from: u64, to: u64) {
    uc.reg_write(RegisterARM::R1, from).unwrap();
    uc.reg_write(RegisterARM::R2, to).unwrap();
    uc.reg_write(RegisterARM::R3, n).unwrap();
    // stops at the bkpt (an interrupt Unicorn reports as an error without
    // a hook) or at the count; either way the loop has run
    let _ = uc.emu_start(CODE | 1, CODE + 8, 0, 0);
}

type Seen = Rc<RefCell<Vec<(bool, u64)>>>;

fn hook(
    uc: &mut Unicorn<'static, ()>,
    kind: HookType,
    begin: u64,
    end: u64,
) -> (Seen, unicorn_engine::UcHookId) {
    let seen: Seen = Rc::default();
    let log = Rc::clone(&seen);
    let id = uc
        .add_mem_hook(kind, begin, end, move |_, t, addr, _, _| {
            log.borrow_mut()
                .push((t == unicorn_engine::unicorn_const::MemType::WRITE, addr));
            true
        })
        .unwrap();
    (seen, id)
}

#[test]
fn a_read_hook_sees_every_read_in_its_range_and_none_outside() {
    let mut uc = machine();
    let (seen, _) = hook(&mut uc, HookType::MEM_READ, DATA, DATA + 0xfff);
    run(&mut uc, 5, DATA + 4, OTHER);
    assert_eq!(*seen.borrow(), vec![(false, DATA + 4); 5]);
    seen.borrow_mut().clear();
    run(&mut uc, 5, OTHER + 8, DATA);
    assert!(seen.borrow().is_empty(), "{:?}", seen.borrow());
}

#[test]
fn a_hook_added_after_the_code_ran_sees_the_next_accesses() {
    let mut uc = machine();
    // translated, and the data pages' TLB entries filled, with no hook
    run(&mut uc, 3, DATA, OTHER);
    let (reads, _) = hook(&mut uc, HookType::MEM_READ, DATA, DATA + 0xfff);
    let (writes, _) = hook(&mut uc, HookType::MEM_WRITE, OTHER, OTHER + 0xfff);
    run(&mut uc, 4, DATA, OTHER);
    assert_eq!(*reads.borrow(), vec![(false, DATA); 4]);
    assert_eq!(*writes.borrow(), vec![(true, OTHER); 4]);
}

#[test]
fn a_deleted_hook_is_not_called_again() {
    let mut uc = machine();
    let (seen, id) = hook(&mut uc, HookType::MEM_READ, DATA, DATA + 0xfff);
    run(&mut uc, 2, DATA, OTHER);
    uc.remove_hook(id).unwrap();
    run(&mut uc, 2, DATA, OTHER);
    assert_eq!(seen.borrow().len(), 2);
}

#[test]
fn a_hook_over_every_address_sees_every_access() {
    let mut uc = machine();
    let (seen, _) = hook(&mut uc, HookType::MEM_READ | HookType::MEM_WRITE, 1, 0);
    run(&mut uc, 2, DATA, OTHER);
    assert_eq!(
        *seen.borrow(),
        vec![(false, DATA), (true, OTHER), (false, DATA), (true, OTHER)]
    );
}

#[test]
fn the_accessed_values_are_unchanged_by_the_slow_path() {
    let mut uc = machine();
    uc.mem_write(DATA, &0xdead_beef_u32.to_le_bytes()).unwrap();
    let _ = hook(&mut uc, HookType::MEM_READ, DATA, DATA + 3);
    run(&mut uc, 1, DATA, OTHER);
    let mut out = [0u8; 4];
    uc.mem_read(OTHER, &mut out).unwrap();
    assert_eq!(u32::from_le_bytes(out), 0xdead_beef);
}

/// `uc_hook_no_sync` (`unicorn-patch/hooksync.patch`): a memory hook that
/// reads no register is called without the guest state restored first,
/// and still for every access in its range; a hook of another kind is
/// refused.
#[test]
fn a_hook_marked_no_sync_still_sees_every_access() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use unicorn_engine_sys::{uc_engine, uc_error, uc_hook, uc_hook_add, uc_hook_no_sync};
    // counted, not asserted, in the callback: a panic cannot unwind
    // through Unicorn's C frames
    static READS: AtomicU64 = AtomicU64::new(0);
    static ELSEWHERE: AtomicU64 = AtomicU64::new(0);
    unsafe extern "C" fn count(
        _: *mut uc_engine,
        _: i32,
        addr: u64,
        _: u32,
        _: i64,
        _: *mut std::ffi::c_void,
    ) {
        let counter = if addr == DATA + 4 { &READS } else { &ELSEWHERE };
        counter.fetch_add(1, Ordering::Relaxed);
    }
    let add = |uc: &Unicorn<'static, ()>, kind: HookType, begin: u64, end: u64| {
        let mut id: uc_hook = 0;
        let callback: unsafe extern "C" fn(
            *mut uc_engine,
            i32,
            u64,
            u32,
            i64,
            *mut std::ffi::c_void,
        ) = count;
        // SAFETY: a memory hook's C signature, no user data.
        let err = unsafe {
            uc_hook_add(
                uc.get_handle(),
                &mut id,
                kind.0 as i32,
                callback as *mut std::ffi::c_void,
                std::ptr::null_mut(),
                begin,
                end,
            )
        };
        assert_eq!(err, uc_error::OK);
        id
    };
    let mut uc = machine();
    let id = add(&uc, HookType::MEM_READ, DATA, DATA + 0xfff);
    // SAFETY: `id` is a hook of this engine.
    assert_eq!(
        unsafe { uc_hook_no_sync(uc.get_handle(), id) },
        uc_error::OK
    );
    run(&mut uc, 5, DATA + 4, OTHER);
    assert_eq!(READS.load(Ordering::Relaxed), 5);
    assert_eq!(ELSEWHERE.load(Ordering::Relaxed), 0);
    run(&mut uc, 5, OTHER + 8, DATA);
    assert_eq!(READS.load(Ordering::Relaxed), 5);
    assert_eq!(ELSEWHERE.load(Ordering::Relaxed), 0);
    let code = add(&uc, HookType::CODE, CODE, CODE + 0xfff);
    // SAFETY: as above.
    assert_eq!(
        unsafe { uc_hook_no_sync(uc.get_handle(), code) },
        uc_error::ARG
    );
}
