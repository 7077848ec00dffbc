//! Building the Rust firmware projects under `tests/` (`rust-firmware`,
//! `hal-firmware`, `rp2040-hal-firmware`: their own workspaces, crates
//! from crates.io pinned by their Cargo.lock, one build script,
//! `tests/firmware-build.rs`) as their users build them: `cargo build
//! --release --locked --target <triple>`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// One firmware build.
pub struct Firmware<'a> {
    /// The project's folder under `tests/` ("hal-firmware").
    pub project: &'a str,
    /// The Rust target triple.
    pub triple: &'a str,
    /// The memory map to link with (`FIRMWARE_MEMORY_X`), or None for
    /// the project's own `memory.x`.
    pub memory_x: Option<&'a Path>,
    /// The binaries to copy out.
    pub bins: &'a [&'a str],
}

impl Firmware<'_> {
    /// Builds the project and copies each binary into `dir` as
    /// `<bin>.elf`, in the order of `bins`. Fails the test (with cargo's
    /// output) if the build fails. The cargo target folder is the test
    /// process's, per project: the crates compile once per Rust target;
    /// the builds take turns, because the ELFs are copied out before the
    /// next target's link overwrites them.
    pub fn build(&self, dir: &Path) -> Vec<PathBuf> {
        static BUILDS: Mutex<()> = Mutex::new(());
        crate::require_tool("cargo");
        crate::require_rust_target(self.triple);
        let _turn = BUILDS.lock().unwrap_or_else(|e| e.into_inner());
        let project = crate::repo_root().join("tests").join(self.project);
        let target_dir = crate::process_scratch().join(format!("{}-target", self.project));
        let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        cargo
            .args(["build", "--release", "--locked", "--target", self.triple])
            .arg("--manifest-path")
            .arg(project.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(&target_dir)
            .current_dir(dir);
        // nothing of this build's own cargo invocation (its target folder,
        // flags, profile) reaches the guest's
        for (key, _) in std::env::vars() {
            if (key.starts_with("CARGO_") && key != "CARGO_HOME") || key.contains("RUSTFLAGS") {
                cargo.env_remove(key);
            }
        }
        cargo.env_remove("FIRMWARE_MEMORY_X");
        if let Some(memory) = self.memory_x {
            cargo.env("FIRMWARE_MEMORY_X", memory);
        }
        let out = cargo.output().expect("cargo runs");
        assert!(
            out.status.success(),
            "{} for {}: {}{}",
            self.project,
            self.triple,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let release = target_dir.join(self.triple).join("release");
        self.bins
            .iter()
            .map(|bin| {
                let to = dir.join(format!("{bin}.elf"));
                std::fs::copy(release.join(bin), &to)
                    .unwrap_or_else(|e| panic!("{}: {e}", release.join(bin).display()));
                to
            })
            .collect()
    }
}

/// `memory.x` for the built-in target `target` in `dir` (what `sim-host
/// new --lang rust` writes), for [`Firmware::memory_x`].
pub fn memory_x(target: &sim_host::model::target::Target, dir: &Path) -> PathBuf {
    let memory = dir.join("memory.x");
    std::fs::write(
        &memory,
        sim_host::tools::scaffold::memory_x(target).unwrap(),
    )
    .unwrap();
    memory
}

/// `sim-host run -q --target <target> --max-cycles <max_cycles> elf`, its
/// JSON report written in `dir` under `name` (no data.arp: the firmwares
/// have no ARP section): the process's output and the report.
pub fn run_with_report(
    target: &str,
    max_cycles: u64,
    elf: &Path,
    dir: &Path,
    name: &str,
) -> (std::process::Output, serde_json::Value) {
    let report = dir.join(format!("{name}.json"));
    let out = Command::new(crate::sim_host_bin())
        .args(["run", "-q", "--target", target, "--max-cycles"])
        .arg(max_cycles.to_string())
        .arg("--report-json")
        .arg(&report)
        .arg(elf)
        .output()
        .expect("sim-host starts");
    let json = std::fs::read_to_string(&report)
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(serde_json::Value::Null);
    (out, json)
}

/// A report's warnings as text; a report without the list fails.
pub fn report_warnings(report: &serde_json::Value) -> Vec<String> {
    report["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no warnings array: {report}"))
        .iter()
        .map(|w| w.as_str().unwrap_or_default().to_owned())
        .collect()
}
