//! sim-host: runs ARP-instrumented guest ELFs under Unicorn, prices every
//! executed block with a per-core cycle model, and records the costs of ARP
//! sections with the arpsim engine on the host.
//!
//! See ARCHITECTURE.md for the code map and the invariants of each module.

pub mod arp_host;
pub mod callgrind;
pub mod cycles;
pub mod decode;
pub mod elf;
pub mod machine;
pub mod plugin;
pub mod profile;
pub mod report;
pub mod semihost;
pub mod sirgen;
pub mod suite;
pub mod target;
pub mod threads;
pub mod trace_events;
pub mod verify;
