//! libarp's C API under random call sequences from several threads (the
//! order a buggy or racy instrumented program could produce): every call
//! returns; every error reaches the error callback with a message naming
//! the thread or section; `arp_finish` leaves a readable data.arp or says
//! why not. A Rust panic across the C boundary would abort this process.

use arp::*;
use arpsim::types::{Sid, Tid};
use proptest::prelude::*;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::Mutex;

static ERRORS: Mutex<Vec<(c_int, String)>> = Mutex::new(Vec::new());

unsafe extern "C" fn on_error(code: c_int, message: *const c_char, _ctx: *mut c_void) {
    // SAFETY: libarp passes a NUL-terminated message valid for the call.
    let text = unsafe { CStr::from_ptr(message) }
        .to_string_lossy()
        .into_owned();
    ERRORS.lock().unwrap().push((code, text));
}

unsafe extern "C" fn stamp(_sid: Sid, data: *mut c_void, _ctx: *mut c_void) {
    // SAFETY: a 16-byte data area for an arp_ullong (manual 3.1).
    unsafe { *data.cast::<u64>() = 7 };
}

#[derive(Debug, Clone, Copy)]
enum Call {
    Enter(Tid, Sid, i32),
    EnterKernel(Tid, Sid, i32),
    Leave(Tid, Sid),
    LeaveKernel(Tid, Sid),
    Spawned(Tid, Tid),
    Join(Tid),
}

fn call() -> impl Strategy<Value = Call> {
    let tid = 0u16..5;
    let sid = 0u16..6;
    prop_oneof![
        (tid.clone(), sid.clone(), -1i32..3).prop_map(|(t, s, i)| Call::Enter(t, s, i)),
        (tid.clone(), sid.clone(), -1i32..3).prop_map(|(t, s, i)| Call::EnterKernel(t, s, i)),
        (tid.clone(), sid.clone()).prop_map(|(t, s)| Call::Leave(t, s)),
        (tid.clone(), sid.clone()).prop_map(|(t, s)| Call::LeaveKernel(t, s)),
        (tid.clone(), tid.clone()).prop_map(|(p, c)| Call::Spawned(p, c)),
        tid.prop_map(Call::Join),
    ]
}

fn perform(c: Call) {
    match c {
        Call::Enter(t, s, i) => arp_enter(t, s, i),
        Call::EnterKernel(t, s, i) => arp_enter_kernel(t, s, i),
        Call::Leave(t, s) => arp_leave(t, s),
        Call::LeaveKernel(t, s) => arp_leave_kernel(t, s),
        Call::Spawned(p, ch) => arp_spawned(p, ch),
        Call::Join(t) => arp_join(t),
    }
}

/// One whole session: start, the calls from three threads, finish.
fn session(path: &std::path::Path, mode: c_int, threads: &[Vec<Call>]) {
    let name = CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string; libarp copies it.
    unsafe { arp_set_file_name(name.as_ptr()) };
    arp_add_callbacks(
        11,
        Some(stamp),
        Some(stamp),
        None,
        None,
        std::ptr::null_mut(),
    );
    arp_start(
        4,
        5,
        mode,
        Some(on_error),
        std::ptr::null_mut(),
        None,
        None,
        std::ptr::null_mut(),
    );
    std::thread::scope(|s| {
        for calls in threads {
            s.spawn(move || calls.iter().copied().for_each(perform));
        }
    });
    arp_finish();
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_call_orders_end_in_a_file_or_a_located_error(
        mode in prop_oneof![Just(0), Just(1), Just(2)],
        threads in prop::collection::vec(prop::collection::vec(call(), 0..40), 1..4),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.arp");
        ERRORS.lock().unwrap().clear();
        session(&path, mode, &threads);
        let errors = std::mem::take(&mut *ERRORS.lock().unwrap());
        for (code, message) in &errors {
            prop_assert!(*code >= 0, "{code}: {message}");
            prop_assert!(!message.is_empty());
            prop_assert!(message.len() < 4096, "an unbounded message");
        }
        // arp_finish always writes what was recorded (partial if sections
        // stayed open), and the file reads back.
        let mut n = 0u64;
        match arpsim::codec::for_each_record(&path, |_, _| {
            n += 1;
            Ok(())
        }) {
            Ok(header) => prop_assert_eq!(n, header.count),
            Err(e) => prop_assert!(!errors.is_empty(), "no data.arp and no error: {e}"),
        }
    }
}
