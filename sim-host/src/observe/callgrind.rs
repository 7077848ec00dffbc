//! A function-level profile in the callgrind format (KCachegrind,
//! QCachegrind, `callgrind_annotate`).
//!
//! [`CallgrindCollector`] is an [`ExecutionObserver`]: every executed block
//! charges its cycles and instructions to the function containing it (self
//! cost), and a shadow call stack per guest thread turns block transitions
//! into call edges:
//! - the previous block ends with a linking instruction (BL, BLX, JAL/JALR
//!   writing the link register): a call, whose return address is the
//!   address after that instruction;
//! - a block starts at a return address on the stack: the frames above it
//!   (and it) return;
//! - a plain jump to another function's entry: a tail call, which replaces
//!   the top frame (callgrind's own convention).
//!
//! A block's cycles include the taken-branch refill of the jump into it
//! (the cycle model charges it on entering the target), so a callee's
//! inclusive cost holds its call's refill: an intercepted ARP stub shows
//! 0 instructions and just that refill.
//!
//! A call edge's inclusive cost is what its thread was charged between the
//! call and the return, so the costs written always add up to the run's
//! totals. Frames still open at the end (the program exits from inside
//! `main`) are closed with the costs so far.
//!
//! ARP sections are frames too: the return from an `arp_enter*` stub opens
//! a frame named after the section (`observe::section_names`: its
//! `ato_kernel*` / `ato_profile*` label, else `function (file:line)` of the
//! enter call), called from the function that entered it at the enter
//! call's line; the return from the `arp_leave*` stub closes it, so the
//! leave call is inside the section, as in the ARP samples. Code of the
//! entering function run while the section is open is the section's self
//! cost; calls made there are the section's calls.
//!
//! Threads: the machine interleaves guest threads; [`switch_thread`] tells
//! the collector which one runs and its clock. Without it every block is
//! taken to belong to thread 0, which is exact for single-threaded guests.
//!
//! [`switch_thread`]: CallgrindCollector::switch_thread

use crate::engine::{ExceptionEvent, ExecutionObserver};
use crate::image::elf::GuestImage;
use crate::model::decode::Decoder;
use crate::model::memory_counters::MemoryCounters;
use crate::model::target::{Arch, InsnClass};
use crate::observe::shadow::{Returns, ShadowStack};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum CallgrindError {
    #[error("{file}: cannot write: {source}")]
    Write {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Decode(#[from] crate::model::decode::DecodeError),
}

/// Cycles and instructions; on a target with a memory-system model, its
/// stall cycles (among the cycles), hits and misses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cost {
    pub cycles: u64,
    pub instructions: u64,
    pub memory: MemoryCounters,
}

/// The events of a file for a target with a memory-system model (the
/// columns of [`Cost::columns`]).
const MEMORY_EVENTS: &str =
    "events: Cycles Instructions FetchStall DataStall FetchHit FetchMiss DataHit DataMiss";

impl Cost {
    fn add(&mut self, other: Cost) {
        self.cycles += other.cycles;
        self.instructions += other.instructions;
        self.memory = self.memory.plus(other.memory);
    }
    fn since(self, earlier: Cost) -> Cost {
        Cost {
            cycles: self.cycles.saturating_sub(earlier.cycles),
            instructions: self.instructions.saturating_sub(earlier.instructions),
            memory: self.memory.since(earlier.memory),
        }
    }

    /// The event columns of a cost line: two, or eight with the memory
    /// system's ([`MEMORY_EVENTS`]).
    fn columns(&self, memory: bool) -> String {
        let m = &self.memory;
        if memory {
            format!(
                "{} {} {} {} {} {} {} {}",
                self.cycles,
                self.instructions,
                m.fetch_stall,
                m.data_stall,
                m.fetch_hits,
                m.fetch_misses,
                m.data_hits,
                m.data_misses
            )
        } else {
            format!("{} {}", self.cycles, self.instructions)
        }
    }
}

/// A call edge: how often, and the callee's inclusive cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallCost {
    pub count: u64,
    pub inclusive: Cost,
}

/// What the collector needs of a block, decoded once.
#[derive(Debug, Clone, Copy)]
struct BlockInfo {
    /// Index into the function list (`NO_FUNCTION` outside any symbol).
    function: usize,
    /// The block's last instruction links (a call).
    links: bool,
    /// The last instruction is a jump that may be a tail call.
    jumps: bool,
    /// The next block may be a return: the block ends with a control
    /// transfer (or is an intercepted stub, which returns from outside).
    transfers: bool,
    /// The address after the last instruction (a call's return address).
    end: u64,
}

const NO_FUNCTION: usize = usize::MAX;
/// The return address of a section's frame: no block returns to it.
const NO_RETURN: u64 = u64::MAX;

/// What an ARP entry-point stub does to the section frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stub {
    None,
    /// `arp_enter*`: its return opens a section.
    Enter,
    /// `arp_leave*`: its return closes the innermost section.
    Leave,
}

fn stub_of(name: &str) -> Stub {
    match name {
        "arp_enter" | "arp_enter_kernel" | "arp_enter_profiled" => Stub::Enter,
        "arp_leave" | "arp_leave_kernel" | "arp_leave_profiled" => Stub::Leave,
        _ => Stub::None,
    }
}

/// Guest addresses are well spread: FxHash is enough and much cheaper
/// than SipHash on the per-block path.
type AddrMap<V> = rustc_hash::FxHashMap<u64, V>;

#[derive(Debug, Clone, Copy)]
struct Frame {
    function: usize,
    /// The caller's function (`NO_FUNCTION` for a thread's first frame).
    caller: usize,
    return_addr: u64,
    /// The thread's cumulative cost when the frame opened.
    entered: Cost,
}

impl Returns for Frame {
    fn return_address(&self) -> Option<u64> {
        Some(self.return_addr)
    }
}

#[derive(Debug, Default)]
struct ThreadState {
    /// At most `MAX_SHADOW_DEPTH` frames: the oldest are closed beyond
    /// (runaway recursion or a return the collector did not recognise).
    stack: ShadowStack<Frame>,
    prev: Option<BlockInfo>,
    /// Everything charged to this thread so far.
    charged: Cost,
    /// The thread's clock after its last block.
    clock: u64,
    /// An exception was entered: the next block opens its handler's frame,
    /// returning to this address.
    entering: Option<u64>,
    /// The exceptions being handled, innermost last.
    handlers: Vec<Interrupted>,
}

/// What an exception interrupted: the shadow stack's depth and the last
/// block before it, restored when the handler returns.
#[derive(Debug, Clone, Copy)]
struct Interrupted {
    depth: usize,
    prev: Option<BlockInfo>,
}

/// Adds the inclusive costs of `t`'s open frames, closed at its current
/// costs, to `calls`.
fn close_frames(calls: &mut BTreeMap<(usize, usize), CallCost>, t: &ThreadState) {
    for f in t.stack.iter() {
        calls
            .entry((f.caller, f.function))
            .or_default()
            .inclusive
            .add(t.charged.since(f.entered));
    }
}

/// Collects a callgrind profile while the guest runs.
pub struct CallgrindCollector {
    image: GuestImage,
    decoder: Decoder,
    link_reg: u8,
    blocks: AddrMap<BlockInfo>,
    /// The live guest threads' states, by id (an ended thread's goes, its
    /// open frames closed: issue 30, N24).
    threads: rustc_hash::FxHashMap<u32, ThreadState>,
    current: u32,
    /// Self cost per slot: functions, `functions.len()` = outside
    /// symbols, then one per section (see [`CallgrindCollector::sections`]).
    self_cost: Vec<Cost>,
    /// What each function is to the ARP sections (by function index).
    stubs: Vec<Stub>,
    /// The return addresses of the enter calls of the sections entered so
    /// far: section `k` has slot `functions.len() + 1 + k`.
    sections: Vec<u64>,
    section_slots: AddrMap<usize>,
    /// (caller, callee) -> calls.
    calls: BTreeMap<(usize, usize), CallCost>,
    /// (caller, callee) -> the first call's return address (its line).
    call_sites: BTreeMap<(usize, usize), u64>,
    /// Self cost per block start address and slot (a block of a function
    /// is its section's while the section is open): the per-line costs of
    /// the source annotation.
    block_costs: rustc_hash::FxHashMap<(u64, usize), Cost>,
    total: Cost,
    /// What the memory system did since the last block (the engine
    /// reports it only on targets with a model: then `stalls` is set and
    /// the file has [`MEMORY_EVENTS`]).
    pending_memory: MemoryCounters,
    stalls: bool,
}

impl CallgrindCollector {
    pub fn new(image: &GuestImage) -> Result<CallgrindCollector, CallgrindError> {
        let decoder = Decoder::new(image.arch)?;
        Ok(CallgrindCollector {
            link_reg: match image.arch {
                Arch::Arm => 14,
                Arch::Riscv => 1,
            },
            self_cost: vec![Cost::default(); image.functions.len() + 1],
            stubs: image.functions.iter().map(|f| stub_of(&f.name)).collect(),
            sections: Vec::new(),
            section_slots: AddrMap::default(),
            image: image.clone(),
            decoder,
            blocks: AddrMap::default(),
            threads: Default::default(),
            current: 0,
            calls: BTreeMap::new(),
            call_sites: BTreeMap::new(),
            block_costs: Default::default(),
            total: Cost::default(),
            pending_memory: MemoryCounters::default(),
            stalls: false,
        })
    }

    /// Guest thread `thread` runs next, its clock at `clock` cycles. The
    /// machine calls this at every slice start (see the module comment).
    pub fn switch_thread(&mut self, thread: u32, clock: u64) {
        self.current = thread;
        self.thread_mut(thread).clock = clock;
    }

    fn thread_mut(&mut self, thread: u32) -> &mut ThreadState {
        self.threads.entry(thread).or_default()
    }

    /// Totals charged so far.
    pub fn total(&self) -> Cost {
        self.total
    }

    fn info(&mut self, addr: u64, instructions: u32) -> BlockInfo {
        if let Some(i) = self.blocks.get(&addr) {
            return *i;
        }
        let function = self
            .image
            .function_at(addr)
            .and_then(|f| {
                self.image
                    .functions
                    .binary_search_by_key(&f.addr, |g| g.addr)
                    .ok()
            })
            .unwrap_or(NO_FUNCTION);
        let mut info = BlockInfo {
            function,
            links: false,
            jumps: false,
            transfers: true,
            end: addr,
        };
        if instructions > 0 {
            // the block's bytes, bounded by the segment holding it
            let code = self.image.segments.iter().find_map(|s| {
                let off = addr.checked_sub(s.load_addr)? as usize;
                let end = s.data.len().min(off + instructions as usize * 4);
                s.data.get(off..end)
            });
            let insns = code
                .and_then(|c| self.decoder.decode(c, addr, false).ok())
                .unwrap_or_default();
            if let Some(last) = insns.get(instructions as usize - 1).or(insns.last()) {
                info.end = last.addr + u64::from(last.size);
                info.links = match last.class {
                    InsnClass::Call => true,
                    InsnClass::BranchIndirect => last.writes & (1 << self.link_reg) != 0,
                    _ => false,
                };
                let pc_bit = match self.image.arch {
                    Arch::Arm => 1 << 15,
                    Arch::Riscv => 0,
                };
                info.transfers = last.writes & pc_bit != 0
                    || matches!(
                        last.class,
                        InsnClass::Branch
                            | InsnClass::BranchCond
                            | InsnClass::BranchIndirect
                            | InsnClass::TableBranch
                            | InsnClass::PopPc
                            | InsnClass::Call
                    );
                info.jumps = matches!(
                    last.class,
                    InsnClass::Branch | InsnClass::BranchIndirect | InsnClass::BranchCond
                );
            }
        }
        self.blocks.insert(addr, info);
        info
    }

    fn close(&mut self, frame: Frame, now: Cost) {
        let edge = self
            .calls
            .entry((frame.caller, frame.function))
            .or_default();
        edge.inclusive.add(now.since(frame.entered));
    }

    fn open(&mut self, thread: u32, function: usize, caller: usize, return_addr: u64) {
        let t = self.thread_mut(thread);
        let frame = Frame {
            function,
            caller,
            return_addr,
            entered: t.charged,
        };
        if let Some(oldest) = t.stack.push(frame) {
            let now = t.charged;
            self.close(oldest, now);
        }
        if caller != NO_FUNCTION {
            self.calls.entry((caller, function)).or_default().count += 1;
            if return_addr != NO_RETURN {
                self.call_sites
                    .entry((caller, function))
                    .or_insert(return_addr);
            }
        }
    }

    /// The call edges (caller, callee) by function name, for tests and
    /// reports.
    pub fn calls(&self) -> Vec<(String, String, CallCost)> {
        let sections = self.section_names();
        let mut out: Vec<_> = self
            .calls
            .iter()
            .filter(|((caller, _), _)| *caller != NO_FUNCTION)
            .map(|((a, b), c)| (self.name_in(*a, &sections), self.name_in(*b, &sections), *c))
            .collect();
        out.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        out
    }

    /// The name of `slot`, sections named by `sections` (by section).
    fn name_in(&self, slot: usize, sections: &[String]) -> String {
        if let Some(k) = self.section_of(slot) {
            return sections.get(k).cloned().unwrap_or_default();
        }
        self.image
            .functions
            .get(slot)
            .map_or_else(|| "(no symbol)".to_owned(), |f| f.name.clone())
    }

    /// The section of a slot, if it is one.
    fn section_of(&self, slot: usize) -> Option<usize> {
        let k = slot.checked_sub(self.image.functions.len() + 1)?;
        (k < self.sections.len()).then_some(k)
    }

    /// Each section's name (`observe::section_names`), by section.
    fn section_names(&self) -> Vec<String> {
        use crate::observe::section_names::{at_sites, site_of_return, Site};
        // a frame is one enter call, whatever section id it entered: the
        // id is the call's immediate, when it has one (found in the code);
        // the naming's warnings are the report's
        let sites: Vec<Site> = self
            .sections
            .iter()
            .map(|&r| Site {
                addr: site_of_return(r),
                sid: None,
            })
            .collect();
        let named = at_sites(&self.image, &sites);
        sites
            .iter()
            .map(|s| {
                named
                    .get(*s)
                    .map_or_else(|| format!("section@{:#x}", s.addr), |n| n.text())
            })
            .collect()
    }

    fn slot(&self, function: usize) -> usize {
        if self.section_of(function).is_some() {
            return function;
        }
        function.min(self.image.functions.len())
    }

    /// The slot of the section entered by the call returning to `ret`.
    fn section_slot(&mut self, ret: u64) -> usize {
        let base = self.image.functions.len() + 1;
        let next = base + self.sections.len();
        let slot = *self.section_slots.entry(ret).or_insert(next);
        if slot == next {
            self.sections.push(ret);
            self.self_cost.push(Cost::default());
        }
        slot
    }

    /// Writes the profile to `path` (open frames count as returned now).
    pub fn write(&self, path: &Path) -> Result<(), CallgrindError> {
        let err = |source| CallgrindError::Write {
            file: path.to_owned(),
            source,
        };
        let file = arpsim::output::Output::create(path).map_err(err)?;
        let mut w = std::io::BufWriter::new(file);
        self.write_to(&mut w).map_err(err)?;
        let file = w.into_inner().map_err(|e| err(e.into_error()))?;
        file.commit().map_err(err)
    }

    /// The callgrind text (format version 1), with source positions
    /// (`fl=`/`fi=`/`fe=` and line numbers from the DWARF line tables) so
    /// `callgrind_annotate --auto=yes` shows annotated source; costs
    /// without debug information sit on line 0 of `???`.
    pub fn write_to(&self, w: &mut dyn Write) -> std::io::Result<()> {
        let calls = self.calls_closed_now();
        let sites: Vec<u64> = self
            .block_costs
            .keys()
            .map(|(addr, _)| *addr)
            .chain(self.call_sites.values().map(|r| r.saturating_sub(2)))
            .chain(self.image.functions.iter().map(|f| f.addr))
            .chain(self.sections.iter().map(|r| r.saturating_sub(2)))
            .collect();
        let places = crate::image::symbols::locate_all(&self.image, &sites);
        let place = |addr: u64| -> (String, u32) {
            places.get(&addr).map_or(("???".into(), 0), |l| {
                (
                    l.file.clone().unwrap_or_else(|| "???".into()),
                    l.line.unwrap_or(0),
                )
            })
        };
        let elf = self.image.file.display().to_string();
        writeln!(w, "# callgrind format")?;
        writeln!(w, "version: 1")?;
        writeln!(w, "creator: sim-host {}", env!("CARGO_PKG_VERSION"))?;
        writeln!(w, "cmd: {elf}")?;
        writeln!(w, "positions: line")?;
        if self.stalls {
            writeln!(w, "{MEMORY_EVENTS}")?;
        } else {
            writeln!(w, "events: Cycles Instructions")?;
        }
        writeln!(w, "summary: {}", self.total.columns(self.stalls))?;
        writeln!(w)?;
        writeln!(w, "ob=(1) {elf}")?;
        let mut names = Names::default();
        let lines = self.lines_per_function(&place);
        let sections = self.section_names();
        let n = self.image.functions.len();
        for slot in 0..=n + self.sections.len() {
            let out: Vec<_> = calls
                .iter()
                .filter(|((caller, _), _)| *caller != NO_FUNCTION && self.slot(*caller) == slot)
                .collect();
            let own = lines.get(&slot);
            if own.is_none() && out.is_empty() {
                continue;
            }
            let home = self.home_file(slot, &place);
            writeln!(w)?;
            names.write(w, "fl", &home, Kind::File)?;
            names.write(w, "fn", &self.name_in(slot, &sections), Kind::Function)?;
            for ((file, line), cost) in own.into_iter().flatten() {
                if *file != home {
                    names.write(w, "fi", file, Kind::File)?;
                }
                writeln!(w, "{line} {}", cost.columns(self.stalls))?;
                if *file != home {
                    names.write(w, "fe", &home, Kind::File)?;
                }
            }
            for (edge, c) in out {
                let site = self
                    .call_sites
                    .get(edge)
                    .map_or(0, |r| place(r.saturating_sub(2)).1);
                names.write(
                    w,
                    "cfl",
                    &self.home_file(self.slot(edge.1), &place),
                    Kind::File,
                )?;
                names.write(w, "cfn", &self.name_in(edge.1, &sections), Kind::Function)?;
                writeln!(w, "calls={} 0", c.count)?;
                writeln!(w, "{site} {}", c.inclusive.columns(self.stalls))?;
            }
        }
        writeln!(w)?;
        writeln!(
            w,
            "totals: {} {}",
            self.total.cycles, self.total.instructions
        )
    }

    /// The call edges with the frames still open closed at the current
    /// costs (writing does not end the run).
    fn calls_closed_now(&self) -> BTreeMap<(usize, usize), CallCost> {
        let mut calls = self.calls.clone();
        for t in self.threads.values() {
            close_frames(&mut calls, t);
        }
        calls
    }

    /// Self costs per function slot and (file, line), lines in order.
    fn lines_per_function(
        &self,
        place: &dyn Fn(u64) -> (String, u32),
    ) -> BTreeMap<usize, BTreeMap<(String, u32), Cost>> {
        let mut lines: BTreeMap<usize, BTreeMap<(String, u32), Cost>> = BTreeMap::new();
        for ((addr, slot), cost) in &self.block_costs {
            lines
                .entry(*slot)
                .or_default()
                .entry(place(*addr))
                .or_default()
                .add(*cost);
        }
        lines
    }

    /// The source file of a function: where its first instruction is; of
    /// a section: where its enter call is.
    fn home_file(&self, slot: usize, place: &dyn Fn(u64) -> (String, u32)) -> String {
        if let Some(k) = self.section_of(slot) {
            return place(self.sections[k].saturating_sub(2)).0;
        }
        self.image
            .functions
            .get(slot)
            .map_or_else(|| "???".to_owned(), |f| place(f.addr).0)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Function,
}

/// Callgrind's name compression: a name's first use defines `(id) name`,
/// later uses write `(id)` alone; files and functions count separately.
#[derive(Default)]
struct Names {
    files: std::collections::HashMap<String, usize>,
    functions: std::collections::HashMap<String, usize>,
}

impl Names {
    fn write(
        &mut self,
        w: &mut dyn Write,
        key: &str,
        name: &str,
        kind: Kind,
    ) -> std::io::Result<()> {
        let table = match kind {
            Kind::File => &mut self.files,
            Kind::Function => &mut self.functions,
        };
        match table.get(name) {
            Some(id) => writeln!(w, "{key}=({id})"),
            None => {
                let id = table.len() + 1;
                table.insert(name.to_owned(), id);
                writeln!(w, "{key}=({id}) {name}")
            }
        }
    }
}

impl CallgrindCollector {
    /// `thread` returned to `addr`, the return address of its frame `i`:
    /// that frame and the ones above it close. The return from an
    /// `arp_enter*` stub opens its section's frame; the return from an
    /// `arp_leave*` stub closes the innermost open section.
    fn returned(&mut self, thread: u32, i: usize, addr: u64, info: BlockInfo) {
        let t = self.thread_mut(thread);
        let now = t.charged;
        let closed: Vec<Frame> = t.stack.split_off(i);
        let stub = self.stubs.get(closed[0].function).copied();
        for f in closed.into_iter().rev() {
            self.close(f, now);
        }
        let top = self.thread_mut(thread).stack.last().copied();
        match (stub, top) {
            (_, None) => self.open(thread, info.function, NO_FUNCTION, 0),
            (Some(Stub::Enter), Some(top)) => {
                let slot = self.section_slot(addr);
                self.open(thread, slot, top.function, NO_RETURN);
                self.call_sites.entry((top.function, slot)).or_insert(addr);
            }
            (Some(Stub::Leave), Some(top)) if self.section_of(top.function).is_some() => {
                let t = self.thread_mut(thread);
                let section = t.stack.pop().expect("top exists");
                self.close(section, now);
                if self.thread_mut(thread).stack.is_empty() {
                    self.open(thread, info.function, NO_FUNCTION, 0);
                }
            }
            _ => {}
        }
    }
}

impl ExecutionObserver for CallgrindCollector {
    fn memory_system(&mut self, since_last: MemoryCounters) {
        self.stalls = true;
        self.pending_memory = self.pending_memory.plus(since_last);
    }

    /// Costs start again; the analysed blocks stay.
    fn reset(&mut self) {
        self.threads.clear();
        self.current = 0;
        self.self_cost.fill(Cost::default());
        self.calls.clear();
        self.call_sites.clear();
        self.block_costs.clear();
        self.self_cost.truncate(self.image.functions.len() + 1);
        self.sections.clear();
        self.section_slots.clear();
        self.total = Cost::default();
    }

    fn thread(&mut self, thread: u32, clock: u64) {
        self.switch_thread(thread, clock);
    }

    /// Its frames still open are closed now, as at the end of the run:
    /// its costs do not change any more.
    fn thread_ended(&mut self, thread: u32) {
        if let Some(t) = self.threads.remove(&thread) {
            close_frames(&mut self.calls, &t);
        }
    }

    fn block(&mut self, addr: u64, instructions: u32, _cycles_before: u64, cycles_after: u64) {
        let addr = addr & !1;
        let info = self.info(addr, instructions);
        let memory = std::mem::take(&mut self.pending_memory);
        let thread = self.current;
        let t = self.thread_mut(thread);
        // The thread's own clock, not `cycles_before`: the machine's
        // previous block may belong to another thread.
        let cost = Cost {
            cycles: cycles_after.saturating_sub(t.clock),
            instructions: u64::from(instructions),
            memory,
        };
        t.clock = cycles_after;
        let prev = t.prev.replace(info);
        let top = t.stack.last().copied();

        // Control flow first, so the block is charged inside its frame.
        if let Some(return_to) = t.entering.take() {
            let caller = top.map_or(NO_FUNCTION, |f| f.function);
            self.open(thread, info.function, caller, return_to);
            self.charge(thread, addr, info, cost);
            return;
        }
        match (prev, top) {
            (_, None) => self.open(thread, info.function, NO_FUNCTION, 0),
            (Some(p), Some(top)) if p.links => {
                self.open(thread, info.function, top.function, p.end);
            }
            (Some(p), Some(top)) if p.transfers => {
                let in_section = self.section_of(top.function).is_some();
                let t = self.threads.entry(thread).or_default();
                if let Some(i) = t.stack.returning_to(addr) {
                    self.returned(thread, i, addr, info);
                } else if p.jumps
                    && info.function != top.function
                    && !in_section
                    && self
                        .image
                        .functions
                        .get(info.function)
                        .is_some_and(|f| f.addr == addr)
                {
                    let now = t.charged;
                    let old = t.stack.pop().expect("top exists");
                    self.close(old, now);
                    self.open(thread, info.function, old.caller, old.return_addr);
                }
            }
            _ => {}
        }
        self.charge(thread, addr, info, cost);
    }

    /// A handler is called from the code it interrupted (the entry latency
    /// in its first block); its return closes every frame opened since.
    fn exception(&mut self, event: ExceptionEvent) {
        let thread = self.current;
        let t = self.thread_mut(thread);
        match event {
            ExceptionEvent::Entered { return_to } => {
                let depth = t.stack.len();
                let prev = t.prev.take();
                t.handlers.push(Interrupted { depth, prev });
                t.entering = Some(return_to & !1);
            }
            ExceptionEvent::Returned => {
                let Some(at) = t.handlers.pop() else { return };
                t.entering = None;
                t.prev = at.prev;
                let now = t.charged;
                let depth = at.depth.min(t.stack.len());
                let closed: Vec<Frame> = t.stack.split_off(depth);
                for f in closed.into_iter().rev() {
                    self.close(f, now);
                }
            }
        }
    }
}

impl CallgrindCollector {
    /// Charges a block's cost to its thread, function and line.
    fn charge(&mut self, thread: u32, addr: u64, info: BlockInfo, cost: Cost) {
        let t = self.thread_mut(thread);
        t.charged.add(cost);
        let top = t.stack.last().map(|f| f.function);
        // code run while a section of its function is open is the section's
        let slot = match top {
            Some(f) if self.section_of(f).is_some() => f,
            _ => info.function.min(self.image.functions.len()),
        };
        self.self_cost[slot].add(cost);
        self.block_costs.entry((addr, slot)).or_default().add(cost);
        self.total.add(cost);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_since_saturates() {
        let a = Cost {
            cycles: 5,
            instructions: 2,
            ..Cost::default()
        };
        let b = Cost {
            cycles: 7,
            instructions: 1,
            ..Cost::default()
        };
        assert_eq!(
            a.since(b),
            Cost {
                cycles: 0,
                instructions: 1,
                ..Cost::default()
            }
        );
    }
}
