//! chips-eval's build script: probes, once, what two tests need of the
//! machine, and sets a cfg for each one present:
//!
//! * `has_mknod`: this process may make a device node (CAP_MKNOD, so root
//!   where the container grants it); tried with `mknod` in `OUT_DIR`. For
//!   `cli.rs`'s test that an output naming a device is written, not
//!   replaced.
//! * `has_system_fonts`: a font file in the folders `fontdb` reads
//!   (`/usr/share/fonts`, `/usr/local/share/fonts`, `~/.fonts`,
//!   `~/.local/share/fonts`). For `plot_png.rs`'s test that labels drawn
//!   with the system's fonts add pixels.
//!
//! A test that needs one is `#[cfg_attr(not(has_X), ignore = "needs ...")]`:
//! ignored, with the reason, where it is missing. With `CI` set both cfgs
//! are set, so the tests run and fail (`support::require`) when what they
//! need is missing: no test passes by skipping its work.
//!
//! It lives with the tests it serves; the library and the binary use none
//! of it.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn main() {
    println!("cargo::rerun-if-changed=tests/support/probe.rs");
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rerun-if-env-changed=HOME");
    println!("cargo::rustc-check-cfg=cfg(has_mknod)");
    println!("cargo::rustc-check-cfg=cfg(has_system_fonts)");
    let ci = std::env::var_os("CI").is_some();
    if ci || can_make_device_nodes() {
        println!("cargo::rustc-cfg=has_mknod");
    }
    let font_dirs = font_dirs();
    if ci || font_dirs.iter().any(|d| holds_a_font(d, 0)) {
        println!("cargo::rustc-cfg=has_system_fonts");
    } else {
        // Fonts installed later land in one of these: probe again then.
        for dir in font_dirs.iter().filter(|d| d.is_dir()) {
            println!("cargo::rerun-if-changed={}", dir.display());
        }
    }
}

/// Makes a character device node (major 1, minor 3: what /dev/null is on
/// Linux) in the build script's own folder, and removes it.
fn can_make_device_nodes() -> bool {
    let Some(out) = std::env::var_os("OUT_DIR") else {
        return false;
    };
    let node = Path::new(&out).join("probe-null");
    let _ = std::fs::remove_file(&node);
    let made = Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "3"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let _ = std::fs::remove_file(&node);
    made
}

/// The folders `fontdb::Database::load_system_fonts` reads on Linux
/// (without a fontconfig file naming others).
fn font_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![
        PathBuf::from("/usr/share/fonts"),
        PathBuf::from("/usr/local/share/fonts"),
    ];
    if let Some(home) = std::env::var_os("HOME") {
        let home = Path::new(&home);
        dirs.push(home.join(".fonts"));
        dirs.push(home.join(".local/share/fonts"));
    }
    dirs
}

/// Whether `dir` or a folder below it (at most 8 deep) holds a file
/// `fontdb` loads (`.ttf`, `.ttc`, `.otf`, `.otc`, any case).
fn holds_a_font(dir: &Path, depth: usize) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let path = entry.path();
        if path.is_dir() {
            depth < 8 && holds_a_font(&path, depth + 1)
        } else {
            path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                ["ttf", "ttc", "otf", "otc"].contains(&e.to_ascii_lowercase().as_str())
            })
        }
    })
}
