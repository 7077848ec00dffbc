//! sim-host: runs ARP-instrumented guest ELFs under Unicorn, prices every
//! executed block with a per-core cycle model, and records the costs of ARP
//! sections with the arpsim engine on the host.
//!
//! See ARCHITECTURE.md for the code map and the invariants of each module.

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

pub mod arp_host;
pub mod callgrind;
pub mod cycles;
pub mod decode;
pub mod elf;
pub mod gdb;
pub mod machine;
pub mod plugin;
pub mod profile;
pub mod progress;
pub mod report;
pub mod sandbox;
pub mod scaffold;
pub mod sdk;
pub mod section_plot;
pub mod semihost;
pub mod signals;
pub mod sirgen;
pub mod suite;
pub mod symbols;
pub mod target;
pub mod threads;
pub mod trace_events;
pub mod verify;
