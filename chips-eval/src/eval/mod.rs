//! The evaluation engine: what the Mathematica code produced by the
//! CHIP3S compiler did.
//!
//! * cflow procedures (section 4.3) return a time: `compute v` prices `v`
//!   through the hardware model; `loop v, n { B }` is `n * (B + v)`;
//!   `case v { p1: B1 ... }` is `v + sum(pi * Bi)`; `call P` adds P's time.
//! * exec procedures (section 4.4) run as a program; a procedure named in
//!   an expression is called; an object named in an expression is
//!   evaluated (Figure 5) and yields its time.
//! * A subtask evaluation runs its `init`, applies its link entries for
//!   its current template (option `ptmp`, default `sequential`) and for
//!   hardware, then evaluates the template (Figure 5).
//! * A template evaluation (Figure 6) runs `init` once per stage with
//!   `la.stage` = 1..nstage (`seval = 1`) or once with `la.stage = 1`
//!   multiplied by `nstage` (`seval = 0`); its time is the sum of the
//!   times of the steps executed. A step's time comes from its device:
//!   `cpu` adds its confdev times, `inpcom` prices the messages configured
//!   in the step together (see [`crate::hardware::Network::step_time`]).
//!
//! Every exec statement, cflow statement and loop iteration spends one
//! unit of a step budget, and calls nest to a depth limit, so a model that
//! never ends is reported, not run forever.

use crate::ast::*;
use crate::builtin_objects::function_arity;
use crate::diagnostic::Span;
use crate::error::EvalError;
use crate::hardware::{CostUnit, DeviceKind, HardwareModel, KernelCost, Message};
use crate::program::{ObjId, ObjKind, Program};
use crate::value::{format_number, Value, VecValue};
use crate::vectypes::ElementKind;
use std::collections::{BTreeMap, HashMap};

mod expressions;
mod objects;
mod procedures;
mod storage;
mod vectors;

/// Stack that must remain before one more level of the evaluator runs on
/// the current stack segment.
const RED_ZONE: usize = 256 * 1024;
/// Size of each new stack segment.
const SEGMENT: usize = 4 * 1024 * 1024;

/// Runs one recursive step of the evaluator, on a fresh heap-allocated
/// stack segment when little stack is left. Calls (up to
/// [`Limits::max_depth`]) times expression and statement nesting (up to
/// 200 levels each) would otherwise overflow a 2 MiB thread in debug builds.
fn guarded<T>(f: impl FnOnce() -> T) -> T {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// The most vector elements the variables of one evaluation may hold at
/// once (issue 43): `dim` makes up to 10^7 and an assignment copies a
/// whole vector, so without it a model of a few hundred bytes held
/// gigabytes (40 copies of one 10^7-element vector: 3.1 GB). 5 * 10^7
/// elements are 400 MB of numbers, five of the largest `dim`.
pub const MAX_VECTOR_ELEMENTS: u64 = 50_000_000;

/// The elements of `v` if it is a vector (what it holds in memory).
fn vector_elements(v: &Value) -> u64 {
    let n = match v {
        Value::Vector(VecValue::Data(d)) => d.len(),
        Value::Vector(VecValue::Numeric { values, .. }) => values.len(),
        Value::Vector(VecValue::Counts { counts, .. }) => counts.len(),
        Value::Vector(VecValue::Kernels { names, .. }) => names.len(),
        _ => 0,
    };
    n as u64
}

/// Limits that turn runaway models into diagnostics.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Statements and loop iterations one evaluation may execute.
    pub step_budget: u64,
    /// Deepest nesting of procedure calls and object evaluations.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            step_budget: 10_000_000,
            max_depth: 64,
        }
    }
}

/// Where the time goes (bottleneck analysis, section 6): inclusive times
/// weighted by the loop counts, case probabilities and stage multipliers
/// under which they were evaluated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Breakdown {
    /// Subtask and template evaluations.
    pub by_object: BTreeMap<String, f64>,
    /// cflow procedures, `object.procedure` (inclusive of callees).
    pub by_procedure: BTreeMap<String, f64>,
    /// Priced resource usage, `type` and `type.element`.
    pub by_resource: BTreeMap<String, f64>,
    /// Step times per device.
    pub by_device: BTreeMap<String, f64>,
}

impl Breakdown {
    fn add(map: &mut BTreeMap<String, f64>, key: &str, t: f64) {
        *map.entry(key.to_string()).or_default() += t;
    }
    /// Adds another breakdown into this one.
    pub fn merge(&mut self, other: &Breakdown) {
        for (mine, theirs) in [
            (&mut self.by_object, &other.by_object),
            (&mut self.by_procedure, &other.by_procedure),
            (&mut self.by_resource, &other.by_resource),
            (&mut self.by_device, &other.by_device),
        ] {
            for (k, v) in theirs {
                *mine.entry(k.clone()).or_default() += v;
            }
        }
    }
    /// Entries of one table, largest first.
    pub fn ranked(map: &BTreeMap<String, f64>) -> Vec<(String, f64)> {
        let mut v: Vec<(String, f64)> = map.iter().map(|(k, v)| (k.clone(), *v)).collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v
    }
}

/// The result of evaluating the application once.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Predicted time in seconds; `None` when the model executed `exit`.
    pub time: Option<f64>,
    /// Lines written by `print`.
    pub printed: Vec<String>,
    /// Procedure calls, option values and step times (when tracing).
    pub trace: Vec<String>,
    pub breakdown: Breakdown,
}

/// Why an evaluation stopped early.
enum Abort {
    Error(EvalError),
    /// The model executed `exit` (section 4.4).
    Exit,
}

impl From<EvalError> for Abort {
    fn from(e: EvalError) -> Self {
        Abort::Error(e)
    }
}

type R<T> = Result<T, Abort>;

/// How an exec statement list finished.
enum Flow {
    Normal,
    Break,
    Continue,
    Return(Option<Value>),
}

/// Local variables and parameters of one procedure activation.
#[derive(Default)]
struct Frame {
    vars: HashMap<String, (VarType, Value)>,
}

#[derive(Default, Clone)]
struct ObjState {
    vars: Vec<Value>,
    /// Options set by other objects' link blocks.
    option_overrides: HashMap<String, Value>,
}

/// A step being configured.
struct StepInProgress {
    device: String,
    cpu_time: f64,
    messages: Vec<Message>,
}

pub struct Evaluator<'a> {
    prog: &'a Program,
    hw: &'a HardwareModel,
    limits: Limits,
    tracing: bool,
    state: Vec<ObjState>,
    hw_params: HashMap<String, f64>,
    la_stage: f64,
    la_nstage: f64,
    steps_used: u64,
    /// Vector elements the variables hold now ([`MAX_VECTOR_ELEMENTS`]).
    held_elements: u64,
    depth: usize,
    weight: f64,
    /// Step time accumulated by each template evaluation in progress.
    template_time: Vec<f64>,
    step: Option<StepInProgress>,
    out: Outcome,
}

impl<'a> Evaluator<'a> {
    pub fn new(prog: &'a Program, hw: &'a HardwareModel, limits: Limits, tracing: bool) -> Self {
        Evaluator {
            prog,
            hw,
            limits,
            tracing,
            state: vec![ObjState::default(); prog.objects.len()],
            hw_params: HashMap::new(),
            la_stage: 0.0,
            la_nstage: 0.0,
            steps_used: 0,
            held_elements: 0,
            depth: 0,
            weight: 1.0,
            template_time: Vec::new(),
            step: None,
            out: Outcome {
                time: None,
                printed: vec![],
                trace: vec![],
                breakdown: Breakdown::default(),
            },
        }
    }

    /// Evaluates the application once with the given interface values
    /// (LaRun for one point): reset every object, apply `settings`, apply
    /// the application's link block, run its `init` (section 2.1).
    pub fn run(&mut self, settings: &[(String, Value)]) -> Result<Outcome, EvalError> {
        self.reset();
        let result = self.run_inner(settings);
        let mut out = std::mem::replace(
            &mut self.out,
            Outcome {
                time: None,
                printed: vec![],
                trace: vec![],
                breakdown: Breakdown::default(),
            },
        );
        match result {
            Ok(t) if !t.is_finite() => {
                // Blamed on the application's name: no one expression is at fault.
                let app = self.prog.app;
                let object = &self.prog.objects[app];
                let span = object.ast.as_ref().map_or(Span::new(1, 1), |a| a.name.span);
                let message = format!("the time of `{}` is not a finite number ({t})", object.name);
                Err(self.error(app, span, message))
            }
            Ok(t) => {
                out.time = Some(t);
                Ok(out)
            }
            Err(Abort::Exit) => {
                out.time = None;
                Ok(out)
            }
            Err(Abort::Error(e)) => Err(e),
        }
    }

    fn reset(&mut self) {
        self.hw_params = self.hw.parameters.iter().cloned().collect();
        for (i, o) in self.prog.objects.iter().enumerate() {
            self.state[i] = ObjState {
                vars: vec![Value::Unset; o.vars.len()],
                option_overrides: HashMap::new(),
            };
        }
        self.la_stage = 0.0;
        self.la_nstage = 0.0;
        self.steps_used = 0;
        self.held_elements = 0;
        self.depth = 0;
        self.weight = 1.0;
        self.template_time.clear();
        self.step = None;
    }

    /// Evaluates one procedure of one object once, after the preparation
    /// `run` does (defaults, `settings`, the application's link block) but
    /// without the application's `init`. Calibration uses it to read the
    /// resource usage a model gives a kernel (from the breakdown).
    pub fn run_procedure(
        &mut self,
        object: &str,
        procedure: &str,
        settings: &[(String, Value)],
    ) -> Result<Outcome, EvalError> {
        self.reset();
        let unknown = |message: String| EvalError {
            file: String::new(),
            span: Span::default(),
            message,
        };
        let Some(&obj) = self.prog.by_name.get(object) else {
            return Err(unknown(format!("the model has no object `{object}`")));
        };
        if self.prog.objects[obj].proc(procedure).is_none() {
            return Err(unknown(format!(
                "object `{object}` has no procedure `{procedure}`"
            )));
        }
        let result = self
            .prepare(settings)
            .and_then(|()| self.call_proc(obj, procedure, vec![], Span::default()));
        let mut out = std::mem::replace(
            &mut self.out,
            Outcome {
                time: None,
                printed: vec![],
                trace: vec![],
                breakdown: Breakdown::default(),
            },
        );
        match result {
            Ok(v) => {
                out.time = match v {
                    Some(Value::Num(t)) => Some(t),
                    _ => None,
                };
                Ok(out)
            }
            Err(Abort::Exit) => Ok(out),
            Err(Abort::Error(e)) => Err(e),
        }
    }

    fn run_inner(&mut self, settings: &[(String, Value)]) -> R<f64> {
        self.prepare(settings)?;
        let prog = self.prog;
        let app = prog.app;
        let span = prog.objects[app]
            .ast
            .as_ref()
            .map(|a| a.name.span)
            .unwrap_or_default();
        match self.call_proc(app, "init", vec![], span)? {
            Some(Value::Num(t)) => Ok(t),
            Some(other) => Err(self.error(app, span, format!("application init returned {}, expected the predicted time (a number)", other.type_name())).into()),
            None => Err(self.error(app, span, "application init returned no value: it must `return` the predicted time (section 5)".into()).into()),
        }
    }

    /// Initial values, `settings`, the application's link block.
    fn prepare(&mut self, settings: &[(String, Value)]) -> R<()> {
        let prog = self.prog;
        // Initial values, lowest layers first so that defaults may read
        // `hardware.X`.
        let mut order: Vec<ObjId> = (0..prog.objects.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(level_of(prog.objects[i].kind)));
        for id in order {
            for (vi, v) in prog.objects[id].vars.iter().enumerate() {
                if let Some(init) = &v.init {
                    let val = self.eval_rvalue(id, init, &mut Frame::default())?;
                    self.check_type(id, v.span, &v.name, v.ty, &val)?;
                    self.state[id].vars[vi] = val;
                }
            }
        }
        let app = prog.app;
        for (name, val) in settings {
            let obj = &prog.objects[app];
            let Some(&vi) = obj.var_index.get(name) else {
                return Err(self
                    .error(
                        app,
                        Span::default(),
                        format!("`{name}` is not a variable of application `{}`", obj.name),
                    )
                    .into());
            };
            let v = &obj.vars[vi];
            if !v.is_interface() {
                return Err(self
                    .error(
                        app,
                        v.span,
                        format!(
                            "`{name}` is hidden (group {}); only interface variables can be set",
                            v.group
                        ),
                    )
                    .into());
            }
            self.check_type(app, v.span, name, v.ty, val)?;
            self.trace(format!("set {name} = {val}"));
            self.state[app].vars[vi] = val.clone();
        }
        if let Some((_, entries)) = prog.objects[app].ast.as_ref().and_then(|a| a.link.as_ref()) {
            for e in entries {
                self.apply_link(app, e)?;
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------- helpers

    fn error(&self, obj: ObjId, span: Span, message: String) -> EvalError {
        EvalError {
            file: self.prog.objects[obj].file.clone(),
            span,
            message,
        }
    }

    fn trace(&mut self, line: String) {
        if self.tracing {
            let indent = "  ".repeat(self.depth);
            self.out.trace.push(format!("{indent}{line}"));
        }
    }

    fn tick(&mut self, obj: ObjId, span: Span) -> R<()> {
        self.steps_used += 1;
        if self.steps_used > self.limits.step_budget {
            return Err(self
                .error(
                    obj,
                    span,
                    format!(
                        "evaluation step budget of {} exhausted here: an exec loop that never ends? (raise it with --step-budget)",
                        self.limits.step_budget
                    ),
                )
                .into());
        }
        Ok(())
    }

    fn enter(&mut self, obj: ObjId, span: Span, what: &str) -> R<()> {
        if self.depth >= self.limits.max_depth {
            return Err(self
                .error(
                    obj,
                    span,
                    format!(
                        "calls nested deeper than {} levels at {what}: recursion without end?",
                        self.limits.max_depth
                    ),
                )
                .into());
        }
        self.depth += 1;
        Ok(())
    }

    fn check_type(&self, obj: ObjId, span: Span, name: &str, ty: VarType, v: &Value) -> R<()> {
        let ok = matches!(
            (ty, v),
            (VarType::Numeric, Value::Num(_))
                | (VarType::String, Value::Str(_))
                | (VarType::Vector, Value::Vector(_))
        );
        if ok {
            Ok(())
        } else {
            Err(self
                .error(
                    obj,
                    span,
                    format!("`{name}` is {} but is given {}", ty.name(), v.type_name()),
                )
                .into())
        }
    }
}

fn level_of(k: ObjKind) -> u8 {
    match k {
        ObjKind::Application => 0,
        ObjKind::Subtask => 1,
        ObjKind::Partmp => 2,
        ObjKind::Hardware | ObjKind::La => 3,
    }
}
