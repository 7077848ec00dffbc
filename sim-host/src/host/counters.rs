//! The counters of the running core and the host's own measuring callback
//! sets (`--measure cycles,instructions`): what a sample of the host's sets
//! is, and how playback (manual 6.2) moves the clock at a kernel's leave.

use arpsim::engine::CallbackSet;
use arpsim::types::{DataType, Sid, Tid, Value};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

/// What the host's callback sets measure (`--measure`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Measure {
    Cycles,
    Instructions,
}

impl std::str::FromStr for Measure {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "cycles" => Ok(Measure::Cycles),
            "instructions" => Ok(Measure::Instructions),
            other => Err(format!(
                "unknown measure `{other}`; known: cycles, instructions"
            )),
        }
    }
}

/// The counters of the core that is running, shared with the callbacks.
#[derive(Debug, Default)]
pub struct Counters {
    /// Shared with the engine's built-in counter sets, which read them in
    /// place while recording (`arpsim::engine::Engine::add_counter_set`).
    pub cycles: Rc<Cell<u64>>,
    pub instructions: Rc<Cell<u64>>,
    /// Playback of cycles: the clock is to be set to this at the next
    /// leave (enter time + recorded cost), per thread.
    pub(crate) playback_starts: RefCell<HashMap<Tid, Vec<(u64, u64)>>>,
    /// The simulated core and guest thread making the current call.
    pub core: Cell<u32>,
    pub thread: Cell<u32>,
    /// The call being handled is a kernel section's: only kernels replay
    /// their recorded cost into the clock (a profiled section around a
    /// parallelised loop must keep its parallel time).
    pub(crate) kernel: Cell<bool>,
    /// The memory-system models' running totals, on a target that has
    /// one (`model::memory_counters`): sections keep their difference.
    pub memory: Cell<Option<crate::model::memory_counters::MemoryCounters>>,
    /// Who runs on the core (`host::tasks`): sections keep their own
    /// task's cycles apart from the others'.
    pub tasks: RefCell<crate::host::tasks::TaskClock>,
}

impl Counters {
    /// The counter a measure reads.
    pub(crate) fn of(&self, measure: Measure) -> &Rc<Cell<u64>> {
        match measure {
            Measure::Cycles => &self.cycles,
            Measure::Instructions => &self.instructions,
        }
    }

    fn read(&self, measure: Measure) -> u64 {
        match measure {
            Measure::Cycles => self.cycles.get(),
            Measure::Instructions => self.instructions.get(),
        }
    }
}

/// One host callback set: the difference of a counter between enter and
/// leave, as `unsigned long long`. A recording uses the engine's built-in
/// set instead (the same values, read in place); playback needs this one,
/// which moves the clock.
pub(crate) struct CounterSet {
    pub(crate) measure: Measure,
    pub(crate) counters: Rc<Counters>,
    pub(crate) playback: bool,
}

fn as_u64(value: &Value) -> u64 {
    match *value {
        Value::ULong(v) => v,
        Value::Long(v) => v as u64,
        Value::UInt(v) => u64::from(v),
        Value::Int(v) => v as u64,
        ref other => other.as_f64().max(0.0) as u64,
    }
}

impl CallbackSet for CounterSet {
    fn data_type(&self) -> DataType {
        DataType::ULLong
    }

    fn enter(&mut self, tid: Tid, _sid: Sid, data: &mut Value) {
        let now = self.counters.read(self.measure);
        if self.playback && self.measure == Measure::Cycles && self.counters.kernel.get() {
            // manual 6.2: the data area holds the recorded value; the
            // simulated clock advances by it instead of the kernel's own cost
            let recorded = as_u64(data);
            self.counters
                .playback_starts
                .borrow_mut()
                .entry(tid)
                .or_default()
                .push((now, recorded));
        }
        *data = Value::ULong(now);
    }

    fn leave(&mut self, tid: Tid, _sid: Sid, data: &mut Value) {
        if self.playback && self.measure == Measure::Cycles && self.counters.kernel.get() {
            let started = self
                .counters
                .playback_starts
                .borrow_mut()
                .get_mut(&tid)
                .and_then(Vec::pop);
            if let Some((start, recorded)) = started {
                self.counters.cycles.set(start + recorded);
                *data = Value::ULong(recorded);
                return;
            }
        }
        let start = as_u64(data);
        *data = Value::ULong(self.counters.read(self.measure).saturating_sub(start));
    }
}
