//! The build script of the firmware projects beside it (`rust-firmware`,
//! `hal-firmware`, `rp2040-hal-firmware`, each naming it with `build =`):
//! links with cortex-m-rt's `link.x`, which includes `memory.x`. That is
//! the file `FIRMWARE_MEMORY_X` names (the memory map of the sim-host
//! target being built for, which the tests write with
//! `sim_host::tools::scaffold::memory_x`, what `sim-host new --lang rust`
//! writes), else the project's own `memory.x` (as an rp2040-hal project
//! has, with its BOOT2 block). No `-zdead-reloc-in-nonalloc` flag:
//! sim-host must name the code right from the linker's default DWARF.
//! `cfg(armv6m)` marks the cores without a DWT cycle counter.
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=FIRMWARE_MEMORY_X");
    let memory = match std::env::var_os("FIRMWARE_MEMORY_X") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap()).join("memory.x"),
    };
    println!("cargo:rerun-if-changed={}", memory.display());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    std::fs::copy(&memory, out.join("memory.x"))
        .unwrap_or_else(|e| panic!("{}: {e}", memory.display()));
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-link-arg-bins=-Tlink.x");
    println!("cargo::rustc-check-cfg=cfg(armv6m)");
    if std::env::var("TARGET")
        .unwrap_or_default()
        .starts_with("thumbv6m")
    {
        println!("cargo:rustc-cfg=armv6m");
    }
}
