//! Helpers shared by the end-to-end tests: where the repository and the
//! guest ELFs are, building guests on demand, and running external tools.
//!
//! Tests that need something beyond the build (gdb-multiarch, qemu, a host
//! gcc, cmake, valgrind, GNU parallel, Rust guest targets, mknod) are
//! ignored with the reason where it is missing, and run (failing with
//! what is missing) when `CI` is set: see [`probe`] and `build.rs`. A
//! test never passes by skipping its work.
//!
//! Golden files (`tests/golden/`, [`golden`]): every output format of a
//! real run, compared byte for byte after the host's own fields are
//! normalised; `ARPSIM_BLESS=1 cargo test --release -p e2e-tests --test
//! golden` rewrites them.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub mod board_run;
pub mod firmware;
pub mod gdb_wire;
pub mod golden;
pub mod measure;
pub mod probe;
pub mod process;
pub mod slurm;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_owned()
}

/// The folder `guest-shim/build.py` writes guests into.
pub fn guests_dir() -> PathBuf {
    repo_root().join("target/guests")
}

/// Moves the test process into a scratch folder, once: a run without `-o`
/// (in-process or through the binary) writes data.arp where it stands,
/// which must never be the repository (cargo starts tests in the
/// package's folder). Every path the tests use is absolute.
///
/// That folder lives as long as the process (a static is never dropped),
/// so each process first removes the ones of test processes that ended.
pub fn leave_the_repository() {
    process_scratch();
}

/// The test process's own scratch folder (its working folder, see
/// [`leave_the_repository`]): for what a test process makes once and its
/// tests share.
pub fn process_scratch() -> &'static Path {
    static FOLDER: OnceLock<Scratch> = OnceLock::new();
    FOLDER.get_or_init(|| {
        remove_ended_processes_folders();
        let dir = scratch("cwd");
        std::env::set_current_dir(&dir).expect("a scratch working folder");
        dir
    })
}

/// Removes the `cwd` scratch folders of test processes that ended.
fn remove_ended_processes_folders() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name
            .to_str()
            .and_then(|n| n.strip_prefix(SCRATCH_PREFIX)?.strip_prefix("cwd-"))
        else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or("");
        if !pid.is_empty() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Builds every guest once per test process (build.py skips up-to-date
/// ones) and returns the path of `<example>.elf` for `target`.
pub fn guest(target: &str, example: &str) -> PathBuf {
    leave_the_repository();
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let status = Command::new("python3")
            .arg(repo_root().join("guest-shim/build.py"))
            .arg("--out")
            .arg(guests_dir())
            .status()
            .expect("python3 runs guest-shim/build.py");
        assert!(status.success(), "building the guests failed");
    });
    let path = guests_dir().join(target).join(format!("{example}.elf"));
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// Fails the test, saying what it needs and how to install it, unless
/// `program` is on PATH. The test is ignored where the build script found
/// the program missing (outside CI); this is what fails it under `CI`, or
/// when the program went away after the build.
pub fn require_tool(program: &str) {
    require(probe::Probe::Program(program));
}

/// [`require_tool`] for a third-party source tree (`freertos-kernel`).
pub fn require_third_party(name: &str) {
    require(probe::Probe::ThirdParty(name));
}

/// [`require_tool`] for a Rust guest target (`thumbv7em-none-eabi`).
pub fn require_rust_target(triple: &str) {
    require(probe::Probe::RustTarget(triple));
}

/// Makes the device node `path` (what /dev/null is), or fails the test
/// saying it needs mknod's capability.
pub fn require_null_device(path: &Path) {
    assert!(
        probe::make_null_device(path),
        "{}",
        probe::Probe::DeviceNodes.missing_message()
    );
}

fn require(need: probe::Probe) {
    assert!(need.present(), "{}", need.missing_message());
}

/// The expected console output of an example, kept beside its sources.
pub fn expected_output(example: &str) -> String {
    let path = repo_root()
        .join("guest-shim/examples")
        .join(example)
        .join("expected-output.txt");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The target folder and whether this is a release build: the test
/// executables live in `<target>/<profile>/deps/`.
pub fn build_dirs() -> (PathBuf, bool) {
    let exe = std::env::current_exe().expect("test executable path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps");
    let release = profile_dir.file_name().is_some_and(|n| n == "release");
    (profile_dir.to_owned(), release)
}

/// The `sim-host` binary of this build's profile, built through cargo once
/// per test process (`cargo test` builds no other package's binary, and a
/// binary left from an older build must never be tested by mistake; cargo
/// does not hold its lock while tests run).
pub fn sim_host_bin() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| build_bin("sim-host", "sim-host"))
        .clone()
}

/// The `chips-eval` binary of this build's profile, built like
/// [`sim_host_bin`].
pub fn chips_eval_bin() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| build_bin("chips-eval", "chips-eval"))
        .clone()
}

/// `cargo build -p package --bin bin` in this build's profile and target
/// folder; the binary's path.
fn build_bin(package: &str, bin: &str) -> PathBuf {
    let (dir, release) = build_dirs();
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo.args(["build", "-q", "-p", package, "--bin", bin]);
    if release {
        cargo.arg("--release");
    }
    let target_root = dir.parent().expect("target/<profile>");
    cargo.arg("--target-dir").arg(target_root);
    let status = cargo.current_dir(repo_root()).status().expect("cargo runs");
    assert!(status.success(), "building {bin} failed");
    let path = dir.join(bin);
    assert!(path.exists(), "{} does not exist", path.display());
    leave_the_repository();
    path
}

/// How every scratch folder's name begins: `<prefix><name>-<pid>-<n>`.
const SCRATCH_PREFIX: &str = "arpsim-e2e-";

/// A fresh scratch directory for one test, removed when the test is done
/// with it, and kept (its path in the failure output) when the test fails.
pub fn scratch(name: &str) -> Scratch {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("{SCRATCH_PREFIX}{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    Scratch(dir)
}

/// A test's scratch directory (see [`scratch`]).
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("scratch kept for the failed test: {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// What a recording run of a guest measured: the sample of each recorded
/// trace (its innermost section id and value, in file order) and the
/// run's total cycles and instructions.
pub struct Recorded {
    pub samples: Vec<(u16, u64)>,
    pub cycles: u64,
    pub instructions: u64,
}

/// The memory-model tests' measure: `example` (its own command line) on
/// the built-in `target` runs each loop twice, as kernels 2i+1 and 2i+2
/// with 100 and 200 iterations; for each `i` in `pairs`, the difference
/// of the two samples, which is 100 steady-state iterations.
pub fn pair_differences(target: &str, example: &str, pairs: std::ops::Range<u16>) -> Vec<u64> {
    let t = sim_host::model::target::builtin(target).unwrap();
    let r = record(t, target, example, example);
    let at = |sid: u16| r.samples.iter().find(|(k, _)| *k == sid).unwrap().1;
    pairs.map(|i| at(2 * i + 2) - at(2 * i + 1)).collect()
}

/// Records `example` on the built-in `target` twice: the samples and
/// the totals are identical (the models' state is plain data).
pub fn assert_reruns_identical(target: &str, example: &str) {
    let t = || sim_host::model::target::builtin(target).unwrap();
    let a = record(t(), target, example, example);
    let b = record(t(), target, example, example);
    assert_eq!(a.samples, b.samples);
    assert_eq!((a.cycles, a.instructions), (b.cycles, b.instructions));
}

/// Runs `example` of `guests_of` on the target `t` in the library (no
/// process), recording in record_all mode; the guest must exit with 0.
/// `cmdline` is what picolibc parses (the same for a guest's variants).
pub fn record(
    t: sim_host::model::target::Target,
    guests_of: &str,
    example: &str,
    cmdline: &str,
) -> Recorded {
    use arpsim::query::{Dataset, TraceValue};
    use sim_host::engine::{self, RunOptions, Stop};
    let image = sim_host::image::elf::GuestImage::load(&guest(guests_of, example), &t).unwrap();
    let dir = scratch(&format!("record-{guests_of}-{example}"));
    let file = dir.join("data.arp");
    let options = RunOptions {
        cmdline: cmdline.into(),
        arp: sim_host::host::arp_host::ArpOptions {
            file: Some(file.clone()),
            ..Default::default()
        },
        ..Default::default()
    };
    let outcome = engine::run(image, t, options).unwrap();
    assert_eq!(outcome.stop, Stop::Exit(0));
    let mut samples = Vec::new();
    if file.exists() {
        for trace in Dataset::load(&file).unwrap().traces() {
            let Some(TraceValue::Sample(value)) = trace.value(0) else {
                panic!("record_all data holds samples");
            };
            let sid = trace.stack_pos(trace.stack_length() - 1).unwrap();
            samples.push((sid, value.as_f64() as u64));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Recorded {
        samples,
        cycles: outcome.cycles,
        instructions: outcome.instructions,
    }
}

/// The samples of a record_all data.arp: (innermost section, cycles) per
/// trace that holds one, in the file's order.
pub fn recorded_samples(file: &Path) -> Vec<(u16, u64)> {
    use arpsim::query::{Dataset, TraceValue};
    let mut out = Vec::new();
    for trace in Dataset::load(file).unwrap().traces() {
        if let Some(TraceValue::Sample(value)) = trace.value(0) {
            let sid = trace.stack_pos(trace.stack_length() - 1).unwrap();
            out.push((sid, value.as_f64() as u64));
        }
    }
    out
}
