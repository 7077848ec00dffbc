//! Probes once, at build time, what some end-to-end tests need (host
//! tools, Rust guest targets, mknod; `src/probe.rs`) and sets `has_<name>`
//! for each one present. Tests that need a missing one are ignored with
//! the reason (`#[cfg_attr(not(has_gdb), ignore = "needs ...")]`). With
//! `CI` set every cfg is set: those tests run, and fail with what is
//! missing and how to install it. A real single-node Slurm has a probe of
//! its own (`slurm_cfg`).

#[path = "src/probe.rs"]
#[allow(dead_code)] // what only the tests use of it
mod probe;

#[path = "src/slurm/needs.rs"]
mod slurm_needs;

fn main() {
    tools_cfg();
    slurm_cfg();
}

/// `has_<name>` for each present need of `probe::NEEDS`.
fn tools_cfg() {
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

/// `cfg(slurm_unavailable)` when a real Slurm cannot be started here (a
/// program of munge or Slurm is missing, or this is not root) and `CI` is
/// unset: the Slurm recipe tests are then ignored, with the reason as the
/// ignore message. Under `CI` they always run, and fail naming what is
/// missing.
fn slurm_cfg() {
    println!("cargo:rustc-check-cfg=cfg(slurm_unavailable)");
    println!("cargo:rerun-if-changed=src/slurm/needs.rs");
    // installing or removing a Debian package rewrites dpkg's status file
    // (a path that does not exist would make cargo rerun this every build)
    let dpkg_status = std::path::Path::new("/var/lib/dpkg/status");
    if dpkg_status.exists() {
        println!("cargo:rerun-if-changed={}", dpkg_status.display());
    }
    if std::env::var_os("CI").is_none() && slurm_needs::missing().is_some() {
        println!("cargo:rustc-cfg=slurm_unavailable");
    }
}
