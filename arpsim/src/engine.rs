//! The record & playback engine: per-thread section stacks, section
//! counters and counter tuples (manual 4.3, 4.4, DESIGN.md decision 3),
//! callback sets (manual 2.3, 3.1, 6.1.2) and the four modes (manual 6.2).

use crate::codec::{self, OutputSpec, StreamedOutput};
use crate::error::{not_started, ArpError, Result};
use crate::paths::PathInterner;
use crate::playback::{PlaybackIndex, PlaybackReport, NO_NODE, ROOT};
use crate::record::{Header, Histogram, Payload, HISTOGRAM_BINS};
use crate::types::{
    format_path_tail, DataType, FileFormat, Lidx, Mode, Sid, StackEntry, Tid, Value,
};
use std::path::{Path, PathBuf};

/// A set of measuring callbacks (manual 6.1.2 `arp_add_callbacks`).
///
/// `enter` and `leave` are called for kernel and profiled sections only
/// (manual 2.4), with the data area of this set for this execution of the
/// section: zero when recording, the recorded value in playback (manual
/// 6.2). What `leave` leaves in the data area is recorded. The thread id
/// lets a set keep per-thread state (the C library keeps the per-thread
/// context pointer of manual 3.1 this way).
pub trait CallbackSet {
    /// The data type of this set's data areas.
    fn data_type(&self) -> DataType;
    /// A kernel or profiled section `sid` is entered by thread `tid`.
    fn enter(&mut self, tid: Tid, sid: Sid, data: &mut Value);
    /// A kernel or profiled section `sid` is left by thread `tid`.
    fn leave(&mut self, tid: Tid, sid: Sid, data: &mut Value);
    /// Thread `child` was started by `parent` (manual 3.1).
    fn spawn(&mut self, _parent: Tid, _child: Tid) {}
    /// Thread `tid` is about to end (manual 3.1).
    fn join(&mut self, _tid: Tid) {}
}

/// The three kinds of section (manual 2.4, 6.1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SectionKind {
    /// `arp_enter`/`arp_leave`: context only, no callbacks.
    Plain,
    /// `arp_enter_kernel`/`arp_leave_kernel`: measured, never nested.
    Kernel,
    /// `arp_enter_profiled`/`arp_leave_profiled`: measured, may nest.
    Profiled,
}

impl SectionKind {
    fn name(self) -> &'static str {
        match self {
            SectionKind::Plain => "plain",
            SectionKind::Kernel => "kernel",
            SectionKind::Profiled => "profiled",
        }
    }
    fn measured(self) -> bool {
        self != SectionKind::Plain
    }
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    sid: Sid,
    kind: SectionKind,
    /// Unique id of this execution of the section (decision 3).
    instance: u64,
    /// Interned section-id path (average and histogram modes).
    path_node: u32,
    /// Playback trie node of this entry (playback mode).
    pb_node: u32,
    /// Start of this frame's data areas in the thread's value stack.
    data_start: u32,
    /// Copied from the parent thread at spawn (manual 4.4): the child may
    /// not leave it.
    inherited: bool,
}

#[derive(Clone, Copy)]
struct Counter {
    /// Instance of the enclosing section at the last entry (`u64::MAX`:
    /// never entered).
    parent_instance: u64,
    value: Lidx,
}

const NEVER: Counter = Counter {
    parent_instance: u64::MAX,
    value: 0,
};

/// A thread's section counters, by section id. What a thread holds is
/// proportional to the sections it entered, not to `max_sid` (issue 30,
/// N05: 16 bytes x 65,536 per thread once cost 1 MiB a thread): the low
/// ids, which programs use, in a vector grown to the highest one entered;
/// the others in a map.
#[derive(Default)]
struct SectionCounters {
    dense: Vec<Counter>,
    sparse: rustc_hash::FxHashMap<Sid, Counter>,
}

/// Section ids below this are kept in the vector (4 KiB at most).
const DENSE_SIDS: usize = 256;

impl SectionCounters {
    #[inline]
    fn get_mut(&mut self, sid: Sid) -> &mut Counter {
        let i = usize::from(sid);
        if i < DENSE_SIDS {
            if self.dense.len() <= i {
                self.dense.resize(i + 1, NEVER);
            }
            &mut self.dense[i]
        } else {
            self.sparse.entry(sid).or_insert(NEVER)
        }
    }
}

struct ThreadState {
    frames: Vec<Frame>,
    /// `sid@idx` of every frame: the trace of a record (decision 6).
    entries: Vec<StackEntry>,
    data: Vec<Value>,
    counters: SectionCounters,
    kernels_open: u32,
    spawned: bool,
}

impl ThreadState {
    fn new() -> Self {
        ThreadState {
            frames: Vec::with_capacity(32),
            entries: Vec::with_capacity(32),
            data: Vec::with_capacity(32),
            counters: SectionCounters::default(),
            kernels_open: 0,
            spawned: false,
        }
    }

    fn open_sections(&self) -> String {
        self.frames
            .iter()
            .filter(|f| !f.inherited)
            .map(|f| format!("{} {}", f.kind.name(), f.sid))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[derive(Default)]
struct Aggregate {
    count: u64,
    sums: Vec<f64>,
    bins: Vec<[u64; HISTOGRAM_BINS]>,
}

/// Per-trace accumulators of `record_average` and `record_histogram`,
/// keyed by the interned section-id path.
#[derive(Default)]
struct Aggregates {
    paths: PathInterner,
    /// By path node.
    accs: Vec<Option<Aggregate>>,
    order: Vec<u32>,
}

impl Aggregates {
    fn add(&mut self, node: u32, values: &[Value], histogram: bool) {
        if self.accs.len() <= node as usize {
            self.accs.resize_with(self.paths.len(), || None);
        }
        let slot = &mut self.accs[node as usize];
        if slot.is_none() {
            self.order.push(node);
        }
        let acc = slot.get_or_insert_with(|| Aggregate {
            count: 0,
            sums: vec![0.0; values.len()],
            bins: if histogram {
                vec![[0; HISTOGRAM_BINS]; values.len()]
            } else {
                Vec::new()
            },
        });
        acc.count += 1;
        for (i, v) in values.iter().enumerate() {
            acc.sums[i] += v.as_f64();
            if histogram {
                acc.bins[i][Histogram::bin_of(v) as usize] += 1;
            }
        }
    }

    fn path(&self, node: u32) -> Vec<StackEntry> {
        let sids = self.paths.path(node);
        sids.into_iter()
            .map(|sid| StackEntry { sid, idx: 0 })
            .collect()
    }

    /// The records in the order their traces were first left, made one
    /// at a time (a record's stack is its whole path: holding them all
    /// would cost the square of the nesting depth).
    fn records(&self, histogram: bool) -> impl Iterator<Item = crate::record::Record> + '_ {
        self.order.iter().map(move |&node| {
            let acc = self.accs[node as usize]
                .as_ref()
                .expect("ordered nodes have data");
            let payload = if histogram {
                Payload::Histogram {
                    count: acc.count,
                    histograms: acc
                        .bins
                        .iter()
                        .map(|b| Histogram {
                            bins: b
                                .iter()
                                .enumerate()
                                .filter(|(_, &n)| n > 0)
                                .map(|(i, &n)| (i as u8, n))
                                .collect(),
                        })
                        .collect(),
                }
            } else {
                Payload::Average {
                    count: acc.count,
                    means: acc.sums.iter().map(|s| s / acc.count as f64).collect(),
                }
            };
            crate::record::Record {
                stack: self.path(node),
                payload,
            }
        })
    }
}

enum Sink {
    Aggregate(Aggregates, bool),
    Stream(StreamedOutput),
    Playback(PlaybackIndex),
}

struct Running {
    /// Data types of the callback sets, cached for the hot path.
    types: Vec<DataType>,
    max_tid: Tid,
    max_sid: Sid,
    mode: Mode,
    threads: Vec<Option<Box<ThreadState>>>,
    sink: Sink,
    next_instance: u64,
}

/// What [`Engine::finish`] did.
#[derive(Debug, Default)]
pub struct FinishSummary {
    /// The file written (none in playback mode).
    pub path: Option<PathBuf>,
    /// Number of records written.
    pub records: u64,
    /// The file is marked partial.
    pub partial: bool,
    /// The playback verification (playback mode).
    pub playback: Option<PlaybackReport>,
    /// Warnings (manual 3.4.2: threads still running).
    pub warnings: Vec<ArpError>,
}

/// The ARP engine. One instance records or plays back one run; it is
/// driven by `&mut self` calls and takes no locks (manual 3.3).
pub struct Engine {
    callbacks: Vec<Box<dyn CallbackSet>>,
    output: OutputSpec,
    running: Option<Running>,
    last_playback: Option<PlaybackIndex>,
}

impl Default for Engine {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("callback_sets", &self.callbacks.len())
            .field("output", &self.output)
            .field("mode", &self.mode())
            .finish()
    }
}

impl Engine {
    /// A stopped engine with no callback sets, writing `data.arp`.
    pub fn new() -> Self {
        Engine {
            callbacks: Vec::new(),
            output: OutputSpec::default(),
            running: None,
            last_playback: None,
        }
    }

    /// Adds a callback set (manual 6.1.2): sets are called in the order
    /// they were added, each with its own data type and data areas.
    pub fn add_callbacks(&mut self, set: Box<dyn CallbackSet>) -> Result<()> {
        if self.running.is_some() {
            return Err(ArpError::AfterStart {
                what: "arp_add_callbacks",
            });
        }
        if self.callbacks.len() >= crate::types::MAX_CALLBACK_SETS {
            return Err(ArpError::Invalid(format!(
                "arp_add_callbacks: at most {} callback sets: a data.arp holds no more (FORMAT.md)",
                crate::types::MAX_CALLBACK_SETS
            )));
        }
        self.callbacks.push(set);
        Ok(())
    }

    /// The data types of the callback sets, in registration order.
    pub fn data_types(&self) -> Vec<DataType> {
        self.callbacks.iter().map(|c| c.data_type()).collect()
    }

    /// Sets the data file name (manual 6.1.2 `arp_set_file_name`; before
    /// start). A name ending in `.gz` is written gzip-compressed.
    pub fn set_file_name(&mut self, path: impl Into<PathBuf>) -> Result<()> {
        self.before_start("arp_set_file_name")?;
        self.output.path = path.into();
        Ok(())
    }

    /// Sets the output format (manual 6.1.2 `arp_set_output_file_format`).
    pub fn set_file_format(&mut self, format: FileFormat) -> Result<()> {
        self.before_start("arp_set_output_file_format")?;
        self.output.format = format;
        Ok(())
    }

    /// Asks for gzip compression of the output.
    pub fn set_gzip(&mut self, gzip: bool) -> Result<()> {
        self.before_start("set_gzip")?;
        self.output.gzip = gzip;
        Ok(())
    }

    /// Where the data file goes.
    pub fn output(&self) -> &OutputSpec {
        &self.output
    }

    /// `arp_start` may be called once per run (manual 6.1.2).
    fn not_started_yet(&self) -> Result<()> {
        if self.running.is_some() {
            Err(ArpError::AlreadyStarted)
        } else {
            Ok(())
        }
    }

    fn before_start(&self, what: &'static str) -> Result<()> {
        if self.running.is_some() {
            Err(ArpError::AfterStart { what })
        } else {
            Ok(())
        }
    }

    /// The current mode, if started.
    pub fn mode(&self) -> Option<Mode> {
        self.running.as_ref().map(|r| r.mode)
    }

    /// Whether `start` was called and `finish` not yet.
    pub fn is_started(&self) -> bool {
        self.running.is_some()
    }

    /// Starts recording or playback (manual 6.1.2 `arp_start`). Playback
    /// loads the file named by [`Engine::set_file_name`]. `record_all`
    /// opens the streamed output file at once.
    pub fn start(&mut self, max_tid: Tid, max_sid: Sid, mode: Mode) -> Result<()> {
        self.not_started_yet()?;
        if self.callbacks.is_empty() {
            return Err(ArpError::NoCallbacks);
        }
        let sink = match mode {
            Mode::RecordAverage => Sink::Aggregate(Aggregates::default(), false),
            Mode::RecordHistogram => Sink::Aggregate(Aggregates::default(), true),
            Mode::RecordAll => Sink::Stream(StreamedOutput::create(
                &self.output,
                &self.header(Mode::RecordAll, 0, false),
            )?),
            Mode::Playback => {
                let index = PlaybackIndex::load(&self.output.path)?;
                return self.start_playback(max_tid, max_sid, index);
            }
        };
        self.running = Some(Running::new(
            self.data_types(),
            max_tid,
            max_sid,
            mode,
            sink,
        ));
        Ok(())
    }

    /// Starts playback of an already loaded index (for example one loaded
    /// with [`PlaybackIndex::load`] from any file).
    pub fn start_playback(
        &mut self,
        max_tid: Tid,
        max_sid: Sid,
        index: PlaybackIndex,
    ) -> Result<()> {
        self.not_started_yet()?;
        let needed = self.data_types();
        if needed.is_empty() {
            return Err(ArpError::NoCallbacks);
        }
        if needed != index.types() {
            let names = |t: &[DataType]| t.iter().map(|t| t.c_name()).collect::<Vec<_>>().join(",");
            return Err(ArpError::CallbackMismatch {
                needed: needed.len(),
                needed_types: names(&needed),
                found_types: names(index.types()),
            });
        }
        self.running = Some(Running::new(
            needed,
            max_tid,
            max_sid,
            Mode::Playback,
            Sink::Playback(index),
        ));
        Ok(())
    }

    fn header(&self, mode: Mode, count: u64, partial: bool) -> Header {
        Header {
            format: self.output.format,
            mode,
            types: self.data_types(),
            count,
            partial,
        }
    }

    /// Enters a section (manual 6.1.2 `arp_enter*`). The counter rule is
    /// DESIGN.md decision 3: the counter restarts at `lidx` when the
    /// enclosing section instance differs from the last entry's, and is
    /// incremented otherwise.
    ///
    /// In playback, a tuple with no recorded sample gives
    /// [`ArpError::NoRecordedSample`] (non-fatal) *after* the section was
    /// entered with zeroed data areas, so that its leave still matches.
    pub fn enter(&mut self, tid: Tid, sid: Sid, lidx: Lidx, kind: SectionKind) -> Result<()> {
        let run = self.running.as_mut().ok_or_else(not_started)?;
        run.check_ids(tid, sid)?;
        let thread = run.threads[tid as usize].get_or_insert_with(|| Box::new(ThreadState::new()));
        if kind == SectionKind::Kernel && thread.kernels_open > 0 {
            // Manual 2.1: kernels are not nested, statically or dynamically.
            let outer = thread
                .frames
                .iter()
                .rev()
                .find(|f| f.kind == SectionKind::Kernel)
                .map_or(0, |f| f.sid);
            return Err(ArpError::KernelNested {
                tid,
                outer,
                inner: sid,
            });
        }
        let parent = thread.frames.last().copied();
        // interned first: a path past the cap is refused before any change
        let path_node = match &mut run.sink {
            Sink::Aggregate(aggs, _) => {
                let parent_node = parent.map_or(PathInterner::ROOT, |p| p.path_node);
                // a match, not ok_or: the error is built only when refused
                // (built and dropped on every entry, it cost 1.5 % of an
                // ARP-call-dense run)
                match aggs.paths.try_child(parent_node, sid) {
                    Some(node) => node,
                    None => {
                        return Err(ArpError::TooManyPaths {
                            tid,
                            sid,
                            cap: crate::paths::MAX_SECTION_PATHS,
                        })
                    }
                }
            }
            _ => 0,
        };
        let parent_instance = parent.map_or(0, |p| p.instance);
        let counter = thread.counters.get_mut(sid);
        let idx = if counter.parent_instance == parent_instance {
            counter.value.wrapping_add(1)
        } else {
            lidx
        };
        *counter = Counter {
            parent_instance,
            value: idx,
        };
        run.next_instance += 1;
        let mut frame = Frame {
            sid,
            kind,
            instance: run.next_instance,
            path_node,
            pb_node: NO_NODE,
            data_start: thread.data.len() as u32,
            inherited: false,
        };
        let parent_pb = parent.map_or(ROOT, |p| p.pb_node);
        let mut missing = false;
        match &mut run.sink {
            Sink::Aggregate(..) | Sink::Stream(_) => {}
            Sink::Playback(index) => {
                frame.pb_node = index.child(parent_pb, sid, idx);
                if kind.measured() {
                    match index.lookup(parent_pb, sid, idx) {
                        Some(slot) => {
                            for set in 0..self.callbacks.len() {
                                thread.data.push(index.value(slot, set));
                            }
                            index.mark_played(slot, tid);
                        }
                        None => missing = true,
                    }
                }
            }
        }
        thread.frames.push(frame);
        thread.entries.push(StackEntry { sid, idx });
        if kind == SectionKind::Kernel {
            thread.kernels_open += 1;
        }
        if kind.measured() {
            if missing || !matches!(run.sink, Sink::Playback(_)) {
                thread
                    .data
                    .extend(run.types.iter().map(|&t| Value::zero(t)));
            }
            let start = frame.data_start as usize;
            for (cb, data) in self.callbacks.iter_mut().zip(&mut thread.data[start..]) {
                cb.enter(tid, sid, data);
            }
        }
        if missing {
            if let Sink::Playback(index) = &mut run.sink {
                index.mark_unexpected(tid, &thread.entries);
            }
            return Err(ArpError::NoRecordedSample {
                tid,
                sid,
                path: format_path_tail(&thread.entries),
            });
        }
        Ok(())
    }

    /// Leaves a section (manual 6.1.2 `arp_leave*`): it must be the
    /// innermost section the thread entered, of the same kind.
    pub fn leave(&mut self, tid: Tid, sid: Sid, kind: SectionKind) -> Result<()> {
        let run = self.running.as_mut().ok_or_else(not_started)?;
        run.check_ids(tid, sid)?;
        let Some(thread) = run.threads[tid as usize].as_mut() else {
            return Err(ArpError::LeaveWithoutEnter { tid, sid });
        };
        let frame = match thread.frames.last() {
            Some(f) if !f.inherited => *f,
            _ => {
                return Err(
                    if thread.frames.iter().any(|f| f.sid == sid && !f.inherited) {
                        ArpError::LeaveMismatch {
                            tid,
                            left: sid,
                            innermost: thread.frames.last().map_or(0, |f| f.sid),
                        }
                    } else {
                        ArpError::LeaveWithoutEnter { tid, sid }
                    },
                )
            }
        };
        if frame.sid != sid {
            if !thread.frames.iter().any(|f| f.sid == sid && !f.inherited) {
                return Err(ArpError::LeaveWithoutEnter { tid, sid });
            }
            return Err(ArpError::LeaveMismatch {
                tid,
                left: sid,
                innermost: frame.sid,
            });
        }
        if frame.kind != kind {
            return Err(ArpError::LeaveKindMismatch {
                tid,
                sid,
                kind: kind.name(),
                entered: frame.kind.name(),
            });
        }
        let mut result = Ok(());
        if kind.measured() {
            let start = frame.data_start as usize;
            for (cb, data) in self.callbacks.iter_mut().zip(&mut thread.data[start..]) {
                cb.leave(tid, sid, data);
            }
            let values = &thread.data[start..];
            match &mut run.sink {
                Sink::Aggregate(aggs, histogram) => aggs.add(frame.path_node, values, *histogram),
                Sink::Stream(out) => result = out.write_sample(&thread.entries, values),
                Sink::Playback(_) => {}
            }
            thread.data.truncate(start);
        }
        if kind == SectionKind::Kernel {
            thread.kernels_open -= 1;
        }
        thread.frames.pop();
        thread.entries.pop();
        result
    }

    /// `arp_enter` (plain section).
    #[inline]
    pub fn enter_plain(&mut self, tid: Tid, sid: Sid, lidx: Lidx) -> Result<()> {
        self.enter(tid, sid, lidx, SectionKind::Plain)
    }
    /// `arp_enter_kernel`.
    #[inline]
    pub fn enter_kernel(&mut self, tid: Tid, sid: Sid, lidx: Lidx) -> Result<()> {
        self.enter(tid, sid, lidx, SectionKind::Kernel)
    }
    /// `arp_enter_profiled`.
    #[inline]
    pub fn enter_profiled(&mut self, tid: Tid, sid: Sid, lidx: Lidx) -> Result<()> {
        self.enter(tid, sid, lidx, SectionKind::Profiled)
    }
    /// `arp_leave` (plain section).
    #[inline]
    pub fn leave_plain(&mut self, tid: Tid, sid: Sid) -> Result<()> {
        self.leave(tid, sid, SectionKind::Plain)
    }
    /// `arp_leave_kernel`.
    #[inline]
    pub fn leave_kernel(&mut self, tid: Tid, sid: Sid) -> Result<()> {
        self.leave(tid, sid, SectionKind::Kernel)
    }
    /// `arp_leave_profiled`.
    #[inline]
    pub fn leave_profiled(&mut self, tid: Tid, sid: Sid) -> Result<()> {
        self.leave(tid, sid, SectionKind::Profiled)
    }

    /// `arp_spawned(parent, child)`: the child starts with a copy of the
    /// parent's section stack (DESIGN.md decision 3, manual 4.4) and fresh
    /// counters; then every set's spawn callback runs (manual 3.1).
    pub fn spawned(&mut self, parent: Tid, child: Tid) -> Result<()> {
        let run = self.running.as_mut().ok_or_else(not_started)?;
        run.check_tid(parent)?;
        run.check_tid(child)?;
        if run.threads[child as usize].is_some() {
            return Err(ArpError::ThreadExists { child });
        }
        let parent_state =
            run.threads[parent as usize].get_or_insert_with(|| Box::new(ThreadState::new()));
        let mut state = ThreadState::new();
        state.frames = parent_state
            .frames
            .iter()
            .map(|f| Frame {
                inherited: true,
                data_start: 0,
                ..*f
            })
            .collect();
        state.entries = parent_state.entries.clone();
        state.kernels_open = parent_state.kernels_open;
        state.spawned = true;
        run.threads[child as usize] = Some(Box::new(state));
        for cb in &mut self.callbacks {
            cb.spawn(parent, child);
        }
        Ok(())
    }

    /// `arp_join(tid)`: runs the join callbacks and ends the thread. Its
    /// own sections must all have been left.
    pub fn join(&mut self, tid: Tid) -> Result<()> {
        let run = self.running.as_mut().ok_or_else(not_started)?;
        run.check_tid(tid)?;
        let Some(state) = run.threads[tid as usize].as_ref() else {
            return Err(ArpError::JoinUnknownThread { tid });
        };
        let open = state.open_sections();
        for cb in &mut self.callbacks {
            cb.join(tid);
        }
        run.threads[tid as usize] = None;
        if !open.is_empty() {
            return Err(ArpError::OpenSectionsAtJoin { tid, open });
        }
        Ok(())
    }

    /// The current trace of thread `tid` (outermost first), if it exists.
    pub fn stack(&self, tid: Tid) -> Option<&[StackEntry]> {
        let run = self.running.as_ref()?;
        run.threads
            .get(tid as usize)?
            .as_ref()
            .map(|t| &t.entries[..])
    }

    /// The playback index being played (playback mode) or last played.
    pub fn playback_index(&self) -> Option<&PlaybackIndex> {
        match self.running.as_ref().map(|r| &r.sink) {
            Some(Sink::Playback(ix)) => Some(ix),
            _ => self.last_playback.as_ref(),
        }
    }

    /// The verification of the current or last playback run.
    pub fn playback_report(&self) -> Option<PlaybackReport> {
        self.playback_index().map(PlaybackIndex::report)
    }

    /// Number of records streamed so far (`record_all`).
    pub fn records_written(&self) -> u64 {
        match self.running.as_ref().map(|r| &r.sink) {
            Some(Sink::Stream(out)) => out.count(),
            _ => 0,
        }
    }

    /// `arp_finish` (manual 6.1.2): saves the data. Refused, with the
    /// engine still running, while any thread has a section open; use
    /// [`Engine::finish_partial`] to save anyway.
    pub fn finish(&mut self) -> Result<FinishSummary> {
        let run = self.running.as_ref().ok_or_else(not_started)?;
        let open: Vec<String> = run
            .threads
            .iter()
            .enumerate()
            .filter_map(|(tid, t)| {
                let s = t.as_ref()?.open_sections();
                (!s.is_empty()).then(|| format!("thread {tid}: {s}"))
            })
            .collect();
        if !open.is_empty() {
            return Err(ArpError::OpenSectionsAtFinish {
                open: open.join("; "),
            });
        }
        self.finish_inner(false)
    }

    /// Saves what was recorded so far into a file whose header says it is
    /// partial (FORMAT.md), whatever sections are open; for interrupted
    /// runs. In playback mode it just stops.
    pub fn finish_partial(&mut self) -> Result<FinishSummary> {
        self.finish_inner(true)
    }

    fn finish_inner(&mut self, partial: bool) -> Result<FinishSummary> {
        let run = self.running.take().ok_or_else(not_started)?;
        let trailing = run.threads.iter().flatten().filter(|t| t.spawned).count();
        let mut summary = FinishSummary {
            partial,
            ..Default::default()
        };
        if trailing > 0 {
            summary
                .warnings
                .push(ArpError::TrailingThreads { count: trailing });
        }
        match run.sink {
            Sink::Aggregate(aggs, histogram) => {
                let mode = if histogram {
                    Mode::RecordHistogram
                } else {
                    Mode::RecordAverage
                };
                let count = aggs.order.len() as u64;
                let header = self.header(mode, count, partial);
                codec::write_record_iter(&self.output, &header, count, aggs.records(histogram))?;
                summary.records = count;
                summary.path = Some(self.output.path.clone());
            }
            Sink::Stream(out) => {
                summary.records = out.count();
                summary.path = Some(out.finish(partial)?);
            }
            Sink::Playback(index) => {
                summary.playback = Some(index.report());
                self.last_playback = Some(index);
            }
        }
        Ok(summary)
    }

    /// Takes the index of the last playback run out of the engine.
    pub fn take_playback_index(&mut self) -> Option<PlaybackIndex> {
        if matches!(
            self.running.as_ref().map(|r| &r.sink),
            Some(Sink::Playback(_))
        ) {
            return None;
        }
        self.last_playback.take()
    }

    /// The output path as given.
    pub fn file_name(&self) -> &Path {
        &self.output.path
    }
}

impl Running {
    fn new(types: Vec<DataType>, max_tid: Tid, max_sid: Sid, mode: Mode, sink: Sink) -> Self {
        Running {
            types,
            max_tid,
            max_sid,
            mode,
            threads: (0..=max_tid as usize).map(|_| None).collect(),
            sink,
            next_instance: 0,
        }
    }

    #[inline]
    fn check_tid(&self, tid: Tid) -> Result<()> {
        if tid > self.max_tid {
            return Err(ArpError::TidOutOfRange {
                tid,
                max: self.max_tid,
            });
        }
        Ok(())
    }

    #[inline]
    fn check_ids(&self, tid: Tid, sid: Sid) -> Result<()> {
        self.check_tid(tid)?;
        if sid > self.max_sid {
            return Err(ArpError::SidOutOfRange {
                sid,
                max: self.max_sid,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
