//! Export of measurements in Extra-P's JSON Lines input format (for
//! `sim-host arp export-extrap FILE... -o out.jsonl`).
//!
//! Format, from Extra-P's `docs/file-formats.md` ("JSON Lines format",
//! github.com/extra-p/extrap): each line is one JSON object describing
//! one measurement, with at least `"params"` (an object mapping each
//! parameter name to its value) and `"value"` (a number or a list of
//! numbers, the repetitions), and optionally `"callpath"` and `"metric"`:
//!
//! ```text
//! {"params": {"n": 1024}, "callpath": "main->ato_kernel_sort", "metric": "cycles", "value": 30920.5}
//! ```
//!
//! Call paths are written as Extra-P's text format writes them, section
//! names joined by `->`, outermost first (the section stack of the trace,
//! DESIGN.md decision 6). One line per run, call path and metric: metric
//! `cycles` (or the name given) is the mean of the measured callback set
//! per execution; with `counts`, metric `executions` is the number of
//! executions.

use crate::measure::{self, MeasureError, RunSpec, SectionNames};
use std::collections::BTreeSet;
use std::io::Write;

/// What [`export`] writes.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// Metric name of the mean value per execution (default `cycles`).
    pub metric: String,
    /// Callback set to export (default 0).
    pub value_set: usize,
    /// Also write metric `executions` (executions per run and call path).
    pub counts: bool,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            metric: "cycles".into(),
            value_set: 0,
            counts: false,
        }
    }
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Measure(#[from] MeasureError),
    #[error("{0}")]
    Usage(String),
    #[error("writing the export: {0}")]
    Io(#[from] std::io::Error),
}

/// Writes the measurements of `runs` as Extra-P JSON Lines to `out`;
/// returns the number of lines written.
///
/// Every run must give the same parameter names (`n=1024:RUN.arp`, see
/// [`RunSpec::parse`]), at least one: Extra-P models a metric as a
/// function of them. Section names come from `names` (ids in decimal
/// where unnamed); a name containing `->` is refused (it would split the
/// call path).
pub fn export(
    runs: &[RunSpec],
    names: &SectionNames,
    options: &ExportOptions,
    out: &mut dyn Write,
) -> Result<usize, ExportError> {
    if runs.is_empty() {
        return Err(ExportError::Usage("no run to export".into()));
    }
    let first: BTreeSet<&String> = runs[0].params.keys().collect();
    if first.is_empty() {
        let given = runs[0].path.display().to_string();
        // `=:a.arp` or `1n=2:a.arp`: parameters that are not NAME=VALUE,
        // suggested with the file alone (not "n=1024:=:a.arp"; issue 30, N06)
        if let Some((head, file)) = given.split_once(':').filter(|(h, _)| h.contains('=')) {
            return Err(ExportError::Usage(format!(
                "{given}: `{head}` is not NAME=VALUE (a name is a letter or `_`, then letters, digits or `_`); \
                 Extra-P needs parameter values, e.g. n=1024:{file}"
            )));
        }
        return Err(ExportError::Usage(format!(
            "{given}: no parameter values; Extra-P needs them (write NAME=VALUE:FILE, e.g. n=1024:{given})"
        )));
    }
    for r in runs {
        let these: BTreeSet<&String> = r.params.keys().collect();
        if these != first {
            return Err(ExportError::Usage(format!(
                "{} has parameters {{{}}} but {} has {{{}}}: every run must give the same parameters",
                r.path.display(),
                these.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
                runs[0].path.display(),
                first.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            )));
        }
    }
    if options.metric.is_empty() {
        return Err(ExportError::Usage("the metric needs a name".into()));
    }
    let mut lines = 0;
    for r in runs {
        let m = measure::read_run(r, options.value_set)?;
        let params: serde_json::Map<String, serde_json::Value> = r
            .params
            .iter()
            .map(|(k, v)| (k.clone(), number(*v)))
            .collect();
        for p in &m.paths {
            let mut parts = Vec::with_capacity(p.path.len());
            for sid in &p.path {
                let name = names.name(*sid);
                if name.contains("->") {
                    return Err(ExportError::Usage(format!(
                        "section {sid} is named {}, which contains `->`, Extra-P's call-path separator",
                        crate::text::quote(&name)
                    )));
                }
                parts.push(name);
            }
            let callpath = parts.join("->");
            let mut write = |metric: &str, value: serde_json::Value| -> std::io::Result<()> {
                let line = serde_json::json!({
                    "params": params,
                    "callpath": callpath,
                    "metric": metric,
                    "value": value,
                });
                writeln!(out, "{line}")
            };
            write(&options.metric, number(p.mean))?;
            lines += 1;
            if options.counts {
                write("executions", serde_json::Value::from(p.count))?;
                lines += 1;
            }
        }
    }
    Ok(lines)
}

/// An integral value as a JSON integer (`1024`, not `1024.0`), else a float.
fn number(v: f64) -> serde_json::Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        serde_json::Value::from(v as i64)
    } else {
        serde_json::Value::from(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    const H: &str = "# Atomium record and playback data - format version 1.1.\n";

    #[test]
    fn writes_one_line_per_run_call_path_and_metric() {
        let dir = tempfile::tempdir().unwrap();
        // Run n=16: kernel 1 under 8 (10 and 30) and under 9 (20).
        let a = file(
            dir.path(),
            "a.arp",
            &format!("{H}0 1 1 7\n3\n2 0 8@0 1@0: 10;\n2 1 1@1: 30;\n2 0 9@0 1@0: 20;\n"),
        );
        // Run n=32, average mode: 4 executions of 8 1, mean 50.5.
        let b = file(
            dir.path(),
            "b.arp",
            &format!("{H}0 0 1 11\n1\n2 0 8 1: 4 50.5;\n"),
        );
        let mut names = SectionNames::default();
        names.add(8, "main", "t").unwrap();
        names.add(1, "ato_kernel_sort", "t").unwrap();
        let runs = [
            RunSpec::parse(&format!("n=16:{}", a.display())).unwrap(),
            RunSpec::parse(&format!("n=32:{}", b.display())).unwrap(),
        ];
        let mut out = Vec::new();
        let opts = ExportOptions {
            counts: true,
            ..Default::default()
        };
        let n = export(&runs, &names, &opts, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(n, 6);
        assert_eq!(lines.len(), 6);
        assert_eq!(
            lines[0],
            serde_json::json!({"params": {"n": 16}, "callpath": "main->ato_kernel_sort", "metric": "cycles", "value": 20})
        );
        assert_eq!(
            lines[1],
            serde_json::json!({"params": {"n": 16}, "callpath": "main->ato_kernel_sort", "metric": "executions", "value": 2})
        );
        assert_eq!(lines[2]["callpath"], "9->ato_kernel_sort");
        assert_eq!(lines[4]["value"], 50.5);
        assert_eq!(lines[4]["params"]["n"], 32);
    }

    #[test]
    fn runs_without_or_with_different_parameters_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = file(
            dir.path(),
            "a.arp",
            &format!("{H}0 0 1 11\n1\n1 0 1: 4 5;\n"),
        );
        let names = SectionNames::default();
        let mut out = Vec::new();
        let e = export(
            &[RunSpec::new(&a)],
            &names,
            &ExportOptions::default(),
            &mut out,
        )
        .unwrap_err();
        assert!(e.to_string().contains("no parameter values"), "{e}");
        // issue 30, N06: `=:a.arp` suggested "e.g. n=1024:=:a.arp"
        let bad = RunSpec::parse(&format!("=:{}", a.display())).unwrap();
        let e = export(&[bad], &names, &ExportOptions::default(), &mut out)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`=` is not NAME=VALUE"), "{e}");
        assert!(e.ends_with(&format!("e.g. n=1024:{}", a.display())), "{e}");
        let runs = [
            RunSpec::parse(&format!("n=1:{}", a.display())).unwrap(),
            RunSpec::parse(&format!("p=1:{}", a.display())).unwrap(),
        ];
        let e = export(&runs, &names, &ExportOptions::default(), &mut out).unwrap_err();
        assert!(e.to_string().contains("same parameters"), "{e}");
        assert!(out.is_empty());
    }
}
