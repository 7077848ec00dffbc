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

    // ------------------------------------------------------- objects, links

    fn apply_link(&mut self, obj: ObjId, e: &LinkEntry) -> R<()> {
        let prog = self.prog;
        let target = prog.objects[obj].includes[&e.target.name];
        for a in &e.assignments {
            let val = self.eval_rvalue(obj, &a.value, &mut Frame::default())?;
            let tname = &prog.objects[target].name;
            self.trace(format!("link {tname}.{} = {val}", a.target.name));
            let tobj = &prog.objects[target];
            if tobj.kind == ObjKind::Hardware {
                let Value::Num(n) = val else {
                    return Err(self
                        .error(
                            obj,
                            a.target.span,
                            format!("hardware parameter `{}` takes a number", a.target.name),
                        )
                        .into());
                };
                if !self.hw_params.contains_key(&a.target.name) {
                    return Err(self
                        .error(
                            obj,
                            a.target.span,
                            format!(
                                "hardware model `{}` has no parameter `{}`",
                                self.hw.name, a.target.name
                            ),
                        )
                        .into());
                }
                self.hw_params.insert(a.target.name.clone(), n);
            } else if let Some(&vi) = tobj.var_index.get(&a.target.name) {
                self.check_type(obj, a.target.span, &a.target.name, tobj.vars[vi].ty, &val)?;
                self.state[target].vars[vi] = val;
            } else {
                self.state[target]
                    .option_overrides
                    .insert(a.target.name.clone(), val);
            }
        }
        Ok(())
    }

    /// The value of option `name` of `obj`: set by a linking object, or
    /// the object's own `option` block (evaluated now, in its scope).
    fn option_value(&mut self, obj: ObjId, name: &str) -> R<Option<Value>> {
        if let Some(v) = self.state[obj].option_overrides.get(name) {
            return Ok(Some(v.clone()));
        }
        let prog = self.prog;
        let Some(ast) = prog.objects[obj].ast.as_ref() else {
            return Ok(None);
        };
        match ast.options.iter().find(|a| a.target.name == name) {
            Some(a) => Ok(Some(self.eval_rvalue(
                obj,
                &a.value,
                &mut Frame::default(),
            )?)),
            None => Ok(None),
        }
    }

    fn eval_object(&mut self, from: ObjId, target: ObjId, span: Span) -> R<f64> {
        match self.prog.objects[target].kind {
            ObjKind::Subtask => self.eval_subtask(target, span),
            ObjKind::Partmp => self.eval_template(target, span),
            k => Err(self
                .error(
                    from,
                    span,
                    format!(
                        "`{}` is a {} and has no time; read its parameters as `{}.NAME`",
                        self.prog.objects[target].name,
                        k.describe(),
                        self.prog.objects[target].name
                    ),
                )
                .into()),
        }
    }

    /// Figure 5: init, link the current template, evaluate it.
    fn eval_subtask(&mut self, id: ObjId, span: Span) -> R<f64> {
        let prog = self.prog;
        let obj = &prog.objects[id];
        self.enter(id, span, &format!("subtask `{}`", obj.name))?;
        self.trace(format!("subtask {}", obj.name));
        if obj.proc("init").is_some() {
            self.call_proc(id, "init", vec![], span)?;
        }
        let template_name = match self.option_value(id, "ptmp")? {
            None => "sequential".to_string(),
            Some(Value::Str(s)) => s,
            Some(other) => {
                return Err(self
                    .error(
                        id,
                        span,
                        format!(
                            "option ptmp of `{}` must be a template name string, found {}",
                            obj.name,
                            other.type_name()
                        ),
                    )
                    .into());
            }
        };
        self.trace(format!("option {}.ptmp = \"{template_name}\"", obj.name));
        let template = match obj.includes.get(&template_name) {
            Some(&t) if prog.objects[t].kind == ObjKind::Partmp => t,
            _ => {
                return Err(self
                    .error(id, span, format!("subtask `{}` uses template `{template_name}`, which it does not include", obj.name))
                    .into());
            }
        };
        if let Some((_, entries)) = obj.ast.as_ref().and_then(|a| a.link.as_ref()) {
            for e in entries {
                let t = obj.includes.get(&e.target.name).copied();
                let applies = t == Some(template)
                    || t.is_some_and(|t| prog.objects[t].kind == ObjKind::Hardware);
                if applies {
                    self.apply_link(id, e)?;
                }
            }
        }
        let time = self.eval_template(template, span)?;
        Breakdown::add(
            &mut self.out.breakdown.by_object,
            &obj.name,
            time * self.weight,
        );
        self.trace(format!("subtask {} = {} s", obj.name, format_number(time)));
        self.depth -= 1;
        Ok(time)
    }

    /// Figure 6: stages of a parallel template.
    fn eval_template(&mut self, id: ObjId, span: Span) -> R<f64> {
        let prog = self.prog;
        let obj = &prog.objects[id];
        self.enter(id, span, &format!("template `{}`", obj.name))?;
        let nstage = match self.option_value(id, "nstage")? {
            None => 1.0,
            Some(Value::Num(n)) => n,
            Some(other) => {
                return Err(self
                    .error(
                        id,
                        span,
                        format!(
                            "option nstage of `{}` must be a number, found {}",
                            obj.name,
                            other.type_name()
                        ),
                    )
                    .into())
            }
        };
        // nstage = 0 is allowed: the example's Log2(hardware.Nproc) is 0 on
        // one processor, where the merge has no stage.
        if !(nstage.is_finite() && nstage >= 0.0 && nstage.fract() == 0.0) {
            return Err(self
                .error(
                    id,
                    span,
                    format!(
                        "option nstage of `{}` must be a non-negative integer, found {}",
                        obj.name,
                        format_number(nstage)
                    ),
                )
                .into());
        }
        let seval = match self.option_value(id, "seval")? {
            None => 0.0,
            Some(Value::Num(n)) => n,
            Some(other) => {
                return Err(self
                    .error(
                        id,
                        span,
                        format!(
                            "option seval of `{}` must be 0 or 1, found {}",
                            obj.name,
                            other.type_name()
                        ),
                    )
                    .into())
            }
        };
        if seval != 0.0 && seval != 1.0 {
            return Err(self
                .error(
                    id,
                    span,
                    format!(
                        "option seval of `{}` must be 0 or 1, found {}",
                        obj.name,
                        format_number(seval)
                    ),
                )
                .into());
        }
        self.trace(format!(
            "template {} nstage = {} seval = {}",
            obj.name,
            format_number(nstage),
            format_number(seval)
        ));
        if obj.proc("init").is_none() {
            return Err(self
                .error(id, span, format!("parallel template `{}` has no `proc exec init`, which is run for each stage (Figure 6)", obj.name))
                .into());
        }
        let (saved_stage, saved_nstage) = (self.la_stage, self.la_nstage);
        self.la_nstage = nstage;
        let stages = if seval == 1.0 {
            nstage as u64
        } else {
            u64::from(nstage > 0.0)
        };
        let multiplier = if seval == 1.0 { 1.0 } else { nstage };
        let saved_weight = self.weight;
        self.weight *= multiplier;
        let mut total = 0.0;
        for s in 1..=stages {
            self.la_stage = s as f64;
            self.template_time.push(0.0);
            let r = self.call_proc(id, "init", vec![], span);
            let stage_time = self.template_time.pop().unwrap_or(0.0);
            r?;
            self.trace(format!(
                "stage {s} of {} = {} s",
                obj.name,
                format_number(stage_time)
            ));
            total += stage_time;
        }
        self.weight = saved_weight;
        total *= multiplier;
        self.la_stage = saved_stage;
        self.la_nstage = saved_nstage;
        Breakdown::add(
            &mut self.out.breakdown.by_object,
            &obj.name,
            total * self.weight,
        );
        self.depth -= 1;
        Ok(total)
    }

    // ----------------------------------------------------------- procedures

    fn call_proc(
        &mut self,
        obj: ObjId,
        name: &str,
        args: Vec<Value>,
        span: Span,
    ) -> R<Option<Value>> {
        let prog = self.prog;
        let o = &prog.objects[obj];
        let Some(p) = o.proc(name) else {
            return Err(self
                .error(
                    obj,
                    span,
                    format!("undefined procedure `{name}` in `{}`", o.name),
                )
                .into());
        };
        if p.params.len() != args.len() {
            return Err(self
                .error(
                    obj,
                    span,
                    format!(
                        "procedure `{name}` takes {} argument(s), {} given",
                        p.params.len(),
                        args.len()
                    ),
                )
                .into());
        }
        self.enter(obj, span, &format!("procedure `{}.{name}`", o.name))?;
        let mut frame = Frame::default();
        for (prm, a) in p.params.iter().zip(args) {
            if !matches!(a, Value::Num(_)) {
                return Err(self
                    .error(obj, span, format!("argument `{}` of `{name}` must be a number (arguments are numbers passed by value, section 4.3), found {}", prm.name, a.type_name()))
                    .into());
            }
            frame.vars.insert(prm.name.clone(), (VarType::Numeric, a));
        }
        if self.tracing {
            let args: Vec<String> = p
                .params
                .iter()
                .map(|prm| format!("{}", frame.vars[&prm.name].1))
                .collect();
            self.trace(format!("call {}.{name}({})", o.name, args.join(", ")));
        }
        for d in &p.locals {
            for item in &d.items {
                let v = match &item.init {
                    Some(init) => {
                        let v = self.eval_rvalue_in(obj, init, &mut frame)?;
                        self.check_type(obj, item.name.span, &item.name.name, d.ty, &v)?;
                        v
                    }
                    None => Value::Unset,
                };
                self.hold(obj, item.name.span, 0, &v)?;
                frame.vars.insert(item.name.name.clone(), (d.ty, v));
            }
        }
        let result = match &p.body {
            ProcBody::Cflow(stmts) => {
                let t = self.cflow_time(obj, stmts, &mut frame)?;
                let key = format!("{}.{name}", o.name);
                Breakdown::add(&mut self.out.breakdown.by_procedure, &key, t * self.weight);
                Some(Value::Num(t))
            }
            ProcBody::Exec(stmts) => match self.exec_list(obj, stmts, &mut frame)? {
                Flow::Return(v) => v,
                Flow::Normal => None,
                Flow::Break | Flow::Continue => None,
            },
        };
        if let Some(v) = &result {
            self.trace(format!("{}.{name} -> {v}", o.name));
        }
        let locals: u64 = frame.vars.values().map(|(_, v)| vector_elements(v)).sum();
        self.held_elements = self.held_elements.saturating_sub(locals);
        self.depth -= 1;
        Ok(result)
    }

    /// Section 4.3: the time of a control-flow statement list.
    fn cflow_time(&mut self, obj: ObjId, stmts: &[CflowStmt], frame: &mut Frame) -> R<f64> {
        guarded(|| self.cflow_time_unguarded(obj, stmts, frame))
    }

    fn cflow_time_unguarded(
        &mut self,
        obj: ObjId,
        stmts: &[CflowStmt],
        frame: &mut Frame,
    ) -> R<f64> {
        let mut total = 0.0;
        for s in stmts {
            total += match s {
                CflowStmt::Compute(v, span) => {
                    self.tick(obj, *span)?;
                    let vec = self.vector_of(obj, v, frame, *span)?;
                    self.cost(obj, &vec, *span, frame)?
                }
                CflowStmt::Loop {
                    overhead,
                    count,
                    body,
                    span,
                } => {
                    self.tick(obj, *span)?;
                    let n = self.num(obj, count, frame)?;
                    if n < 0.0 {
                        return Err(self
                            .error(
                                obj,
                                count.span(),
                                format!("loop count is negative ({})", format_number(n)),
                            )
                            .into());
                    }
                    let saved = self.weight;
                    self.weight *= n;
                    let ov = self.vector_of(obj, overhead, frame, *span)?;
                    let ov = self.cost(obj, &ov, *span, frame)?;
                    let b = self.cflow_time(obj, body, frame);
                    self.weight = saved;
                    n * (b? + ov)
                }
                CflowStmt::Case {
                    overhead,
                    arms,
                    span,
                } => {
                    self.tick(obj, *span)?;
                    let ov = self.vector_of(obj, overhead, frame, *span)?;
                    let mut t = self.cost(obj, &ov, *span, frame)?;
                    for (p, body) in arms {
                        let prob = self.num(obj, p, frame)?;
                        if !(0.0..=1.0).contains(&prob) {
                            return Err(self
                                .error(
                                    obj,
                                    p.span(),
                                    format!(
                                        "case probability {} is outside 0..1",
                                        format_number(prob)
                                    ),
                                )
                                .into());
                        }
                        let saved = self.weight;
                        self.weight *= prob;
                        let b = self.cflow_time(obj, body, frame);
                        self.weight = saved;
                        t += prob * b?;
                    }
                    t
                }
                CflowStmt::Call { name, args } => {
                    self.tick(obj, name.span)?;
                    let mut vals = Vec::new();
                    for a in args {
                        vals.push(self.eval(obj, a, frame)?);
                    }
                    match self.call_proc(obj, &name.name, vals, name.span)? {
                        Some(Value::Num(t)) => t,
                        Some(other) => {
                            return Err(self
                                .error(
                                    obj,
                                    name.span,
                                    format!(
                                        "`{}` returned {}, a cflow call needs a time",
                                        name.name,
                                        other.type_name()
                                    ),
                                )
                                .into())
                        }
                        None => {
                            return Err(self
                                .error(
                                    obj,
                                    name.span,
                                    format!(
                                        "`{}` returned no value, a cflow call needs a time",
                                        name.name
                                    ),
                                )
                                .into())
                        }
                    }
                }
            };
        }
        Ok(total)
    }

    fn exec_list(&mut self, obj: ObjId, stmts: &[ExecStmt], frame: &mut Frame) -> R<Flow> {
        for s in stmts {
            match self.exec(obj, s, frame)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn exec(&mut self, obj: ObjId, s: &ExecStmt, frame: &mut Frame) -> R<Flow> {
        guarded(|| self.exec_unguarded(obj, s, frame))
    }

    fn exec_unguarded(&mut self, obj: ObjId, s: &ExecStmt, frame: &mut Frame) -> R<Flow> {
        match s {
            ExecStmt::Block(b) => self.exec_list(obj, b, frame),
            ExecStmt::Assign(a) => {
                self.tick(obj, a.target.span)?;
                let v = self.eval_rvalue_in(obj, &a.value, frame)?;
                match &a.index {
                    None => self.assign(obj, &a.target, v, frame)?,
                    Some(i) => {
                        let i = self.num(obj, i, frame)?;
                        let Value::Num(x) = v else {
                            return Err(self
                                .error(
                                    obj,
                                    a.target.span,
                                    format!(
                                        "elements of `{}` are numbers, given {}",
                                        a.target.name,
                                        v.type_name()
                                    ),
                                )
                                .into());
                        };
                        let slot = self.index_slot(obj, &a.target, i, frame)?;
                        *slot = x;
                    }
                }
                Ok(Flow::Normal)
            }
            ExecStmt::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.tick(obj, cond.span())?;
                if self.truth(obj, cond, frame)? {
                    self.exec(obj, then_branch, frame)
                } else if let Some(e) = else_branch {
                    self.exec(obj, e, frame)
                } else {
                    Ok(Flow::Normal)
                }
            }
            ExecStmt::While { cond, body } => loop {
                self.tick(obj, cond.span())?;
                if !self.truth(obj, cond, frame)? {
                    return Ok(Flow::Normal);
                }
                match self.exec(obj, body, frame)? {
                    Flow::Break => return Ok(Flow::Normal),
                    Flow::Return(v) => return Ok(Flow::Return(v)),
                    Flow::Normal | Flow::Continue => {}
                }
            },
            ExecStmt::Break(_) => Ok(Flow::Break),
            ExecStmt::Continue(_) => Ok(Flow::Continue),
            ExecStmt::Print(items, span) => {
                self.tick(obj, *span)?;
                let mut parts = Vec::new();
                for e in items {
                    parts.push(self.eval(obj, e, frame)?.to_string());
                }
                let line = parts.join(" ");
                self.trace(format!("print {line}"));
                self.out.printed.push(line);
                Ok(Flow::Normal)
            }
            ExecStmt::Call { name, args } => {
                self.tick(obj, name.span)?;
                let mut vals = Vec::new();
                for a in args {
                    vals.push(self.eval(obj, a, frame)?);
                }
                self.call_proc(obj, &name.name, vals, name.span)?;
                Ok(Flow::Normal)
            }
            ExecStmt::Return(e, span) => {
                self.tick(obj, *span)?;
                let v = match e {
                    Some(e) => Some(self.eval(obj, e, frame)?),
                    None => None,
                };
                Ok(Flow::Return(v))
            }
            ExecStmt::Exit(span) => {
                self.trace(format!("exit at {}:{}", span.line, span.col));
                Err(Abort::Exit)
            }
            ExecStmt::Dim(name, size) => {
                self.tick(obj, name.span)?;
                let n = self.num(obj, size, frame)?;
                if !(n >= 0.0 && n.fract() == 0.0 && n <= 1e7) {
                    return Err(self
                        .error(
                            obj,
                            size.span(),
                            format!(
                                "dim size must be a non-negative integer up to 10^7, found {}",
                                format_number(n)
                            ),
                        )
                        .into());
                }
                self.assign(
                    obj,
                    name,
                    Value::Vector(VecValue::Data(vec![0.0; n as usize])),
                    frame,
                )?;
                Ok(Flow::Normal)
            }
            ExecStmt::Free(name) => {
                self.tick(obj, name.span)?;
                self.store(obj, name, Value::Unset, frame)?;
                Ok(Flow::Normal)
            }
            ExecStmt::Step { device, body } => self.exec_step(obj, device, body, frame),
            ExecStmt::Confdev(args, span) => {
                self.tick(obj, *span)?;
                let mut vals = Vec::new();
                for a in args {
                    vals.push(self.num(obj, a, frame)?);
                }
                self.confdev(obj, &vals, *span)?;
                Ok(Flow::Normal)
            }
        }
    }

    fn exec_step(
        &mut self,
        obj: ObjId,
        device: &Ident,
        body: &[ExecStmt],
        frame: &mut Frame,
    ) -> R<Flow> {
        self.tick(obj, device.span)?;
        if self.step.is_some() {
            return Err(self
                .error(
                    obj,
                    device.span,
                    "a step must not include another step (section 4.4)".into(),
                )
                .into());
        }
        if self.template_time.is_empty() {
            return Err(self
                .error(
                    obj,
                    device.span,
                    "`step` runs only while a parallel template is evaluated".into(),
                )
                .into());
        }
        let Some(dev) = self.hw.device(&device.name) else {
            let names: Vec<&str> = self.hw.devices.iter().map(|d| d.name.as_str()).collect();
            return Err(self
                .error(
                    obj,
                    device.span,
                    format!(
                        "hardware model `{}` has no device `{}` (devices: {})",
                        self.hw.name,
                        device.name,
                        names.join(", ")
                    ),
                )
                .into());
        };
        self.step = Some(StepInProgress {
            device: device.name.clone(),
            cpu_time: 0.0,
            messages: vec![],
        });
        let flow = self.exec_list(obj, body, frame);
        let step = self.step.take().expect("step in progress");
        let flow = flow?;
        let time = match &dev.kind {
            DeviceKind::Cpu => step.cpu_time,
            DeviceKind::Inpcom(net) => {
                let nproc = self.hw_params.get("Nproc").copied().unwrap_or(1.0);
                if !(nproc >= 1.0 && nproc.fract() == 0.0) {
                    return Err(self
                        .error(
                            obj,
                            device.span,
                            format!(
                                "hardware.Nproc must be a positive integer, found {}",
                                format_number(nproc)
                            ),
                        )
                        .into());
                }
                net.step_time(nproc as usize, &step.messages)
                    .map_err(|m| self.error(obj, device.span, m))?
            }
        };
        self.trace(format!("step {} = {} s", step.device, format_number(time)));
        if let Some(t) = self.template_time.last_mut() {
            *t += time;
        }
        Breakdown::add(
            &mut self.out.breakdown.by_device,
            &step.device,
            time * self.weight,
        );
        Ok(flow)
    }

    fn confdev(&mut self, obj: ObjId, vals: &[f64], span: Span) -> R<()> {
        let Some(step) = self.step.as_mut() else {
            return Err(self
                .error(obj, span, "`confdev` outside a step".into())
                .into());
        };
        let kind = self.hw.device(&step.device).map(|d| &d.kind);
        match kind {
            Some(DeviceKind::Cpu) => {
                if vals.len() != 1 {
                    return Err(self
                        .error(
                            obj,
                            span,
                            format!(
                                "confdev for cpu takes one argument (the time), {} given",
                                vals.len()
                            ),
                        )
                        .into());
                }
                if vals[0] < 0.0 {
                    return Err(self
                        .error(
                            obj,
                            span,
                            format!(
                                "cpu time must not be negative, found {}",
                                format_number(vals[0])
                            ),
                        )
                        .into());
                }
                step.cpu_time += vals[0];
            }
            Some(DeviceKind::Inpcom(_)) => {
                if vals.len() != 3 {
                    return Err(self
                        .error(obj, span, format!("confdev for inpcom takes three arguments (size, source, destination), {} given", vals.len()))
                        .into());
                }
                let proc_index = |x: f64| (x >= 0.0 && x.fract() == 0.0).then_some(x as usize);
                let (Some(src), Some(dst)) = (proc_index(vals[1]), proc_index(vals[2])) else {
                    return Err(self
                        .error(
                            obj,
                            span,
                            "inpcom source and destination must be non-negative integers".into(),
                        )
                        .into());
                };
                step.messages.push(Message {
                    size_bytes: vals[0],
                    src,
                    dst,
                });
            }
            None => {}
        }
        Ok(())
    }

    // -------------------------------------------------------------- storage

    fn assign(&mut self, obj: ObjId, target: &Ident, v: Value, frame: &mut Frame) -> R<()> {
        let ty = if let Some((ty, _)) = frame.vars.get(&target.name) {
            *ty
        } else if let Some(vi) = self.prog.objects[obj].var(&target.name) {
            vi.ty
        } else {
            return Err(self
                .error(
                    obj,
                    target.span,
                    format!("undefined variable `{}`", target.name),
                )
                .into());
        };
        self.check_type(obj, target.span, &target.name, ty, &v)?;
        self.store(obj, target, v, frame)
    }

    fn store(&mut self, obj: ObjId, target: &Ident, v: Value, frame: &mut Frame) -> R<()> {
        if let Some(old) = frame.vars.get(&target.name).map(|s| vector_elements(&s.1)) {
            self.hold(obj, target.span, old, &v)?;
            frame.vars.get_mut(&target.name).expect("looked up").1 = v;
            return Ok(());
        }
        match self.prog.objects[obj].var_index.get(&target.name) {
            Some(&vi) => {
                let old = vector_elements(&self.state[obj].vars[vi]);
                self.hold(obj, target.span, old, &v)?;
                self.state[obj].vars[vi] = v;
                Ok(())
            }
            None => Err(self
                .error(
                    obj,
                    target.span,
                    format!("undefined variable `{}`", target.name),
                )
                .into()),
        }
    }

    /// Accounts for a variable whose vector of `old` elements becomes `new`:
    /// refused beyond [`MAX_VECTOR_ELEMENTS`] held at once.
    fn hold(&mut self, obj: ObjId, span: Span, old: u64, new: &Value) -> R<()> {
        let held =
            (self.held_elements - old.min(self.held_elements)).saturating_add(vector_elements(new));
        if held > MAX_VECTOR_ELEMENTS {
            return Err(self
                .error(
                    obj,
                    span,
                    format!(
                        "the variables would hold {held} vector elements: at most \
                         {MAX_VECTOR_ELEMENTS} at once (eval::MAX_VECTOR_ELEMENTS)"
                    ),
                )
                .into());
        }
        self.held_elements = held;
        Ok(())
    }

    fn lookup(&self, obj: ObjId, name: &str, frame: &Frame) -> Option<Value> {
        if let Some((_, v)) = frame.vars.get(name) {
            return Some(v.clone());
        }
        self.prog.objects[obj]
            .var_index
            .get(name)
            .map(|&vi| self.state[obj].vars[vi].clone())
    }

    fn index_slot<'f>(
        &'f mut self,
        obj: ObjId,
        name: &Ident,
        i: f64,
        frame: &'f mut Frame,
    ) -> R<&'f mut f64> {
        let prog = self.prog;
        let file = prog.objects[obj].file.clone();
        let error = |message: String| -> Abort {
            Abort::Error(EvalError {
                file: file.clone(),
                span: name.span,
                message,
            })
        };
        let value: &mut Value = if frame.vars.contains_key(&name.name) {
            &mut frame.vars.get_mut(&name.name).expect("present").1
        } else if let Some(&vi) = prog.objects[obj].var_index.get(&name.name) {
            &mut self.state[obj].vars[vi]
        } else {
            return Err(error(format!("undefined vector `{}`", name.name)));
        };
        match value {
            Value::Vector(VecValue::Data(d)) => {
                let len = d.len();
                if !(i >= 1.0 && i.fract() == 0.0 && (i as usize) <= len) {
                    return Err(error(format!(
                        "index {} outside `{}`[1..{len}] (data vectors are indexed from 1)",
                        format_number(i),
                        name.name
                    )));
                }
                Ok(&mut d[i as usize - 1])
            }
            other => Err(error(format!(
                "`{}` is {}, not a data vector",
                name.name,
                other.type_name()
            ))),
        }
    }

    // ---------------------------------------------------------- expressions

    fn eval_rvalue(&mut self, obj: ObjId, v: &RValue, frame: &mut Frame) -> R<Value> {
        self.eval_rvalue_in(obj, v, frame)
    }

    fn eval_rvalue_in(&mut self, obj: ObjId, v: &RValue, frame: &mut Frame) -> R<Value> {
        match v {
            RValue::Expr(e) => self.eval(obj, e, frame),
            RValue::Vector(vc) => Ok(Value::Vector(self.build_vector(obj, vc, frame)?)),
        }
    }

    fn num(&mut self, obj: ObjId, e: &Expr, frame: &mut Frame) -> R<f64> {
        match self.eval(obj, e, frame)? {
            Value::Num(n) => Ok(n),
            other => Err(self
                .error(
                    obj,
                    e.span(),
                    format!("expected a number, found {}", other.type_name()),
                )
                .into()),
        }
    }

    fn truth(&mut self, obj: ObjId, e: &Expr, frame: &mut Frame) -> R<bool> {
        Ok(self.num(obj, e, frame)? != 0.0)
    }

    fn eval(&mut self, obj: ObjId, e: &Expr, frame: &mut Frame) -> R<Value> {
        guarded(|| self.eval_unguarded(obj, e, frame))
    }

    fn eval_unguarded(&mut self, obj: ObjId, e: &Expr, frame: &mut Frame) -> R<Value> {
        let prog = self.prog;
        match e {
            Expr::Number(n, _) => Ok(Value::Num(*n)),
            Expr::Str(s, _) => Ok(Value::Str(s.clone())),
            Expr::Name(id) => {
                if let Some(v) = self.lookup(obj, &id.name, frame) {
                    if v == Value::Unset {
                        return Err(self
                            .error(
                                obj,
                                id.span,
                                format!("`{}` is used before it has a value", id.name),
                            )
                            .into());
                    }
                    return Ok(v);
                }
                let o = &prog.objects[obj];
                if o.procs.contains_key(&id.name) {
                    return match self.call_proc(obj, &id.name, vec![], id.span)? {
                        Some(v) => Ok(v),
                        None => Err(self
                            .error(
                                obj,
                                id.span,
                                format!(
                                    "procedure `{}` returned no value but is used in an expression",
                                    id.name
                                ),
                            )
                            .into()),
                    };
                }
                if let Some(&t) = o.includes.get(&id.name) {
                    return Ok(Value::Num(self.eval_object(obj, t, id.span)?));
                }
                Err(self
                    .error(obj, id.span, format!("undefined name `{}`", id.name))
                    .into())
            }
            Expr::Index(id, i) => {
                let i = self.num(obj, i, frame)?;
                let slot = self.index_slot(obj, id, i, frame)?;
                Ok(Value::Num(*slot))
            }
            Expr::Member(o, m) => self.member(obj, o, m),
            Expr::Call(f, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(obj, a, frame)?);
                }
                if prog.objects[obj].procs.contains_key(&f.name) {
                    return match self.call_proc(obj, &f.name, vals, f.span)? {
                        Some(v) => Ok(v),
                        None => Err(self
                            .error(
                                obj,
                                f.span,
                                format!(
                                    "procedure `{}` returned no value but is used in an expression",
                                    f.name
                                ),
                            )
                            .into()),
                    };
                }
                self.builtin(obj, f, &vals)
            }
            Expr::Neg(x, span) => match self.eval(obj, x, frame)? {
                Value::Num(n) => Ok(Value::Num(-n)),
                other => Err(self
                    .error(obj, *span, format!("cannot negate {}", other.type_name()))
                    .into()),
            },
            Expr::Chain(first, links) => {
                let mut acc = self.eval(obj, first, frame)?;
                for link in links {
                    let rhs = self.eval(obj, &link.rhs, frame)?;
                    acc = self.binary(obj, link.op, acc, rhs, link.span)?;
                }
                Ok(acc)
            }
        }
    }

    fn binary(&self, obj: ObjId, op: BinOp, a: Value, b: Value, span: Span) -> R<Value> {
        let (x, y) = match (&a, &b) {
            (Value::Num(x), Value::Num(y)) => (*x, *y),
            (Value::Str(x), Value::Str(y)) if matches!(op, BinOp::Eq | BinOp::Ne) => {
                return Ok(Value::Num(f64::from(u8::from(
                    (x == y) == (op == BinOp::Eq),
                ))));
            }
            _ => {
                return Err(self
                    .error(
                        obj,
                        span,
                        format!(
                            "operator `{}` needs numbers, found {} and {}",
                            op.text(),
                            a.type_name(),
                            b.type_name()
                        ),
                    )
                    .into());
            }
        };
        let bool_num = |c: bool| f64::from(u8::from(c));
        let r = match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => {
                if y == 0.0 {
                    return Err(self.error(obj, span, "division by zero".into()).into());
                }
                x / y
            }
            BinOp::Lt => bool_num(x < y),
            BinOp::Gt => bool_num(x > y),
            BinOp::Le => bool_num(x <= y),
            BinOp::Ge => bool_num(x >= y),
            BinOp::Eq => bool_num(x == y),
            BinOp::Ne => bool_num(x != y),
        };
        if !r.is_finite() {
            return Err(self
                .error(obj, span, format!("`{}` overflows", op.text()))
                .into());
        }
        Ok(Value::Num(r))
    }

    fn builtin(&self, obj: ObjId, f: &Ident, vals: &[Value]) -> R<Value> {
        let Some(arity) = function_arity(&f.name) else {
            return Err(self
                .error(
                    obj,
                    f.span,
                    format!("undefined procedure or function `{}`", f.name),
                )
                .into());
        };
        if vals.len() != arity {
            return Err(self
                .error(
                    obj,
                    f.span,
                    format!(
                        "`{}` takes {arity} argument(s), {} given",
                        f.name,
                        vals.len()
                    ),
                )
                .into());
        }
        let mut xs = Vec::with_capacity(arity);
        for v in vals {
            match v {
                Value::Num(n) => xs.push(*n),
                other => {
                    return Err(self
                        .error(
                            obj,
                            f.span,
                            format!("`{}` takes numbers, found {}", f.name, other.type_name()),
                        )
                        .into())
                }
            }
        }
        let domain = |ok: bool, what: &str| -> R<()> {
            if ok {
                Ok(())
            } else {
                Err(self
                    .error(obj, f.span, format!("`{}`: {what}", f.name))
                    .into())
            }
        };
        let r = match f.name.to_ascii_lowercase().as_str() {
            "log2" => {
                domain(xs[0] > 0.0, "argument must be positive")?;
                xs[0].log2()
            }
            "log10" => {
                domain(xs[0] > 0.0, "argument must be positive")?;
                xs[0].log10()
            }
            "log" => {
                domain(xs[0] > 0.0, "argument must be positive")?;
                xs[0].ln()
            }
            "exp" => xs[0].exp(),
            "sqrt" => {
                domain(xs[0] >= 0.0, "argument must not be negative")?;
                xs[0].sqrt()
            }
            "power" => xs[0].powf(xs[1]),
            "floor" => xs[0].floor(),
            "ceiling" => xs[0].ceil(),
            "round" => xs[0].round(),
            "abs" => xs[0].abs(),
            "min" => xs[0].min(xs[1]),
            "max" => xs[0].max(xs[1]),
            "mod" => {
                domain(xs[1] != 0.0, "division by zero")?;
                xs[0].rem_euclid(xs[1])
            }
            _ => unreachable!("function table and implementation agree"),
        };
        domain(r.is_finite(), "result is not a finite number")?;
        Ok(Value::Num(r))
    }

    fn member(&mut self, obj: ObjId, o: &Ident, m: &Ident) -> R<Value> {
        let prog = self.prog;
        let Some(&t) = prog.objects[obj].includes.get(&o.name) else {
            return Err(self
                .error(obj, o.span, format!("`{}` is not included", o.name))
                .into());
        };
        match prog.objects[t].kind {
            ObjKind::Hardware => match self.hw_params.get(&m.name) {
                Some(v) => Ok(Value::Num(*v)),
                None => Err(self
                    .error(
                        obj,
                        m.span,
                        format!(
                            "hardware model `{}` has no parameter `{}`",
                            self.hw.name, m.name
                        ),
                    )
                    .into()),
            },
            ObjKind::La => match m.name.as_str() {
                "stage" => Ok(Value::Num(self.la_stage)),
                "nstage" => Ok(Value::Num(self.la_nstage)),
                _ => Err(self
                    .error(obj, m.span, format!("`la` has no member `{}`", m.name))
                    .into()),
            },
            _ => {
                let target = &prog.objects[t];
                match target.var_index.get(&m.name) {
                    Some(&vi) if target.vars[vi].is_interface() => match &self.state[t].vars[vi] {
                        Value::Unset => Err(self
                            .error(obj, m.span, format!("`{}.{}` has no value", o.name, m.name))
                            .into()),
                        v => Ok(v.clone()),
                    },
                    _ => Err(self
                        .error(
                            obj,
                            m.span,
                            format!("`{}` has no interface variable `{}`", o.name, m.name),
                        )
                        .into()),
                }
            }
        }
    }

    // -------------------------------------------------------------- vectors

    fn vector_of(
        &mut self,
        obj: ObjId,
        v: &VectorRef,
        frame: &mut Frame,
        span: Span,
    ) -> R<VecValue> {
        match v {
            VectorRef::Const(c) => self.build_vector(obj, c, frame),
            VectorRef::Name(n) => match self.lookup(obj, &n.name, frame) {
                Some(Value::Vector(v)) => Ok(v),
                Some(other) => Err(self
                    .error(
                        obj,
                        n.span,
                        format!(
                            "`{}` is {}, a resource usage vector is needed",
                            n.name,
                            other.type_name()
                        ),
                    )
                    .into()),
                None => Err(self
                    .error(obj, span, format!("undefined vector `{}`", n.name))
                    .into()),
            },
        }
    }

    fn build_vector(&mut self, obj: ObjId, vc: &VectorConst, frame: &mut Frame) -> R<VecValue> {
        let (ty, elements) = match vc {
            VectorConst::Zero(_) => return Ok(VecValue::Zero),
            VectorConst::Typed { ty, elements } => (ty, elements),
        };
        let prog = self.prog;
        let Some(vt) = prog.vectors.get(&ty.name) else {
            return Err(self
                .error(obj, ty.span, format!("unknown vector type `{}`", ty.name))
                .into());
        };
        if let Some(n) = vt.fixed_len {
            if n != elements.len() {
                return Err(self
                    .error(
                        obj,
                        ty.span,
                        format!(
                            "vector type `{}` has {n} element(s), {} given",
                            ty.name,
                            elements.len()
                        ),
                    )
                    .into());
            }
        }
        match vt.kind {
            ElementKind::Numeric => {
                let mut values = Vec::with_capacity(elements.len());
                for e in elements {
                    values.push(self.num(obj, e, frame)?);
                }
                if vt.is_data() {
                    Ok(VecValue::Data(values))
                } else {
                    Ok(VecValue::Numeric {
                        ty: ty.name.clone(),
                        values,
                    })
                }
            }
            ElementKind::Kernel => {
                let mut names = Vec::new();
                for e in elements {
                    match self.eval(obj, e, frame)? {
                        Value::Str(s) => names.push(s),
                        other => {
                            return Err(self
                                .error(
                                    obj,
                                    e.span(),
                                    format!(
                                        "`{}` vectors list kernel names as strings, found {}",
                                        ty.name,
                                        other.type_name()
                                    ),
                                )
                                .into())
                        }
                    }
                }
                Ok(VecValue::Kernels {
                    ty: ty.name.clone(),
                    names,
                })
            }
            ElementKind::Symbol | ElementKind::Combination => {
                let n = vt.elements.len();
                let mut counts = vec![0.0; n];
                for (pos, e) in elements.iter().enumerate() {
                    let (constant, terms) = self.linear(obj, &ty.name, e, frame)?;
                    if terms.iter().all(|t| *t == 0.0) {
                        // A bare number counts the element at its position.
                        if pos >= n {
                            return Err(self
                                .error(obj, e.span(), format!("entry {} of a `{}` vector is a bare number but the type has only {n} elements", pos + 1, ty.name))
                                .into());
                        }
                        counts[pos] += constant;
                    } else {
                        if constant != 0.0 {
                            return Err(self
                                .error(
                                    obj,
                                    e.span(),
                                    format!(
                                        "entry {} adds a bare number to `{}` elements",
                                        pos + 1,
                                        ty.name
                                    ),
                                )
                                .into());
                        }
                        for (c, t) in counts.iter_mut().zip(&terms) {
                            *c += t;
                        }
                    }
                }
                Ok(VecValue::Counts {
                    ty: ty.name.clone(),
                    counts,
                })
            }
        }
    }

    /// Evaluates a vector entry as `constant + sum(coef_i * element_i)`.
    fn linear(&mut self, obj: ObjId, ty: &str, e: &Expr, frame: &mut Frame) -> R<(f64, Vec<f64>)> {
        let vt = self.prog.vectors.get(ty).expect("type checked by caller");
        let n = vt.elements.len();
        match e {
            Expr::Name(id) if vt.element_index(&id.name).is_some() => {
                let mut terms = vec![0.0; n];
                terms[vt.element_index(&id.name).unwrap_or(0)] = 1.0;
                Ok((0.0, terms))
            }
            Expr::Neg(x, _) => {
                let (c, t) = self.linear(obj, ty, x, frame)?;
                Ok((-c, t.into_iter().map(|v| -v).collect()))
            }
            Expr::Chain(first, links) if links.iter().all(|l| l.op.is_arithmetic()) => {
                let mut acc = self.linear(obj, ty, first, frame)?;
                for link in links {
                    let rhs = self.linear(obj, ty, &link.rhs, frame)?;
                    acc = self.combine_linear(obj, ty, link, acc, rhs)?;
                }
                Ok(acc)
            }
            other => Ok((self.num(obj, other, frame)?, vec![0.0; n])),
        }
    }

    /// `a op b` for two linear forms `constant + sum(coef_i * element_i)`;
    /// a product or quotient must keep the result linear.
    fn combine_linear(
        &self,
        obj: ObjId,
        ty: &str,
        link: &ChainLink,
        (ca, ta): (f64, Vec<f64>),
        (cb, tb): (f64, Vec<f64>),
    ) -> R<(f64, Vec<f64>)> {
        let a_const = ta.iter().all(|v| *v == 0.0);
        let b_const = tb.iter().all(|v| *v == 0.0);
        let sign = if link.op == BinOp::Sub { -1.0 } else { 1.0 };
        match link.op {
            BinOp::Add | BinOp::Sub => {
                let terms = ta.iter().zip(&tb).map(|(x, y)| x + sign * y).collect();
                Ok((ca + sign * cb, terms))
            }
            BinOp::Mul if a_const => Ok((ca * cb, tb.iter().map(|y| ca * y).collect())),
            BinOp::Mul if b_const => Ok((ca * cb, ta.iter().map(|x| x * cb).collect())),
            BinOp::Div if b_const => {
                if cb == 0.0 {
                    return Err(self.error(obj, link.span, "division by zero".into()).into());
                }
                Ok((ca / cb, ta.iter().map(|x| x / cb).collect()))
            }
            _ => {
                let message = format!(
                    "`{ty}` entries must be linear in the element names (a count times an element)"
                );
                Err(self.error(obj, link.span, message).into())
            }
        }
    }

    /// The time of one execution of a measured kernel: a fixed cost, or
    /// its law evaluated at the parameter's value (a variable visible here,
    /// else a hardware parameter).
    fn kernel_seconds(
        &self,
        obj: ObjId,
        name: &str,
        frame: &Frame,
        span: Span,
        clock: f64,
    ) -> R<f64> {
        let hw = self.hw;
        let to_seconds = |unit: CostUnit, x: f64| match unit {
            CostUnit::Seconds => x,
            CostUnit::Cycles => x / clock,
        };
        match hw.kernels.get(name) {
            Some(KernelCost::Cycles(c)) => Ok(c / clock),
            Some(KernelCost::Seconds(s)) => Ok(*s),
            Some(KernelCost::Law {
                unit,
                parameter,
                law,
            }) => {
                let n = match self.lookup(obj, parameter, frame) {
                    Some(Value::Num(n)) => n,
                    Some(other) => {
                        return Err(self.error(obj, span, format!("kernel `{name}` is a law of `{parameter}`, which holds {} here, not a number", other.type_name())).into())
                    }
                    None => match self.hw_params.get(parameter) {
                        Some(n) => *n,
                        None => {
                            return Err(self.error(obj, span, format!("kernel `{name}` is a law of `{parameter}` (hardware model `{}`), but `{parameter}` is neither a variable of `{}` nor a hardware parameter", hw.name, self.prog.objects[obj].name)).into())
                        }
                    },
                };
                if !law.defined_at(n) {
                    return Err(self
                        .error(
                            obj,
                            span,
                            format!(
                                "kernel `{name}`: its law {} is not defined at {parameter} = {}",
                                law.formula(parameter),
                                format_number(n)
                            ),
                        )
                        .into());
                }
                let v = law.eval(n);
                if !(v.is_finite() && v >= 0.0) {
                    return Err(self.error(obj, span, format!("kernel `{name}`: its law {} gives {} at {parameter} = {} (a cost must be a non-negative number)", law.formula(parameter), format_number(v), format_number(n))).into());
                }
                Ok(to_seconds(*unit, v))
            }
            None => Err(self
                .error(
                    obj,
                    span,
                    format!(
                        "hardware model `{}` has no measured kernel `{name}` in [kernels]",
                        hw.name
                    ),
                )
                .into()),
        }
    }

    /// Prices a resource usage vector through the hardware model.
    fn cost(&mut self, obj: ObjId, v: &VecValue, span: Span, frame: &Frame) -> R<f64> {
        let clock = self.hw_params.get("clock").copied().unwrap_or(0.0);
        let to_seconds = |unit: CostUnit, x: f64| match unit {
            CostUnit::Seconds => x,
            CostUnit::Cycles => x / clock,
        };
        let hw = self.hw;
        let weight = self.weight;
        let bd = &mut self.out.breakdown.by_resource;
        let table_err = |s: &Self, ty: &str| {
            s.error(
                obj,
                span,
                format!(
                    "hardware model `{}` has no cost table for vector type `{ty}`",
                    hw.name
                ),
            )
        };
        let total = match v {
            VecValue::Zero => 0.0,
            VecValue::Data(_) => return Err(self.error(obj, span, "a data vector has no cost; compute needs a resource usage vector (section 4.5)".into()).into()),
            VecValue::Numeric { ty, values } => {
                let Some(t) = hw.costs.get(ty) else { return Err(table_err(self, ty).into()) };
                let Some(scale) = t.scale else {
                    return Err(self.error(obj, span, format!("hardware model `{}`: costs.{ty} needs `scale` (price of one unit)", hw.name)).into());
                };
                if let Some(v) = values.iter().find(|v| **v < 0.0) {
                    return Err(self.negative_usage(obj, span, ty, *v).into());
                }
                let t = to_seconds(t.unit, values.iter().sum::<f64>() * scale);
                Breakdown::add(bd, ty, t * weight);
                t
            }
            VecValue::Counts { ty, counts } => {
                let Some(table) = hw.costs.get(ty) else { return Err(table_err(self, ty).into()) };
                let vt = self.prog.vectors.get(ty).expect("vector type exists");
                let mut sum = 0.0;
                for (i, c) in counts.iter().enumerate() {
                    if *c == 0.0 {
                        continue;
                    }
                    let el = &vt.elements[i];
                    if *c < 0.0 {
                        return Err(self.negative_usage(obj, span, &format!("{ty}.{el}"), *c).into());
                    }
                    let Some(price) = table.elements.get(el) else {
                        return Err(self.error(obj, span, format!("hardware model `{}` has no cost for `{ty}` element `{el}`", hw.name)).into());
                    };
                    let t = to_seconds(table.unit, c * price);
                    Breakdown::add(bd, &format!("{ty}.{el}"), t * weight);
                    sum += t;
                }
                Breakdown::add(bd, ty, sum * weight);
                sum
            }
            VecValue::Kernels { ty, names } => {
                let mut times = Vec::with_capacity(names.len());
                for name in names {
                    times.push(self.kernel_seconds(obj, name, frame, span, clock)?);
                }
                let bd = &mut self.out.breakdown.by_resource;
                let mut sum = 0.0;
                for (name, t) in names.iter().zip(times) {
                    Breakdown::add(bd, &format!("{ty}.{name}"), t * weight);
                    sum += t;
                }
                Breakdown::add(bd, ty, sum * weight);
                sum
            }
        };
        if !total.is_finite() {
            return Err(self
                .error(
                    obj,
                    span,
                    format!("the time of this resource usage is not a finite number ({total})"),
                )
                .into());
        }
        Ok(total)
    }

    /// A resource usage below zero would subtract time (`<is hllc, -5*IASG>`).
    fn negative_usage(&self, obj: ObjId, span: Span, what: &str, value: f64) -> EvalError {
        self.error(
            obj,
            span,
            format!(
                "resource usage `{what}` is {}: a count of resources must not be negative",
                format_number(value)
            ),
        )
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
