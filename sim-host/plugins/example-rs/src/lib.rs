//! Example sim-host callback plugin in Rust (`sim_host_plugin.h`, ABI 1).
//!
//! One callback set, `double`: the instructions per cycle of each
//! execution of a section, from the running core's counters at enter and
//! leave. The enter counters are kept per thread (`api->current_tid`) as a
//! stack of open sections, so nested sections work; the data area is only
//! written at leave.
//!
//! Arguments: `""`, or `fail` (init fails, for tests), or `panic` (init
//! panics; the panic is caught here and reported as a failure).
//!
//! The ABI types come from `sim-host-plugin-abi`, the one declaration of
//! the header's ABI in Rust (a crate with no dependencies: a plugin does
//! not pull in the simulator).

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use sim_host_plugin_abi::data_type::DOUBLE as SIM_HOST_DOUBLE;
use sim_host_plugin_abi::{HostApi, Sid, Tid, ABI_VERSION};

/// The plugin's context: the API table and each thread's open sections.
struct Ipc {
    api: *const HostApi,
    open: RefCell<HashMap<Tid, Vec<(u64, u64)>>>,
}

impl Ipc {
    fn api(&self) -> &HostApi {
        // SAFETY: the host keeps the table valid until finish returns.
        unsafe { &*self.api }
    }
}

#[no_mangle]
#[used]
pub static sim_host_plugin_abi_version: u32 = ABI_VERSION;

/// The context registered in init, freed by finish.
static mut CONTEXT: *mut Ipc = std::ptr::null_mut();

/// The IPC of `cycles` cycles and `instructions` instructions (0 when no
/// cycles passed).
pub fn ipc(cycles: u64, instructions: u64) -> f64 {
    if cycles == 0 {
        0.0
    } else {
        instructions as f64 / cycles as f64
    }
}

/// # Safety
/// Called by sim-host with the header's contract: `context` is the `Ipc`
/// registered in init.
unsafe extern "C" fn enter(_sid: Sid, _data: *mut c_void, context: *mut c_void) {
    // A panic must not unwind into the host: catch and drop it.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: see the function's contract.
        let state = unsafe { &*(context as *const Ipc) };
        let api = state.api();
        let tid = (api.current_tid)(api.host);
        let now = ((api.cycles)(api.host), (api.instructions)(api.host));
        state.open.borrow_mut().entry(tid).or_default().push(now);
    }));
}

/// # Safety
/// As [`enter`]; `data` is the set's 16-byte data area.
unsafe extern "C" fn leave(_sid: Sid, data: *mut c_void, context: *mut c_void) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: see the function's contract.
        let state = unsafe { &*(context as *const Ipc) };
        let api = state.api();
        let tid = (api.current_tid)(api.host);
        if let Some((c0, i0)) = state.open.borrow_mut().get_mut(&tid).and_then(Vec::pop) {
            let cycles = (api.cycles)(api.host).saturating_sub(c0);
            let insns = (api.instructions)(api.host).saturating_sub(i0);
            // SAFETY: the area is aligned and large enough for a double.
            unsafe { data.cast::<f64>().write(ipc(cycles, insns)) };
        }
    }));
}

fn set_error(api: &HostApi, message: &str) {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    (api.set_error)(api.host, text.as_ptr());
}

fn init(api: &'static HostApi, args: &str) -> c_int {
    match args {
        "" => {}
        "fail" => {
            set_error(api, "asked to fail");
            return 7;
        }
        "panic" => panic!("asked to panic"),
        other => {
            set_error(
                api,
                &format!("unknown argument `{other}` (known: fail, panic)"),
            );
            return 2;
        }
    }
    let context = Box::into_raw(Box::new(Ipc {
        api,
        open: RefCell::new(HashMap::new()),
    }));
    // SAFETY: init and finish run on the host's thread, one at a time.
    unsafe { CONTEXT = context };
    (api.add_callbacks)(
        api.host,
        SIM_HOST_DOUBLE,
        Some(enter),
        Some(leave),
        None,
        None,
        context.cast(),
    )
}

/// # Safety
/// Called by sim-host with a valid API table and a C string.
#[no_mangle]
pub unsafe extern "C" fn sim_host_plugin_init(api: *const HostApi, args: *const c_char) -> c_int {
    if api.is_null() {
        return -1;
    }
    // SAFETY: the host keeps the table valid until finish returns.
    let api: &'static HostApi = unsafe { &*api };
    if api.abi_version != ABI_VERSION {
        return -1;
    }
    let args = if args.is_null() {
        String::new()
    } else {
        // SAFETY: a NUL-terminated string from the host.
        unsafe { CStr::from_ptr(args) }
            .to_string_lossy()
            .into_owned()
    };
    match catch_unwind(AssertUnwindSafe(|| init(api, &args))) {
        Ok(code) => code,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            set_error(api, &format!("panic in init: {what}"));
            -99
        }
    }
}

/// Frees the context.
#[no_mangle]
pub extern "C" fn sim_host_plugin_finish() {
    // SAFETY: init and finish run on the host's thread; the pointer was
    // made by Box::into_raw and is taken out once.
    unsafe {
        let context = std::ptr::replace(&raw mut CONTEXT, std::ptr::null_mut());
        if !context.is_null() {
            drop(Box::from_raw(context));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_host_plugin_abi::{EnterCallback, SpawnCallback};
    use std::cell::Cell;

    thread_local! {
        static SETS: RefCell<Vec<(c_int, EnterCallback, EnterCallback, *mut c_void)>> =
            const { RefCell::new(Vec::new()) };
        static ERROR: RefCell<String> = const { RefCell::new(String::new()) };
        static NOW: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
        static TID: Cell<Tid> = const { Cell::new(1) };
    }

    extern "C" fn add(
        _h: *mut c_void,
        ty: c_int,
        e: EnterCallback,
        l: EnterCallback,
        _s: SpawnCallback,
        _j: SpawnCallback,
        ctx: *mut c_void,
    ) -> c_int {
        SETS.with(|s| s.borrow_mut().push((ty, e, l, ctx)));
        0
    }
    extern "C" fn err(_h: *mut c_void, m: *const c_char) {
        // SAFETY: a C string from the plugin.
        let m = unsafe { CStr::from_ptr(m) }.to_string_lossy().into_owned();
        ERROR.with(|e| *e.borrow_mut() = m);
    }
    extern "C" fn log(_h: *mut c_void, _m: *const c_char) {}
    extern "C" fn clock(_h: *mut c_void) -> u64 {
        1
    }
    extern "C" fn cycles(_h: *mut c_void) -> u64 {
        NOW.with(Cell::get).0
    }
    extern "C" fn insns(_h: *mut c_void) -> u64 {
        NOW.with(Cell::get).1
    }
    extern "C" fn tid(_h: *mut c_void) -> Tid {
        TID.with(Cell::get)
    }
    extern "C" fn reg(_h: *mut c_void, _n: u32, _v: *mut u64) -> c_int {
        -1
    }
    extern "C" fn mem(_h: *mut c_void, _a: u64, _b: *mut c_void, _l: usize) -> c_int {
        -1
    }

    fn fake_api() -> &'static HostApi {
        Box::leak(Box::new(HostApi {
            abi_version: ABI_VERSION,
            size: size_of::<HostApi>() as u32,
            host: std::ptr::null_mut(),
            add_callbacks: add,
            set_error: err,
            log,
            clock_hz: clock,
            cycles,
            instructions: insns,
            current_tid: tid,
            read_register: reg,
            read_memory: mem,
        }))
    }

    fn call_init(api: &HostApi, args: &str) -> c_int {
        let args = CString::new(args).unwrap();
        // SAFETY: a valid table and C string.
        unsafe { sim_host_plugin_init(api, args.as_ptr()) }
    }

    #[test]
    fn records_the_ipc_of_nested_sections_per_thread() {
        let api = fake_api();
        assert_eq!(call_init(api, ""), 0);
        let (ty, e, l, ctx) = SETS.with(|s| s.borrow()[0]);
        assert_eq!(ty, SIM_HOST_DOUBLE);
        let (e, l) = (e.unwrap(), l.unwrap());
        let mut outer = [0f64; 2];
        let mut inner = [0f64; 2];
        // SAFETY: the callbacks registered above with their context.
        unsafe {
            NOW.with(|n| n.set((100, 50)));
            e(1, outer.as_mut_ptr().cast(), ctx);
            NOW.with(|n| n.set((110, 60)));
            e(2, inner.as_mut_ptr().cast(), ctx);
            NOW.with(|n| n.set((130, 65)));
            l(2, inner.as_mut_ptr().cast(), ctx);
            NOW.with(|n| n.set((200, 150)));
            l(1, outer.as_mut_ptr().cast(), ctx);
        }
        assert_eq!(inner[0], 0.25); // 5 instructions in 20 cycles
        assert_eq!(outer[0], 1.0); // 100 in 100
        sim_host_plugin_finish();
    }

    #[test]
    fn failures_are_reported_through_set_error() {
        let api = fake_api();
        assert_eq!(call_init(api, "fail"), 7);
        assert_eq!(ERROR.with(|e| e.borrow().clone()), "asked to fail");
        assert_eq!(call_init(api, "panic"), -99);
        assert!(ERROR.with(|e| e.borrow().contains("asked to panic")));
        assert_eq!(call_init(api, "what"), 2);
        let bad = HostApi {
            abi_version: 2,
            ..*api
        };
        assert_eq!(call_init(&bad, ""), -1);
    }

    #[test]
    fn ipc_of_no_cycles_is_zero() {
        assert_eq!(ipc(0, 5), 0.0);
        assert_eq!(ipc(4, 2), 0.5);
    }
}
