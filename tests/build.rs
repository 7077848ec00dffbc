//! Probes once, at build time, what some end-to-end tests need (host
//! tools, Rust guest targets, mknod; `src/probe.rs`) and sets `has_<name>`
//! for each one present. Tests that need a missing one are ignored with
//! the reason (`#[cfg_attr(not(has_gdb), ignore = "needs ...")]`). With
//! `CI` set every cfg is set: those tests run, and fail with what is
//! missing and how to install it.

#[path = "src/probe.rs"]
#[allow(dead_code)] // what only the tests use of it
mod probe;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/probe.rs");
    println!("cargo:rerun-if-env-changed=CI");
    println!("cargo:rerun-if-env-changed=PATH");
    let ci = probe::in_ci();
    let mut missing = false;
    for (name, need) in probe::NEEDS {
        println!("cargo::rustc-check-cfg=cfg(has_{name})");
        let present = need.present();
        missing |= !present;
        if present || ci {
            println!("cargo:rustc-cfg=has_{name}");
        }
    }
    if missing && !ci {
        // A tool installed later lands in a PATH folder: probe again then
        // (a folder's listing changes its modification time).
        if let Some(path) = std::env::var_os("PATH") {
            for dir in std::env::split_paths(&path).filter(|d| d.is_absolute() && d.is_dir()) {
                println!("cargo:rerun-if-changed={}", dir.display());
            }
        }
    }
}
