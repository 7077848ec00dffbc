//! The C ABI of sim-host callback plugins, declared once: the host
//! (`sim-host`'s `host::plugin`) and plugins written in Rust use these
//! types; `sim-host/include/sim_host_plugin.h` declares the same for C, and
//! a test of sim-host compiles the header against this declaration (field
//! names, offsets, sizes and function types).
//!
//! No dependencies: a plugin crate pulls in nothing of the simulator.

#![no_std]
#![forbid(unsafe_code)]

use core::ffi::{c_char, c_int, c_void};

/// `SIM_HOST_PLUGIN_ABI_VERSION`: it changes whenever anything here
/// changes incompatibly. Within a version, fields are only ever appended
/// to [`HostApi`], and its `size` tells how many the host provides.
pub const ABI_VERSION: u32 = 1;

/// `sim_host_tid` (= `arp_tid`).
pub type Tid = u16;
/// `sim_host_sid` (= `arp_sid`).
pub type Sid = u16;

/// `sim_host_enter_callback`: the section id, the set's data area for this
/// execution of the section, and the set's context pointer.
pub type EnterCallback = Option<unsafe extern "C" fn(Sid, *mut c_void, *mut c_void)>;
/// `sim_host_leave_callback`.
pub type LeaveCallback = EnterCallback;
/// `sim_host_spawn_callback`: the child's tid and the address of its copy
/// of the context pointer.
pub type SpawnCallback = Option<unsafe extern "C" fn(Tid, *mut *mut c_void)>;
/// `sim_host_join_callback`.
pub type JoinCallback = SpawnCallback;

/// `api->add_callbacks`.
pub type AddCallbacksFn = extern "C" fn(
    *mut c_void,
    c_int,
    EnterCallback,
    LeaveCallback,
    SpawnCallback,
    JoinCallback,
    *mut c_void,
) -> c_int;

/// `struct sim_host_api`: the table the host gives `sim_host_plugin_init`.
/// Field order and types are the ABI.
#[repr(C)]
pub struct HostApi {
    /// The host's `SIM_HOST_PLUGIN_ABI_VERSION`.
    pub abi_version: u32,
    /// `sizeof(sim_host_api)` in the host.
    pub size: u32,
    /// Opaque; the first argument of every function below.
    pub host: *mut c_void,
    /// During init only: registers a callback set.
    pub add_callbacks: AddCallbacksFn,
    /// During init only: the message to report when init fails.
    pub set_error: extern "C" fn(*mut c_void, *const c_char),
    /// Prints "plugin NAME: message" on stderr.
    pub log: extern "C" fn(*mut c_void, *const c_char),
    /// The target's clock in Hz.
    pub clock_hz: extern "C" fn(*mut c_void) -> u64,
    /// Inside callbacks: the running core's cycle counter.
    pub cycles: extern "C" fn(*mut c_void) -> u64,
    /// Inside callbacks: the running core's instruction counter.
    pub instructions: extern "C" fn(*mut c_void) -> u64,
    /// Inside callbacks: the thread id given to the ARP call.
    pub current_tid: extern "C" fn(*mut c_void) -> Tid,
    /// Inside callbacks: architectural register n (0 and the value, or -1).
    pub read_register: extern "C" fn(*mut c_void, u32, *mut u64) -> c_int,
    /// Inside callbacks: guest memory (0, or -1 if any byte is unmapped).
    pub read_memory: extern "C" fn(*mut c_void, u64, *mut c_void, usize) -> c_int,
}

/// `sim_host_plugin_init`'s type.
pub type InitFn = unsafe extern "C" fn(*const HostApi, *const c_char) -> c_int;
/// `sim_host_plugin_finish`'s type.
pub type FinishFn = unsafe extern "C" fn();

/// The exported symbols, NUL-terminated (for loaders).
pub const SYM_VERSION: &str = "sim_host_plugin_abi_version";
pub const SYM_INIT: &str = "sim_host_plugin_init";
pub const SYM_FINISH: &str = "sim_host_plugin_finish";

/// `enum sim_host_data_type`: the numbering of `arp_data_type` (ARP manual
/// 6.1.1), also the type code of the data.arp header.
pub mod data_type {
    use core::ffi::c_int;
    pub const CHAR: c_int = 0;
    pub const UCHAR: c_int = 1;
    pub const SHORT: c_int = 2;
    pub const USHORT: c_int = 3;
    pub const INT: c_int = 4;
    pub const UINT: c_int = 5;
    pub const LONG: c_int = 6;
    pub const ULONG: c_int = 7;
    pub const LLONG: c_int = 8;
    pub const ULLONG: c_int = 9;
    pub const FLOAT: c_int = 10;
    pub const DOUBLE: c_int = 11;
    pub const LDOUBLE: c_int = 12;
}

macro_rules! field {
    ($name:ident) => {
        (
            stringify!($name),
            core::mem::offset_of!(HostApi, $name),
            size_of_field(|api: &HostApi| &api.$name),
        )
    };
}

/// Every field of [`HostApi`] with its offset and size, in order: what the
/// header check compiles against.
pub const FIELDS: &[(&str, usize, usize)] = &[
    field!(abi_version),
    field!(size),
    field!(host),
    field!(add_callbacks),
    field!(set_error),
    field!(log),
    field!(clock_hz),
    field!(cycles),
    field!(instructions),
    field!(current_tid),
    field!(read_register),
    field!(read_memory),
];

const fn size_of_field<T>(_: fn(&HostApi) -> &T) -> usize {
    core::mem::size_of::<T>()
}
