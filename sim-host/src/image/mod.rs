//! The guest program: its ELF (segments, function symbols), the code it
//! needs (build attributes), and where an address is in the source (DWARF).

pub mod attributes;
pub mod dwarf;
pub mod elf;
pub mod symbols;
pub mod tombstones;
