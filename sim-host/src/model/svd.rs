//! A CMSIS-SVD file (`--svd FILE`, read with the rust-embedded
//! `svd-parser` crate, arrays expanded and `derivedFrom` resolved) as the
//! peripheral ranges and register names of `model::peripherals`.
//!
//! Nesting and expanded size are bounded before svd-parser runs
//! (`prescan`) and before anything is expanded (`expansion`): see
//! ARCHITECTURE.md, "Caps".

mod expansion;
mod prescan;

use super::peripherals::{MappedPeripheral, RegisterName};
use std::path::Path;
use svd_parser::svd::{Peripheral, RegisterCluster};

/// An SVD file that cannot be used, with the parser's account (which
/// names the element and its line and column).
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SvdError {
    pub path: String,
    pub message: String,
}

/// Registers a peripheral's registers default to when neither the
/// register nor the peripheral or device says (SVD's own default, 32).
const DEFAULT_REGISTER_BITS: u32 = 32;

/// The peripherals of the SVD file at `path`.
pub fn load(path: &Path) -> Result<Vec<MappedPeripheral>, SvdError> {
    let error = |message: String| SvdError {
        path: path.display().to_string(),
        message,
    };
    let xml = arpsim::input::read_to_string(path, crate::model::limits::MAX_SVD_BYTES)
        .map_err(|e| error(e.to_string()))?;
    prescan::check(&xml).map_err(error)?;
    // expanded here, once the expansion is known to be bounded
    let config = svd_parser::Config::default()
        .expand(false)
        .expand_properties(true)
        .ignore_enums(true);
    let device =
        svd_parser::parse_with_config(&xml, &config).map_err(|e| error(format!("{e:#}")))?;
    drop(xml);
    let device = expansion::expand(device).map_err(error)?;
    let source = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let peripherals: Vec<MappedPeripheral> = device
        .peripherals
        .iter()
        .map(|p| mapped(p, &source))
        .collect();
    if peripherals.is_empty() {
        return Err(error("the device lists no peripheral".into()));
    }
    Ok(peripherals)
}

fn mapped(p: &Peripheral, source: &str) -> MappedPeripheral {
    let mut registers = Vec::new();
    if let Some(list) = &p.registers {
        walk(list, 0, "", &mut registers);
    }
    registers.sort_by_key(|r| r.offset);
    let start = p.base_address;
    let blocks = p.address_block.as_deref().unwrap_or_default();
    let block_end = blocks
        .iter()
        .map(|b| u64::from(b.offset) + u64::from(b.size))
        .max();
    let register_end = registers.iter().map(|r| r.offset + r.size).max();
    let size = block_end.or(register_end).unwrap_or(4).max(1);
    MappedPeripheral {
        name: p.name.clone(),
        start,
        end: start.saturating_add(size).min(1 << 32),
        source: source.to_owned(),
        registers,
    }
}

/// The registers of `list` at `base` within their peripheral, clusters
/// flattened (`CLUSTER.REG` names).
fn walk(list: &[RegisterCluster], base: u64, prefix: &str, out: &mut Vec<RegisterName>) {
    for item in list {
        match item {
            RegisterCluster::Register(r) => {
                let bits = r.properties.size.unwrap_or(DEFAULT_REGISTER_BITS);
                out.push(RegisterName {
                    offset: base + u64::from(r.address_offset),
                    size: u64::from(bits.div_ceil(8)).max(1),
                    name: format!("{prefix}{}", r.name),
                });
            }
            RegisterCluster::Cluster(c) => {
                let prefix = format!("{prefix}{}.", c.name);
                walk(
                    &c.children,
                    base + u64::from(c.address_offset),
                    &prefix,
                    out,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SVD: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<device schemaVersion="1.3">
  <name>BOARD</name>
  <version>1.0</version>
  <description>test</description>
  <addressUnitBits>8</addressUnitBits>
  <width>32</width>
  <size>32</size>
  <peripherals>
    <peripheral>
      <name>UART0</name>
      <baseAddress>0x40004000</baseAddress>
      <addressBlock><offset>0</offset><size>0x1000</size><usage>registers</usage></addressBlock>
      <registers>
        <register><name>DATA</name><addressOffset>0x0</addressOffset></register>
        <register><name>STATE</name><addressOffset>0x4</addressOffset></register>
        <cluster>
          <name>DMA</name>
          <addressOffset>0x100</addressOffset>
          <register><name>CTRL</name><addressOffset>0x8</addressOffset></register>
        </cluster>
      </registers>
    </peripheral>
    <peripheral derivedFrom="UART0">
      <name>UART1</name>
      <baseAddress>0x40005000</baseAddress>
    </peripheral>
  </peripherals>
</device>"#;

    fn load_text(text: &str) -> Result<Vec<MappedPeripheral>, SvdError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("board.svd");
        std::fs::write(&path, text).unwrap();
        load(&path)
    }

    #[test]
    fn peripherals_registers_clusters_and_derived_ones() {
        let ps = load_text(SVD).unwrap();
        assert_eq!(ps.len(), 2);
        assert_eq!((ps[0].start, ps[0].end), (0x4000_4000, 0x4000_5000));
        let names: Vec<(&str, u64)> = ps[0]
            .registers
            .iter()
            .map(|r| (r.name.as_str(), r.offset))
            .collect();
        // svd-parser's expansion names a cluster's registers CLUSTER_REG
        assert_eq!(names, [("DATA", 0), ("STATE", 4), ("DMA_CTRL", 0x108)]);
        assert_eq!(ps[1].name, "UART1");
        assert_eq!(ps[1].registers.len(), 3, "derived from UART0");
        assert_eq!(ps[1].source, "board.svd");
    }

    /// svd-parser's own expansion, fields and all, as `load` ran it
    /// before the caps: the registers `load` finds must be the same.
    fn unbounded_load(text: &str) -> Vec<MappedPeripheral> {
        let config = svd_parser::Config::default()
            .expand(true)
            .expand_properties(true)
            .ignore_enums(true);
        let device = svd_parser::parse_with_config(text, &config).unwrap();
        device.peripherals.iter().map(|p| mapped(p, "x")).collect()
    }

    /// Each peripheral's range and registers, one line each.
    fn registers_of(ps: &[MappedPeripheral]) -> Vec<String> {
        let mut lines = Vec::new();
        for p in ps {
            lines.push(format!("{} {:#x}..{:#x}", p.name, p.start, p.end));
            for r in &p.registers {
                lines.push(format!("  {} {:#x} {}", r.name, r.offset, r.size));
            }
        }
        lines
    }

    /// Arrays of peripherals, clusters and registers, registers and
    /// clusters derived from others, fields: the bounded expansion finds
    /// what svd-parser's own does. `SVD_FILE` names another file to compare
    /// (a vendor's SVD).
    #[test]
    fn the_bounded_expansion_finds_what_svd_parsers_own_finds() {
        let arrays = SVD.replace(
            "<register><name>STATE</name><addressOffset>0x4</addressOffset></register>",
            "<register><name>STATE</name><addressOffset>0x4</addressOffset>\
             <fields><field><name>F</name><bitOffset>0</bitOffset><bitWidth>1</bitWidth>\
             </field></fields></register>\
             <register><dim>4</dim><dimIncrement>4</dimIncrement><name>ARR%s</name>\
             <addressOffset>0x10</addressOffset></register>\
             <register derivedFrom=\"STATE\"><name>COPY</name><addressOffset>0x20</addressOffset>\
             </register>\
             <cluster><dim>2</dim><dimIncrement>0x40</dimIncrement><name>CH%s</name>\
             <addressOffset>0x200</addressOffset>\
             <register><name>X</name><addressOffset>0</addressOffset><size>16</size></register>\
             </cluster>\
             <cluster derivedFrom=\"UART0.DMA\"><name>DMA2</name><addressOffset>0x300</addressOffset>\
             </cluster>",
        );
        let ps = load_text(&arrays).unwrap();
        assert_eq!(registers_of(&ps), registers_of(&unbounded_load(&arrays)));
        let names: Vec<&str> = ps[0].registers.iter().map(|r| r.name.as_str()).collect();
        assert!(
            names.contains(&"ARR3") && names.contains(&"CH1_X"),
            "{names:?}"
        );
        assert!(
            names.contains(&"COPY") && names.contains(&"DMA2_CTRL"),
            "{names:?}"
        );
        if let Ok(path) = std::env::var("SVD_FILE") {
            let text = std::fs::read_to_string(&path).unwrap();
            let ps = load(Path::new(&path)).unwrap();
            let registers: usize = ps.iter().map(|p| p.registers.len()).sum();
            eprintln!("{path}: {} peripherals, {registers} registers", ps.len());
            assert_eq!(registers_of(&ps), registers_of(&unbounded_load(&text)));
        }
    }

    #[test]
    fn a_broken_file_is_named_with_the_place() {
        let bad = SVD.replace(
            "<baseAddress>0x40004000</baseAddress>",
            "<baseAddress>zz</baseAddress>",
        );
        let e = load_text(&bad).unwrap_err().to_string();
        assert!(e.contains("board.svd"), "{e}");
        assert!(e.contains("UART0"), "{e}");
        let e = load_text("<device>").unwrap_err().to_string();
        assert!(e.contains("board.svd:"), "{e}");
    }
}
