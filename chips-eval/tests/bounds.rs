//! Bounded memory, time and numbers: hostile models, sweeps and hardware
//! files give clear errors or results, never a crash. These run on the
//! default test thread stack (2 MiB).

use chips_eval::{HardwareModel, LoadOptions, Program, RunOptions, Setting};
use std::path::{Path, PathBuf};
use support::require;

mod support;

const TINY_HW: &str = "name = \"tiny\"\n\
[parameters]\n\
Nproc = 1\n\
clock = 1.0e6\n\
[costs.hllc]\n\
unit = \"seconds\"\n\
elements = { IASG = 1.0 }\n";

/// Writes `app.la` with `source` into a fresh folder.
fn write_app(source: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.la");
    std::fs::write(&path, source).unwrap();
    (dir, path)
}

fn load(path: &Path, hw: Option<&HardwareModel>) -> Result<Program, chips_eval::Error> {
    Program::load(path, &LoadOptions::default(), hw)
}

fn tiny_hw() -> HardwareModel {
    HardwareModel::from_toml("tiny.toml", TINY_HW).unwrap()
}

/// `1+1+...+1` with `terms` ones.
fn long_sum(terms: usize) -> String {
    vec!["1"; terms].join("+")
}

fn app_returning(expression: &str) -> String {
    format!(
        "application a {{\nvar dtdp numeric: x = {expression};\noption {{ }}\n\
         proc exec init {{ return {expression}; }}\n}}\n"
    )
}

#[test]
fn a_sum_of_100000_terms_runs_checks_and_lists() {
    let (_dir, path) = write_app(&app_returning(&long_sum(100_000)));
    let hw = tiny_hw();
    // `check` and `run` paths: load with the hardware model and evaluate.
    let prog = load(&path, Some(&hw)).unwrap();
    let results = chips_eval::run(&prog, &hw, &[], RunOptions::default()).unwrap();
    assert_eq!(results.points[0].time, Some(100_000.0));
    // `vars` path: load without hardware and list the interface.
    let prog = load(&path, None).unwrap();
    let listing = chips_eval::output::render_vars(&prog);
    let row = listing.lines().find(|l| l.starts_with("x ")).unwrap();
    // The default as written, cut to 80 characters with an ellipsis.
    assert!(row.ends_with(&format!("{}…", "1+".repeat(40))), "{row}");
}

#[test]
fn long_mixed_chains_keep_precedence() {
    // 2*3 + 2*3 + ... - 1: products inside a sum, every operator level long.
    let terms = vec!["2*3*1/1"; 50_000].join("+");
    let (_dir, path) = write_app(&app_returning(&format!("{terms} - 1 < 1e9 == 1")));
    let hw = tiny_hw();
    let prog = load(&path, Some(&hw)).unwrap();
    let results = chips_eval::run(&prog, &hw, &[], RunOptions::default()).unwrap();
    assert_eq!(results.points[0].time, Some(1.0));
}

#[test]
fn a_one_megabyte_expression_is_a_result_not_a_crash() {
    let (_dir, path) = write_app(&app_returning(&long_sum(500_000)));
    let hw = tiny_hw();
    let prog = load(&path, Some(&hw)).unwrap();
    let results = chips_eval::run(&prog, &hw, &[], RunOptions::default()).unwrap();
    assert_eq!(results.points[0].time, Some(500_000.0));
}

fn setting(spec: &str) -> Setting {
    Setting::parse(spec).unwrap()
}

#[test]
fn a_sweep_larger_than_max_points_is_refused_before_any_evaluation() {
    // Evaluating any point would fail with a division by zero.
    let (_dir, path) = write_app(
        "application a {\nvar dtdp numeric: n = 1, m = 1;\noption { }\n\
         proc exec init { return 1 / 0; }\n}\n",
    );
    let hw = tiny_hw();
    let prog = load(&path, Some(&hw)).unwrap();
    let sweep = [setting("n=1..100000"), setting("m=1..100000")];
    let err = chips_eval::run(&prog, &hw, &sweep, RunOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("100000 × 100000 = 10000000000 points")
            && err.contains("--max-points 1000000"),
        "{err}"
    );
    let small = RunOptions {
        max_points: 4,
        ..RunOptions::default()
    };
    let err = chips_eval::run(&prog, &hw, &[setting("n=1..5")], small)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("5 = 5 points, more than --max-points 4"),
        "{err}"
    );
}

#[test]
fn the_sweep_size_is_computed_without_overflow() {
    let big = setting("n=1..100000");
    let sweep = vec![big; 5];
    let err = chips_eval::sweep::sweep_size(&sweep, u64::MAX)
        .unwrap_err()
        .to_string();
    assert!(err.contains("= more than 2^64 points"), "{err}");
    let ok = [setting("n=1..10"), setting("m=1,2,3")];
    assert_eq!(chips_eval::sweep::sweep_size(&ok, 30).unwrap(), 30);
}

#[test]
fn points_stream_to_the_writer_one_at_a_time() {
    use chips_eval::output::{Format, PointWriter};
    let (_dir, path) = write_app(
        "application a {\nvar dtdp numeric: n = 1;\noption { }\n\
         proc exec init { return 2 * n; }\n}\n",
    );
    let hw = tiny_hw();
    let prog = load(&path, Some(&hw)).unwrap();
    let sweep = [setting("n=1..3")];
    let variables = vec!["n".to_string()];
    let mut csv = PointWriter::new(Vec::new(), Format::Csv, &variables);
    let mut json = PointWriter::new(Vec::new(), Format::Json, &variables);
    csv.begin().unwrap();
    json.begin().unwrap();
    let mut seen = 0;
    chips_eval::runtime::run_each(&prog, &hw, &sweep, RunOptions::default(), |p| {
        seen += 1;
        csv.point(&p).unwrap();
        json.point(&p).unwrap();
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, 3);
    let csv = String::from_utf8(csv.finish().unwrap()).unwrap();
    assert_eq!(
        csv,
        "n,time_s\n1,2.000000000\n2,4.000000000\n3,6.000000000\n"
    );
    let json: serde_json::Value = serde_json::from_slice(&json.finish().unwrap()).unwrap();
    assert_eq!(json["variables"], serde_json::json!(["n"]));
    assert_eq!(json["points"][2]["time_s"], serde_json::json!(6.0));
    // The collecting API gives the same table.
    let all = chips_eval::run(&prog, &hw, &sweep, RunOptions::default()).unwrap();
    assert_eq!(chips_eval::output::render(&all, Format::Csv), csv);
}

// ------------------------------------------------- non-finite and negative

fn hw_error(toml: &str) -> String {
    HardwareModel::from_toml("h.toml", toml)
        .unwrap_err()
        .to_string()
}

const PARAMS: &str = "name = \"h\"\n[parameters]\nNproc = 1\nclock = 1.0e6\n";

/// An inpcom device whose last lines are `tail` (line 10 onwards).
fn inpcom(tail: &str) -> String {
    format!(
        "{PARAMS}[devices.net]\nkind = \"inpcom\"\ntopology = \"ring\"\n\
         switching = \"cut_through\"\nper_hop_s = 0.0\n{tail}\n"
    )
}

#[test]
fn non_finite_or_negative_hardware_figures_are_refused_at_their_field() {
    let cases = [
        (
            inpcom("bandwidth_bytes_per_s = nan\nstartup_s = 0.0"),
            "h.toml:10:25: devices.net.bandwidth_bytes_per_s must be a finite number > 0, found NaN",
        ),
        (
            inpcom("bandwidth_bytes_per_s = 1.0\nstartup_s = nan"),
            "h.toml:11:13: devices.net.startup_s must be a finite, non-negative number, found NaN",
        ),
        (
            "name = \"h\"\n[parameters]\nNproc = 1\nclock = nan\n".to_string(),
            "h.toml:4:9: parameters.clock must be a finite number > 0, found NaN",
        ),
        (
            format!("{PARAMS}[costs.time]\nunit = \"seconds\"\nscale = -1.0\n"),
            "h.toml:7:9: costs.time.scale must be a finite, non-negative number, found -1",
        ),
        (
            format!("{PARAMS}[costs.hllc]\nunit = \"cycles\"\nelements = {{ IASG = inf }}\n"),
            "h.toml:7:21: costs.hllc.elements.IASG must be a finite, non-negative number, found inf",
        ),
        (
            format!("{PARAMS}latency = -2.0\n"),
            "h.toml:5:11: parameters.latency must be a finite, non-negative number, found -2",
        ),
    ];
    for (toml, expected) in cases {
        assert_eq!(hw_error(&toml), expected, "{toml}");
    }
}

#[test]
fn nproc_must_be_an_integer_of_at_least_one() {
    for (value, shown) in [("0", "0"), ("2.5", "2.5")] {
        let toml = format!("name = \"h\"\n[parameters]\nNproc = {value}\nclock = 1.0\n");
        assert_eq!(
            hw_error(&toml),
            format!("h.toml:3:9: parameters.Nproc must be an integer >= 1, found {shown}")
        );
    }
}

#[test]
fn a_device_field_of_the_wrong_type_is_reported_at_the_field() {
    let err = hw_error(&inpcom("bandwidth_bytes_per_s = \"fast\"\nstartup_s = 0.0"));
    assert!(err.contains("line 10, column 25"), "{err}");
    assert!(
        !err.contains("[devices.net]"),
        "points at the header: {err}"
    );
    let err = hw_error(&format!(
        "{PARAMS}[devices.cpu]\nkind = \"cpu\"\nstartup_s = 1.0\n"
    ));
    assert_eq!(
        err,
        "h.toml:7:13: devices.cpu.startup_s: only an `inpcom` device has this field"
    );
    let err = hw_error(&inpcom("startup_s = 0.0"));
    assert!(
        err.ends_with("an `inpcom` device needs `bandwidth_bytes_per_s`"),
        "{err}"
    );
}

fn run_error(source: &str) -> String {
    let (_dir, path) = write_app(source);
    let hw = tiny_hw();
    let prog = load(&path, Some(&hw)).unwrap();
    let err = chips_eval::run(&prog, &hw, &[], RunOptions::default()).unwrap_err();
    err.to_string()
        .replace(&path.display().to_string(), "app.la")
}

#[test]
fn negative_resource_usage_is_an_error_naming_the_element_and_line() {
    let err = run_error(
        "application a {\noption { }\nproc cflow T {\n  compute <is hllc, -5*IASG>;\n}\n\
         proc exec init { return T(); }\n}\n",
    );
    assert_eq!(
        err,
        "app.la:4:3: evaluation error: resource usage `hllc.IASG` is -5: \
         a count of resources must not be negative"
    );
}

#[test]
fn a_literal_that_overflows_is_an_error_like_an_overflowing_product() {
    let (_dir, path) = write_app(&app_returning("2 + 1e999"));
    let err = load(&path, None).unwrap_err().to_string();
    let file = path.display().to_string();
    // Line 2 is the `var` line, where the literal first appears.
    assert!(
        err.contains(&format!("{file}:2:27: error: number `1e999` is too large")),
        "{err}"
    );
    let (_dir, path) = write_app(&app_returning("1.8e308 * 10"));
    let Err(chips_eval::Error::Diagnostics(d)) = load(&path, None) else {
        panic!("1.8e308 is above f64::MAX, so it must not load")
    };
    assert_eq!(d.0.len(), 2, "one per use, no follow-up: {d}");
    let product = run_error(&app_returning("1.7e308 * 10"));
    assert!(product.contains("app.la:2:"), "{product}");
    assert!(product.contains("overflows"), "{product}");
}

// ---------------------------------------------------------------- messages

#[test]
fn a_bad_set_value_is_blamed_on_the_option() {
    let (_dir, path) = write_app(
        "application a {\nvar dtdp numeric: Nproc = 1;\noption { }\n\
         proc exec init { return Nproc; }\n}\n",
    );
    let hw = tiny_hw();
    let prog = load(&path, Some(&hw)).unwrap();
    let err = chips_eval::run(&prog, &hw, &[setting("Nproc=abc")], RunOptions::default())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "--set Nproc=abc: `Nproc` is numeric but is given a string \
         (every value must be a finite number)"
    );
    let long_name = format!("N{}", "x".repeat(500));
    let err = chips_eval::run(
        &prog,
        &hw,
        &[setting(&format!("{long_name}=1"))],
        RunOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with(&format!(
            "--set {}…: not an interface variable",
            &long_name[..80]
        )),
        "{err}"
    );
}

#[test]
fn invalid_utf8_is_one_message_at_the_first_bad_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.la");
    let mut bytes = b"application a {\noption { }\nproc exec init { return 1; } (* caf".to_vec();
    bytes.extend_from_slice(&[0xE9, b' ', b'*', b')', b'\n', b'}', b'\n']);
    std::fs::write(&path, bytes).unwrap();
    let err = load(&path, None).unwrap_err();
    let chips_eval::Error::Diagnostics(d) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(d.0.len(), 1, "{err}");
    assert_eq!((d.0[0].span.line, d.0[0].span.col), (3, 36));
    assert_eq!(
        d.0[0].message,
        "invalid UTF-8: byte 0xE9 at byte offset 62 (sources must be UTF-8 text)"
    );
    assert!(
        std::error::Error::source(&err).is_none(),
        "no cause to repeat it"
    );
}

#[test]
fn a_table_cell_wider_than_65535_characters_is_padded_not_a_panic() {
    use chips_eval::output::{render, Format};
    use chips_eval::runtime::{PointResult, RunResults};
    use chips_eval::{Breakdown, Value};
    let long = "v".repeat(70_000);
    let point = |value: &str| PointResult {
        point: vec![("s".into(), Value::Str(value.into()))],
        time: Some(1.0),
        printed: vec![],
        trace: vec![],
        breakdown: Breakdown::default(),
    };
    let results = RunResults {
        variables: vec!["s".into()],
        points: vec![point(&long), point("w")],
    };
    let table = render(&results, Format::Table);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], format!("{}s       time_s", " ".repeat(69_999)));
    assert_eq!(lines[1], format!("{long}  1.000000000"));
    assert_eq!(lines[2], format!("{}w  1.000000000", " ".repeat(69_999)));
}

#[test]
fn twenty_thousand_initialised_variables_list_their_defaults() {
    // Each default's text was found by scanning from the start of the file
    // (177 s for this 300 KB file in a debug build); now by byte offset.
    let items: Vec<String> = (0..20_000).map(|i| format!("v{i} = {i} + 1")).collect();
    let (_dir, path) = write_app(&format!(
        "application a {{ var dtdp numeric: {}; option {{ }} proc exec init {{ return 1; }} }}",
        items.join(", ")
    ));
    let listing = chips_eval::output::render_vars(&load(&path, None).unwrap());
    assert_eq!(listing.lines().count(), 20_001);
    let last = listing.lines().last().unwrap();
    assert_eq!(last, "v19999  dtdp   numeric  19999 + 1");
}

#[test]
fn the_deepest_nesting_the_parser_accepts_evaluates() {
    // `-(1+-(1+-(1+ ... )))`: every level adds a unary minus, a parenthesis
    // and a chain, the most stack per level the grammar allows.
    let depth = 99;
    let expression = format!("{}1{}", "-(1+".repeat(depth), ")".repeat(depth));
    let (_dir, path) = write_app(&app_returning(&format!("{expression} + 100")));
    let hw = tiny_hw();
    let prog = load(&path, Some(&hw)).unwrap();
    let results = chips_eval::run(&prog, &hw, &[], RunOptions::default()).unwrap();
    // Innermost -(1+1) = -2, then -(1 + -2) = 1, alternating: odd depth, -2.
    assert_eq!(results.points[0].time, Some(98.0));
    // One level more is a diagnostic, not a crash.
    let deeper = format!("{}1{}", "-(1+".repeat(depth + 1), ")".repeat(depth + 1));
    let (_dir, path) = write_app(&app_returning(&deeper));
    let err = load(&path, Some(&hw)).unwrap_err().to_string();
    assert!(err.contains("nesting deeper than 200 levels"), "{err}");
}

#[test]
fn deep_expressions_in_deep_recursion_do_not_overflow_the_stack() {
    // 62 nested calls (the call depth limit is 64), each returning an
    // expression nested 98 levels deep around the next call: the evaluator
    // grows its stack on the heap rather than aborting.
    let depth = 98;
    let expression = format!("{}f(n-1){}", "-(1+".repeat(depth), ")".repeat(depth));
    let (_dir, path) = write_app(&format!(
        "application a {{ option {{ }}\n\
         proc exec f var n; {{ if n < 1 then return 0; return {expression}; }}\n\
         proc exec init {{ return f(62) + 1000; }} }}"
    ));
    let hw = tiny_hw();
    let prog = load(&path, Some(&hw)).unwrap();
    let results = chips_eval::run(&prog, &hw, &[], RunOptions::default()).unwrap();
    // An even number of `-(1+x)` levels gives x back: f(n) = f(n-1) = 0.
    assert_eq!(results.points[0].time, Some(1000.0));
}

#[test]
fn an_unreadable_model_is_one_message_not_a_repeated_cause() {
    let dir = tempfile::tempdir().unwrap();
    let err = load(&dir.path().join("missing.la"), None).unwrap_err();
    assert!(std::error::Error::source(&err).is_none(), "{err}");
    let message = err.to_string();
    assert!(
        message.ends_with("missing.la: No such file or directory (os error 2)"),
        "{message}"
    );
}

/// issue 30, N18: a hardware file or a model on an endless device (a
/// private /dev/zero in the scratch folder) stops at its 16 MiB cap.
#[test]
#[cfg_attr(
    not(has_mknod),
    ignore = "needs CAP_MKNOD (root) to make a device node in its scratch folder"
)]
fn endless_model_and_hardware_files_stop_at_their_cap() {
    let dir = tempfile::tempdir().unwrap();
    let zero = dir.path().join("zero");
    let made = std::process::Command::new("mknod")
        .arg(&zero)
        .args(["c", "1", "5"])
        .status();
    require(
        "CAP_MKNOD (root) to make a device node with mknod",
        made.is_ok_and(|s| s.success()),
    );
    let e = HardwareModel::load(&zero).unwrap_err().to_string();
    assert!(e.contains("larger than 16 MiB"), "{e}");
    let e = load(&zero, None).expect_err("refused").to_string();
    assert!(e.contains("larger than 16 MiB"), "{e}");
}

/// `n` vector variables, `d` of 10^7 elements (the largest `dim`) and
/// `copies` assignments of it, then `redims` more `dim`s of `d`.
fn vector_model(copies: usize, redims: usize) -> String {
    let vars: Vec<String> = (0..copies.max(1)).map(|i| format!("v{i}")).collect();
    let assignments: String = (0..copies).map(|i| format!("  v{i} = d;\n")).collect();
    let redim = "  dim d, 10000000;\n".repeat(redims);
    format!(
        "application app {{\nvar scope vector: d, {};\noption {{ }}\nproc exec init {{\n  \
         dim d, 10000000;\n{assignments}{redim}  return 0;\n}}\n}}\n",
        vars.join(", ")
    )
}

/// Issue 43: copies of a 10^7-element vector (40 of them held 3.1 GB from
/// a 700-byte model) stop at `MAX_VECTOR_ELEMENTS` held at once, located;
/// a vector replaced or freed no longer counts.
#[test]
fn vectors_held_by_the_variables_are_capped() {
    let hw = tiny_hw();
    let (_dir, path) = write_app(&vector_model(40, 0));
    let prog = load(&path, Some(&hw)).unwrap();
    let err = chips_eval::run(&prog, &hw, &[], RunOptions::default())
        .err()
        .map(|e| e.to_string())
        .expect("refused");
    assert!(err.contains("at most 50000000"), "{err}");
    assert!(err.contains("app.la:10:"), "the fifth copy: {err}");
    // the same vector made again and again, and four copies: within
    let (_dir, path) = write_app(&vector_model(4, 20));
    let prog = load(&path, Some(&hw)).unwrap();
    chips_eval::run(&prog, &hw, &[], RunOptions::default()).unwrap();
}
