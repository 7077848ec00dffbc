//! Run-time values of the evaluator (section 4.5: numbers, vectors,
//! strings).

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Num(f64),
    Str(String),
    Vector(VecValue),
    /// Declared but not yet given a value (or freed).
    Unset,
}

/// A vector (section 4.5): a data vector or a resource usage vector of a
/// declared vector type, already resolved against the type's elements.
#[derive(Debug, Clone, PartialEq)]
pub enum VecValue {
    /// `<0>`, which costs nothing.
    Zero,
    /// `is data` vectors and `dim` allocations.
    Data(Vec<f64>),
    /// A `numeric` vector type such as `time`.
    Numeric { ty: String, values: Vec<f64> },
    /// A `symbol`/`combination` type: count per element of the type.
    Counts { ty: String, counts: Vec<f64> },
    /// A `kernel` type (`arp`): measured kernel names.
    Kernels { ty: String, names: Vec<String> },
}

impl Value {
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Num(_) => "a number",
            Value::Str(_) => "a string",
            Value::Vector(VecValue::Data(_)) => "a data vector",
            Value::Vector(_) => "a resource usage vector",
            Value::Unset => "no value",
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Num(n) => write!(f, "{}", format_number(*n)),
            Value::Str(s) => write!(f, "{s}"),
            Value::Unset => write!(f, "<unset>"),
            Value::Vector(v) => match v {
                VecValue::Zero => write!(f, "<0>"),
                VecValue::Data(d) => {
                    write!(f, "<is data")?;
                    for x in d {
                        write!(f, ", {}", format_number(*x))?;
                    }
                    write!(f, ">")
                }
                VecValue::Numeric { ty, values } => {
                    write!(f, "<is {ty}")?;
                    for x in values {
                        write!(f, ", {}", format_number(*x))?;
                    }
                    write!(f, ">")
                }
                VecValue::Counts { ty, counts } => {
                    write!(f, "<is {ty}")?;
                    for (i, c) in counts.iter().enumerate() {
                        if *c != 0.0 {
                            write!(f, ", #{i}={}", format_number(*c))?;
                        }
                    }
                    write!(f, ">")
                }
                VecValue::Kernels { ty, names } => {
                    write!(f, "<is {ty}")?;
                    for n in names {
                        write!(f, ", \"{n}\"")?;
                    }
                    write!(f, ">")
                }
            },
        }
    }
}

/// Numbers print without a trailing `.0` when integral, else with up to
/// 6 significant digits in scientific notation for small or large values.
pub fn format_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else if n != 0.0 && (n.abs() < 1e-3 || n.abs() >= 1e6) {
        format!("{n:.6e}")
    } else {
        format!("{n:.6}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}
