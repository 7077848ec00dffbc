//! Links with cortex-m-rt's `link.x`, which includes `memory.x`: the
//! memory map of the sim-host target being built for, a file named by
//! `HAL_FIRMWARE_MEMORY_X` (the test writes it with
//! `sim_host::tools::scaffold::memory_x`, what `sim-host new --lang rust`
//! writes).
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=HAL_FIRMWARE_MEMORY_X");
    let memory = std::env::var_os("HAL_FIRMWARE_MEMORY_X")
        .map(PathBuf::from)
        .expect("HAL_FIRMWARE_MEMORY_X names the target's memory.x");
    println!("cargo:rerun-if-changed={}", memory.display());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    std::fs::copy(&memory, out.join("memory.x"))
        .unwrap_or_else(|e| panic!("{}: {e}", memory.display()));
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-link-arg-bins=-Tlink.x");
}
