//! A CMSIS-SVD file (`--svd FILE`, read with the rust-embedded
//! `svd-parser` crate, arrays expanded and `derivedFrom` resolved) as the
//! peripheral ranges, registers, reset values and fields of
//! `model::peripherals`. Reset values are inherited as CMSIS-SVD says
//! (`properties`); one wider than its register is refused, naming the
//! line where the file says so (`prescan`) or else the register.
//!
//! Nesting and expanded size are bounded before svd-parser runs
//! (`prescan`) and before anything is expanded (`expansion`): see
//! ARCHITECTURE.md, "Caps".

mod expansion;
mod prescan;
mod properties;

use super::peripherals::{FieldBits, MappedPeripheral, RegisterName};
use std::path::Path;
use svd_parser::svd::{DeriveFrom, Peripheral, RegisterCluster, RegisterProperties};

/// An SVD file that cannot be used, with the parser's account (which
/// names the element and its line and column).
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SvdError {
    pub path: String,
    pub message: String,
}

/// The peripherals of the SVD file at `path`.
pub fn load(path: &Path) -> Result<Vec<MappedPeripheral>, SvdError> {
    let error = |message: String| SvdError {
        path: path.display().to_string(),
        message,
    };
    let xml = arpsim::input::read_to_string(path, crate::model::limits::MAX_SVD_BYTES)
        .map_err(|e| error(e.to_string()))?;
    prescan::check(&xml).map_err(error)?;
    // expanded here, once the expansion is known to be bounded, and the
    // properties inherited here too (`properties`)
    let config = svd_parser::Config::default()
        .expand(false)
        .expand_properties(false)
        .ignore_enums(true);
    let mut device =
        svd_parser::parse_with_config(&xml, &config).map_err(|e| error(format!("{e:#}")))?;
    drop(xml);
    properties::apply_cluster_defaults(&mut device);
    let device = expansion::expand(device).map_err(error)?;
    let source = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let peripherals: Vec<MappedPeripheral> = device
        .peripherals
        .iter()
        .map(|p| mapped(p, &source, &device.default_register_properties))
        .collect::<Result<_, _>>()
        .map_err(error)?;
    if peripherals.is_empty() {
        return Err(error("the device lists no peripheral".into()));
    }
    Ok(peripherals)
}

/// Peripheral `p` (expanded) with its registers, the properties of `p`
/// and of the device (`device`) inherited.
fn mapped(
    p: &Peripheral,
    source: &str,
    device: &RegisterProperties,
) -> Result<MappedPeripheral, String> {
    let mut registers = Vec::new();
    let inherited = p.default_register_properties.derive_from(device);
    if let Some(list) = &p.registers {
        let place = Place {
            peripheral: &p.name,
            inherited: &inherited,
        };
        walk(list, 0, "", &place, &mut registers)?;
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
    Ok(MappedPeripheral {
        name: p.name.clone(),
        start,
        end: start.saturating_add(size).min(1 << 32),
        source: source.to_owned(),
        registers,
    })
}

/// The peripheral a walk is in and the properties its registers inherit.
struct Place<'a> {
    peripheral: &'a str,
    inherited: &'a RegisterProperties,
}

/// The registers of `list` at `base` within their peripheral, clusters
/// flattened (`CLUSTER.REG` names).
fn walk(
    list: &[RegisterCluster],
    base: u64,
    prefix: &str,
    place: &Place<'_>,
    out: &mut Vec<RegisterName>,
) -> Result<(), String> {
    for item in list {
        match item {
            RegisterCluster::Register(r) => {
                let name = format!("{prefix}{}", r.name);
                let (bits, reset) = properties::reset_of(&r.properties, place.inherited)
                    .map_err(|e| format!("register `{}.{name}`: {e}", place.peripheral))?;
                out.push(RegisterName {
                    offset: base + u64::from(r.address_offset),
                    size: u64::from(bits.div_ceil(8)).max(1),
                    name,
                    reset,
                    fields: r.fields().map(field_bits).collect(),
                });
            }
            RegisterCluster::Cluster(c) => {
                let prefix = format!("{prefix}{}.", c.name);
                let base = base + u64::from(c.address_offset);
                walk(&c.children, base, &prefix, place, out)?;
            }
        }
    }
    Ok(())
}

fn field_bits(f: &svd_parser::svd::Field) -> FieldBits {
    FieldBits {
        name: f.name.clone(),
        lsb: f.bit_range.offset,
        width: f.bit_range.width,
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
        let default = device.default_register_properties;
        let mapped = |p| mapped(p, "x", &default).unwrap();
        device.peripherals.iter().map(mapped).collect()
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

    /// The reset value each register of `p` reads, by name.
    fn resets(p: &MappedPeripheral) -> Vec<(&str, Option<u64>)> {
        p.registers
            .iter()
            .map(|r| (r.name.as_str(), r.reset.map(|v| v.value & v.mask)))
            .collect()
    }

    #[test]
    fn reset_values_are_inherited_register_cluster_peripheral_device() {
        let text = SVD
            .replace(
                "<size>32</size>",
                "<size>32</size><resetValue>0x11</resetValue><resetMask>0xff</resetMask>",
            )
            .replace(
                "<name>DATA</name><addressOffset>0x0</addressOffset>",
                "<name>DATA</name><addressOffset>0x0</addressOffset><resetValue>0x1234</resetValue>",
            )
            .replace(
                "<name>DMA</name>",
                "<name>DMA</name><resetValue>0x22</resetValue>",
            )
            .replace(
                "<name>UART1</name>",
                "<name>UART1</name><resetValue>0x33</resetValue>",
            );
        let ps = load_text(&text).unwrap();
        // DATA's own value, its mask the device's (0xff); STATE the
        // device's; the cluster's for DMA_CTRL
        assert_eq!(
            resets(&ps[0]),
            [
                ("DATA", Some(0x34)),
                ("STATE", Some(0x11)),
                ("DMA_CTRL", Some(0x22))
            ]
        );
        // UART1 derives UART0: its own peripheral-level value over the
        // device's, the registers' and clusters' own kept
        assert_eq!(
            resets(&ps[1]),
            [
                ("DATA", Some(0x34)),
                ("STATE", Some(0x33)),
                ("DMA_CTRL", Some(0x22))
            ]
        );
        // nothing anywhere: no reset value
        let ps = load_text(SVD).unwrap();
        assert!(ps[0].registers.iter().all(|r| r.reset.is_none()));
    }

    #[test]
    fn fields_are_kept_with_derived_registers() {
        let text = SVD.replace(
            "<register><name>STATE</name><addressOffset>0x4</addressOffset></register>",
            "<register><name>STATE</name><addressOffset>0x4</addressOffset><fields>\
             <field><name>RDY</name><bitOffset>17</bitOffset><bitWidth>1</bitWidth></field>\
             <field><dim>2</dim><dimIncrement>2</dimIncrement><name>M%s</name>\
             <bitRange>[5:4]</bitRange></field>\
             <field derivedFrom=\"RDY\"><name>COPY</name><bitOffset>9</bitOffset>\
             <bitWidth>3</bitWidth></field></fields></register>",
        );
        let ps = load_text(&text).unwrap();
        for p in &ps {
            let state = p.registers.iter().find(|r| r.name == "STATE").unwrap();
            let fields: Vec<String> = state.fields.iter().map(|f| f.describe()).collect();
            assert_eq!(
                fields,
                [
                    "RDY (bit 17)",
                    "M0 (bits 4-5)",
                    "M1 (bits 6-7)",
                    "COPY (bits 9-11)"
                ],
                "{}",
                p.name
            );
        }
    }
}
