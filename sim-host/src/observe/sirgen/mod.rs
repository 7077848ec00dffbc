//! SIR from a guest ELF: units from function symbols, loop regions from the
//! natural loops of each function's control-flow graph, call regions, and
//! ARP sections as regions, with source positions from DWARF.
//!
//! The model is built in the APART dialect (its region types cover loops,
//! calls and user regions) and converted to Periscope on request
//! ([`sir::convert::to_periscope`]). Beside the SIR, [`generate`] returns a
//! [`ProfileMap`]: which machine code each unit and region stands for, which
//! [`crate::observe::profile::ProfileCollector`] needs to measure them.
//!
//! Rules (APART 2.3 units, 2.4 code regions, 2.6 locations):
//! - one `unit` of type `function` per function symbol of non-zero size,
//!   named after the symbol, id `u_<name>`; location: the file of its
//!   first line and its lines (declaration line to last line of its own,
//!   not inlined, code);
//! - a `loop` region per natural loop (id `l_<function>_<n>`), nested as the
//!   loops nest in the code; lines: those of the loop's code at the
//!   inlining depth all of its code shares, so a loop of an inlined function
//!   has the lines of that function's loop;
//! - a `call` region per call instruction (`c_<function>_<n>`), callee by id
//!   when the target is a unit, by name otherwise, `?` when indirect;
//!   tail calls (jumps to another function's entry) are calls too. Calls of
//!   the ARP enter/leave entry points are represented by their section;
//! - an ARP section region (type `userRegion`, a custom type: the DTD's
//!   `type` is CDATA, and Periscope knows `userRegion`) per call of
//!   `arp_enter`, `arp_enter_kernel` or `arp_enter_profiled`: its code is
//!   what is reachable from the return of the enter call without passing a
//!   leave call of the same section. Its id is the `ato_kernel*` /
//!   `ato_profile*` label after the enter call when DWARF has the label
//!   (with its address), otherwise `s<sid>_<function>_<n>`; it carries
//!   `arp:sid`, `arp:kind` and `arp:name` (namespace [`ARP_NS`]).
//!
//! Regions nest by their code: a region is inside the smallest region whose
//! code contains all of its code (a section whose code equals a loop's is
//! outside it). Regions are ordered by address inside their parent.

pub mod cfg;
mod error;
pub mod loops;

use crate::image::dwarf::{DebugInfo, Frame, Label};
use crate::image::elf::{Function, GuestImage};
use crate::model::target::Target;
use cfg::{Flow, FunctionCfg, InsnDecoder};
use sir::apart::{self, Callee, CodeRegion, Language, Location, RegionType, Unit, UnitType};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

pub use error::SirGenError;
pub use sir;
pub use sir::Dialect;

/// Namespace of the ARP attributes of section regions (`arp:sid`, ...).
pub const ARP_NS: &str = "urn:arpsim:arp";

/// Which `arp_enter*` entry point opens a section (ARP manual 6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionKind {
    Plain,
    Kernel,
    Profiled,
}

impl SectionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SectionKind::Plain => "plain",
            SectionKind::Kernel => "kernel",
            SectionKind::Profiled => "profiled",
        }
    }

    pub(crate) fn enter(name: &str) -> Option<SectionKind> {
        match name {
            "arp_enter" => Some(SectionKind::Plain),
            "arp_enter_kernel" => Some(SectionKind::Kernel),
            "arp_enter_profiled" => Some(SectionKind::Profiled),
            _ => None,
        }
    }

    pub(crate) fn leave(name: &str) -> Option<SectionKind> {
        match name {
            "arp_leave" => Some(SectionKind::Plain),
            "arp_leave_kernel" => Some(SectionKind::Kernel),
            "arp_leave_profiled" => Some(SectionKind::Profiled),
            _ => None,
        }
    }

    pub(crate) fn label_prefix(self) -> Option<&'static str> {
        match self {
            SectionKind::Plain => None,
            SectionKind::Kernel => Some("ato_kernel"),
            SectionKind::Profiled => Some("ato_profile"),
        }
    }
}

/// What a region of the map stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegionKind {
    /// A natural loop entered at `header`.
    Loop { header: u64 },
    /// An ARP section whose code starts at `start` (the enter call's return).
    Section {
        sid: Option<i64>,
        kind: SectionKind,
        start: u64,
        name: String,
    },
    /// A call instruction at `site`; `ret` is where it returns (none for a tail call).
    Call {
        site: u64,
        callee: Option<u64>,
        ret: Option<u64>,
    },
}

/// A region of the generated SIR and its code.
#[derive(Debug, Clone)]
pub struct RegionMap {
    pub id: String,
    /// Index of its unit in [`ProfileMap::units`].
    pub unit: usize,
    pub kind: RegionKind,
    /// Start addresses of the blocks of its code.
    pub body: BTreeSet<u64>,
    /// Index of the enclosing region in [`ProfileMap::regions`].
    pub parent: Option<usize>,
}

/// A unit of the generated SIR and its function's address range.
#[derive(Debug, Clone)]
pub struct UnitMap {
    pub id: String,
    pub name: String,
    pub start: u64,
    pub end: u64,
}

/// A basic block of an analysed function.
#[derive(Debug, Clone)]
pub struct BlockMap {
    pub end: u64,
    pub instructions: u32,
    pub unit: usize,
    /// Loop and section regions containing it, outermost first.
    pub regions: Vec<usize>,
    /// The call region of the call instruction ending it.
    pub call: Option<usize>,
    /// Where the call ending it returns.
    pub returns_to: Option<u64>,
}

/// Code of every unit and region: what the profile collector measures.
#[derive(Debug, Clone, Default)]
pub struct ProfileMap {
    pub units: Vec<UnitMap>,
    pub regions: Vec<RegionMap>,
    pub blocks: BTreeMap<u64, BlockMap>,
    /// Unit index by function entry address.
    pub entries: HashMap<u64, usize>,
}

impl ProfileMap {
    fn region(&self, id: &str) -> Option<&RegionMap> {
        self.regions.iter().find(|r| r.id == id)
    }

    /// Header address and body blocks of the loop region `id`.
    pub fn loop_region(&self, id: &str) -> Option<(u64, &BTreeSet<u64>)> {
        let r = self.region(id)?;
        match r.kind {
            RegionKind::Loop { header } => Some((header, &r.body)),
            _ => None,
        }
    }

    /// The instruction address ranges (one per block) of the region `id`.
    pub fn region_ranges(&self, id: &str) -> Option<Vec<std::ops::Range<u64>>> {
        let r = self.region(id)?;
        Some(
            r.body
                .iter()
                .filter_map(|b| Some(*b..self.blocks.get(b)?.end))
                .collect(),
        )
    }

    /// The section id of the section region `id` (if it was found).
    pub fn section_sid(&self, id: &str) -> Option<i64> {
        match self.region(id)?.kind {
            RegionKind::Section { sid, .. } => sid,
            _ => None,
        }
    }

    /// Address range `start..end` of the unit `id`.
    pub fn unit_range(&self, id: &str) -> Option<std::ops::Range<u64>> {
        let u = self.units.iter().find(|u| u.id == id)?;
        Some(u.start..u.end)
    }

    /// The analysed block containing `addr`, with its start.
    pub fn block_at(&self, addr: u64) -> Option<(u64, &BlockMap)> {
        let (start, b) = self.blocks.range(..=addr).next_back()?;
        (addr < b.end).then_some((*start, b))
    }

    /// The unit whose function contains `addr`.
    pub fn unit_at(&self, addr: u64) -> Option<usize> {
        let i = self.units.partition_point(|u| u.start <= addr);
        let u = i.checked_sub(1)?;
        (addr < self.units[u].end).then_some(u)
    }
}

/// A generated SIR, in the dialect asked for and as the APART model it was
/// built as, with the map of its code.
#[derive(Debug, Clone)]
pub struct Generated {
    pub document: sir::Document,
    pub apart: apart::Sir,
    pub map: ProfileMap,
    /// Things the user should know (no DWARF, undecodable code, ...).
    pub warnings: Vec<String>,
}

impl Generated {
    /// Writes [`Generated::document`] in its dialect.
    pub fn write(&self, out: &mut dyn std::io::Write) -> Result<(), SirGenError> {
        self.document
            .write(out)
            .map_err(|e| SirGenError::Write(e.to_string()))
    }
}

/// Builds the SIR of `image` (whose file content is `elf_bytes`).
pub fn generate(
    image: &GuestImage,
    elf_bytes: &[u8],
    target: &Target,
    dialect: Dialect,
) -> Result<Generated, SirGenError> {
    let mut warnings = Vec::new();
    let debug = DebugInfo::load(elf_bytes)?;
    if debug.is_none() {
        warnings.push(format!(
            "{}: no DWARF debug information (build with -g): units and regions have no source positions",
            image.file.display()
        ));
    }
    let decoder = InsnDecoder::new(target.arch)?;
    let mut gen = Builder {
        image,
        debug: debug.as_ref(),
        frames: HashMap::new(),
        ids: HashSet::new(),
        map: ProfileMap::default(),
        warnings: &mut warnings,
        used_labels: HashSet::new(),
        said_collisions: HashSet::new(),
    };
    let functions: Vec<&Function> = image
        .functions
        .iter()
        .filter(|f| f.size > 0 && image.bytes_at(f.addr, 2).is_some())
        .collect();
    if functions.is_empty() {
        return Err(SirGenError::NoFunctions(image.file.display().to_string()));
    }
    for f in &functions {
        let id = gen.fresh_id(&format!("u_{}", f.name));
        gen.map.entries.insert(f.addr, gen.map.units.len());
        gen.map.units.push(UnitMap {
            id,
            name: f.name.clone(),
            start: f.addr,
            end: f.addr + f.size,
        });
    }
    let mut sir = apart::Sir::new(Language::C);
    sir.prefixes.prefer(ARP_NS, "arp");
    sir.prefixes
        .prefer(sir::annotation::MEASURE_NS, sir::annotation::MEASURE_PREFIX);
    for (index, f) in functions.iter().enumerate() {
        let cfg = decoder.function_cfg(image, f);
        if cfg.insns.is_empty() {
            gen.warnings
                .push(format!("{}: no decodable code at {:#010x}", f.name, f.addr));
        }
        let unit = gen.unit(index, f, &cfg);
        sir.push_unit(unit);
    }
    let report = sir.validate();
    if !report.is_valid() {
        return Err(SirGenError::Invalid(report.to_string()));
    }
    let document = match dialect {
        Dialect::Apart => sir::Document::Apart(sir.clone()),
        Dialect::Periscope => {
            let mut psc = sir::convert::to_periscope(&sir).document;
            name_periscope_sections(&mut psc.units);
            sir::Document::Periscope(psc)
        }
    };
    let map = gen.map;
    Ok(Generated {
        document,
        apart: sir,
        map,
        warnings,
    })
}

/// Periscope regions have a `name`: sections get theirs (label or call site).
fn name_periscope_sections(units: &mut [sir::periscope::Unit]) {
    fn regions(rs: &mut [sir::periscope::CodeRegion]) {
        for r in rs {
            if let Some(name) = r.annotations.get(ARP_NS, "name") {
                r.name = Some(name.to_string());
            }
            regions(&mut r.code_regions);
        }
    }
    for u in units {
        regions(&mut u.code_regions);
        name_periscope_sections(&mut u.units);
    }
}

/// An XML Name from `s` (APART ids are `ID`s).
fn xml_name(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert(0, '_');
    }
    out
}

fn file_uri(path: &str) -> String {
    if path.starts_with('/') {
        format!("file://{path}")
    } else {
        path.to_string()
    }
}

/// A region being placed: its code and kind.
struct Candidate {
    map: RegionMap,
    /// Sections (0) enclose loops (1) with the same code; calls (2) enclose nothing.
    rank: u8,
    location: Option<Location>,
    sir: CodeRegion,
}

struct Builder<'a, 'd> {
    image: &'a GuestImage,
    debug: Option<&'a DebugInfo<'d>>,
    frames: HashMap<u64, Vec<Frame>>,
    ids: HashSet<String>,
    map: ProfileMap,
    warnings: &'a mut Vec<String>,
    used_labels: HashSet<u64>,
    /// The addresses of colliding labels already warned about.
    said_collisions: HashSet<u64>,
}

impl Builder<'_, '_> {
    fn fresh_id(&mut self, base: &str) -> String {
        let base = xml_name(base);
        let mut id = base.clone();
        let mut n = 1;
        while !self.ids.insert(id.clone()) {
            n += 1;
            id = format!("{base}_{n}");
        }
        id
    }

    fn frames(&mut self, addr: u64) -> &[Frame] {
        let debug = self.debug;
        self.frames
            .entry(addr)
            .or_insert_with(|| debug.map(|d| d.frames(addr)).unwrap_or_default())
    }

    /// Lines of `addrs` at one inlining level, with the most frequent file
    /// there. The level is that of `anchor` (a loop's closing branch, a
    /// section's enter call: code the compiler attributes to the construct
    /// itself): a loop of an inlined function gets that function's lines
    /// even when the compiler attributes some of its instructions (hoisted
    /// or scheduled code) to the caller. Without an anchor, or when the
    /// anchor has no line, the deepest level all of `addrs` share.
    fn lines_of(&mut self, addrs: &[u64], anchor: Option<u64>) -> Option<Location> {
        self.debug?;
        let chains: Vec<Vec<Frame>> = addrs
            .iter()
            .map(|a| self.frames(*a).iter().rev().cloned().collect())
            .filter(|c: &Vec<Frame>| !c.is_empty())
            .collect();
        let anchor: Vec<Frame> = anchor
            .map(|a| self.frames(a).iter().rev().cloned().collect())
            .unwrap_or_default();
        let same_path = |a: &[Frame], b: &[Frame]| {
            a.iter()
                .zip(b)
                .take_while(|(x, y)| x.function == y.function)
                .count()
        };
        let (level, chains): (usize, Vec<&Vec<Frame>>) = if anchor.is_empty() {
            let first = chains.first()?;
            let depth = chains
                .iter()
                .map(|c| same_path(first, c))
                .min()
                .unwrap_or(0);
            (depth.saturating_sub(1), chains.iter().collect())
        } else {
            let level = anchor.len() - 1;
            let inside: Vec<&Vec<Frame>> = chains
                .iter()
                .filter(|c| same_path(&anchor, c) == anchor.len())
                .collect();
            (level, inside)
        };
        let mut files: HashMap<&str, usize> = HashMap::new();
        for c in &chains {
            if let Some(f) = c.get(level).and_then(|f| f.file.as_deref()) {
                *files.entry(f).or_default() += 1;
            }
        }
        let file = files
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))?
            .0;
        let lines: Vec<u32> = chains
            .iter()
            .filter_map(|c| c.get(level))
            .filter(|f| f.file.as_deref() == Some(file))
            .filter_map(|f| f.line)
            .filter(|l| *l > 0)
            .collect();
        let start = *lines.iter().min()?;
        let end = *lines.iter().max()?;
        Some(Location::lines(
            file_uri(file),
            u64::from(start),
            u64::from(end),
        ))
    }

    fn unit(&mut self, index: usize, f: &Function, cfg: &FunctionCfg) -> Unit {
        let unit_id = self.map.units[index].id.clone();
        let mut unit = Unit::new(unit_id, UnitType::Function).with_name(f.name.clone());
        if let Some(location) = self.unit_location(f, cfg) {
            unit = unit.with_location(location);
        }
        self.map_blocks(index, cfg);
        let mut candidates = self.loop_candidates(index, f, cfg);
        self.call_candidates(index, f, cfg, &mut candidates);
        let parents = nesting(&candidates);
        let base = self.record_regions(&candidates, &parents);
        for region in self.region_tree(base, candidates, &parents) {
            unit.push_region(region);
        }
        unit
    }

    /// The function's own lines: outermost frames only, from its
    /// declaration line when DWARF has it.
    fn unit_location(&mut self, f: &Function, cfg: &FunctionCfg) -> Option<Location> {
        self.debug?;
        let decl = self.debug.and_then(|d| d.decl_lines.get(&f.addr).copied());
        let mut lines = Vec::new();
        let mut files: HashMap<String, usize> = HashMap::new();
        for a in cfg.insns.iter().map(|i| i.addr) {
            if let Some(outer) = self.frames(a).last().cloned() {
                if let (Some(file), Some(line)) = (outer.file, outer.line) {
                    *files.entry(file.clone()).or_default() += 1;
                    lines.push((file, line));
                }
            }
        }
        let (file, _) = files
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))?;
        let ls: Vec<u32> = lines
            .iter()
            .filter(|(f, l)| *f == file && *l > 0)
            .map(|(_, l)| *l)
            .collect();
        let (min, max) = (ls.iter().min()?, ls.iter().max()?);
        let start = decl.filter(|d| *d > 0 && d < min).unwrap_or(*min);
        Some(Location::lines(
            file_uri(&file),
            u64::from(start),
            u64::from(*max),
        ))
    }

    /// The function's blocks in the map.
    fn map_blocks(&mut self, index: usize, cfg: &FunctionCfg) {
        // Blocks of the map.
        for (start, b) in &cfg.blocks {
            // Every call returns (frames of the profile), with or without a call region.
            let last = cfg.last(b);
            let returns_to = matches!(last.flow, Flow::Call(_)).then(|| last.next());
            self.map.blocks.insert(
                *start,
                BlockMap {
                    end: b.end,
                    instructions: b.insns.len() as u32,
                    unit: index,
                    regions: Vec::new(),
                    call: None,
                    returns_to,
                },
            );
        }
    }

    /// The function's natural loops, as candidate regions.
    fn loop_candidates(&mut self, index: usize, f: &Function, cfg: &FunctionCfg) -> Vec<Candidate> {
        let mut candidates = Vec::new();
        let fname = f.name.clone();
        let succs: BTreeMap<u64, Vec<u64>> = cfg
            .blocks
            .iter()
            .map(|(s, b)| (*s, b.succs.clone()))
            .collect();
        if cfg.blocks.contains_key(&f.addr) {
            for lp in loops::natural_loops(f.addr, &succs) {
                let id_base = format!("l_{fname}_{:x}", lp.header - f.addr);
                let id = self.fresh_id(&id_base);
                let addrs = body_addrs(cfg, &lp.body);
                // The closing branch of the last latch anchors the lines.
                let anchor = lp
                    .latches
                    .iter()
                    .filter_map(|l| cfg.blocks.get(l))
                    .map(|b| cfg.last(b).addr)
                    .max();
                let location = self.lines_of(&addrs, anchor);
                candidates.push(Candidate {
                    map: RegionMap {
                        id: id.clone(),
                        unit: index,
                        kind: RegionKind::Loop { header: lp.header },
                        body: lp.body.clone(),
                        parent: None,
                    },
                    rank: 1,
                    location,
                    sir: CodeRegion::new(id, RegionType::Loop),
                });
            }
        }
        candidates
    }

    /// The function's ARP sections and call sites, as candidate regions.
    fn call_candidates(
        &mut self,
        index: usize,
        f: &Function,
        cfg: &FunctionCfg,
        candidates: &mut Vec<Candidate>,
    ) {
        let fname = f.name.clone();
        let mut sections = 0;
        for (start, b) in &cfg.blocks {
            let last_index = b.insns.end - 1;
            let last = &cfg.insns[last_index];
            let (target, ret, tail) = match last.flow {
                Flow::Call(t) => (t, Some(last.next()), false),
                Flow::Jump(t) if !(cfg.addr..cfg.end).contains(&t) => (Some(t), None, true),
                _ => continue,
            };
            let callee = target.and_then(|t| self.image.function_at(t).filter(|c| c.addr == t));
            let callee_name = callee.map(|c| c.name.clone());
            if let Some(kind) = callee_name.as_deref().and_then(SectionKind::enter) {
                if tail {
                    continue;
                }
                sections += 1;
                let sid = cfg::arg1_before(&cfg.insns, last_index);
                if let Some(c) = self.section(index, f, cfg, last.addr, sid, kind, sections) {
                    candidates.push(c);
                }
                continue;
            }
            if callee_name
                .as_deref()
                .and_then(SectionKind::leave)
                .is_some()
            {
                continue;
            }
            let id = self.fresh_id(&format!("c_{fname}_{:x}", last.addr - f.addr));
            let callee_sir = match (target, callee) {
                (Some(t), Some(_)) => match self.map.entries.get(&t) {
                    Some(&u) => Callee::to_id(self.map.units[u].id.clone()),
                    None => Callee::to_name(callee_name.clone().unwrap_or_default()),
                },
                (Some(t), None) => Callee::to_name(format!("{t:#x}")),
                (None, _) => Callee::to_name("?"),
            };
            let location = self.frames(last.addr).first().and_then(|fr| {
                Some(Location::lines(
                    file_uri(fr.file.as_deref()?),
                    u64::from(fr.line?),
                    u64::from(fr.line?),
                ))
            });
            let mut region = CodeRegion::call(id.clone(), callee_sir);
            region.location = location.clone();
            candidates.push(Candidate {
                map: RegionMap {
                    id,
                    unit: index,
                    kind: RegionKind::Call {
                        site: last.addr,
                        callee: target,
                        ret,
                    },
                    body: BTreeSet::from([*start]),
                    parent: None,
                },
                rank: 2,
                location,
                sir: region,
            });
        }
    }

    /// Adds the candidates to the map's regions, with their parents, and
    /// to each block its loops and sections (outermost first) and call
    /// site; returns the index of the first.
    fn record_regions(&mut self, candidates: &[Candidate], parents: &[Option<usize>]) -> usize {
        let n = candidates.len();
        let base = self.map.regions.len();
        for (i, c) in candidates.iter().enumerate() {
            let mut m = c.map.clone();
            m.parent = parents[i].map(|p| base + p);
            self.map.regions.push(m);
        }
        // Blocks: their loops and sections, outermost first, and call sites.
        let depth = |mut i: usize| {
            let mut d = 0;
            while let Some(p) = parents[i] {
                d += 1;
                i = p;
                if d > n {
                    break;
                }
            }
            d
        };
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|i| (depth(*i), *i));
        for i in order {
            let c = &candidates[i];
            for blk in &c.map.body {
                let Some(b) = self.map.blocks.get_mut(blk) else {
                    continue;
                };
                match c.map.kind {
                    RegionKind::Call { .. } => b.call = Some(base + i),
                    _ => b.regions.push(base + i),
                }
            }
        }
        base
    }

    /// The SIR tree of the candidates, children in address order.
    fn region_tree(
        &self,
        base: usize,
        candidates: Vec<Candidate>,
        parents: &[Option<usize>],
    ) -> Vec<CodeRegion> {
        let n = candidates.len();
        // The SIR tree, children in address order.
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, parent) in parents.iter().enumerate() {
            match *parent {
                Some(p) => children[p].push(i),
                None => roots.push(i),
            }
        }
        let mut regions: Vec<Option<CodeRegion>> = candidates
            .into_iter()
            .map(|c| {
                let mut r = c.sir;
                r.location = c.location;
                Some(r)
            })
            .collect();
        let lows: Vec<u64> = self.map.regions[base..]
            .iter()
            .map(|r| match r.kind {
                RegionKind::Call { site, .. } => site,
                RegionKind::Section { start, .. } => start,
                RegionKind::Loop { .. } => *r.body.first().unwrap_or(&0),
            })
            .collect();
        fn build(
            i: usize,
            children: &[Vec<usize>],
            lows: &[u64],
            regions: &mut [Option<CodeRegion>],
        ) -> CodeRegion {
            let mut kids = children[i].clone();
            kids.sort_by_key(|k| (lows[*k], *k));
            let mut r = regions[i]
                .take()
                .unwrap_or_else(|| CodeRegion::new("_", RegionType::Block));
            for k in kids {
                let child = build(k, children, lows, regions);
                r.push_region(child);
            }
            r
        }
        roots.sort_by_key(|k| (lows[*k], *k));
        roots
            .into_iter()
            .map(|r| build(r, &children, &lows, &mut regions))
            .collect()
    }

    /// `f`'s labels that can name a section; labels of one kind at one
    /// address name none, and are said once (when a section that needs
    /// them, one without a given name, meets them).
    fn attributable(&mut self, labels: &[Label], f: &Function, needed: bool) -> Vec<Label> {
        let (usable, collisions) = attributable_labels(labels, f);
        for c in collisions.into_iter().filter(|_| needed) {
            if self.said_collisions.insert(c.addr) {
                self.warnings.push(format!(
                    "{}: labels {} are all at {:#010x}: the compiler gave them one address, \
                     so none of them names a section (ARP_SECTION_NAME in atomium_rp.h \
                     names a section whatever the optimiser does)",
                    f.name,
                    c.names.join(", "),
                    c.addr
                ));
            }
        }
        usable
    }

    /// The section opened by the enter call at `call_addr`.
    #[allow(clippy::too_many_arguments)]
    fn section(
        &mut self,
        index: usize,
        f: &Function,
        cfg: &FunctionCfg,
        call_addr: u64,
        sid: Option<i64>,
        kind: SectionKind,
        n: usize,
    ) -> Option<Candidate> {
        let start = call_addr
            + cfg
                .insns
                .iter()
                .find(|i| i.addr == call_addr)
                .map_or(0, |i| u64::from(i.size));
        if !cfg.blocks.contains_key(&start) {
            self.warnings.push(format!(
                "{}: the section entered at {call_addr:#010x} has no code after the call",
                f.name
            ));
            return None;
        }
        let body = section_body(self.image, cfg, start, sid, kind);
        let given = sid
            .and_then(|s| u16::try_from(s).ok())
            .and_then(|s| self.image.arp_names.get(s));
        let label = self.debug.and_then(|debug| {
            let usable = self.attributable(&debug.labels, f, given.is_none());
            section_label(
                &usable,
                &self.used_labels,
                f,
                cfg,
                call_addr,
                start,
                &body,
                kind,
            )
        });
        let addrs = body_addrs(cfg, &body);
        let location = self.lines_of(&addrs, Some(call_addr));
        if let Some(l) = &label {
            self.used_labels.insert(l.addr);
        }
        let (id, name) = match (given, &label) {
            // ARP_SECTION_NAME first (`observe::section_names`'s rule);
            // the id stays what the label or the place makes it
            (Some(given), Some(l)) => (self.fresh_id(&l.name), given.to_owned()),
            (None, Some(l)) => (self.fresh_id(&l.name), l.name.clone()),
            (given, None) => {
                let sid_text = sid.map_or("unknown".to_string(), |s| s.to_string());
                let line = self.frames(call_addr).first().and_then(|fr| fr.line);
                let name = match (given, line) {
                    (Some(given), _) => given.to_owned(),
                    (None, Some(line)) => format!("{}:{line}", f.name),
                    (None, None) => format!("{}+{:#x}", f.name, call_addr - f.addr),
                };
                (self.fresh_id(&format!("s{sid_text}_{}_{n}", f.name)), name)
            }
        };
        let mut region = CodeRegion::new(id.clone(), RegionType::Other("userRegion".into()));
        region.annotations.set(ARP_NS, "kind", kind.as_str());
        region.annotations.set(ARP_NS, "name", name.clone());
        if let Some(sid) = sid {
            region.annotations.set(ARP_NS, "sid", sid.to_string());
        } else {
            self.warnings.push(format!(
                "{}: no immediate section id before the enter call at {call_addr:#010x}",
                f.name
            ));
        }
        Some(Candidate {
            map: RegionMap {
                id,
                unit: index,
                kind: RegionKind::Section {
                    sid,
                    kind,
                    start,
                    name,
                },
                body,
                parent: None,
            },
            rank: 0,
            location,
            sir: region,
        })
    }
}

/// The blocks of the section entered by the call returning to `start`:
/// the code reachable from `start` without passing a leave call of the
/// same kind (and section id, when both are known).
pub(crate) fn section_body(
    image: &GuestImage,
    cfg: &FunctionCfg,
    start: u64,
    sid: Option<i64>,
    kind: SectionKind,
) -> BTreeSet<u64> {
    let mut body = BTreeSet::new();
    let mut work = vec![start];
    while let Some(b) = work.pop() {
        if !body.insert(b) {
            continue;
        }
        let Some(block) = cfg.blocks.get(&b) else {
            continue;
        };
        let last_index = block.insns.end - 1;
        let last = &cfg.insns[last_index];
        let target = match last.flow {
            Flow::Call(Some(t)) | Flow::Jump(t) => Some(t),
            _ => None,
        };
        let leaves = target
            .and_then(|t| image.function_at(t).filter(|c| c.addr == t))
            .and_then(|c| SectionKind::leave(&c.name))
            .is_some_and(|k| {
                k == kind && {
                    let leave_sid = cfg::arg1_before(&cfg.insns, last_index);
                    leave_sid.is_none() || sid.is_none() || leave_sid == sid
                }
            });
        if !leaves {
            work.extend(block.succs.iter().copied());
        }
    }
    body
}

/// The section's label (the manual's `ato_kernel*` / `ato_profile*`, by
/// its kind): one of `labels` not `used` yet, in `f`, after the enter call
/// at `call_addr` (at `start` or inside `body`) or before it in the
/// call's own block (the compiler may schedule the call's argument set-up
/// after the label), the nearest to `start`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn section_label(
    labels: &[Label],
    used: &HashSet<u64>,
    f: &Function,
    cfg: &FunctionCfg,
    call_addr: u64,
    start: u64,
    body: &BTreeSet<u64>,
    kind: SectionKind,
) -> Option<crate::image::dwarf::Label> {
    let prefix = kind.label_prefix()?;
    let call_block = cfg
        .blocks
        .range(..=call_addr)
        .next_back()
        .map_or(
            call_addr,
            |(s, b)| if call_addr < b.end { *s } else { call_addr },
        );
    let in_body = |addr: u64| {
        addr == start
            || body.iter().any(|b| {
                cfg.blocks
                    .get(b)
                    .is_some_and(|blk| (blk.start..blk.end).contains(&addr))
            })
    };
    labels
        .iter()
        .filter(|l| l.name.starts_with(prefix) && !used.contains(&l.addr))
        .filter(|l| l.addr >= f.addr && l.addr < f.addr + f.size)
        .filter(|l| {
            (l.addr >= call_addr && in_body(l.addr)) || (call_block..=call_addr).contains(&l.addr)
        })
        .min_by_key(|l| l.addr.abs_diff(start))
        .cloned()
}

/// The ARP manual's label prefix of `name`, if it is a section label.
pub(crate) fn label_prefix(name: &str) -> Option<&'static str> {
    ["ato_kernel", "ato_profile"]
        .into_iter()
        .find(|p| name.starts_with(p))
}

/// Labels of one kind that share an address: they cannot tell their
/// sections apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Collision {
    pub addr: u64,
    pub prefix: &'static str,
    pub names: Vec<String>,
}

/// `f`'s section labels that can name a section, and the collisions set
/// aside.
pub(crate) fn attributable_labels(labels: &[Label], f: &Function) -> (Vec<Label>, Vec<Collision>) {
    let mine: Vec<&Label> = labels
        .iter()
        .filter(|l| (f.addr..f.addr + f.size).contains(&l.addr))
        .collect();
    let mut groups: BTreeMap<(u64, &'static str), Vec<String>> = BTreeMap::new();
    for l in &mine {
        let names = groups
            .entry((l.addr, label_prefix(&l.name).unwrap_or("")))
            .or_default();
        if !names.contains(&l.name) {
            names.push(l.name.clone());
        }
    }
    let collisions: Vec<Collision> = groups
        .into_iter()
        .filter(|(_, names)| names.len() > 1)
        .map(|((addr, prefix), names)| Collision {
            addr,
            prefix,
            names,
        })
        .collect();
    let usable = mine
        .into_iter()
        .filter(|l| {
            !collisions
                .iter()
                .any(|c| c.names.contains(&l.name) && c.addr == l.addr)
        })
        .cloned()
        .collect();
    (usable, collisions)
}

/// Every instruction address of the blocks `body`.
fn body_addrs(cfg: &FunctionCfg, body: &BTreeSet<u64>) -> Vec<u64> {
    body.iter()
        .filter_map(|b| cfg.blocks.get(b))
        .flat_map(|b| cfg.block_insns(b).iter().map(|i| i.addr))
        .collect()
}

/// Nesting: each candidate's smallest enclosing region (sections before
/// loops with equal code, earlier before later with equal rank).
fn nesting(candidates: &[Candidate]) -> Vec<Option<usize>> {
    let n = candidates.len();
    let mut parents = vec![None; n];
    for (i, parent) in parents.iter_mut().enumerate() {
        let mut best: Option<usize> = None;
        for j in 0..n {
            if i == j || candidates[j].rank == 2 {
                continue;
            }
            let (a, b) = (&candidates[i], &candidates[j]);
            if !b.map.body.is_superset(&a.map.body) {
                continue;
            }
            if b.map.body.len() == a.map.body.len() && (b.rank, j) > (a.rank, i) {
                continue;
            }
            let better = match best {
                None => true,
                Some(k) => {
                    let c = &candidates[k];
                    (
                        b.map.body.len(),
                        std::cmp::Reverse(b.rank),
                        std::cmp::Reverse(j),
                    ) < (
                        c.map.body.len(),
                        std::cmp::Reverse(c.rank),
                        std::cmp::Reverse(k),
                    )
                }
            };
            if better {
                best = Some(j);
            }
        }
        *parent = best;
    }
    parents
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_xml_names_and_unique() {
        assert_eq!(xml_name("foo.constprop.0"), "foo.constprop.0");
        assert_eq!(xml_name("0bad name"), "_0bad_name");
        let image = GuestImage {
            file: "x.elf".into(),
            arch: crate::model::target::Arch::Arm,
            entry: 0,
            segments: Vec::new(),
            functions: Vec::new(),
            symbols: Vec::new(),
            needs: None,
            arp_names: Default::default(),
        };
        let mut warnings = Vec::new();
        let mut b = Builder {
            image: &image,
            debug: None,
            frames: HashMap::new(),
            ids: HashSet::new(),
            map: ProfileMap::default(),
            warnings: &mut warnings,
            used_labels: HashSet::new(),
            said_collisions: HashSet::new(),
        };
        assert_eq!(b.fresh_id("u_f"), "u_f");
        assert_eq!(b.fresh_id("u_f"), "u_f_2");
        assert_eq!(b.fresh_id("u f"), "u_f_3");
    }

    #[test]
    fn section_kinds_pair_enter_and_leave() {
        assert_eq!(
            SectionKind::enter("arp_enter_kernel"),
            Some(SectionKind::Kernel)
        );
        assert_eq!(
            SectionKind::leave("arp_leave_kernel"),
            Some(SectionKind::Kernel)
        );
        assert_eq!(SectionKind::enter("arp_leave"), None);
        assert_eq!(SectionKind::Profiled.label_prefix(), Some("ato_profile"));
    }
}
