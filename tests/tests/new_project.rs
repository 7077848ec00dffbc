//! sim-host as an installed tool (issue 13): `cargo install`ed into a
//! scratch root and run from an empty folder outside the repository, with
//! HOME and XDG_DATA_HOME in the scratch folder too, it runs a guest on
//! every built-in target, and `sim-host new` projects build and run with
//! one command each: C with `make run` and Rust with `cargo run`, on every
//! built-in core.

use e2e_tests::{build_dirs, guest, process_scratch, repo_root, scratch};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// `cargo install --path sim-host --root <scratch>`, reusing this build's
/// compiled artifacts; returns the installed binary's folder.
fn installed() -> PathBuf {
    static DONE: OnceLock<PathBuf> = OnceLock::new();
    DONE.get_or_init(|| {
        let root = process_scratch().join("install");
        let (profile_dir, release) = build_dirs();
        let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        cargo
            .args(["install", "-q", "--locked", "--offline", "--path"])
            .arg(repo_root().join("sim-host"))
            .arg("--root")
            .arg(&root)
            .arg("--target-dir")
            .arg(profile_dir.parent().unwrap());
        if !release {
            cargo.arg("--debug");
        }
        let out = cargo.output().expect("cargo runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        root.join("bin")
    })
    .clone()
}

/// A command run in `dir` with the installed sim-host first on PATH and
/// nothing of this build or repository in its environment.
fn command(dir: &Path, home: &Path, program: &str) -> Command {
    let path = format!(
        "{}:{}",
        installed().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new(program);
    cmd.current_dir(dir)
        .env("PATH", path)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env_remove("SIM_HOST_TARGET_PATH")
        .env_remove("SIM_HOST_SDK_DIR")
        .env_remove("CARGO_TARGET_DIR");
    // rustup and cargo keep their own homes: the guest crates are fetched
    // and the Rust targets found as for the user.
    for var in ["RUSTUP_HOME", "CARGO_HOME"] {
        let default = std::env::var("HOME").map(|h| {
            Path::new(&h).join(if var == "RUSTUP_HOME" {
                ".rustup"
            } else {
                ".cargo"
            })
        });
        if let Some(v) = std::env::var_os(var).or_else(|| default.ok().map(Into::into)) {
            cmd.env(var, v);
        }
    }
    for (key, _) in std::env::vars() {
        if key.starts_with("CARGO_") && key != "CARGO_HOME" {
            cmd.env_remove(key);
        }
    }
    cmd
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn the_installed_binary_runs_every_built_in_target_from_an_empty_folder() {
    let home = scratch("installed-home");
    let empty = scratch("installed-empty");
    for target in ["cortex-m0", "cortex-m3", "cortex-m4", "rv32imac"] {
        let elf = empty.join(format!("{target}.elf"));
        std::fs::copy(guest(target, "filter"), &elf).unwrap();
        let out = command(&empty, &home, "sim-host")
            .args(["run", "-q", "--target", target])
            .arg(&elf)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{target}: {}", text(&out));
        assert!(text(&out).contains("checksum"), "{target}: {}", text(&out));
    }
    let out = command(&empty, &home, "sim-host")
        .args(["targets", "--show", "cortex-m4"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("name = \"cortex-m4\""));
    let _ = std::fs::remove_dir_all(&empty);
}

/// The example's output line and its section table, named in source
/// terms: the kernel's function and the file and line of its enter call.
fn assert_ran(out: &Output, name: &str, function: &str, file: &str) {
    let all = text(out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let line = format!("{name}: 8 blocks filtered, checksum 6eea77c0");
    assert!(all.contains(&line), "{all}");
    let kernel = all
        .lines()
        .find(|l| l.starts_with("2 > 1 "))
        .unwrap_or_else(|| panic!("no kernel row: {all}"));
    assert!(kernel.starts_with(&format!("2 > 1 {function}")), "{kernel}");
    assert!(kernel.contains(&format!("({file}:")), "{kernel}");
    assert!(kernel.contains("kernel          8"), "{kernel}");
}

/// Issue 25: `sim-host new --target <core>` builds and runs with `make
/// run` on every built-in core, hard-float cores included (the SDK's
/// flags pick picolibc's `v7e-m+fp/hard`, `v7e-m+dp/hard` and
/// `v8-m.main+fp/hard` libraries). A core whose compiler is not on PATH is
/// skipped, saying so, and fails the test under `CI`; with neither
/// compiler the test is ignored, and it never passes having run no core.
#[test]
#[cfg_attr(
    not(any(has_arm_gcc, has_riscv_gcc)),
    ignore = "needs arm-none-eabi-gcc or riscv64-unknown-elf-gcc (scripts/bootstrap.sh installs them)"
)]
fn a_new_c_project_builds_and_runs_with_make_run_on_every_core() {
    let home = scratch("new-c-home");
    let work = scratch("new-c");
    let mut skipped = Vec::new();
    let mut ran = 0;
    for target in sim_host::model::target::builtin_names() {
        let cc = sim_host::model::target::builtin(&target)
            .unwrap()
            .guest
            .cc
            .clone();
        if e2e_tests::probe::on_path(&cc).is_none() && !e2e_tests::probe::in_ci() {
            eprintln!("skipped {target}: needs {cc} (scripts/bootstrap.sh installs it)");
            skipped.push(target);
            continue;
        }
        e2e_tests::require_tool(&cc);
        let name = format!("demo-{target}");
        let out = command(&work, &home, "sim-host")
            .args(["new", &name, "--target", &target])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let out = command(&work.join(&name), &home, "make")
            .arg("run")
            .output()
            .unwrap();
        assert_ran(&out, &name, "main", "main.c");
        let build = work.join(&name).join("build").join(&target);
        assert!(build.join("data.arp").exists(), "{target}");
        assert!(build.join(format!("{name}.elf")).exists(), "{target}");
        ran += 1;
    }
    eprintln!("cores skipped: {skipped:?}");
    assert!(ran > 0, "no core ran: every compiler is missing");
    let _ = std::fs::remove_dir_all(&work);
}

/// The report: after a cortex-m4 build, `make run TARGET=cortex-m0`
/// reused the Thumb-2 objects and faulted on `add.w`. Each target now
/// builds in `build/<target>/`, so both run, and the first ELF is left as
/// it was.
#[test]
fn switching_target_in_a_c_project_rebuilds_for_the_new_core() {
    e2e_tests::require_tool("arm-none-eabi-gcc");
    let home = scratch("switch-home");
    let work = scratch("switch");
    let out = command(&work, &home, "sim-host")
        .args(["new", "sw", "--target", "cortex-m4"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let project = work.join("sw");
    let out = command(&project, &home, "make")
        .arg("run")
        .output()
        .unwrap();
    assert_ran(&out, "sw", "main", "main.c");
    let m4_elf = project.join("build/cortex-m4/sw.elf");
    let before = std::fs::read(&m4_elf).unwrap();
    let out = command(&project, &home, "make")
        .args(["run", "TARGET=cortex-m0"])
        .output()
        .unwrap();
    assert_ran(&out, "sw", "main", "main.c");
    assert!(project.join("build/cortex-m0/sw.elf").exists());
    assert_eq!(std::fs::read(&m4_elf).unwrap(), before);
    let _ = std::fs::remove_dir_all(&work);
}

/// Issue 45: the user had to edit the generated Makefile to add a source
/// outside `src/`, an include folder and the program's arguments. SRCS,
/// INCLUDES, CFLAGS and RUN_ARGS on make's command line now do it: the
/// program links a function from `lib/`, includes a header from `inc/`,
/// sees a -D of CFLAGS and prints the arguments RUN_ARGS gave it.
#[test]
fn a_c_project_takes_srcs_includes_cflags_and_run_args() {
    e2e_tests::require_tool("arm-none-eabi-gcc");
    let home = scratch("vars-home");
    let work = scratch("vars");
    let out = command(&work, &home, "sim-host")
        .args(["new", "vr", "--target", "cortex-m4"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let project = work.join("vr");
    for dir in ["lib", "inc"] {
        std::fs::create_dir_all(project.join(dir)).unwrap();
    }
    std::fs::write(project.join("inc/twice.h"), "int twice(int x);\n").unwrap();
    std::fs::write(
        project.join("lib/twice.c"),
        "#include \"twice.h\"\nint twice(int x) { return 2 * x; }\n",
    )
    .unwrap();
    std::fs::write(
        project.join("src/main.c"),
        "#include <stdio.h>\n#include <stdlib.h>\n#include <atomium_rp.h>\n#include \"twice.h\"\n\
         int main(int argc, char **argv)\n{\n    \
         arp_add_callbacks(arp_ullong, 0, 0, 0, 0, 0);\n    \
         arp_start(1, 2, arp_record_average, 0, 0, 0, 0, 0);\n    \
         for (int i = 1; i < argc; ++i) {\n        \
         arp_enter_kernel(1, 1, i);\n        \
         int t = twice(atoi(argv[i]));\n        \
         arp_leave_kernel(1, 1);\n        \
         printf(\"arg %d: %s twice %d (%d)\\n\", i, argv[i], t, LABEL);\n    }\n    \
         arp_finish();\n    return 0;\n}\n",
    )
    .unwrap();
    let out = command(&project, &home, "make")
        .args([
            "run",
            "SRCS=src/main.c lib/twice.c",
            "INCLUDES=inc",
            "CFLAGS=-DLABEL=7",
            "RUN_ARGS=21 4",
        ])
        .output()
        .unwrap();
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    // by value: picolibc's semihosting crt0 gives the program's name as
    // argv[1] too (a finding of its own, outside this test's subject)
    assert!(all.contains(": 21 twice 42 (7)"), "{all}");
    assert!(all.contains(": 4 twice 8 (7)"), "{all}");
    assert!(project.join("build/cortex-m4/obj/lib__twice.o").is_file());
    let _ = std::fs::remove_dir_all(&work);
}

/// The report: `-march=rv32imac_zicsr` (what `csrr` needs without
/// `-misa-spec=2.2`) made the link pick picolibc's default rv64 library
/// ("file in wrong format"). With it in CFLAGS and a CSR read in the
/// program, the project links against `rv32imac/ilp32` and runs.
#[test]
fn a_riscv_project_built_with_zicsr_links_the_rv32imac_library() {
    e2e_tests::require_tool("riscv64-unknown-elf-gcc");
    let home = scratch("zicsr-home");
    let work = scratch("zicsr");
    let out = command(&work, &home, "sim-host")
        .args(["new", "zc", "--target", "rv32imac"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let project = work.join("zc");
    std::fs::write(
        project.join("src/csr.c"),
        "unsigned hart_id(void)\n{\n    unsigned id;\n    \
         __asm__ volatile(\"csrr %0, mhartid\" : \"=r\"(id));\n    return id;\n}\n",
    )
    .unwrap();
    let out = command(&project, &home, "make")
        .args(["run", "CFLAGS=-march=rv32imac_zicsr"])
        .output()
        .unwrap();
    assert_ran(&out, "zc", "main", "main.c");
    let _ = std::fs::remove_dir_all(&work);
}

/// A `sim-host new --lang rust` project, made and run with `cargo run`
/// once per test process (in its process scratch folder), for its own test
/// and the callgrind_annotate one.
struct RustProject {
    name: String,
    home: PathBuf,
    work: PathBuf,
    /// What `cargo run` printed.
    run: Output,
    elf: PathBuf,
}

/// The Rust guest project of `target`: `(target, triple, main)` is one of
/// [`RUST_TARGETS`].
fn rust_project((target, triple, _): (&str, &str, &str)) -> &'static RustProject {
    static PROJECTS: [OnceLock<RustProject>; 2] = [OnceLock::new(), OnceLock::new()];
    let slot = RUST_TARGETS
        .iter()
        .position(|t| t.0 == target)
        .expect("a target of RUST_TARGETS");
    PROJECTS[slot].get_or_init(|| {
        e2e_tests::require_rust_target(triple);
        let home = process_scratch().join(format!("new-rust-home-{target}"));
        let work = process_scratch().join(format!("new-rust-{target}"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        let name = format!("rdemo_{}", target.replace('-', "_"));
        let out = command(&work, &home, "sim-host")
            .args(["new", &name, "--target", target, "--lang", "rust"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let run = command(&work.join(&name), &home, "cargo")
            .args(["run", "-q"])
            .output()
            .unwrap();
        let elf = work
            .join(&name)
            .join("target")
            .join(triple)
            .join("debug")
            .join(&name);
        RustProject {
            name,
            home,
            work,
            run,
            elf,
        }
    })
}

/// The built-in targets a Rust guest is tested on: name, Rust target
/// triple, and the mangled name's tail of the runtime's `main`.
const RUST_TARGETS: [(&str, &str, &str); 2] = [
    ("cortex-m4", "thumbv7em-none-eabi", "__cortex_m_rt_main"),
    (
        "rv32imac",
        "riscv32imac-unknown-none-elf",
        "__risc_v_rt__main",
    ),
];

fn new_rust_project_runs(target: (&str, &str, &str)) {
    let project = rust_project(target);
    assert_rust_ran(&project.run, &project.name, target.0);
}

/// A Rust project's run: [`assert_ran`], with every section named in
/// `main.rs` (the template links without any linker flag for the debug
/// information: issue 39 saw section 2 named `main (mul.rs:33)`, a
/// discarded function's line), and on Cortex-M the template's timing line:
/// the DWT cycle counter around section 2 (where the core has one) and
/// the SysTick interrupts of 10,000 cycles counted while it ran.
fn assert_rust_ran(out: &Output, name: &str, target: &str) {
    let t = sim_host::model::target::builtin(target).unwrap();
    let main = if t.arch == sim_host::model::target::Arch::Arm {
        "__cortex_m_rt_main"
    } else {
        "__risc_v_rt__main"
    };
    // demangled: the crate's own function, not `_ZN…17h…E`
    assert_ran(out, name, &format!("{name}::{main}"), "main.rs");
    let all = text(out);
    // the section table's rows (a memory-system table may follow)
    let rows: Vec<&str> = all
        .lines()
        .skip_while(|l| !l.starts_with("section trace"))
        .skip(1)
        // the rows end at the rest outside any section (issue 45)
        .take_while(|l| !l.is_empty() && !l.starts_with("(outside any section)"))
        .collect();
    assert_eq!(rows.len(), 2, "{target}: {all}");
    for row in &rows {
        assert!(row.contains("(main.rs:"), "{target}: {row}");
    }
    let Some(core) = t.system.core.as_ref() else {
        return;
    };
    // section 2's total cycles, the sixth column from the right (then the
    // mean, min, max and the two shares)
    let section: u64 = rows[0]
        .split_whitespace()
        .rev()
        .nth(5)
        .unwrap()
        .parse()
        .unwrap();
    let numbers = |line: &str| -> Vec<u64> {
        line.split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect()
    };
    let timing = all
        .lines()
        .filter_map(|l| l.strip_prefix(&format!("{name}: ")))
        .find(|l| l.contains("SysTick ticks"))
        .unwrap_or_else(|| panic!("{target}: no timing line: {all}"));
    let ticks = if core.profile == sim_host::model::cores::Profile::V6M {
        numbers(timing)[0]
    } else {
        let [cycles, ticks] = numbers(timing)[..] else {
            panic!("{target}: {timing}")
        };
        // the counter is read just before arp_start and just after
        // arp_finish, whose calls cost nothing: a few instructions more
        // (at most 16 of at most 4 cycles), each fetched with up to 8
        // stall cycles more from a board's flash with its caches off
        // (stm32f746: 7 wait states; `sections` counts them all), or with
        // an XIP cache's miss, a QMI line read (rp2350-arm: 108)
        let memory_system = t.flash.is_some() || t.l1cache.is_some() || t.xip.is_some();
        let stall = t
            .xip
            .as_ref()
            .map_or(8, |x| u64::from(x.miss_cycles).max(8));
        let around = if memory_system {
            16 * (4 + stall)
        } else {
            16 * 4
        };
        assert!(
            (section..=section + around).contains(&cycles),
            "{target}: {timing}, section 2 {section}"
        );
        ticks
    };
    // SysTick runs from just before arp_start to just after arp_finish
    assert!(
        [section / 10_000, section / 10_000 + 1].contains(&ticks),
        "{target}: {timing}, section 2 {section}"
    );
}

#[test]
#[cfg_attr(
    not(has_rust_thumbv7em),
    ignore = "needs the Rust target thumbv7em-none-eabi (scripts/bootstrap.sh adds it)"
)]
fn a_new_rust_project_builds_and_runs_with_cargo_run_on_cortex_m4() {
    new_rust_project_runs(RUST_TARGETS[0]);
}

#[test]
#[cfg_attr(
    not(has_rust_riscv32imac),
    ignore = "needs the Rust target riscv32imac-unknown-none-elf (scripts/bootstrap.sh adds it)"
)]
fn a_new_rust_project_builds_and_runs_with_cargo_run_on_rv32imac() {
    new_rust_project_runs(RUST_TARGETS[1]);
}

/// Issue 25: a `sim-host new --lang rust` project builds and runs with
/// `cargo run` on every other built-in core with a Rust target (cortex-m4
/// and rv32imac have tests of their own above): thumbv6m for the M0 and
/// M0+, thumbv7m, thumbv7em-none-eabihf for the M4F and M7 (cortex-m-rt
/// enables the FPU through CPACR), thumbv8m.main-none-eabihf for the M33,
/// riscv32imac for the E31. A core whose Rust target is not installed is
/// skipped, saying so, and fails the test under `CI`; with none of them
/// the test is ignored, and it never passes having run no core.
#[test]
#[cfg_attr(
    not(any(
        has_rust_thumbv6m,
        has_rust_thumbv7m,
        has_rust_thumbv7em_hf,
        has_rust_thumbv8m_main_hf,
        has_rust_riscv32imac
    )),
    ignore = "needs a Rust guest target of the cores it covers (scripts/bootstrap.sh adds them)"
)]
fn a_new_rust_project_runs_on_every_core_with_a_rust_target() {
    let home = scratch("new-rust-every-home");
    let work = scratch("new-rust-every");
    let mut skipped = Vec::new();
    let mut ran = 0;
    for target in sim_host::model::target::builtin_names() {
        if RUST_TARGETS.iter().any(|t| t.0 == target) {
            continue;
        }
        let t = sim_host::model::target::builtin(&target).unwrap();
        let Some(triple) = t.guest.rust_target.clone() else {
            continue;
        };
        if !e2e_tests::probe::rust_target_installed(&triple) && !e2e_tests::probe::in_ci() {
            eprintln!(
                "skipped {target}: needs the Rust target {triple} (scripts/bootstrap.sh adds it)"
            );
            skipped.push(target);
            continue;
        }
        e2e_tests::require_rust_target(&triple);
        let name = format!("r_{}", target.replace('-', "_"));
        let out = command(&work, &home, "sim-host")
            .args(["new", &name, "--target", &target, "--lang", "rust"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let run = command(&work.join(&name), &home, "cargo")
            .args(["run", "-q"])
            .output()
            .unwrap();
        assert_rust_ran(&run, &name, &target);
        ran += 1;
    }
    eprintln!("cores skipped: {skipped:?}");
    assert!(ran > 0, "no core ran: every Rust guest target is missing");
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
#[cfg_attr(
    not(all(has_rust_thumbv7em, has_callgrind_annotate)),
    ignore = "needs the Rust target thumbv7em-none-eabi and callgrind_annotate \
              (valgrind; scripts/bootstrap.sh installs both)"
)]
fn callgrind_annotate_shows_a_rust_guest_s_source_on_cortex_m4() {
    assert_annotated_rust_source(RUST_TARGETS[0]);
}

#[test]
#[cfg_attr(
    not(all(has_rust_riscv32imac, has_callgrind_annotate)),
    ignore = "needs the Rust target riscv32imac-unknown-none-elf and callgrind_annotate \
              (valgrind; scripts/bootstrap.sh installs both)"
)]
fn callgrind_annotate_shows_a_rust_guest_s_source_on_rv32imac() {
    assert_annotated_rust_source(RUST_TARGETS[1]);
}

/// `callgrind_annotate --auto=yes` on the Rust guest's callgrind profile
/// shows its source file with costs on its lines.
fn assert_annotated_rust_source(target: (&str, &str, &str)) {
    e2e_tests::require_tool("callgrind_annotate");
    let project = rust_project(target);
    let (target, file) = (target.0, "main.rs");
    let dir = scratch(&format!("annotate-{target}"));
    let profile = dir.join(format!("{target}.callgrind"));
    let out = command(&project.work, &project.home, "sim-host")
        .args(["run", "-q", "--target", target, "--callgrind"])
        .arg(&profile)
        .arg(&project.elf)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let out = Command::new("callgrind_annotate")
        .arg("--auto=yes")
        .arg(&profile)
        .output()
        .unwrap();
    let annotated = String::from_utf8_lossy(&out.stdout);
    let source = annotated
        .split("-- Auto-annotated source: ")
        .find(|part| part.lines().next().is_some_and(|l| l.ends_with(file)))
        .unwrap_or_else(|| panic!("{file} is not annotated: {annotated}"));
    // source lines with a cost in front of them
    let costed = source
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .count();
    let costed = costed >= 3;
    assert!(costed, "no costed source line in {file}: {source}");
}

#[test]
fn an_elf_for_another_core_gets_the_right_target_named() {
    let dir = scratch("wrong-arch");
    let run = |elf: PathBuf, target: &str| {
        Command::new(e2e_tests::sim_host_bin())
            .args(["run", "--target", target])
            .arg(elf)
            .output()
            .unwrap()
    };
    let out = run(guest("rv32imac", "filter"), "cortex-m4");
    assert_eq!(out.status.code(), Some(125));
    // every RISC-V target runs rv32imac code (issue 25 added sifive-e31,
    // issue 27 the rp2350 board preset)
    assert!(
        text(&out).contains("try --target with one of rp2350, rv32imac, sifive-e31"),
        "{}",
        text(&out)
    );
    let out = run(guest("cortex-m0", "filter"), "rv32imac");
    assert!(
        text(&out).contains("try --target cortex-m0"),
        "{}",
        text(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg_attr(
    not(has_cmake),
    ignore = "needs cmake (scripts/bootstrap.sh installs it)"
)]
fn the_sdk_cmake_toolchain_builds_a_guest_that_runs() {
    e2e_tests::require_tool("cmake");
    let home = scratch("cmake-home");
    let work = scratch("cmake");
    let out = command(&work, &home, "sim-host")
        .args(["new", "cdemo", "--target", "rv32imac"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let sdk_out = command(&work, &home, "sim-host")
        .args(["sdk", "--print-path"])
        .output()
        .unwrap();
    let sdk = String::from_utf8_lossy(&sdk_out.stdout).trim().to_owned();
    let project = work.join("cdemo");
    std::fs::write(
        project.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.16)\nproject(cdemo C)\n\
         add_executable(cdemo.elf src/main.c ${SIM_HOST_STUB_SOURCES})\n\
         target_compile_definitions(cdemo.elf PRIVATE ARP_SIM)\n",
    )
    .unwrap();
    let toolchain = format!("-DCMAKE_TOOLCHAIN_FILE={sdk}/cmake/rv32imac.cmake");
    for args in [
        vec!["-S", ".", "-B", "cmake-build", toolchain.as_str()],
        vec!["--build", "cmake-build"],
    ] {
        let out = command(&project, &home, "cmake")
            .args(&args)
            .output()
            .unwrap();
        assert!(out.status.success(), "cmake {args:?}: {}", text(&out));
    }
    let out = command(&project, &home, "sim-host")
        .args(["run", "--target", "rv32imac", "cmake-build/cdemo.elf"])
        .output()
        .unwrap();
    assert_ran(&out, "cdemo", "main", "main.c");
    let _ = std::fs::remove_dir_all(&work);
}

/// Two threads on two simulated cores, each with a float accumulator live
/// in S registers across the scheduler's slices (gcc -O2 keeps `acc` in
/// s15 and `step` in s14 in both threads). Exact by hand: 0 + 200000 x
/// 0.25 = 50000 and 1000 - 200000 x 0.5 = -99000, every partial sum a
/// multiple of 0.25 below 2^17, so representable in a float. Before the
/// thread switch saved S0-S31 and FPSCR, the threads shared them and this
/// printed `0 -198599` on cortex-m4f.
#[test]
fn float_registers_survive_thread_switches_on_fpu_cores() {
    e2e_tests::require_tool("arm-none-eabi-gcc");
    let home = scratch("fpthreads-home");
    let work = scratch("fpthreads");
    let main_c = "#include <stdio.h>\n#include <simthread.h>\n\
        #define STEPS 200000\nstatic volatile int out[2];\n\
        static void work(void *arg)\n{\n    int id = (int)(long)arg;\n\
            float acc = id ? 1000.0f : 0.0f;\n    float step = id ? -0.5f : 0.25f;\n\
            for (int i = 0; i < STEPS; ++i)\n        acc += step;\n    out[id] = (int)acc;\n}\n\
        int main(void)\n{\n    simthread_t t[2];\n\
            for (long i = 0; i < 2; ++i)\n        simthread_create(&t[i], work, (void *)i);\n\
            for (int i = 0; i < 2; ++i)\n        simthread_join(t[i]);\n\
            printf(\"%d %d\\n\", out[0], out[1]);\n    return 0;\n}\n";
    for target in ["cortex-m4f", "cortex-m7", "cortex-m33"] {
        let name = format!("fpt-{target}");
        let out = command(&work, &home, "sim-host")
            .args(["new", &name, "--target", target])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let project = work.join(&name);
        std::fs::write(project.join("src/main.c"), main_c).unwrap();
        let out = command(&project, &home, "make").output().unwrap();
        assert!(out.status.success(), "{target}: {}", text(&out));
        let out = command(&project, &home, "sim-host")
            .args(["run", "-q", "--cores", "2", "--target", target])
            .arg(format!("build/{target}/{name}.elf"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{target}: {}", text(&out));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "50000 -99000\n",
            "{target}"
        );
    }
    let _ = std::fs::remove_dir_all(&work);
}
