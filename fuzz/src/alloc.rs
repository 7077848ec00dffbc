//! The fuzz binary's allocator: the system's, refusing one allocation
//! above [`MAX_ONE`] or more than [`MAX_LIVE`] live bytes in all. The
//! inputs are at most a few hundred KiB, so a reader that asks for more
//! has let a count or size in its input choose its memory: the refusal
//! aborts the binary after naming the fuzz target whose input did it
//! (`FUZZ_SEED` and the target's test name reproduce it).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One allocation's cap.
pub const MAX_ONE: usize = 256 << 20;
/// All live allocations' cap (the targets run two at a time).
pub const MAX_LIVE: usize = 1 << 30;

static LIVE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The fuzz target this thread runs inputs of (no destructor, so the
    /// allocator may read it at any time).
    static TARGET: Cell<&'static str> = const { Cell::new("") };
}

/// Names the target whose inputs this thread runs, for a refusal.
pub fn set_target(name: &'static str) {
    TARGET.with(|t| t.set(name));
}

/// The capped system allocator (`#[global_allocator]` of a fuzz binary).
#[derive(Debug)]
pub struct Capped;

fn admit(size: usize) -> bool {
    if size > MAX_ONE {
        refuse(size, "one allocation", MAX_ONE);
        return false;
    }
    let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    if live > MAX_LIVE {
        LIVE.fetch_sub(size, Ordering::Relaxed);
        refuse(live, "live allocations", MAX_LIVE);
        return false;
    }
    true
}

fn release(size: usize) {
    LIVE.fetch_sub(size, Ordering::Relaxed);
}

/// Says which cap was passed, without allocating.
fn refuse(size: usize, what: &str, cap: usize) {
    let target = TARGET.with(Cell::get);
    let mut digits = [0u8; 20];
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(b"\nfuzz target `");
    let _ = err.write_all(target.as_bytes());
    let _ = err.write_all(b"`: ");
    let _ = err.write_all(what.as_bytes());
    let _ = err.write_all(b" of ");
    let _ = err.write_all(decimal(size, &mut digits));
    let _ = err.write_all(b" bytes is beyond the fuzz cap of ");
    let _ = err.write_all(decimal(cap, &mut digits));
    let _ = err.write_all(b" bytes: an input chose the reader's memory\n");
}

fn decimal(mut n: usize, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

// SAFETY: every method forwards to `System` with the caller's layout; the
// counting only decides whether to forward.
unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !admit(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract for `alloc`, passed on.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            release(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !admit(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
            release(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) };
        release(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old && !admit_growth(old, new_size) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract for `realloc`, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        match (p.is_null(), new_size > old) {
            (true, true) => release(new_size - old),
            (false, false) => release(old - new_size),
            _ => {}
        }
        p
    }
}

/// `admit` for a block growing from `old` to `new` bytes.
fn admit_growth(old: usize, new: usize) -> bool {
    if new > MAX_ONE {
        refuse(new, "one allocation", MAX_ONE);
        return false;
    }
    admit(new - old)
}
