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
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

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

/// The built-in measuring set ([`Engine::add_counter_set`]): at enter the
/// counter's value, at leave its difference since (0 if it went back), as
/// an `unsigned long long`.
pub struct CounterDiff(pub Rc<Cell<u64>>);

impl CallbackSet for CounterDiff {
    fn data_type(&self) -> DataType {
        DataType::ULLong
    }
    fn enter(&mut self, _: Tid, _: Sid, data: &mut Value) {
        *data = Value::ULong(self.0.get());
    }
    fn leave(&mut self, _: Tid, _: Sid, data: &mut Value) {
        *data = Value::ULong(self.0.get().saturating_sub(counter_start(data)));
    }
}

/// The counter value a [`CounterDiff`] data area holds (in playback, the
/// recorded value of any type).
fn counter_start(data: &Value) -> u64 {
    match *data {
        Value::ULong(v) | Value::ULLong(v) => v,
        Value::Long(v) | Value::LLong(v) => v as u64,
        Value::UInt(v) => u64::from(v),
        Value::Int(v) => v as u64,
        ref other => other.as_f64().max(0.0) as u64,
    }
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
    /// The fast path's first counter at the enter (the others, if any,
    /// in the thread's `starts` from `data_start`).
    first: u64,
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
    /// The counter of `sid` at an entry under the parent instance
    /// `parent_instance` (DESIGN.md decision 3), kept.
    #[inline]
    fn enter(&mut self, sid: Sid, lidx: Lidx, parent_instance: u64) -> Lidx {
        let counter = self.get_mut(sid);
        let idx = if counter.parent_instance == parent_instance {
            counter.value.wrapping_add(1)
        } else {
            lidx
        };
        *counter = Counter {
            parent_instance,
            value: idx,
        };
        idx
    }

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
    /// The fast path's data areas: the counters' values at the enter of
    /// each open measured frame, `sets` a frame.
    starts: Vec<u64>,
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
            starts: Vec::with_capacity(32),
            counters: SectionCounters::default(),
            kernels_open: 0,
            spawned: false,
        }
    }

    /// The error of entering kernel `sid` while another is open.
    #[cold]
    #[inline(never)]
    fn kernel_nested(&self, tid: Tid, sid: Sid) -> ArpError {
        // Manual 2.1: kernels are not nested, statically or dynamically.
        let outer = self
            .frames
            .iter()
            .rev()
            .find(|f| f.kind == SectionKind::Kernel)
            .map_or(0, |f| f.sid);
        ArpError::KernelNested {
            tid,
            outer,
            inner: sid,
        }
    }

    /// Pushes an entered frame, its `sid@idx` and its kernel count.
    #[inline]
    fn open(&mut self, frame: Frame, idx: Lidx) {
        self.frames.push(frame);
        self.entries.push(StackEntry {
            sid: frame.sid,
            idx,
        });
        if frame.kind == SectionKind::Kernel {
            self.kernels_open += 1;
        }
    }

    /// The frame a leave of `sid` (`kind`) closes: the innermost, the
    /// thread's own, of that section and kind.
    #[inline]
    fn innermost(&self, tid: Tid, sid: Sid, kind: SectionKind) -> Result<Frame> {
        match self.frames.last() {
            Some(f) if !f.inherited && f.sid == sid && f.kind == kind => Ok(*f),
            _ => Err(self.leave_error(tid, sid, kind)),
        }
    }

    /// Why a leave of `sid` (`kind`) closes no frame.
    #[cold]
    #[inline(never)]
    fn leave_error(&self, tid: Tid, sid: Sid, kind: SectionKind) -> ArpError {
        let entered = |sid| self.frames.iter().any(|f| f.sid == sid && !f.inherited);
        let frame = match self.frames.last() {
            Some(f) if !f.inherited => *f,
            _ if entered(sid) => {
                return ArpError::LeaveMismatch {
                    tid,
                    left: sid,
                    innermost: self.frames.last().map_or(0, |f| f.sid),
                }
            }
            _ => return ArpError::LeaveWithoutEnter { tid, sid },
        };
        if frame.sid != sid {
            if !entered(sid) {
                return ArpError::LeaveWithoutEnter { tid, sid };
            }
            return ArpError::LeaveMismatch {
                tid,
                left: sid,
                innermost: frame.sid,
            };
        }
        ArpError::LeaveKindMismatch {
            tid,
            sid,
            kind: kind.name(),
            entered: frame.kind.name(),
        }
    }

    /// Pops the innermost frame, left as `kind`.
    #[inline]
    fn close(&mut self, kind: SectionKind) {
        if kind == SectionKind::Kernel {
            self.kernels_open -= 1;
        }
        self.frames.pop();
        self.entries.pop();
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

/// Per-trace accumulators of `record_average` and `record_histogram`,
/// keyed by the interned section-id path and kept in place: a trace gets
/// a slot when it is first left (the slots are the order of the records),
/// and its count, sums and bins sit in flat vectors at that slot, so a
/// leave adds to them without allocating or looking anything up.
struct Aggregates {
    paths: PathInterner,
    histogram: bool,
    /// Values per record (the callback sets).
    sets: usize,
    /// By path node: its slot, or [`NO_SLOT`] before its first leave.
    slot_of: Vec<u32>,
    /// By slot: the node, and how many samples were added.
    nodes: Vec<u32>,
    counts: Vec<u64>,
    /// By slot x set.
    sums: Vec<f64>,
    bins: Vec<[u64; HISTOGRAM_BINS]>,
}

const NO_SLOT: u32 = u32::MAX;

impl Aggregates {
    fn new(histogram: bool, sets: usize) -> Self {
        Aggregates {
            paths: PathInterner::default(),
            histogram,
            sets,
            slot_of: Vec::new(),
            nodes: Vec::new(),
            counts: Vec::new(),
            sums: Vec::new(),
            bins: Vec::new(),
        }
    }

    /// The slot of `node`, counted once more; made on its first leave.
    #[inline]
    fn count(&mut self, node: u32) -> usize {
        let slot = match self.slot_of.get(node as usize) {
            Some(&slot) if slot != NO_SLOT => slot as usize,
            _ => self.new_slot(node),
        };
        self.counts[slot] += 1;
        slot
    }

    #[cold]
    #[inline(never)]
    fn new_slot(&mut self, node: u32) -> usize {
        if self.slot_of.len() <= node as usize {
            self.slot_of
                .resize(self.paths.len().max(node as usize + 1), NO_SLOT);
        }
        let slot = self.nodes.len();
        self.slot_of[node as usize] = slot as u32;
        self.nodes.push(node);
        self.counts.push(0);
        self.sums.resize(self.sums.len() + self.sets, 0.0);
        if self.histogram {
            self.bins
                .resize(self.bins.len() + self.sets, [0; HISTOGRAM_BINS]);
        }
        slot
    }

    /// The node of `parent`'s path and `sid`; refused past the cap,
    /// before any change.
    #[inline]
    fn child_path(&mut self, parent: u32, tid: Tid, sid: Sid) -> Result<u32> {
        // a match, not ok_or: the error is built only when refused (built
        // and dropped on every entry, it cost 1.5 % of an ARP-call-dense run)
        match self.paths.try_child(parent, sid) {
            Some(node) => Ok(node),
            None => Err(too_many_paths(tid, sid)),
        }
    }

    /// Adds one sample (the general path's values).
    fn add(&mut self, node: u32, values: &[Value]) {
        let at = self.count(node) * self.sets;
        for (i, v) in values.iter().enumerate() {
            self.sums[at + i] += v.as_f64();
            if self.histogram {
                self.bins[at + i][Histogram::bin_of(v) as usize] += 1;
            }
        }
    }

    /// [`Aggregates::add_counts`] of one set.
    #[inline]
    fn add_count(&mut self, node: u32, value: u64) {
        let slot = self.count(node);
        if let Some(sum) = self.sums.get_mut(slot) {
            *sum += value as f64;
        }
        if self.histogram {
            if let Some(bins) = self.bins.get_mut(slot) {
                bins[counter_bin(value)] += 1;
            }
        }
    }

    /// Adds one sample of the built-in counter sets: the same sums and
    /// bins as [`Aggregates::add`] of `Value::ULong` values.
    #[inline]
    fn add_counts(&mut self, node: u32, values: impl Iterator<Item = u64>) {
        let at = self.count(node) * self.sets;
        for (i, v) in values.enumerate() {
            self.sums[at + i] += v as f64;
            if self.histogram {
                self.bins[at + i][counter_bin(v)] += 1;
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
    fn records(&self) -> impl Iterator<Item = crate::record::Record> + '_ {
        self.nodes.iter().enumerate().map(move |(slot, &node)| {
            let count = self.counts[slot];
            let range = slot * self.sets..(slot + 1) * self.sets;
            let payload = if self.histogram {
                Payload::Histogram {
                    count,
                    histograms: self.bins[range]
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
                    count,
                    means: self.sums[range].iter().map(|s| s / count as f64).collect(),
                }
            };
            crate::record::Record {
                stack: self.path(node),
                payload,
            }
        })
    }
}

/// The error of a new path past [`crate::paths::MAX_SECTION_PATHS`].
#[cold]
#[inline(never)]
fn too_many_paths(tid: Tid, sid: Sid) -> ArpError {
    ArpError::TooManyPaths {
        tid,
        sid,
        cap: crate::paths::MAX_SECTION_PATHS,
    }
}

/// [`Histogram::bin_of`] of `Value::ULong(v)`: the bit length of `v`.
#[inline]
fn counter_bin(v: u64) -> usize {
    (u64::BITS - v.leading_zeros()) as usize
}

enum Sink {
    Aggregate(Aggregates),
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
    /// Every set is built in ([`Engine::add_counter_set`]): their
    /// counters, and the recording runs the fast path.
    counter_sets: Option<Box<[Rc<Cell<u64>>]>>,
    /// The fast path's values of a streamed record, reused.
    values: Vec<Value>,
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
    /// The counters of the sets added by [`Engine::add_counter_set`], in
    /// order; when every set is one, a recording runs the fast path.
    counter_sets: Vec<Rc<Cell<u64>>>,
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
            counter_sets: Vec::new(),
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

    /// Adds the built-in measuring set: the difference of `counter`
    /// between enter and leave, an `unsigned long long` (what
    /// [`CounterDiff`] does as a callback set). While every set of a run
    /// is one of these, a recording enters and leaves without calling
    /// through a set and without a data area per set: the counters are
    /// read in place ([`Engine::enter`]). Playback runs them as
    /// [`CounterDiff`] sets.
    pub fn add_counter_set(&mut self, counter: Rc<Cell<u64>>) -> Result<()> {
        self.add_callbacks(Box::new(CounterDiff(Rc::clone(&counter))))?;
        self.counter_sets.push(counter);
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
            Mode::RecordAverage => Sink::Aggregate(Aggregates::new(false, self.callbacks.len())),
            Mode::RecordHistogram => Sink::Aggregate(Aggregates::new(true, self.callbacks.len())),
            Mode::RecordAll => Sink::Stream(StreamedOutput::create(
                &self.output,
                &self.header(Mode::RecordAll, 0, false),
            )?),
            Mode::Playback => {
                let index = PlaybackIndex::load(&self.output.path)?;
                return self.start_playback(max_tid, max_sid, index);
            }
        };
        let mut run = Running::new(self.data_types(), max_tid, max_sid, mode, sink);
        if self.counter_sets.len() == self.callbacks.len() {
            run.counter_sets = Some(self.counter_sets.clone().into_boxed_slice());
        }
        self.running = Some(run);
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
    ///
    /// A recording whose sets are all built in ([`Engine::add_counter_set`])
    /// takes the fast path: the same checks, counters and records, with
    /// the counters read in place instead of through the sets.
    #[inline]
    pub fn enter(&mut self, tid: Tid, sid: Sid, lidx: Lidx, kind: SectionKind) -> Result<()> {
        let run = self.running.as_mut().ok_or_else(not_started)?;
        if run.counter_sets.is_some() {
            return run.enter_fast(tid, sid, lidx, kind);
        }
        self.enter_general(tid, sid, lidx, kind)
    }

    /// [`Engine::enter`] through the callback sets (out of line: the fast
    /// path's caller stays small).
    #[inline(never)]
    fn enter_general(&mut self, tid: Tid, sid: Sid, lidx: Lidx, kind: SectionKind) -> Result<()> {
        let run = self.running.as_mut().ok_or_else(not_started)?;
        run.check_ids(tid, sid)?;
        let thread = run.threads[tid as usize].get_or_insert_with(|| Box::new(ThreadState::new()));
        if kind == SectionKind::Kernel && thread.kernels_open > 0 {
            return Err(thread.kernel_nested(tid, sid));
        }
        let parent = thread.frames.last().copied();
        // interned first: a path past the cap is refused before any change
        let path_node = match &mut run.sink {
            Sink::Aggregate(aggs) => {
                let parent_node = parent.map_or(PathInterner::ROOT, |p| p.path_node);
                aggs.child_path(parent_node, tid, sid)?
            }
            _ => 0,
        };
        let parent_instance = parent.map_or(0, |p| p.instance);
        let idx = thread.counters.enter(sid, lidx, parent_instance);
        run.next_instance += 1;
        let mut frame = Frame {
            sid,
            kind,
            instance: run.next_instance,
            path_node,
            pb_node: NO_NODE,
            data_start: thread.data.len() as u32,
            inherited: false,
            first: 0,
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
        thread.open(frame, idx);
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
    #[inline]
    pub fn leave(&mut self, tid: Tid, sid: Sid, kind: SectionKind) -> Result<()> {
        let run = self.running.as_mut().ok_or_else(not_started)?;
        if run.counter_sets.is_some() {
            return run.leave_fast(tid, sid, kind);
        }
        self.leave_general(tid, sid, kind)
    }

    /// [`Engine::leave`] through the callback sets.
    #[inline(never)]
    fn leave_general(&mut self, tid: Tid, sid: Sid, kind: SectionKind) -> Result<()> {
        let run = self.running.as_mut().ok_or_else(not_started)?;
        run.check_ids(tid, sid)?;
        let Some(thread) = run.threads[tid as usize].as_mut() else {
            return Err(ArpError::LeaveWithoutEnter { tid, sid });
        };
        let frame = thread.innermost(tid, sid, kind)?;
        let mut result = Ok(());
        if kind.measured() {
            let start = frame.data_start as usize;
            for (cb, data) in self.callbacks.iter_mut().zip(&mut thread.data[start..]) {
                cb.leave(tid, sid, data);
            }
            let values = &thread.data[start..];
            match &mut run.sink {
                Sink::Aggregate(aggs) => aggs.add(frame.path_node, values),
                Sink::Stream(out) => result = out.write_sample(&thread.entries, values),
                Sink::Playback(_) => {}
            }
            thread.data.truncate(start);
        }
        thread.close(kind);
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
            Sink::Aggregate(aggs) => {
                let mode = if aggs.histogram {
                    Mode::RecordHistogram
                } else {
                    Mode::RecordAverage
                };
                let count = aggs.nodes.len() as u64;
                let header = self.header(mode, count, partial);
                codec::write_record_iter(&self.output, &header, count, aggs.records())?;
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
            counter_sets: None,
            values: Vec::new(),
        }
    }

    /// [`Engine::enter`] of a recording whose sets are all built in: the
    /// general path's checks, path, counter and frame, with the counters'
    /// values kept in the frame (the first) and the thread's `starts`.
    #[inline]
    fn enter_fast(&mut self, tid: Tid, sid: Sid, lidx: Lidx, kind: SectionKind) -> Result<()> {
        self.check_ids(tid, sid)?;
        let thread = match &mut self.threads[tid as usize] {
            Some(thread) => thread,
            none => none.insert(Box::new(ThreadState::new())),
        };
        if kind == SectionKind::Kernel && thread.kernels_open > 0 {
            return Err(thread.kernel_nested(tid, sid));
        }
        let (parent_node, parent_instance) = match thread.frames.last() {
            Some(p) => (p.path_node, p.instance),
            None => (PathInterner::ROOT, 0),
        };
        let path_node = match &mut self.sink {
            Sink::Aggregate(aggs) => match aggs.paths.try_child(parent_node, sid) {
                Some(node) => node,
                None => return Err(too_many_paths(tid, sid)),
            },
            _ => 0,
        };
        let idx = thread.counters.enter(sid, lidx, parent_instance);
        self.next_instance += 1;
        let sets = self.counter_sets.as_deref().unwrap_or_default();
        let first = match sets.first() {
            Some(counter) if kind.measured() => counter.get(),
            _ => 0,
        };
        let frame = Frame {
            sid,
            kind,
            instance: self.next_instance,
            path_node,
            pb_node: NO_NODE,
            data_start: thread.starts.len() as u32,
            inherited: false,
            first,
        };
        thread.open(frame, idx);
        if kind.measured() && sets.len() > 1 {
            for counter in &sets[1..] {
                thread.starts.push(counter.get());
            }
        }
        Ok(())
    }

    /// [`Engine::leave`] of a recording whose sets are all built in.
    #[inline]
    fn leave_fast(&mut self, tid: Tid, sid: Sid, kind: SectionKind) -> Result<()> {
        self.check_ids(tid, sid)?;
        let Some(thread) = self.threads[tid as usize].as_deref_mut() else {
            return Err(ArpError::LeaveWithoutEnter { tid, sid });
        };
        let (path_node, first, start) = match thread.frames.last() {
            Some(f) if !f.inherited && f.sid == sid && f.kind == kind => {
                (f.path_node, f.first, f.data_start as usize)
            }
            _ => return Err(thread.leave_error(tid, sid, kind)),
        };
        if kind.measured() {
            let sets = self.counter_sets.as_deref().unwrap_or_default();
            let starts = std::iter::once(&first).chain(&thread.starts[start..]);
            let spent = sets
                .iter()
                .zip(starts)
                .map(|(counter, &at)| counter.get().saturating_sub(at));
            match &mut self.sink {
                Sink::Aggregate(aggs) if sets.len() == 1 => {
                    aggs.add_count(path_node, sets[0].get().saturating_sub(first))
                }
                Sink::Aggregate(aggs) => aggs.add_counts(path_node, spent),
                Sink::Stream(out) => {
                    self.values.clear();
                    self.values.extend(spent.map(Value::ULong));
                    let written = out.write_sample(&thread.entries, &self.values);
                    thread.starts.truncate(start);
                    thread.close(kind);
                    return written;
                }
                Sink::Playback(_) => {}
            }
            thread.starts.truncate(start);
        }
        thread.close(kind);
        Ok(())
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

#[cfg(test)]
#[path = "engine_fast_tests.rs"]
mod fast_tests;
