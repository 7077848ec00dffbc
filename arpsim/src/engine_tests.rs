//! Engine tests: counter tuples (manual 4.3, 4.4), callbacks, modes and
//! the rules of manual 2.1 and 6.1.2.

use super::*;
use crate::codec::for_each_record;
use crate::record::Record;
use crate::types::format_path;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

/// A cycle counter reading a shared clock, like sim-host's.
struct Cycles {
    clock: Rc<Cell<u64>>,
    log: Rc<RefCell<Vec<String>>>,
    name: &'static str,
    ty: DataType,
}

impl CallbackSet for Cycles {
    fn data_type(&self) -> DataType {
        self.ty
    }
    fn enter(&mut self, tid: Tid, sid: Sid, data: &mut Value) {
        self.log
            .borrow_mut()
            .push(format!("{} enter {tid}:{sid} {data}", self.name));
        if self.ty == DataType::ULong {
            *data = Value::ULong(self.clock.get());
        }
    }
    fn leave(&mut self, tid: Tid, sid: Sid, data: &mut Value) {
        self.log
            .borrow_mut()
            .push(format!("{} leave {tid}:{sid} {data}", self.name));
        if let Value::ULong(start) = *data {
            *data = Value::ULong(self.clock.get() - start);
        }
    }
    fn spawn(&mut self, parent: Tid, child: Tid) {
        self.log
            .borrow_mut()
            .push(format!("{} spawn {parent}->{child}", self.name));
    }
    fn join(&mut self, tid: Tid) {
        self.log
            .borrow_mut()
            .push(format!("{} join {tid}", self.name));
    }
}

struct Rig {
    engine: Engine,
    clock: Rc<Cell<u64>>,
    log: Rc<RefCell<Vec<String>>>,
    dir: tempfile::TempDir,
}

fn rig() -> Rig {
    let clock = Rc::new(Cell::new(0));
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut engine = Engine::new();
    engine
        .add_callbacks(Box::new(Cycles {
            clock: clock.clone(),
            log: log.clone(),
            name: "a",
            ty: DataType::ULong,
        }))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    engine.set_file_name(dir.path().join("data.arp")).unwrap();
    Rig {
        engine,
        clock,
        log,
        dir,
    }
}

fn read(path: &Path) -> (Header, Vec<Record>) {
    let mut records = Vec::new();
    let h = for_each_record(path, |_, r| {
        records.push(r.clone());
        Ok(())
    })
    .unwrap();
    (h, records)
}

fn tuples(records: &[Record]) -> Vec<String> {
    records.iter().map(|r| format_path(&r.stack)).collect()
}

/// Manual 4.3, Fig. 5: section 3 around a loop of section 2 around a loop
/// of kernel 1.
#[test]
fn nested_loops_give_the_figure_5_counter_tuples() {
    let mut r = rig();
    let e = &mut r.engine;
    e.start(1, 3, Mode::RecordAll).unwrap();
    e.enter_plain(1, 3, 0).unwrap();
    for _ in 0..2 {
        e.enter_plain(1, 2, 0).unwrap();
        for _ in 0..3 {
            e.enter_kernel(1, 1, 0).unwrap();
            r.clock.set(r.clock.get() + 5);
            e.leave_kernel(1, 1).unwrap();
        }
        e.leave_plain(1, 2).unwrap();
    }
    e.leave_plain(1, 3).unwrap();
    e.finish().unwrap();
    let (h, recs) = read(&r.dir.path().join("data.arp"));
    assert_eq!(h.types, vec![DataType::ULong]);
    assert_eq!(
        tuples(&recs),
        [
            "3@0 2@0 1@0",
            "3@0 2@0 1@1",
            "3@0 2@0 1@2",
            "3@0 2@1 1@0",
            "3@0 2@1 1@1",
            "3@0 2@1 1@2"
        ]
    );
    assert!(recs
        .iter()
        .all(|r| r.payload == Payload::Sample(vec![Value::ULong(5)])));
}

/// Manual 4.3: `foo` called from sections 3 and 4 inside the t-loop body
/// (section 5), and from section 6.
#[test]
fn call_paths_reset_counters() {
    let mut r = rig();
    let e = &mut r.engine;
    e.start(1, 6, Mode::RecordAll).unwrap();
    let foo = |e: &mut Engine, iterations: usize| {
        e.enter_plain(1, 2, 0).unwrap();
        for _ in 0..iterations {
            e.enter_kernel(1, 1, 0).unwrap();
            e.leave_kernel(1, 1).unwrap();
        }
        e.leave_plain(1, 2).unwrap();
    };
    for _ in 0..2 {
        e.enter_plain(1, 5, 0).unwrap();
        e.enter_plain(1, 3, 0).unwrap();
        foo(e, 2);
        e.leave_plain(1, 3).unwrap();
        e.enter_plain(1, 4, 0).unwrap();
        foo(e, 1);
        e.leave_plain(1, 4).unwrap();
        e.leave_plain(1, 5).unwrap();
    }
    e.enter_plain(1, 6, 0).unwrap();
    foo(e, 1);
    e.leave_plain(1, 6).unwrap();
    e.finish().unwrap();
    let (_, recs) = read(&r.dir.path().join("data.arp"));
    assert_eq!(
        tuples(&recs),
        [
            "5@0 3@0 2@0 1@0",
            "5@0 3@0 2@0 1@1",
            "5@0 4@0 2@0 1@0",
            "5@1 3@0 2@0 1@0",
            "5@1 3@0 2@0 1@1",
            "5@1 4@0 2@0 1@0",
            "6@0 2@0 1@0",
        ]
    );
}

const N: i32 = 6;
const OUTER: usize = 3;

/// The sequential version of manual 4.4.
fn sequential(e: &mut Engine) {
    for _ in 0..OUTER {
        e.enter_plain(1, 2, 0).unwrap();
        for _ in 0..N {
            e.enter_kernel(1, 1, 0).unwrap();
            e.leave_kernel(1, 1).unwrap();
        }
        e.leave_plain(1, 2).unwrap();
    }
}

/// The parallelised version of manual 4.4, with the two threads'
/// iterations interleaved: thread 2 starts at 0, thread 3 at N/2.
fn parallel(e: &mut Engine) -> Vec<Result<()>> {
    let mut results = Vec::new();
    for _ in 0..OUTER {
        e.enter_plain(1, 2, 0).unwrap();
        e.spawned(1, 2).unwrap();
        e.spawned(1, 3).unwrap();
        for x in 0..N / 2 {
            for (tid, start) in [(3, N / 2), (2, 0)] {
                results.push(e.enter_kernel(tid, 1, start));
                let _ = x;
                e.leave_kernel(tid, 1).unwrap();
            }
        }
        e.join(2).unwrap();
        e.join(3).unwrap();
        e.leave_plain(1, 2).unwrap();
    }
    results
}

#[test]
fn manual_4_4_parallelisation_gives_the_sequential_tuples_each_once() {
    let mut seq = rig();
    seq.engine.start(1, 2, Mode::RecordAll).unwrap();
    sequential(&mut seq.engine);
    seq.engine.finish().unwrap();
    let (_, seq_recs) = read(&seq.dir.path().join("data.arp"));
    assert_eq!(seq_recs.len(), OUTER * N as usize);

    let mut par = rig();
    par.engine.start(3, 2, Mode::RecordAll).unwrap();
    assert!(parallel(&mut par.engine).iter().all(Result::is_ok));
    par.engine.finish().unwrap();
    let (_, par_recs) = read(&par.dir.path().join("data.arp"));
    let mut a = tuples(&seq_recs);
    let mut b = tuples(&par_recs);
    a.sort();
    b.sort();
    assert_eq!(a, b);
    b.dedup();
    assert_eq!(b.len(), OUTER * N as usize, "every tuple once");

    // And playing the sequential recording back with the parallel program
    // plays every sample exactly once.
    let mut pb = rig();
    pb.engine
        .set_file_name(seq.dir.path().join("data.arp"))
        .unwrap();
    pb.engine.start(3, 2, Mode::Playback).unwrap();
    assert!(parallel(&mut pb.engine).iter().all(Result::is_ok));
    let summary = pb.engine.finish().unwrap();
    let report = summary.playback.unwrap();
    assert!(report.is_exact(), "{report:?}");
    assert_eq!(report.played_once, (OUTER * N as usize) as u64);
}

#[test]
fn without_start_indices_the_threads_collide() {
    let mut seq = rig();
    seq.engine.start(1, 2, Mode::RecordAll).unwrap();
    sequential(&mut seq.engine);
    seq.engine.finish().unwrap();
    let mut pb = rig();
    pb.engine
        .set_file_name(seq.dir.path().join("data.arp"))
        .unwrap();
    pb.engine.start(3, 2, Mode::Playback).unwrap();
    let e = &mut pb.engine;
    e.enter_plain(1, 2, 0).unwrap();
    e.spawned(1, 2).unwrap();
    e.spawned(1, 3).unwrap();
    for _ in 0..N / 2 {
        for tid in [2, 3] {
            e.enter_kernel(tid, 1, 0).unwrap(); // both start at 0 (manual 4.4's problem)
            e.leave_kernel(tid, 1).unwrap();
        }
    }
    e.join(2).unwrap();
    e.join(3).unwrap();
    e.leave_plain(1, 2).unwrap();
    let report = e.playback_report().unwrap();
    assert_eq!(report.duplicated.len(), (N / 2) as usize);
    assert_eq!(report.duplicated[0].tids, vec![2, 3]);
    assert_eq!(
        report.duplicated[0].path,
        vec![StackEntry { sid: 2, idx: 0 }, StackEntry { sid: 1, idx: 0 }]
    );
    // The other outer iterations and the second half were never played.
    assert_eq!(
        report.missing.len(),
        (OUTER * N as usize) - (N / 2) as usize
    );
    e.finish_partial().unwrap();
}

#[test]
fn playback_passes_recorded_values_to_enter_and_on_to_leave() {
    let mut rec = rig();
    rec.engine.start(1, 2, Mode::RecordAll).unwrap();
    for i in 0..3 {
        rec.engine.enter_kernel(1, 1, 0).unwrap();
        rec.clock.set(rec.clock.get() + 10 * (i + 1));
        rec.engine.leave_kernel(1, 1).unwrap();
    }
    rec.engine.finish().unwrap();

    // A playback set that advances the clock by the value it receives.
    struct Advance(Rc<Cell<u64>>, Rc<RefCell<Vec<u64>>>);
    impl CallbackSet for Advance {
        fn data_type(&self) -> DataType {
            DataType::ULong
        }
        fn enter(&mut self, _: Tid, _: Sid, data: &mut Value) {
            let v = data.as_u64_saturating();
            self.1.borrow_mut().push(v);
            self.0.set(self.0.get() + v);
            *data = Value::ULong(v + 1000); // reaches leave only (manual 6.2)
        }
        fn leave(&mut self, _: Tid, _: Sid, data: &mut Value) {
            self.1.borrow_mut().push(data.as_u64_saturating());
        }
    }
    let clock = Rc::new(Cell::new(0));
    let seen = Rc::new(RefCell::new(Vec::new()));
    let mut e = Engine::new();
    e.add_callbacks(Box::new(Advance(clock.clone(), seen.clone())))
        .unwrap();
    let index = PlaybackIndex::load(&rec.dir.path().join("data.arp")).unwrap();
    e.start_playback(1, 2, index).unwrap();
    for _ in 0..3 {
        e.enter_kernel(1, 1, 0).unwrap();
        e.leave_kernel(1, 1).unwrap();
    }
    assert_eq!(*seen.borrow(), vec![10, 1010, 20, 1020, 30, 1030]);
    assert_eq!(clock.get(), 60);
    // A fourth iteration has no recorded sample: non-fatal, still entered.
    let err = e.enter_kernel(1, 1, 0).unwrap_err();
    assert_eq!(err.severity(), crate::error::Severity::NonFatal);
    assert!(err.to_string().contains("1@3"), "{err}");
    e.leave_kernel(1, 1).unwrap();
    let summary = e.finish().unwrap();
    let report = summary.playback.unwrap();
    assert_eq!(report.played_once, 3);
    assert_eq!(report.unexpected.len(), 1);
    // Played the original file without writing it.
    assert!(summary.path.is_none());
}

#[test]
fn callback_sets_run_in_order_only_for_measured_sections() {
    let mut r = rig();
    r.engine
        .add_callbacks(Box::new(Cycles {
            clock: r.clock.clone(),
            log: r.log.clone(),
            name: "b",
            ty: DataType::Char,
        }))
        .unwrap();
    let e = &mut r.engine;
    e.start(2, 9, Mode::RecordAverage).unwrap();
    e.enter_plain(1, 9, 0).unwrap();
    e.enter_profiled(1, 5, 0).unwrap();
    e.enter_kernel(1, 4, 0).unwrap();
    e.spawned(1, 2).unwrap();
    e.join(2).unwrap();
    e.leave_kernel(1, 4).unwrap();
    e.leave_profiled(1, 5).unwrap();
    e.leave_plain(1, 9).unwrap();
    e.finish().unwrap();
    assert_eq!(
        *r.log.borrow(),
        [
            "a enter 1:5 0",
            "b enter 1:5 0",
            "a enter 1:4 0",
            "b enter 1:4 0",
            "a spawn 1->2",
            "b spawn 1->2",
            "a join 2",
            "b join 2",
            "a leave 1:4 0",
            "b leave 1:4 0",
            "a leave 1:5 0",
            "b leave 1:5 0",
        ]
    );
    let (h, recs) = read(&r.dir.path().join("data.arp"));
    assert_eq!(h.types, vec![DataType::ULong, DataType::Char]);
    assert_eq!(h.mode, Mode::RecordAverage);
    // Kernel record first (records are written as sections complete).
    assert_eq!(
        recs[0].stack.iter().map(|e| e.sid).collect::<Vec<_>>(),
        [9, 5, 4]
    );
    assert_eq!(
        recs[1].stack.iter().map(|e| e.sid).collect::<Vec<_>>(),
        [9, 5]
    );
}

#[test]
fn average_and_histogram_modes_aggregate_per_trace() {
    for mode in [Mode::RecordAverage, Mode::RecordHistogram] {
        let mut r = rig();
        r.engine.start(1, 3, mode).unwrap();
        for caller in [2, 3] {
            for cost in [1u64, 3, 8] {
                r.engine.enter_plain(1, caller, 0).unwrap();
                r.engine.enter_kernel(1, 1, 0).unwrap();
                r.clock.set(r.clock.get() + cost * caller as u64);
                r.engine.leave_kernel(1, 1).unwrap();
                r.engine.leave_plain(1, caller).unwrap();
            }
        }
        let s = r.engine.finish().unwrap();
        assert_eq!(s.records, 2);
        let (h, recs) = read(&r.dir.path().join("data.arp"));
        assert_eq!(h.mode, mode);
        match &recs[1].payload {
            Payload::Average { count, means } => {
                assert_eq!(*count, 3);
                assert_eq!(means, &vec![12.0 * 3.0 / 3.0 * 1.0 + 0.0]);
            }
            Payload::Histogram { count, histograms } => {
                assert_eq!(*count, 3);
                // 3, 9, 24 -> bins 2, 4, 5
                assert_eq!(histograms[0].bins, vec![(2, 1), (4, 1), (5, 1)]);
            }
            p => panic!("{p:?}"),
        }
        assert_eq!(format_path(&recs[1].stack), "3@0 1@0");
    }
}

#[test]
fn rules_are_enforced_with_typed_errors() {
    use crate::error::Severity;
    let mut r = rig();
    let e = &mut r.engine;
    assert!(matches!(e.enter_kernel(1, 1, 0), Err(ArpError::NotStarted)));
    e.start(2, 5, Mode::RecordAverage).unwrap();
    let twice = e.start(2, 5, Mode::RecordAverage).unwrap_err();
    assert_eq!(twice.to_string(), "arp_start was already called");
    assert!(matches!(
        e.add_callbacks(Box::new(Cycles {
            clock: r.clock.clone(),
            log: r.log.clone(),
            name: "x",
            ty: DataType::Int
        })),
        Err(ArpError::AfterStart { .. })
    ));
    assert!(matches!(
        e.enter_plain(3, 1, 0),
        Err(ArpError::TidOutOfRange { tid: 3, max: 2 })
    ));
    assert!(matches!(
        e.enter_plain(1, 6, 0),
        Err(ArpError::SidOutOfRange { sid: 6, max: 5 })
    ));
    assert!(matches!(
        e.leave_plain(1, 1),
        Err(ArpError::LeaveWithoutEnter { tid: 1, sid: 1 })
    ));
    e.enter_kernel(1, 1, 0).unwrap();
    e.enter_plain(1, 2, 0).unwrap();
    // Dynamic nesting: a kernel inside a plain section inside a kernel.
    let err = e.enter_kernel(1, 3, 0).unwrap_err();
    assert!(matches!(
        err,
        ArpError::KernelNested {
            tid: 1,
            outer: 1,
            inner: 3
        }
    ));
    assert_eq!(err.severity(), Severity::Fatal);
    let err = e.leave_kernel(1, 1).unwrap_err();
    assert!(
        err.to_string().contains("section 1")
            && err.to_string().contains("innermost entered section 2"),
        "{err}"
    );
    assert!(matches!(
        e.leave_kernel(1, 2),
        Err(ArpError::LeaveKindMismatch { .. })
    ));
    let err = e.finish().unwrap_err();
    assert_eq!(err.severity(), Severity::NonFatal);
    assert!(err.to_string().contains("kernel 1, plain 2"), "{err}");
    assert!(e.is_started(), "a refused finish keeps the engine running");
    e.leave_plain(1, 2).unwrap();
    e.leave_kernel(1, 1).unwrap();
    // A spawned child cannot leave what its parent entered.
    e.enter_plain(1, 4, 0).unwrap();
    e.spawned(1, 2).unwrap();
    assert!(matches!(
        e.spawned(1, 2),
        Err(ArpError::ThreadExists { child: 2 })
    ));
    assert!(matches!(
        e.leave_plain(2, 4),
        Err(ArpError::LeaveWithoutEnter { tid: 2, sid: 4 })
    ));
    assert_eq!(e.stack(2).unwrap(), &[StackEntry { sid: 4, idx: 0 }]);
    e.enter_plain(2, 5, 0).unwrap();
    assert!(matches!(
        e.join(2),
        Err(ArpError::OpenSectionsAtJoin { tid: 2, .. })
    ));
    assert!(matches!(
        e.join(2),
        Err(ArpError::JoinUnknownThread { tid: 2 })
    ));
    e.leave_plain(1, 4).unwrap();
    e.spawned(1, 2).unwrap();
    let s = e.finish().unwrap();
    assert!(matches!(
        s.warnings[..],
        [ArpError::TrailingThreads { count: 1 }]
    ));
    assert!(matches!(e.finish(), Err(ArpError::NotStarted)));
}

#[test]
fn counters_restart_at_the_start_index() {
    let mut r = rig();
    let e = &mut r.engine;
    e.start(1, 3, Mode::RecordAll).unwrap();
    e.enter_plain(1, 2, 0).unwrap();
    for _ in 0..3 {
        e.enter_kernel(1, 1, 7).unwrap();
        e.leave_kernel(1, 1).unwrap();
    }
    e.leave_plain(1, 2).unwrap();
    e.finish().unwrap();
    let (_, recs) = read(&r.dir.path().join("data.arp"));
    assert_eq!(tuples(&recs), ["2@0 1@7", "2@0 1@8", "2@0 1@9"]);
}

#[test]
fn partial_finish_marks_the_file_and_keeps_samples() {
    let mut r = rig();
    let e = &mut r.engine;
    e.set_gzip(true).unwrap();
    e.start(1, 3, Mode::RecordAll).unwrap();
    e.enter_plain(1, 3, 0).unwrap();
    let mut counts = BTreeMap::new();
    for _ in 0..4 {
        e.enter_kernel(1, 1, 0).unwrap();
        e.leave_kernel(1, 1).unwrap();
        *counts.entry("k").or_insert(0) += 1;
    }
    let s = e.finish_partial().unwrap();
    assert!(s.partial);
    let (h, recs) = read(&r.dir.path().join("data.arp"));
    assert!(h.partial);
    assert_eq!(recs.len(), counts["k"]);
}

#[test]
fn playback_refuses_mismatching_callback_sets() {
    let mut r = rig();
    let index = PlaybackIndex::new(vec![DataType::UInt]);
    assert!(matches!(
        r.engine.start_playback(1, 1, index),
        Err(ArpError::CallbackMismatch { .. })
    ));
}

#[test]
fn a_deep_unrecorded_tuple_gives_a_short_message() {
    let mut r = rig();
    let mut index = PlaybackIndex::new(vec![DataType::ULong]);
    index
        .insert(&[StackEntry { sid: 1, idx: 0 }], &[Value::ULong(5)])
        .unwrap();
    r.engine.start_playback(1, 100, index).unwrap();
    for sid in 2..=100 {
        r.engine.enter_plain(1, sid, 0).unwrap();
    }
    let err = r.engine.enter_kernel(1, 1, 0).unwrap_err();
    let inner: Vec<String> = (94..=100).map(|sid| format!("{sid}@0")).collect();
    assert_eq!(
        err.to_string(),
        format!(
            "playback: thread 1: no recorded sample for section 1 at trace … (92 outer) {} 1@0",
            inner.join(" ")
        )
    );
    let report = r.engine.playback_report().unwrap();
    assert_eq!(report.unexpected_total, 1);
    assert_eq!(report.unexpected[0].path.len(), 100);
}

#[test]
fn more_callback_sets_than_a_file_holds_are_refused() {
    // issue 30, N07: the binary format stores the set count in one byte;
    // 256 sets once wrote a corrupt file and exited 0
    let mut r = rig();
    for _ in 1..crate::types::MAX_CALLBACK_SETS {
        r.engine
            .add_callbacks(Box::new(Cycles {
                clock: r.clock.clone(),
                log: r.log.clone(),
                name: "b",
                ty: DataType::UChar,
            }))
            .unwrap();
    }
    let err = r
        .engine
        .add_callbacks(Box::new(Cycles {
            clock: r.clock.clone(),
            log: r.log.clone(),
            name: "c",
            ty: DataType::UChar,
        }))
        .unwrap_err()
        .to_string();
    assert!(err.contains("at most 255 callback sets"), "{err}");
    assert_eq!(r.engine.data_types().len(), 255);
}
