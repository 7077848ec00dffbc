//! Whole tasks built from the layers below: one run with its outputs
//! ([`session`], shared by `sim-host run`, suites and the debugger),
//! suites and their cycle gates ([`gate`]), the GDB stub, the guest SDK
//! and project scaffolding.

pub mod diff_source;
pub mod gate;
pub mod gdb;
pub mod scaffold;
pub mod sdk;
pub mod session;
pub mod suite;
