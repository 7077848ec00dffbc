//! guest-shim: the header's three compilation modes (ARP manual 6.3) and the
//! entry-point stubs the host intercepts (DESIGN.md decision 1).

use e2e_tests::{guest, repo_root, require_tool, scratch};
use goblin::elf::Elf;
use std::collections::HashMap;
use std::process::Command;

/// Every function of manual section 6 plus the two ARP_SIM entry points.
const ENTRY_POINTS: &[&str] = &[
    "arp_enter",
    "arp_enter_kernel",
    "arp_enter_profiled",
    "arp_leave",
    "arp_leave_kernel",
    "arp_leave_profiled",
    "arp_spawned",
    "arp_join",
    "arp_add_callbacks",
    "arp_start",
    "arp_finish",
    "arp_set_file_name",
    "arp_set_output_file_format",
    "arpsim_add_callbacks",
    "arpsim_start",
    "arp_load_data",
    "arp_get_mode",
    "arp_switch_mode",
    "arp_free_data",
    "arp_get_data_mult",
    "arp_get_data_type",
    "arp_get_nTraces",
    "arp_get_trace",
    "arp_free_trace",
    "arp_trace_get_count",
    "arp_trace_get_stack_length",
    "arp_trace_get_stack_pos",
    "arp_trace_get_stack_index",
    "arp_trace_get_value",
];

fn function_symbols(path: &std::path::Path) -> HashMap<String, u64> {
    let bytes = std::fs::read(path).unwrap();
    let elf = Elf::parse(&bytes).unwrap();
    elf.syms
        .iter()
        .filter(|s| s.is_function())
        .filter_map(|s| Some((elf.strtab.get_at(s.st_name)?.to_owned(), s.st_value)))
        .collect()
}

#[test]
fn every_entry_point_is_a_separate_function_in_sim_builds() {
    for target in ["cortex-m0", "cortex-m3", "cortex-m4", "rv32imac"] {
        let symbols = function_symbols(&guest(target, "filter"));
        let mut addresses = HashMap::new();
        for name in ENTRY_POINTS {
            let addr = *symbols
                .get(*name)
                .unwrap_or_else(|| panic!("{target}: no function symbol {name}"));
            if let Some(other) = addresses.insert(addr & !1, *name) {
                panic!("{target}: {name} and {other} share address {addr:#x}");
            }
        }
    }
}

#[test]
fn arp_none_builds_have_no_instrumentation_left() {
    for target in ["cortex-m0", "cortex-m3", "cortex-m4", "rv32imac"] {
        let symbols = function_symbols(&guest(target, "filter-none"));
        let left: Vec<_> = symbols.keys().filter(|n| n.starts_with("arp")).collect();
        assert!(
            left.is_empty(),
            "{target}: ARP_NONE build still has {left:?}"
        );
        // and the program itself is there
        assert!(symbols.contains_key("filter_horizontally"));
    }
}

/// The header compiles cleanly with `compiler` as `lang`, in the default
/// mode, with ARP_SIM and with ARP_NONE, and the remapping does what 6.3
/// says.
fn header_compiles_in_every_mode(compiler: &str, lang: &str) {
    require_tool(compiler);
    require_tool("nm");
    let dir = scratch(&format!("arp-header-{lang}"));
    let source = dir.join("use.c");
    std::fs::write(
        &source,
        r#"#include <atomium_rp.h>
#define THREE 3
ARP_SECTION_NAME(THREE, "three \"quoted\"");
static void enter(const arp_sid s, void *d, void *c) { (void)s; (void)d; (void)c; }
static void leave(const arp_sid s, void *d, void *c) { (void)s; (void)d; (void)c; }
int main(void) {
    int side_effects = 0;
    arp_add_callbacks(arp_long, enter, leave, 0, 0, 0);
    arp_start(1, 8, arp_record_all, 0, 0, 0, 0, 0);
    arp_enter(1, 2, side_effects++);
    arp_enter_kernel(1, 1, 0);
    arp_leave_kernel(1, 1);
    arp_leave(1, 2);
    arp_finish();
    ARP_SECTION_NAME(65535, "four");
    (void)enter; (void)leave; /* dropped by the ARP_SIM and ARP_NONE macros */
#if defined(ARP_NONE)
    return side_effects; /* 0: arguments are not evaluated */
#else
    return 0;
#endif
}
"#,
    )
    .unwrap();
    let include = format!("-I{}", repo_root().join("guest-shim/include").display());
    for mode in [None, Some("-DARP_SIM"), Some("-DARP_NONE")] {
        let mut cmd = Command::new(compiler);
        cmd.args([
            "-x",
            lang,
            "-Wall",
            "-Wextra",
            "-Werror",
            "-Wno-ignored-qualifiers",
        ])
        .arg(&include)
        .arg("-c")
        .arg(&source)
        .arg("-o")
        .arg(dir.join("use.o"));
        cmd.args(mode);
        if lang == "c" {
            cmd.arg("-std=c99").arg("-pedantic");
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{compiler} {mode:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // ARP_SIM calls arpsim_*; ARP_NONE calls nothing
        let nm = Command::new("nm").arg(dir.join("use.o")).output().unwrap();
        let symbols = String::from_utf8_lossy(&nm.stdout).to_string();
        match mode {
            Some("-DARP_SIM") => {
                assert!(symbols.contains("arpsim_add_callbacks"), "{symbols}");
                assert!(symbols.contains("arpsim_start"), "{symbols}");
                assert!(!symbols.contains(" arp_start"), "{symbols}");
            }
            Some("-DARP_NONE") => assert!(!symbols.contains("arp"), "{symbols}"),
            _ => assert!(symbols.contains("arp_start"), "{symbols}"),
        }
        // ARP_SECTION_NAME: records in a section that is not loaded, none
        // with ARP_NONE
        let object = std::fs::read(dir.join("use.o")).unwrap();
        let names = section_names_of(&object);
        match mode {
            Some("-DARP_NONE") => assert_eq!(names, None, "{compiler}"),
            _ => {
                let names = names.expect("the object has .arp_names");
                assert!(names.problems.is_empty(), "{:?}", names.problems);
                let expected: std::collections::BTreeMap<u16, String> = [
                    (3, "three \"quoted\"".to_owned()),
                    (65535, "four".to_owned()),
                ]
                .into();
                assert_eq!(names.by_sid, expected, "{compiler} {mode:?}");
            }
        }
    }
}

/// The names of an object's `.arp_names` (checked to be not allocated).
fn section_names_of(object: &[u8]) -> Option<sim_host::image::arp_names::GivenNames> {
    let elf = Elf::parse(object).unwrap();
    let sh = elf
        .section_headers
        .iter()
        .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".arp_names"))?;
    assert_eq!(sh.sh_flags, 0, ".arp_names must not be allocated");
    let range = sh.file_range().expect("it has contents");
    Some(sim_host::image::arp_names::parse(&object[range]))
}

#[test]
#[cfg_attr(
    not(has_gcc),
    ignore = "needs a host gcc (scripts/bootstrap.sh installs it)"
)]
fn header_compiles_in_every_mode_as_c() {
    header_compiles_in_every_mode("gcc", "c");
}

#[test]
#[cfg_attr(not(has_gxx), ignore = "needs a host g++ (apt-get install g++)")]
fn header_compiles_in_every_mode_as_cpp() {
    header_compiles_in_every_mode("g++", "c++");
}

/// Issue 39: a preset stack gives way to `-Wl,--defsym=__stack_size=N`
/// (picolibc.ld's own convention, `DEFINED(__stack_size) ? ...`). A
/// program whose .bss does not fit beside the preset stack fails to link
/// with it, links with a smaller one, has that stack in its ELF (the
/// symbol and the `.stack` region), and runs. With the SDK's copy of the
/// linker scripts, on the RP2040 map (224 KiB of stack in 264 KiB of RAM)
/// and an MPS2 map (256 KiB in 4 MiB).
#[test]
fn a_preset_stack_gives_way_to_defsym() {
    let dir = scratch("stack-defsym");
    let sdk = dir.join("sdk");
    let out = Command::new(e2e_tests::sim_host_bin())
        .args(["sdk", "install"])
        .arg(&sdk)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // (target, .bss bytes, a stack that leaves room for them)
    for (target, bss, stack) in [
        ("rp2040", 128 * 1024, 0x8000u64),
        ("cortex-m0plus", 128 * 1024, 0x8000),
        ("cortex-m3", 4000 * 1024, 0x10000),
    ] {
        let work = dir.join(target);
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(
            work.join("big.c"),
            format!(
                "#include <stdio.h>\nchar big[{bss}];\n\
                 int main(int argc, char **argv) {{\n    (void)argv;\n    \
                 big[sizeof big - argc] = 7;\n    \
                 printf(\"%d\\n\", big[sizeof big - argc]);\n    return 0;\n}}\n"
            ),
        )
        .unwrap();
        std::fs::write(
            work.join("Makefile"),
            format!(
                "include {}/make/{target}.mk\n\
                 big.elf: big.c\n\t$(CC) $(SDK_CFLAGS) $(CFLAGS) big.c $(SDK_LDFLAGS) -o $@\n",
                sdk.display()
            ),
        )
        .unwrap();
        let make = |cflags: &str| {
            let _ = std::fs::remove_file(work.join("big.elf"));
            Command::new("make")
                .current_dir(&work)
                .arg(format!("CFLAGS={cflags}"))
                .output()
                .unwrap()
        };
        let preset = make("");
        let said = String::from_utf8_lossy(&preset.stderr);
        assert!(
            !preset.status.success(),
            "{target}: links with the preset stack"
        );
        assert!(said.contains("region `ram' overflowed"), "{target}: {said}");
        let out = make(&format!("-Wl,--defsym=__stack_size={stack:#x}"));
        assert!(
            out.status.success(),
            "{target}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let bytes = std::fs::read(work.join("big.elf")).unwrap();
        let elf = Elf::parse(&bytes).unwrap();
        let stack_size = elf
            .syms
            .iter()
            .find(|s| elf.strtab.get_at(s.st_name) == Some("__stack_size"))
            .expect("__stack_size")
            .st_value;
        assert_eq!(stack_size, stack, "{target}");
        let region = elf
            .section_headers
            .iter()
            .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".stack"))
            .expect(".stack");
        assert_eq!(region.sh_size, stack, "{target}");
        let run = Command::new(e2e_tests::sim_host_bin())
            .args(["run", "-q", "--target", target])
            .arg(work.join("big.elf"))
            .output()
            .unwrap();
        assert_eq!(
            run.status.code(),
            Some(0),
            "{target}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&run.stdout), "7\n", "{target}");
    }
}
