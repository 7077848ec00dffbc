//! The guest program: its ELF (segments, function symbols), the code it
//! needs (build attributes), the section names it gives itself
//! (`.arp_names`), and where an address is in the source (DWARF).

pub mod arp_names;
pub mod attributes;
pub mod dwarf;
pub mod elf;
pub mod rtos;
pub mod symbols;
pub mod tombstones;
