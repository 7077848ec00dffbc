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

mod inpcom;
mod kernels;
mod table;

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

/// A fit that failed: `what` was being fitted.
fn fit_error(what: &str, message: String) -> CalibError {
    CalibError::Fit {
        what: what.to_string(),
        message,
    }
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
