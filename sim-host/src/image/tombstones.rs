//! The debug information of code the linker discarded (issue 39).
//!
//! `--gc-sections` drops the functions nothing calls, but their DWARF
//! stays, its addresses resolved to a "tombstone": lld's default is 0 in
//! `.debug_info` and `.debug_line` (1 in `.debug_ranges` and
//! `.debug_loc`, where 0 would end a list), GNU ld's 0 too. DWARF 5
//! reserves -1 for it, which gimli and addr2line skip; 0 they cannot tell
//! from real code. On a core whose code starts at 0 (the MPS2 and STM32
//! maps) a discarded function "at 0" overlaps live code: a section
//! entered in a Rust guest's `main` was named `main (mul.rs:33)`, a line
//! of compiler-builtins, unless the guest was linked with
//! `-zdead-reloc-in-nonalloc=.debug_*=0xffffffff`.
//!
//! Here the addresses of discarded code are found in the ELF and
//! rewritten, in a copy, to the -1 tombstone, so every reader sees live
//! code only. An address is discarded code when it lies outside every
//! executable segment, or is 0 where no function starts at 0. Rewritten:
//! each line sequence's `DW_LNE_set_address` (a sequence is judged by its
//! first address) and the `DW_AT_low_pc` (form `DW_FORM_addr`) of every
//! entry that has a `DW_AT_high_pc` (units, functions, inlined copies,
//! lexical blocks). A unit's `DW_AT_low_pc` beside `DW_AT_ranges` is the
//! base of its range list, and stays. Range lists themselves need nothing:
//! lld's 1 makes a discarded range empty, and a unit found through a
//! discarded range then has no function and no line there, so addr2line
//! looks at the next unit.

use gimli::{EndianSlice, Reader as _, RunTimeEndian, Section as _};
use goblin::elf::Elf;
use std::ops::Range;

type Reader<'a> = EndianSlice<'a, RunTimeEndian>;

/// Where live code can be: the executable segments, and whether a
/// function starts at address 0.
#[derive(Debug, Clone)]
pub struct LiveCode {
    executable: Vec<Range<u64>>,
    function_at_zero: bool,
}

impl LiveCode {
    pub fn of(elf: &Elf<'_>) -> LiveCode {
        let executable = elf
            .program_headers
            .iter()
            .filter(|p| p.p_type == goblin::elf::program_header::PT_LOAD && p.is_executable())
            .map(|p| p.p_vaddr..p.p_vaddr.saturating_add(p.p_memsz))
            .filter(|r| !r.is_empty())
            .collect();
        let function_at_zero = elf.syms.iter().any(|s| {
            s.st_type() == goblin::elf::sym::STT_FUNC && s.st_shndx != 0 && s.st_value & !1 == 0
        });
        LiveCode {
            executable,
            function_at_zero,
        }
    }

    /// Whether `addr` is where the linker left discarded code. An ELF
    /// without executable segments (nothing to judge by) has none.
    pub fn is_discarded(&self, addr: u64) -> bool {
        if self.executable.is_empty() {
            return false;
        }
        (addr == 0 && !self.function_at_zero) || !self.executable.iter().any(|r| r.contains(&addr))
    }
}

/// Bytes of the ELF file to overwrite with the -1 tombstone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Patch {
    pub offset: usize,
    pub size: usize,
}

/// Writes the -1 tombstone (all ones) over each patch of `file`.
pub fn apply(file: &mut [u8], patches: &[Patch]) {
    for p in patches {
        if let Some(bytes) = file.get_mut(p.offset..p.offset + p.size) {
            bytes.fill(0xff);
        }
    }
}

/// The addresses of discarded code in `dwarf`, whose sections are slices
/// of `file`: where they are in the file. A unit whose DWARF this cannot
/// walk is left as it is (its readers report what they find wrong).
pub fn discarded(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    file: Reader<'_>,
    live: &LiveCode,
) -> Vec<Patch> {
    let mut patches = Vec::new();
    let mut headers = dwarf.units();
    let mut programs_seen = std::collections::HashSet::new();
    while let Ok(Some(header)) = headers.next() {
        let Ok(unit) = dwarf.unit(header) else {
            continue;
        };
        if let Some(program) = &unit.line_program {
            let start = program.header().raw_program_buf().offset_from(file);
            if programs_seen.insert(start) {
                let _ = line_sequences(program.header(), file, live, &mut patches);
            }
        }
        let _ = ranged_entries(&unit, file, dwarf, live, &mut patches);
    }
    patches
}

/// The `DW_LNE_set_address` operands of each discarded sequence of one
/// line program. The opcodes are walked here rather than run by gimli,
/// which does not tell where an operand is.
fn line_sequences(
    header: &gimli::LineProgramHeader<Reader<'_>>,
    file: Reader<'_>,
    live: &LiveCode,
    out: &mut Vec<Patch>,
) -> gimli::Result<()> {
    let mut program = header.raw_program_buf();
    let opcode_base = header.opcode_base();
    let lengths = header.standard_opcode_lengths().to_slice()?;
    let mut addresses: Vec<Patch> = Vec::new();
    let mut first: Option<u64> = None;
    while !program.is_empty() {
        let opcode = program.read_u8()?;
        if opcode == 0 {
            let length = program.read_uleb128()?;
            let mut extended = program.split(length as usize)?;
            let sub = gimli::DwLne(extended.read_u8()?);
            if sub == gimli::DW_LNE_set_address {
                let at = extended.offset_from(file);
                let size = extended.len();
                let address = extended.read_address(size as u8)?;
                first.get_or_insert(address);
                addresses.push(Patch { offset: at, size });
            } else if sub == gimli::DW_LNE_end_sequence {
                if first.is_some_and(|a| live.is_discarded(a)) {
                    out.append(&mut addresses);
                }
                addresses.clear();
                first = None;
            }
        } else if opcode < opcode_base {
            if gimli::DwLns(opcode) == gimli::DW_LNS_fixed_advance_pc {
                // its operand is a uhalf, whatever the lengths table says
                program.skip(2)?;
            } else {
                let operands = lengths.get(usize::from(opcode) - 1).copied().unwrap_or(0);
                for _ in 0..operands {
                    program.skip_leb128()?;
                }
            }
        }
    }
    Ok(())
}

/// The `DW_AT_low_pc` of each entry of `unit` with a `DW_AT_high_pc`
/// whose address is discarded code.
fn ranged_entries(
    unit: &gimli::Unit<Reader<'_>>,
    file: Reader<'_>,
    dwarf: &gimli::Dwarf<Reader<'_>>,
    live: &LiveCode,
    out: &mut Vec<Patch>,
) -> gimli::Result<()> {
    let Some(info_offset) = unit.header.offset().as_debug_info_offset() else {
        return Ok(());
    };
    let unit_start = dwarf.debug_info.reader().offset_from(file) + info_offset.0;
    let size = usize::from(unit.header.address_size());
    let mut entries = unit.entries_raw(None)?;
    while !entries.is_empty() {
        let Some(abbrev) = entries.read_abbreviation()? else {
            continue;
        };
        let mut low_pc = None;
        let mut ranged = false;
        for spec in abbrev.attributes() {
            let at = entries.next_offset().0;
            let attr = entries.read_attribute(*spec)?;
            match (attr.name(), attr.value()) {
                (gimli::DW_AT_low_pc, gimli::AttributeValue::Addr(a))
                    if spec.form() == gimli::DW_FORM_addr =>
                {
                    low_pc = Some((at, a));
                }
                (gimli::DW_AT_high_pc, _) => ranged = true,
                _ => {}
            }
        }
        if let (Some((at, address)), true) = (low_pc, ranged) {
            if live.is_discarded(address) {
                out.push(Patch {
                    offset: unit_start + at,
                    size,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_function_at_zero_keeps_what_is_there() {
        let live = LiveCode {
            executable: std::iter::once(0..0x1000).collect(),
            function_at_zero: true,
        };
        assert!(!live.is_discarded(0));
        assert!(live.is_discarded(0x1000));
    }

    #[test]
    fn discarded_code_is_at_zero_or_outside_the_code() {
        let live = |executable, function_at_zero| LiveCode {
            executable,
            function_at_zero,
        };
        // MPS2: code from 0, the vector table (data) at 0
        let mps2 = live(std::iter::once(0..0x1000).collect(), false);
        assert!(mps2.is_discarded(0));
        assert!(!mps2.is_discarded(0x400));
        assert!(mps2.is_discarded(0x1000));
        assert!(mps2.is_discarded(0xffff_fffe));
        // RP2040: code from 0x10000000, nothing at 0
        let rp = live(std::iter::once(0x1000_0000..0x1000_8000).collect(), false);
        assert!(rp.is_discarded(0) && rp.is_discarded(1));
        assert!(!rp.is_discarded(0x1000_0100));
        // nothing to judge by: nothing is discarded
        assert!(!live(vec![], false).is_discarded(0));
    }

    #[test]
    fn patches_write_the_tombstone_inside_the_file_only() {
        let mut file = vec![0u8; 8];
        apply(
            &mut file,
            &[Patch { offset: 2, size: 4 }, Patch { offset: 6, size: 4 }],
        );
        assert_eq!(file, [0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0]);
    }
}
