//! The names people read for ARP sections (issue 28), one rule for every
//! output: a section is named by the name the guest gives it with
//! `ARP_SECTION_NAME(sid, "name")` (the ELF's `.arp_names`, issue 39:
//! `image::arp_names`), else by its `ato_kernel*` / `ato_profile*` label
//! (the ARP manual's kernel and profiling labels, section 2) when the
//! ELF's DWARF has one for it, else by where it is entered: the function
//! (demangled, the innermost inlined one that is not the ARP API's own)
//! and the `file:line` of the enter call, `main (filter.c:128)`; without
//! debug information, the function alone.
//!
//! A label is found as `sir generate` finds it ([`section_label`]): after
//! the enter call, at the section's first instruction or inside its code
//! (what is reachable from the enter call's return without passing a leave
//! of the same section), the nearest one; a label names one section. Only
//! functions holding such a label (or, with `.arp_names`, an enter call
//! whose section id the caller does not know) are decoded, so a run of an
//! ELF without labels pays nothing for names beyond the source locations.
//! (A label's function is decoded even when the run entered none of its
//! sections: a label that names nothing is said in every run.)
//!
//! A label that cannot be attributed is said, never silently dropped: two
//! labels of one kind at one address (GCC -O2 does this to labels of code
//! it moves) name no section, and a label no enter call of its function
//! reaches names none; each gives a warning naming the labels and the
//! address, unless every section its function enters of that kind has a
//! name from `.arp_names` anyway.
//!
//! Two ways in: [`at_sites`] names the sections a run entered, by the
//! address the host records for each enter call (its return address less
//! 4) and, where known, the section id; [`by_sid`] names section ids from
//! the code alone, for the `arp` tools' `--elf` (a data.arp holds ids
//! only), from every enter call whose section id is an immediate and every
//! id of `.arp_names`.

use crate::image::arp_names;
use crate::image::dwarf::{DebugInfo, Label};
use crate::image::elf::{Function, GuestImage};
use crate::image::symbols::{self, SourceLocation};
use crate::observe::sirgen::cfg::{self, Flow, InsnDecoder};
use crate::observe::sirgen::{
    attributable_labels, label_prefix, section_body, section_label, SectionKind,
};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// A section's name: its given name, its label, or where it is entered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionName {
    /// From `ARP_SECTION_NAME` (the ELF's `.arp_names`).
    pub given: Option<String>,
    pub label: Option<String>,
    /// The enter call's function, file and line.
    pub location: SourceLocation,
}

impl SectionName {
    /// The name as people read it: the given name, else the label, else
    /// `function (file:line)`.
    pub fn text(&self) -> String {
        self.given
            .clone()
            .or_else(|| self.label.clone())
            .unwrap_or_else(|| self.location.short())
    }
}

/// Where a section was entered: the enter call's address as the host
/// records it, and the section id when the caller knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Site {
    pub addr: u64,
    pub sid: Option<u16>,
}

/// Names by site, and what could not be named as it should. Kept per
/// enter-call address (a site's label and place), the given names per id
/// in the image: one enter call of a variable id may enter 65,536
/// sections, which cost no entry each here.
#[derive(Debug)]
pub struct Naming<'a> {
    sites: HashMap<u64, SiteName>,
    given: &'a arp_names::GivenNames,
    /// Problems of `.arp_names` and labels that name no section.
    pub warnings: Vec<String>,
}

/// What is known of one enter call.
#[derive(Debug)]
struct SiteName {
    label: Option<String>,
    /// Its immediate section id, when it has one.
    sid: Option<u16>,
    location: SourceLocation,
}

impl Naming<'_> {
    /// The name of the section `site` entered, if the site was asked for;
    /// a site without an id takes its call's immediate one.
    pub fn get(&self, site: Site) -> Option<SectionName> {
        let known = self.sites.get(&site.addr)?;
        let sid = site.sid.or(known.sid);
        Some(SectionName {
            given: sid.and_then(|s| self.given.get(s)).map(str::to_owned),
            label: known.label.clone(),
            location: known.location.clone(),
        })
    }
}

/// Names by section id (`arp ... --elf`), and the warnings.
#[derive(Debug, Default)]
pub struct SidNames {
    pub names: BTreeMap<u16, String>,
    pub warnings: Vec<String>,
}

/// An `arp_enter*` call found in the code.
#[derive(Debug, Clone, PartialEq, Eq)]
struct EnterCall {
    /// Where it returns: the section's first instruction.
    ret: u64,
    sid: Option<i64>,
    kind: SectionKind,
    label: Option<String>,
}

/// The address the host records for the enter call that returns to `ret`
/// (`engine::intercept`: the return address, Thumb bit cleared, less 4).
pub fn site_of_return(ret: u64) -> u64 {
    (ret & !1).saturating_sub(4)
}

/// The section labels of the DWARF, by address.
fn section_labels(debug: Option<&DebugInfo<'_>>) -> Vec<Label> {
    debug
        .map(|d| {
            d.labels
                .iter()
                .filter(|l| label_prefix(&l.name).is_some())
                .cloned()
                .collect()
        })
        .unwrap_or_default()
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
            kind,
            label: label.map(|l| l.name),
        });
    }
    calls
}

/// What reading one function's sections found.
struct Analysed {
    calls: Vec<EnterCall>,
    warnings: Vec<String>,
}

/// The enter calls of `f` with their labels, and a warning for each of
/// its labels that names no section (at one address with another, or
/// reached by no enter call), unless every section of that kind `f`
/// enters has a given name anyway.
fn analyse(
    image: &GuestImage,
    debug: Option<&DebugInfo<'_>>,
    decoder: &InsnDecoder,
    labels: &[Label],
    f: &Function,
) -> Analysed {
    let (usable, collisions) = attributable_labels(labels, f);
    let calls = enter_calls(image, decoder, &usable, f);
    // a label nothing needs: every section of its kind here has a given name
    let all_given = |prefix: &str| {
        let mut of_kind = calls
            .iter()
            .filter(|c| c.kind.label_prefix() == Some(prefix))
            .peekable();
        of_kind.peek().is_some()
            && of_kind.all(|c| {
                c.sid
                    .and_then(|s| u16::try_from(s).ok())
                    .is_some_and(|s| image.arp_names.get(s).is_some())
            })
    };
    let place = |addr: u64| symbols::locate(image, debug, addr).short();
    let advice = "ARP_SECTION_NAME(sid, \"name\") (atomium_rp.h) names a section \
                  whatever the optimiser does";
    let mut warnings = Vec::new();
    for c in collisions.iter().filter(|c| !all_given(c.prefix)) {
        warnings.push(format!(
            "labels {} are all at {:#010x} ({}): the compiler gave them one address, so \
             none of them names a section, and the sections {} enters are named by their \
             ARP_SECTION_NAME or where they are entered. {advice}",
            c.names.join(", "),
            c.addr,
            place(c.addr),
            f.name
        ));
    }
    for l in &usable {
        let claimed = calls.iter().any(|c| c.label.as_ref() == Some(&l.name));
        let prefix = label_prefix(&l.name).unwrap_or("");
        if !claimed && !all_given(prefix) {
            warnings.push(format!(
                "label {} at {:#010x} ({}) names no section: no {} section {} enters \
                 reaches it. {advice}",
                l.name,
                l.addr,
                place(l.addr),
                if prefix == "ato_kernel" {
                    "kernel"
                } else {
                    "profiled"
                },
                f.name
            ));
        }
    }
    Analysed { calls, warnings }
}

/// Whether `image` can enter sections: an uninstrumented build
/// (-DARP_NONE) keeps its labels and enters none, so its labels are
/// expected to name nothing.
fn is_instrumented(image: &GuestImage) -> bool {
    image
        .functions
        .iter()
        .any(|f| SectionKind::enter(&f.name).is_some())
}

/// The names of the sections entered at `sites` (enter-call addresses as
/// the host records them, with the section id where it is known) in
/// `image`, read from its ELF file.
pub fn at_sites<'a>(image: &'a GuestImage, sites: &[Site]) -> Naming<'a> {
    let bytes = std::fs::read(&image.file).unwrap_or_default();
    let debug = DebugInfo::load(&bytes).ok().flatten();
    let labels = section_labels(debug.as_ref());
    let mut warnings = image.arp_names.problems.clone();
    let instrumented = is_instrumented(image);
    // every function holding a label is read (a label the run's sections
    // do not reach is said too), and one holding a site whose section id
    // the caller does not know when the ELF gives names by id
    let mut functions: BTreeSet<u64> = labels
        .iter()
        .filter_map(|l| image.function_at(l.addr))
        .map(|f| f.addr)
        .collect();
    if !image.arp_names.is_empty() {
        functions.extend(
            sites
                .iter()
                .filter(|s| s.sid.is_none())
                .filter_map(|s| image.function_at(s.addr))
                .map(|f| f.addr),
        );
    }
    let mut found: HashMap<u64, EnterCall> = HashMap::new();
    if let Some(decoder) = (!functions.is_empty())
        .then(|| InsnDecoder::new(image.arch).ok())
        .flatten()
    {
        for f in image
            .functions
            .iter()
            .filter(|f| functions.contains(&f.addr))
        {
            let analysed = analyse(image, debug.as_ref(), &decoder, &labels, f);
            if instrumented {
                warnings.extend(analysed.warnings);
            }
            for call in analysed.calls {
                found.insert(site_of_return(call.ret), call);
            }
        }
    }
    let mut named: HashMap<u64, SiteName> = HashMap::new();
    for site in sites {
        named.entry(site.addr).or_insert_with(|| {
            let call = found.get(&site.addr);
            SiteName {
                label: call.and_then(|c| c.label.clone()),
                sid: call.and_then(|c| c.sid).and_then(|s| u16::try_from(s).ok()),
                location: symbols::locate(image, debug.as_ref(), site.addr),
            }
        });
    }
    Naming {
        sites: named,
        given: &image.arp_names,
        warnings,
    }
}

/// The name of each section id entered in `image`'s code with an
/// immediate id, and of each id of its `.arp_names` (what `arp` tools can
/// name in a data.arp). An id without a given name entered at several
/// places with different names gets them all, joined by ` | `.
pub fn by_sid(image: &GuestImage) -> SidNames {
    let bytes = std::fs::read(&image.file).unwrap_or_default();
    let debug = DebugInfo::load(&bytes).ok().flatten();
    let labels = section_labels(debug.as_ref());
    let mut warnings = image.arp_names.problems.clone();
    let instrumented = is_instrumented(image);
    let mut names: BTreeMap<u16, Vec<String>> = image
        .arp_names
        .by_sid
        .iter()
        .map(|(sid, n)| (*sid, vec![n.clone()]))
        .collect();
    let Ok(decoder) = InsnDecoder::new(image.arch) else {
        return SidNames {
            names: join(names),
            warnings,
        };
    };
    for f in image.functions.iter().filter(|f| f.size > 0) {
        if image.bytes_at(f.addr, 2).is_none() || SectionKind::enter(&f.name).is_some() {
            continue;
        }
        let analysed = analyse(image, debug.as_ref(), &decoder, &labels, f);
        if instrumented {
            warnings.extend(analysed.warnings);
        }
        for call in analysed.calls {
            let Some(sid) = call.sid.and_then(|s| u16::try_from(s).ok()) else {
                continue;
            };
            if image.arp_names.get(sid).is_some() {
                continue;
            }
            let name = SectionName {
                given: None,
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
    SidNames {
        names: join(names),
        warnings,
    }
}

fn join(names: BTreeMap<u16, Vec<String>>) -> BTreeMap<u16, String> {
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
            given: None,
            label: None,
            location: location.clone(),
        };
        assert_eq!(unlabelled.text(), "main (fir.c:63)");
        let labelled = SectionName {
            given: None,
            label: Some("ato_kernel_fir".into()),
            location,
        };
        assert_eq!(labelled.text(), "ato_kernel_fir");
        let given = SectionName {
            given: Some("fir".into()),
            ..labelled
        };
        assert_eq!(given.text(), "fir");
    }

    #[test]
    fn sites_are_the_hosts_return_address_less_four() {
        assert_eq!(site_of_return(0x1005), 0x1000);
        assert_eq!(site_of_return(0x2004), 0x2000);
        assert_eq!(site_of_return(2), 0);
    }
}
