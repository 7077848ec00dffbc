//! The ATOMIUM Record & Playback API (ARP manual, section 6) for Rust
//! guests run under sim-host, in the `ARP_SIM` mode: the simulator supplies
//! the measuring callbacks and intercepts every entry point, so the calls
//! below cost the guest nothing. Each wrapper calls the C entry-point stub
//! of the same name (built by this crate's build script).
//!
//! ```ignore
//! arp_guest::start(1, 8, arp_guest::Mode::RecordAverage);
//! for line in 0..height {
//!     arp_guest::kernel(1, 1, 0, || filter_line(line));
//! }
//! arp_guest::finish();
//! ```
#![no_std]

/// Thread id (`arp_tid`).
pub type Tid = u16;
/// Section id (`arp_sid`).
pub type Sid = u16;
/// Loop index (`arp_lidx`).
pub type Lidx = i32;

/// Operation modes (manual 6.2, `arp_mode`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    RecordAverage = 0,
    RecordAll = 1,
    RecordHistogram = 2,
    Playback = 3,
}

mod ffi {
    use super::{Lidx, Sid, Tid};
    extern "C" {
        pub fn arp_enter(tid: Tid, sid: Sid, lidx: Lidx);
        pub fn arp_enter_kernel(tid: Tid, sid: Sid, lidx: Lidx);
        pub fn arp_enter_profiled(tid: Tid, sid: Sid, lidx: Lidx);
        pub fn arp_leave(tid: Tid, sid: Sid);
        pub fn arp_leave_kernel(tid: Tid, sid: Sid);
        pub fn arp_leave_profiled(tid: Tid, sid: Sid);
        pub fn arp_spawned(parent: Tid, child: Tid);
        pub fn arp_join(tid: Tid);
        pub fn arp_finish();
        pub fn arp_set_file_name(name: *const core::ffi::c_char);
        pub fn arpsim_add_callbacks();
        pub fn arpsim_start(max_tid: Tid, max_sid: Sid, mode: core::ffi::c_int);
    }
}

// Every wrapper is inlined: the report names a section by the function
// that entered it, which must be the caller's, not this crate's.
//
// SAFETY (every call below): the stubs take plain integers (or a
// NUL-terminated string) and touch no Rust state; under sim-host their
// bodies never run.

/// `arp_add_callbacks` + `arp_start` as ARP_SIM maps them: the simulator's
/// callbacks measure, and recording starts in `mode`.
#[inline(always)]
pub fn start(max_tid: Tid, max_sid: Sid, mode: Mode) {
    unsafe {
        ffi::arpsim_add_callbacks();
        ffi::arpsim_start(max_tid, max_sid, mode as core::ffi::c_int);
    }
}

/// `arp_finish`: writes data.arp.
#[inline(always)]
pub fn finish() {
    unsafe { ffi::arp_finish() }
}

/// `arp_set_file_name` (before [`start`]); under sim-host the name is
/// placed beneath `--fs-root`.
#[inline(always)]
pub fn set_file_name(name: &core::ffi::CStr) {
    unsafe { ffi::arp_set_file_name(name.as_ptr()) }
}

/// Runs `body` as kernel section `sid` (`arp_enter_kernel` /
/// `arp_leave_kernel`): its cost is recorded per loop index.
#[inline(always)]
pub fn kernel<R>(tid: Tid, sid: Sid, lidx: Lidx, body: impl FnOnce() -> R) -> R {
    unsafe { ffi::arp_enter_kernel(tid, sid, lidx) };
    let result = body();
    unsafe { ffi::arp_leave_kernel(tid, sid) };
    result
}

/// Runs `body` as profiled section `sid` (`arp_enter_profiled`).
#[inline(always)]
pub fn profiled<R>(tid: Tid, sid: Sid, lidx: Lidx, body: impl FnOnce() -> R) -> R {
    unsafe { ffi::arp_enter_profiled(tid, sid, lidx) };
    let result = body();
    unsafe { ffi::arp_leave_profiled(tid, sid) };
    result
}

/// Runs `body` as plain (context) section `sid` (`arp_enter` / `arp_leave`).
#[inline(always)]
pub fn section<R>(tid: Tid, sid: Sid, lidx: Lidx, body: impl FnOnce() -> R) -> R {
    unsafe { ffi::arp_enter(tid, sid, lidx) };
    let result = body();
    unsafe { ffi::arp_leave(tid, sid) };
    result
}

/// `arp_enter` without a closure, for sections that span control flow.
#[inline(always)]
pub fn enter(tid: Tid, sid: Sid, lidx: Lidx) {
    unsafe { ffi::arp_enter(tid, sid, lidx) }
}

/// `arp_leave`.
#[inline(always)]
pub fn leave(tid: Tid, sid: Sid) {
    unsafe { ffi::arp_leave(tid, sid) }
}

/// `arp_enter_kernel` without a closure.
#[inline(always)]
pub fn enter_kernel(tid: Tid, sid: Sid, lidx: Lidx) {
    unsafe { ffi::arp_enter_kernel(tid, sid, lidx) }
}

/// `arp_leave_kernel`.
#[inline(always)]
pub fn leave_kernel(tid: Tid, sid: Sid) {
    unsafe { ffi::arp_leave_kernel(tid, sid) }
}

/// `arp_spawned`: `child` starts with a copy of `parent`'s sections.
#[inline(always)]
pub fn spawned(parent: Tid, child: Tid) {
    unsafe { ffi::arp_spawned(parent, child) }
}

/// `arp_join`.
#[inline(always)]
pub fn join(tid: Tid) {
    unsafe { ffi::arp_join(tid) }
}
