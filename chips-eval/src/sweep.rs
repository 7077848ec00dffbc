//! A sweep: the interface variable settings of section 3 / Table 1
//! (LaVarSet, LaVarClear, LaVarDef: `--set`) and the points they span,
//! every combination of their values, the first setting varying slowest.

use crate::diagnostic::quote;
use crate::error::Error;
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
pub(crate) fn point_at(settings: &[Setting], n: u64) -> Vec<(String, Value)> {
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
