//! The run-time services of section 3 / Table 1: interface variable
//! settings (LaVarSet, LaVarClear, LaVarDef), evaluation of every
//! combination (LaRun) and the results table behind the outputs.

use crate::ast::VarType;
use crate::diagnostic::quote;
use crate::error::Error;
use crate::eval::{Breakdown, Evaluator, Limits};
use crate::hardware::HardwareModel;
use crate::program::Program;
use crate::shard::Shard;
use crate::value::Value;

/// One `--set` request: a variable and the values it takes.
/// `VAR=VALUE` (LaVarClear: a single value), `VAR=A..B[:STEP]` or
/// `VAR=A..B:*F` (a range, arithmetic or geometric), `VAR=v1,v2,...`
/// (LaVarSet). A variable never set keeps its default (LaVarDef).
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub name: String,
    pub values: Vec<Value>,
}

/// At most this many values per range, so a typo cannot exhaust memory.
const MAX_RANGE_VALUES: usize = 100_000;

impl Setting {
    pub fn parse(spec: &str) -> Result<Setting, Error> {
        let usage = |m: String| Error::Usage(format!("--set {}: {m}", quote(spec)));
        let (name, rhs) = spec
            .split_once('=')
            .ok_or_else(|| usage("expected VAR=VALUE, VAR=A..B[:STEP] or VAR=v1,v2,...".into()))?;
        let name = name.trim();
        if name.is_empty() {
            return Err(usage("missing variable name".into()));
        }
        let num = |s: &str| -> Result<f64, Error> {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| usage(format!("`{}` is not a finite number", quote(s.trim()))))
        };
        let values = if let Some((a, rest)) = rhs.split_once("..") {
            let (b, step) = match rest.split_once(':') {
                Some((b, s)) => (b, Some(s.trim())),
                None => (rest, None),
            };
            let (a, b) = (num(a)?, num(b)?);
            let mut out = Vec::new();
            match step {
                Some(s) if s.starts_with('*') => {
                    let f = num(&s[1..])?;
                    if f <= 1.0 || a <= 0.0 {
                        return Err(usage(
                            "a geometric range needs a start > 0 and a factor > 1".into(),
                        ));
                    }
                    let mut x = a;
                    while x <= b * (1.0 + 1e-12) {
                        out.push(Value::Num(x));
                        x *= f;
                        if out.len() > MAX_RANGE_VALUES {
                            return Err(usage("range has too many values".into()));
                        }
                    }
                }
                _ => {
                    let st = match step {
                        Some(s) => num(s)?,
                        None => 1.0,
                    };
                    if st <= 0.0 {
                        return Err(usage("the step must be positive".into()));
                    }
                    let count = ((b - a) / st + 1e-9).floor();
                    if count < 0.0 {
                        return Err(usage("the range is empty (end before start)".into()));
                    }
                    if count as usize >= MAX_RANGE_VALUES {
                        return Err(usage("range has too many values".into()));
                    }
                    for i in 0..=(count as usize) {
                        out.push(Value::Num(a + st * i as f64));
                    }
                }
            }
            out
        } else {
            rhs.split(',')
                .map(|v| list_value(v.trim()).map_err(usage))
                .collect::<Result<Vec<_>, _>>()?
        };
        if values.is_empty() {
            return Err(usage("no values".into()));
        }
        Ok(Setting {
            name: name.to_string(),
            values,
        })
    }
}

/// One value of `VAR=v1,v2,...`: a finite number, or a string (quotes
/// optional). Something that reads as a number but is not finite (`1e400`,
/// `nan`, `inf`) and an empty value are errors, not strings.
fn list_value(v: &str) -> Result<Value, String> {
    if v.is_empty() {
        return Err("empty value (write VAR=VALUE or VAR=v1,v2,...)".into());
    }
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(Value::Num(x)),
        Ok(_) => Err(format!("`{}` is not a finite number", quote(v))),
        Err(_) => Ok(Value::Str(v.trim_matches('"').to_string())),
    }
}

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

/// The number of points of the sweep (the product of the settings' sizes),
/// or an error naming the product when it exceeds `max_points`; computed
/// without overflow.
pub fn sweep_size(settings: &[Setting], max_points: u64) -> Result<u64, Error> {
    let sizes: Vec<u64> = settings.iter().map(|s| s.values.len() as u64).collect();
    let product = sizes.iter().try_fold(1u64, |acc, &n| acc.checked_mul(n));
    match product {
        Some(total) if total <= max_points => Ok(total),
        _ => {
            let factors: Vec<String> = sizes.iter().map(u64::to_string).collect();
            let total = product.map_or_else(|| "more than 2^64".to_string(), |t| t.to_string());
            Err(Error::Usage(format!(
                "--set: the sweep has {} = {total} points, more than --max-points {max_points} \
                 (narrow a range or raise --max-points)",
                factors.join(" × ")
            )))
        }
    }
}

/// The `n`th combination of the settings' values: a mixed-radix
/// decomposition of `n`, the last setting varying fastest.
fn point_at(settings: &[Setting], n: u64) -> Vec<(String, Value)> {
    let mut rest = n;
    let mut point = vec![(String::new(), Value::Unset); settings.len()];
    for (i, s) in settings.iter().enumerate().rev() {
        let len = s.values.len() as u64;
        let k = (rest % len) as usize;
        rest /= len;
        point[i] = (s.name.clone(), s.values[k].clone());
    }
    point
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nums(s: &Setting) -> Vec<f64> {
        s.values
            .iter()
            .map(|v| match v {
                Value::Num(n) => *n,
                _ => f64::NAN,
            })
            .collect()
    }

    #[test]
    fn set_forms() {
        assert_eq!(nums(&Setting::parse("N=4").unwrap()), vec![4.0]);
        assert_eq!(
            nums(&Setting::parse("N=1..3").unwrap()),
            vec![1.0, 2.0, 3.0]
        );
        assert_eq!(
            nums(&Setting::parse("N=0..1:0.5").unwrap()),
            vec![0.0, 0.5, 1.0]
        );
        assert_eq!(
            nums(&Setting::parse("N=1..64:*2").unwrap()),
            vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
        );
        assert_eq!(nums(&Setting::parse("N=2,8").unwrap()), vec![2.0, 8.0]);
        assert_eq!(
            Setting::parse("S=abc").unwrap().values,
            vec![Value::Str("abc".into())]
        );
    }

    #[test]
    fn bad_set_forms() {
        for bad in ["N", "=3", "N=3..1", "N=1..4:0", "N=1..4:*1", "N=x..4"] {
            assert!(Setting::parse(bad).is_err(), "{bad}");
        }
    }

    fn usage(spec: &str) -> String {
        Setting::parse(spec).unwrap_err().to_string()
    }

    #[test]
    fn non_finite_and_empty_values_are_blamed_on_the_option() {
        assert_eq!(
            usage("Nproc=1e400"),
            "--set Nproc=1e400: `1e400` is not a finite number"
        );
        assert_eq!(
            usage("Nproc=nan"),
            "--set Nproc=nan: `nan` is not a finite number"
        );
        assert_eq!(
            usage("Nproc=2,inf"),
            "--set Nproc=2,inf: `inf` is not a finite number"
        );
        assert!(usage("Nproc=").starts_with("--set Nproc=: empty value"));
        assert!(usage("Nproc=1,,2").starts_with("--set Nproc=1,,2: empty value"));
        assert_eq!(
            usage("N=1..1e400"),
            "--set N=1..1e400: `1e400` is not a finite number"
        );
    }

    #[test]
    fn a_long_value_is_quoted_to_80_characters() {
        let spec = format!("N=1..{}x", "9".repeat(1000));
        let message = usage(&spec);
        assert!(message.chars().count() < 200, "{message}");
        assert!(
            message.starts_with(&format!("--set N=1..{}…", "9".repeat(75))),
            "{message}"
        );
    }
}
