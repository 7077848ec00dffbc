//! The query API of manual 6.4: load a data file, inspect its traces,
//! switch its mode.

use crate::codec::{self, OutputSpec};
use crate::error::{ArpError, Result};
use crate::record::{Header, Histogram, Payload, Record};
use crate::types::{DataType, FileFormat, Lidx, Mode, Sid, StackEntry, Value};
use rustc_hash::FxHashMap;
use std::path::Path;

/// Section-id paths interned as a trie: a deep path shared by many
/// records is held once (FORMAT.md, "Memory bounds").
struct PathTrie {
    child: FxHashMap<(u32, Sid), u32>,
    /// Parent and section id of every node; node 0 is the empty path.
    nodes: Vec<(u32, Sid)>,
    /// The previous path's section ids and nodes: a record usually shares
    /// a long prefix with the previous one (manual 6.5 "reuse").
    prev_sids: Vec<Sid>,
    prev_nodes: Vec<u32>,
}

impl PathTrie {
    fn new() -> Self {
        PathTrie {
            child: FxHashMap::default(),
            nodes: vec![(0, 0)],
            prev_sids: Vec::new(),
            prev_nodes: Vec::new(),
        }
    }

    /// The node of the section-id path of `stack`.
    fn intern(&mut self, stack: &[StackEntry]) -> u32 {
        let reuse = self
            .prev_sids
            .iter()
            .zip(stack)
            .take_while(|(sid, e)| **sid == e.sid)
            .count();
        self.prev_sids.truncate(reuse);
        self.prev_nodes.truncate(reuse);
        let mut node = self.prev_nodes.last().copied().unwrap_or(0);
        for e in &stack[reuse..] {
            let fresh = self.nodes.len() as u32;
            let parent = node;
            node = *self.child.entry((parent, e.sid)).or_insert(fresh);
            if node == fresh {
                self.nodes.push((parent, e.sid));
            }
            self.prev_sids.push(e.sid);
            self.prev_nodes.push(node);
        }
        node
    }

    /// The path of `node` into `out`, outermost first, as stack entries
    /// with counter 0 (footnote 12 of manual 6.5).
    fn stack_of(&self, mut node: u32, out: &mut Vec<StackEntry>) {
        out.clear();
        while node != 0 {
            let (parent, sid) = self.nodes[node as usize];
            out.push(StackEntry { sid, idx: 0 });
            node = parent;
        }
        out.reverse();
    }
}

/// The samples of one section-id path while switching modes.
struct Group {
    node: u32,
    count: u64,
    /// Per callback set.
    sums: Vec<f64>,
    histograms: Vec<Histogram>,
}

/// A mode switch (manual 6.4 `arp_switch_mode`) fed one `record_all`
/// record at a time: samples are grouped by section-id path, the paths
/// interned in a trie, so memory grows with the distinct trie entries,
/// never with the number of samples or their depth (`arp convert --mode`
/// streams through it).
pub struct ModeSwitch {
    to: Mode,
    sets: usize,
    paths: PathTrie,
    group_of: FxHashMap<u32, usize>,
    groups: Vec<Group>,
}

impl ModeSwitch {
    /// Only `record_all` can be switched, to `record_average` or
    /// `record_histogram`.
    pub fn new(from: Mode, to: Mode, sets: usize) -> Result<Self> {
        if from != Mode::RecordAll || to == Mode::Playback || to == Mode::RecordAll {
            return Err(ArpError::SwitchRefused {
                from: from.name(),
                to: to.name(),
            });
        }
        Ok(ModeSwitch {
            to,
            sets,
            paths: PathTrie::new(),
            group_of: FxHashMap::default(),
            groups: Vec::new(),
        })
    }

    /// Adds one record's sample to the group of its section-id path.
    pub fn add(&mut self, record: &Record) {
        let Payload::Sample(values) = &record.payload else {
            return;
        };
        let node = self.paths.intern(&record.stack);
        let next = self.groups.len();
        let g = *self.group_of.entry(node).or_insert(next);
        if g == next {
            self.groups.push(Group {
                node,
                count: 0,
                sums: vec![0.0; self.sets],
                histograms: vec![Histogram::default(); self.sets],
            });
        }
        let group = &mut self.groups[g];
        group.count += 1;
        for (i, v) in values.iter().enumerate() {
            group.sums[i] += v.as_f64();
            group.histograms[i].add(Histogram::bin_of(v), 1);
        }
    }

    /// Number of records the switch gives: one per section-id path.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// Whether no sample was added.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Calls `f(stack, payload)` for every record, in order of first
    /// appearance, building one stack at a time.
    pub fn for_each_record(
        &self,
        mut f: impl FnMut(&[StackEntry], &Payload) -> Result<()>,
    ) -> Result<()> {
        let mut stack = Vec::new();
        for g in &self.groups {
            self.paths.stack_of(g.node, &mut stack);
            f(&stack, &self.payload(g))?;
        }
        Ok(())
    }

    fn payload(&self, g: &Group) -> Payload {
        if self.to == Mode::RecordAverage {
            let means = g.sums.iter().map(|s| s / g.count as f64).collect();
            Payload::Average {
                count: g.count,
                means,
            }
        } else {
            Payload::Histogram {
                count: g.count,
                histograms: g.histograms.clone(),
            }
        }
    }

    /// All records (one per section-id path, in order of first
    /// appearance).
    pub fn into_records(self) -> Vec<Record> {
        let mut records = Vec::with_capacity(self.len());
        self.for_each_record(|stack, payload| {
            records.push(Record {
                stack: stack.to_vec(),
                payload: payload.clone(),
            });
            Ok(())
        })
        .expect("collecting cannot fail");
        records
    }
}

/// A loaded data set (manual 6.4 `arp_load_data`). Freed by dropping it.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    header: Header,
    records: Vec<Record>,
}

/// The value of one callback set in a trace (manual 6.4
/// `arp_trace_get_value`), by mode.
#[derive(Clone, Debug, PartialEq)]
pub enum TraceValue<'a> {
    /// `record_all`: the sample.
    Sample(Value),
    /// `record_average`: the mean.
    Mean(f64),
    /// `record_histogram`: the histogram.
    Histogram(&'a Histogram),
}

/// One trace (manual 6.4 `arp_trace`).
#[derive(Clone, Copy, Debug)]
pub struct Trace<'a> {
    record: &'a Record,
    mode: Mode,
}

impl<'a> Trace<'a> {
    /// Number of samples (always 1 in `record_all`, manual 6.4).
    pub fn count(&self) -> u64 {
        self.record.payload.count()
    }
    /// Number of sections in the trace, the measured one included.
    pub fn stack_length(&self) -> usize {
        self.record.stack.len()
    }
    /// Section id at `depth` (0 = outermost; the last is the measured
    /// section, DESIGN.md decision 6).
    pub fn stack_pos(&self, depth: usize) -> Option<Sid> {
        self.record.stack.get(depth).map(|e| e.sid)
    }
    /// Counter at `depth`; only `record_all` traces carry counters.
    pub fn stack_index(&self, depth: usize) -> Option<Lidx> {
        if self.mode != Mode::RecordAll {
            return None;
        }
        self.record.stack.get(depth).map(|e| e.idx)
    }
    /// The whole stack.
    pub fn stack(&self) -> &'a [StackEntry] {
        &self.record.stack
    }
    /// The value of callback set `data_idx`.
    pub fn value(&self, data_idx: usize) -> Option<TraceValue<'a>> {
        match &self.record.payload {
            Payload::Sample(v) => v.get(data_idx).copied().map(TraceValue::Sample),
            Payload::Average { means, .. } => means.get(data_idx).copied().map(TraceValue::Mean),
            Payload::Histogram { histograms, .. } => {
                histograms.get(data_idx).map(TraceValue::Histogram)
            }
        }
    }
    /// The underlying record.
    pub fn record(&self) -> &'a Record {
        self.record
    }
}

impl Dataset {
    /// Loads a data file of any format (manual 6.4 `arp_load_data`).
    pub fn load(path: &Path) -> Result<Dataset> {
        let mut records = Vec::new();
        let header = codec::for_each_record(path, |_, r| {
            records.push(r.clone());
            Ok(())
        })?;
        Ok(Dataset { header, records })
    }

    /// Parses a data set from bytes (any format, gzip or not).
    pub fn from_bytes(bytes: &[u8]) -> std::result::Result<Dataset, crate::error::FormatError> {
        let mut reader = codec::reader_from(std::io::Cursor::new(bytes.to_vec()))?;
        let mut records = Vec::new();
        let mut rec = Record {
            stack: Vec::new(),
            payload: Payload::Sample(Vec::new()),
        };
        while reader.read_into(&mut rec)? {
            records.push(rec.clone());
        }
        Ok(Dataset {
            header: reader.header().clone(),
            records,
        })
    }

    /// A data set from parts (the header's count is set from `records`).
    pub fn from_parts(mut header: Header, records: Vec<Record>) -> Dataset {
        header.count = records.len() as u64;
        Dataset { header, records }
    }

    /// The header (format, mode, types, partial flag).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// All records.
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// The mode of the data (manual 6.4 `arp_get_mode`).
    pub fn mode(&self) -> Mode {
        self.header.mode
    }

    /// Number of callback sets recorded (manual 6.4 `arp_get_data_mult`).
    pub fn data_mult(&self) -> usize {
        self.header.types.len()
    }

    /// Data type of callback set `index` (manual 6.4 `arp_get_data_type`).
    pub fn data_type(&self, index: usize) -> Option<DataType> {
        self.header.types.get(index).copied()
    }

    /// Number of traces (manual 6.4 `arp_get_nTraces`).
    pub fn n_traces(&self) -> usize {
        self.records.len()
    }

    /// Trace number `n` (manual 6.4 `arp_get_trace`).
    pub fn trace(&self, n: usize) -> Option<Trace<'_>> {
        self.records.get(n).map(|record| Trace {
            record,
            mode: self.header.mode,
        })
    }

    /// All traces.
    pub fn traces(&self) -> impl Iterator<Item = Trace<'_>> {
        let mode = self.header.mode;
        self.records
            .iter()
            .map(move |record| Trace { record, mode })
    }

    /// Switches the mode (manual 6.4 `arp_switch_mode`): `record_all` can
    /// become `record_average` or `record_histogram` (samples are grouped
    /// by section-id path); nothing else can become `record_all`, and
    /// playback is not a data mode.
    pub fn switch_mode(&mut self, to: Mode) -> Result<()> {
        if self.header.mode == to {
            return Ok(());
        }
        let mut switch = ModeSwitch::new(self.header.mode, to, self.data_mult())?;
        for r in &self.records {
            switch.add(r);
        }
        self.records = switch.into_records();
        self.header.mode = to;
        self.header.count = self.records.len() as u64;
        Ok(())
    }

    /// Saves the data set atomically in `format`, gzip-compressed if asked
    /// or if the name ends in `.gz`.
    pub fn save(&self, path: &Path, format: FileFormat, gzip: bool) -> Result<()> {
        let spec = OutputSpec {
            path: path.to_path_buf(),
            format,
            gzip,
        };
        codec::write_records(&spec, &self.header, &self.records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: &str = "# Atomium record and playback data - format version 1.1.\n0 1 2 5 11\n4\n\
2 0 8@0 1@0: 10 0.5;\n2 1 1@1: 30 1.5;\n2 0 9@0 1@0: 4 2;\n1 0 8@1: 100 3;\n";

    #[test]
    fn query_functions_follow_manual_6_4() {
        let d = Dataset::from_bytes(ALL.as_bytes()).unwrap();
        assert_eq!(d.mode(), Mode::RecordAll);
        assert_eq!(d.data_mult(), 2);
        assert_eq!(d.data_type(1), Some(DataType::Double));
        assert_eq!(d.data_type(2), None);
        assert_eq!(d.n_traces(), 4);
        let t = d.trace(1).unwrap();
        assert_eq!(t.count(), 1);
        assert_eq!(t.stack_length(), 2);
        assert_eq!(t.stack_pos(0), Some(8));
        assert_eq!(t.stack_pos(1), Some(1));
        assert_eq!(t.stack_index(1), Some(1));
        assert_eq!(t.value(0), Some(TraceValue::Sample(Value::UInt(30))));
        assert!(d.trace(4).is_none());
    }

    #[test]
    fn switching_all_to_average_and_histogram_works_but_not_back() {
        let mut d = Dataset::from_bytes(ALL.as_bytes()).unwrap();
        let mut h = d.clone();
        d.switch_mode(Mode::RecordAverage).unwrap();
        assert_eq!(d.n_traces(), 3);
        let t = d.trace(0).unwrap();
        assert_eq!(t.count(), 2);
        assert_eq!(t.value(0), Some(TraceValue::Mean(20.0)));
        assert_eq!(t.value(1), Some(TraceValue::Mean(1.0)));
        assert_eq!(t.stack_index(0), None);
        let err = d.switch_mode(Mode::RecordAll).unwrap_err();
        assert!(
            err.to_string()
                .contains("cannot switch from record_average to record_all"),
            "{err}"
        );
        h.switch_mode(Mode::RecordHistogram).unwrap();
        match h.trace(0).unwrap().value(0) {
            Some(TraceValue::Histogram(hist)) => assert_eq!(hist.bins, vec![(4, 1), (5, 1)]),
            v => panic!("{v:?}"),
        }
        assert!(h.switch_mode(Mode::RecordAverage).is_err());
    }

    #[test]
    fn save_and_load_in_every_format() {
        let d = Dataset::from_bytes(ALL.as_bytes()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        for (name, format, gzip) in [
            ("a", FileFormat::Ascii, false),
            ("b", FileFormat::Binary, true),
        ] {
            let p = dir.path().join(name);
            d.save(&p, format, gzip).unwrap();
            let back = Dataset::load(&p).unwrap();
            assert_eq!(back.records(), d.records());
            assert_eq!(back.header().format, format);
        }
    }
}
