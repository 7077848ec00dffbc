//! The fast path of the built-in counter sets ([`Engine::add_counter_set`])
//! against the general path: random runs of enters, leaves, spawns, joins
//! and clock moves, good and bad, give the same result at every call, the
//! same stacks and the same `data.arp` bytes.

use super::*;
use proptest::prelude::*;

/// What sim-host's recording counter set did as a general callback set
/// before the fast path: the set the fast path replaces.
struct DynCounter(Rc<Cell<u64>>);

impl CallbackSet for DynCounter {
    fn data_type(&self) -> DataType {
        DataType::ULLong
    }
    fn enter(&mut self, _: Tid, _: Sid, data: &mut Value) {
        *data = Value::ULong(self.0.get());
    }
    fn leave(&mut self, _: Tid, _: Sid, data: &mut Value) {
        let Value::ULong(start) = *data else {
            panic!("a recording's data area holds what enter wrote: {data:?}");
        };
        *data = Value::ULong(self.0.get().saturating_sub(start));
    }
}

#[derive(Debug, Clone)]
enum Op {
    Enter(Tid, Sid, Lidx, SectionKind),
    Leave(Tid, Sid, SectionKind),
    Spawned(Tid, Tid),
    Join(Tid),
    /// Advance counter `set` by this much.
    Tick(usize, u64),
    /// Set counter `set` back (a clock moved back: the difference is 0).
    SetBack(usize, u64),
}

const MAX_TID: Tid = 2;
const MAX_SID: Sid = 4;

fn kind() -> impl Strategy<Value = SectionKind> {
    prop_oneof![
        Just(SectionKind::Plain),
        Just(SectionKind::Kernel),
        Just(SectionKind::Profiled)
    ]
}

/// Ids one past the largest allowed, so that range errors occur too.
fn op() -> impl Strategy<Value = Op> {
    let tid = 0..=MAX_TID + 1;
    let sid = 0..=MAX_SID + 1;
    prop_oneof![
        6 => (tid.clone(), sid.clone(), -1..3i32, kind()).prop_map(|(t, s, l, k)| Op::Enter(t, s, l, k)),
        6 => (tid.clone(), sid, kind()).prop_map(|(t, s, k)| Op::Leave(t, s, k)),
        1 => (tid.clone(), tid.clone()).prop_map(|(p, c)| Op::Spawned(p, c)),
        1 => tid.prop_map(Op::Join),
        4 => (0..2usize, 0..5000u64).prop_map(|(s, n)| Op::Tick(s, n)),
        1 => (0..2usize, 0..100u64).prop_map(|(s, n)| Op::SetBack(s, n)),
    ]
}

/// Everything a run shows: each call's result and the stacks after it,
/// the finish's result and the file's bytes.
fn run(fast: bool, sets: usize, mode: Mode, format: FileFormat, ops: &[Op]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.arp");
    let clocks: Vec<Rc<Cell<u64>>> = (0..sets).map(|_| Rc::new(Cell::new(1000))).collect();
    let mut e = Engine::new();
    for clock in &clocks {
        if fast {
            e.add_counter_set(Rc::clone(clock)).unwrap();
        } else {
            e.add_callbacks(Box::new(DynCounter(Rc::clone(clock))))
                .unwrap();
        }
    }
    e.set_file_name(&path).unwrap();
    e.set_file_format(format).unwrap();
    e.start(MAX_TID, MAX_SID, mode).unwrap();
    assert_eq!(e.running.as_ref().unwrap().counter_sets.is_some(), fast);
    let mut seen = Vec::new();
    for op in ops {
        let result = match *op {
            Op::Enter(t, s, l, k) => e.enter(t, s, l, k),
            Op::Leave(t, s, k) => e.leave(t, s, k),
            Op::Spawned(p, c) => e.spawned(p, c),
            Op::Join(t) => e.join(t),
            Op::Tick(set, n) => {
                let clock = &clocks[set % sets];
                clock.set(clock.get() + n);
                Ok(())
            }
            Op::SetBack(set, n) => {
                let clock = &clocks[set % sets];
                clock.set(clock.get().saturating_sub(n));
                Ok(())
            }
        };
        let stacks: Vec<_> = (0..=MAX_TID)
            .map(|t| e.stack(t).map(<[_]>::to_vec))
            .collect();
        seen.push(format!("{op:?} -> {result:?}; {stacks:?}"));
    }
    let finished = e.finish().or_else(|_| e.finish_partial());
    seen.push(format!(
        "{:?}",
        finished.map(|s| (s.records, s.partial, s.warnings))
    ));
    let bytes = std::fs::read(&path).unwrap_or_default();
    seen.push(String::from_utf8_lossy(&bytes).into_owned());
    seen
}

fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![
        Just(Mode::RecordAverage),
        Just(Mode::RecordHistogram),
        Just(Mode::RecordAll)
    ]
}

fn format() -> impl Strategy<Value = FileFormat> {
    prop_oneof![Just(FileFormat::Ascii), Just(FileFormat::Binary)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn the_fast_path_records_what_the_general_path_records(
        ops in proptest::collection::vec(op(), 0..120),
        sets in 1..3usize,
        mode in mode(),
        format in format(),
    ) {
        let general = run(false, sets, mode, format, &ops);
        let fast = run(true, sets, mode, format, &ops);
        for (g, f) in general.iter().zip(&fast) {
            prop_assert_eq!(g, f);
        }
        prop_assert_eq!(general.len(), fast.len());
    }
}

/// The bad calls the generator is meant to reach give the same errors on
/// the fast path: a leave without an enter, a leave of another section
/// than the innermost, of another kind, a nested kernel, ids out of range.
#[test]
fn bad_calls_fail_alike_on_both_paths() {
    let ops = [
        Op::Leave(1, 1, SectionKind::Kernel),
        Op::Enter(1, 2, 0, SectionKind::Profiled),
        Op::Enter(1, 1, 0, SectionKind::Kernel),
        Op::Enter(1, 3, 0, SectionKind::Kernel),
        Op::Leave(1, 2, SectionKind::Profiled),
        Op::Leave(1, 4, SectionKind::Kernel),
        Op::Leave(1, 1, SectionKind::Profiled),
        Op::Enter(MAX_TID + 1, 1, 0, SectionKind::Kernel),
        Op::Leave(1, MAX_SID + 1, SectionKind::Kernel),
        Op::Tick(0, 17),
        Op::Leave(1, 1, SectionKind::Kernel),
        Op::Leave(1, 2, SectionKind::Profiled),
    ];
    for mode in [Mode::RecordAverage, Mode::RecordHistogram, Mode::RecordAll] {
        let fast = run(true, 1, mode, FileFormat::Ascii, &ops);
        assert_eq!(run(false, 1, mode, FileFormat::Ascii, &ops), fast);
        let text = fast.join("\n");
        for error in [
            "LeaveWithoutEnter { tid: 1, sid: 1 }",
            "KernelNested { tid: 1, outer: 1, inner: 3 }",
            "LeaveMismatch { tid: 1, left: 2, innermost: 1 }",
            "LeaveWithoutEnter { tid: 1, sid: 4 }",
            "LeaveKindMismatch { tid: 1, sid: 1, kind: \"profiled\", entered: \"kernel\" }",
            "TidOutOfRange",
            "SidOutOfRange",
        ] {
            assert!(text.contains(error), "{error} not in {text}");
        }
        assert!(text.contains("\n2 0 2"), "the kernel's record: {text}");
    }
}
