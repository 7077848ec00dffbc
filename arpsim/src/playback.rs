//! The playback index: the samples of a `record_all` file, looked up by
//! counter tuple in constant time per section entry, with a play count per
//! sample for verification ("every recorded sample played exactly once").
//!
//! Layout (see FORMAT.md, "Playback index"): the enclosing part of every
//! trace is a trie of `(parent node, sid, idx)` nodes shared by all
//! samples; the samples of one section under one parent node form a
//! *row*, a dense run of slots indexed by the section's counter. A slot is
//! the sample's raw values (8 bytes per callback set), its play count
//! (4 bytes) and the thread that first played it (2 bytes). Samples that
//! do not extend their row go to an overflow hash map.

use crate::codec;
use crate::error::{ArpError, Result};
use crate::record::{Header, Payload, Record};
use crate::types::{format_path, DataType, Lidx, Mode, Sid, StackEntry, Tid, Value};
use rustc_hash::FxHashMap;
use std::path::Path;

/// Node id of the trie root (the empty stack).
pub const ROOT: u32 = 0;
/// Node id meaning "this enclosing path was never recorded".
pub const NO_NODE: u32 = u32::MAX;

const ABSENT: u32 = u32::MAX;
/// Most heap bytes the tuples listed in one category of a
/// [`PlaybackReport`] take together; further tuples are only counted, so
/// a report stays small however many and however deep the tuples are
/// (FORMAT.md, "Memory bounds").
pub const REPORT_LIST_BYTES: usize = 8 << 20;
/// Documented bound (FORMAT.md, "Memory bounds"): bytes per sample that
/// has a row or overflow entry of its own (14 in a loop's dense row).
pub const MAX_BYTES_PER_SAMPLE: usize = 72;
/// Documented bound: bytes per distinct enclosing stack entry (trie node).
pub const MAX_BYTES_PER_NODE: usize = 64;
/// Largest hole a row is padded over before a sample goes to overflow.
const MAX_ROW_GAP: i64 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct NodeKey {
    parent: u32,
    sid: Sid,
    idx: Lidx,
}

#[derive(Clone, Copy, Debug)]
struct Row {
    parent: u32,
    sid: Sid,
    base: Lidx,
    start: u32,
    len: u32,
}

/// One counter tuple in a [`PlaybackReport`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TupleReport {
    /// The trace, outermost first; its last entry is the played section.
    pub path: Vec<StackEntry>,
    /// How many times it was played (saturating below `u32::MAX`).
    pub plays: u32,
    /// The threads that played it, each once (first player first; empty
    /// if never).
    pub tids: Vec<Tid>,
}

impl std::fmt::Display for TupleReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[{}] played {} time(s)",
            format_path(&self.path),
            self.plays
        )?;
        if !self.tids.is_empty() {
            let tids: Vec<String> = self.tids.iter().map(|t| t.to_string()).collect();
            write!(f, " by thread(s) {}", tids.join(","))?;
        }
        Ok(())
    }
}

/// The outcome of a playback run. Each category lists its first tuples
/// (together at most [`REPORT_LIST_BYTES`]) and counts all of them in
/// its `_total`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlaybackReport {
    /// Number of recorded samples.
    pub recorded: u64,
    /// Number of recorded samples played exactly once.
    pub played_once: u64,
    /// Recorded samples never played (the first ones).
    pub missing: Vec<TupleReport>,
    /// Recorded samples played more than once (the first ones).
    pub duplicated: Vec<TupleReport>,
    /// Tuples played that have no recorded sample (the first ones).
    pub unexpected: Vec<TupleReport>,
    /// Number of missing tuples, listed or not.
    pub missing_total: u64,
    /// Number of duplicated tuples, listed or not.
    pub duplicated_total: u64,
    /// Number of unexpected plays, listed or not.
    pub unexpected_total: u64,
}

impl PlaybackReport {
    /// Every recorded sample was played exactly once and nothing else
    /// (the lists are checked too, for reports built by hand).
    pub fn is_exact(&self) -> bool {
        self.missing_total == 0
            && self.duplicated_total == 0
            && self.unexpected_total == 0
            && self.missing.is_empty()
            && self.duplicated.is_empty()
            && self.unexpected.is_empty()
    }
}

impl TupleReport {
    /// Heap bytes this tuple takes in a report's list.
    pub fn list_bytes(&self) -> usize {
        std::mem::size_of::<TupleReport>()
            + self.path.len() * std::mem::size_of::<StackEntry>()
            + self.tids.len() * std::mem::size_of::<Tid>()
    }
}

/// Tuples of one category: all counted, the first ones listed while
/// they fit in [`REPORT_LIST_BYTES`].
#[derive(Debug, Default)]
struct Listing {
    tuples: Vec<TupleReport>,
    bytes: usize,
    total: u64,
}

impl Listing {
    /// Counts one tuple and lists it if there is room; `make` (which
    /// builds the path, O(depth)) runs only then.
    fn add(&mut self, make: impl FnOnce() -> TupleReport) {
        self.total += 1;
        if self.bytes < REPORT_LIST_BYTES {
            let tuple = make();
            if self.bytes + tuple.list_bytes() <= REPORT_LIST_BYTES {
                self.bytes += tuple.list_bytes();
                self.tuples.push(tuple);
            } else {
                // Full: building more paths would only cost time.
                self.bytes = REPORT_LIST_BYTES;
            }
        }
    }
}

/// Records read between two looks at [`PlaybackIndex::load_until`]'s stop
/// question: a few milliseconds of loading.
pub const STOP_POLL_RECORDS: u64 = 4096;

/// The recorded samples of a `record_all` file, ready for playback.
#[derive(Debug, Default)]
pub struct PlaybackIndex {
    types: Vec<DataType>,
    nodes: FxHashMap<NodeKey, u32>,
    node_keys: Vec<NodeKey>,
    rows: Vec<Row>,
    row_of: FxHashMap<(u32, Sid), u32>,
    overflow: FxHashMap<NodeKey, u32>,
    values: Vec<u64>,
    plays: Vec<u32>,
    first_tid: Vec<Tid>,
    extra_tids: FxHashMap<u32, Vec<Tid>>,
    unexpected: Listing,
    samples: u64,
    // Node ids of the previous inserted record's enclosing entries.
    prev_stack: Vec<StackEntry>,
    prev_nodes: Vec<u32>,
}

impl PlaybackIndex {
    /// An empty index for callback sets of the given types.
    pub fn new(types: Vec<DataType>) -> Self {
        PlaybackIndex {
            types,
            node_keys: vec![NodeKey {
                parent: ROOT,
                sid: 0,
                idx: 0,
            }],
            ..Default::default()
        }
    }

    /// Streams a `record_all` file (any format, gzip or not) into an index.
    pub fn load(path: &Path) -> Result<Self> {
        Self::load_until(path, &mut || None)
    }

    /// [`PlaybackIndex::load`], asking `stop` every [`STOP_POLL_RECORDS`]
    /// records whether to give up: a reason makes the load end with
    /// [`ArpError::Stopped`] (a stop signal or a time-out during a long
    /// load; issue 30, N09).
    pub fn load_until(path: &Path, stop: &mut dyn FnMut() -> Option<String>) -> Result<Self> {
        if let Some(why) = stop() {
            return Err(ArpError::Stopped(format!("{why}, after 0 record(s)")));
        }
        let mut reader = codec::open(path)?;
        let header = reader.header().clone();
        if header.mode != Mode::RecordAll {
            return Err(ArpError::Invalid(format!(
                "{}: playback needs a record_all file, this one is {}",
                path.display(),
                header.mode.name()
            )));
        }
        let mut index = PlaybackIndex::new(header.types.clone());
        let mut rec = Record {
            stack: Vec::new(),
            payload: Payload::Sample(Vec::new()),
        };
        let mut line = 3u64;
        let fmt_err = |source| ArpError::Format {
            path: path.display().to_string(),
            source,
        };
        while reader.read_into(&mut rec).map_err(fmt_err)? {
            line += 1;
            if (line - 3) % STOP_POLL_RECORDS == 0 {
                if let Some(why) = stop() {
                    let read = line - 3;
                    return Err(ArpError::Stopped(format!("{why}, after {read} record(s)")));
                }
            }
            if let Payload::Sample(values) = &rec.payload {
                index.insert(&rec.stack, values).map_err(|reason| {
                    ArpError::Invalid(format!("{}: record {}: {reason}", path.display(), line - 3))
                })?;
            }
        }
        index.shrink();
        Ok(index)
    }

    /// Builds an index from in-memory records (tests, conversions).
    pub fn from_records(header: &Header, records: &[Record]) -> std::result::Result<Self, String> {
        let mut index = PlaybackIndex::new(header.types.clone());
        for r in records {
            match &r.payload {
                Payload::Sample(values) => index.insert(&r.stack, values)?,
                _ => return Err("playback needs record_all records".into()),
            }
        }
        index.shrink();
        Ok(index)
    }

    /// The data types of the recorded callback sets.
    pub fn types(&self) -> &[DataType] {
        &self.types
    }

    /// Number of recorded samples.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    fn m(&self) -> usize {
        self.types.len()
    }

    /// The child node of `parent` for `sid@idx`, or [`NO_NODE`].
    #[inline]
    pub fn child(&self, parent: u32, sid: Sid, idx: Lidx) -> u32 {
        if parent == NO_NODE {
            return NO_NODE;
        }
        *self
            .nodes
            .get(&NodeKey { parent, sid, idx })
            .unwrap_or(&NO_NODE)
    }

    /// The slot of the sample `sid@idx` under `parent`.
    #[inline]
    pub fn lookup(&self, parent: u32, sid: Sid, idx: Lidx) -> Option<u32> {
        if parent == NO_NODE {
            return None;
        }
        if let Some(&r) = self.row_of.get(&(parent, sid)) {
            let row = self.rows[r as usize];
            let off = idx as i64 - row.base as i64;
            if off >= 0 && off < row.len as i64 {
                let slot = row.start + off as u32;
                if self.plays[slot as usize] != ABSENT {
                    return Some(slot);
                }
            }
        }
        if self.overflow.is_empty() {
            return None;
        }
        self.overflow.get(&NodeKey { parent, sid, idx }).copied()
    }

    /// The recorded value of callback set `set` in `slot`.
    #[inline]
    pub fn value(&self, slot: u32, set: usize) -> Value {
        Value::from_raw(self.types[set], self.values[slot as usize * self.m() + set])
    }

    /// Counts one play of `slot` by thread `tid`. Each thread is noted
    /// once per slot (so memory does not grow with replays), and the count
    /// stops below the `ABSENT` marker.
    #[inline]
    pub fn mark_played(&mut self, slot: u32, tid: Tid) {
        let p = &mut self.plays[slot as usize];
        if *p == 0 {
            self.first_tid[slot as usize] = tid;
        } else if tid != self.first_tid[slot as usize] {
            let more = self.extra_tids.entry(slot).or_default();
            if !more.contains(&tid) {
                more.push(tid);
            }
        }
        *p = (*p + 1).min(ABSENT - 1);
    }

    /// Notes a played tuple that has no recorded sample (counted always,
    /// listed while the report has room).
    pub fn mark_unexpected(&mut self, tid: Tid, path: &[StackEntry]) {
        self.unexpected.add(|| TupleReport {
            path: path.to_vec(),
            plays: 1,
            tids: vec![tid],
        });
    }

    /// Clears all play counts (to play the same index again).
    pub fn reset_plays(&mut self) {
        for p in &mut self.plays {
            if *p != ABSENT {
                *p = 0;
            }
        }
        self.extra_tids.clear();
        self.unexpected = Listing::default();
    }

    fn push_slot(&mut self, values: &[Value]) -> u32 {
        let slot = self.plays.len() as u32;
        self.values.extend(values.iter().map(Value::to_raw));
        self.plays.push(0);
        self.first_tid.push(0);
        slot
    }

    fn push_absent(&mut self) {
        self.values.extend(std::iter::repeat_n(0, self.m()));
        self.plays.push(ABSENT);
        self.first_tid.push(0);
    }

    fn node_for(&mut self, parent: u32, e: StackEntry) -> u32 {
        let key = NodeKey {
            parent,
            sid: e.sid,
            idx: e.idx,
        };
        if let Some(&n) = self.nodes.get(&key) {
            return n;
        }
        let n = self.node_keys.len() as u32;
        self.node_keys.push(key);
        self.nodes.insert(key, n);
        n
    }

    /// Adds one recorded sample. Refuses a tuple recorded twice and values
    /// that do not match the callback sets.
    pub fn insert(
        &mut self,
        stack: &[StackEntry],
        values: &[Value],
    ) -> std::result::Result<(), String> {
        let Some((&leaf, enclosing)) = stack.split_last() else {
            return Err("empty stack".into());
        };
        if values.len() != self.m()
            || values
                .iter()
                .zip(&self.types)
                .any(|(v, t)| v.data_type() != *t)
        {
            return Err("values do not match the callback sets' types".into());
        }
        // Reuse the node ids of the previous record's common prefix.
        let reuse =
            crate::record::common_prefix(&self.prev_stack, enclosing).min(self.prev_nodes.len());
        self.prev_stack.truncate(reuse);
        self.prev_nodes.truncate(reuse);
        let mut parent = self.prev_nodes.last().copied().unwrap_or(ROOT);
        for &e in &enclosing[reuse..] {
            parent = self.node_for(parent, e);
            self.prev_stack.push(e);
            self.prev_nodes.push(parent);
        }
        let key = NodeKey {
            parent,
            sid: leaf.sid,
            idx: leaf.idx,
        };
        let duplicate = || format!("tuple [{}] recorded twice", format_path(stack));
        let end = self.plays.len() as u32;
        match self.row_of.get(&(parent, leaf.sid)).copied() {
            None => {
                if self.overflow.contains_key(&key) {
                    return Err(duplicate());
                }
                let start = self.push_slot(values);
                self.row_of
                    .insert((parent, leaf.sid), self.rows.len() as u32);
                self.rows.push(Row {
                    parent,
                    sid: leaf.sid,
                    base: leaf.idx,
                    start,
                    len: 1,
                });
            }
            Some(r) => {
                let row = self.rows[r as usize];
                let off = leaf.idx as i64 - row.base as i64;
                let at_end = row.start + row.len == end;
                if off >= 0 && off < row.len as i64 {
                    let slot = (row.start + off as u32) as usize;
                    if self.plays[slot] != ABSENT || self.overflow.contains_key(&key) {
                        return Err(duplicate());
                    }
                    self.plays[slot] = 0;
                    let m = self.m();
                    for (i, v) in values.iter().enumerate() {
                        self.values[slot * m + i] = v.to_raw();
                    }
                } else if at_end && off >= row.len as i64 && off - (row.len as i64) <= MAX_ROW_GAP {
                    if !self.overflow.is_empty() && self.overflow.contains_key(&key) {
                        return Err(duplicate());
                    }
                    for _ in row.len as i64..off {
                        self.push_absent();
                    }
                    self.push_slot(values);
                    self.rows[r as usize].len = off as u32 + 1;
                } else {
                    if self.overflow.contains_key(&key) {
                        return Err(duplicate());
                    }
                    let slot = self.push_slot(values);
                    self.overflow.insert(key, slot);
                }
            }
        }
        self.samples += 1;
        Ok(())
    }

    fn shrink(&mut self) {
        self.values.shrink_to_fit();
        self.plays.shrink_to_fit();
        self.first_tid.shrink_to_fit();
        self.rows.shrink_to_fit();
        self.node_keys.shrink_to_fit();
        self.nodes.shrink_to_fit();
        self.row_of.shrink_to_fit();
        self.overflow.shrink_to_fit();
        self.prev_stack = Vec::new();
        self.prev_nodes = Vec::new();
    }

    /// The path of node `node` (outermost first).
    fn path_of_node(&self, mut node: u32, out: &mut Vec<StackEntry>) {
        let start = out.len();
        while node != ROOT {
            let k = self.node_keys[node as usize];
            out.push(StackEntry {
                sid: k.sid,
                idx: k.idx,
            });
            node = k.parent;
        }
        out[start..].reverse();
    }

    fn tuple(&self, parent: u32, sid: Sid, idx: Lidx, slot: u32) -> TupleReport {
        let mut path = Vec::new();
        self.path_of_node(parent, &mut path);
        path.push(StackEntry { sid, idx });
        let plays = self.plays[slot as usize];
        let mut tids = Vec::new();
        if plays > 0 {
            tids.push(self.first_tid[slot as usize]);
            if let Some(more) = self.extra_tids.get(&slot) {
                tids.extend_from_slice(more);
            }
        }
        TupleReport { path, plays, tids }
    }

    /// Calls `f(parent, sid, idx, slot)` for every recorded sample, rows
    /// in recording order, then overflow samples.
    fn for_each_sample(&self, mut f: impl FnMut(u32, Sid, Lidx, u32)) {
        for row in &self.rows {
            for off in 0..row.len {
                let slot = row.start + off;
                if self.plays[slot as usize] != ABSENT {
                    f(row.parent, row.sid, row.base + off as Lidx, slot);
                }
            }
        }
        let mut extra: Vec<_> = self.overflow.iter().collect();
        extra.sort_by_key(|(_, &slot)| slot);
        for (k, &slot) in extra {
            f(k.parent, k.sid, k.idx, slot);
        }
    }

    /// Calls `f(path, plays)` for every recorded tuple, reusing one path
    /// buffer: memory grows with the depth only.
    pub fn for_each_play_count(&self, mut f: impl FnMut(&[StackEntry], u32)) {
        let mut path = Vec::new();
        self.for_each_sample(|parent, sid, idx, slot| {
            path.clear();
            self.path_of_node(parent, &mut path);
            path.push(StackEntry { sid, idx });
            f(&path, self.plays[slot as usize]);
        });
    }

    /// Every recorded tuple with its play count. Holds every full path
    /// (samples × depth entries): for small indexes; see
    /// [`Self::for_each_play_count`] and [`Self::report`].
    pub fn play_counts(&self) -> Vec<TupleReport> {
        let mut out = Vec::with_capacity(self.samples as usize);
        self.for_each_sample(|parent, sid, idx, slot| out.push(self.tuple(parent, sid, idx, slot)));
        out
    }

    /// The play count of the tuple `path`, if it was recorded.
    pub fn play_count(&self, path: &[StackEntry]) -> Option<u32> {
        let (&leaf, enclosing) = path.split_last()?;
        let mut node = ROOT;
        for e in enclosing {
            node = self.child(node, e.sid, e.idx);
        }
        self.lookup(node, leaf.sid, leaf.idx)
            .map(|slot| self.plays[slot as usize])
    }

    /// The verification report: missing, duplicated and unexpected tuples.
    /// Its size is bounded by [`REPORT_LIST_BYTES`] per category, not by
    /// the number of samples times their depth.
    pub fn report(&self) -> PlaybackReport {
        let (mut missing, mut duplicated) = (Listing::default(), Listing::default());
        let mut played_once = 0;
        self.for_each_sample(|parent, sid, idx, slot| match self.plays[slot as usize] {
            0 => missing.add(|| self.tuple(parent, sid, idx, slot)),
            1 => played_once += 1,
            _ => duplicated.add(|| self.tuple(parent, sid, idx, slot)),
        });
        PlaybackReport {
            recorded: self.samples,
            played_once,
            missing: missing.tuples,
            duplicated: duplicated.tuples,
            unexpected: self.unexpected.tuples.clone(),
            missing_total: missing.total,
            duplicated_total: duplicated.total,
            unexpected_total: self.unexpected.total,
        }
    }

    /// Estimated heap bytes held by the index (hash tables counted by
    /// their bucket arrays).
    pub fn memory_bytes(&self) -> usize {
        fn table<K, V>(m: &FxHashMap<K, V>) -> usize {
            if m.capacity() == 0 {
                return 0;
            }
            let buckets = (m.capacity() * 8 / 7).next_power_of_two();
            buckets * (std::mem::size_of::<(K, V)>() + 1)
        }
        table(&self.nodes)
            + table(&self.row_of)
            + table(&self.overflow)
            + self.node_keys.capacity() * std::mem::size_of::<NodeKey>()
            + self.rows.capacity() * std::mem::size_of::<Row>()
            + self.values.capacity() * 8
            + self.plays.capacity() * 4
            + self.first_tid.capacity() * 2
            + self.unexpected.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(sid: Sid, idx: Lidx) -> StackEntry {
        StackEntry { sid, idx }
    }

    fn index_of(tuples: &[Vec<StackEntry>]) -> PlaybackIndex {
        let mut ix = PlaybackIndex::new(vec![DataType::UInt]);
        for (i, t) in tuples.iter().enumerate() {
            ix.insert(t, &[Value::UInt(i as u32)]).unwrap();
        }
        ix
    }

    fn find(ix: &PlaybackIndex, path: &[StackEntry]) -> Option<Value> {
        let (&leaf, enclosing) = path.split_last().unwrap();
        let mut node = ROOT;
        for x in enclosing {
            node = ix.child(node, x.sid, x.idx);
        }
        ix.lookup(node, leaf.sid, leaf.idx).map(|s| ix.value(s, 0))
    }

    #[test]
    fn rows_gaps_and_overflow_all_find_their_samples() {
        let tuples = vec![
            vec![e(2, 0), e(1, 0)],
            vec![e(2, 0), e(1, 1)],
            vec![e(2, 0), e(1, 5)],   // gap padded
            vec![e(2, 1), e(1, 0)],   // new row
            vec![e(2, 0), e(1, 6)],   // row no longer at the end: overflow
            vec![e(2, 0), e(1, 3)],   // fills a padded hole
            vec![e(2, 0), e(1, 100)], // overflow
            vec![e(2, 0)],            // a profiled section's own sample
        ];
        let ix = index_of(&tuples);
        for (i, t) in tuples.iter().enumerate() {
            assert_eq!(find(&ix, t), Some(Value::UInt(i as u32)), "{t:?}");
        }
        assert_eq!(find(&ix, &[e(2, 0), e(1, 2)]), None);
        assert_eq!(find(&ix, &[e(3, 0), e(1, 0)]), None);
        assert_eq!(ix.samples(), 8);
        let counts = ix.play_counts();
        assert_eq!(counts.len(), 8);
    }

    #[test]
    fn duplicates_are_refused_wherever_they_land() {
        let mut ix = index_of(&[vec![e(1, 0)], vec![e(1, 1)], vec![e(9, 0)], vec![e(1, 50)]]);
        for t in [vec![e(1, 0)], vec![e(1, 50)], vec![e(9, 0)]] {
            assert!(ix
                .insert(&t, &[Value::UInt(0)])
                .unwrap_err()
                .contains("twice"));
        }
    }

    #[test]
    fn report_lists_missing_duplicated_and_unexpected() {
        let mut ix = index_of(&[
            vec![e(2, 0), e(1, 0)],
            vec![e(2, 0), e(1, 1)],
            vec![e(2, 0), e(1, 2)],
        ]);
        let n = ix.child(ROOT, 2, 0);
        let s0 = ix.lookup(n, 1, 0).unwrap();
        let s1 = ix.lookup(n, 1, 1).unwrap();
        ix.mark_played(s0, 2);
        ix.mark_played(s1, 2);
        ix.mark_played(s1, 3);
        ix.mark_unexpected(3, &[e(2, 0), e(1, 7)]);
        let r = ix.report();
        assert_eq!(r.recorded, 3);
        assert_eq!(r.played_once, 1);
        assert_eq!(r.missing.len(), 1);
        assert_eq!(r.missing[0].path, vec![e(2, 0), e(1, 2)]);
        assert_eq!(r.duplicated[0].tids, vec![2, 3]);
        assert_eq!(r.duplicated[0].plays, 2);
        assert_eq!(r.unexpected[0].path, vec![e(2, 0), e(1, 7)]);
        assert_eq!(
            (r.missing_total, r.duplicated_total, r.unexpected_total),
            (1, 1, 1)
        );
        assert!(!r.is_exact());
        assert_eq!(ix.play_count(&[e(2, 0), e(1, 1)]), Some(2));
        ix.reset_plays();
        assert_eq!(ix.report().missing.len(), 3);
        assert_eq!(ix.report().unexpected_total, 0);
    }

    #[test]
    fn loop_samples_cost_at_most_48_bytes_each() {
        let mut ix = PlaybackIndex::new(vec![DataType::ULong]);
        for outer in 0..1000 {
            for inner in 0..1000 {
                ix.insert(&[e(8, 0), e(2, outer), e(1, inner)], &[Value::ULong(7)])
                    .unwrap();
            }
        }
        ix.shrink();
        let per_sample = ix.memory_bytes() as f64 / ix.samples() as f64;
        assert!(per_sample <= 48.0, "{per_sample} bytes per sample");
    }

    /// `records` samples sharing a `depth`-deep enclosing prefix, each with
    /// its own innermost entry (the shape of a loop deep in a call chain).
    fn deep_index(depth: usize, records: usize) -> PlaybackIndex {
        let mut stack: Vec<StackEntry> = (0..depth).map(|d| e(2 + d as Sid, 0)).collect();
        stack.push(e(1, 0));
        let mut ix = PlaybackIndex::new(vec![DataType::UInt]);
        for i in 0..records {
            *stack.last_mut().unwrap() = e(1, i as Lidx);
            ix.insert(&stack, &[Value::UInt(7)]).unwrap();
        }
        ix.shrink();
        ix
    }

    fn within_bound(ix: &PlaybackIndex, nodes: usize) {
        let bound = MAX_BYTES_PER_SAMPLE * ix.samples() as usize + MAX_BYTES_PER_NODE * nodes;
        assert!(
            ix.memory_bytes() <= bound,
            "{} > {bound}",
            ix.memory_bytes()
        );
    }

    #[test]
    fn a_deep_shared_prefix_costs_its_entries_once() {
        let ix = deep_index(200, 2000);
        within_bound(&ix, 200);
        let mut seen = 0;
        ix.for_each_play_count(|path, plays| {
            assert_eq!((path.len(), path[200], plays), (201, e(1, seen), 0));
            seen += 1;
        });
        assert_eq!(seen, 2000);
    }

    #[test]
    fn worst_shapes_stay_within_the_documented_bound() {
        let n = 60_000;
        let shapes: [fn(u32) -> Vec<StackEntry>; 3] = [
            |k| vec![e(k as Sid, 0)],           // a row per sample
            |k| vec![e(1, k as Lidx * 100)],    // overflow per sample
            |k| vec![e(3, k as Lidx), e(1, 0)], // a node and a row per sample
        ];
        for (shape, nodes) in shapes.iter().zip([0, 0, n]) {
            let mut ix = PlaybackIndex::new(vec![DataType::UInt]);
            for k in 0..n {
                ix.insert(&shape(k as u32), &[Value::UInt(1)]).unwrap();
            }
            ix.shrink();
            within_bound(&ix, nodes);
        }
    }

    #[test]
    fn a_report_of_deep_unplayed_samples_stays_small() {
        let (depth, records) = (2000, 2000);
        let mut ix = deep_index(depth, records);
        let mut unplayed: Vec<StackEntry> = (0..depth).map(|d| e(2 + d as Sid, 0)).collect();
        unplayed.push(e(9, 0));
        for _ in 0..records {
            ix.mark_unexpected(4, &unplayed);
        }
        let r = ix.report();
        assert_eq!(r.missing_total, records as u64);
        assert_eq!(r.unexpected_total, records as u64);
        assert!(!r.is_exact());
        for listed in [&r.missing, &r.unexpected] {
            let bytes: usize = listed.iter().map(TupleReport::list_bytes).sum();
            assert!(bytes <= REPORT_LIST_BYTES, "{bytes} bytes listed");
            assert_eq!(listed.len(), REPORT_LIST_BYTES / listed[0].list_bytes());
        }
        assert_eq!(r.missing[0].path.len(), depth + 1);
        assert_eq!(r.missing[3].path[depth], e(1, 3));
    }

    #[test]
    fn replays_note_each_thread_once() {
        let mut ix = index_of(&[vec![e(1, 0)]]);
        let slot = ix.lookup(ROOT, 1, 0).unwrap();
        for tid in [5, 5, 6, 5, 6, 7] {
            ix.mark_played(slot, tid);
        }
        let r = ix.report();
        assert_eq!((r.duplicated[0].plays, r.duplicated_total), (6, 1));
        assert_eq!(r.duplicated[0].tids, vec![5, 6, 7]);
        ix.plays[slot as usize] = ABSENT - 1;
        ix.mark_played(slot, 5);
        assert_eq!(ix.play_count(&[e(1, 0)]), Some(ABSENT - 1));
    }
}
