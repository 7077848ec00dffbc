//! ARP sections in a SIR: the section regions `sim-host sir generate`
//! writes carry `arp:sid`, `arp:name` and `arp:kind` in [`ARP_NS`]. Tools
//! that name measured sections (calibration, Extra-P export) read them
//! back here.

use crate::annotation::MEASURE_NS;
use crate::apart::{self, Node};
use crate::document::Document;
use crate::error::quote;
use std::collections::BTreeMap;

pub use crate::namespaces::ARP as ARP_NS;

/// The annotation holding an element's ARP section id, in [`ARP_NS`] (or,
/// for hand-written SIRs, in the measure namespace).
pub const SID_ANNOTATION: &str = "sid";

/// Why section names could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ArpNamesError {
    #[error("cannot read the Periscope SIR's regions: {0}")]
    Conversion(String),
    #[error(
        "element `{}`: {SID_ANNOTATION}=\"{}\" is not a section id (0..65535)",
        quote(.id),
        quote(.value)
    )]
    BadSid { id: String, value: String },
    #[error(
        "section {sid} is named twice: `{}` on element `{}` and `{}` on element `{}`",
        quote(.first_name),
        quote(.first),
        quote(.second_name),
        quote(.second)
    )]
    NamedTwice {
        sid: u16,
        first: String,
        first_name: String,
        second: String,
        second_name: String,
    },
}

/// Section id → name, from every element carrying a section id: its
/// `arp:name`, else the unit's or group's `name`, else its `id`. When one
/// id appears on several elements (a kernel in an inlined function) an
/// `ato_*` label wins, then the first in document order.
pub fn section_names(document: Document) -> Result<BTreeMap<u16, String>, ArpNamesError> {
    let apart = match document {
        Document::Apart(s) => s,
        Document::Periscope(p) => {
            crate::convert::to_apart(&p)
                .map_err(|e| ArpNamesError::Conversion(e.to_string()))?
                .document
        }
    };
    // (sid, name, element id, whether the name is an explicit arp:name)
    let mut found: Vec<(String, String, String, bool)> = Vec::new();
    apart::visit_members(&apart.members, &mut |node| {
        let (ann, name, id) = match node {
            Node::Unit(u) => (&u.annotations, u.name.clone(), u.id.clone()),
            Node::Group(g) => (&g.annotations, g.name.clone(), g.id.clone()),
            Node::CodeRegion(r) => (&r.annotations, None, r.id.clone()),
        };
        let sid = ann
            .get(ARP_NS, SID_ANNOTATION)
            .or_else(|| ann.get(MEASURE_NS, SID_ANNOTATION));
        if let Some(sid) = sid {
            let explicit = ann.get(ARP_NS, "name").map(str::to_string);
            let is_explicit = explicit.is_some();
            let name = explicit.or(name).unwrap_or_else(|| id.clone());
            found.push((sid.to_string(), name, id, is_explicit));
        }
    });
    let mut chosen: BTreeMap<u16, String> = BTreeMap::new();
    // An `ato_*` label is the program's own name for a section: two
    // different labels for one id are ambiguous. (Generated names such as
    // `main:12` differ legitimately: one section entered from two places.)
    let mut explicit: BTreeMap<u16, (String, String)> = BTreeMap::new();
    for (value, name, id, is_explicit) in found {
        let sid: u16 = value.trim().parse().map_err(|_| ArpNamesError::BadSid {
            id: id.clone(),
            value,
        })?;
        if is_explicit && name.starts_with("ato_") {
            match explicit.get(&sid) {
                Some((first_name, first)) if *first_name != name => {
                    return Err(ArpNamesError::NamedTwice {
                        sid,
                        first: first.clone(),
                        first_name: first_name.clone(),
                        second: id,
                        second_name: name,
                    });
                }
                Some(_) => {}
                None => {
                    explicit.insert(sid, (name.clone(), id.clone()));
                }
            }
        }
        match chosen.get(&sid) {
            Some(old) if old.starts_with("ato_") || !name.starts_with("ato_") => {}
            _ => {
                chosen.insert(sid, name);
            }
        }
    }
    Ok(chosen)
}
