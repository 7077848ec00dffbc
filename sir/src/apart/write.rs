//! APART SIR to XML. Children are written in the DTD's sequence order, so a
//! written model parses back to an equal model.

use std::io::Write;

use crate::apart::model::*;
use crate::error::WriteError;
use crate::xml_out::{Tag, XmlOut};

/// Writes `sir` as an APART document (UTF-8, two-space indentation).
///
/// Write a model that [`Sir::validate`] accepts: the writer does not check
/// ids or references, only that annotation names are writable.
pub fn write(sir: &Sir, out: &mut dyn Write) -> Result<(), WriteError> {
    let mut xml = XmlOut::new(&sir.prefixes);
    let root = Tag::new("sir")
        .attr("language", sir.language.as_str())
        .opt_display("messagePassing", sir.message_passing)
        .opt_display("sharedMemory", sir.shared_memory);
    let root = xml.root(root, &sir.annotations)?;
    for variable in &sir.variables {
        write_variable(&mut xml, variable)?;
    }
    write_members(&mut xml, &sir.members)?;
    xml.finish(root, None, out)
}

/// [`write()`] into a `String`.
pub fn write_string(sir: &Sir) -> Result<String, WriteError> {
    let mut bytes = Vec::new();
    write(sir, &mut bytes)?;
    Ok(String::from_utf8(bytes).expect("the writer produces UTF-8"))
}

fn write_members(xml: &mut XmlOut, members: &[Member]) -> Result<(), WriteError> {
    for member in members {
        match member {
            Member::Group(g) => write_group(xml, g)?,
            Member::Unit(u) => write_unit(xml, u)?,
        }
    }
    Ok(())
}

fn write_group(xml: &mut XmlOut, group: &Group) -> Result<(), WriteError> {
    crate::stack::guarded(|| {
        let tag = Tag::new("group")
            .attr("id", &group.id)
            .attr("type", group.kind.as_str())
            .opt("name", group.name.as_deref())
            .opt("internal", group.internal.as_deref());
        let empty = group.inheritance.is_empty()
            && group.location.is_none()
            && group.variables.is_empty()
            && group.members.is_empty();
        if empty {
            return xml.empty(tag, &group.annotations);
        }
        let name = xml.open(tag, &group.annotations)?;
        for inheritance in &group.inheritance {
            let tag = Tag::new("inheritance")
                .opt("id", inheritance.id.as_deref())
                .opt("name", inheritance.name.as_deref());
            xml.empty(tag, &inheritance.annotations)?;
        }
        if let Some(location) = &group.location {
            write_location(xml, location)?;
        }
        for variable in &group.variables {
            write_variable(xml, variable)?;
        }
        write_members(xml, &group.members)?;
        xml.close(name);
        Ok(())
    })
}

fn write_unit(xml: &mut XmlOut, unit: &Unit) -> Result<(), WriteError> {
    crate::stack::guarded(|| {
        let arguments = (!unit.arguments.is_empty()).then(|| unit.arguments.join(" "));
        let tag = Tag::new("unit")
            .attr("id", &unit.id)
            .attr("type", unit.kind.as_str())
            .opt("name", unit.name.as_deref())
            .opt("arguments", arguments.as_deref())
            .opt_display("virtual", unit.is_virtual)
            .opt("internal", unit.internal.as_deref())
            .opt("language", unit.language.map(Language::as_str))
            .opt_display("instrumentable", unit.instrumentable);
        let empty = unit.alias.is_none()
            && unit.location.is_none()
            && unit.variables.is_empty()
            && unit.variable_refs.is_empty()
            && unit.children.is_empty();
        if empty {
            return xml.empty(tag, &unit.annotations);
        }
        let name = xml.open(tag, &unit.annotations)?;
        if let Some(alias) = &unit.alias {
            xml.text_element(Tag::new("alias"), alias);
        }
        if let Some(location) = &unit.location {
            write_location(xml, location)?;
        }
        for variable in &unit.variables {
            write_variable(xml, variable)?;
        }
        for reference in &unit.variable_refs {
            write_variable_ref(xml, reference)?;
        }
        for child in &unit.children {
            match child {
                UnitChild::Group(g) => write_group(xml, g)?,
                UnitChild::Unit(u) => write_unit(xml, u)?,
                UnitChild::CodeRegion(r) => write_region(xml, r)?,
            }
        }
        xml.close(name);
        Ok(())
    })
}

fn write_region(xml: &mut XmlOut, region: &CodeRegion) -> Result<(), WriteError> {
    crate::stack::guarded(|| {
        let tag = Tag::new("codeRegion")
            .attr("id", &region.id)
            .attr("type", region.kind.as_str())
            .opt(
                "criticalSectionName",
                region.critical_section_name.as_deref(),
            )
            .opt_display("nowait", region.nowait);
        let empty = region.callee.is_none()
            && region.location.is_none()
            && region.variables.is_empty()
            && region.variable_refs.is_empty()
            && region.scheduling.is_none()
            && region.evaluations.is_empty()
            && region.children.is_empty();
        if empty {
            return xml.empty(tag, &region.annotations);
        }
        let name = xml.open(tag, &region.annotations)?;
        if let Some(callee) = &region.callee {
            let tag = Tag::new("callee")
                .opt("id", callee.id.as_deref())
                .opt("name", callee.name.as_deref());
            xml.empty(tag, &callee.annotations)?;
        }
        if let Some(location) = &region.location {
            write_location(xml, location)?;
        }
        for variable in &region.variables {
            write_variable(xml, variable)?;
        }
        for reference in &region.variable_refs {
            write_variable_ref(xml, reference)?;
        }
        if let Some(scheduling) = &region.scheduling {
            let tag = Tag::new("scheduling")
                .attr("type", scheduling.kind.as_str())
                .opt_display("chunk", scheduling.chunk);
            xml.empty(tag, &scheduling.annotations)?;
        }
        for evaluation in &region.evaluations {
            match evaluation {
                Evaluation::Expression(expression) => {
                    let name = xml.open(Tag::new("expression"), &expression.annotations)?;
                    write_region_children(xml, &expression.items)?;
                    xml.close(name);
                }
                Evaluation::LoopControl(control) => write_loop_control(xml, control)?,
            }
        }
        write_region_children(xml, &region.children)?;
        xml.close(name);
        Ok(())
    })
}

fn write_region_children(xml: &mut XmlOut, children: &[RegionChild]) -> Result<(), WriteError> {
    for child in children {
        match child {
            RegionChild::CodeRegion(r) => write_region(xml, r)?,
            RegionChild::Group(g) => write_group(xml, g)?,
        }
    }
    Ok(())
}

fn write_loop_control(xml: &mut XmlOut, control: &LoopControl) -> Result<(), WriteError> {
    if control.lower.is_none() && control.upper.is_none() && control.stride.is_none() {
        return xml.empty(Tag::new("loopControl"), &control.annotations);
    }
    let name = xml.open(Tag::new("loopControl"), &control.annotations)?;
    for (element, bound) in [
        ("lower", &control.lower),
        ("upper", &control.upper),
        ("stride", &control.stride),
    ] {
        if let Some(bound) = bound {
            let inner = xml.open(Tag::new(element), &bound.annotations)?;
            for region in &bound.regions {
                write_region(xml, region)?;
            }
            xml.close(inner);
        }
    }
    xml.close(name);
    Ok(())
}

fn write_variable(xml: &mut XmlOut, variable: &Variable) -> Result<(), WriteError> {
    let tag = Tag::new("variable")
        .attr("id", &variable.id)
        .opt("name", variable.name.as_deref())
        .opt("type", variable.type_name.as_deref())
        .opt_display("dimensions", variable.dimensions);
    if variable.location.is_none() && variable.dimension_bounds.is_empty() {
        return xml.empty(tag, &variable.annotations);
    }
    let name = xml.open(tag, &variable.annotations)?;
    if let Some(location) = &variable.location {
        write_location(xml, location)?;
    }
    for dimension in &variable.dimension_bounds {
        let tag = Tag::new("dimension")
            .attr("index", &dimension.index.to_string())
            .attr("upperBound", &dimension.upper_bound.to_string())
            .attr("lowerBound", &dimension.lower_bound.to_string());
        xml.empty(tag, &dimension.annotations)?;
    }
    xml.close(name);
    Ok(())
}

fn write_variable_ref(xml: &mut XmlOut, reference: &VariableRef) -> Result<(), WriteError> {
    let tag = Tag::new("variableRef")
        .attr("targetId", &reference.target_id)
        .opt("accessType", reference.access.map(AccessType::as_str));
    xml.empty(tag, &reference.annotations)
}

fn write_location(xml: &mut XmlOut, location: &Location) -> Result<(), WriteError> {
    let tag = Tag::new("location")
        .opt_display("startLine", location.start_line)
        .opt_display("startColumn", location.start_column)
        .opt_display("endLine", location.end_line)
        .opt_display("endColumn", location.end_column)
        .opt("uri", location.uri.as_deref());
    xml.empty(tag, &location.annotations)
}
