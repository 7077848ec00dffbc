//! The names people read for ARP sections (issue 28), one rule for every
//! output: a section is named by its `ato_kernel*` / `ato_profile*` label
//! (the ARP manual's kernel and profiling labels, section 2) when the ELF's
//! DWARF has one for it, else by where it is entered: the function
//! (demangled, the innermost inlined one that is not the ARP API's own)
//! and the `file:line` of the enter call, `main (filter.c:128)`; without
//! debug information, the function alone.
//!
//! A label is found as `sir generate` finds it ([`section_label`]): after
//! the enter call, at the section's first instruction or inside its code
//! (what is reachable from the enter call's return without passing a leave
//! of the same section), the nearest one; a label names one section. Only
//! functions holding such a label are decoded, so a run of an ELF without
//! labels pays nothing for names beyond the source locations.
//!
//! Two ways in: [`at_sites`] names the sections a run entered, by the
//! address the host records for each enter call (its return address less
//! 4); [`by_sid`] names section ids from the code alone, for the `arp`
//! tools' `--elf` (a data.arp holds ids only), from every enter call whose
//! section id is an immediate.

use crate::image::dwarf::{DebugInfo, Label};
use crate::image::elf::{Function, GuestImage};
use crate::image::symbols::{self, SourceLocation};
use crate::observe::sirgen::cfg::{self, Flow, InsnDecoder};
use crate::observe::sirgen::{section_body, section_label, SectionKind};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// A section's name: its label, or where it is entered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionName {
    pub label: Option<String>,
    /// The enter call's function, file and line.
    pub location: SourceLocation,
}

impl SectionName {
    /// The name as people read it: the label, else `function (file:line)`.
    pub fn text(&self) -> String {
        self.label.clone().unwrap_or_else(|| self.location.short())
    }
}

/// An `arp_enter*` call found in the code.
#[derive(Debug, Clone, PartialEq, Eq)]
struct EnterCall {
    /// Where it returns: the section's first instruction.
    ret: u64,
    sid: Option<i64>,
    label: Option<String>,
}

/// The address the host records for the enter call that returns to `ret`
/// (`engine::intercept`: the return address, Thumb bit cleared, less 4).
pub fn site_of_return(ret: u64) -> u64 {
    (ret & !1).saturating_sub(4)
}

fn is_section_label(l: &Label) -> bool {
    l.name.starts_with("ato_kernel") || l.name.starts_with("ato_profile")
}

/// The enter calls of `f`, in address order, each with its label (as
/// `sir generate` pairs them).
fn enter_calls(
    image: &GuestImage,
    decoder: &InsnDecoder,
    labels: &[Label],
    f: &Function,
) -> Vec<EnterCall> {
    let cfg = decoder.function_cfg(image, f);
    let mut used = HashSet::new();
    let mut calls = Vec::new();
    for block in cfg.blocks.values() {
        let last_index = block.insns.end - 1;
        let last = &cfg.insns[last_index];
        let Flow::Call(Some(target)) = last.flow else {
            continue;
        };
        let Some(kind) = image
            .function_at(target)
            .filter(|c| c.addr == target)
            .and_then(|c| SectionKind::enter(&c.name))
        else {
            continue;
        };
        let sid = cfg::arg1_before(&cfg.insns, last_index);
        let start = last.next();
        let label = cfg.blocks.contains_key(&start).then(|| {
            let body = section_body(image, &cfg, start, sid, kind);
            section_label(labels, &used, f, &cfg, last.addr, start, &body, kind)
        });
        let label = label.flatten();
        if let Some(l) = &label {
            used.insert(l.addr);
        }
        calls.push(EnterCall {
            ret: start,
            sid,
            label: label.map(|l| l.name),
        });
    }
    calls
}

/// The labels of the sections entered in `functions` (by their entry
/// addresses), by enter-call site; only functions holding a label are
/// decoded.
fn labels_by_site(
    image: &GuestImage,
    debug: Option<&DebugInfo<'_>>,
    functions: &BTreeSet<u64>,
) -> HashMap<u64, String> {
    let labels: Vec<Label> = debug
        .map(|d| {
            d.labels
                .iter()
                .filter(|l| is_section_label(l))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let mut found = HashMap::new();
    let Some(decoder) = (!labels.is_empty())
        .then(|| InsnDecoder::new(image.arch).ok())
        .flatten()
    else {
        return found;
    };
    for f in image
        .functions
        .iter()
        .filter(|f| functions.contains(&f.addr))
    {
        if !labels
            .iter()
            .any(|l| (f.addr..f.addr + f.size).contains(&l.addr))
        {
            continue;
        }
        for call in enter_calls(image, &decoder, &labels, f) {
            if let Some(label) = call.label {
                found.insert(site_of_return(call.ret), label);
            }
        }
    }
    found
}

/// The names of the sections entered at `sites` (enter-call addresses as
/// the host records them) in `image`, read from its ELF file.
pub fn at_sites(image: &GuestImage, sites: &[u64]) -> HashMap<u64, SectionName> {
    let bytes = std::fs::read(&image.file).unwrap_or_default();
    let debug = DebugInfo::load(&bytes).ok().flatten();
    let functions: BTreeSet<u64> = sites
        .iter()
        .filter_map(|&s| image.function_at(s))
        .map(|f| f.addr)
        .collect();
    let labels = labels_by_site(image, debug.as_ref(), &functions);
    sites
        .iter()
        .map(|&site| {
            let name = SectionName {
                label: labels.get(&site).cloned(),
                location: symbols::locate(image, debug.as_ref(), site),
            };
            (site, name)
        })
        .collect()
}

/// The name of each section id entered in `image`'s code with an
/// immediate id (what `arp` tools can name in a data.arp). An id entered
/// at several places with different names gets them all, joined by ` | `.
pub fn by_sid(image: &GuestImage) -> BTreeMap<u16, String> {
    let bytes = std::fs::read(&image.file).unwrap_or_default();
    let debug = DebugInfo::load(&bytes).ok().flatten();
    let labels: Vec<Label> = debug
        .as_ref()
        .map(|d| {
            d.labels
                .iter()
                .filter(|l| is_section_label(l))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let Ok(decoder) = InsnDecoder::new(image.arch) else {
        return BTreeMap::new();
    };
    let mut names: BTreeMap<u16, Vec<String>> = BTreeMap::new();
    for f in image.functions.iter().filter(|f| f.size > 0) {
        if image.bytes_at(f.addr, 2).is_none() || SectionKind::enter(&f.name).is_some() {
            continue;
        }
        for call in enter_calls(image, &decoder, &labels, f) {
            let Some(sid) = call.sid.and_then(|s| u16::try_from(s).ok()) else {
                continue;
            };
            let name = SectionName {
                label: call.label,
                location: symbols::locate(image, debug.as_ref(), site_of_return(call.ret)),
            }
            .text();
            let known = names.entry(sid).or_default();
            if !known.contains(&name) {
                known.push(name);
            }
        }
    }
    names
        .into_iter()
        .map(|(sid, n)| (sid, n.join(" | ")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_is_the_name_else_the_place() {
        let location = SourceLocation {
            function: Some("main".into()),
            file: Some("/src/fir.c".into()),
            line: Some(63),
        };
        let unlabelled = SectionName {
            label: None,
            location: location.clone(),
        };
        assert_eq!(unlabelled.text(), "main (fir.c:63)");
        let labelled = SectionName {
            label: Some("ato_kernel_fir".into()),
            location,
        };
        assert_eq!(labelled.text(), "ato_kernel_fir");
    }

    #[test]
    fn sites_are_the_hosts_return_address_less_four() {
        assert_eq!(site_of_return(0x1005), 0x1000);
        assert_eq!(site_of_return(0x2004), 0x2000);
        assert_eq!(site_of_return(2), 0);
    }
}
