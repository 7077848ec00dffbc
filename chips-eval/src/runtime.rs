//! The run-time services of section 3 / Table 1: interface variable
//! settings (LaVarSet, LaVarClear, LaVarDef), evaluation of every
//! combination (LaRun) and the results table behind the outputs.

use crate::error::Error;
use crate::eval::{Breakdown, Evaluator, Limits};
use crate::hardware::HardwareModel;
use crate::program::Program;
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
        let usage = |m: String| Error::Usage(format!("--set {spec}: {m}"));
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
                .ok_or_else(|| usage(format!("`{s}` is not a number")))
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
                .map(|v| {
                    let v = v.trim();
                    match v.parse::<f64>() {
                        Ok(x) if x.is_finite() => Value::Num(x),
                        _ => Value::Str(v.trim_matches('"').to_string()),
                    }
                })
                .collect()
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

/// Options of a run.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    pub limits: Limits,
    pub trace: bool,
}

/// LaRun: evaluates the application for every combination of the set
/// values; the first setting varies slowest.
pub fn run(
    prog: &Program,
    hw: &HardwareModel,
    settings: &[Setting],
    opts: RunOptions,
) -> Result<RunResults, Error> {
    for s in settings {
        let known = prog.interface_vars().iter().any(|v| v.name == s.name);
        if !known {
            let names: Vec<&str> = prog
                .interface_vars()
                .iter()
                .map(|v| v.name.as_str())
                .collect();
            return Err(Error::Usage(format!(
                "--set {}: not an interface variable of the application (variables: {})",
                s.name,
                names.join(", ")
            )));
        }
    }
    let mut evaluator = Evaluator::new(prog, hw, opts.limits, opts.trace);
    let mut points = Vec::new();
    let total: usize = settings.iter().map(|s| s.values.len()).product();
    for n in 0..total.max(1) {
        // Mixed-radix decomposition of n, last setting fastest.
        let mut rest = n;
        let mut point = vec![(String::new(), Value::Unset); settings.len()];
        for (i, s) in settings.iter().enumerate().rev() {
            let k = rest % s.values.len();
            rest /= s.values.len();
            point[i] = (s.name.clone(), s.values[k].clone());
        }
        let out = evaluator.run(&point)?;
        points.push(PointResult {
            point,
            time: out.time,
            printed: out.printed,
            trace: out.trace,
            breakdown: out.breakdown,
        });
    }
    Ok(RunResults {
        variables: settings.iter().map(|s| s.name.clone()).collect(),
        points,
    })
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
}
