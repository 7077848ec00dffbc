//! The discarded code's DWARF on a made-up ELF: one executable segment
//! from 0 (as on the MPS2 maps), a live function `live` at 0x400..0x500
//! in unit `live.rs`, and what `--gc-sections` with lld leaves of two
//! discarded functions: unit `dead.rs` whose only function `dead_fn` is
//! "at" 0..0x480 (its unit's range ends inside `live`, so addr2line's
//! unit search meets it first for an address of `live` before 0x480), and
//! in `live.rs` itself a function `dead_in_live` and its line sequence at
//! 0..0x480.

use super::{DebugInfo, Frame};
use gimli::write::{
    Address, AttributeValue, Dwarf, EndianVec, LineProgram, LineString, Range, RangeList, Sections,
    Unit,
};
use gimli::{Encoding, Format, LineEncoding, LittleEndian};
use gimli::{EndianSlice, RunTimeEndian};
use goblin::elf::Elf;

const ENCODING: Encoding = Encoding {
    format: Format::Dwarf32,
    version: 4,
    address_size: 4,
};

/// A unit of `file` with functions (name, start, size, line; start 0 for
/// a discarded one) and one line sequence per function, each row one line
/// on from the last every 0x40 bytes.
fn unit(file: &str, functions: &[(&str, u64, u64, u64)]) -> Unit {
    let dir = LineString::String(b"/src".to_vec());
    let name = LineString::String(file.as_bytes().to_vec());
    let mut program = LineProgram::new(
        ENCODING,
        LineEncoding::default(),
        dir,
        None,
        name.clone(),
        None,
    );
    let directory = program.default_directory();
    let file_id = program.add_file(name, directory, None);
    for &(_, start, size, line) in functions {
        program.begin_sequence(Some(Address::Constant(start)));
        for (i, offset) in (0..size).step_by(0x40).enumerate() {
            let row = program.row();
            row.file = file_id;
            row.line = line + i as u64;
            row.address_offset = offset;
            program.generate_row();
        }
        program.end_sequence(size);
    }
    let mut unit = Unit::new(ENCODING, program);
    let root = unit.root();
    let cu = unit.get_mut(root);
    cu.set(
        gimli::DW_AT_name,
        AttributeValue::String(file.as_bytes().to_vec()),
    );
    cu.set(
        gimli::DW_AT_low_pc,
        AttributeValue::Address(Address::Constant(0)),
    );
    if let [(_, _, size, _)] = functions {
        // one function: the unit's range is its range, "at" 0 if discarded
        cu.set(gimli::DW_AT_high_pc, AttributeValue::Udata(*size));
    } else {
        // several: a range list from base 0 of the live ones (lld writes
        // (1, 1) for a discarded one, an empty range every reader skips)
        let ranges = functions
            .iter()
            .filter(|f| f.1 != 0)
            .map(|&(_, start, size, _)| Range::OffsetPair {
                begin: start,
                end: start + size,
            })
            .collect();
        let id = unit.ranges.add(RangeList(ranges));
        let cu = unit.get_mut(root);
        cu.set(gimli::DW_AT_ranges, AttributeValue::RangeListRef(id));
    }
    for &(function, start, size, line) in functions {
        let id = unit.add(root, gimli::DW_TAG_subprogram);
        let entry = unit.get_mut(id);
        entry.set(
            gimli::DW_AT_name,
            AttributeValue::String(function.as_bytes().to_vec()),
        );
        entry.set(
            gimli::DW_AT_low_pc,
            AttributeValue::Address(Address::Constant(start)),
        );
        entry.set(gimli::DW_AT_high_pc, AttributeValue::Udata(size));
        entry.set(gimli::DW_AT_decl_line, AttributeValue::Udata(line));
    }
    unit
}

/// The DWARF sections of the two units.
fn debug_sections() -> Vec<(&'static str, Vec<u8>)> {
    let mut dwarf = Dwarf::new();
    dwarf
        .units
        .add(unit("dead.rs", &[("dead_fn", 0, 0x480, 33)]));
    dwarf.units.add(unit(
        "live.rs",
        &[("dead_in_live", 0, 0x480, 90), ("live", 0x400, 0x100, 10)],
    ));
    let mut sections = Sections::new(EndianVec::new(LittleEndian));
    dwarf.write(&mut sections).unwrap();
    let mut out = Vec::new();
    sections
        .for_each(|id, data| -> Result<(), ()> {
            if !data.slice().is_empty() {
                out.push((id.name(), data.slice().to_vec()));
            }
            Ok(())
        })
        .unwrap();
    out
}

fn u16s(out: &mut Vec<u8>, values: &[u16]) {
    values.iter().for_each(|v| out.extend(v.to_le_bytes()));
}

fn u32s(out: &mut Vec<u8>, values: &[u32]) {
    values.iter().for_each(|v| out.extend(v.to_le_bytes()));
}

/// A little-endian 32-bit ARM executable: the ELF header, one loadable
/// executable segment 0..0x2000 (no file bytes), the `sections`, a
/// symbol table holding the function `live` (0x400, 0x100 bytes) and the
/// section names.
fn elf(mut sections: Vec<(&'static str, Vec<u8>)>) -> Vec<u8> {
    let mut symtab = vec![0u8; 16];
    u32s(&mut symtab, &[1, 0x400, 0x100]);
    symtab.extend([0x12, 0]); // STB_GLOBAL, STT_FUNC
    u16s(&mut symtab, &[0xfff1]); // SHN_ABS
    sections.push((".symtab", symtab));
    sections.push((".strtab", b"\0live\0".to_vec()));
    let mut names = b"\0".to_vec();
    let mut name_offsets = Vec::new();
    for (name, _) in sections.iter().chain([&(".shstrtab", Vec::new())]) {
        name_offsets.push(names.len() as u32);
        names.extend(name.as_bytes());
        names.push(0);
    }
    sections.push((".shstrtab", names));
    let mut data: Vec<u8> = Vec::new();
    let mut placed = Vec::new();
    for (_, bytes) in &sections {
        placed.push((52 + 32 + data.len()) as u32);
        data.extend(bytes);
    }
    let shoff = (52 + 32 + data.len()) as u32;
    let count = sections.len() as u16 + 1;
    let mut out = b"\x7fELF\x01\x01\x01".to_vec();
    out.resize(16, 0);
    u16s(&mut out, &[2, 40]); // ET_EXEC, EM_ARM
    u32s(&mut out, &[1, 0x400, 52, shoff, 0x0500_0000]);
    u16s(&mut out, &[52, 32, 1, 40, count, count - 1]);
    // PT_LOAD, offset, vaddr, paddr, filesz, memsz, PF_R | PF_X, align
    u32s(&mut out, &[1, 0, 0, 0, 0, 0x2000, 5, 0x1000]);
    out.extend(data);
    out.extend([0u8; 40]);
    let symtab_index = sections.iter().position(|s| s.0 == ".symtab").unwrap() as u32 + 1;
    for (i, (name, bytes)) in sections.iter().enumerate() {
        let (kind, link, info, entsize) = match *name {
            ".symtab" => (2, symtab_index + 1, 1, 16),
            ".strtab" | ".shstrtab" => (3, 0, 0, 0),
            _ => (1, 0, 0, 0),
        };
        let header = [
            name_offsets[i],
            kind,
            0,
            0,
            placed[i],
            bytes.len() as u32,
            link,
            info,
            1,
            entsize,
        ];
        u32s(&mut out, &header);
    }
    out
}

fn frame(function: &str, line: u32) -> Frame {
    Frame {
        function: Some(function.to_owned()),
        file: Some("live.rs".to_owned()),
        line: Some(line),
    }
}

#[test]
fn the_fixture_misnames_live_code_without_the_tombstones() {
    // what addr2line made of it before: the discarded unit's function
    let bytes = elf(debug_sections());
    let file = EndianSlice::new(&bytes[..], RunTimeEndian::Little);
    let elf = Elf::parse(&bytes).unwrap();
    let dwarf = gimli::Dwarf::load(|id| -> gimli::Result<_> {
        let section = elf
            .section_headers
            .iter()
            .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(id.name()));
        Ok(
            section.map_or(EndianSlice::new(&[], RunTimeEndian::Little), |s| {
                file.range(s.sh_offset as usize..(s.sh_offset + s.sh_size) as usize)
            }),
        )
    })
    .unwrap();
    let ctx = addr2line::Context::from_dwarf(dwarf).unwrap();
    let mut frames = ctx.find_frames(0x440).skip_all_loads().unwrap();
    let first = frames.next().unwrap().unwrap();
    let name = first.function.unwrap().raw_name().unwrap().into_owned();
    assert_eq!(name, "dead_fn");
}

#[test]
fn discarded_code_is_buried_and_live_code_named() {
    let bytes = elf(debug_sections());
    let debug = DebugInfo::load(&bytes).unwrap().unwrap();
    // dead.rs: the unit's and dead_fn's low_pc, its sequence's address;
    // live.rs: dead_in_live's low_pc and its sequence's address
    assert_eq!(debug.discarded, 5);
    assert_eq!(debug.frames(0x400), [frame("live", 10)]);
    assert_eq!(debug.frames(0x440), [frame("live", 11)]);
    assert_eq!(debug.frames(0x4c0), [frame("live", 13)]);
    // nothing is left at 0 or in the discarded ranges outside the code
    assert_eq!(debug.frames(0), []);
    assert_eq!(debug.frames(0x200), []);
    assert_eq!(debug.decl_lines.get(&0x400), Some(&10));
    assert_eq!(debug.decl_lines.len(), 1, "{:?}", debug.decl_lines);
}
