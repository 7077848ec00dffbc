//! `sim-host sir validate` and `sim-host sir convert` through the binary,
//! on the fixtures of the APART report's figures (sir/tests/fixtures): the
//! corrected figures pass, the figures with their published typos put back
//! fail with FILE:LINE:COLUMN, and a conversion lists what it lost.

use e2e_tests::{repo_root, scratch, sim_host_bin};
use sim_host::observe::sirgen::sir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixtures(dialect: &str) -> Vec<PathBuf> {
    let dir = repo_root().join("sir/tests/fixtures").join(dialect);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    files.sort();
    files
}

fn fixture(name: &str) -> PathBuf {
    repo_root().join("sir/tests/fixtures/apart").join(name)
}

fn sim_host(args: &[&str], files: &[&Path]) -> Output {
    Command::new(sim_host_bin())
        .args(args)
        .args(files)
        .output()
        .expect("sim-host runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A copy of a corrected fixture with the figure's typo put back:
/// `replace` must change the text.
fn with_typo(dir: &Path, name: &str, find: &str, replace: &str) -> PathBuf {
    let fixed = std::fs::read_to_string(fixture(name)).unwrap();
    assert!(fixed.contains(find), "{name} does not contain {find}");
    let path = dir.join(name);
    std::fs::write(&path, fixed.replacen(find, replace, 1)).unwrap();
    path
}

#[test]
fn the_corrected_figures_and_the_periscope_example_are_valid() {
    let mut files = fixtures("apart");
    files.extend(fixtures("periscope"));
    assert_eq!(files.len(), 9);
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let out = sim_host(&["sir", "validate", "--warnings-as-errors"], &paths);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "", "no findings");
    assert!(
        text(&out.stderr).contains("9 file(s) checked: 0 error(s), 0 warning(s)"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn the_figures_as_printed_are_refused_with_file_line_and_column() {
    let dir = scratch("cli-sir-typos");
    let figure6 = with_typo(
        &dir,
        "figure6_fortran_overload.xml",
        "<alias>PHI</alias>\n    <variable name=\"X\" type=\"INTEGER\" id=\"v1\"/>",
        "<variable name=\"X\" type=\"INTEGER\" id=\"v1\"/>\n    <alias>PHI</alias>",
    );
    let figure2 = with_typo(
        &dir,
        "figure2_java_inheritance.xml",
        "name=\"KeyListener\" id=\"i2\"",
        "name=\"KeyListener\" id=\"i1\"",
    );
    let figure5 = with_typo(
        &dir,
        "figure5_c_function_pointer.xml",
        "<unit type=\"function\" arguments=\"v4 v5\" instrumentable=\"false\" id=\"u1\">\n    <variable type=\"const void *\" id=\"v4\"/>\n    <variable type=\"const void *\" id=\"v5\"/>\n  </unit>\n",
        "",
    );
    let good = fixture("figure3_c_if.xml");
    let out = sim_host(&["sir", "validate"], &[&figure6, &good, &figure2, &figure5]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let expected = [
        format!("{}:8:5: error: <alias> not allowed here", figure6.display()),
        format!(
            "{}:22:9: error: <group id=\"i1\"> attribute `id`: id `i1` is already used",
            figure2.display()
        ),
        format!(
            "{}:12:7: error: <callee> attribute `id`: no element has id `u1`",
            figure5.display()
        ),
    ];
    for line in &expected {
        assert!(stdout.contains(line.as_str()), "{line}\nnot in\n{stdout}");
    }
    assert!(!stdout.contains("figure3"), "{stdout}");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("3 file(s) failed"), "{stderr}");
    assert!(
        !stderr.contains("Error {") && !stdout.contains("Some("),
        "no Debug text"
    );
}

#[test]
fn warnings_fail_only_with_warnings_as_errors() {
    let dir = scratch("cli-sir-warnings");
    let path = dir.join("assign.xml");
    std::fs::write(
        &path,
        "<sir language=\"c\">\n<unit id=\"u\" type=\"function\">\n<codeRegion type=\"assign\" id=\"r\"/>\n</unit>\n</sir>\n",
    )
    .unwrap();
    let out = sim_host(&["sir", "validate"], &[&path]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let warning = format!("{}:3:1: warning: <codeRegion id=\"r\">", path.display());
    assert!(
        text(&out.stdout).contains(&warning),
        "{}",
        text(&out.stdout)
    );
    let out = sim_host(&["sir", "validate", "--warnings-as-errors"], &[&path]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--warnings-as-errors"));
}

#[test]
fn an_unreadable_or_malformed_file_is_an_error_naming_it() {
    let dir = scratch("cli-sir-bad");
    let broken = dir.join("broken.xml");
    std::fs::write(
        &broken,
        "<sir language=\"c\">\n  <unit id=\"u\" type=\"function\">\n</sir>",
    )
    .unwrap();
    let missing = dir.join("missing.xml");
    let out = sim_host(&["sir", "validate"], &[&broken, &missing]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!("{}:3:", broken.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("{}: error: cannot read", missing.display())),
        "{stdout}"
    );
}

#[test]
fn convert_round_trips_apart_through_periscope_and_lists_the_losses() {
    let dir = scratch("cli-sir-convert");
    let source = fixture("figure3_c_if.xml");
    let periscope = dir.join("figure3.periscope.xml");
    let back = dir.join("figure3.apart.xml");

    let out = sim_host(
        &["sir", "convert", "--to", "periscope", "-o"],
        &[&periscope, &source],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "", "the status goes to stderr");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("lost 5 thing(s) Periscope cannot express"),
        "{stderr}"
    );
    assert!(
        stderr.contains("<codeRegion id=\"i1\">: type `if` has no Periscope type"),
        "{stderr}"
    );
    let xml = std::fs::read_to_string(&periscope).unwrap();
    assert!(xml.contains("http://www.lrr.in.tum.de/Periscope"), "{xml}");

    let out = sim_host(
        &["sir", "convert", "--to", "apart", "-o"],
        &[&back, &periscope],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("nothing lost"),
        "{}",
        text(&out.stderr)
    );

    let original = sir::apart::parse_str(&std::fs::read_to_string(&source).unwrap())
        .unwrap()
        .document;
    let round_trip = sir::apart::parse_str(&std::fs::read_to_string(&back).unwrap())
        .unwrap()
        .document;
    assert!(round_trip.validate().is_valid());
    let names = |s: &sir::apart::Sir| -> Vec<Option<String>> {
        s.units().iter().map(|u| u.name.clone()).collect()
    };
    assert_eq!(names(&round_trip), names(&original));
    let out = sim_host(
        &["sir", "validate", "--warnings-as-errors"],
        &[&back, &periscope],
    );
    assert!(out.status.success(), "{}", text(&out.stdout));

    let again = dir.join("again.xml");
    let out = sim_host(&["sir", "convert", "--to", "apart", "-o"], &[&again, &back]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("already in the APART dialect"));
    assert_eq!(
        std::fs::read(&again).unwrap(),
        std::fs::read(&back).unwrap()
    );
}

#[test]
fn convert_checks_the_output_before_reading_and_refuses_a_bad_dialect() {
    let source = fixture("figure3_c_if.xml");
    let out = sim_host(
        &[
            "sir",
            "convert",
            "--to",
            "periscope",
            "-o",
            "/nonexistent-dir/x.xml",
        ],
        &[&source],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("-o /nonexistent-dir/x.xml: the directory"),
        "{}",
        text(&out.stderr)
    );
    let out = sim_host(&["sir", "convert", "--to", "xml", "-o", "-"], &[&source]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("[possible values: apart, periscope]"));
}
