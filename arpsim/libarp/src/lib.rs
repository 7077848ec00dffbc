//! The ARP C library (manual section 6): every function of
//! `atomium_rp.h` with the manual's names and signatures, built as
//! `libarp.so` and `libarp.a` on top of the `arpsim` engine.
//!
//! * Global state lives behind one mutex. The user's lock callbacks are
//!   called only around `arp_spawned` and `arp_join` (manual 3.1, 3.3).
//! * Enter/leave callbacks run while the library's mutex is held: they
//!   must not call back into the library.
//! * Errors go to the error callback given to `arp_start` (or to
//!   `arp_load_data` for the query API) with the manual's `arp_error_t`;
//!   without one, the message goes to stderr and the process exits with
//!   status 1 for `arp_error_fatal`, `arp_error_syntax` and `arp_error_io`
//!   (manual 6.1.1: "issue an error message and exit or issue a warning
//!   message"). A message stderr does not take (a full device) is lost,
//!   the exit is not.
//! * No panic unwinds into C (it would abort the program): every function
//!   runs its body through `entry`, which reports a panic (a bug of the
//!   library) as an `arp_error_fatal` error by the same path, releases the
//!   user's lock if it was taken, and returns the function's "nothing"
//!   (0, NULL). The state is used as the panic left it.
//! * C callback sets are arpsim's `c_callbacks::CCallbacks` (shared with
//!   sim-host's plugins): a spawn/join callback receives the address of
//!   the context pointer (manual 3.1); each thread has its own copy,
//!   inherited from its parent at spawn and dropped at join, so the
//!   parent's pointer is "restored automatically".
//! * `long` is the platform's C `long`; `long double` values are held as
//!   `double` by the engine.
//! * `arpsim_add_callbacks` / `arpsim_start` are not provided: manual 6.3
//!   leaves them to the simulator.

#![allow(clippy::missing_safety_doc)]

use arpsim::c_area::CArea;
use arpsim::c_callbacks::{CCallbackFns, CCallbacks, CEnterFn, CSpawnFn};
use arpsim::engine::{Engine, SectionKind};
use arpsim::error::{ArpError, Severity};
use arpsim::query::{Dataset, TraceValue};
use arpsim::record::Record;
use arpsim::types::{DataType, FileFormat, Lidx, Mode, Sid, Tid, Value};
use std::any::Any;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard};

pub type ArpEnterCallback = Option<CEnterFn>;
pub type ArpLeaveCallback = ArpEnterCallback;
pub type ArpLockCallback = Option<unsafe extern "C" fn(*const c_void, *mut c_void)>;
pub type ArpSpawnCallback = Option<CSpawnFn>;
pub type ArpJoinCallback = ArpSpawnCallback;
pub type ArpErrorCallback = Option<unsafe extern "C" fn(c_int, *const c_char, *mut c_void)>;
/// `arp_trace` (manual 6.4).
pub type ArpTrace = *mut c_void;

#[derive(Clone, Copy)]
struct ErrorHandler {
    cb: ArpErrorCallback,
    context: *mut c_void,
}

const NO_HANDLER: ErrorHandler = ErrorHandler {
    cb: None,
    context: std::ptr::null_mut(),
};

struct State {
    engine: Engine,
    errors: ErrorHandler,
    lock: ArpLockCallback,
    unlock: ArpLockCallback,
    lock_context: *mut c_void,
    dataset: Option<Dataset>,
    query_errors: ErrorHandler,
}

struct Global(Option<State>);
// SAFETY: the raw pointers are the C program's; it promises (manual 3.1)
// that they may be used from the threads that call the library.
unsafe impl Send for Global {}

static STATE: Mutex<Global> = Mutex::new(Global(None));

/// The state, created at the first call. A panic while the lock was held
/// (caught by [`entry`]) leaves the mutex poisoned: the state is used as
/// the panic left it.
fn lock_state() -> MutexGuard<'static, Global> {
    let mut g = STATE.lock().unwrap_or_else(|e| e.into_inner());
    if g.0.is_none() {
        g.0 = Some(State {
            engine: Engine::new(),
            errors: NO_HANDLER,
            lock: None,
            unlock: None,
            lock_context: std::ptr::null_mut(),
            dataset: None,
            query_errors: NO_HANDLER,
        });
    }
    g
}

/// Which error callback a function reports to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    /// The record and playback API (6.1.2): the callback of `arp_start`.
    Record,
    /// The query API (6.4): the callback of `arp_load_data`.
    Query,
}

impl State {
    /// The error handler of `api`.
    fn handler(&self, api: Api) -> ErrorHandler {
        match api {
            Api::Record => self.errors,
            Api::Query => self.query_errors,
        }
    }
}

/// The error handler of `api`.
fn handler(api: Api) -> ErrorHandler {
    lock_state()
        .0
        .as_ref()
        .expect("initialised by lock_state")
        .handler(api)
}

/// What a C function returns when it fails: the "nothing" of its type.
trait Failed {
    const FAILED: Self;
}

impl Failed for () {
    const FAILED: Self = ();
}
impl Failed for c_int {
    const FAILED: Self = 0;
}
impl Failed for c_uint {
    const FAILED: Self = 0;
}
impl Failed for Sid {
    const FAILED: Self = 0;
}
impl Failed for *mut c_void {
    const FAILED: Self = std::ptr::null_mut();
}
impl Failed for *const c_void {
    const FAILED: Self = std::ptr::null();
}
/// The warnings of `arp_finish`: none when it failed.
impl Failed for Vec<ArpError> {
    const FAILED: Self = Vec::new();
}

/// The body of every `extern "C"` function: a panic (a bug of the
/// library) must not unwind into C, which would abort the program. It is
/// reported as a fatal [`ArpError::Internal`] through `api`'s error
/// handler, as any error is (without a handler: a message and exit status
/// 1), and the function returns its failure value.
fn entry<T: Failed>(api: Api, body: impl FnOnce() -> T) -> T {
    let payload = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => return value,
        Err(payload) => payload,
    };
    let message = panic_message(&*payload);
    // A payload's drop is code too; nothing of it may unwind either.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
    let error = ArpError::Internal(message);
    let _ = catch_unwind(AssertUnwindSafe(|| report(handler(api), &error)));
    T::FAILED
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Runs `f` on the state as the body of a C function of `api` (see
/// [`entry`]), then reports its error (outside the lock).
fn with_state<T: Failed>(api: Api, f: impl FnOnce(&mut State) -> Result<T, ArpError>) -> T {
    entry(api, || {
        let (result, handler) = {
            let mut g = lock_state();
            let state = g.0.as_mut().expect("initialised by lock_state");
            (f(state), state.handler(api))
        };
        match result {
            Ok(v) => v,
            Err(e) => {
                report(handler, &e);
                T::FAILED
            }
        }
    })
}

/// Hands `e` to the error callback, or without one writes it to stderr
/// (a failed write is ignored: `eprintln!` would panic on a full disk) and
/// exits for the fatal severities.
fn report(handler: ErrorHandler, e: &ArpError) {
    let severity = e.severity();
    let msg = e.to_string();
    if let Some(cb) = handler.cb {
        let c = CString::new(msg.replace('\0', " ")).expect("no NUL left");
        // SAFETY: registered by the C program with the manual's signature.
        unsafe { cb(severity as c_int, c.as_ptr(), handler.context) };
        return;
    }
    let label = match severity {
        Severity::Warning => "warning",
        Severity::NonFatal => "error",
        Severity::Fatal => "fatal error",
        Severity::Syntax => "syntax error",
        Severity::Io => "I/O error",
    };
    let _ = writeln!(std::io::stderr().lock(), "arp: {label}: {msg}");
    if matches!(severity, Severity::Fatal | Severity::Syntax | Severity::Io) {
        std::process::exit(1);
    }
}

fn bad_enum(what: &str, v: c_int) -> ArpError {
    ArpError::Invalid(format!("invalid {what} {v}"))
}

// ---- 6.1.2 The record and playback API -------------------------------

fn enter(tid: Tid, sid: Sid, lidx: Lidx, kind: SectionKind) {
    with_state(Api::Record, |s| s.engine.enter(tid, sid, lidx, kind))
}

fn leave(tid: Tid, sid: Sid, kind: SectionKind) {
    with_state(Api::Record, |s| s.engine.leave(tid, sid, kind))
}

#[no_mangle]
pub extern "C" fn arp_enter(tid: Tid, sid: Sid, lidx: Lidx) {
    enter(tid, sid, lidx, SectionKind::Plain);
}

#[no_mangle]
pub extern "C" fn arp_enter_kernel(tid: Tid, sid: Sid, lidx: Lidx) {
    enter(tid, sid, lidx, SectionKind::Kernel);
}

#[no_mangle]
pub extern "C" fn arp_enter_profiled(tid: Tid, sid: Sid, lidx: Lidx) {
    enter(tid, sid, lidx, SectionKind::Profiled);
}

#[no_mangle]
pub extern "C" fn arp_leave(tid: Tid, sid: Sid) {
    leave(tid, sid, SectionKind::Plain);
}

#[no_mangle]
pub extern "C" fn arp_leave_kernel(tid: Tid, sid: Sid) {
    leave(tid, sid, SectionKind::Kernel);
}

#[no_mangle]
pub extern "C" fn arp_leave_profiled(tid: Tid, sid: Sid) {
    leave(tid, sid, SectionKind::Profiled);
}

/// The user's lock, held from [`UserLock::take`] until the value drops
/// (also when a panic unwinds past it).
struct UserLock {
    unlock: ArpLockCallback,
    data: *const c_void,
    context: *mut c_void,
}

impl UserLock {
    fn take() -> UserLock {
        let (lock, unlock, context) = {
            let g = lock_state();
            let s = g.0.as_ref().expect("initialised");
            (s.lock, s.unlock, s.lock_context)
        };
        let data: *const c_void = std::ptr::addr_of!(STATE).cast();
        if let Some(l) = lock {
            // SAFETY: registered by the C program with the manual's signature.
            unsafe { l(data, context) };
        }
        UserLock {
            unlock,
            data,
            context,
        }
    }
}

impl Drop for UserLock {
    fn drop(&mut self) {
        if let Some(u) = self.unlock {
            // SAFETY: as for the lock.
            unsafe { u(self.data, self.context) };
        }
    }
}

/// Calls the user's lock callbacks around `f` (manual 3.1: the only
/// places the library locks).
fn locked(f: impl FnOnce(&mut State) -> Result<(), ArpError>) {
    entry(Api::Record, || {
        let _lock = UserLock::take();
        with_state(Api::Record, f);
    })
}

#[no_mangle]
pub extern "C" fn arp_spawned(parent: Tid, child: Tid) {
    locked(|s| s.engine.spawned(parent, child));
}

#[no_mangle]
pub extern "C" fn arp_join(tid: Tid) {
    locked(|s| s.engine.join(tid));
}

#[no_mangle]
pub extern "C" fn arp_add_callbacks(
    data_type: c_int,
    enter: ArpEnterCallback,
    leave: ArpLeaveCallback,
    spawn: ArpSpawnCallback,
    join: ArpJoinCallback,
    context: *mut c_void,
) {
    with_state(Api::Record, |s| {
        let ty = DataType::from_code(data_type as u32)
            .ok_or_else(|| bad_enum("arp_data_type", data_type))?;
        let fns = CCallbackFns {
            ty,
            enter,
            leave,
            spawn,
            join,
            context,
        };
        // SAFETY: the C program registers functions of the manual's
        // signatures, callable while it runs, and the context they take.
        s.engine
            .add_callbacks(Box::new(unsafe { CCallbacks::new(fns, ()) }))
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn arp_start(
    max_tid: Tid,
    max_sid: Sid,
    mode: c_int,
    error_cb: ArpErrorCallback,
    error_context: *mut c_void,
    lock_cb: ArpLockCallback,
    unlock_cb: ArpLockCallback,
    lock_context: *mut c_void,
) {
    with_state(Api::Record, |s| {
        if s.engine.is_started() {
            // The running run keeps its error and lock callbacks.
            return Err(ArpError::AlreadyStarted);
        }
        s.errors = ErrorHandler {
            cb: error_cb,
            context: error_context,
        };
        s.lock = lock_cb;
        s.unlock = unlock_cb;
        s.lock_context = lock_context;
        let mode = Mode::from_code(mode as u32).ok_or_else(|| bad_enum("arp_mode", mode))?;
        s.engine.start(max_tid, max_sid, mode)
    })
}

/// Finishes the run (a partial file if sections are still open) and
/// returns the warnings to report.
fn finish(s: &mut State) -> Result<Vec<ArpError>, ArpError> {
    let summary = match s.engine.finish() {
        Ok(summary) => summary,
        Err(e @ ArpError::OpenSectionsAtFinish { .. }) => {
            // Save what was recorded, marked partial, and report.
            let mut summary = s.engine.finish_partial()?;
            summary.warnings.insert(0, e);
            summary
        }
        Err(e) => return Err(e),
    };
    let mut warnings = summary.warnings;
    if let Some(report) = summary.playback.filter(|r| !r.is_exact()) {
        warnings.push(ArpError::PlaybackInexact(format!(
            "{} of {} recorded samples played exactly once; {} missing, {} played more than once, {} without a recorded sample",
            report.played_once,
            report.recorded,
            report.missing_total,
            report.duplicated_total,
            report.unexpected_total
        )));
    }
    Ok(warnings)
}

#[no_mangle]
pub extern "C" fn arp_finish() {
    entry(Api::Record, || {
        let warnings = with_state(Api::Record, finish);
        let handler = handler(Api::Record);
        for w in warnings {
            report(handler, &w);
        }
    })
}

/// A C string argument, or the error `if_null` for NULL.
///
/// # Safety
/// `s` must be null or a NUL-terminated string.
unsafe fn c_text(s: *const c_char, if_null: &str) -> Result<String, ArpError> {
    if s.is_null() {
        return Err(ArpError::Invalid(if_null.into()));
    }
    // SAFETY: by the contract above.
    Ok(unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
}

#[no_mangle]
pub unsafe extern "C" fn arp_set_file_name(name: *const c_char) {
    with_state(Api::Record, |s| {
        // SAFETY: the caller passes a NUL-terminated string (manual 6.1.2).
        let name = unsafe { c_text(name, "arp_set_file_name: NULL name") }?;
        s.engine.set_file_name(name)
    })
}

#[no_mangle]
pub extern "C" fn arp_set_output_file_format(format: c_int) {
    with_state(Api::Record, |s| {
        let f = FileFormat::from_code(format as u32)
            .ok_or_else(|| bad_enum("arp_file_format", format))?;
        s.engine.set_file_format(f)
    })
}

// ---- 6.4 The Query API -------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn arp_load_data(
    file_name: *const c_char,
    cb: ArpErrorCallback,
    context: *mut c_void,
) {
    with_state(Api::Query, |s| {
        s.query_errors = ErrorHandler { cb, context };
        // SAFETY: the caller passes a NUL-terminated string.
        let name = unsafe { c_text(file_name, "arp_load_data: NULL file name") }?;
        s.dataset = Some(Dataset::load(std::path::Path::new(&name))?);
        Ok(())
    })
}

/// Runs `f` on the loaded data set, as a query API function.
fn with_data<T: Failed>(f: impl FnOnce(&mut Dataset) -> Result<T, ArpError>) -> T {
    with_state(Api::Query, |s| match s.dataset.as_mut() {
        Some(d) => f(d),
        None => Err(ArpError::Invalid(
            "no data loaded (call arp_load_data first)".into(),
        )),
    })
}

#[no_mangle]
pub extern "C" fn arp_get_mode() -> c_int {
    with_data(|d| Ok(d.mode() as c_int))
}

#[no_mangle]
pub extern "C" fn arp_switch_mode(mode: c_int) {
    with_data(|d| {
        let m = Mode::from_code(mode as u32).ok_or_else(|| bad_enum("arp_mode", mode))?;
        d.switch_mode(m)
    });
}

#[no_mangle]
pub extern "C" fn arp_free_data() {
    with_state(Api::Query, |s| {
        s.dataset = None;
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn arp_get_data_mult() -> c_uint {
    with_data(|d| Ok(d.data_mult() as c_uint))
}

#[no_mangle]
pub extern "C" fn arp_get_data_type(index: c_uint) -> c_int {
    with_data(|d| {
        d.data_type(index as usize)
            .map(|t| t as c_int)
            .ok_or_else(|| ArpError::Invalid(format!("arp_get_data_type: no callback set {index}")))
    })
}

#[no_mangle]
pub extern "C" fn arp_get_nTraces() -> c_uint {
    with_data(|d| Ok(d.n_traces() as c_uint))
}

/// What an `arp_trace` points to: a copy of the record and the C
/// representation of its values.
struct CTrace {
    record: Record,
    mode: Mode,
    values: Vec<CArea>,
}

#[no_mangle]
pub extern "C" fn arp_get_trace(trace_no: c_uint) -> ArpTrace {
    with_data(|d| {
        let types = d.header().types.clone();
        let t = d.trace(trace_no as usize).ok_or_else(|| {
            ArpError::Invalid(format!(
                "arp_get_trace: no trace {trace_no} (of {})",
                d.n_traces()
            ))
        })?;
        let values = (0..types.len())
            .map(|i| {
                let mut area = CArea::default();
                match t.value(i) {
                    Some(TraceValue::Sample(v)) => area.write(&v),
                    // Average traces: the mean in the set's own type.
                    Some(TraceValue::Mean(m)) => area.write(&mean_as(types[i], m)),
                    _ => {}
                }
                area
            })
            .collect();
        let trace = Box::new(CTrace {
            record: t.record().clone(),
            mode: d.mode(),
            values,
        });
        Ok(Box::into_raw(trace).cast())
    })
}

fn mean_as(ty: DataType, m: f64) -> Value {
    if ty.is_float() {
        return Value::from_raw(ty, m.to_bits());
    }
    let r = m.round();
    match ty {
        DataType::Char => Value::Char(r as i8),
        DataType::UChar => Value::UChar(r as u8),
        DataType::Short => Value::Short(r as i16),
        DataType::UShort => Value::UShort(r as u16),
        DataType::Int => Value::Int(r as i32),
        DataType::UInt => Value::UInt(r as u32),
        DataType::Long => Value::Long(r as i64),
        DataType::ULong => Value::ULong(r as u64),
        DataType::LLong => Value::LLong(r as i64),
        _ => Value::ULLong(r as u64),
    }
}

/// Runs `f` on the trace behind `trace` (`None` for NULL), as a query API
/// function.
///
/// # Safety
/// `trace` must be null or come from `arp_get_trace` and not have been
/// freed.
unsafe fn with_trace<T: Failed>(trace: ArpTrace, f: impl FnOnce(Option<&CTrace>) -> T) -> T {
    entry(Api::Query, || {
        // SAFETY: per the function's contract.
        f(unsafe { trace.cast::<CTrace>().as_ref() })
    })
}

#[no_mangle]
pub unsafe extern "C" fn arp_free_trace(trace: ArpTrace) {
    entry(Api::Query, || {
        if !trace.is_null() {
            // SAFETY: created by Box::into_raw in arp_get_trace (caller
            // contract, manual 6.4).
            drop(unsafe { Box::from_raw(trace.cast::<CTrace>()) });
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn arp_trace_get_count(trace: ArpTrace) -> c_uint {
    // SAFETY: caller contract (manual 6.4).
    unsafe {
        with_trace(trace, |t| {
            t.map_or(0, |t| {
                t.record.payload.count().min(c_uint::MAX as u64) as c_uint
            })
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn arp_trace_get_stack_length(trace: ArpTrace) -> c_uint {
    // SAFETY: caller contract.
    unsafe { with_trace(trace, |t| t.map_or(0, |t| t.record.stack.len() as c_uint)) }
}

#[no_mangle]
pub unsafe extern "C" fn arp_trace_get_stack_pos(trace: ArpTrace, depth: c_uint) -> Sid {
    // SAFETY: caller contract.
    unsafe {
        with_trace(trace, |t| {
            t.and_then(|t| t.record.stack.get(depth as usize))
                .map_or(0, |e| e.sid)
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn arp_trace_get_stack_index(trace: ArpTrace, depth: c_uint) -> Lidx {
    // SAFETY: caller contract.
    unsafe {
        with_trace(trace, |t| {
            t.filter(|t| t.mode == Mode::RecordAll)
                .and_then(|t| t.record.stack.get(depth as usize))
                .map_or(0, |e| e.idx)
        })
    }
}

#[no_mangle]
pub unsafe extern "C" fn arp_trace_get_value(trace: ArpTrace, data_idx: c_uint) -> *const c_void {
    // SAFETY: caller contract.
    unsafe {
        with_trace(trace, |t| match t {
            Some(t) if t.mode != Mode::RecordHistogram => t
                .values
                .get(data_idx as usize)
                .map_or(std::ptr::null(), |a| a.0.as_ptr().cast()),
            _ => std::ptr::null(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arpsim::engine::CallbackSet;

    static SEEN: Mutex<Vec<(Tid, usize)>> = Mutex::new(Vec::new());

    unsafe extern "C" fn note(sid: Sid, _data: *mut c_void, ctx: *mut c_void) {
        SEEN.lock().unwrap().push((sid, ctx as usize));
    }
    unsafe extern "C" fn clone_ctx(child: Tid, ctxp: *mut *mut c_void) {
        // SAFETY: the library passes the address of the child's context.
        unsafe { *ctxp = (*ctxp as usize + 1000 * child as usize) as *mut c_void };
    }
    unsafe extern "C" fn join_ctx(tid: Tid, ctxp: *mut *mut c_void) {
        // SAFETY: as above.
        SEEN.lock().unwrap().push((tid, unsafe { *ctxp } as usize));
    }

    /// Manual 3.1: spawn/join callbacks get the address of the context
    /// pointer; the child's change is its own and the parent's pointer is
    /// restored automatically.
    #[test]
    fn spawn_callbacks_change_the_childs_context_only() {
        let fns = CCallbackFns {
            ty: DataType::Int,
            enter: Some(note),
            leave: None,
            spawn: Some(clone_ctx),
            join: Some(join_ctx),
            context: 7 as *mut c_void,
        };
        // SAFETY: the functions above have the manual's signatures.
        let mut set = unsafe { CCallbacks::new(fns, ()) };
        let mut v = Value::Int(0);
        set.spawn(1, 2);
        set.enter(2, 10, &mut v);
        set.enter(1, 11, &mut v);
        set.join(2);
        set.enter(2, 12, &mut v);
        assert_eq!(
            *SEEN.lock().unwrap(),
            vec![(10, 2007), (11, 7), (2, 2007), (12, 7)]
        );
    }

    /// A Rust callback set that panics: the engine's sets are code the
    /// library runs under its lock, like any part of the engine.
    struct Panics;

    impl CallbackSet for Panics {
        fn data_type(&self) -> DataType {
            DataType::Int
        }
        fn enter(&mut self, _tid: Tid, sid: Sid, _data: &mut Value) {
            panic!("enter of section {sid}");
        }
        fn leave(&mut self, _tid: Tid, _sid: Sid, _data: &mut Value) {}
        fn spawn(&mut self, _parent: Tid, child: Tid) {
            panic!("spawn of thread {child}");
        }
    }

    static REPORTED: Mutex<Vec<(c_int, String)>> = Mutex::new(Vec::new());
    static LOCKED: Mutex<(u32, u32)> = Mutex::new((0, 0));

    unsafe extern "C" fn on_error(code: c_int, message: *const c_char, _ctx: *mut c_void) {
        // SAFETY: libarp passes a NUL-terminated message.
        let text = unsafe { CStr::from_ptr(message) }.to_string_lossy();
        REPORTED.lock().unwrap().push((code, text.into_owned()));
    }
    unsafe extern "C" fn lock(_data: *const c_void, _ctx: *mut c_void) {
        LOCKED.lock().unwrap().0 += 1;
    }
    unsafe extern "C" fn unlock(_data: *const c_void, _ctx: *mut c_void) {
        LOCKED.lock().unwrap().1 += 1;
    }

    /// A panic inside the library does not unwind into C (that would
    /// abort the program): it reaches the error callback as a fatal error,
    /// the user's lock taken around it is released, and the library goes
    /// on answering.
    #[test]
    fn a_panic_takes_the_error_path_and_releases_the_users_lock() {
        let dir = tempfile::tempdir().unwrap();
        let name = CString::new(dir.path().join("p.arp").to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated string.
        unsafe { arp_set_file_name(name.as_ptr()) };
        with_state(Api::Record, |s| s.engine.add_callbacks(Box::new(Panics)));
        let start = || {
            arp_start(
                2,
                8,
                Mode::RecordAll as c_int,
                Some(on_error),
                std::ptr::null_mut(),
                Some(lock),
                Some(unlock),
                std::ptr::null_mut(),
            )
        };
        start();
        arp_enter_kernel(1, 3, 0);
        arp_spawned(1, 2);
        start();
        let internal = "internal error of the ARP library (a bug; please report it)";
        let fatal = Severity::Fatal as c_int;
        assert_eq!(
            *REPORTED.lock().unwrap(),
            [
                (fatal, format!("{internal}: enter of section 3")),
                (fatal, format!("{internal}: spawn of thread 2")),
                (fatal, "arp_start was already called".to_owned()),
            ]
        );
        assert_eq!(*LOCKED.lock().unwrap(), (1, 1));
        *STATE.lock().unwrap_or_else(|e| e.into_inner()) = Global(None);
    }

    #[test]
    fn means_convert_to_the_set_type() {
        assert_eq!(mean_as(DataType::UInt, 2.6), Value::UInt(3));
        assert_eq!(mean_as(DataType::Double, 2.6), Value::Double(2.6));
    }
}
