//! Budgets of an entry's sections (issue 28):
//!
//! ```toml
//! budget = { "ato_kernel_fir" = 20000, "8/1" = { mean_cycles = 4500, instructions = 90000 } }
//! ```
//!
//! A key names a section by its name, as the report shows it (its
//! `ato_kernel*` / `ato_profile*` label, else `function (file:line)` of
//! its enter call), or by its trace of section ids from the outermost
//! (`8/1`, also written `8 > 1`). A name covers every trace whose
//! innermost section has that name, and the budget holds for their sum.
//! A number limits the total cycles; a table may limit `cycles` (total),
//! `mean_cycles` (per call: total cycles / calls) and `instructions`
//! (total). A budgeted section that did not run fails its budget: a
//! misspelt name never passes silently.

use crate::tools::gate::{self, number};
use serde::{Deserialize, Serialize};

/// One key of `budget`: the section and its limits.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// The key as written.
    pub section: String,
    /// The trace, when the key is one (`8/1`).
    pub path: Option<Vec<u16>>,
    pub cycles: Option<u64>,
    pub mean_cycles: Option<f64>,
    pub instructions: Option<u64>,
}

/// The budgets of a `budget` table; an error is (key, message).
pub fn parse(table: &toml::Table) -> Result<Vec<Budget>, (String, String)> {
    table
        .iter()
        .map(|(key, value)| budget(key, value).map_err(|m| (key.clone(), m)))
        .collect()
}

fn budget(key: &str, value: &toml::Value) -> Result<Budget, String> {
    let mut b = Budget {
        section: key.to_owned(),
        path: gate::parse_path(key),
        cycles: None,
        mean_cycles: None,
        instructions: None,
    };
    if key.trim().is_empty() {
        return Err("a section name or path (e.g. \"ato_kernel_fir\" or \"8/1\")".into());
    }
    match value {
        toml::Value::Integer(_) => b.cycles = Some(whole(value)?),
        toml::Value::Table(limits) => {
            for (metric, v) in limits {
                match metric.as_str() {
                    "cycles" => b.cycles = Some(whole(v)?),
                    "instructions" => b.instructions = Some(whole(v)?),
                    "mean_cycles" => b.mean_cycles = Some(positive(v)?),
                    other => {
                        return Err(format!(
                            "unknown limit `{other}`: expected cycles, mean_cycles or instructions"
                        ))
                    }
                }
            }
            if b.cycles.is_none() && b.mean_cycles.is_none() && b.instructions.is_none() {
                return Err("an empty table: give cycles, mean_cycles or instructions".into());
            }
        }
        _ => return Err(
            "expected total cycles (an integer) or a table of cycles, mean_cycles, instructions"
                .into(),
        ),
    }
    Ok(b)
}

fn whole(v: &toml::Value) -> Result<u64, String> {
    v.as_integer()
        .and_then(|i| u64::try_from(i).ok())
        .ok_or_else(|| format!("{v}: expected a whole number of at least 0"))
}

fn positive(v: &toml::Value) -> Result<f64, String> {
    let x = v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
    x.filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| format!("{v}: expected a number of at least 0"))
}

/// One limit of a budget, judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetCheck {
    /// `cycles`, `mean_cycles` or `instructions`.
    pub metric: String,
    #[serde(serialize_with = "number")]
    pub limit: f64,
    /// What the covered traces measured (none when none ran).
    #[serde(serialize_with = "optional")]
    pub value: Option<f64>,
    pub passed: bool,
}

fn optional<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => number(v, s),
        None => s.serialize_none(),
    }
}

/// A budget, judged against an entry's sections.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetResult {
    /// The key as the manifest writes it.
    pub section: String,
    /// The traces it covers (empty when no such section ran).
    pub traces: Vec<Vec<u16>>,
    pub checks: Vec<BudgetCheck>,
    pub passed: bool,
}

impl BudgetResult {
    /// Why it failed, with the numbers (`None` when it passed).
    pub fn failure(&self) -> Option<String> {
        if self.passed {
            return None;
        }
        if self.traces.is_empty() {
            return Some(format!(
                "budget `{}`: no section of this name or path ran",
                self.section
            ));
        }
        let over: Vec<String> = self
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| {
                let value = c.value.unwrap_or(0.0);
                let percent = if c.limit > 0.0 {
                    format!(" ({:+.1}%)", (value - c.limit) / c.limit * 100.0)
                } else {
                    String::new()
                };
                format!(
                    "{} {} > {}{percent}",
                    c.metric,
                    arpsim::tools::number(round(value)),
                    arpsim::tools::number(c.limit)
                )
            })
            .collect();
        Some(format!("budget `{}`: {}", self.section, over.join(", ")))
    }
}

fn round(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// What a budget reads of a section trace of an entry.
#[derive(Debug, Clone, Copy)]
pub struct Traced<'a> {
    pub path: &'a [u16],
    /// The innermost section's name.
    pub name: Option<&'a str>,
    pub count: u64,
    pub cycles: u64,
    pub instructions: u64,
}

/// Whether `s` is a trace `b` covers: its path, or its innermost name.
fn covers(b: &Budget, s: &Traced) -> bool {
    match &b.path {
        Some(path) => s.path == path.as_slice(),
        None => s.name == Some(b.section.as_str()),
    }
}

/// Each budget judged against `sections` (an entry's).
pub fn judge(budgets: &[Budget], sections: &[Traced]) -> Vec<BudgetResult> {
    budgets
        .iter()
        .map(|b| {
            let covered: Vec<&Traced> = sections.iter().filter(|s| covers(b, s)).collect();
            let ran = !covered.is_empty();
            let cycles: u64 = covered.iter().map(|s| s.cycles).sum();
            let calls: u64 = covered.iter().map(|s| s.count).sum();
            let instructions: u64 = covered.iter().map(|s| s.instructions).sum();
            let mean = cycles as f64 / calls.max(1) as f64;
            let check = |metric: &str, limit: f64, value: f64| BudgetCheck {
                metric: metric.to_owned(),
                limit,
                value: ran.then_some(value),
                passed: ran && value <= limit,
            };
            let mut checks = Vec::new();
            if let Some(l) = b.cycles {
                checks.push(check("cycles", l as f64, cycles as f64));
            }
            if let Some(l) = b.mean_cycles {
                checks.push(check("mean_cycles", l, mean));
            }
            if let Some(l) = b.instructions {
                checks.push(check("instructions", l as f64, instructions as f64));
            }
            BudgetResult {
                section: b.section.clone(),
                traces: covered.iter().map(|s| s.path.to_vec()).collect(),
                passed: ran && checks.iter().all(|c| c.passed),
                checks,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse::<toml::Table>().unwrap()["budget"]
            .as_table()
            .unwrap()
            .clone()
    }

    fn section<'a>(path: &'a [u16], name: &'a str, count: u64, cycles: u64) -> Traced<'a> {
        Traced {
            path,
            name: Some(name),
            count,
            cycles,
            instructions: cycles / 2,
        }
    }

    #[test]
    fn budgets_parse_numbers_and_tables() {
        let b = parse(&table(
            "budget = { \"ato_kernel_fir\" = 20000, \"8/1\" = { mean_cycles = 4500, instructions = 9 } }",
        ))
        .unwrap();
        assert_eq!(b.len(), 2);
        let fir = b.iter().find(|b| b.section == "ato_kernel_fir").unwrap();
        assert_eq!((fir.cycles, fir.path.as_ref()), (Some(20000), None));
        let path = b.iter().find(|b| b.section == "8/1").unwrap();
        assert_eq!(path.path, Some(vec![8, 1]));
        assert_eq!(
            (path.mean_cycles, path.instructions),
            (Some(4500.0), Some(9))
        );
        for (bad, why) in [
            ("budget = { k = -1 }", "at least 0"),
            ("budget = { k = \"x\" }", "expected total cycles"),
            ("budget = { k = { cylces = 1 } }", "unknown limit `cylces`"),
            ("budget = { k = {} }", "an empty table"),
            ("budget = { k = { mean_cycles = nan } }", "at least 0"),
        ] {
            let (key, e) = parse(&table(bad)).unwrap_err();
            assert_eq!(key, "k");
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn budgets_pass_within_and_fail_past_their_limits_with_the_numbers() {
        let sections = [
            section(&[8], "main (fir.c:70)", 1, 40000),
            section(&[8, 1], "ato_kernel_fir", 2, 29592),
        ];
        let b = parse(&table(
            "budget = { ato_kernel_fir = 29592, \"8 > 1\" = { mean_cycles = 14000 }, ato_kernel_iir = 1 }",
        ))
        .unwrap();
        let r = judge(&b, &sections);
        let by = |k: &str| r.iter().find(|r| r.section == k).unwrap();
        assert!(by("ato_kernel_fir").passed);
        assert_eq!(by("ato_kernel_fir").traces, [vec![8, 1]]);
        let mean = by("8 > 1");
        assert!(!mean.passed);
        assert_eq!(
            mean.failure().unwrap(),
            "budget `8 > 1`: mean_cycles 14796 > 14000 (+5.7%)"
        );
        let missing = by("ato_kernel_iir");
        assert!(!missing.passed && missing.traces.is_empty());
        assert!(missing
            .failure()
            .unwrap()
            .contains("no section of this name or path ran"));
        let json = serde_json::to_string(&mean.checks[0]).unwrap();
        assert_eq!(
            json,
            "{\"metric\":\"mean_cycles\",\"limit\":14000,\"value\":14796,\"passed\":false}"
        );
    }
}
