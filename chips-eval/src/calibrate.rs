//! Calibration (`chips-eval calibrate`): measured `data.arp` files →
//! a hardware model file (DESIGN.md decision 7).
//!
//! Four things can be calibrated from the same runs:
//!
//! 1. **Kernel binding.** Every kernel the model names in an `arp` vector
//!    (`<is arp, "ato_kernel_merge">`) and a run measured gets
//!    `[kernels] NAME = { cycles = MEAN }`: the mean of the measured
//!    value (callback set 0 by default: cycles under sim-host) per
//!    execution, over every call path and run.
//! 2. **Cost laws** (`--law KERNEL=PARAM`): the kernel's mean per run is
//!    fitted against the run's value of `PARAM` (`--arp n=1024:RUN.arp`)
//!    by the hypotheses of [`crate::fit::fit_law`] and written as a
//!    `law`, which the evaluator evaluates at the model's value of `PARAM`.
//! 3. **Cost tables** (`--fit TYPE`): kernels whose resource usage the
//!    model gives (a procedure of the model named like the kernel, or
//!    `--usage KERNEL=OBJECT.PROC`) and whose cost was measured give one
//!    equation each (per distinct set of run parameters): measured cycles
//!    = Σ usage × price. The prices are fitted by non-negative least
//!    squares ([`crate::nnls`]); what the procedure spends on other
//!    resources (priced by the base model) is subtracted first.
//! 4. **Communication** (`--inpcom KERNEL[=PARAM]`): a communication
//!    kernel measured at several message sizes gives
//!    `cycles = a + b * size`, hence `startup_s + hops * per_hop_s = a /
//!    clock` and the bandwidth (`clock / b`, times the hops for
//!    store-and-forward). `per_hop_s` is kept from the base model; the
//!    start-up is what remains.
//!
//! The base file is edited in place (comments and layout kept); each
//! calibrated number gets a `source` where the schema has one and an
//! entry in `[provenance]` naming the files, sections, fit and error.
//! The result is loaded back before it is returned: a file that the
//! evaluator would refuse is never produced.

use crate::eval::{Evaluator, Limits};
use crate::fit::{self, LawFit, LinearFit};
use crate::hardware::{
    CostTable, CostUnit, Device, DeviceKind, HardwareError, HardwareModel, Network, Switching,
};
use crate::measure::{self, format_params, MeasureError, RunMeasurements, RunSpec, SectionNames};
use crate::nnls::NnlsError;
use crate::program::Program;
use crate::value::Value;
use crate::vectypes::ElementKind;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Why calibration failed.
#[derive(Debug, thiserror::Error)]
pub enum CalibError {
    #[error(transparent)]
    Measure(#[from] MeasureError),
    #[error("{0}")]
    Usage(String),
    #[error("the runs were recorded at {recorded} Hz but the hardware model's clock is {model} Hz: cycles measured at one clock do not price a model at another (calibrate a model of the recorded clock, or fix --recorded-clock)")]
    ClockMismatch { recorded: f64, model: f64 },
    #[error("{what}: {message}")]
    Fit { what: String, message: String },
    #[error("evaluating the model for {what}: {source}")]
    Eval {
        what: String,
        source: crate::error::EvalError,
    },
    #[error("{0}")]
    BaseFile(String),
    #[error("internal error: the calibrated file does not load ({0}); nothing written")]
    Output(HardwareError),
}

/// What to calibrate besides binding kernels.
#[derive(Debug, Clone, Default)]
pub struct CalibrationOptions {
    /// Vector types whose cost tables are fitted (`--fit hllc`).
    pub fit_tables: Vec<String>,
    /// Kernel → (object, procedure) giving its usage (`--usage`).
    pub usage: BTreeMap<String, (String, String)>,
    /// Kernel → parameter its cost law is fitted against (`--law`).
    pub laws: BTreeMap<String, String>,
    /// Communication kernel to fit the inpcom device from (`--inpcom`).
    pub inpcom: Option<InpcomRequest>,
    /// Clock (Hz) the runs were recorded at, checked against the model.
    pub recorded_clock: Option<f64>,
    /// Callback set holding cycles (default 0).
    pub value_set: usize,
}

#[derive(Debug, Clone)]
pub struct InpcomRequest {
    pub kernel: String,
    /// Run parameter holding the message size in bytes (default `size`).
    pub parameter: String,
    /// Device to calibrate; default the model's only inpcom device.
    pub device: Option<String>,
    /// Links crossed by the measured messages (default 1).
    pub hops: f64,
}

/// The result: the file's text and what to tell the user.
#[derive(Debug, Clone)]
pub struct Calibration {
    pub toml: String,
    /// Human-readable report: bindings, fits, residuals, errors.
    pub report: String,
    pub warnings: Vec<String>,
}

/// Everything calibration reads.
#[derive(Debug)]
pub struct CalibrationInput<'a> {
    pub runs: &'a [RunSpec],
    pub names: &'a SectionNames,
    pub program: &'a Program,
    pub base: &'a HardwareModel,
    /// The base file's text and name (edited, to keep its comments).
    pub base_text: &'a str,
    pub base_path: &'a str,
}

/// One kernel's measurement in one run.
#[derive(Debug, Clone)]
struct KernelRun {
    run: usize,
    sid: arpsim::Sid,
    count: u64,
    mean: f64,
    /// Smallest and largest sample (`record_all` files only).
    min: Option<f64>,
    max: Option<f64>,
}

/// Kernel names the model uses in vectors of a `kernel` type (string
/// literals only; names held in variables cannot be seen statically).
pub fn model_kernel_names(prog: &Program) -> BTreeSet<String> {
    use crate::ast::*;
    let mut out = BTreeSet::new();
    let kernel_type = |t: &str| {
        prog.vectors
            .get(t)
            .is_some_and(|v| v.kind == ElementKind::Kernel)
    };
    let mut vc = |v: &VectorConst, out: &mut BTreeSet<String>| {
        if let VectorConst::Typed { ty, elements } = v {
            if kernel_type(&ty.name) {
                for e in elements {
                    if let Expr::Str(s, _) = e {
                        out.insert(s.clone());
                    }
                }
            }
        }
    };
    fn cflow(
        stmts: &[CflowStmt],
        f: &mut dyn FnMut(&VectorConst, &mut BTreeSet<String>),
        out: &mut BTreeSet<String>,
    ) {
        for s in stmts {
            match s {
                CflowStmt::Compute(VectorRef::Const(v), _) => f(v, out),
                CflowStmt::Loop { overhead, body, .. } => {
                    if let VectorRef::Const(v) = overhead {
                        f(v, out);
                    }
                    cflow(body, f, out);
                }
                CflowStmt::Case { overhead, arms, .. } => {
                    if let VectorRef::Const(v) = overhead {
                        f(v, out);
                    }
                    for (_, b) in arms {
                        cflow(b, f, out);
                    }
                }
                _ => {}
            }
        }
    }
    fn exec(
        stmts: &[ExecStmt],
        f: &mut dyn FnMut(&VectorConst, &mut BTreeSet<String>),
        out: &mut BTreeSet<String>,
    ) {
        for s in stmts {
            match s {
                ExecStmt::Block(b) | ExecStmt::Step { body: b, .. } => exec(b, f, out),
                ExecStmt::Assign(Assignment {
                    value: RValue::Vector(v),
                    ..
                }) => f(v, out),
                ExecStmt::If {
                    then_branch,
                    else_branch,
                    ..
                } => {
                    exec(std::slice::from_ref(then_branch), f, out);
                    if let Some(e) = else_branch {
                        exec(std::slice::from_ref(e), f, out);
                    }
                }
                ExecStmt::While { body, .. } => exec(std::slice::from_ref(body), f, out),
                _ => {}
            }
        }
    }
    for o in &prog.objects {
        let Some(ast) = &o.ast else { continue };
        for d in &ast.vars {
            for item in &d.items {
                if let Some(RValue::Vector(v)) = &item.init {
                    vc(v, &mut out);
                }
            }
        }
        for a in &ast.options {
            if let RValue::Vector(v) = &a.value {
                vc(v, &mut out);
            }
        }
        for p in &ast.procs {
            for d in &p.locals {
                for item in &d.items {
                    if let Some(RValue::Vector(v)) = &item.init {
                        vc(v, &mut out);
                    }
                }
            }
            match &p.body {
                ProcBody::Cflow(s) => cflow(s, &mut vc, &mut out),
                ProcBody::Exec(s) => exec(s, &mut vc, &mut out),
            }
        }
    }
    out
}

/// Reads every run, checks the clock, and calibrates.
pub fn calibrate(
    input: &CalibrationInput<'_>,
    options: &CalibrationOptions,
) -> Result<Calibration, CalibError> {
    let clock = input
        .base
        .parameters
        .iter()
        .find(|(n, _)| n == "clock")
        .map(|(_, v)| *v)
        .ok_or_else(|| CalibError::BaseFile(format!("{}: no clock", input.base_path)))?;
    // A run may say its own clock (`--arp clock=25e6,n=16:RUN.arp`).
    for r in input.runs {
        if let Some(&rc) = r.params.get("clock") {
            if ((rc - clock) / clock).abs() > 1e-9 {
                return Err(CalibError::ClockMismatch {
                    recorded: rc,
                    model: clock,
                });
            }
        }
    }
    if let Some(rc) = options.recorded_clock {
        if !(rc > 0.0 && rc.is_finite()) {
            return Err(CalibError::Usage(format!(
                "--recorded-clock {rc}: must be a positive number of Hz"
            )));
        }
        if ((rc - clock) / clock).abs() > 1e-9 {
            return Err(CalibError::ClockMismatch {
                recorded: rc,
                model: clock,
            });
        }
    }
    if input.runs.is_empty() {
        return Err(CalibError::Usage("no --arp run given".into()));
    }
    let runs = input
        .runs
        .iter()
        .map(|r| measure::read_run(r, options.value_set))
        .collect::<Result<Vec<_>, _>>()?;
    let mut c = Calibrator {
        input,
        options,
        runs,
        clock,
        report: String::new(),
        warnings: Vec::new(),
        doc: input
            .base_text
            .parse::<toml_edit::DocumentMut>()
            .map_err(|e| CalibError::BaseFile(format!("{}: {e}", input.base_path)))?,
        provenance: Vec::new(),
    };
    c.run()?;
    let toml = c.finish_document();
    // Never hand back a file the evaluator would refuse.
    HardwareModel::from_toml("<calibrated>", &toml).map_err(CalibError::Output)?;
    Ok(Calibration {
        toml,
        report: c.report,
        warnings: c.warnings,
    })
}

/// One equation of a cost-table fit: a kernel at one set of run
/// parameters.
struct TableRow {
    label: String,
    /// Usage of each element of the type.
    usage: Vec<f64>,
    /// Measured cycles less what the procedure's other resources cost.
    measured: f64,
    files: BTreeSet<String>,
    sids: BTreeSet<arpsim::Sid>,
    /// Executions measured.
    count: u64,
}

/// A fitted cost table (step 3).
struct TableFit {
    ty: String,
    /// "cost table of `TY`", for messages.
    what: String,
    /// The type's elements, in declaration order.
    elements: Vec<String>,
    rows: Vec<TableRow>,
    /// The unknowns: indices into `elements` of those some kernel uses.
    used: Vec<usize>,
    fit: LinearFit,
}

impl TableFit {
    /// The fitted elements, in the order of the fit's coefficients.
    fn names(&self) -> Vec<&str> {
        self.used
            .iter()
            .map(|&j| self.elements[j].as_str())
            .collect()
    }

    /// The elements no kernel uses.
    fn unused(&self) -> Vec<&str> {
        (0..self.elements.len())
            .filter(|j| !self.used.contains(j))
            .map(|j| self.elements[j].as_str())
            .collect()
    }

    /// The files the rows were measured in.
    fn files(&self) -> String {
        let files: BTreeSet<String> = self
            .rows
            .iter()
            .flat_map(|r| r.files.iter().cloned())
            .collect();
        files.into_iter().collect::<Vec<_>>().join(", ")
    }
}

/// Fits the prices of the elements some row uses; refuses rows whose
/// other resources cost more than was measured.
fn solve_table(
    ty: &str,
    what: String,
    elements: Vec<String>,
    rows: Vec<TableRow>,
) -> Result<TableFit, CalibError> {
    for r in &rows {
        if r.measured < 0.0 {
            return Err(fit_error(&what, format!(
                "kernel {}: its procedure's other resources (priced by the base model) cost more than the measured time: the model or base prices are wrong",
                r.label
            )));
        }
    }
    let used: Vec<usize> = (0..elements.len())
        .filter(|&j| rows.iter().any(|r| r.usage[j] != 0.0))
        .collect();
    if used.is_empty() {
        return Err(fit_error(
            &what,
            "the kernels' procedures use no element of this type".into(),
        ));
    }
    let a: Vec<Vec<f64>> = rows
        .iter()
        .map(|r| used.iter().map(|&j| r.usage[j]).collect())
        .collect();
    let b: Vec<f64> = rows.iter().map(|r| r.measured).collect();
    let names: Vec<&str> = used.iter().map(|&j| elements[j].as_str()).collect();
    let fit = fit::fit_nonneg(&a, &b).map_err(|e| {
        fit_error(&what, match e {
            NnlsError::UnderDetermined { rows, cols } => format!(
                "{rows} measured kernel(s) for {cols} unknown price(s) ({}): under-determined; measure more kernels or runs",
                names.join(", ")
            ),
            NnlsError::Singular { column } => format!(
                "the price of `{}` cannot be told apart from the others: the kernels use it only in fixed proportion to other elements (singular fit); measure a kernel that uses it differently",
                names[column]
            ),
            other => other.to_string(),
        })
    })?;
    Ok(TableFit {
        ty: ty.to_string(),
        what,
        elements,
        rows,
        used,
        fit,
    })
}

/// A fit that failed: `what` was being fitted.
fn fit_error(what: &str, message: String) -> CalibError {
    CalibError::Fit {
        what: what.to_string(),
        message,
    }
}

/// An inpcom device's figures, calibrated (step 4).
struct LinkFigures {
    /// Fixed cycles of a message, and cycles per byte.
    intercept: f64,
    slope: f64,
    startup: f64,
    per_hop: f64,
    bandwidth: f64,
}

/// The inpcom device to calibrate: `--inpcom-device`, else the base
/// model's only one.
fn inpcom_device<'m>(
    base: &'m HardwareModel,
    req: &InpcomRequest,
) -> Result<(&'m Device, &'m Network), CalibError> {
    let devices: Vec<&Device> = base
        .devices
        .iter()
        .filter(|d| matches!(d.kind, DeviceKind::Inpcom(_)))
        .filter(|d| req.device.as_ref().is_none_or(|n| &d.name == n))
        .collect();
    let device = match devices.as_slice() {
        [one] => *one,
        [] => {
            return Err(CalibError::Usage(format!(
                "--inpcom: the base model has no inpcom device{}",
                req.device
                    .as_ref()
                    .map(|d| format!(" named `{d}`"))
                    .unwrap_or_default()
            )))
        }
        many => {
            return Err(CalibError::Usage(format!(
                "--inpcom: several inpcom devices ({}); choose one with --inpcom-device",
                many.iter()
                    .map(|d| d.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
    };
    let DeviceKind::Inpcom(net) = &device.kind else {
        unreachable!("filtered")
    };
    Ok((device, net))
}

struct Calibrator<'a, 'b> {
    input: &'b CalibrationInput<'a>,
    options: &'b CalibrationOptions,
    runs: Vec<RunMeasurements>,
    clock: f64,
    report: String,
    warnings: Vec<String>,
    doc: toml_edit::DocumentMut,
    /// `[provenance]` entries: key and fields.
    provenance: Vec<(String, Vec<(String, toml_edit::Value)>)>,
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:+.2}%"))
}

impl Calibrator<'_, '_> {
    fn warn(&mut self, w: String) {
        self.warnings.push(w);
    }

    /// Measurements of a kernel (by name) in every run.
    fn kernel_runs(&self, name: &str) -> Vec<KernelRun> {
        let mut out = Vec::new();
        for (i, r) in self.runs.iter().enumerate() {
            for (sid, s) in &r.sections {
                if self.input.names.name(*sid) == name {
                    out.push(KernelRun {
                        run: i,
                        sid: *sid,
                        count: s.count,
                        mean: s.mean(),
                        min: s.min,
                        max: s.max,
                    });
                }
            }
        }
        out
    }

    fn files_of(&self, krs: &[KernelRun]) -> String {
        let mut files: Vec<String> = krs
            .iter()
            .map(|k| self.runs[k.run].spec.path.display().to_string())
            .collect();
        files.dedup();
        files.join(", ")
    }

    fn run(&mut self) -> Result<(), CalibError> {
        let prog = self.input.program;
        let model_names = model_kernel_names(prog);
        // Kernels some calibration step uses.
        let mut used: BTreeSet<String> = model_names.clone();
        used.extend(self.options.laws.keys().cloned());
        if let Some(i) = &self.options.inpcom {
            used.insert(i.kernel.clone());
        }
        let usage_kernels = if self.options.fit_tables.is_empty() {
            BTreeMap::new()
        } else {
            self.usage_procedures()?
        };
        used.extend(usage_kernels.keys().cloned());
        // Sections of each run no step uses.
        let mut unused_warnings = Vec::new();
        for r in &self.runs {
            let names: Vec<String> = r
                .sections
                .keys()
                .map(|s| self.input.names.name(*s))
                .collect();
            let unused: Vec<String> = r
                .sections
                .keys()
                .filter(|s| !used.contains(&self.input.names.name(**s)))
                .map(|s| self.input.names.describe(*s))
                .collect();
            if names.iter().all(|n| !used.contains(n)) {
                return Err(CalibError::Usage(format!(
                    "{}: none of its sections ({}) is named by the model (its arp vectors name: {}){}",
                    r.spec.path.display(),
                    unused.join(", "),
                    if model_names.is_empty() {
                        "nothing".to_string()
                    } else {
                        model_names.iter().cloned().collect::<Vec<_>>().join(", ")
                    },
                    if self.input.names.is_empty() {
                        "; sections without a name are known by their id: name them with --sir or --section NAME=SID"
                    } else {
                        ""
                    }
                )));
            }
            if !unused.is_empty() {
                let w = format!(
                    "{}: sections not named by the model, ignored: {}",
                    r.spec.path.display(),
                    unused.join(", ")
                );
                unused_warnings.push(w);
            }
        }
        self.warnings.extend(unused_warnings);
        // 1. Bind kernels the model names (laws are written by step 2).
        for name in &model_names {
            if self.options.laws.contains_key(name) {
                continue;
            }
            self.bind_kernel(name);
        }
        // 2. Laws.
        let laws: Vec<(String, String)> = self
            .options
            .laws
            .iter()
            .map(|(k, p)| (k.clone(), p.clone()))
            .collect();
        for (k, p) in laws {
            if !model_names.contains(&k) {
                let w = format!("--law {k}={p}: the model names no kernel `{k}` in an arp vector; the law is written anyway");
                self.warn(w);
            }
            self.fit_kernel_law(&k, &p)?;
        }
        // 3. Tables.
        for ty in self.options.fit_tables.clone() {
            self.fit_table(&ty, &usage_kernels)?;
        }
        // 4. Communication.
        if let Some(req) = self.options.inpcom.clone() {
            self.fit_inpcom(&req)?;
        }
        Ok(())
    }

    fn kernels_table(&mut self) -> &mut toml_edit::Table {
        root_table(&mut self.doc, "kernels")
    }

    fn bind_kernel(&mut self, name: &str) {
        let krs = self.kernel_runs(name);
        if krs.is_empty() {
            let kept = if self.input.base.kernels.contains_key(name) {
                "its base value is kept"
            } else {
                "the model cannot be evaluated against this file until it is"
            };
            let w = format!("the model names kernel `{name}` but no run measured it; {kept}");
            self.warn(w);
            return;
        }
        // summed wide: a record's count may be any u64 (issue 30, N25)
        let count: u128 = krs.iter().map(|k| u128::from(k.count)).sum();
        let total: f64 = krs.iter().map(|k| k.mean * k.count as f64).sum();
        let mean = total / count as f64;
        if mean == 0.0 {
            let w = format!("kernel `{name}` measured 0 cycles in every execution: is callback set {} the cycle counter?", self.options.value_set);
            self.warn(w);
        }
        // Runs that disagree suggest a law.
        let lo = krs.iter().map(|k| k.mean).fold(f64::INFINITY, f64::min);
        let hi = krs.iter().map(|k| k.mean).fold(0.0, f64::max);
        if krs.len() > 1 && hi > lo * 1.05 {
            let params: BTreeSet<&String> = krs
                .iter()
                .flat_map(|k| self.runs[k.run].spec.params.keys())
                .collect();
            let hint = params
                .iter()
                .next()
                .map(|p| format!("; if it depends on `{p}`, fit a law with --law {name}={p}"))
                .unwrap_or_default();
            let w = format!(
                "kernel `{name}`: the mean per run ranges from {lo:.1} to {hi:.1} cycles; bound to the overall mean {mean:.1}{hint}"
            );
            self.warn(w);
        }
        let sids: BTreeSet<arpsim::Sid> = krs.iter().map(|k| k.sid).collect();
        let sections = sids
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let files = self.files_of(&krs);
        let source =
            format!("calibrated: mean of {count} execution(s) of section {sections} in {files}");
        let mut t = toml_edit::InlineTable::new();
        t.insert("cycles", round_sig(mean).into());
        t.insert("source", source.as_str().into());
        self.kernels_table().insert(name, toml_edit::value(t));
        let _ = writeln!(
            self.report,
            "kernel {name}: {:.3} cycles per execution ({count} executions, section {sections}, {files})",
            mean
        );
        let mut prov: Vec<(String, toml_edit::Value)> = vec![
            ("files".into(), files.as_str().into()),
            ("sections".into(), sections.as_str().into()),
            ("executions".into(), toml_count(count)),
            ("fit".into(), "mean per execution".into()),
        ];
        let sample_min = krs.iter().map(|k| k.min).collect::<Option<Vec<f64>>>();
        let sample_max = krs.iter().map(|k| k.max).collect::<Option<Vec<f64>>>();
        if let (Some(lo), Some(hi)) = (sample_min, sample_max) {
            prov.push((
                "min_cycles".into(),
                round_sig(lo.iter().copied().fold(f64::INFINITY, f64::min)).into(),
            ));
            prov.push((
                "max_cycles".into(),
                round_sig(hi.iter().copied().fold(0.0, f64::max)).into(),
            ));
        }
        if krs.len() > 1 {
            prov.push((
                "run_means".into(),
                format!("{:.6} .. {:.6}", lo, hi).as_str().into(),
            ));
        }
        self.provenance.push((format!("kernels.{name}"), prov));
    }

    fn fit_kernel_law(&mut self, name: &str, param: &str) -> Result<(), CalibError> {
        let krs = self.kernel_runs(name);
        let fit_err = |message: String| CalibError::Fit {
            what: format!("law of kernel `{name}` in `{param}`"),
            message,
        };
        if krs.is_empty() {
            return Err(fit_err("no run measured it".into()));
        }
        // One point per run: (parameter value, mean).
        let mut points = Vec::new();
        let mut without = Vec::new();
        for k in &krs {
            match self.runs[k.run].spec.params.get(param) {
                Some(v) => points.push((*v, k.mean)),
                None => without.push(self.runs[k.run].spec.path.display().to_string()),
            }
        }
        if !without.is_empty() {
            return Err(fit_err(format!(
                "run(s) {} give no value of `{param}` (write --arp {param}=VALUE:FILE)",
                without.join(", ")
            )));
        }
        let lf: LawFit = fit::fit_law(&points).map_err(|e| fit_err(e.to_string()))?;
        for w in &lf.warnings {
            self.warnings.push(format!("law of kernel `{name}`: {w}"));
        }
        let best = lf.best().clone();
        let mut law = toml_edit::InlineTable::new();
        law.insert("unit", "cycles".into());
        law.insert("parameter", param.into());
        law.insert("constant", round_sig(best.law.constant).into());
        let mut terms = toml_edit::Array::new();
        for t in &best.law.terms {
            let mut it = toml_edit::InlineTable::new();
            it.insert("coefficient", round_sig(t.coefficient).into());
            it.insert("exponent", t.exponent.into());
            it.insert("log_exponent", t.log_exponent.into());
            terms.push(it);
        }
        law.insert("terms", toml_edit::Value::Array(terms));
        let formula = best.law.formula(param);
        let loo = best.fit.loo.as_ref().map(|l| l.smape_percent);
        let files = self.files_of(&krs);
        let mut t = toml_edit::InlineTable::new();
        t.insert("law", toml_edit::Value::InlineTable(law));
        t.insert(
            "source",
            format!(
                "calibrated: law `{}` fitted to {} run(s) ({files}), LOO SMAPE {}",
                best.name,
                points.len(),
                loo.map_or("n/a".into(), |v| format!("{v:.2}%"))
            )
            .as_str()
            .into(),
        );
        self.kernels_table().insert(name, toml_edit::value(t));
        let _ = writeln!(
            self.report,
            "kernel {name}: law {formula} cycles (hypothesis `{}`)",
            best.name
        );
        let _ = writeln!(
            self.report,
            "  hypotheses (leave-one-out SMAPE, lower is better):"
        );
        for (i, c) in lf.candidates.iter().enumerate() {
            let _ = writeln!(
                self.report,
                "    {}{:<10} {:<40} LOO SMAPE {:>8}  R² {}",
                if i == lf.chosen { "* " } else { "  " },
                c.name,
                c.law.formula(param),
                c.fit
                    .loo
                    .as_ref()
                    .map_or("n/a".into(), |l| format!("{:.3}%", l.smape_percent)),
                c.fit.r_squared.map_or("n/a".into(), |r| format!("{r:.6}"))
            );
        }
        self.report_points(
            &points
                .iter()
                .map(|p| format!("{param}={}", p.0))
                .collect::<Vec<_>>(),
            &best.fit,
        );
        let mut prov = vec![
            ("files".into(), files.as_str().into()),
            ("parameter".into(), param.into()),
            (
                "fit".into(),
                format!("law {}: {formula}", best.name).as_str().into(),
            ),
            ("points".into(), (points.len() as i64).into()),
        ];
        if let Some(r2) = best.fit.r_squared {
            prov.push(("r_squared".into(), stat(r2).into()));
        }
        if let Some(l) = &best.fit.loo {
            prov.push(("loo_smape_percent".into(), stat(l.smape_percent).into()));
        }
        self.provenance.push((format!("kernels.{name}"), prov));
        Ok(())
    }

    fn report_points(&mut self, labels: &[String], fit: &LinearFit) {
        let y: Vec<f64> = fit
            .predicted
            .iter()
            .zip(&fit.residuals)
            .map(|(p, r)| p + r)
            .collect();
        let _ = writeln!(
            self.report,
            "  {:<36} {:>14} {:>14} {:>14} {:>9}",
            "point", "measured", "fitted", "residual", "error"
        );
        for (i, l) in labels.iter().enumerate() {
            let _ = writeln!(
                self.report,
                "  {:<36} {:>14.3} {:>14.3} {:>14.3} {:>9}",
                l,
                y[i],
                fit.predicted[i],
                fit.residuals[i],
                pct(fit.error_percent[i])
            );
        }
        let _ = writeln!(
            self.report,
            "  RSS {:.6}, R² {}, leave-one-out: {}",
            fit.rss,
            fit.r_squared
                .map_or("n/a (all measurements equal)".into(), |r| format!("{r:.6}")),
            fit.loo.as_ref().map_or(
                "n/a (no more measurements than unknowns)".into(),
                |l| format!(
                    "RMSE {:.3} cycles, mean |error| {:.2}%, SMAPE {:.2}%",
                    l.rmse, l.mean_abs_percent, l.smape_percent
                )
            )
        );
    }

    /// Kernel → (object, procedure) giving its usage: `--usage`, else a
    /// procedure named like the kernel in exactly one object.
    fn usage_procedures(&mut self) -> Result<BTreeMap<String, (String, String)>, CalibError> {
        let prog = self.input.program;
        let mut out = BTreeMap::new();
        let mut measured: BTreeSet<String> = BTreeSet::new();
        for r in &self.runs {
            for s in r.sections.keys() {
                measured.insert(self.input.names.name(*s));
            }
        }
        for (k, (o, p)) in &self.options.usage {
            let Some(&obj) = prog.by_name.get(o) else {
                return Err(CalibError::Usage(format!(
                    "--usage {k}={o}.{p}: the model has no object `{o}`"
                )));
            };
            if prog.objects[obj].proc(p).is_none() {
                return Err(CalibError::Usage(format!(
                    "--usage {k}={o}.{p}: object `{o}` has no procedure `{p}`"
                )));
            }
            if !measured.contains(k) {
                return Err(CalibError::Usage(format!(
                    "--usage {k}={o}.{p}: no run measured a kernel `{k}`"
                )));
            }
            out.insert(k.clone(), (o.clone(), p.clone()));
        }
        for k in &measured {
            if out.contains_key(k) {
                continue;
            }
            let owners: Vec<&str> = prog
                .objects
                .iter()
                .filter(|o| o.proc(k).is_some())
                .map(|o| o.name.as_str())
                .collect();
            match owners.as_slice() {
                [] => {}
                [one] => {
                    out.insert(k.clone(), (one.to_string(), k.clone()));
                }
                many => {
                    return Err(CalibError::Usage(format!(
                        "kernel `{k}`: procedures of that name in {}; choose one with --usage {k}=OBJECT.PROC",
                        many.join(", ")
                    )))
                }
            }
        }
        Ok(out)
    }

    /// Step 3: the prices of the cost table of vector type `ty`, fitted by
    /// non-negative least squares to the kernels whose usage `usage` names.
    fn fit_table(
        &mut self,
        ty: &str,
        usage: &BTreeMap<String, (String, String)>,
    ) -> Result<(), CalibError> {
        let elements = self.table_elements(ty)?;
        let what = format!("cost table of `{ty}`");
        if usage.is_empty() {
            return Err(fit_error(&what, "no measured kernel has its usage in the model (a procedure named like the kernel, or --usage KERNEL=OBJECT.PROC)".into()));
        }
        let rows = self.table_rows(ty, &elements, usage)?;
        let table = solve_table(ty, what, elements, rows)?;
        self.warn_table(&table);
        self.write_table(&table)?;
        self.report_table(&table);
        self.table_provenance(&table);
        Ok(())
    }

    /// The elements of `ty`, which must be a symbol or combination type.
    fn table_elements(&self, ty: &str) -> Result<Vec<String>, CalibError> {
        let prog = self.input.program;
        let Some(vt) = prog.vectors.get(ty) else {
            return Err(CalibError::Usage(format!(
                "--fit {ty}: no vector type `{ty}` (known: {})",
                prog.vectors.names().join(", ")
            )));
        };
        if !matches!(vt.kind, ElementKind::Symbol | ElementKind::Combination) {
            return Err(CalibError::Usage(format!(
                "--fit {ty}: only symbol or combination types have a cost table of elements"
            )));
        }
        Ok(vt.elements.clone())
    }

    /// One equation per kernel and distinct run parameters: the usage of
    /// each element by the kernel's procedure (evaluated with unit prices
    /// for `ty`) and the measured cycles less what its other resources cost
    /// (evaluated with zero prices for `ty`), averaged over the runs.
    fn table_rows(
        &self,
        ty: &str,
        elements: &[String],
        usage: &BTreeMap<String, (String, String)>,
    ) -> Result<Vec<TableRow>, CalibError> {
        let prog = self.input.program;
        let base = self.input.base;
        let mut unit_hw = base.clone();
        let mut zero_hw = base.clone();
        let table = |v: f64| CostTable {
            unit: CostUnit::Seconds,
            scale: None,
            elements: elements.iter().map(|e| (e.clone(), v)).collect(),
        };
        unit_hw.costs.insert(ty.to_string(), table(1.0));
        zero_hw.costs.insert(ty.to_string(), table(0.0));
        let mut rows: BTreeMap<(String, String), TableRow> = BTreeMap::new();
        let app = &prog.objects[prog.app];
        for (k, (obj, proc_name)) in usage {
            for kr in self.kernel_runs(k) {
                let spec = &self.runs[kr.run].spec;
                let settings: Vec<(String, Value)> = spec
                    .params
                    .iter()
                    .filter(|(n, _)| app.var(n).is_some_and(|v| v.is_interface()))
                    .map(|(n, v)| (n.clone(), Value::Num(*v)))
                    .collect();
                let key = (k.clone(), format_params(&spec.params));
                let eval = |hw: &HardwareModel| -> Result<crate::eval::Outcome, CalibError> {
                    Evaluator::new(prog, hw, Limits::default(), false)
                        .run_procedure(obj, proc_name, &settings)
                        .map_err(|source| CalibError::Eval {
                            what: format!("the usage of kernel `{k}` ({obj}.{proc_name})"),
                            source,
                        })
                };
                let u = eval(&unit_hw)?;
                let rest = eval(&zero_hw)?;
                let usage_vec: Vec<f64> = elements
                    .iter()
                    .map(|e| {
                        u.breakdown
                            .by_resource
                            .get(&format!("{ty}.{e}"))
                            .copied()
                            .unwrap_or(0.0)
                    })
                    .collect();
                let other_cycles = rest.time.unwrap_or(0.0) * self.clock;
                let r = rows.entry(key.clone()).or_insert_with(|| TableRow {
                    label: if spec.params.is_empty() {
                        k.clone()
                    } else {
                        format!("{k} ({})", key.1)
                    },
                    usage: usage_vec.clone(),
                    measured: 0.0,
                    files: BTreeSet::new(),
                    sids: BTreeSet::new(),
                    count: 0,
                });
                // Weighted mean over runs with the same parameters.
                let c = r.count as f64;
                let n = kr.count as f64;
                r.measured = (r.measured * c + (kr.mean - other_cycles) * n) / (c + n);
                r.count = r.count.saturating_add(kr.count);
                r.files.insert(spec.path.display().to_string());
                r.sids.insert(kr.sid);
            }
        }
        Ok(rows.into_values().collect())
    }

    /// Warnings about a table fit: too few measurements, prices clamped to
    /// 0, elements no kernel uses.
    fn warn_table(&mut self, t: &TableFit) {
        let (what, ty, fit) = (&t.what, &t.ty, &t.fit);
        let names = t.names();
        if t.rows.len() < 2 * t.used.len() {
            let w = format!(
                "{what}: {} measurement(s) for {} unknown(s); a reliable fit needs at least {} (twice the unknowns){}",
                t.rows.len(),
                t.used.len(),
                2 * t.used.len(),
                if fit.loo.is_none() { "; no cross-validation possible" } else { "" }
            );
            self.warn(w);
        }
        for (j, x) in fit.coefficients.iter().enumerate() {
            if *x == 0.0 {
                let w = format!(
                    "{what}: the price of `{}` was clamped to 0 (least squares wanted it negative)",
                    names[j]
                );
                self.warn(w);
            }
        }
        let base = self.input.base;
        let in_base = |e: &str| {
            base.costs
                .get(ty)
                .is_some_and(|t| t.elements.contains_key(e))
        };
        let unused = t.unused();
        let kept: Vec<&str> = unused.iter().copied().filter(|e| in_base(e)).collect();
        let absent: Vec<&str> = unused.iter().copied().filter(|e| !in_base(e)).collect();
        if !kept.is_empty() {
            let w = format!(
                "{what}: no measured kernel uses {}; their prices are kept from the base model (converted to cycles)",
                kept.join(", ")
            );
            self.warn(w);
        }
        if !absent.is_empty() {
            let w = format!(
                "{what}: no measured kernel uses {} and the base model has no price for them: a model using them cannot be evaluated",
                absent.join(", ")
            );
            self.warn(w);
        }
    }

    /// Writes the table in cycles: the fitted prices, and the base
    /// model's for the elements no kernel uses.
    fn write_table(&mut self, t: &TableFit) -> Result<(), CalibError> {
        let ty = t.ty.as_str();
        let mut elems = toml_edit::InlineTable::new();
        let base_table = self.input.base.costs.get(ty);
        for (j, e) in t.elements.iter().enumerate() {
            if let Some(k) = t.used.iter().position(|&u| u == j) {
                elems.insert(e, round_sig(t.fit.coefficients[k]).into());
            } else if let Some(v) = base_table.and_then(|t| t.elements.get(e).map(|v| (t.unit, *v)))
            {
                let cycles = match v.0 {
                    CostUnit::Cycles => v.1,
                    CostUnit::Seconds => v.1 * self.clock,
                };
                elems.insert(e, round_sig(cycles).into());
            }
        }
        let root = self.doc.as_table_mut();
        if !root.contains_key("costs") {
            root.insert("costs", toml_edit::Item::Table(toml_edit::Table::new()));
        }
        let costs = root["costs"]
            .as_table_mut()
            .ok_or_else(|| CalibError::BaseFile("`costs` is not a table".into()))?;
        costs.set_implicit(true);
        let mut table = toml_edit::Table::new();
        table.insert("unit", toml_edit::value("cycles"));
        table.insert(
            "source",
            toml_edit::value(format!(
                "calibrated: non-negative least squares over {} kernel measurement(s) from {}; see [provenance]",
                t.rows.len(),
                t.files()
            )),
        );
        table.insert("elements", toml_edit::value(elems));
        if let Some(scale) = base_table.and_then(|t| t.scale) {
            table.insert("scale", toml_edit::value(scale));
        }
        costs.insert(ty, toml_edit::Item::Table(table));
        Ok(())
    }

    fn report_table(&mut self, t: &TableFit) {
        let _ = writeln!(
            self.report,
            "cost table {} (cycles per element), non-negative least squares:",
            t.ty
        );
        for (k, n) in t.names().iter().enumerate() {
            let _ = writeln!(self.report, "  {n:<10} {:>14.4}", t.fit.coefficients[k]);
        }
        let labels: Vec<String> = t.rows.iter().map(|r| r.label.clone()).collect();
        self.report_points(&labels, &t.fit);
    }

    /// `[provenance]` of the table (files, kernels, fit statistics) and of
    /// each price (fitted, or kept from the base model).
    fn table_provenance(&mut self, t: &TableFit) {
        let (ty, fit, rows) = (&t.ty, &t.fit, &t.rows);
        let names = t.names();
        let files = t.files();
        let kernels = rows
            .iter()
            .map(|r| {
                format!(
                    "{} [section {}]",
                    r.label,
                    r.sids
                        .iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        let mut prov: Vec<(String, toml_edit::Value)> = vec![
            ("files".into(), files.as_str().into()),
            ("kernels".into(), kernels.as_str().into()),
            (
                "fit".into(),
                format!(
                    "non-negative least squares over {} equation(s), {} unknown(s): {}",
                    rows.len(),
                    names.len(),
                    names.join(", ")
                )
                .as_str()
                .into(),
            ),
            ("rss".into(), stat(fit.rss).into()),
        ];
        if let Some(r2) = fit.r_squared {
            prov.push(("r_squared".into(), stat(r2).into()));
        }
        match &fit.loo {
            Some(l) => {
                prov.push(("loo_rmse_cycles".into(), stat(l.rmse).into()));
                prov.push((
                    "loo_mean_abs_error_percent".into(),
                    stat(l.mean_abs_percent).into(),
                ));
            }
            None => prov.push((
                "loo".into(),
                "not possible: no more measurements than unknowns".into(),
            )),
        }
        let mut per_kernel = toml_edit::InlineTable::new();
        for (r, e) in rows.iter().zip(&fit.error_percent) {
            if let Some(e) = e {
                per_kernel.insert(&r.label, stat(*e).into());
            }
        }
        prov.push((
            "kernel_error_percent".into(),
            toml_edit::Value::InlineTable(per_kernel),
        ));
        self.provenance.push((format!("costs.{ty}"), prov));
        for n in &names {
            self.provenance.push((
                format!("costs.{ty}.elements.{n}"),
                vec![(
                    "fit".into(),
                    format!("fitted: see costs.{ty}").as_str().into(),
                )],
            ));
        }
        let base_table = self.input.base.costs.get(ty.as_str());
        for n in t.unused() {
            if base_table.is_some_and(|t| t.elements.contains_key(n)) {
                self.provenance.push((
                    format!("costs.{ty}.elements.{n}"),
                    vec![(
                        "fit".into(),
                        format!("not measured: kept from {}", self.input.base_path)
                            .as_str()
                            .into(),
                    )],
                ));
            }
        }
    }

    /// Step 4: the inpcom device's start-up, per-hop time and bandwidth
    /// from a communication kernel measured at several message sizes.
    fn fit_inpcom(&mut self, req: &InpcomRequest) -> Result<(), CalibError> {
        let what = format!("inpcom from kernel `{}`", req.kernel);
        let (device, net) = inpcom_device(self.input.base, req)?;
        if !(req.hops >= 1.0 && req.hops.is_finite()) {
            return Err(CalibError::Usage(format!(
                "--inpcom-hops {}: must be at least 1",
                req.hops
            )));
        }
        let krs = self.kernel_runs(&req.kernel);
        if krs.is_empty() {
            return Err(fit_error(&what, "no run measured it".into()));
        }
        let points = self.message_points(req, &krs, &what)?;
        let a: Vec<Vec<f64>> = points.iter().map(|p| vec![1.0, p.0]).collect();
        let b: Vec<f64> = points.iter().map(|p| p.1).collect();
        let fit = fit::fit_nonneg(&a, &b).map_err(|e| fit_error(&what, e.to_string()))?;
        let link = self.link_figures(req, net, &fit, &what)?;
        let files = self.files_of(&krs);
        self.write_inpcom(req, &device.name, &link, &files)?;
        let _ = writeln!(
            self.report,
            "inpcom device {}: cycles = {:.3} + {:.6} * {} -> startup_s {:.4e}, per_hop_s {:.4e}, bandwidth {:.4e} bytes/s ({} hop(s), {:?})",
            device.name, link.intercept, link.slope, req.parameter, link.startup, link.per_hop, link.bandwidth, req.hops, net.switching
        );
        let labels: Vec<String> = points
            .iter()
            .map(|p| format!("{}={}", req.parameter, p.0))
            .collect();
        self.report_points(&labels, &fit);
        self.inpcom_provenance(req, &device.name, &link, &fit, points.len(), &files);
        Ok(())
    }

    /// (message size, mean cycles) of each run of the kernel; the sizes
    /// must be known, non-negative and at least two distinct ones.
    fn message_points(
        &mut self,
        req: &InpcomRequest,
        krs: &[KernelRun],
        what: &str,
    ) -> Result<Vec<(f64, f64)>, CalibError> {
        let mut points = Vec::new();
        for k in krs {
            let spec = &self.runs[k.run].spec;
            let Some(size) = spec.params.get(&req.parameter) else {
                return Err(fit_error(
                    what,
                    format!(
                        "run {} gives no message size `{}` (write --arp {}=BYTES:FILE)",
                        spec.path.display(),
                        req.parameter,
                        req.parameter
                    ),
                ));
            };
            if *size < 0.0 {
                return Err(fit_error(
                    what,
                    format!("run {}: negative message size", spec.path.display()),
                ));
            }
            points.push((*size, k.mean));
        }
        let mut sizes: Vec<f64> = points.iter().map(|p| p.0).collect();
        sizes.sort_by(f64::total_cmp);
        sizes.dedup();
        if sizes.len() < 2 {
            return Err(fit_error(what, format!(
                "runs at {} distinct message size(s); latency and bandwidth need at least 2 (3 or more to cross-validate)",
                sizes.len()
            )));
        }
        if sizes.len() < fit::RELIABLE_POINTS {
            let w = format!(
                "{what}: only {} distinct message sizes; a reliable fit needs at least {}",
                sizes.len(),
                fit::RELIABLE_POINTS
            );
            self.warn(w);
        }
        Ok(points)
    }

    /// The device's figures from `cycles = intercept + slope * size`: the
    /// fixed cost is the start-up plus `hops` times the base model's
    /// per-hop time (lowered when the fixed cost is smaller).
    fn link_figures(
        &mut self,
        req: &InpcomRequest,
        net: &Network,
        fit: &LinearFit,
        what: &str,
    ) -> Result<LinkFigures, CalibError> {
        let (intercept, slope) = (fit.coefficients[0], fit.coefficients[1]);
        if slope <= 0.0 {
            return Err(fit_error(
                what,
                "the measured time does not grow with the message size: no bandwidth can be fitted"
                    .into(),
            ));
        }
        let fixed_s = intercept / self.clock;
        let mut per_hop = net.per_hop_s;
        let mut startup = fixed_s - req.hops * per_hop;
        if startup < 0.0 {
            let w = format!(
                "{what}: the fixed cost {fixed_s:.3e} s is below {} hop(s) of the base per_hop_s {per_hop:.3e} s; per_hop_s set to {:.3e} s and startup_s to 0",
                req.hops,
                fixed_s / req.hops
            );
            self.warn(w);
            per_hop = fixed_s / req.hops;
            startup = 0.0;
        }
        let per_byte_s = slope / self.clock;
        let bandwidth = match net.switching {
            Switching::CutThrough => 1.0 / per_byte_s,
            Switching::StoreAndForward => req.hops / per_byte_s,
        };
        Ok(LinkFigures {
            intercept,
            slope,
            startup,
            per_hop,
            bandwidth,
        })
    }

    /// Writes the figures into the device's table of the base file.
    fn write_inpcom(
        &mut self,
        req: &InpcomRequest,
        device: &str,
        link: &LinkFigures,
        files: &str,
    ) -> Result<(), CalibError> {
        let root = self.doc.as_table_mut();
        let dev_item = root
            .get_mut("devices")
            .and_then(|d| d.as_table_like_mut())
            .and_then(|d| d.get_mut(device))
            .and_then(|d| d.as_table_like_mut())
            .ok_or_else(|| {
                CalibError::BaseFile(format!(
                    "devices.{device} not found in the base file's text"
                ))
            })?;
        dev_item.insert("startup_s", toml_edit::value(round_sig(link.startup)));
        dev_item.insert("per_hop_s", toml_edit::value(round_sig(link.per_hop)));
        dev_item.insert(
            "bandwidth_bytes_per_s",
            toml_edit::value(round_sig(link.bandwidth)),
        );
        dev_item.insert(
            "source",
            toml_edit::value(format!(
                "calibrated: cycles = {} + {} * {} fitted to kernel `{}` in {files}; see [provenance]",
                round_sig(link.intercept),
                round_sig(link.slope),
                req.parameter,
                req.kernel
            )),
        );
        Ok(())
    }

    fn inpcom_provenance(
        &mut self,
        req: &InpcomRequest,
        device: &str,
        link: &LinkFigures,
        fit: &LinearFit,
        runs: usize,
        files: &str,
    ) {
        let mut prov: Vec<(String, toml_edit::Value)> = vec![
            ("files".into(), files.into()),
            ("kernel".into(), req.kernel.as_str().into()),
            (
                "fit".into(),
                format!(
                    "NNLS cycles = a + b * {} over {} run(s), {} hop(s)",
                    req.parameter, runs, req.hops
                )
                .as_str()
                .into(),
            ),
            ("intercept_cycles".into(), round_sig(link.intercept).into()),
            ("cycles_per_byte".into(), round_sig(link.slope).into()),
        ];
        if let Some(r2) = fit.r_squared {
            prov.push(("r_squared".into(), stat(r2).into()));
        }
        if let Some(l) = &fit.loo {
            prov.push((
                "loo_mean_abs_error_percent".into(),
                stat(l.mean_abs_percent).into(),
            ));
        }
        self.provenance.push((format!("devices.{device}"), prov));
    }

    fn finish_document(&mut self) -> String {
        let fresh = !self.doc.as_table().contains_key("provenance");
        let prov = root_table(&mut self.doc, "provenance");
        if fresh {
            prov.decor_mut().set_prefix(
                "\n# Where every calibrated number came from (chips-eval calibrate).\n",
            );
        }
        for (key, fields) in self.provenance.drain(..) {
            let mut t = toml_edit::InlineTable::new();
            for (k, v) in fields {
                t.insert(&k, v);
            }
            prov.insert(&key, toml_edit::value(t));
        }
        let runs = self
            .runs
            .iter()
            .map(|r| format!("#   {}\n", r.spec.describe()))
            .collect::<String>();
        let header = format!(
            "# Calibrated by `chips-eval calibrate` from {} with model {} and runs:\n{runs}\n",
            self.input.base_path, self.input.program.objects[self.input.program.app].file
        );
        let mut text = format!("{header}{}", self.doc);
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text
    }
}

/// The top-level table `key` of the document, created if absent and
/// turned into a `[key]` table if the base wrote it inline.
fn root_table<'d>(doc: &'d mut toml_edit::DocumentMut, key: &str) -> &'d mut toml_edit::Table {
    let item = doc.as_table_mut().entry(key).or_insert(toml_edit::table());
    let mut converted = false;
    if let Some(inline) = item.as_inline_table().cloned() {
        *item = toml_edit::Item::Table(inline.into_table());
        converted = true;
    }
    if !item.is_table() {
        // The base file loaded, so `key` was a table; anything else is
        // replaced rather than trusted.
        *item = toml_edit::table();
    }
    if converted {
        // `key = {` leaves a space in the key's decor: `[key ]`.
        if let Some(mut k) = doc.as_table_mut().key_mut(key) {
            k.leaf_decor_mut().clear();
        }
    }
    match doc.as_table_mut().get_mut(key).expect("inserted above") {
        toml_edit::Item::Table(t) => t,
        _ => unreachable!("made a table above"),
    }
}

/// A fit statistic for the provenance table: 6 significant digits, and
/// round-off below 1e-9 shown as 0.
fn stat(v: f64) -> f64 {
    if v.abs() < 1e-9 {
        return 0.0;
    }
    let digits = 6 - v.abs().log10().ceil() as i32;
    let f = 10f64.powi(digits.clamp(-300, 300));
    let r = (v * f).round() / f;
    if r.is_finite() {
        r
    } else {
        v
    }
}

/// Rounds to 12 significant digits so files do not show float noise.
/// A count in the provenance: a TOML integer (64 bits, signed) when it
/// fits, else its exact decimal digits as a string, never a wrapped
/// negative number (issue 30, N25: n = 2^64 - 1 was written as -1).
pub fn toml_count(n: u128) -> toml_edit::Value {
    match i64::try_from(n) {
        Ok(i) => i.into(),
        Err(_) => n.to_string().as_str().into(),
    }
}

fn round_sig(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let digits = 12 - v.abs().log10().ceil() as i32;
    let f = 10f64.powi(digits.clamp(-300, 300));
    let r = (v * f).round() / f;
    if r.is_finite() {
        r
    } else {
        v
    }
}
