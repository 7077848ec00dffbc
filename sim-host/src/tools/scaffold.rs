//! `sim-host new`: a guest project of the user's own, outside this
//! repository, that builds with one command and runs in the simulator with
//! one command (`make run` for C, `cargo run` for Rust), with an example
//! kernel instrumented with the ARP API. The C project takes its flags
//! from the SDK's Makefile fragment; the Rust project uses the core's
//! runtime crate (cortex-m-rt or riscv-rt), semihosting for its output and
//! exit, and the SDK's `arp-guest` crate for the ARP API.

use crate::model::target::{Arch, RegionKind, Target};
use std::path::{Path, PathBuf};

/// The language of a new project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    C,
    Rust,
}

#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    #[error("{0}: already exists; choose another name or remove it")]
    Exists(PathBuf),
    #[error("{0}: a project name is letters, digits, `-` and `_`, starting with a letter")]
    BadName(String),
    #[error("target `{0}` has no Rust target triple (`rust_target` in its [guest] table)")]
    NoRustTarget(String),
    #[error("target `{target}` has no `{kind}` memory region for memory.x")]
    NoRegion { target: String, kind: &'static str },
    #[error("{file}: {source}")]
    Write {
        file: PathBuf,
        source: std::io::Error,
    },
}

/// Creates project `name` in `parent`; returns its folder. `sim_host` is
/// the command the project runs. A Rust project carries its own copy of the
/// SDK's `arp-guest` crate and the stubs it compiles (`arp-sdk/`, a
/// relative path dependency), so its `Cargo.toml` names no folder outside
/// the project: it can be committed, and survives an upgrade of sim-host.
pub fn create(
    parent: &Path,
    name: &str,
    target: &Target,
    lang: Lang,
    sim_host: &str,
) -> Result<PathBuf, ScaffoldError> {
    check_name(name)?;
    let dir = parent.join(name);
    // any entry of that name, a dangling symbolic link too (it once got
    // as far as "Makefile: File exists"; issue 30, N06)
    if std::fs::symlink_metadata(&dir).is_ok() {
        return Err(ScaffoldError::Exists(dir));
    }
    let files = match lang {
        Lang::C => c_files()
            .into_iter()
            .map(|(path, text)| (path.to_owned(), text))
            .collect(),
        Lang::Rust => rust_files(target, sim_host)?,
    };
    for (relative, text) in files {
        let text = text
            .replace("{{NAME}}", name)
            .replace("{{TARGET}}", &target.name);
        write(&dir.join(relative), &text)?;
    }
    Ok(dir)
}

fn check_name(name: &str) -> Result<(), ScaffoldError> {
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(ScaffoldError::BadName(arpsim::error::quote(name)))
    }
}

fn write(path: &Path, text: &str) -> Result<(), ScaffoldError> {
    let err = |source| ScaffoldError::Write {
        file: path.to_owned(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(err)?;
    }
    arpsim::output::write(path, text).map_err(err)
}

fn c_files() -> Vec<(&'static str, String)> {
    vec![
        (
            "Makefile",
            include_str!("../../templates/c/Makefile").into(),
        ),
        (
            "src/main.c",
            include_str!("../../templates/c/main.c").into(),
        ),
        (
            "README.md",
            include_str!("../../templates/c/README.md").into(),
        ),
        (".gitignore", "/build\n".into()),
    ]
}

/// What differs between the Arm and RISC-V runtime crates.
struct Runtime {
    dependencies: &'static str,
    uses: &'static str,
    exit: &'static str,
    rustflags: &'static str,
}

fn runtime(arch: Arch) -> Runtime {
    match arch {
        Arch::Arm => Runtime {
            dependencies: "cortex-m = \"0.7\"\ncortex-m-rt = \"0.7\"\ncortex-m-semihosting = \"0.5\"\n\
                           panic-semihosting = { version = \"0.6\", features = [\"exit\"] }",
            uses: "use cortex_m_rt::{entry, exception};\n\
                   use cortex_m_semihosting::{debug, hprintln};\nuse panic_semihosting as _;",
            exit: "debug::exit(debug::EXIT_SUCCESS);\n    loop {}",
            rustflags: "\"-C\", \"link-arg=-Tlink.x\"",
        },
        Arch::Riscv => Runtime {
            dependencies: "riscv-rt = \"0.12\"\nriscv = { version = \"0.12\", features = [\"critical-section-single-hart\"] }\n\
                           riscv-semihosting = \"0.1\"\npanic-halt = \"1\"",
            uses: "use riscv_rt::entry;\nuse riscv_semihosting::{debug, hprintln};\nuse panic_halt as _;\n\
                   // Linked for its single-hart critical section (semihosting output).\nuse riscv as _;",
            exit: "debug::exit(debug::EXIT_SUCCESS);\n    loop {}",
            rustflags: "\"-C\", \"link-arg=-Tmemory.x\", \"-C\", \"link-arg=-Tlink.x\"",
        },
    }
}

/// How a Cortex-M project times its work as firmware does: SysTick
/// interrupts counted by an `#[exception]` handler, and the DWT cycle
/// counter where the core has one (not ARMv6-M), unlocked first (a
/// Cortex-M7's DWT ignores writes until then; elsewhere the unlock is
/// ignored). The template's `{{TIMER_*}}` text; none on RISC-V.
#[derive(Default)]
struct Timing {
    doc: &'static str,
    uses: &'static str,
    items: &'static str,
    start: String,
    report: String,
}

const SYSTICK_ITEMS: &str = "
/// SysTick's reload value: an interrupt every SYSTICK_RELOAD + 1 core cycles.
const SYSTICK_RELOAD: u32 = 9_999;

/// SysTick interrupts taken.
static TICKS: AtomicU32 = AtomicU32::new(0);

#[exception]
fn SysTick() {
    TICKS.store(TICKS.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}
";

const SYSTICK_START: &str =
    "    // SysTick on the core's clock: an interrupt every SYSTICK_RELOAD + 1 cycles
    let mut syst = p.SYST;
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(SYSTICK_RELOAD);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();
";

const DWT_START: &str = "    // the DWT cycle counter: trace enabled, the software lock opened (a
    // Cortex-M7's DWT ignores writes until then), counting
    p.DCB.enable_trace();
    DWT::unlock();
    p.DWT.enable_cycle_counter();
";

fn timing(target: &Target) -> Timing {
    if target.arch != Arch::Arm {
        return Timing::default();
    }
    let v6m = target
        .system
        .core
        .as_ref()
        .is_some_and(|c| c.profile == crate::model::cores::Profile::V6M);
    let ticks = "    syst.disable_counter();\n    let ticks = TICKS.load(Ordering::Relaxed);\n";
    if v6m {
        return Timing {
            uses: "use core::sync::atomic::{AtomicU32, Ordering};\n\
                   use cortex_m::peripheral::syst::SystClkSource;\n\
                   use cortex_m::peripheral::Peripherals;\n",
            doc: "//!\n//! It counts SysTick interrupts with an `#[exception]` handler while it\n\
                  //! works (ARMv6-M has no DWT cycle counter).\n",
            items: SYSTICK_ITEMS,
            start: format!("    let p = Peripherals::take().unwrap();\n{SYSTICK_START}"),
            report: format!("{ticks}    hprintln!(\"{{{{NAME}}}}: {{}} SysTick ticks\", ticks);\n"),
        };
    }
    Timing {
        uses: "use core::sync::atomic::{AtomicU32, Ordering};\n\
               use cortex_m::peripheral::syst::SystClkSource;\n\
               use cortex_m::peripheral::{Peripherals, DWT};\n",
        doc: "//!\n//! It times its work as firmware does: the DWT cycle counter, and SysTick\n\
              //! interrupts counted by an `#[exception]` handler.\n",
        items: SYSTICK_ITEMS,
        start: format!(
            "    let mut p = Peripherals::take().unwrap();\n{DWT_START}{SYSTICK_START}    \
             let start = DWT::cycle_count();\n"
        ),
        report: format!(
            "    let cycles = DWT::cycle_count().wrapping_sub(start);\n{ticks}    \
             hprintln!(\"{{{{NAME}}}}: {{}} cycles by DWT_CYCCNT, {{}} SysTick ticks\", cycles, ticks);\n"
        ),
    }
}

/// The folder of a Rust project that holds its copy of the SDK's crate.
pub const VENDORED_SDK: &str = "arp-sdk";

fn rust_files(target: &Target, sim_host: &str) -> Result<Vec<(String, String)>, ScaffoldError> {
    let triple = target
        .guest
        .rust_target
        .clone()
        .ok_or_else(|| ScaffoldError::NoRustTarget(target.name.clone()))?;
    let rt = runtime(target.arch);
    let timing = timing(target);
    let fill = |text: &str| {
        text.replace("{{TIMER_DOC}}", timing.doc)
            .replace("{{TIMER_ITEMS}}", timing.items)
            .replace("{{TIMER_START}}", &timing.start)
            .replace("{{TIMER_REPORT}}", &timing.report)
            .replace("{{RUST_TARGET}}", &triple)
            .replace("{{SIM_HOST}}", sim_host)
            .replace("{{RUNTIME_DEPENDENCIES}}", rt.dependencies)
            .replace("{{RUNTIME_USE}}", &format!("{}{}", timing.uses, rt.uses))
            .replace("{{EXIT}}", rt.exit)
            .replace("{{RUSTFLAGS}}", rt.rustflags)
    };
    let mut files: Vec<(String, String)> = vec![
        (
            "Cargo.toml",
            fill(include_str!("../../templates/rust/Cargo.toml")),
        ),
        (
            ".cargo/config.toml",
            fill(include_str!("../../templates/rust/config.toml")),
        ),
        (
            "build.rs",
            fill(include_str!("../../templates/rust/build.rs")),
        ),
        (
            "src/main.rs",
            fill(include_str!("../../templates/rust/main.rs")),
        ),
        (
            "README.md",
            fill(include_str!("../../templates/rust/README.md")),
        ),
        ("memory.x", memory_x(target)?),
        (".gitignore", "/target\n".into()),
    ]
    .into_iter()
    .map(|(path, text): (&str, String)| (path.to_owned(), text))
    .collect();
    // the SDK's Rust crate with the C files its build script compiles
    // (`../../src`, `../../include`), in the SDK's own layout
    for (path, text) in crate::tools::sdk::files() {
        if ["rust/arp-guest/", "src/", "include/"]
            .iter()
            .any(|prefix| path.starts_with(prefix))
        {
            files.push((format!("{VENDORED_SDK}/{path}"), text));
        }
    }
    Ok(files)
}

/// The linker's view of the target's memory map, as the runtime crates
/// expect it (cortex-m-rt: FLASH and RAM; riscv-rt: the same with region
/// aliases). FLASH and RAM are the target's largest flash and RAM regions
/// (the lowest of equal ones): not a part's tightly-coupled or
/// core-coupled RAM (the STM32F746's 16 KiB ITCM at 0, the STM32F407's
/// CCM), which cortex-m-rt would put the stack on top of.
pub fn memory_x(target: &Target) -> Result<String, ScaffoldError> {
    let second_view = |r: &crate::model::target::Region| {
        target
            .flash
            .as_ref()
            .is_some_and(|f| f.mirror.is_some() && f.region == r.name)
    };
    let region = |kind: RegionKind, label: &'static str| {
        target
            .regions
            .iter()
            .filter(|r| r.kind == kind)
            // the largest, the lowest among equals, a flash's second view
            // (stm32f746: the ITCM interface's, `[flash]` with a mirror)
            // after the view it mirrors
            .min_by_key(|r| (std::cmp::Reverse(r.size), second_view(r), r.start))
            .map(|r| {
                format!(
                    "  {label} : ORIGIN = {:#010x}, LENGTH = {:#x}\n",
                    r.start, r.size
                )
            })
            .ok_or(ScaffoldError::NoRegion {
                target: target.name.clone(),
                kind: label,
            })
    };
    let mut text = format!(
        "/* The memory map of sim-host's `{}` target. */\nMEMORY\n{{\n{}{}}}\n",
        target.name,
        region(RegionKind::Flash, "FLASH")?,
        region(RegionKind::Ram, "RAM")?
    );
    if target.arch == Arch::Riscv {
        for (alias, region) in [
            ("REGION_TEXT", "FLASH"),
            ("REGION_RODATA", "FLASH"),
            ("REGION_DATA", "RAM"),
            ("REGION_BSS", "RAM"),
            ("REGION_HEAP", "RAM"),
            ("REGION_STACK", "RAM"),
        ] {
            text += &format!("REGION_ALIAS(\"{alias}\", {region});\n");
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_x_takes_the_main_flash_and_ram() {
        let memory = |name| memory_x(&crate::model::target::builtin(name).unwrap()).unwrap();
        let f746 = memory("stm32f746");
        assert!(
            f746.contains("RAM : ORIGIN = 0x20000000, LENGTH = 0x50000"),
            "{f746}"
        );
        assert!(f746.contains("FLASH : ORIGIN = 0x08000000"), "{f746}");
        let f407 = memory("stm32f407");
        assert!(
            f407.contains("RAM : ORIGIN = 0x20000000, LENGTH = 0x20000"),
            "{f407}"
        );
        let rp2040 = memory("rp2040");
        assert!(rp2040.contains("FLASH : ORIGIN = 0x10000000"), "{rp2040}");
    }

    #[test]
    fn names_are_checked_and_nothing_is_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let t = crate::model::target::builtin("cortex-m4").unwrap();
        for bad in ["", "1x", "a/b", "../x", "a b"] {
            let err = create(dir.path(), bad, &t, Lang::C, "sim-host").unwrap_err();
            assert!(matches!(err, ScaffoldError::BadName(_)), "{bad}: {err}");
        }
        std::fs::create_dir(dir.path().join("taken")).unwrap();
        let err = create(dir.path(), "taken", &t, Lang::C, "sim-host").unwrap_err();
        assert!(matches!(err, ScaffoldError::Exists(_)));
        std::os::unix::fs::symlink(dir.path().join("nowhere"), dir.path().join("dangling"))
            .unwrap();
        let err = create(dir.path(), "dangling", &t, Lang::C, "sim-host").unwrap_err();
        assert!(matches!(err, ScaffoldError::Exists(_)), "{err}");
        assert!(
            err.to_string().contains("dangling: already exists"),
            "{err}"
        );
        assert!(!dir.path().join("nowhere").exists());
    }

    #[test]
    fn projects_name_their_target_everywhere() {
        let dir = tempfile::tempdir().unwrap();
        for (name, target) in [("c4", "cortex-m4"), ("r5", "rv32imac")] {
            let t = crate::model::target::builtin(target).unwrap();
            let c = create(dir.path(), name, &t, Lang::C, "sim-host").unwrap();
            let make = std::fs::read_to_string(c.join("Makefile")).unwrap();
            assert!(make.contains(&format!("TARGET ?= {target}")));
            let rust_name = format!("{name}-rs");
            let r = create(dir.path(), &rust_name, &t, Lang::Rust, "sim-host").unwrap();
            let config = std::fs::read_to_string(r.join(".cargo/config.toml")).unwrap();
            let triple = t.guest.rust_target.as_deref().unwrap();
            assert!(
                config.contains(&format!("target = \"{triple}\"")),
                "{config}"
            );
            assert!(config.contains(&format!("--target {target}")), "{config}");
            let memory = std::fs::read_to_string(r.join("memory.x")).unwrap();
            assert!(
                memory.contains("FLASH") && memory.contains("RAM"),
                "{memory}"
            );
            for file in ["Cargo.toml", "src/main.rs", "README.md"] {
                let text = std::fs::read_to_string(r.join(file)).unwrap();
                assert!(!text.contains("{{"), "{file} has an unfilled placeholder");
            }
            // the crate is the project's own: a relative path, no SDK folder
            let cargo = std::fs::read_to_string(r.join("Cargo.toml")).unwrap();
            assert!(
                cargo.contains("arp-guest = { path = \"arp-sdk/rust/arp-guest\" }"),
                "{cargo}"
            );
            assert!(
                !cargo.contains(&dir.path().display().to_string()),
                "{cargo}"
            );
            for file in [
                "arp-sdk/rust/arp-guest/Cargo.toml",
                "arp-sdk/rust/arp-guest/build.rs",
                "arp-sdk/src/arp_stubs.c",
                "arp-sdk/include/atomium_rp.h",
            ] {
                assert!(r.join(file).is_file(), "{file}");
            }
        }
    }
}
