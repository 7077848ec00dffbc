//! The host side of ARP_SIM (ARP manual 6.3, DESIGN.md decision 1): the
//! guest's calls of the ARP entry points, intercepted by the machine, run
//! the arpsim engine here, with the host's measuring callback sets.
//!
//! What a recorded sample contains (the rule the zero-perturbation test
//! pins): the engine reads the cycle counter when the guest reaches the
//! first instruction of `arp_enter_kernel` and of `arp_leave_kernel`. The
//! counter then includes everything executed before the call instruction and
//! the call itself (`BL`/`JAL`, including its taken-branch refill), and none
//! of the stub body or its return, which never execute. So a sample is the
//! section's own cycles plus the cost of the leave call site (argument set-up
//! and the call instruction); the enter call site's cost falls before the
//! sample and counts only in the enclosing section.
//!
//! Alongside the engine, [`SectionStats`] keeps the report's per-trace
//! statistics (count, total, min, max) for every section kind, whatever the
//! recording mode.

use crate::host::counters::{CounterSet, Counters, Measure};
use crate::host::tasks::{ContextId, TaskMark};
use crate::model::memory_counters::MemoryCounters;
use arpsim::engine::{Engine, FinishSummary, SectionKind};
use arpsim::error::{ArpError, Severity};
use arpsim::paths::PathInterner;
use arpsim::playback::PlaybackIndex;
use arpsim::types::{FileFormat, Mode, Sid, Tid};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// An ARP entry point of the guest, by its symbol name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryPoint {
    Enter(SectionKind),
    Leave(SectionKind),
    Spawned,
    Join,
    AddCallbacks,
    Start,
    Finish,
    SetFileName,
    SetFileFormat,
    SimAddCallbacks,
    SimStart,
    /// A query-API function: answered with 0 / NULL inside a guest.
    Query,
}

impl EntryPoint {
    /// How many argument registers the host reads for a call (the rest
    /// are passed as 0): reading registers is most of a call's host time.
    pub fn arity(self) -> usize {
        match self {
            EntryPoint::Enter(_) => 3,
            EntryPoint::Leave(_) | EntryPoint::Spawned => 2,
            EntryPoint::Query => 0,
            _ => 4,
        }
    }
}

/// Whether the guest can start recording: it has an entry point that
/// starts the engine (a stripped or stub-less ELF has none).
pub fn can_record(image: &crate::image::elf::GuestImage) -> bool {
    ENTRY_POINTS
        .iter()
        .filter(|(_, e)| matches!(e, EntryPoint::Start | EntryPoint::SimStart))
        .any(|(name, _)| image.function(name).is_some())
}

/// The guest symbols the host intercepts.
pub const ENTRY_POINTS: &[(&str, EntryPoint)] = &[
    ("arp_enter", EntryPoint::Enter(SectionKind::Plain)),
    ("arp_enter_kernel", EntryPoint::Enter(SectionKind::Kernel)),
    (
        "arp_enter_profiled",
        EntryPoint::Enter(SectionKind::Profiled),
    ),
    ("arp_leave", EntryPoint::Leave(SectionKind::Plain)),
    ("arp_leave_kernel", EntryPoint::Leave(SectionKind::Kernel)),
    (
        "arp_leave_profiled",
        EntryPoint::Leave(SectionKind::Profiled),
    ),
    ("arp_spawned", EntryPoint::Spawned),
    ("arp_join", EntryPoint::Join),
    ("arp_add_callbacks", EntryPoint::AddCallbacks),
    ("arp_start", EntryPoint::Start),
    ("arp_finish", EntryPoint::Finish),
    ("arp_set_file_name", EntryPoint::SetFileName),
    ("arp_set_output_file_format", EntryPoint::SetFileFormat),
    ("arpsim_add_callbacks", EntryPoint::SimAddCallbacks),
    ("arpsim_start", EntryPoint::SimStart),
    ("arp_load_data", EntryPoint::Query),
    ("arp_get_mode", EntryPoint::Query),
    ("arp_switch_mode", EntryPoint::Query),
    ("arp_free_data", EntryPoint::Query),
    ("arp_get_data_mult", EntryPoint::Query),
    ("arp_get_data_type", EntryPoint::Query),
    ("arp_get_nTraces", EntryPoint::Query),
    ("arp_get_trace", EntryPoint::Query),
    ("arp_free_trace", EntryPoint::Query),
    ("arp_trace_get_count", EntryPoint::Query),
    ("arp_trace_get_stack_length", EntryPoint::Query),
    ("arp_trace_get_stack_pos", EntryPoint::Query),
    ("arp_trace_get_stack_index", EntryPoint::Query),
    ("arp_trace_get_value", EntryPoint::Query),
];

/// A section entered or left, with the simulated time: the timeline of
/// `--trace-events`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SectionEvent {
    pub tid: Tid,
    pub sid: Sid,
    pub kind: &'static str,
    pub enter: bool,
    /// The running thread's clock.
    pub cycles: u64,
    pub core: u32,
    /// The guest thread (simthread id, 0 = main).
    pub thread: u32,
    /// Who ran on the core (`host::tasks`: 0 = main, else an RTOS task or
    /// a handler).
    pub context: u16,
}

#[derive(Debug, Clone)]
struct Frame {
    sid: Sid,
    kind: SectionKind,
    /// The path of the open sections down to this one.
    node: u32,
    /// The address of the enter call (named only when the table is made:
    /// a section is entered millions of times).
    site: u64,
    cycles: u64,
    instructions: u64,
    /// The memory-system totals at the enter, on a target that has them.
    memory: Option<MemoryCounters>,
    /// Every context's cycles at the enter, once the core ran more than
    /// one (`host::tasks`).
    task: Option<TaskMark>,
    /// The own cycles of the sections nested in this one (same thread).
    children_own: u64,
}

/// A section open in a thread, as a debugger shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenSection {
    pub sid: Sid,
    /// Its counter (the engine's `sid@idx`), once the engine started.
    pub idx: Option<arpsim::types::Lidx>,
    pub kind: &'static str,
    /// The address of its enter call.
    pub site: u64,
    /// The thread's cycles when it was entered.
    pub entered_at: u64,
}

/// Statistics of one section trace.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TraceStats {
    pub path: Vec<Sid>,
    /// The function containing each section's enter call (empty until
    /// [`SectionStats::traces`] names them).
    pub functions: Vec<Option<String>>,
    /// The address of each section's enter call (for source locations).
    pub sites: Vec<u64>,
    pub kind: &'static str,
    pub count: u64,
    pub total_cycles: u64,
    pub min_cycles: u64,
    pub max_cycles: u64,
    pub total_instructions: u64,
    /// The memory system's stalls, hits and misses in all its samples
    /// (`None` on a target without a memory-system model).
    pub memory: Option<MemoryCounters>,
    /// The cycles of the task (or handler) that entered each sample while
    /// it was open, summed: `total_cycles` less what other tasks and
    /// handlers ran meanwhile (equal to it when nothing else ran).
    pub own_cycles: u64,
    /// `own_cycles` less the own cycles of the sections nested in it:
    /// what no other section of the run counts (the report's share).
    pub self_cycles: u64,
    /// Who else ran while it was open: (context, cycles), costliest first.
    pub others: Vec<(ContextId, u64)>,
}

/// The most section ids the rows of a section table hold in all (the sum
/// of their paths' lengths): the report, its JSON and the debugger's
/// table list the costliest traces up to this many, and count the others
/// (issue 30, N04: every row once held its whole path, so nesting 4,000
/// deep cost 2 GB and 65,534 deep more than 24 GB).
pub const REPORT_SECTION_ENTRIES: usize = 1 << 16;

/// One trace's figures, kept by its path node: the path itself is the
/// interner's (prefixes shared), so a trace costs the same at any depth.
#[derive(Debug, Clone)]
struct NodeStats {
    kind: SectionKind,
    count: u64,
    total_cycles: u64,
    min_cycles: u64,
    max_cycles: u64,
    total_instructions: u64,
    memory: Option<MemoryCounters>,
    own_cycles: u64,
    self_cycles: u64,
    others: Vec<(ContextId, u64)>,
}

/// Every context's cycles at a section's enter, once the core ran more
/// than one context (until then a section's own cycles are all of them).
fn mark_tasks(c: &Counters) -> Option<TaskMark> {
    let tasks = c.tasks.borrow();
    tasks.active().then(|| tasks.mark(c.cycles.get()))
}

/// A leaving sample's own cycles (its context's, of `cycles` in all); the
/// other contexts' are added to `others`.
fn own_cycles(frame: &Frame, cycles: u64, c: &Counters, others: &mut Vec<(ContextId, u64)>) -> u64 {
    let tasks = c.tasks.borrow();
    if !tasks.active() {
        return cycles;
    }
    // entered before anything but main ran: main had run every cycle
    let before = TaskMark {
        context: 0,
        cycles: Box::new([frame.cycles]),
    };
    let mark = frame.task.as_ref().unwrap_or(&before);
    let mut own = 0;
    for (context, ran) in tasks.since(mark, c.cycles.get()) {
        if context == mark.context {
            own = ran;
            continue;
        }
        match others.iter_mut().find(|(id, _)| *id == context) {
            Some((_, sum)) => *sum += ran,
            None => others.push((context, ran)),
        }
    }
    others.sort_by_key(|(id, ran)| (std::cmp::Reverse(*ran), *id));
    own
}

/// Per-trace statistics of every section, recorded on leave.
#[derive(Debug, Default)]
pub struct SectionStats {
    /// The open sections of each ARP thread, by thread id.
    stacks: Vec<Vec<Frame>>,
    /// The ARP thread each guest thread (the index) last entered or left a
    /// section in.
    arp_thread: Vec<Option<Tid>>,
    /// Every trace entered so far, shared by all threads.
    paths: PathInterner,
    /// By path node: the address of the enter call that first made it,
    /// and the path's length.
    sites: Vec<u64>,
    depths: Vec<u32>,
    /// By path node; ordered by path only when [`SectionStats::traces`]
    /// lists them.
    traces: Vec<Option<NodeStats>>,
}

fn kind_name(kind: SectionKind) -> &'static str {
    match kind {
        SectionKind::Plain => "plain",
        SectionKind::Kernel => "kernel",
        SectionKind::Profiled => "profiled",
    }
}

impl SectionStats {
    /// The innermost open section of the deepest thread.
    fn innermost(&self) -> Option<Sid> {
        self.stacks
            .iter()
            .max_by_key(|s| s.len())
            .and_then(|s| s.last())
            .map(|f| f.sid)
    }

    fn note_thread(&mut self, tid: Tid, c: &Counters) {
        let thread = c.thread.get() as usize;
        if self.arp_thread.len() <= thread {
            self.arp_thread.resize(thread + 1, None);
        }
        self.arp_thread[thread] = Some(tid);
    }

    /// Refused past `arpsim::paths::MAX_SECTION_PATHS` distinct paths
    /// (issue 43, N04), before anything changes.
    fn enter(
        &mut self,
        tid: Tid,
        sid: Sid,
        kind: SectionKind,
        site: u64,
        c: &Counters,
    ) -> Result<(), ArpError> {
        let parent = self
            .stacks
            .get(usize::from(tid))
            .and_then(|s| s.last())
            .map_or(PathInterner::ROOT, |f| f.node);
        // a match, not ok_or: the error is built only when refused
        let Some(node) = self.paths.try_child(parent, sid) else {
            return Err(ArpError::TooManyPaths {
                tid,
                sid,
                cap: arpsim::paths::MAX_SECTION_PATHS,
            });
        };
        self.note_thread(tid, c);
        if self.sites.len() <= node as usize {
            let depth = self.stack_mut(tid).len() as u32 + 1;
            self.sites.resize(self.paths.len(), 0);
            self.depths.resize(self.paths.len(), 0);
            self.sites[node as usize] = site;
            self.depths[node as usize] = depth;
        }
        self.stack_mut(tid).push(Frame {
            sid,
            kind,
            node,
            site,
            cycles: c.cycles.get(),
            instructions: c.instructions.get(),
            memory: c.memory.get(),
            task: mark_tasks(c),
            children_own: 0,
        });
        Ok(())
    }

    fn leave(&mut self, tid: Tid, sid: Sid, c: &Counters) {
        self.note_thread(tid, c);
        let Some(stack) = self.stacks.get_mut(usize::from(tid)) else {
            return;
        };
        if stack.last().map(|f| f.sid) != Some(sid) {
            return; // the engine reports the mismatch
        }
        let frame = stack.pop().expect("checked non-empty");
        let node = frame.node as usize;
        if self.traces.len() <= node {
            self.traces.resize_with(self.paths.len(), || None);
        }
        // made only for a trace's first sample (`get_or_insert` built and
        // dropped the whole record at every leave)
        let t = self.traces[node].get_or_insert_with(|| NodeStats {
            kind: frame.kind,
            count: 0,
            total_cycles: 0,
            min_cycles: u64::MAX,
            max_cycles: 0,
            total_instructions: 0,
            memory: None,
            own_cycles: 0,
            self_cycles: 0,
            others: Vec::new(),
        });
        let cycles = c.cycles.get().saturating_sub(frame.cycles);
        let own = own_cycles(&frame, cycles, c, &mut t.others);
        t.own_cycles += own;
        t.self_cycles += own.saturating_sub(frame.children_own);
        if let Some(parent) = stack.last_mut() {
            parent.children_own += own;
        }
        let instructions = c.instructions.get().saturating_sub(frame.instructions);
        t.count += 1;
        t.total_cycles += cycles;
        t.min_cycles = t.min_cycles.min(cycles);
        t.max_cycles = t.max_cycles.max(cycles);
        t.total_instructions += instructions;
        if let (Some(now), Some(then)) = (c.memory.get(), frame.memory) {
            let spent = now.since(then);
            t.memory = Some(t.memory.map_or(spent, |m| m.plus(spent)));
        }
    }

    /// A thread starts with a copy of its parent's open sections.
    fn spawned(&mut self, parent: Tid, child: Tid) {
        let copy = self
            .stacks
            .get(usize::from(parent))
            .cloned()
            .unwrap_or_default();
        *self.stack_mut(child) = copy;
    }

    fn stack_mut(&mut self, tid: Tid) -> &mut Vec<Frame> {
        let i = usize::from(tid);
        if self.stacks.len() <= i {
            self.stacks.resize_with(i + 1, Vec::new);
        }
        &mut self.stacks[i]
    }

    /// How many traces have been left at least once.
    pub fn len(&self) -> usize {
        self.traces.iter().flatten().count()
    }

    /// Whether no trace has been left yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The costliest traces whose paths hold at most
    /// [`REPORT_SECTION_ENTRIES`] section ids in all, by path, each enter
    /// call site named by `function_at` ([`SectionStats::len`] says how
    /// many there are in all).
    pub fn traces(&self, function_at: impl Fn(u64) -> Option<String>) -> Vec<TraceStats> {
        let mut nodes: Vec<(u32, &NodeStats)> = self
            .traces
            .iter()
            .enumerate()
            .filter_map(|(n, t)| Some((n as u32, t.as_ref()?)))
            .collect();
        // costliest first; equal costs shallower (then older) first
        nodes.sort_by_key(|(n, t)| (std::cmp::Reverse(t.total_cycles), self.depth(*n), *n));
        let mut budget = REPORT_SECTION_ENTRIES;
        let mut traces: Vec<TraceStats> = Vec::new();
        for (node, t) in nodes {
            let depth = self.depth(node);
            if depth > budget {
                continue;
            }
            budget -= depth;
            let path = self.paths.path(node);
            let sites = self.path_sites(node);
            traces.push(TraceStats {
                functions: sites.iter().map(|&s| function_at(s)).collect(),
                path,
                sites,
                kind: kind_name(t.kind),
                count: t.count,
                total_cycles: t.total_cycles,
                min_cycles: t.min_cycles,
                max_cycles: t.max_cycles,
                total_instructions: t.total_instructions,
                memory: t.memory,
                own_cycles: t.own_cycles,
                self_cycles: t.self_cycles,
                others: t.others.clone(),
            });
        }
        traces.sort_by(|a, b| a.path.cmp(&b.path));
        traces
    }

    /// The length of `node`'s path.
    fn depth(&self, node: u32) -> usize {
        self.depths.get(node as usize).map_or(0, |&d| d as usize)
    }

    /// The enter call sites of `node`'s path, outermost first.
    fn path_sites(&self, node: u32) -> Vec<u64> {
        let mut sites = Vec::with_capacity(self.depth(node));
        let mut at = Some(node).filter(|&n| n != PathInterner::ROOT);
        while let Some(n) = at {
            sites.push(self.sites.get(n as usize).copied().unwrap_or(0));
            at = self.paths.parent(n).filter(|&p| p != PathInterner::ROOT);
        }
        sites.reverse();
        sites
    }
}

/// How the run's ARP recording is set up from the command line.
#[derive(Debug, Clone, Default)]
pub struct ArpOptions {
    /// `--mode`: overrides the mode the guest passes to `arpsim_start`.
    pub mode: Option<Mode>,
    /// `-o/--arp-file`: overrides the default and the guest's file name.
    pub file: Option<PathBuf>,
    pub format: Option<FileFormat>,
    pub gzip: bool,
    /// `--measure`: the callback sets, in order (default: cycles).
    pub measures: Vec<Measure>,
    /// `--playback FILE`: play this recording back.
    pub playback: Option<PathBuf>,
    /// Record the section timeline, keeping at most this many events.
    pub trace_events: Option<usize>,
    /// `--plugin`: loaded callback plugins; their sets follow `measures`.
    pub plugins: Vec<Rc<crate::host::plugin::Plugin>>,
    /// `--fs-root`: a name the guest sets with `arp_set_file_name` is
    /// placed beneath it.
    pub fs_root: Option<PathBuf>,
    /// `--allow-guest-file-name`: without a root, the guest may name a
    /// file relative to the working directory.
    pub allow_guest_file_name: bool,
}

/// A failed ARP call: the run stops (fatal) or continues (warning).
#[derive(Debug)]
pub struct ArpFailure {
    pub error: ArpError,
    pub fatal: bool,
}

impl From<ArpError> for ArpFailure {
    fn from(error: ArpError) -> Self {
        let fatal = matches!(
            error.severity(),
            Severity::Fatal | Severity::Io | Severity::Syntax
        );
        ArpFailure { error, fatal }
    }
}

/// Arguments of an intercepted call, from the argument registers.
#[derive(Debug, Clone, Copy)]
pub struct CallArgs(pub [u32; 4]);

/// The guest's ARP state on the host.
pub struct ArpHost {
    engine: Engine,
    pub counters: Rc<Counters>,
    options: ArpOptions,
    callbacks_installed: bool,
    started: bool,
    finished: Option<FinishSummary>,
    stats: SectionStats,
    /// File name set by the guest with `arp_set_file_name`.
    guest_file: Option<PathBuf>,
    /// Bounded: the first few of each kind, the rest counted.
    pub warnings: crate::host::warnings::Warnings,
    events: Vec<SectionEvent>,
    /// Events not kept because of the `trace_events` limit.
    pub events_dropped: u64,
    /// The stop request and the `--timeout` deadline a long playback load
    /// looks at (issue 30, N09).
    interrupt: Option<Arc<AtomicI32>>,
    deadline: Option<Instant>,
    /// Why a call gave up for a stop signal or the time-out (a FIFO no
    /// process reads): what `conclude` says instead of the engine's state.
    pub cut_short: Option<String>,
}

impl ArpHost {
    pub fn new(options: ArpOptions) -> ArpHost {
        ArpHost {
            engine: Engine::new(),
            counters: Rc::new(Counters::default()),
            options,
            callbacks_installed: false,
            started: false,
            finished: None,
            stats: SectionStats::default(),
            guest_file: None,
            warnings: Default::default(),
            events: Vec::new(),
            events_dropped: 0,
            interrupt: None,
            deadline: None,
            cut_short: None,
        }
    }

    /// Makes a playback load give up when `interrupt` holds a signal or
    /// `deadline` passes.
    pub fn stopped_by(
        mut self,
        interrupt: Option<Arc<AtomicI32>>,
        deadline: Option<Instant>,
    ) -> Self {
        self.interrupt = interrupt;
        self.deadline = deadline;
        self
    }

    /// Keeps the event for `--trace-events`: inline, so that a run
    /// without it pays one test per call.
    #[inline]
    fn record_event(&mut self, tid: Tid, sid: Sid, kind: SectionKind, enter: bool) {
        if let Some(limit) = self.options.trace_events {
            self.push_event(limit, tid, sid, kind, enter);
        }
    }

    #[cold]
    #[inline(never)]
    fn push_event(&mut self, limit: usize, tid: Tid, sid: Sid, kind: SectionKind, enter: bool) {
        if self.events.len() >= limit {
            self.events_dropped += 1;
            return;
        }
        self.events.push(SectionEvent {
            tid,
            sid,
            kind: kind_name(kind),
            enter,
            cycles: self.counters.cycles.get(),
            core: self.counters.core.get(),
            thread: self.counters.thread.get(),
            context: self.counters.tasks.borrow().current(),
        });
    }

    /// The section timeline recorded with `trace_events`.
    pub fn take_events(&mut self) -> Vec<SectionEvent> {
        std::mem::take(&mut self.events)
    }

    /// Whether callback plugins are loaded (they read the guest during a
    /// call, which then needs the machine's guest access set up).
    pub fn has_plugins(&self) -> bool {
        !self.options.plugins.is_empty()
    }

    pub fn stats(&self) -> &SectionStats {
        &self.stats
    }

    /// The sections open in guest thread `thread` (in the ARP thread it
    /// last entered or left a section in), outermost first.
    pub fn open_sections(&self, thread: u32) -> Option<(Tid, Vec<OpenSection>)> {
        let tid = (*self.stats.arp_thread.get(thread as usize)?)?;
        let frames = self.stats.stacks.get(usize::from(tid))?;
        let entries = self.engine.stack(tid).unwrap_or_default();
        let open = frames
            .iter()
            .enumerate()
            .map(|(i, f)| OpenSection {
                sid: f.sid,
                idx: entries.get(i).filter(|e| e.sid == f.sid).map(|e| e.idx),
                kind: kind_name(f.kind),
                site: f.site,
                entered_at: f.cycles,
            })
            .collect();
        Some((tid, open))
    }

    /// The innermost section open in any thread (for the status line).
    pub fn innermost_section(&self) -> Option<Sid> {
        self.stats.innermost()
    }

    /// The playback verification: which recorded tuples were played how
    /// often (playback mode only).
    pub fn playback_report(&self) -> Option<arpsim::playback::PlaybackReport> {
        self.finished
            .as_ref()
            .and_then(|f| f.playback.clone())
            .or_else(|| self.engine.playback_report())
    }

    fn install_callbacks(&mut self) -> Result<(), ArpFailure> {
        if self.callbacks_installed {
            return Ok(());
        }
        let measures = if self.options.measures.is_empty() {
            vec![Measure::Cycles]
        } else {
            self.options.measures.clone()
        };
        let playback = self.options.playback.is_some() || self.options.mode == Some(Mode::Playback);
        for measure in measures {
            if playback {
                self.engine.add_callbacks(Box::new(CounterSet {
                    measure,
                    counters: Rc::clone(&self.counters),
                    playback,
                }))?;
            } else {
                // recorded in place, without a call through the set
                let counter = Rc::clone(self.counters.of(measure));
                self.engine.add_counter_set(counter)?;
            }
        }
        // plugin sets are recorded after the host's own (sim_host_plugin.h)
        for plugin in &self.options.plugins {
            for set in plugin.callback_sets() {
                self.engine.add_callbacks(set)?;
            }
        }
        self.callbacks_installed = true;
        Ok(())
    }

    fn start(&mut self, max_tid: Tid, max_sid: Sid, guest_mode: u32) -> Result<(), ArpFailure> {
        self.install_callbacks()?;
        let file = self
            .options
            .file
            .clone()
            .or_else(|| self.guest_file.clone())
            .unwrap_or_else(|| PathBuf::from("data.arp"));
        self.engine.set_file_name(file)?;
        if let Some(format) = self.options.format {
            self.engine.set_file_format(format)?;
        }
        if self.options.gzip {
            self.engine.set_gzip(true)?;
        }
        let mode = match self.options.mode {
            Some(m) => m,
            None if self.options.playback.is_some() => Mode::Playback,
            None => Mode::from_code(guest_mode).ok_or_else(|| ArpFailure {
                error: ArpError::Invalid(format!(
                    "arpsim_start: mode {guest_mode} is not an arp_mode (0..3)"
                )),
                fatal: true,
            })?,
        };
        if mode == Mode::Playback {
            let path = self.options.playback.clone().ok_or_else(|| ArpFailure {
                error: ArpError::Invalid("playback mode needs a recording: --playback FILE".into()),
                fatal: true,
            })?;
            let (interrupt, deadline) = (self.interrupt.clone(), self.deadline);
            let index = PlaybackIndex::load_until(&path, &mut || {
                let signal = interrupt.as_ref().map_or(0, |f| f.load(Ordering::Relaxed));
                if signal > 0 {
                    Some(format!("signal {signal} while loading {}", path.display()))
                } else if deadline.is_some_and(|d| Instant::now() >= d) {
                    Some(format!(
                        "the time-out passed while loading {}",
                        path.display()
                    ))
                } else {
                    None
                }
            });
            let index = match index {
                Err(ArpError::Stopped(why)) => {
                    // said in the report: how far the load came
                    self.warnings
                        .push(format!("playback: the load was cut short: {why}"));
                    return Err(ArpError::Stopped(why).into());
                }
                other => other?,
            };
            self.engine.start_playback(max_tid, max_sid, index)?;
        } else {
            self.engine.start(max_tid, max_sid, mode)?;
        }
        self.started = true;
        Ok(())
    }

    /// An enter or leave (`entry`) of section `sid` by ARP thread `tid`
    /// (the raw argument registers), as [`ArpHost::call`] runs it.
    #[inline]
    pub fn section(
        &mut self,
        entry: EntryPoint,
        tid: u32,
        sid: u32,
        lidx: u32,
        site: u64,
    ) -> Result<(), ArpFailure> {
        let (tid, sid) = (tid as Tid, sid as Sid);
        match entry {
            EntryPoint::Enter(kind) => {
                self.counters.kernel.set(kind == SectionKind::Kernel);
                self.engine.enter(tid, sid, lidx as i32, kind)?;
                self.stats.enter(tid, sid, kind, site, &self.counters)?;
                self.record_event(tid, sid, kind, true);
            }
            EntryPoint::Leave(kind) => {
                self.counters.kernel.set(kind == SectionKind::Kernel);
                self.engine.leave(tid, sid, kind)?;
                self.stats.leave(tid, sid, &self.counters);
                self.record_event(tid, sid, kind, false);
            }
            _ => {}
        }
        Ok(())
    }

    /// Runs one intercepted call. Returns the value for the return register.
    pub fn call(
        &mut self,
        entry: EntryPoint,
        args: &CallArgs,
        site: u64,
        read_string: &dyn Fn(u32) -> Option<String>,
    ) -> Result<u32, ArpFailure> {
        let [a0, a1, a2, _] = args.0;
        let tid = a0 as Tid;
        match entry {
            EntryPoint::Enter(_) | EntryPoint::Leave(_) => self.section(entry, a0, a1, a2, site)?,
            EntryPoint::Spawned => {
                self.engine.spawned(a0 as Tid, a1 as Tid)?;
                self.stats.spawned(a0 as Tid, a1 as Tid);
            }
            EntryPoint::Join => self.engine.join(tid)?,
            EntryPoint::AddCallbacks | EntryPoint::SimAddCallbacks => {
                if entry == EntryPoint::AddCallbacks {
                    self.warnings.push(
                        "the guest calls arp_add_callbacks with its own callbacks; under sim-host the host's \
                         callbacks measure instead (build with -DARP_SIM)"
                            .into(),
                    );
                }
                self.install_callbacks()?;
            }
            EntryPoint::Start | EntryPoint::SimStart => self.start(a0 as Tid, a1 as Sid, a2)?,
            EntryPoint::Finish => {
                if self.finished.is_none() {
                    self.finished = Some(self.engine.finish()?);
                }
            }
            EntryPoint::SetFileName => match read_string(a0) {
                Some(name) => self.set_guest_file(&name),
                None => self
                    .warnings
                    .push("arp_set_file_name: the name is not readable guest memory".into()),
            },
            EntryPoint::SetFileFormat => {
                if self.options.format.is_none() {
                    let format = if a0 == 1 {
                        FileFormat::Binary
                    } else {
                        FileFormat::Ascii
                    };
                    self.engine.set_file_format(format)?;
                }
            }
            EntryPoint::Query => {}
        }
        Ok(0)
    }

    /// `arp_set_file_name` from the guest: accepted only where the guest's
    /// files may go (beneath `--fs-root`, or anywhere relative with
    /// `--allow-guest-file-name`); otherwise a warning, and `-o` or the
    /// default name is used.
    fn set_guest_file(&mut self, name: &str) {
        let placed = match (&self.options.fs_root, self.options.allow_guest_file_name) {
            _ if !is_plain_relative(name) => {
                Err("only a relative path without `..` is accepted from a guest".to_owned())
            }
            (Some(root), _) => beneath_root(root, name),
            (None, true) => Ok(PathBuf::from(name)),
            (None, false) => Err("a guest names its data file only beneath --fs-root \
                 (or with --allow-guest-file-name)"
                .to_owned()),
        };
        match placed {
            Ok(path) => self.guest_file = Some(path),
            Err(why) => self.warnings.push(format!(
                "arp_set_file_name({}) refused: {why}; writing {}",
                arpsim::error::quote(name),
                self.options
                    .file
                    .as_deref()
                    .unwrap_or(Path::new("data.arp"))
                    .display()
            )),
        }
    }

    /// At the end of a run: writes the file if the guest started recording
    /// and did not finish (a partial file when the run was cut short or
    /// sections are still open). Returns what `arp_finish` returned.
    pub fn conclude(&mut self, complete_run: bool) -> Option<Result<&FinishSummary, ArpError>> {
        // a playback run writes no data.arp: its cut-short load is the stop
        if self.options.playback.is_none() {
            if let Some(why) = self.cut_short.take() {
                return Some(Err(ArpError::Stopped(why)));
            }
        }
        if !self.started {
            return None;
        }
        if self.finished.is_none() {
            let result = if complete_run {
                self.engine
                    .finish()
                    .or_else(|_| self.engine.finish_partial())
            } else {
                self.engine.finish_partial()
            };
            match result {
                Ok(summary) => self.finished = Some(summary),
                Err(e) => return Some(Err(e)),
            }
        }
        self.finished.as_ref().map(Ok)
    }
}

/// `root/name`, if no symbolic link on the way leads out of `root`.
fn beneath_root(root: &Path, name: &str) -> Result<PathBuf, String> {
    let path = root.join(name);
    let escapes = || format!("it would lead out of --fs-root {}", root.display());
    let root = root
        .canonicalize()
        .map_err(|e| format!("--fs-root {}: {e}", root.display()))?;
    let parent = path.parent().unwrap_or(&root);
    let parent = parent
        .canonicalize()
        .map_err(|_| "its folder does not exist beneath --fs-root".to_owned())?;
    if !parent.starts_with(&root) {
        return Err(escapes());
    }
    // The output module follows a link at the end: it must stay inside too.
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err("it is a symbolic link".to_owned());
    }
    Ok(path)
}

/// A guest-chosen output name: relative, no `..`, not empty.
fn is_plain_relative(name: &str) -> bool {
    let p = std::path::Path::new(name);
    !name.is_empty()
        && p.is_relative()
        && p.components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> u64 {
        0
    }

    #[test]
    fn records_cycle_differences_into_stats() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.arp");
        let mut host = ArpHost::new(ArpOptions {
            file: Some(file.clone()),
            ..Default::default()
        });
        let no_strings = |_| None;
        let c = Rc::clone(&host.counters);
        host.call(
            EntryPoint::SimAddCallbacks,
            &CallArgs([0; 4]),
            site(),
            &no_strings,
        )
        .unwrap();
        host.call(
            EntryPoint::SimStart,
            &CallArgs([1, 8, 1, 0]),
            site(),
            &no_strings,
        )
        .unwrap();
        host.call(
            EntryPoint::Enter(SectionKind::Plain),
            &CallArgs([1, 2, 0, 0]),
            site(),
            &no_strings,
        )
        .unwrap();
        for i in 0..3u64 {
            c.cycles.set(100 * i);
            host.call(
                EntryPoint::Enter(SectionKind::Kernel),
                &CallArgs([1, 1, 0, 0]),
                site(),
                &no_strings,
            )
            .unwrap();
            c.cycles.set(100 * i + 10 + i);
            host.call(
                EntryPoint::Leave(SectionKind::Kernel),
                &CallArgs([1, 1, 0, 0]),
                site(),
                &no_strings,
            )
            .unwrap();
        }
        host.call(
            EntryPoint::Leave(SectionKind::Plain),
            &CallArgs([1, 2, 0, 0]),
            site(),
            &no_strings,
        )
        .unwrap();
        host.call(EntryPoint::Finish, &CallArgs([0; 4]), site(), &no_strings)
            .unwrap();
        let traces = host.stats().traces(|_| Some("main".into()));
        let kernel = traces.iter().find(|t| t.path == [2, 1]).unwrap();
        assert_eq!(kernel.functions, vec![Some("main".to_string()); 2]);
        assert_eq!((kernel.count, kernel.total_cycles), (3, 10 + 11 + 12));
        assert_eq!((kernel.min_cycles, kernel.max_cycles), (10, 12));
        assert_eq!(kernel.kind, "kernel");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("2 0 2@0 1@0: 10;"), "{text}");
    }

    #[test]
    fn leave_without_enter_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let mut host = ArpHost::new(ArpOptions {
            file: Some(dir.path().join("t.arp")),
            ..Default::default()
        });
        let no_strings = |_| None;
        host.call(
            EntryPoint::SimStart,
            &CallArgs([1, 8, 0, 0]),
            site(),
            &no_strings,
        )
        .unwrap();
        let err = host
            .call(
                EntryPoint::Leave(SectionKind::Kernel),
                &CallArgs([1, 1, 0, 0]),
                site(),
                &no_strings,
            )
            .unwrap_err();
        assert!(
            err.error.to_string().contains("without a matching enter"),
            "{}",
            err.error
        );
    }

    #[test]
    fn guest_file_names_must_stay_relative() {
        assert!(is_plain_relative("out.arp"));
        assert!(is_plain_relative("dir/out.arp"));
        assert!(!is_plain_relative("/tmp/x.arp"));
        assert!(!is_plain_relative("../x.arp"));
        assert!(!is_plain_relative(""));
    }
}
