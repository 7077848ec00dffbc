//! What some tests need of the machine beyond the Rust toolchain and the
//! cross compilers: host tools, Rust guest targets, the right to make a
//! device node. One definition for the build script (`tests/build.rs`,
//! which turns each into a `has_<name>` cfg that un-ignores its tests)
//! and for the tests themselves ([`crate::require`] at their start).
//!
//! A test that needs one is annotated
//! `#[cfg_attr(not(has_gdb), ignore = "needs gdb-multiarch (...)")]`:
//! ignored, with the reason, where it is missing; under `CI` the build
//! script sets every cfg, so the test runs and fails by its `require`
//! call if the thing is really missing. It never passes silently.

use std::path::{Path, PathBuf};

/// How a need is looked for.
#[derive(Debug, Clone, Copy)]
pub enum Probe<'a> {
    /// A program on PATH.
    Program(&'a str),
    /// A Rust target's standard library in the toolchain's sysroot.
    RustTarget(&'a str),
    /// Making a device node with `mknod` (CAP_MKNOD: root, normally);
    /// tried in the build script's `OUT_DIR`.
    DeviceNodes,
    /// A third-party source tree `scripts/third-party.py` fetched from a
    /// package registry into `target/third-party/<name>` (`make guests`
    /// fetches it).
    ThirdParty(&'a str),
}

/// Every need of a test: the cfg's name (without `has_`) and its probe.
pub const NEEDS: &[(&str, Probe<'static>)] = &[
    ("gdb", Probe::Program("gdb-multiarch")),
    ("qemu_arm", Probe::Program("qemu-system-arm")),
    ("gcc", Probe::Program("gcc")),
    ("gxx", Probe::Program("g++")),
    ("cmake", Probe::Program("cmake")),
    ("callgrind_annotate", Probe::Program("callgrind_annotate")),
    ("parallel", Probe::Program("parallel")),
    ("xmllint", Probe::Program("xmllint")),
    ("cargo", Probe::Program("cargo")),
    ("arm_gcc", Probe::Program("arm-none-eabi-gcc")),
    ("riscv_gcc", Probe::Program("riscv64-unknown-elf-gcc")),
    ("rust_thumbv6m", Probe::RustTarget("thumbv6m-none-eabi")),
    ("rust_thumbv7m", Probe::RustTarget("thumbv7m-none-eabi")),
    ("rust_thumbv7em", Probe::RustTarget("thumbv7em-none-eabi")),
    (
        "rust_thumbv7em_hf",
        Probe::RustTarget("thumbv7em-none-eabihf"),
    ),
    (
        "rust_thumbv8m_main_hf",
        Probe::RustTarget("thumbv8m.main-none-eabihf"),
    ),
    (
        "rust_riscv32imac",
        Probe::RustTarget("riscv32imac-unknown-none-elf"),
    ),
    ("mknod", Probe::DeviceNodes),
    ("freertos_kernel", Probe::ThirdParty("freertos-kernel")),
];

impl Probe<'_> {
    /// Whether this machine has it.
    pub fn present(self) -> bool {
        match self {
            Probe::Program(name) => on_path(name).is_some(),
            Probe::RustTarget(triple) => rust_target_installed(triple),
            Probe::ThirdParty(name) => third_party_tree(name).join(".fetched").is_file(),
            Probe::DeviceNodes => {
                // tried where the probe may write: the build script's own folder
                let Some(dir) = std::env::var_os("OUT_DIR") else {
                    return false;
                };
                let node = Path::new(&dir).join("probe-null");
                let _ = std::fs::remove_file(&node);
                let made = make_null_device(&node);
                let _ = std::fs::remove_file(&node);
                made
            }
        }
    }

    /// What a test says when it is missing: what it needs and how to get it.
    pub fn missing_message(self) -> String {
        match self {
            // not (yet) among what scripts/bootstrap.sh installs
            Probe::Program("g++") => "needs g++: install it with apt-get install g++".to_owned(),
            Probe::Program("cargo") => {
                "needs cargo: install the Rust toolchain (rustup)".to_owned()
            }
            Probe::Program(name) => {
                format!("needs {name}: install it with scripts/bootstrap.sh")
            }
            Probe::RustTarget(triple) => format!(
                "needs the Rust target {triple}: scripts/bootstrap.sh adds it \
                 (rustup target add {triple})"
            ),
            Probe::DeviceNodes => "needs CAP_MKNOD (run as root) to make a device node \
                                   in its scratch folder"
                .to_owned(),
            Probe::ThirdParty(name) => format!(
                "needs the third-party tree {name}: `make guests` fetches it from its package \
                 registry (scripts/third-party.py fetch {name})"
            ),
        }
    }
}

/// Where `scripts/third-party.py` puts tree `name`: the workspace's
/// `target/third-party/<name>`.
pub fn third_party_tree(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/third-party")
        .join(name)
}

/// `program`'s path, found the way a shell's `command -v` finds it: the
/// first executable regular file of that name in a PATH folder (a name
/// with a `/` is taken as it is).
pub fn on_path(program: &str) -> Option<PathBuf> {
    let executable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

/// Whether the Rust toolchain (`$RUSTC`, else `rustc`) has `triple`'s
/// standard library installed.
pub fn rust_target_installed(triple: &str) -> bool {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let Ok(out) = std::process::Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
    else {
        return false;
    };
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    out.status.success()
        && Path::new(&sysroot)
            .join("lib/rustlib")
            .join(triple)
            .join("lib")
            .is_dir()
}

/// Makes the character device node `path` (major 1, minor 3: what
/// /dev/null is on Linux) with `mknod`: whether this machine lets us (it
/// needs CAP_MKNOD, so root, and a container that grants it).
pub fn make_null_device(path: &Path) -> bool {
    std::process::Command::new("mknod")
        .arg(path)
        .args(["c", "1", "3"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether the environment says this is a CI run (`CI` set, as every CI
/// service sets it): then no test may be ignored for a missing tool.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some()
}
