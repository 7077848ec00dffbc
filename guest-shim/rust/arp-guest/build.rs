//! Builds the ARP entry-point stubs (`../../src/arp_stubs.c`, the same file
//! C guests link) for the guest's target, with one address per function
//! (-fno-ipa-icf): sim-host intercepts them by symbol and they cost the
//! guest nothing.

use std::path::Path;

fn main() {
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = std::env::var("TARGET").unwrap_or_default();
    let mut build = cc::Build::new();
    build
        .file(sdk.join("src/arp_stubs.c"))
        .file(sdk.join("src/simthread_stubs.c"))
        .include(sdk.join("include"))
        .flag("-fno-ipa-icf")
        .flag("-Wno-ignored-qualifiers")
        .opt_level(2);
    // Debian ships one RISC-V bare-metal gcc, riscv64-unknown-elf, with
    // rv32 multilibs; cc would look for riscv32-unknown-elf-gcc.
    let cc_variable = format!("CC_{}", target.replace('-', "_"));
    if target.starts_with("riscv32") && std::env::var_os(&cc_variable).is_none() {
        build.compiler("riscv64-unknown-elf-gcc");
    }
    build.compile("arp_stubs");
    for file in ["src/arp_stubs.c", "src/simthread_stubs.c", "include/atomium_rp.h"] {
        println!("cargo:rerun-if-changed={}", sdk.join(file).display());
    }
}
