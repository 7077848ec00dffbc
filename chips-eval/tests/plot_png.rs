//! `--plot FILE.png`: the SVG plot rasterised with resvg, checked by
//! decoding the file (signature, IHDR size, pixels that are not all the
//! white background), with system fonts and with none.

use chips_eval::plot;
use chips_eval::{HardwareModel, LoadOptions, Program, RunOptions, Setting};
use resvg::tiny_skia::Pixmap;
use resvg::usvg::fontdb::Database;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::require;

mod support;

const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Width and height from the IHDR chunk, which must come first.
fn ihdr_size(data: &[u8]) -> (u32, u32) {
    assert!(data.len() > 33, "too short for a PNG: {} bytes", data.len());
    assert_eq!(data[..8], SIGNATURE, "PNG signature");
    assert_eq!(&data[12..16], b"IHDR", "first chunk");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&data[16..20]), be(&data[20..24]))
}

/// Pixels that differ from the first (the background).
fn non_background_pixels(data: &[u8]) -> usize {
    let pixmap = Pixmap::decode_png(data).expect("decodes");
    let px = pixmap.pixels();
    px.iter().filter(|p| **p != px[0]).count()
}

fn small_sweep_svg() -> String {
    let hw = HardwareModel::load(&root().join("hardware/transputer-supercluster.toml")).unwrap();
    let prog = Program::load(
        &root().join("tests/fixtures/memsort/memsort.la"),
        &LoadOptions::default(),
        Some(&hw),
    )
    .unwrap();
    let settings = vec![Setting::parse("Nproc=1..8:*2").unwrap()];
    let results = chips_eval::run(&prog, &hw, &settings, RunOptions::default()).unwrap();
    plot::svg(&results, &plot::PlotOptions::new("memsort")).unwrap()
}

#[test]
fn cli_writes_a_png_of_the_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("memsort.png");
    let out = Command::new(env!("CARGO_BIN_EXE_chips-eval"))
        .current_dir(root())
        .args([
            "run",
            "tests/fixtures/memsort/memsort.la",
            "--hardware",
            "hardware/transputer-supercluster.toml",
            "--set",
            "Nproc=1..16:*2",
            "--set",
            "Nelem=65536,262144",
            "--plot",
            png.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let data = std::fs::read(&png).unwrap();
    assert_eq!(ihdr_size(&data), (720, 480));
    let pixmap = Pixmap::decode_png(&data).unwrap();
    assert_eq!((pixmap.width(), pixmap.height()), (720, 480));
    // White background, opaque.
    let bg = pixmap.pixels()[0];
    assert_eq!(
        (bg.red(), bg.green(), bg.blue(), bg.alpha()),
        (255, 255, 255, 255)
    );
    assert!(non_background_pixels(&data) > 1000);
}

#[test]
fn size_sets_the_png_pixels() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("big.png");
    let out = Command::new(env!("CARGO_BIN_EXE_chips-eval"))
        .current_dir(root())
        .args([
            "run",
            "tests/fixtures/memsort/memsort.la",
            "--hardware",
            "hardware/transputer-supercluster.toml",
            "--set",
            "Nproc=1..16:*2",
            "--size",
            "1200x800",
            "--plot",
            png.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(ihdr_size(&std::fs::read(&png).unwrap()), (1200, 800));
}

#[test]
fn other_extensions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_chips-eval"))
        .current_dir(root())
        .args([
            "run",
            "tests/fixtures/memsort/memsort.la",
            "--hardware",
            "hardware/transputer-supercluster.toml",
            "--set",
            "Nproc=1,2",
            "--plot",
            dir.path().join("plot.jpg").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("only SVG and PNG output"), "{err}");
    assert!(!Path::new(&dir.path().join("plot.jpg")).exists());
}

#[test]
fn without_fonts_the_png_still_has_axes_and_lines() {
    let bare = plot::render_png(&small_sweep_svg(), Database::new()).unwrap();
    assert!(bare.missing_fonts);
    assert_eq!(ihdr_size(&bare.data), (720, 480));
    let bare_count = non_background_pixels(&bare.data);
    assert!(bare_count > 1000, "{bare_count} pixels drawn");
}

#[test]
#[cfg_attr(
    not(has_system_fonts),
    ignore = "needs a system font (none in /usr/share/fonts, /usr/local/share/fonts, \
              ~/.fonts or ~/.local/share/fonts)"
)]
fn with_system_fonts_the_labels_add_pixels() {
    let svg = small_sweep_svg();
    let bare = plot::render_png(&svg, Database::new()).unwrap();
    let bare_count = non_background_pixels(&bare.data);
    let mut fonts = Database::new();
    fonts.load_system_fonts();
    require("a system font (fontdb found none)", !fonts.is_empty());
    let full = plot::render_png(&svg, fonts).unwrap();
    assert!(!full.missing_fonts);
    assert_eq!(ihdr_size(&full.data), (720, 480));
    let full_count = non_background_pixels(&full.data);
    assert!(
        full_count > bare_count + 500,
        "labels drew {full_count} vs {bare_count} pixels"
    );
}
