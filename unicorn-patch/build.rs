//! Builds Unicorn from the pristine `unicorn-engine-sys` 2.1.5 crate of the
//! registry with sim-host's patches applied:
//!
//! 1. the `.crate` file is taken from Cargo's registry cache, or downloaded
//!    from static.crates.io, and checked against the checksum Cargo.lock
//!    had for it (a different file is an error);
//! 2. it is unpacked into `OUT_DIR/stage`, and the patches named in
//!    `series` applied in its order with `patch -p1 --fuzz=0 --forward`: a
//!    hunk whose context does not match exactly is an error that shows
//!    `patch`'s output, never a hunk landed in the wrong place. Each patch
//!    says in its own comments what it does; `patches.sh` turns them into
//!    a git history and back (CONTRIBUTING.md, "Upgrading Unicorn");
//! 3. the files that differ are copied into `OUT_DIR/src`, which cmake
//!    configures once and then builds incrementally (a changed patch
//!    recompiles only what it changed);
//! 4. bindgen generates the bindings from the patched `unicorn.h`, with the
//!    names upstream's build gives them (the unicorn-engine crate uses
//!    them).
//!
//! The build runs again only when this file or a patch changes.

use bindgen::callbacks::{EnumVariantValue, ParseCallbacks};
use heck::ToUpperCamelCase;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

const CRATE: &str = "unicorn-engine-sys-2.1.5";
/// The registry's checksum of `unicorn-engine-sys` 2.1.5 (Cargo.lock).
const SHA256: &str = "685282714d35a6fbfed0ae14d81bb11c91838bc7a165cac778321679a7bb91d8";
const URL: &str =
    "https://static.crates.io/crates/unicorn-engine-sys/unicorn-engine-sys-2.1.5.crate";
/// Our patches, one file name per line, applied in this order.
const SERIES: &str = include_str!("series");

fn patches() -> impl Iterator<Item = &'static str> {
    SERIES
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=series");
    for patch in patches() {
        println!("cargo:rerun-if-changed={patch}");
    }
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let krate = pristine_crate(&out);
    // for the tests that regenerate the patches from it
    println!("cargo:rustc-env=UNICORN_PRISTINE_CRATE={}", krate.display());
    let src = patched_source(&out, &krate);
    build_unicorn(&src, &out);
    generate_bindings(&src, &out);
    upstream_lib(&src, &out);
}

/// Stops the build with `why`.
fn fail(why: String) -> ! {
    panic!("\n\nunicorn-engine-sys (sim-host's patched Unicorn, unicorn-patch/): {why}\n\n");
}

fn sha256_of(path: &Path) -> Option<String> {
    let bytes = fs::read(path).ok()?;
    Some(
        Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    )
}

/// The registry's `.crate` file, checked against its checksum: from
/// Cargo's cache, or downloaded into `out`.
fn pristine_crate(out: &Path) -> PathBuf {
    let cargo_home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")));
    let cache = cargo_home.map(|h| h.join("registry").join("cache"));
    let cached = cache
        .and_then(|c| fs::read_dir(c).ok())
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|d| d.path().join(format!("{CRATE}.crate")));
    for candidate in cached.chain([out.join(format!("{CRATE}.crate"))]) {
        if candidate.is_file() && sha256_of(&candidate).as_deref() == Some(SHA256) {
            return candidate;
        }
    }
    let target = out.join(format!("{CRATE}.crate"));
    let status = Command::new("curl")
        .args(["-fsSL", "--retry", "3", "-o"])
        .arg(&target)
        .arg(URL)
        .status()
        .unwrap_or_else(|e| fail(format!("could not run curl to download {URL}: {e}")));
    if !status.success() {
        fail(format!("downloading {URL} failed ({status})"));
    }
    match sha256_of(&target) {
        Some(sum) if sum == SHA256 => target,
        sum => fail(format!(
            "{URL} has sha256 {sum:?}, not the pinned {SHA256}: refusing to build it"
        )),
    }
}

/// The patched source in `out/src`: unpacked and patched in `out/stage`,
/// then the files that differ copied over (so that cmake rebuilds only
/// those).
fn patched_source(out: &Path, krate: &Path) -> PathBuf {
    let stage = out.join("stage");
    let _ = fs::remove_dir_all(&stage);
    fs::create_dir_all(&stage).unwrap_or_else(|e| fail(format!("{}: {e}", stage.display())));
    let tar = Command::new("tar")
        .arg("xzf")
        .arg(krate)
        .arg("-C")
        .arg(&stage)
        .status()
        .unwrap_or_else(|e| fail(format!("could not run tar: {e}")));
    if !tar.success() {
        fail(format!("unpacking {} failed ({tar})", krate.display()));
    }
    for patch in patches() {
        apply(patch, &stage.join(CRATE));
    }
    let src = out.join("src");
    sync(&stage, &src);
    src.join(CRATE)
}

/// Applies our patch `name` to the unpacked source `dir`.
fn apply(name: &str, dir: &Path) {
    let patch = Path::new(&env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR")).join(name);
    let applied = Command::new("patch")
        .args([
            "-p1",
            "--fuzz=0",
            "--forward",
            "--batch",
            "--no-backup-if-mismatch",
            "-i",
        ])
        .arg(&patch)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| {
            fail(format!(
                "could not run `patch` ({e}): install it (scripts/bootstrap.sh does)"
            ))
        });
    if !applied.status.success() {
        fail(format!(
            "{} does not apply to the pristine {CRATE}:\n{}{}",
            patch.display(),
            String::from_utf8_lossy(&applied.stdout),
            String::from_utf8_lossy(&applied.stderr)
        ));
    }
}

/// Copies the files of `from` that are missing or different in `to`.
fn sync(from: &Path, to: &Path) {
    let entries = fs::read_dir(from).unwrap_or_else(|e| fail(format!("{}: {e}", from.display())));
    fs::create_dir_all(to).unwrap_or_else(|e| fail(format!("{}: {e}", to.display())));
    for entry in entries.filter_map(Result::ok) {
        let (path, dest) = (entry.path(), to.join(entry.file_name()));
        if path.is_dir() {
            sync(&path, &dest);
        } else if fs::read(&path).ok() != fs::read(&dest).ok() {
            fs::copy(&path, &dest)
                .unwrap_or_else(|e| fail(format!("copying to {}: {e}", dest.display())));
        }
    }
}

/// cmake, with the definitions upstream's build.rs gives it. Configured
/// once per set of definitions: configuring runs QEMU's own configure
/// script, which rewrites the config headers every source includes, so a
/// second configure would recompile all of Unicorn for a one-line patch.
fn build_unicorn(src: &Path, out: &Path) {
    let archs: Vec<&str> = [
        ("ARCH_X86", "x86"),
        ("ARCH_ARM", "arm"),
        ("ARCH_AARCH64", "aarch64"),
        ("ARCH_RISCV", "riscv"),
        ("ARCH_MIPS", "mips"),
        ("ARCH_SPARC", "sparc"),
        ("ARCH_M68K", "m68k"),
        ("ARCH_PPC", "ppc"),
        ("ARCH_S390X", "s390x"),
        ("ARCH_TRICORE", "tricore"),
    ]
    .into_iter()
    .filter(|(feature, _)| env::var_os(format!("CARGO_FEATURE_{feature}")).is_some())
    .map(|(_, arch)| arch)
    .collect();
    let mut config = cmake::Config::new(src);
    let ninja = Command::new("ninja").arg("--version").output().is_ok();
    if ninja {
        config.generator("Ninja");
    }
    let logging = config.get_profile() == "Debug";
    if logging {
        config.define("UNICORN_LOGGING", "ON");
    }
    let stamp = out.join("configured-with");
    let wanted = format!("{};{logging};{ninja}", archs.join(","));
    let configured = fs::read_to_string(&stamp).is_ok_and(|s| s == wanted)
        && out.join("build/CMakeCache.txt").is_file();
    let dst = if configured {
        rebuild(out);
        out.to_owned()
    } else {
        let _ = fs::remove_file(&stamp);
        let dst = config
            .define("UNICORN_BUILD_TESTS", "OFF")
            .define("UNICORN_INSTALL", "ON")
            .define("UNICORN_ARCH", archs.join(";"))
            .build();
        fs::write(&stamp, wanted).unwrap_or_else(|e| fail(format!("{}: {e}", stamp.display())));
        dst
    };
    for lib in ["lib", "lib64"] {
        println!("cargo:rustc-link-search=native={}", dst.join(lib).display());
    }
    if env::var_os("CARGO_FEATURE_DYNAMIC_LINKAGE").is_some() {
        println!("cargo:rustc-link-lib=dylib=unicorn");
    } else {
        println!("cargo:rustc-link-lib=static=unicorn");
    }
    println!("cargo:rustc-link-lib=pthread");
    println!("cargo:rustc-link-lib=m");
}

/// Builds and installs again in the tree configured before: only what the
/// patch changed is recompiled.
fn rebuild(out: &Path) {
    let jobs = env::var("NUM_JOBS").unwrap_or_else(|_| "1".into());
    let status = Command::new("cmake")
        .arg("--build")
        .arg(out.join("build"))
        .args(["--target", "install", "--parallel", &jobs])
        .status()
        .unwrap_or_else(|e| fail(format!("could not run cmake: {e}")));
    if !status.success() {
        fail(format!("cmake --build failed ({status})"));
    }
}

/// Bindings of the patched `unicorn.h`, named as upstream's build names
/// them.
fn generate_bindings(src: &Path, out: &Path) {
    let bitflags = [
        "uc_hook_type",
        "uc_tcg_op_flag",
        "uc_prot",
        "uc_mode",
        "uc_context_content",
        "uc_control_type",
    ];
    bindgen::Builder::default()
        .header(src.join("include/unicorn/unicorn.h").display().to_string())
        .layout_tests(false)
        .allowlist_type("^uc.*")
        .allowlist_function("^uc_.*")
        .allowlist_var("^uc.*")
        .rustified_enum("^uc.*")
        .prepend_enum_name(false)
        .parse_callbacks(Box::new(Names))
        .bitfield_enum(bitflags.join("|"))
        .derive_ord(true)
        .derive_eq(true)
        .use_core()
        .generate()
        .unwrap_or_else(|e| fail(format!("bindgen: {e}")))
        .write_to_file(out.join("bindings.rs"))
        .unwrap_or_else(|e| fail(format!("writing the bindings: {e}")));
}

/// Upstream's `lib.rs` (its impls of the generated types), without its
/// inner attributes and module lines, for `src/lib.rs` to include.
fn upstream_lib(src: &Path, out: &Path) {
    let path = src.join("bindings/rust/sys/src/lib.rs");
    let text =
        fs::read_to_string(&path).unwrap_or_else(|e| fail(format!("{}: {e}", path.display())));
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with("#![") && *l != "mod bindings;" && *l != "pub use bindings::*;")
        .collect();
    fs::write(out.join("upstream_lib.rs"), kept.join("\n"))
        .unwrap_or_else(|e| fail(format!("writing upstream_lib.rs: {e}")));
}

/// The Rust names of Unicorn's C types and enum variants, as upstream's
/// build gives them: `uc_err` is `uc_error`, `uc_arm_reg` is
/// `RegisterARM`, `uc_cpu_arm` is `ArmCpuModel`, `UC_HOOK_BLOCK` is
/// `HookType::BLOCK`, ...
#[derive(Debug)]
struct Names;

impl ParseCallbacks for Names {
    fn item_name(&self, name: &str) -> Option<String> {
        if name == "uc_err" {
            return Some("uc_error".into());
        }
        if name.contains("_cpu_") {
            let model = name.strip_prefix("uc_cpu_")?;
            return Some(format!("{}CpuModel", model.to_upper_camel_case()));
        }
        if name.ends_with("_reg") {
            let arch = name.strip_prefix("uc_")?.strip_suffix("_reg")?;
            return Some(format!("Register{}", arch.replace('_', "").to_uppercase()));
        }
        if name.ends_with("_insn") {
            let arch = name.strip_prefix("uc_")?.strip_suffix("_insn")?;
            return Some(format!("{}Insn", arch.to_upper_camel_case()));
        }
        if name.contains("_mode_") {
            let mode = name.strip_prefix("uc_mode_")?;
            return Some(format!("{}Mode", mode.to_upper_camel_case()));
        }
        let renamed = match name {
            "uc_query_type" => "Query",
            "uc_tlb_type" => "TlbType",
            "uc_mem_type" => "MemType",
            "uc_tb" => "TranslationBlock",
            "uc_arch" => "Arch",
            "uc_mode" => "Mode",
            "uc_mem_region" => "MemRegion",
            "uc_prot" => "Prot",
            "uc_hook_type" => "HookType",
            "uc_tlb_entry" => "TlbEntry",
            "uc_control_type" => "ControlType",
            "uc_context_content" => "ContextMode",
            "uc_tcg_op_code" => "TcgOpCode",
            "uc_tcg_op_flag" => "TcgOpFlag",
            _ => return None,
        };
        Some(renamed.into())
    }

    fn enum_variant_name(
        &self,
        enum_name: Option<&str>,
        variant: &str,
        _value: EnumVariantValue,
    ) -> Option<String> {
        let enum_name = enum_name?;
        let short = enum_name.strip_prefix("enum uc_")?;
        let prefix = match short {
            "query_type" => "UC_QUERY".to_owned(),
            "tlb_type" => "UC_TLB".to_owned(),
            "control_type" => "UC_CTL".to_owned(),
            "context_content" => "UC_CTL_CONTEXT".to_owned(),
            "err" => "UC_ERR".to_owned(),
            "mem_type" | "mem_region" => "UC_MEM".to_owned(),
            "arch" => "UC_ARCH".to_owned(),
            "mode" => "UC_MODE".to_owned(),
            "prot" => "UC_PROT".to_owned(),
            "hook_type" => "UC_HOOK".to_owned(),
            "x86_insn" => "UC_X86_INS".to_owned(),
            "tcg_op_code" => "UC_TCG_OP".to_owned(),
            "tcg_op_flag" => "UC_TCG_OP_FLAG".to_owned(),
            other => format!("UC_{}", other.to_uppercase()),
        } + "_";
        let mut fixed = variant.strip_prefix(&prefix)?.to_uppercase();
        let numeric = fixed.parse::<u32>().is_ok();
        if numeric && (enum_name == "enum uc_ppc_reg" || enum_name == "enum uc_mips_reg") {
            fixed = format!("R{fixed}");
        }
        if enum_name.contains("cpu") && fixed.starts_with(|c: char| c.is_ascii_digit()) {
            fixed = format!("Model_{fixed}");
        }
        if enum_name == "enum uc_mode" && matches!(fixed.as_str(), "16" | "32" | "64") {
            fixed = format!("MODE_{fixed}");
        }
        Some(fixed)
    }
}
