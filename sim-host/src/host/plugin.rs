//! Callback plugins (`sim-host run --plugin PATH.so[:ARGS]`): shared
//! libraries with the C ABI of `sim-host/include/sim_host_plugin.h` that
//! register ARP callback sets (manual 2.3, 6.1.2 `arp_add_callbacks`). Their
//! values are recorded as further callback sets of `data.arp`, after the
//! host's own.
//!
//! The parts:
//! - [`Plugin::load`]: opens the library, checks the ABI version, calls
//!   `sim_host_plugin_init` with the [`HostApi`] table and collects the sets
//!   it registers. Every failure is a [`PluginError`] naming the library.
//! - [`Plugin::callback_sets`]: one [`CallbackSet`] per registered set:
//!   arpsim's C adapter ([`CCallbacks`]: data areas, a context pointer per
//!   thread, as libarp's sets) with a `PluginScope` around each call.
//! - [`GuestAccess`] and [`with_guest`]: the "current guest" slot the host
//!   API reads while the machine handles an ARP call (the engine fills it
//!   with its own guest).
//!
//! Invariants:
//! - every `unsafe` of sim-host's plugin support is in this file and in the
//!   engine's `plugin_guest` (raw engine reads), each with its reason;
//! - no panic crosses the FFI boundary: every `extern "C"` function given to
//!   plugins catches unwinding and returns its failure value;
//! - a library stays loaded while any of its callback sets exists (each
//!   holds an `Rc` of it); `sim_host_plugin_finish` runs once, when the last
//!   one is dropped, and only if init succeeded.

use arpsim::c_callbacks::{CCall, CCallbackFns, CCallbacks, CallScope};
use arpsim::engine::CallbackSet;
use arpsim::types::{DataType, Sid, Tid};
// The tests (`use super::*`) measure values.
#[cfg(test)]
use arpsim::types::Value;
use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

pub use sim_host_plugin_abi::{
    EnterCallback, HostApi, JoinCallback, LeaveCallback, SpawnCallback, ABI_VERSION,
};
use sim_host_plugin_abi::{FinishFn, InitFn, SYM_FINISH, SYM_INIT, SYM_VERSION};

/// Why a plugin could not be used. The run must not start on any of these.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("invalid --plugin `{spec}`: {reason}")]
    Spec { spec: String, reason: String },
    // The libloading error is part of the message, not a `source`: it
    // would otherwise be printed twice by `{:#}` chains.
    #[error("plugin {}: cannot load the library: {cause}", path.display())]
    Load {
        path: PathBuf,
        cause: libloading::Error,
    },
    #[error(
        "plugin {}: missing symbol `{symbol}`; is it built against sim_host_plugin.h? ({cause})",
        path.display()
    )]
    MissingSymbol {
        path: PathBuf,
        symbol: &'static str,
        cause: libloading::Error,
    },
    #[error(
        "plugin {}: ABI version {found}, but this sim-host loads version {expected} only; \
         rebuild the plugin against this sim-host's sim_host_plugin.h",
        path.display()
    )]
    AbiVersion {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    #[error("plugin {}: sim_host_plugin_init failed with code {code}: {message}", path.display())]
    InitFailed {
        path: PathBuf,
        code: i32,
        message: String,
    },
    #[error("plugin {}: sim_host_plugin_init panicked or unwound (caught): {message}", path.display())]
    InitPanicked { path: PathBuf, message: String },
    #[error("plugin {}: refused registration: {reason}", path.display())]
    Registration { path: PathBuf, reason: String },
    #[error("plugin {}: registered no callback set (call api->add_callbacks in init)", path.display())]
    NoCallbacks { path: PathBuf },
}

/// A `--plugin` argument: `PATH[:ARGS]`, split at the first `:` (so a
/// path cannot contain one); ARGS go to init verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginSpec {
    pub path: PathBuf,
    pub args: String,
}

impl std::str::FromStr for PluginSpec {
    type Err = PluginError;
    fn from_str(s: &str) -> Result<Self, PluginError> {
        let (path, args) = s.split_once(':').unwrap_or((s, ""));
        let bad = |reason: &str| PluginError::Spec {
            spec: s.to_owned(),
            reason: reason.to_owned(),
        };
        if path.is_empty() {
            return Err(bad("no library path before `:`"));
        }
        if args.contains('\0') {
            return Err(bad("the arguments contain a NUL byte"));
        }
        Ok(PluginSpec {
            path: PathBuf::from(path),
            args: args.to_owned(),
        })
    }
}

/// One set registered by `add_callbacks`.
#[derive(Clone, Copy, Debug)]
struct Registration {
    ty: DataType,
    enter: unsafe extern "C" fn(Sid, *mut c_void, *mut c_void),
    leave: unsafe extern "C" fn(Sid, *mut c_void, *mut c_void),
    spawn: SpawnCallback,
    join: JoinCallback,
    context: *mut c_void,
}

/// What the `host` pointer of the API table points to: one per plugin.
struct HostCtx {
    name: String,
    clock_hz: u64,
    /// `add_callbacks` is accepted only while init runs.
    in_init: Cell<bool>,
    sets: RefCell<Vec<Registration>>,
    refused: RefCell<Vec<String>>,
    error: RefCell<Option<String>>,
}

/// A loaded library with its host context. Dropped last of everything
/// that can call into the library.
struct LoadedLib {
    /// Boxed: plugins keep pointers to both for the library's lifetime.
    _api: Box<HostApi>,
    _ctx: Box<HostCtx>,
    /// Set once init succeeded.
    finish: Cell<Option<FinishFn>>,
    path: PathBuf,
    /// Last field: unloaded after `finish` ran and the tables are gone.
    _lib: libloading::Library,
}

impl Drop for LoadedLib {
    fn drop(&mut self) {
        if let Some(finish) = self.finish.take() {
            // SAFETY: exported by the plugin with the header's signature;
            // the library is still loaded (`_lib` is dropped after this).
            unsafe { finish() };
        }
    }
}

/// A plugin whose init succeeded: its library and the sets it registered.
pub struct Plugin {
    lib: Rc<LoadedLib>,
    sets: Vec<Registration>,
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("path", &self.lib.path)
            .field("data_types", &self.data_types())
            .finish()
    }
}

impl Plugin {
    /// Loads the library of `spec`, checks its ABI version and runs its
    /// init with `spec.args`. `clock_hz` is what `api->clock_hz` answers
    /// outside callbacks (the target's clock).
    pub fn load(spec: &PluginSpec, clock_hz: u64) -> Result<Plugin, PluginError> {
        let path = spec.path.clone();
        // A bare name would make dlopen search the system library path;
        // a plugin is always a file the user names.
        let open_path = if path.components().count() == 1 {
            Path::new(".").join(&path)
        } else {
            path.clone()
        };
        // SAFETY: loading runs the library's initialisers; the user asked
        // for this library to be run inside sim-host.
        let lib =
            unsafe { libloading::Library::new(&open_path) }.map_err(|cause| PluginError::Load {
                path: path.clone(),
                cause,
            })?;
        let missing = |symbol: &'static str| {
            let path = path.clone();
            move |cause| PluginError::MissingSymbol {
                path,
                symbol,
                cause,
            }
        };
        // SAFETY: the header declares the symbol as `const uint32_t`; it
        // is read once, here, while the library is loaded.
        let found = unsafe {
            let sym = lib
                .get::<*const u32>(SYM_VERSION.as_bytes())
                .map_err(missing(SYM_VERSION))?;
            if sym.is_null() {
                0
            } else {
                sym.read()
            }
        };
        if found != ABI_VERSION {
            return Err(PluginError::AbiVersion {
                path,
                found,
                expected: ABI_VERSION,
            });
        }
        // SAFETY: the header declares these functions with these
        // signatures (checked by the version above); the pointers are used
        // only while `lib` is loaded (LoadedLib owns it).
        let (init, finish) = unsafe {
            let init: InitFn = *lib
                .get::<InitFn>(SYM_INIT.as_bytes())
                .map_err(missing(SYM_INIT))?;
            let finish: Option<FinishFn> =
                lib.get::<FinishFn>(SYM_FINISH.as_bytes()).ok().map(|s| *s);
            (init, finish)
        };
        let args = CString::new(spec.args.as_str()).map_err(|_| PluginError::Spec {
            spec: spec.args.clone(),
            reason: "the arguments contain a NUL byte".into(),
        })?;
        let ctx = Box::new(HostCtx {
            name: path.display().to_string(),
            clock_hz,
            in_init: Cell::new(true),
            sets: RefCell::new(Vec::new()),
            refused: RefCell::new(Vec::new()),
            error: RefCell::new(None),
        });
        let api = Box::new(HostApi {
            abi_version: ABI_VERSION,
            size: size_of::<HostApi>() as u32,
            host: &*ctx as *const HostCtx as *mut c_void,
            add_callbacks: api_add_callbacks,
            set_error: api_set_error,
            log: api_log,
            clock_hz: api_clock_hz,
            cycles: api_cycles,
            instructions: api_instructions,
            current_tid: api_current_tid,
            read_register: api_read_register,
            read_memory: api_read_memory,
        });
        // SAFETY: `init` has the header's signature; `api` and `args`
        // outlive the call (api lives as long as the library). A Rust
        // panic cannot unwind out of an `extern "C"` function (it aborts);
        // catch_unwind guards against a plugin declared "C-unwind".
        let code = catch_unwind(AssertUnwindSafe(|| unsafe { init(&*api, args.as_ptr()) }));
        ctx.in_init.set(false);
        let message = ctx.error.borrow_mut().take();
        let refused = std::mem::take(&mut *ctx.refused.borrow_mut());
        let sets = std::mem::take(&mut *ctx.sets.borrow_mut());
        let loaded = LoadedLib {
            _api: api,
            _ctx: ctx,
            finish: Cell::new(None),
            path: path.clone(),
            _lib: lib,
        };
        match code {
            Err(panic) => {
                return Err(PluginError::InitPanicked {
                    path,
                    message: panic_message(&*panic),
                })
            }
            Ok(0) => {}
            Ok(code) => {
                return Err(PluginError::InitFailed {
                    path,
                    code,
                    message: message
                        .unwrap_or_else(|| "(no message given with api->set_error)".into()),
                })
            }
        }
        // Init succeeded: finish is owed from here on, whatever follows.
        loaded.finish.set(finish);
        if let Some(reason) = refused.into_iter().next() {
            return Err(PluginError::Registration { path, reason });
        }
        if sets.is_empty() {
            return Err(PluginError::NoCallbacks { path });
        }
        Ok(Plugin {
            lib: Rc::new(loaded),
            sets,
        })
    }

    /// Loads every `--plugin` in order; the first failure stops.
    pub fn load_all(specs: &[PluginSpec], clock_hz: u64) -> Result<Vec<Rc<Plugin>>, PluginError> {
        specs
            .iter()
            .map(|s| Plugin::load(s, clock_hz).map(Rc::new))
            .collect()
    }

    /// The library's path as given.
    pub fn path(&self) -> &Path {
        &self.lib.path
    }

    /// The data types of the registered sets, in registration order.
    pub fn data_types(&self) -> Vec<DataType> {
        self.sets.iter().map(|s| s.ty).collect()
    }

    /// Fresh engine adapters for the registered sets, in registration
    /// order (fresh per-thread context pointers; one call per run).
    pub fn callback_sets(&self) -> Vec<Box<dyn CallbackSet>> {
        let name: Arc<str> = Arc::from(self.lib.path.display().to_string());
        self.sets
            .iter()
            .map(|reg| {
                let fns = CCallbackFns {
                    ty: reg.ty,
                    enter: Some(reg.enter),
                    leave: Some(reg.leave),
                    spawn: reg.spawn,
                    join: reg.join,
                    context: reg.context,
                };
                let scope = PluginScope {
                    _lib: Rc::clone(&self.lib),
                    name: Arc::clone(&name),
                };
                // SAFETY: the plugin registered these functions with the
                // header's signatures and this context; the scope keeps
                // its library loaded while the set exists.
                Box::new(unsafe { CCallbacks::new(fns, scope) }) as Box<dyn CallbackSet>
            })
            .collect()
    }

    /// The API table given to init (for tests of the API functions).
    #[cfg(test)]
    fn api(&self) -> &HostApi {
        &self.lib._api
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic".into())
}

// ---------------------------------------------------------------------------
// The engine adapter.

/// What runs around each call of a plugin's callback (the calls
/// themselves, with the per-thread context pointers and the data area, are
/// arpsim's [`CCallbacks`]): the tid `api->current_tid` answers and the
/// watchdog's note of the running callback.
struct PluginScope {
    /// Keeps the code and the API table alive while the engine holds the
    /// set.
    _lib: Rc<LoadedLib>,
    /// The plugin's path, for the watchdog's message.
    name: Arc<str>,
}

impl CallScope for PluginScope {
    type Guard = (watchdog::RunningGuard, TidScope);

    fn open(&self, call: CCall) -> Self::Guard {
        let tid = TidScope::enter(call.tid());
        let watched = watchdog::running(watchdog::Call {
            plugin: Arc::clone(&self.name),
            what: call.name(),
            sid: call.sid(),
        });
        (watched, tid)
    }
}

// ---------------------------------------------------------------------------
// The current guest: what the host API reads during a callback.

/// The guest state a plugin may read while an ARP call is handled.
pub trait GuestAccess {
    /// The running core's cycle counter.
    fn cycles(&self) -> u64;
    /// The running core's instruction counter.
    fn instructions(&self) -> u64;
    /// The target's clock.
    fn clock_hz(&self) -> u64;
    /// Architectural register `n` (numbering in sim_host_plugin.h).
    fn register(&self, n: u32) -> Option<u64>;
    /// Fills `buf` from guest memory at `addr`; false if any byte is
    /// unmapped.
    fn read_memory(&self, addr: u64, buf: &mut [u8]) -> bool;
}

thread_local! {
    // Thread-locals rather than a pointer in the API table: callbacks are
    // C functions called from inside the engine, which knows nothing of
    // the machine; the slot is filled only for the duration of a call.
    static GUEST: RefCell<Option<Rc<dyn GuestAccess>>> = const { RefCell::new(None) };
    static CURRENT_TID: Cell<Option<Tid>> = const { Cell::new(None) };
}

/// Runs `f` with `guest` as the current guest of this thread: the plugin
/// callbacks that `f` makes the engine call can read it through the host
/// API. The previous guest (normally none) is restored afterwards, also
/// when `f` panics.
pub fn with_guest<R>(guest: Rc<dyn GuestAccess>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Rc<dyn GuestAccess>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            GUEST.with(|g| *g.borrow_mut() = previous);
        }
    }
    let previous = GUEST.with(|g| g.replace(Some(guest)));
    let _restore = Restore(previous);
    f()
}

/// The guest the host API reads now (inside [`with_guest`]).
pub fn current_guest() -> Option<Rc<dyn GuestAccess>> {
    GUEST.with(|g| g.try_borrow().ok().and_then(|g| g.clone()))
}

/// Sets the tid `current_tid` answers for the duration of one callback.
struct TidScope(Option<Tid>);

impl TidScope {
    fn enter(tid: Tid) -> TidScope {
        TidScope(CURRENT_TID.with(|c| c.replace(Some(tid))))
    }
}

impl Drop for TidScope {
    fn drop(&mut self) {
        CURRENT_TID.with(|c| c.set(self.0));
    }
}

// ---------------------------------------------------------------------------
// The host API functions given to plugins. Each catches unwinding and
// returns its failure value: a panic must not cross into C.

/// The host context behind an API `host` pointer.
///
/// # Safety
/// `host` must be null or the `host` field of an API table given to a
/// plugin that is still loaded (the context lives as long as the library).
unsafe fn host_ctx<'a>(host: *mut c_void) -> Option<&'a HostCtx> {
    // SAFETY: by the contract above, a non-null `host` points to a live
    // HostCtx, only ever accessed through shared references.
    unsafe { (host as *const HostCtx).as_ref() }
}

/// Copies a C string argument (`None` for NULL).
///
/// # Safety
/// `s` must be null or a NUL-terminated string.
unsafe fn c_text(s: *const c_char) -> Option<String> {
    // SAFETY: by the contract above.
    (!s.is_null()).then(|| unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
}

fn guarded<R>(fail: R, f: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fail)
}

extern "C" fn api_add_callbacks(
    host: *mut c_void,
    data_type: c_int,
    enter: EnterCallback,
    leave: LeaveCallback,
    spawn: SpawnCallback,
    join: JoinCallback,
    context: *mut c_void,
) -> c_int {
    guarded(-1, || {
        // SAFETY: `host` comes from our API table (header contract).
        let Some(ctx) = (unsafe { host_ctx(host) }) else {
            return -1;
        };
        let reg = match (
            u32::try_from(data_type).ok().and_then(DataType::from_code),
            enter,
            leave,
        ) {
            _ if !ctx.in_init.get() => {
                Err("add_callbacks called outside sim_host_plugin_init".to_owned())
            }
            _ if ctx.sets.borrow().len() >= arpsim::types::MAX_CALLBACK_SETS => Err(format!(
                "add_callbacks: at most {} callback sets, the most a data.arp holds",
                arpsim::types::MAX_CALLBACK_SETS
            )),
            (None, _, _) => Err(format!(
                "add_callbacks: data type {data_type} is not an arp_data_type (0..12)"
            )),
            (_, None, _) | (_, _, None) => {
                Err("add_callbacks: the enter and leave callbacks must not be NULL".to_owned())
            }
            (Some(ty), Some(enter), Some(leave)) => Ok(Registration {
                ty,
                enter,
                leave,
                spawn,
                join,
                context,
            }),
        };
        match reg {
            Ok(reg) => {
                ctx.sets.borrow_mut().push(reg);
                0
            }
            Err(reason) => {
                if ctx.in_init.get() {
                    ctx.refused.borrow_mut().push(reason);
                } else {
                    crate::say!("plugin {}: {reason} (ignored)", ctx.name);
                }
                -1
            }
        }
    })
}

/// A plugin's own text, cut to 200 characters: a message never repeats an
/// unbounded string a plugin handed over.
fn bounded(text: &str) -> String {
    match text.char_indices().nth(200) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}… ({} bytes)", &text[..cut], text.len()),
    }
}

extern "C" fn api_set_error(host: *mut c_void, message: *const c_char) {
    guarded((), || {
        // SAFETY: `host` comes from our API table; `message` is a C string
        // (header contract).
        if let (Some(ctx), Some(text)) = unsafe { (host_ctx(host), c_text(message)) } {
            // Bounded: a plugin's message is quoted, never echoed whole.
            *ctx.error.borrow_mut() = Some(bounded(&text));
        }
    })
}

extern "C" fn api_log(host: *mut c_void, message: *const c_char) {
    guarded((), || {
        // SAFETY: as for set_error.
        if let (Some(ctx), Some(text)) = unsafe { (host_ctx(host), c_text(message)) } {
            crate::say!("plugin {}: {}", ctx.name, bounded(&text));
        }
    })
}

extern "C" fn api_clock_hz(host: *mut c_void) -> u64 {
    guarded(0, || match current_guest() {
        Some(g) => g.clock_hz(),
        // SAFETY: `host` comes from our API table.
        None => unsafe { host_ctx(host) }.map_or(0, |c| c.clock_hz),
    })
}

extern "C" fn api_cycles(_host: *mut c_void) -> u64 {
    guarded(0, || current_guest().map_or(0, |g| g.cycles()))
}

extern "C" fn api_instructions(_host: *mut c_void) -> u64 {
    guarded(0, || current_guest().map_or(0, |g| g.instructions()))
}

extern "C" fn api_current_tid(_host: *mut c_void) -> Tid {
    guarded(0, || CURRENT_TID.with(Cell::get).unwrap_or(0))
}

extern "C" fn api_read_register(_host: *mut c_void, n: u32, value: *mut u64) -> c_int {
    guarded(-1, || {
        match current_guest().and_then(|g| g.register(n)) {
            Some(v) if !value.is_null() => {
                // SAFETY: the plugin passes a pointer to a uint64_t.
                unsafe { value.write_unaligned(v) };
                0
            }
            _ => -1,
        }
    })
}

extern "C" fn api_read_memory(
    _host: *mut c_void,
    addr: u64,
    buf: *mut c_void,
    len: usize,
) -> c_int {
    guarded(-1, || {
        let Some(guest) = current_guest() else {
            return -1;
        };
        if len == 0 {
            return 0;
        }
        if buf.is_null() || len > isize::MAX as usize {
            return -1;
        }
        // SAFETY: the plugin passes a buffer writable for `len` bytes.
        let buf = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), len) };
        if guest.read_memory(addr, buf) {
            0
        } else {
            -1
        }
    })
}

pub mod watchdog;

#[cfg(test)]
mod tests;
