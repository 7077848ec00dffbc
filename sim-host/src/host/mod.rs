//! The services the engine gives a guest, with no emulator of their own:
//! semihosting beneath a sandbox, `simthread.h` threads, the ARP host (the
//! arpsim engine, its counters and section statistics), callback plugins,
//! stop signals and the live status line.

pub mod arp_host;
pub mod counters;
pub mod devices;
pub mod expected;
pub mod mtimer;
pub mod plugin;
pub mod progress;
pub mod sandbox;
pub mod scs;
pub mod semihost;
pub mod signals;
pub mod tasks;
pub mod threads;
pub mod warnings;
