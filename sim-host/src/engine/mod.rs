//! The emulated machine: Unicorn with the target's CPU model and memory
//! map, the charge of cached block prices by the translated code or the
//! block hook (ARCHITECTURE.md decision 2), interception of the ARP entry points (decision 1), semihosting,
//! threads, faults and limits; and the debugger's handle on it.
//!
//! The modules, bottom to top (each uses only those before it): `api`
//! (errors, stop reasons, outcome, observers), `blocks` (price cache),
//! `state` (what the hooks share), `registers`, `memory`, `pricing`,
//! `stop` (faults, the outcome), `plugin_guest`, `thread_calls`,
//! `intercept`, `exceptions`, `charge`, `block_hook` and
//! `translation_charge` (the per-block path), `resume` (the one
//! `emu_start`), `debug`, `options`, `schedule` (the slices and their
//! `emu_start`), `setup` (a run from start to end).
//!
//! Invariants:
//! - the engine is never given an instruction count (`emu_start(.., 0)`):
//!   counting instructions would disable block chaining;
//! - a block is decoded and priced once; afterwards its translated code
//!   does a few additions (`translation_charge`, ARCHITECTURE.md decision
//!   2), or its hook a cache lookup and the same additions;
//! - the bodies of intercepted functions never execute and cost nothing:
//!   their block is priced at zero, and either the block hook intercepts an
//!   ARP stub whose first instruction was made a return (`intercept`) or a
//!   code hook on the first instruction returns by writing PC;
//! - no memory hook covers writable RAM on the hot path (`memory`);
//! - the run always ends with a [`Stop`] reason and the counters so far,
//!   whatever the guest does.

mod api;
mod block_hook;
mod blocks;
mod charge;
mod csr;
mod debug;
mod devices;
mod exceptions;
mod flash;
mod fp_context;
mod gpr;
mod intercept;
mod interrupts;
mod l1cache;
mod m_frame;
mod m_mode;
mod machine_timer;
mod memory;
mod mmio;
mod model_hooks;
mod options;
mod peripherals;
mod plugin_guest;
mod pricing;
mod registers;
mod resume;
mod schedule;
mod scs;
mod setup;
mod sleep;
mod state;
mod stop;
mod tasks;
mod thread_calls;
mod trail;
mod translation_charge;
mod traps;
mod xip;

pub use crate::model::xip::run::XipReport;
pub use api::{
    CoreEvents, Counting, ExceptionEvent, ExecutionObserver, Fault, FlashReport, L1CacheReport,
    MachineError, Observer, PeripheralAccesses, RunOutcome, Stop, UnpricedCount, UnpricedStop,
};
pub use debug::{DebugGuest, DebugInterrupt, DebugResume, DebugStop, DebugThread, Debugger, Watch};
pub use options::{ChargePath, PeripheralOptions, RunOptions};
pub use setup::{run, TRANSLATION_BUFFER};
