//! Source positions from DWARF: inlined frames per address (addr2line),
//! `DW_TAG_label`s with their addresses and `DW_TAG_subprogram` declaration
//! lines (gimli). A file without `.debug_info` has no [`DebugInfo`].
//!
//! The DWARF read is that of the live code only: the addresses the linker
//! left for discarded functions are first rewritten to DWARF's tombstone
//! in a copy of the file (`image::tombstones`).

use crate::image::tombstones::{self, LiveCode};
use gimli::{EndianArcSlice, EndianSlice, Reader as _, RunTimeEndian};
use goblin::elf::Elf;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;

/// Why the debug information could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DwarfError {
    #[error("cannot read the ELF: {0}")]
    Elf(String),
    #[error("cannot read the DWARF debug information: {0}")]
    Dwarf(String),
}

/// The DWARF's reader: slices of the file's copy with the discarded
/// code's addresses buried.
type Reader = EndianArcSlice<RunTimeEndian>;

/// One frame of the inlining chain at an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub function: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
}

/// A `DW_TAG_label` with an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub name: String,
    pub addr: u64,
}

/// The debug information of one ELF.
pub struct DebugInfo<'a> {
    ctx: addr2line::Context<Reader>,
    pub labels: Vec<Label>,
    /// `DW_AT_decl_line` of subprograms by their low address.
    pub decl_lines: HashMap<u64, u32>,
    /// How many addresses of discarded code were buried.
    pub discarded: usize,
    file: PhantomData<&'a [u8]>,
}

impl std::fmt::Debug for DebugInfo<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DebugInfo")
            .field("labels", &self.labels)
            .finish_non_exhaustive()
    }
}

fn dwarf_error(e: impl std::fmt::Display) -> DwarfError {
    DwarfError::Dwarf(e.to_string())
}

impl<'a> DebugInfo<'a> {
    /// Reads the DWARF sections of `bytes`; `Ok(None)` when there are none.
    pub fn load(bytes: &'a [u8]) -> Result<Option<DebugInfo<'a>>, DwarfError> {
        let Some(found) = sections_of(bytes)? else {
            return Ok(None);
        };
        let (elf, sections, endian) = (found.elf, found.ranges, found.endian);
        let live = LiveCode::of(&elf);
        let original = found.dwarf;
        let patches = tombstones::discarded(&original, EndianSlice::new(bytes, endian), &live);
        let mut copy = bytes.to_vec();
        tombstones::apply(&mut copy, &patches);
        let file = EndianArcSlice::new(Arc::from(copy), endian);
        let dwarf = gimli::Dwarf::load(|id| -> Result<Reader, gimli::Error> {
            Ok(file.range(sections.get(id.name()).cloned().unwrap_or(0..0)))
        })
        .map_err(dwarf_error)?;
        let (mut labels, mut decl_lines) = labels_and_subprograms(&dwarf)?;
        labels.retain(|l| !live.is_discarded(l.addr));
        decl_lines.retain(|addr, _| !live.is_discarded(*addr));
        let ctx = addr2line::Context::from_dwarf(dwarf).map_err(dwarf_error)?;
        Ok(Some(DebugInfo {
            ctx,
            labels,
            decl_lines,
            discarded: patches.len(),
            file: PhantomData,
        }))
    }

    /// The inlining chain at `addr`, innermost first; empty without line
    /// information there.
    pub fn frames(&self, addr: u64) -> Vec<Frame> {
        let mut out = Vec::new();
        let Ok(mut iter) = self.ctx.find_frames(addr).skip_all_loads() else {
            return out;
        };
        while let Ok(Some(frame)) = iter.next() {
            let function = frame
                .function
                .as_ref()
                .and_then(|f| f.raw_name().ok())
                .map(|n| n.into_owned());
            let (file, line) = frame
                .location
                .as_ref()
                .map_or((None, None), |l| (l.file.map(str::to_owned), l.line));
            out.push(Frame {
                function,
                file,
                line,
            });
            if out.len() > 64 {
                break;
            }
        }
        out
    }
}

/// An ELF's DWARF as the file has it, and where its sections are.
struct Sections<'a> {
    elf: Elf<'a>,
    ranges: HashMap<String, Range<usize>>,
    endian: RunTimeEndian,
    dwarf: gimli::Dwarf<EndianSlice<'a, RunTimeEndian>>,
}

/// The DWARF of the ELF `bytes`; `Ok(None)` when it has none.
fn sections_of(bytes: &[u8]) -> Result<Option<Sections<'_>>, DwarfError> {
    let elf = Elf::parse(bytes)
        .map_err(|e| DwarfError::Elf(crate::image::elf::parse_failure(&e, bytes.len())))?;
    let ranges = section_ranges(&elf, bytes.len())?;
    if !ranges.contains_key(".debug_info") {
        return Ok(None);
    }
    let endian = if elf.little_endian {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let dwarf = gimli::Dwarf::load(|id| -> Result<_, gimli::Error> {
        let range = ranges.get(id.name()).cloned().unwrap_or(0..0);
        Ok(EndianSlice::new(&bytes[range], endian))
    })
    .map_err(dwarf_error)?;
    Ok(Some(Sections {
        elf,
        ranges,
        endian,
        dwarf,
    }))
}

/// The DWARF sections of the ELF `bytes` as they are (no tombstones
/// rewritten: for readers of types, not of addresses); `Ok(None)` when it
/// has none.
pub(crate) fn load_dwarf(
    bytes: &[u8],
) -> Result<Option<gimli::Dwarf<EndianSlice<'_, RunTimeEndian>>>, DwarfError> {
    Ok(sections_of(bytes)?.map(|s| s.dwarf))
}

/// Where each section with contents is in a file of `len` bytes.
fn section_ranges(elf: &Elf<'_>, len: usize) -> Result<HashMap<String, Range<usize>>, DwarfError> {
    let mut sections = HashMap::new();
    for sh in &elf.section_headers {
        let Some(name) = elf.shdr_strtab.get_at(sh.sh_name) else {
            continue;
        };
        if sh.sh_type == goblin::elf::section_header::SHT_NOBITS {
            continue;
        }
        let start = sh.sh_offset as usize;
        let Some(end) = start.checked_add(sh.sh_size as usize).filter(|&e| e <= len) else {
            return Err(DwarfError::Elf(format!(
                "section {name} runs past the end of the file"
            )));
        };
        sections.insert(name.to_string(), start..end);
    }
    Ok(sections)
}

type LabelsAndLines = (Vec<Label>, HashMap<u64, u32>);

/// The name of `entry`: its own, or (a label of an inlined copy of a
/// function) that of its abstract origin in the same unit.
fn entry_name(
    dwarf: &gimli::Dwarf<Reader>,
    unit: &gimli::Unit<Reader>,
    entry: &gimli::DebuggingInformationEntry<Reader>,
) -> Result<Option<String>, DwarfError> {
    let string = |v| {
        dwarf
            .attr_string(unit, v)
            .ok()
            .and_then(|s| Some(s.to_string_lossy().ok()?.into_owned()))
    };
    if let Some(v) = entry.attr_value(gimli::DW_AT_name).map_err(dwarf_error)? {
        return Ok(string(v));
    }
    let Some(gimli::AttributeValue::UnitRef(origin)) = entry
        .attr_value(gimli::DW_AT_abstract_origin)
        .map_err(dwarf_error)?
    else {
        return Ok(None);
    };
    let origin = unit.entry(origin).map_err(dwarf_error)?;
    Ok(origin
        .attr_value(gimli::DW_AT_name)
        .map_err(dwarf_error)?
        .and_then(string))
}

fn labels_and_subprograms(dwarf: &gimli::Dwarf<Reader>) -> Result<LabelsAndLines, DwarfError> {
    let mut labels = Vec::new();
    let mut decl_lines = HashMap::new();
    let mut headers = dwarf.units();
    while let Some(header) = headers.next().map_err(dwarf_error)? {
        let unit = dwarf.unit(header).map_err(dwarf_error)?;
        let mut entries = unit.entries();
        while let Some((_, entry)) = entries.next_dfs().map_err(dwarf_error)? {
            let tag = entry.tag();
            if tag != gimli::DW_TAG_label && tag != gimli::DW_TAG_subprogram {
                continue;
            }
            let low_pc = match entry.attr_value(gimli::DW_AT_low_pc).map_err(dwarf_error)? {
                Some(v) => dwarf.attr_address(&unit, v).map_err(dwarf_error)?,
                None => None,
            };
            let Some(low_pc) = low_pc else {
                continue;
            };
            if tag == gimli::DW_TAG_label {
                if let Some(name) = entry_name(dwarf, &unit, entry)? {
                    labels.push(Label { name, addr: low_pc });
                }
            } else if let Some(line) = entry
                .attr_value(gimli::DW_AT_decl_line)
                .map_err(dwarf_error)?
                .and_then(|v| v.udata_value())
            {
                decl_lines.insert(low_pc, line as u32);
            }
        }
    }
    labels.sort_by_key(|l| l.addr);
    Ok((labels, decl_lines))
}

#[cfg(test)]
mod tests;
