//! The guest program: its ELF (segments, function symbols), and where an
//! address is in the source (DWARF).

pub mod dwarf;
pub mod elf;
pub mod symbols;
