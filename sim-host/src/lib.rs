//! sim-host: runs ARP-instrumented guest ELFs under Unicorn, prices every
//! executed block with a per-core cycle model, and records the costs of ARP
//! sections with the arpsim engine on the host.
//!
//! The library is in layers, each a folder, bottom to top (ARCHITECTURE.md,
//! "Layers"; `tidy/tests/layers.rs` keeps every arrow pointing down):
//!
//! - [`model`]: what a core is and costs: target descriptions, decoding,
//!   pricing, exit statuses; pure, no emulator;
//! - [`image`]: the guest program: ELF segments, symbols, DWARF;
//! - [`host`]: the services the engine gives a guest: semihosting and its
//!   sandbox, threads, the ARP host and its plugins, signals, progress;
//! - [`engine`]: Unicorn and the run: memory, pricing blocks, interception,
//!   scheduling, stops, the debugger's handle;
//! - [`observe`]: what is made of a run: reports, profiles, callgrind, trace
//!   events, SIR, plots, playback findings;
//! - [`tools`]: whole tasks: a run with its outputs ([`tools::session`]),
//!   suites, the GDB stub, the SDK and project scaffolding.
//!
//! The binary's `cli` is the thin layer on top: arguments and printing.

/// A line on standard error that never panics: when stderr is a closed
/// pipe (`2>&1 | head -1`) the tool must still finish its work and write
/// its files.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// [`say!`] without the newline.
#[macro_export]
macro_rules! say_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

/// A line on standard output that never panics (`sim-host ... | head`).
#[macro_export]
macro_rules! show {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// [`show!`] without the newline.
#[macro_export]
macro_rules! show_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

pub mod engine;
pub mod host;
pub mod image;
pub mod model;
pub mod observe;
pub mod tools;
