//! Output management of Table 1: LaOutScr (aligned table), LaOutAscii
//! (CSV), JSON, and the bottleneck ranking.

use crate::eval::Breakdown;
use crate::runtime::RunResults;
use crate::value::{format_number, Value};
use std::fmt::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
    Json,
}

fn time_text(t: Option<f64>) -> String {
    match t {
        Some(t) => format!("{t:.9}"),
        None => "exit".into(),
    }
}

fn cell(v: &Value) -> String {
    v.to_string()
}

pub fn render(results: &RunResults, format: Format) -> String {
    let mut header: Vec<String> = results.variables.clone();
    header.push("time_s".into());
    let rows: Vec<Vec<String>> = results
        .points
        .iter()
        .map(|p| {
            let mut r: Vec<String> = p.point.iter().map(|(_, v)| cell(v)).collect();
            r.push(time_text(p.time));
            r
        })
        .collect();
    match format {
        Format::Table => {
            let mut widths: Vec<usize> = header.iter().map(String::len).collect();
            for r in &rows {
                for (w, c) in widths.iter_mut().zip(r) {
                    *w = (*w).max(c.len());
                }
            }
            let mut s = String::new();
            let line = |cells: &[String]| -> String {
                cells
                    .iter()
                    .zip(&widths)
                    .map(|(c, w)| format!("{c:>w$}"))
                    .collect::<Vec<_>>()
                    .join("  ")
            };
            let _ = writeln!(s, "{}", line(&header));
            for r in &rows {
                let _ = writeln!(s, "{}", line(r));
            }
            s
        }
        Format::Csv => {
            let mut s = header.join(",");
            s.push('\n');
            for r in &rows {
                let quoted: Vec<String> = r
                    .iter()
                    .map(|c| {
                        if c.contains([',', '"']) {
                            format!("\"{}\"", c.replace('"', "\"\""))
                        } else {
                            c.clone()
                        }
                    })
                    .collect();
                s.push_str(&quoted.join(","));
                s.push('\n');
            }
            s
        }
        Format::Json => {
            let points: Vec<serde_json::Value> = results
                .points
                .iter()
                .map(|p| {
                    let mut m = serde_json::Map::new();
                    for (k, v) in &p.point {
                        let jv = match v {
                            Value::Num(n) => serde_json::json!(n),
                            other => serde_json::json!(other.to_string()),
                        };
                        m.insert(k.clone(), jv);
                    }
                    m.insert(
                        "time_s".into(),
                        p.time
                            .map_or(serde_json::Value::Null, |t| serde_json::json!(t)),
                    );
                    if !p.printed.is_empty() {
                        m.insert("printed".into(), serde_json::json!(p.printed));
                    }
                    serde_json::Value::Object(m)
                })
                .collect();
            let doc = serde_json::json!({ "variables": results.variables, "points": points });
            let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
            s.push('\n');
            s
        }
    }
}

/// Bottleneck analysis (section 6): each table ranked, largest first,
/// summed over all points of the run.
pub fn render_breakdown(results: &RunResults) -> String {
    let mut total = Breakdown::default();
    for p in &results.points {
        total.merge(&p.breakdown);
    }
    let mut s = String::new();
    for (title, map) in [
        ("object (subtask and template time)", &total.by_object),
        ("procedure (cflow, inclusive)", &total.by_procedure),
        ("resource usage (type and type.element)", &total.by_resource),
        ("device (step time)", &total.by_device),
    ] {
        let _ = writeln!(s, "by {title}:");
        let ranked = Breakdown::ranked(map);
        if ranked.is_empty() {
            let _ = writeln!(s, "  (none)");
        }
        for (k, v) in ranked {
            let _ = writeln!(s, "  {:>14}  {k}", format!("{v:.6e}"));
        }
    }
    s
}

/// Procedure calls, option values and step times, per point.
pub fn render_trace(results: &RunResults) -> String {
    let mut s = String::new();
    for p in &results.points {
        let label: Vec<String> = p.point.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(
            s,
            "== point {}",
            if label.is_empty() {
                "(defaults)".into()
            } else {
                label.join(" ")
            }
        );
        for l in &p.trace {
            let _ = writeln!(s, "{l}");
        }
        let _ = writeln!(s, "== time {}", p.time.map_or("exit".into(), format_number));
    }
    s
}

/// LaVarList: the application's interface variables with group, type and
/// default as written.
pub fn render_vars(prog: &crate::program::Program) -> String {
    let rows: Vec<[String; 4]> = prog
        .interface_vars()
        .iter()
        .map(|v| {
            [
                v.name.clone(),
                v.group.clone(),
                v.ty.name().to_string(),
                v.init_text.clone().unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let header = ["name", "group", "type", "default"].map(String::from);
    let mut widths = header.clone().map(|h| h.len());
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let mut s = String::new();
    for r in std::iter::once(&header).chain(rows.iter()) {
        let cells: Vec<String> = r
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(s, "{}", cells.join("  ").trim_end());
    }
    s
}
