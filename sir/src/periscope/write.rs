//! Periscope SIR to XML: elements in the default namespace, schema order.

use std::io::Write;

use crate::error::WriteError;
use crate::namespaces::PERISCOPE as NAMESPACE;
use crate::periscope::model::*;
use crate::xml_out::{Tag, XmlOut};

/// Writes `sir` as a Periscope document (UTF-8, two-space indentation).
pub fn write(sir: &Sir, out: &mut dyn Write) -> Result<(), WriteError> {
    let mut xml = XmlOut::new(&sir.prefixes);
    let root = Tag::new("sir").opt("language", sir.language.map(Language::as_str));
    let root = xml.root(root, &sir.annotations)?;
    for unit in &sir.units {
        write_unit(&mut xml, unit)?;
    }
    xml.finish(root, Some(NAMESPACE), out)
}

/// [`write()`] into a `String`.
pub fn write_string(sir: &Sir) -> Result<String, WriteError> {
    let mut bytes = Vec::new();
    write(sir, &mut bytes)?;
    Ok(String::from_utf8(bytes).expect("the writer produces UTF-8"))
}

fn write_unit(xml: &mut XmlOut, unit: &Unit) -> Result<(), WriteError> {
    crate::stack::guarded(|| {
        let tag = Tag::new("unit")
            .opt("type", unit.kind.map(UnitType::as_str))
            .opt("name", unit.name.as_deref())
            .opt("datascopeclause", unit.datascopeclause.as_deref())
            .opt("id", unit.id.as_deref());
        if unit.position.is_none()
            && unit.arrays.is_empty()
            && unit.units.is_empty()
            && unit.code_regions.is_empty()
        {
            return xml.empty(tag, &unit.annotations);
        }
        let name = xml.open(tag, &unit.annotations)?;
        if let Some(position) = &unit.position {
            write_position(xml, position)?;
        }
        for array in &unit.arrays {
            write_array(xml, array)?;
        }
        for inner in &unit.units {
            write_unit(xml, inner)?;
        }
        for region in &unit.code_regions {
            write_region(xml, region)?;
        }
        xml.close(name);
        Ok(())
    })
}

fn write_region(xml: &mut XmlOut, region: &CodeRegion) -> Result<(), WriteError> {
    crate::stack::guarded(|| {
        let tag = Tag::new("codeRegion")
            .opt("type", region.kind.map(RegionType::as_str))
            .opt("name", region.name.as_deref())
            .opt("datascopeclause", region.datascopeclause.as_deref())
            .opt("id", region.id.as_deref());
        let name = xml.open(tag, &region.annotations)?;
        write_position(xml, &region.position)?;
        for array in &region.arrays {
            write_array(xml, array)?;
        }
        for inner in &region.code_regions {
            write_region(xml, inner)?;
        }
        xml.close(name);
        Ok(())
    })
}

fn write_position(xml: &mut XmlOut, position: &SourcePosition) -> Result<(), WriteError> {
    let tag = Tag::new("position")
        .opt_display("startLine", position.start_line)
        .opt_display("endLine", position.end_line);
    let name = xml.open(tag, &position.annotations)?;
    xml.empty(
        Tag::new("file").opt("name", position.file.name.as_deref()),
        &position.file.annotations,
    )?;
    xml.close(name);
    Ok(())
}

fn write_array(xml: &mut XmlOut, array: &Array) -> Result<(), WriteError> {
    let tag = Tag::new("array")
        .opt("type", array.kind.map(ArrayType::as_str))
        .opt("name", array.name.as_deref())
        .opt_display("nelts", array.nelts);
    xml.empty(tag, &array.annotations)
}
