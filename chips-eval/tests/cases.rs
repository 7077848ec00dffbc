//! Runs every data-driven case in `tests/cases/` (see its README.md).

use chips_eval::{Error, HardwareModel, Limits, LoadOptions, Program, RunOptions, Setting, Value};
use std::path::{Path, PathBuf};

#[derive(Debug)]
enum Claim {
    Time(f64, Vec<String>),
    Exit(Vec<String>),
    Printed(String),
    Error(String),
    Diag(String, u32, u32, String),
}

/// Per-case settings of the run.
#[derive(Default)]
struct CaseOptions {
    budget: Option<u64>,
    search: Vec<String>,
    vectors: Vec<String>,
}

fn parse_expected(path: &Path) -> (Vec<Claim>, CaseOptions) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut claims = Vec::new();
    let mut case = CaseOptions::default();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (kw, rest) = line.split_once(' ').unwrap_or((line, ""));
        let with = |s: &str| -> Vec<String> {
            s.split_once("with ")
                .map(|(_, w)| w.split_whitespace().map(String::from).collect())
                .unwrap_or_default()
        };
        match kw {
            "time" => {
                let v = rest.split_whitespace().next().unwrap().parse().unwrap();
                claims.push(Claim::Time(v, with(rest)));
            }
            "exit" => claims.push(Claim::Exit(with(rest))),
            "printed" => claims.push(Claim::Printed(rest.to_string())),
            "error" => claims.push(Claim::Error(rest.to_string())),
            "budget" => case.budget = Some(rest.parse().unwrap()),
            "search" => case.search.push(rest.to_string()),
            "vectors" => case.vectors.push(rest.to_string()),
            "diag" => {
                let (loc, msg) = rest.split_once(' ').unwrap();
                let parts: Vec<&str> = loc.split(':').collect();
                claims.push(Claim::Diag(
                    parts[0].to_string(),
                    parts[1].parse().unwrap(),
                    parts[2].parse().unwrap(),
                    msg.to_string(),
                ));
            }
            other => panic!("{}: unknown claim `{other}`", path.display()),
        }
    }
    (claims, case)
}

fn run_case(dir: &Path) -> Result<(), String> {
    let root = dir.parent().unwrap();
    let hw_path = if dir.join("hw.toml").exists() {
        dir.join("hw.toml")
    } else {
        root.join("unit.toml")
    };
    let hw = HardwareModel::load(&hw_path).map_err(|e| e.to_string())?;
    let (claims, case) = parse_expected(&dir.join("expected.txt"));
    let load = LoadOptions {
        search_path: case.search.iter().map(|d| dir.join(d)).collect(),
        vector_files: case.vectors.iter().map(|f| dir.join(f)).collect(),
    };
    let loaded = Program::load(&dir.join("app.la"), &load, Some(&hw));
    let opts = RunOptions {
        limits: Limits {
            step_budget: case.budget.unwrap_or(Limits::default().step_budget),
            ..Limits::default()
        },
        ..RunOptions::default()
    };
    let diag_claims: Vec<&Claim> = claims
        .iter()
        .filter(|c| matches!(c, Claim::Diag(..)))
        .collect();
    let prog = match loaded {
        Ok(p) => {
            if !diag_claims.is_empty() {
                return Err("expected diagnostics, but the model loaded".into());
            }
            p
        }
        Err(Error::Diagnostics(d)) => {
            if diag_claims.len() != d.0.len() {
                return Err(format!(
                    "expected {} diagnostics, got:\n{d}",
                    diag_claims.len()
                ));
            }
            for c in diag_claims {
                let Claim::Diag(file, line, col, msg) = c else {
                    unreachable!()
                };
                let found = d.0.iter().any(|x| {
                    x.file.ends_with(file.as_str())
                        && x.span.line == *line
                        && x.span.col == *col
                        && x.message.contains(msg.as_str())
                });
                if !found {
                    return Err(format!(
                        "no diagnostic {file}:{line}:{col} containing `{msg}` in:\n{d}"
                    ));
                }
            }
            return Ok(());
        }
        Err(e) => {
            for c in &claims {
                if let Claim::Error(m) = c {
                    if e.to_string().contains(m.as_str()) {
                        return Ok(());
                    }
                }
            }
            return Err(format!("load failed: {e}"));
        }
    };
    let settings = |with: &[String]| -> Vec<Setting> {
        with.iter().map(|w| Setting::parse(w).unwrap()).collect()
    };
    for c in &claims {
        match c {
            Claim::Time(expected, with) => {
                let r = chips_eval::run(&prog, &hw, &settings(with), opts)
                    .map_err(|e| e.to_string())?;
                let t = r.points[0].time.ok_or("model exited")?;
                if (t - expected).abs() > 1e-9 * expected.abs().max(1.0) {
                    return Err(format!("time {t}, expected {expected} (with {with:?})"));
                }
            }
            Claim::Exit(with) => {
                let r = chips_eval::run(&prog, &hw, &settings(with), opts)
                    .map_err(|e| e.to_string())?;
                if r.points[0].time.is_some() {
                    return Err("expected exit".into());
                }
            }
            Claim::Printed(text) => {
                let r = chips_eval::run(&prog, &hw, &[], opts).map_err(|e| e.to_string())?;
                if !r.points[0].printed.contains(text) {
                    return Err(format!(
                        "printed {:?}, expected {text:?}",
                        r.points[0].printed
                    ));
                }
            }
            Claim::Error(msg) => match chips_eval::run(&prog, &hw, &[], opts) {
                Ok(r) => {
                    return Err(format!(
                        "expected error `{msg}`, got time {:?}",
                        r.points[0].time
                    ))
                }
                Err(e) if e.to_string().contains(msg.as_str()) => {}
                Err(e) => return Err(format!("expected error `{msg}`, got `{e}`")),
            },
            Claim::Diag(..) => {}
        }
    }
    Ok(())
}

#[test]
fn data_driven_cases() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 40, "cases are missing");
    let mut failures = Vec::new();
    for d in &dirs {
        if let Err(e) = run_case(d) {
            failures.push(format!("{}: {e}", d.file_name().unwrap().to_string_lossy()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n\n")
    );
}

#[test]
fn settings_must_name_interface_variables() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let hw = HardwareModel::load(&root.join("unit.toml")).unwrap();
    let prog = Program::load(
        &root.join("nested_loops_with_variables/app.la"),
        &LoadOptions::default(),
        Some(&hw),
    )
    .unwrap();
    let e = chips_eval::run(
        &prog,
        &hw,
        &[Setting::parse("Q=1").unwrap()],
        RunOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("not an interface variable"), "{e}");
    let e = chips_eval::run(
        &prog,
        &hw,
        &[Setting {
            name: "N".into(),
            values: vec![Value::Str("x".into())],
        }],
        RunOptions::default(),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("is numeric but is given a string"),
        "{e}"
    );
}
