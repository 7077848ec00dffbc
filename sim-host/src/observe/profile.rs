//! Measuring the units and regions of a generated SIR while the guest runs,
//! and writing the measurements into the SIR as `m:` annotations.
//!
//! [`ProfileCollector`] is an [`ExecutionObserver`]. For every executed
//! translation block it finds the analysed blocks the translation block
//! covers ([`ProfileMap::blocks`]) and
//! - follows calls and returns with a shadow stack of frames (a block after
//!   a call instruction opens a frame; reaching a frame's return address
//!   closes it and those above it; a jump to another function's entry is a
//!   tail call and replaces the top frame; a tail call that has a call
//!   region in the SIR keeps its caller's frame open instead, so the call
//!   region measures the callee);
//! - in the top frame, opens a loop or section region when one of its blocks
//!   executes while it is not open, and closes it when a block of the same
//!   frame outside it executes (or the frame closes); a loop's header
//!   executing while the loop is open is one more trip. So a loop's trip
//!   count per entry is how often its header runs before it is left: the
//!   loop bound of seed 002 ("the actual values of the loop bounds"), as the
//!   machine code runs it (a compiler that peels an iteration leaves one
//!   trip fewer in the loop);
//! - charges the block's cycles and instructions to the innermost open
//!   region containing it (exclusive), or to its unit. A translation block
//!   spanning several analysed blocks (fall-through into a branch target)
//!   is split between them in proportion to their instructions.
//!
//! Inclusive cycles and instructions of a unit, region or call site are the
//! machine's counters between its opening and closing; recursive activations
//! count once (only the outermost adds).
//!
//! ARP sections are measured by their code (the blocks reachable from the
//! enter call to the leave call), like loops, not from the ARP statistics:
//! the same rule then holds for every region, and a section's inclusive
//! cycles include its enter/leave bookkeeping exactly as the block model
//! charges it (the intercepted entry points cost nothing).
//!
//! With memory observation ([`ProfileCollector::new`]'s `memory`), every
//! load and store is recorded per instruction: lowest and highest address
//! and the histogram of strides between its consecutive accesses (seed 002:
//! "virtual array address ranges", "array stride information"). A loop's
//! range covers the accesses of all its code (nested loops included); its
//! stride is the most frequent stride of the accesses whose innermost loop
//! it is (ties: the smaller magnitude), so an inner loop walking a row
//! shows 1 and the loop over rows shows the row length.

use crate::engine::{ExceptionEvent, ExecutionObserver, Observer};
use crate::image::elf::GuestImage;
use crate::model::target::Target;
use crate::observe::shadow::{Returns, ShadowStack};
use crate::observe::sirgen::{self, Dialect, Generated, ProfileMap, RegionKind, SirGenError};
use sir::annotation::{Metric, MEASURE_NS};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("{file}: cannot read: {source}")]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}: cannot write: {source}")]
    WriteFile {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    SirGen(#[from] SirGenError),
    #[error("{file}: cannot write the SIR: {message}")]
    Sir { file: PathBuf, message: String },
}

/// Loop trip counts per entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TripCounts {
    pub min: u64,
    pub max: u64,
    /// Sum over all entries.
    pub total: u64,
    pub entries: u64,
}

impl TripCounts {
    pub fn mean(&self) -> f64 {
        if self.entries == 0 {
            0.0
        } else {
            self.total as f64 / self.entries as f64
        }
    }

    fn add(this: &mut Option<TripCounts>, trips: u64) {
        match this {
            None => {
                *this = Some(TripCounts {
                    min: trips,
                    max: trips,
                    total: trips,
                    entries: 1,
                })
            }
            Some(t) => {
                t.min = t.min.min(trips);
                t.max = t.max.max(trips);
                t.total += trips;
                t.entries += 1;
            }
        }
    }
}

/// Loads or stores of a loop: how many, the address range, the dominant stride.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Accesses {
    pub count: u64,
    pub low: u64,
    /// Highest byte address touched.
    pub high: u64,
    /// Dominant stride in bytes of the accesses whose innermost loop this is.
    pub stride: Option<i64>,
}

/// What was measured for one unit or region.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Measure {
    pub inclusive_cycles: u64,
    pub exclusive_cycles: u64,
    /// Instructions, inclusive.
    pub instructions: u64,
    pub exclusive_instructions: u64,
    /// Calls of a unit or call site, entries of a loop or section.
    pub executions: u64,
    pub trips: Option<TripCounts>,
    pub loads: Option<Accesses>,
    pub stores: Option<Accesses>,
    /// Dominant stride of loads and stores together.
    pub stride: Option<i64>,
}

/// The measurements of a run, by SIR id.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ProfileData {
    pub total_cycles: u64,
    pub total_instructions: u64,
    /// Cycles and instructions of code outside every function symbol.
    pub outside_cycles: u64,
    pub outside_instructions: u64,
    pub units: BTreeMap<String, Measure>,
    pub regions: BTreeMap<String, Measure>,
}

/// A part of a translation block that lies in one analysed block.
#[derive(Debug, Clone, Copy)]
struct Chunk {
    /// Index into [`ProfileCollector::blocks`]; `None` for code outside them.
    block: Option<u32>,
    /// The unit of code outside the analysed blocks.
    unit: Option<usize>,
    at_start: bool,
    instructions: u32,
}

/// What the hot path needs about a translation block, computed once.
#[derive(Debug)]
struct Tb {
    chunks: Box<[Chunk]>,
    instructions: u32,
    /// The unit whose entry it starts at.
    entry_unit: Option<usize>,
}

/// Guest addresses are well spread: FxHash is enough and much cheaper
/// than SipHash on the per-block path.
type AddrMap<V> = rustc_hash::FxHashMap<u64, V>;

#[derive(Debug, Clone)]
struct Active {
    region: usize,
    cycles: u64,
    instructions: u64,
    trips: u64,
}

#[derive(Debug, Clone)]
struct Frame {
    unit: Option<usize>,
    ret: Option<u64>,
    call: Option<usize>,
    cycles: u64,
    instructions: u64,
    call_cycles: u64,
    call_instructions: u64,
    active: Vec<Active>,
}

impl Returns for Frame {
    fn return_address(&self) -> Option<u64> {
        self.ret
    }
}

#[derive(Debug, Clone, Default)]
struct Counters {
    inclusive_cycles: u64,
    exclusive_cycles: u64,
    instructions: u64,
    exclusive_instructions: u64,
    executions: u64,
    depth: u32,
    trips: Option<TripCounts>,
}

#[derive(Debug, Clone, Default)]
struct Reference {
    write: bool,
    count: u64,
    low: u64,
    high: u64,
    last: Option<u64>,
    strides: HashMap<i64, u64>,
}

/// Distinct strides kept per instruction (the rest are not dominant).
const MAX_STRIDES: usize = 64;

/// A call the last block made, opened at the next block: the return
/// address and the call site's region.
type PendingCall = (Option<u64>, Option<usize>);

/// Collects a profile of the units and regions of a [`ProfileMap`].
#[derive(Debug)]
pub struct ProfileCollector {
    // Shared so that the hot path can read it while updating counters.
    map: Rc<ProfileMap>,
    /// The map's blocks in address order, indexed by [`Chunk::block`].
    blocks: Rc<[(u64, crate::observe::sirgen::BlockMap)]>,
    memory: bool,
    tbs: AddrMap<Rc<Tb>>,
    cycles: u64,
    instructions: u64,
    frames: ShadowStack<Frame>,
    pending_call: Option<PendingCall>,
    /// An exception was entered: the next block opens its handler's frame.
    entering: bool,
    /// The exceptions being handled, innermost last: the frame depth and
    /// the pending call they interrupted.
    handlers: Vec<(usize, Option<PendingCall>)>,
    units: Vec<Counters>,
    regions: Vec<Counters>,
    refs: AddrMap<Reference>,
    outside: (u64, u64),
}

impl ProfileCollector {
    /// A collector for the code described by `map`; `memory` also records
    /// loads and stores (slow: a hook per access).
    pub fn new(map: ProfileMap, memory: bool) -> ProfileCollector {
        let units = vec![Counters::default(); map.units.len()];
        let regions = vec![Counters::default(); map.regions.len()];
        let blocks: Vec<(u64, crate::observe::sirgen::BlockMap)> =
            map.blocks.iter().map(|(s, b)| (*s, b.clone())).collect();
        ProfileCollector {
            map: Rc::new(map),
            blocks: blocks.into(),
            memory,
            tbs: AddrMap::default(),
            cycles: 0,
            instructions: 0,
            frames: ShadowStack::default(),
            pending_call: None,
            entering: false,
            handlers: Vec::new(),
            units,
            regions,
            refs: AddrMap::default(),
            outside: (0, 0),
        }
    }

    /// The analysed blocks a translation block of `n` instructions at `addr` covers.
    fn tb(&self, addr: u64, n: u32) -> Tb {
        let entry_unit = self.map.entries.get(&addr).copied();
        let tb = |chunks: Vec<Chunk>| Tb {
            chunks: chunks.into(),
            instructions: n,
            entry_unit,
        };
        let index = self.blocks.partition_point(|(s, _)| *s <= addr);
        let found = index
            .checked_sub(1)
            .filter(|i| addr < self.blocks[*i].1.end);
        let Some(mut i) = found else {
            return tb(vec![Chunk {
                block: None,
                unit: self.map.unit_at(addr),
                at_start: false,
                instructions: n,
            }]);
        };
        if self.blocks[i].0 != addr {
            // Entered mid-block (after a semihosting call, a page boundary):
            // the rest of the translation block is charged to this block.
            return tb(vec![Chunk {
                block: Some(i as u32),
                unit: None,
                at_start: false,
                instructions: n,
            }]);
        }
        let mut out = Vec::new();
        let mut remaining = n;
        loop {
            let b = &self.blocks[i].1;
            let take = remaining.min(b.instructions);
            out.push(Chunk {
                block: Some(i as u32),
                unit: None,
                at_start: true,
                instructions: take,
            });
            remaining -= take;
            if remaining == 0 {
                break;
            }
            match self.blocks.get(i + 1) {
                Some((start, next)) if *start == b.end && next.unit == b.unit => i += 1,
                _ => {
                    if let Some(last) = out.last_mut() {
                        last.instructions += remaining;
                    }
                    break;
                }
            }
        }
        tb(out)
    }

    fn open_frame(
        &mut self,
        addr: u64,
        ret: Option<u64>,
        call: Option<usize>,
        call_at: (u64, u64),
    ) {
        let unit = self.map.unit_at(addr);
        if let Some(u) = unit {
            let c = &mut self.units[u];
            c.depth += 1;
            if self.map.units[u].start == addr {
                c.executions += 1;
            }
        }
        let evicted = self.frames.push(Frame {
            unit,
            ret,
            call,
            cycles: self.cycles,
            instructions: self.instructions,
            call_cycles: call_at.0,
            call_instructions: call_at.1,
            active: Vec::new(),
        });
        // a full shadow stack closes its oldest frame (runaway recursion,
        // calls that never return)
        if let Some(oldest) = evicted {
            self.close(oldest, false);
        }
    }

    fn close_region(&mut self, a: Active) {
        let c = &mut self.regions[a.region];
        c.depth = c.depth.saturating_sub(1);
        if c.depth == 0 {
            c.inclusive_cycles += self.cycles - a.cycles;
            c.instructions += self.instructions - a.instructions;
        }
        if matches!(self.map.regions[a.region].kind, RegionKind::Loop { .. }) {
            TripCounts::add(&mut c.trips, a.trips);
        }
    }

    /// Closes the top frame; `keep_call` hands its call site on (tail call).
    fn close_frame(&mut self, keep_call: bool) -> Option<Frame> {
        let frame = self.frames.pop()?;
        Some(self.close(frame, keep_call))
    }

    /// Charges a frame taken off the stack (see [`Self::close_frame`]).
    fn close(&mut self, mut frame: Frame, keep_call: bool) -> Frame {
        while let Some(a) = frame.active.pop() {
            self.close_region(a);
        }
        if let Some(u) = frame.unit {
            let c = &mut self.units[u];
            c.depth = c.depth.saturating_sub(1);
            if c.depth == 0 {
                c.inclusive_cycles += self.cycles - frame.cycles;
                c.instructions += self.instructions - frame.instructions;
            }
        }
        if !keep_call {
            if let Some(site) = frame.call {
                let c = &mut self.regions[site];
                c.depth = c.depth.saturating_sub(1);
                if c.depth == 0 {
                    c.inclusive_cycles += self.cycles - frame.call_cycles;
                    c.instructions += self.instructions - frame.call_instructions;
                }
            }
        }
        frame
    }

    /// Calls, returns and tail calls, decided at the start of a translation block.
    fn transfer(&mut self, addr: u64, entry_unit: Option<usize>) {
        if std::mem::take(&mut self.entering) {
            self.open_frame(addr, None, None, (self.cycles, self.instructions));
            return;
        }
        if let Some((ret, call)) = self.pending_call.take() {
            let at = (self.cycles, self.instructions);
            if let Some(site) = call {
                self.regions[site].depth += 1;
            }
            self.open_frame(addr, ret, call, at);
            return;
        }
        if let Some(pos) = self.frames.returning_to(addr) {
            while self.frames.len() > pos {
                self.close_frame(false);
            }
            return;
        }
        if let Some(u) = entry_unit {
            let top_unit = self.frames.last().and_then(|f| f.unit);
            if top_unit != Some(u) {
                match self.close_frame(true) {
                    Some(old) => self.open_frame(
                        addr,
                        old.ret,
                        old.call,
                        (old.call_cycles, old.call_instructions),
                    ),
                    None => self.open_frame(addr, None, None, (self.cycles, self.instructions)),
                }
            }
            return;
        }
        if self.frames.is_empty() {
            self.open_frame(addr, None, None, (self.cycles, self.instructions));
        }
    }

    /// One analysed block (or unknown code) runs with `cycles` and `n` instructions.
    fn execute(&mut self, chunk: Chunk, cycles: u64, n: u64) {
        let Some(index) = chunk.block else {
            match chunk.unit {
                Some(u) => {
                    self.units[u].exclusive_cycles += cycles;
                    self.units[u].exclusive_instructions += n;
                }
                None => {
                    self.outside.0 += cycles;
                    self.outside.1 += n;
                }
            }
            return;
        };
        let map = Rc::clone(&self.map);
        let blocks = Rc::clone(&self.blocks);
        let (start, block) = &blocks[index as usize];
        let start = *start;
        let unit = block.unit;
        let regions = &block.regions;
        let in_frame = self.frames.last().is_some_and(|f| f.unit == Some(unit));
        if in_frame {
            let mut frame = self.frames.pop().expect("checked above");
            let mut i = 0;
            while i < frame.active.len() {
                if regions.contains(&frame.active[i].region) {
                    i += 1;
                } else {
                    let a = frame.active.remove(i);
                    self.close_region(a);
                }
            }
            for r in regions {
                if let Some(a) = frame.active.iter_mut().find(|a| a.region == *r) {
                    let header = matches!(map.regions[*r].kind, RegionKind::Loop { header } if header == start);
                    if header && chunk.at_start {
                        a.trips += 1;
                    }
                } else {
                    let c = &mut self.regions[*r];
                    c.depth += 1;
                    c.executions += 1;
                    frame.active.push(Active {
                        region: *r,
                        cycles: self.cycles,
                        instructions: self.instructions,
                        trips: 1,
                    });
                }
            }
            self.frames.push(frame);
        }
        match regions.last() {
            Some(&r) if in_frame => {
                self.regions[r].exclusive_cycles += cycles;
                self.regions[r].exclusive_instructions += n;
            }
            _ => {
                self.units[unit].exclusive_cycles += cycles;
                self.units[unit].exclusive_instructions += n;
            }
        }
    }

    /// The measurements so far; frames and regions still open (the guest
    /// exits from inside `main`) are closed at the last cycle count.
    pub fn data(&self) -> ProfileData {
        let mut copy = ProfileCollector {
            map: Rc::clone(&self.map),
            blocks: Rc::clone(&self.blocks),
            memory: false,
            tbs: AddrMap::default(),
            cycles: self.cycles,
            instructions: self.instructions,
            frames: self.frames.clone(),
            pending_call: None,
            entering: false,
            handlers: Vec::new(),
            units: self.units.clone(),
            regions: self.regions.clone(),
            refs: AddrMap::default(),
            outside: self.outside,
        };
        while copy.close_frame(false).is_some() {}
        let measure = |c: &Counters| Measure {
            inclusive_cycles: c.inclusive_cycles,
            exclusive_cycles: c.exclusive_cycles,
            instructions: c.instructions,
            exclusive_instructions: c.exclusive_instructions,
            executions: c.executions,
            trips: c.trips,
            ..Measure::default()
        };
        let mut data = ProfileData {
            total_cycles: self.cycles,
            total_instructions: self.instructions,
            outside_cycles: self.outside.0,
            outside_instructions: self.outside.1,
            units: BTreeMap::new(),
            regions: BTreeMap::new(),
        };
        for (u, c) in self.map.units.iter().zip(&copy.units) {
            data.units.insert(u.id.clone(), measure(c));
        }
        let mut regions: Vec<Measure> = copy.regions.iter().map(measure).collect();
        self.memory_measures(&mut regions);
        for (r, m) in self.map.regions.iter().zip(regions) {
            data.regions.insert(r.id.clone(), m);
        }
        data
    }

    fn memory_measures(&self, regions: &mut [Measure]) {
        #[derive(Default, Clone)]
        struct Acc {
            loads: Option<(u64, u64, u64)>,
            stores: Option<(u64, u64, u64)>,
            load_strides: HashMap<i64, u64>,
            store_strides: HashMap<i64, u64>,
        }
        let mut accs = vec![Acc::default(); regions.len()];
        let merge = |slot: &mut Option<(u64, u64, u64)>, r: &Reference| {
            *slot = Some(match *slot {
                None => (r.count, r.low, r.high),
                Some((n, lo, hi)) => (n + r.count, lo.min(r.low), hi.max(r.high)),
            });
        };
        for (pc, r) in &self.refs {
            let Some((_, block)) = self.map.block_at(*pc) else {
                continue;
            };
            let loops: Vec<usize> = block
                .regions
                .iter()
                .copied()
                .filter(|i| matches!(self.map.regions[*i].kind, RegionKind::Loop { .. }))
                .collect();
            for (k, l) in loops.iter().enumerate() {
                let acc = &mut accs[*l];
                merge(
                    if r.write {
                        &mut acc.stores
                    } else {
                        &mut acc.loads
                    },
                    r,
                );
                if k + 1 == loops.len() {
                    let strides = if r.write {
                        &mut acc.store_strides
                    } else {
                        &mut acc.load_strides
                    };
                    for (s, n) in &r.strides {
                        *strides.entry(*s).or_default() += n;
                    }
                }
            }
        }
        let dominant = |h: &HashMap<i64, u64>| {
            h.iter()
                .max_by(|a, b| {
                    a.1.cmp(b.1)
                        .then(b.0.abs().cmp(&a.0.abs()))
                        .then(b.0.cmp(a.0))
                })
                .map(|(s, _)| *s)
        };
        for (m, acc) in regions.iter_mut().zip(accs) {
            let make = |slot: Option<(u64, u64, u64)>, strides: &HashMap<i64, u64>| {
                slot.map(|(count, low, high)| Accesses {
                    count,
                    low,
                    high,
                    stride: dominant(strides),
                })
            };
            m.loads = make(acc.loads, &acc.load_strides);
            m.stores = make(acc.stores, &acc.store_strides);
            let mut all = acc.load_strides.clone();
            for (s, n) in &acc.store_strides {
                *all.entry(*s).or_default() += n;
            }
            m.stride = dominant(&all);
        }
    }
}

impl ExecutionObserver for ProfileCollector {
    /// Counts start again; the analysed translation blocks stay.
    fn reset(&mut self) {
        self.cycles = 0;
        self.instructions = 0;
        self.frames.clear();
        self.pending_call = None;
        self.entering = false;
        self.handlers.clear();
        self.units.fill(Counters::default());
        self.regions.fill(Counters::default());
        self.refs.clear();
        self.outside = (0, 0);
    }

    fn block(&mut self, addr: u64, instructions: u32, cycles_before: u64, cycles_after: u64) {
        let tb = match self.tbs.get(&addr) {
            Some(tb) if tb.instructions == instructions => Rc::clone(tb),
            _ => {
                let tb = Rc::new(self.tb(addr, instructions));
                self.tbs.insert(addr, Rc::clone(&tb));
                tb
            }
        };
        let chunks = &tb.chunks;
        self.cycles = cycles_before;
        self.transfer(addr, tb.entry_unit);
        let total = cycles_after.saturating_sub(cycles_before);
        let mut left = total;
        let count = chunks.len();
        for (k, chunk) in chunks.iter().enumerate() {
            let share = if k + 1 == count {
                left
            } else if instructions == 0 {
                0
            } else {
                total * u64::from(chunk.instructions) / u64::from(instructions)
            };
            left -= share;
            self.execute(*chunk, share, u64::from(chunk.instructions));
            self.cycles += share;
            self.instructions += u64::from(chunk.instructions);
        }
        self.cycles = cycles_after;
        // A call ends the translation block: the next block is the callee.
        if let Some(last) = chunks.last().and_then(|c| c.block) {
            let b = &self.blocks[last as usize].1;
            if let Some(site) = b.call {
                self.regions[site].executions += 1;
            }
            if b.returns_to.is_some() || b.call.is_some() {
                self.pending_call = Some((b.returns_to, b.call));
            }
        }
    }

    /// A handler runs like a function called from the code it interrupted;
    /// its return closes every frame opened since and restores the call
    /// the interrupted block was making.
    fn exception(&mut self, event: ExceptionEvent) {
        match event {
            ExceptionEvent::Entered { .. } => {
                self.handlers
                    .push((self.frames.len(), self.pending_call.take()));
                self.entering = true;
            }
            ExceptionEvent::Returned => {
                let Some((depth, pending)) = self.handlers.pop() else {
                    return;
                };
                self.entering = false;
                while self.frames.len() > depth {
                    self.close_frame(false);
                }
                self.pending_call = pending;
            }
        }
    }

    fn memory(&mut self, pc: u64, addr: u64, size: usize, write: bool) {
        let r = self.refs.entry(pc).or_insert_with(|| Reference {
            write,
            low: addr,
            high: addr,
            ..Reference::default()
        });
        r.count += 1;
        r.low = r.low.min(addr);
        r.high = r.high.max(addr + size.max(1) as u64 - 1);
        if let Some(last) = r.last {
            let stride = addr as i64 - last as i64;
            if r.strides.len() < MAX_STRIDES || r.strides.contains_key(&stride) {
                *r.strides.entry(stride).or_default() += 1;
            }
        }
        r.last = Some(addr);
    }

    fn wants_memory(&self) -> bool {
        self.memory
    }
}

/// Writes the measurements of `data` into `doc` as `m:` attributes on the
/// units and regions with the same ids; returns how many elements got some.
/// Regions the dialect lost (Periscope has no `block`, ...) are skipped.
pub fn annotate(doc: &mut sir::Document, data: &ProfileData) -> usize {
    let mut count = 0;
    match doc {
        sir::Document::Apart(sir) => {
            for (id, m) in &data.units {
                if let Some(u) = sir.unit_mut(id) {
                    write_measure(&mut u.annotations, m);
                    count += 1;
                }
            }
            for (id, m) in &data.regions {
                if let Some(r) = sir.code_region_mut(id) {
                    write_measure(&mut r.annotations, m);
                    count += 1;
                }
            }
        }
        sir::Document::Periscope(sir) => {
            fn regions(
                rs: &mut [sir::periscope::CodeRegion],
                data: &ProfileData,
                count: &mut usize,
            ) {
                for r in rs {
                    if let Some(m) = r.id.as_ref().and_then(|id| data.regions.get(id)) {
                        write_measure(&mut r.annotations, m);
                        *count += 1;
                    }
                    regions(&mut r.code_regions, data, count);
                }
            }
            fn units(us: &mut [sir::periscope::Unit], data: &ProfileData, count: &mut usize) {
                for u in us {
                    if let Some(m) = u.id.as_ref().and_then(|id| data.units.get(id)) {
                        write_measure(&mut u.annotations, m);
                        *count += 1;
                    }
                    regions(&mut u.code_regions, data, count);
                    units(&mut u.units, data, count);
                }
            }
            units(&mut sir.units, data, &mut count);
        }
    }
    count
}

fn write_measure(a: &mut sir::annotation::Annotations, m: &Measure) {
    a.set_measure(Metric::ExecutionCount, m.executions)
        .set_measure(Metric::InclusiveCycles, m.inclusive_cycles)
        .set_measure(Metric::ExclusiveCycles, m.exclusive_cycles)
        .set_measure(Metric::Instructions, m.instructions);
    if let Some(t) = m.trips {
        let mean = t.mean();
        a.set_measure(Metric::TripCountMin, t.min)
            .set_measure(Metric::TripCountMax, t.max);
        if mean.fract() == 0.0 {
            a.set_measure(Metric::TripCountMean, mean as u64);
        } else {
            a.set_measure(Metric::TripCountMean, format!("{mean:.3}"));
        }
    }
    let range = match (m.loads, m.stores) {
        (Some(l), Some(s)) => Some((l.low.min(s.low), l.high.max(s.high))),
        (Some(x), None) | (None, Some(x)) => Some((x.low, x.high)),
        (None, None) => None,
    };
    if let Some((low, high)) = range {
        a.set_measure(Metric::AddressLow, format!("{low:#010x}"))
            .set_measure(Metric::AddressHigh, format!("{high:#010x}"));
    }
    if let Some(s) = m.stride {
        a.set_measure(Metric::Stride, s);
    }
    // Loads and stores apart, in the same namespace (names beside Metric's).
    for (prefix, acc) in [("load", m.loads), ("store", m.stores)] {
        if let Some(acc) = acc {
            a.set(MEASURE_NS, format!("{prefix}Count"), acc.count.to_string())
                .set(
                    MEASURE_NS,
                    format!("{prefix}AddressLow"),
                    format!("{:#010x}", acc.low),
                )
                .set(
                    MEASURE_NS,
                    format!("{prefix}AddressHigh"),
                    format!("{:#010x}", acc.high),
                );
            if let Some(s) = acc.stride {
                a.set(MEASURE_NS, format!("{prefix}Stride"), s.to_string());
            }
        }
    }
}

/// Everything `sim-host run --profile` needs: the SIR generated from the
/// guest and a collector to install as an observer of the run.
#[derive(Debug)]
pub struct Profiler {
    pub generated: Generated,
    collector: Rc<RefCell<ProfileCollector>>,
}

impl Profiler {
    /// Generates the SIR of `image` (reading its file for DWARF) and a collector.
    pub fn new(
        image: &GuestImage,
        target: &Target,
        dialect: Dialect,
        memory: bool,
    ) -> Result<Profiler, ProfileError> {
        let bytes = std::fs::read(&image.file).map_err(|source| ProfileError::Read {
            file: image.file.clone(),
            source,
        })?;
        let generated = sirgen::generate(image, &bytes, target, dialect)?;
        let collector = Rc::new(RefCell::new(ProfileCollector::new(
            generated.map.clone(),
            memory,
        )));
        Ok(Profiler {
            generated,
            collector,
        })
    }

    /// The observer to add to `RunOptions::observers`.
    pub fn observer(&self) -> Observer {
        self.collector.clone()
    }

    pub fn data(&self) -> ProfileData {
        self.collector.borrow().data()
    }

    /// The generated SIR annotated with the measurements so far.
    pub fn annotated(&self) -> sir::Document {
        let mut doc = self.generated.document.clone();
        annotate(&mut doc, &self.data());
        doc
    }

    /// Writes the annotated SIR to `path`.
    pub fn write(&self, path: &Path) -> Result<(), ProfileError> {
        let doc = self.annotated();
        let mut out = Vec::new();
        doc.write(&mut out).map_err(|e| ProfileError::Sir {
            file: path.to_owned(),
            message: e.to_string(),
        })?;
        arpsim::output::write(path, out).map_err(|source| ProfileError::WriteFile {
            file: path.to_owned(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::sirgen::{BlockMap, RegionMap, UnitMap};
    use std::collections::BTreeSet;

    /// main (0x0..0x10) calls f (0x100..0x130) at 0x4; f has a loop
    /// {0x110 header, 0x118 latch} between its entry block 0x100 and its
    /// exit block 0x120.
    fn map() -> ProfileMap {
        let block = |end, instructions, unit, regions: Vec<usize>| BlockMap {
            end,
            instructions,
            unit,
            regions,
            call: None,
            returns_to: None,
        };
        let mut blocks = BTreeMap::new();
        let mut call = block(0x8, 2, 0, vec![]);
        call.call = Some(1);
        call.returns_to = Some(0x8);
        blocks.insert(0x0, call);
        blocks.insert(0x8, block(0x10, 2, 0, vec![]));
        blocks.insert(0x100, block(0x110, 2, 1, vec![]));
        blocks.insert(0x110, block(0x118, 2, 1, vec![0]));
        blocks.insert(0x118, block(0x120, 2, 1, vec![0]));
        blocks.insert(0x120, block(0x124, 1, 1, vec![]));
        ProfileMap {
            units: vec![
                UnitMap {
                    id: "u_main".into(),
                    name: "main".into(),
                    start: 0,
                    end: 0x10,
                },
                UnitMap {
                    id: "u_f".into(),
                    name: "f".into(),
                    start: 0x100,
                    end: 0x130,
                },
            ],
            regions: vec![
                RegionMap {
                    id: "l_f".into(),
                    unit: 1,
                    kind: RegionKind::Loop { header: 0x110 },
                    body: BTreeSet::from([0x110, 0x118]),
                    parent: None,
                },
                RegionMap {
                    id: "c_main".into(),
                    unit: 0,
                    kind: RegionKind::Call {
                        site: 0x4,
                        callee: Some(0x100),
                        ret: Some(0x8),
                    },
                    body: BTreeSet::from([0x0]),
                    parent: None,
                },
            ],
            blocks,
            entries: HashMap::from([(0x0, 0), (0x100, 1)]),
        }
    }

    /// Runs main -> f with `trips` loop iterations -> main, each block
    /// costing 1 cycle per instruction, from cycle `t`; returns the end cycle.
    fn call_f(p: &mut ProfileCollector, mut t: u64, trips: u32) -> u64 {
        let mut step = |p: &mut ProfileCollector, addr, n: u32| {
            p.block(addr, n, t, t + u64::from(n));
            t += u64::from(n);
        };
        step(p, 0x0, 2);
        // Unicorn's block runs on from the entry block into the header.
        step(p, 0x100, 4);
        step(p, 0x118, 2);
        for _ in 1..trips {
            step(p, 0x110, 2);
            step(p, 0x118, 2);
        }
        step(p, 0x120, 1);
        step(p, 0x8, 2);
        t
    }

    #[test]
    fn trip_counts_cycles_and_calls_follow_the_blocks() {
        let mut p = ProfileCollector::new(map(), false);
        let t = call_f(&mut p, 0, 3);
        let end = call_f(&mut p, t, 1);
        let data = p.data();
        assert_eq!(data.total_cycles, end);
        let lp = &data.regions["l_f"];
        assert_eq!(
            lp.trips,
            Some(TripCounts {
                min: 1,
                max: 3,
                total: 4,
                entries: 2
            })
        );
        assert_eq!(lp.executions, 2);
        // First call: the loop opens at the header (cycle 4: the entry
        // block's 2 of the 4 instructions come first) and closes at 16.
        // Second call (from cycle 19): 23..27.
        assert_eq!(lp.inclusive_cycles, 12 + 4);
        assert_eq!(lp.exclusive_cycles, lp.inclusive_cycles);
        let f = &data.units["u_f"];
        assert_eq!(f.executions, 2);
        // Entered at 2 and 21, left (the return block) at 17 and 28.
        assert_eq!(f.inclusive_cycles, (17 - 2) + (28 - 21));
        assert_eq!(f.exclusive_cycles, 2 * 3, "entry and exit blocks");
        let call = &data.regions["c_main"];
        assert_eq!(call.executions, 2);
        assert_eq!(call.inclusive_cycles, f.inclusive_cycles);
        let main = &data.units["u_main"];
        assert_eq!(
            main.inclusive_cycles, end,
            "main never returns: closed at the end"
        );
        assert_eq!(main.exclusive_cycles, 2 * 4);
        let exclusive: u64 = data
            .units
            .values()
            .chain(data.regions.values())
            .map(|m| m.exclusive_cycles)
            .sum();
        assert_eq!(exclusive, end);
        assert_eq!(data.outside_cycles, 0);
    }

    #[test]
    fn unknown_code_is_charged_outside_every_unit() {
        let mut p = ProfileCollector::new(map(), false);
        p.block(0x5000, 3, 0, 7);
        let data = p.data();
        assert_eq!((data.outside_cycles, data.outside_instructions), (7, 3));
        assert!(data.units.values().all(|m| m.exclusive_cycles == 0));
    }

    #[test]
    fn loop_accesses_give_ranges_and_dominant_strides() {
        let mut p = ProfileCollector::new(map(), true);
        assert!(p.wants_memory());
        call_f(&mut p, 0, 2);
        for i in 0..10 {
            p.memory(0x112, 0x2000 + i, 1, false);
        }
        for i in 0..5 {
            p.memory(0x11a, 0x3000 + 4 * i, 4, true);
        }
        // Outside any loop: not counted.
        p.memory(0x102, 0x9000, 4, false);
        let data = p.data();
        let lp = &data.regions["l_f"];
        let loads = lp.loads.unwrap();
        assert_eq!(
            (loads.count, loads.low, loads.high, loads.stride),
            (10, 0x2000, 0x2009, Some(1))
        );
        let stores = lp.stores.unwrap();
        assert_eq!(
            (stores.count, stores.low, stores.high, stores.stride),
            (5, 0x3000, 0x3013, Some(4))
        );
        assert_eq!(lp.stride, Some(1), "9 strides of 1 against 4 of 4");
    }

    #[test]
    fn annotations_are_written_by_id_and_validate() {
        use sir::apart::{CodeRegion, Language, RegionType, Sir, Unit, UnitType};
        let mut p = ProfileCollector::new(map(), false);
        call_f(&mut p, 0, 3);
        let mut sir = Sir::new(Language::C);
        let mut f = Unit::new("u_f", UnitType::Function).with_name("f");
        f.push_region(CodeRegion::new("l_f", RegionType::Loop));
        sir.push_unit(f);
        let mut doc = sir::Document::Apart(sir);
        assert_eq!(
            annotate(&mut doc, &p.data()),
            2,
            "u_f and l_f; the others are not in it"
        );
        assert!(doc.validate().is_valid());
        let sir::Document::Apart(sir) = &doc else {
            unreachable!()
        };
        let lp = sir.code_regions()[0];
        assert_eq!(lp.annotations.measure(Metric::TripCountMin), Some("3"));
        assert_eq!(lp.annotations.measure(Metric::TripCountMean), Some("3"));
        assert_eq!(lp.annotations.measure(Metric::ExecutionCount), Some("1"));
        assert_eq!(lp.annotations.measure(Metric::InclusiveCycles), Some("12"));
        let mut xml = Vec::new();
        doc.write(&mut xml).unwrap();
        assert!(String::from_utf8(xml)
            .unwrap()
            .contains("m:tripCountMax=\"3\""));
    }
}
