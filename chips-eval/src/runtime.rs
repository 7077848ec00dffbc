//! The run-time services of section 3 / Table 1: evaluation of every
//! combination of the settings (LaRun, see [`crate::sweep`]) and the
//! results table behind the outputs.

use crate::ast::VarType;
use crate::diagnostic::quote;
use crate::error::Error;
use crate::eval::{Breakdown, Evaluator, Limits};
use crate::hardware::HardwareModel;
use crate::program::Program;
use crate::shard::Shard;
use crate::sweep::{point_at, sweep_size, Setting};
use crate::value::Value;

/// One evaluated point of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct PointResult {
    /// The swept variables' values at this point, in `--set` order.
    pub point: Vec<(String, Value)>,
    /// Predicted time in seconds, `None` if the model executed `exit`.
    pub time: Option<f64>,
    pub printed: Vec<String>,
    pub trace: Vec<String>,
    pub breakdown: Breakdown,
}

/// Results of a run: the swept variables and one row per combination.
#[derive(Debug, Clone, PartialEq)]
pub struct RunResults {
    pub variables: Vec<String>,
    pub points: Vec<PointResult>,
}

/// Most points a run evaluates unless `--max-points` says otherwise.
pub const DEFAULT_MAX_POINTS: u64 = 1_000_000;

/// Options of a run.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    pub limits: Limits,
    pub trace: bool,
    /// Most sweep points (the product of the `--set` sizes) a run accepts.
    pub max_points: u64,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            limits: Limits::default(),
            trace: false,
            max_points: DEFAULT_MAX_POINTS,
        }
    }
}

/// LaRun: evaluates the application for every combination of the set
/// values; the first setting varies slowest. Keeps every point: outputs
/// that can consume points one at a time should use [`run_each`].
pub fn run(
    prog: &Program,
    hw: &HardwareModel,
    settings: &[Setting],
    opts: RunOptions,
) -> Result<RunResults, Error> {
    let mut points = Vec::new();
    run_each(prog, hw, settings, opts, |p| {
        points.push(p);
        Ok(())
    })?;
    Ok(RunResults {
        variables: settings.iter().map(|s| s.name.clone()).collect(),
        points,
    })
}

/// LaRun, streaming: hands each evaluated point to `each` as soon as it is
/// computed, so memory does not grow with the number of points. The
/// settings and the sweep's size are checked before anything is evaluated.
pub fn run_each(
    prog: &Program,
    hw: &HardwareModel,
    settings: &[Setting],
    opts: RunOptions,
    mut each: impl FnMut(PointResult) -> Result<(), Error>,
) -> Result<(), Error> {
    run_shard(prog, hw, settings, opts, Shard::WHOLE, |_, p| each(p))
}

/// [`run_each`] for the points of one shard of the sweep only, each
/// handed over with its index in the whole sweep (from 0, in sweep order).
pub fn run_shard(
    prog: &Program,
    hw: &HardwareModel,
    settings: &[Setting],
    opts: RunOptions,
    shard: Shard,
    mut each: impl FnMut(u64, PointResult) -> Result<(), Error>,
) -> Result<(), Error> {
    check_settings(prog, settings)?;
    let total = sweep_size(settings, opts.max_points)?;
    let mut evaluator = Evaluator::new(prog, hw, opts.limits, opts.trace);
    for n in shard.points(total) {
        let point = point_at(settings, n);
        let out = evaluator.run(&point)?;
        each(
            n,
            PointResult {
                point,
                time: out.time,
                printed: out.printed,
                trace: out.trace,
                breakdown: out.breakdown,
            },
        )?;
    }
    Ok(())
}

/// Every setting names an interface variable of the application and gives
/// a numeric one only numbers, so that a bad `--set` is blamed on the
/// option, not on the model line that uses the value.
fn check_settings(prog: &Program, settings: &[Setting]) -> Result<(), Error> {
    let vars = prog.interface_vars();
    for s in settings {
        let Some(var) = vars.iter().find(|v| v.name == s.name) else {
            let names: Vec<&str> = vars.iter().map(|v| v.name.as_str()).collect();
            return Err(Error::Usage(format!(
                "--set {}: not an interface variable of the application (variables: {})",
                quote(&s.name),
                quote(&names.join(", "))
            )));
        };
        let text = s.values.iter().find(|v| !matches!(v, Value::Num(_)));
        if let (VarType::Numeric, Some(value)) = (var.ty, text) {
            return Err(Error::Usage(format!(
                "--set {}={}: `{}` is numeric but is given a string (every value must be a finite number)",
                quote(&s.name),
                quote(&value.to_string()),
                quote(&s.name)
            )));
        }
    }
    Ok(())
}
