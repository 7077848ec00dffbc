//! Build-time facts the end-to-end tests' `#[ignore]`s depend on.

fn main() {
    slurm_cfg();
}

#[path = "src/slurm/needs.rs"]
mod slurm_needs;

/// `cfg(slurm_unavailable)` when a real Slurm cannot be started here (a
/// program of munge or Slurm is missing, or this is not root) and `CI` is
/// unset: the Slurm recipe tests are then ignored, with the reason as the
/// ignore message. Under `CI` they always run, and fail naming what is
/// missing.
fn slurm_cfg() {
    println!("cargo:rustc-check-cfg=cfg(slurm_unavailable)");
    println!("cargo:rerun-if-env-changed=CI");
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
