//! Plots fit for a paper: round tick labels with the unit's SI prefix in
//! the axis label, `--log-y`, `--size`, a legend only for several series,
//! and series that differ by dash pattern and marker, not only colour.

use chips_eval::plot::{self, PlotOptions};
use chips_eval::{HardwareModel, LoadOptions, Program, RunOptions, Setting};
use std::path::{Path, PathBuf};
use std::process::Command;

const HW: &str = "hardware/transputer-supercluster.toml";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A model whose time is `n * scale` seconds (and `m` has no effect).
fn linear_model(dir: &Path, scale: &str) -> PathBuf {
    let app = dir.join("app.la");
    let text = format!(
        "application a {{ var dtdp numeric: n = 1, m = 1; option {{ }} \
         proc exec init {{ return n * {scale}; }} }}"
    );
    std::fs::write(&app, text).unwrap();
    app
}

fn svg_of(app: &Path, sets: &[&str], opts: &PlotOptions) -> Result<String, String> {
    let hw = HardwareModel::load(&root().join(HW)).unwrap();
    let prog = Program::load(app, &LoadOptions::default(), Some(&hw)).unwrap();
    let settings: Vec<Setting> = sets.iter().map(|s| Setting::parse(s).unwrap()).collect();
    let results = chips_eval::run(&prog, &hw, &settings, RunOptions::default()).unwrap();
    plot::svg(&results, opts).map_err(|e| e.to_string())
}

/// The texts of the SVG's `<text>` elements.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| t.split_once('>'))
        .filter_map(|(_, rest)| rest.split_once("</text>"))
        .map(|(text, _)| text.to_owned())
        .collect()
}

fn chips(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_chips-eval"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_tenth_of_a_second_is_labelled_in_round_milliseconds() {
    let dir = tempfile::tempdir().unwrap();
    let app = linear_model(dir.path(), "0.01407");
    let svg = svg_of(&app, &["n=0..10"], &PlotOptions::new("t")).unwrap();
    let labels = texts(&svg);
    assert!(labels.iter().any(|t| t == "time (ms)"), "{labels:?}");
    for tick in ["0", "20", "40", "60", "80", "100", "120", "140", "160"] {
        assert!(labels.iter().any(|t| t == tick), "{tick} in {labels:?}");
    }
    assert!(
        !labels.iter().any(|t| t.contains("e-") || t.contains("e0")),
        "{labels:?}"
    );
}

#[test]
fn log_y_puts_ticks_at_powers_of_ten() {
    let dir = tempfile::tempdir().unwrap();
    let app = linear_model(dir.path(), "1");
    let opts = PlotOptions {
        log_y: true,
        ..PlotOptions::new("t")
    };
    let svg = svg_of(&app, &["n=1,10,100,1000,10000,100000,1000000"], &opts).unwrap();
    let labels = texts(&svg);
    for tick in ["1", "10", "100", "1000", "10000", "100000", "10⁶"] {
        assert!(labels.iter().any(|t| t == tick), "{tick} in {labels:?}");
    }
}

#[test]
fn log_y_refuses_a_time_of_zero_naming_the_point() {
    let dir = tempfile::tempdir().unwrap();
    let app = linear_model(dir.path(), "1");
    let opts = PlotOptions {
        log_y: true,
        ..PlotOptions::new("t")
    };
    let err = svg_of(&app, &["n=2,0,1", "m=5"], &opts).unwrap_err();
    assert!(
        err.contains("--log-y: the point n=0, m=5 has time 0 s"),
        "{err}"
    );
}

#[test]
fn a_legend_only_for_more_than_one_series() {
    let dir = tempfile::tempdir().unwrap();
    let app = linear_model(dir.path(), "1");
    let one = svg_of(&app, &["n=1..4"], &PlotOptions::new("t")).unwrap();
    assert!(!one.contains("legend"), "one series, no legend");
    let two = svg_of(&app, &["n=1..4", "m=1,2"], &PlotOptions::new("t")).unwrap();
    assert!(two.contains(r#"<g class="legend">"#));
    let labels = texts(&two);
    assert!(labels.iter().any(|t| t == "m = 1") && labels.iter().any(|t| t == "m = 2"));
}

#[test]
fn series_differ_in_dash_and_marker_not_only_colour() {
    let dir = tempfile::tempdir().unwrap();
    let app = linear_model(dir.path(), "1");
    let svg = svg_of(&app, &["n=1..4", "m=1,2,3,4"], &PlotOptions::new("t")).unwrap();
    // The data lines: paths with a stroke width and no fill, before the legend.
    let plot_part = svg.split(r#"<g class="legend">"#).next().unwrap();
    let dashes: Vec<&str> = plot_part
        .lines()
        .filter(|l| l.starts_with("<path d=\"M") && l.contains("stroke-linejoin"))
        .map(|l| {
            l.split("stroke-dasharray=\"")
                .nth(1)
                .map_or("solid", |d| d.split('"').next().unwrap())
        })
        .collect();
    assert_eq!(dashes.len(), 4, "{dashes:?}");
    let mut distinct = dashes.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "{dashes:?}");
    // Markers: circles for the first, polygons of 4 and 3 corners next.
    assert!(plot_part.contains("<circle"));
    assert!(plot_part.contains("<polygon"));
}

#[test]
fn size_sets_the_svg_width_and_height() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("p.svg");
    let out = chips(&[
        "run",
        "tests/fixtures/memsort/memsort.la",
        "--hardware",
        HW,
        "--set",
        "Nproc=1..8:*2",
        "--size",
        "1000x300",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="300" viewBox="0 0 1000 300""#),
        "{}",
        &text[..120]
    );
}

#[test]
fn a_size_out_of_range_is_a_usage_error() {
    for bad in ["100x100", "9000x600", "720", "axb", "720x0"] {
        let out = chips(&[
            "run",
            "tests/fixtures/memsort/memsort.la",
            "--hardware",
            HW,
            "--set",
            "Nproc=1,2",
            "--size",
            bad,
            "--plot",
            "/nonexistent-dir/p.svg",
        ]);
        assert_eq!(out.status.code(), Some(2), "--size {bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--size"), "{err}");
    }
}

#[test]
fn log_y_through_the_binary_names_the_point() {
    let dir = tempfile::tempdir().unwrap();
    let app = linear_model(dir.path(), "1");
    let svg = dir.path().join("p.svg");
    let out = chips(&[
        "run",
        app.to_str().unwrap(),
        "--hardware",
        HW,
        "--set",
        "n=0..2",
        "--log-y",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the point n=0 has time 0 s"), "{err}");
    assert!(!svg.exists());
}
