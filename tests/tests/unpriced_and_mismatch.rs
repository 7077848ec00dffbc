//! Issue 25's "Done when" end to end: an instruction the target's table
//! cannot price stops the run (exit 125, naming the mnemonic, where it is
//! and the missing class) unless `--allow-unpriced` counts it; an ELF
//! built for another core is refused in each direction (a hard-float ELF
//! on a core without an FPU, a double-precision FPv5 ELF on a
//! single-precision FPv4 core) with the
//! right target suggested, and `--force-target` overrides the check.

use e2e_tests::{guest, scratch, sim_host_bin};
use std::path::Path;
use std::process::{Command, Output};

fn sim_host(dir: &Path, args: &[&str], elf: &Path) -> Output {
    Command::new(sim_host_bin())
        .current_dir(dir)
        .args(["run", "-o", "data.arp"])
        .args(args)
        .arg(elf)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// cortex-m4f's own description without its `fp_div` row: microbench's
/// kernel 23 (`loop_vdiv_chain`, microbench.S) is 100 iterations of four
/// `vdiv.f32 s0, s0, s1`, so the run stops at the first one, and with
/// `--allow-unpriced` counts 4 x 100 = 400 executions of it.
#[test]
fn a_table_without_a_class_stops_at_its_first_instruction() {
    let dir = scratch("unpriced");
    let shown = Command::new(sim_host_bin())
        .args(["targets", "--show", "cortex-m4f"])
        .output()
        .unwrap();
    assert!(shown.status.success());
    let text = String::from_utf8(shown.stdout).unwrap();
    let without: String = text
        .lines()
        .filter(|l| !l.starts_with("fp_div ="))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(
        without.lines().count() + 1,
        text.lines().count(),
        "one row removed"
    );
    std::fs::write(dir.join("nodiv.toml"), without).unwrap();
    let elf = guest("cortex-m4f", "microbench");
    let out = sim_host(&dir, &["-q", "--target-file", "nodiv.toml"], &elf);
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("unpriced instruction `vdiv.f32 s0, s0, s1`"),
        "{err}"
    );
    assert!(err.contains("at loop_vdiv_chain+"), "{err}");
    assert!(err.contains("no row for class `fp_div`"), "{err}");

    let out = sim_host(
        &dir,
        &["--allow-unpriced", "--target-file", "nodiv.toml"],
        &elf,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("400 execution(s)"), "{err}");
    assert!(err.contains("vdiv.f32 (fp_div) 400"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hard-float cortex-m4f ELF on cortex-m4 (no FPU): refused, cortex-m4f
/// suggested. The other way, a cortex-m7 ELF (FPv5-D16, double precision)
/// on cortex-m4f (FPv4-SP): refused, cortex-m7 suggested. (A cortex-m33
/// ELF on cortex-m4f is refused earlier, by the memory map: AN505's
/// 0x10000000 is not mapped there.) A cortex-m4 (soft-float Armv7E-M) ELF on
/// cortex-m4f passes the check; `--force-target` skips the check, so the
/// refused pair then runs (and faults where cortex-m4 lacks the FPU).
#[test]
fn an_elf_for_another_core_is_refused_in_each_direction() {
    let dir = scratch("mismatch");
    let out = sim_host(
        &dir,
        &["--target", "cortex-m4"],
        &guest("cortex-m4f", "filter"),
    );
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("Tag_ABI_VFP_args"), "{err}");
    assert!(err.contains("try --target cortex-m4f"), "{err}");

    let out = sim_host(
        &dir,
        &["--target", "cortex-m4f"],
        &guest("cortex-m7", "filter"),
    );
    assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("double-precision FPU instructions"), "{err}");
    assert!(err.contains("try --target cortex-m7"), "{err}");

    let out = sim_host(
        &dir,
        &["--target", "cortex-m4f"],
        &guest("cortex-m4", "filter"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let out = sim_host(
        &dir,
        &["--force-target", "--target", "cortex-m4"],
        &guest("cortex-m4f", "filter"),
    );
    // forced, it runs: its C runtime's FPU enable writes CPACR, which the
    // System Control Space of a core without an FPU ignores (CP10/CP11
    // read as zero, ARMv7-M B3.2.20), and its first FPU instruction has
    // no price on cortex-m4: exit 125 naming it, never a silent ALU cycle
    let err = stderr(&out);
    assert!(!err.contains("built for another core"), "{err}");
    assert_eq!(out.status.code(), Some(125), "{err}");
    assert!(
        !err.contains("0xe000ed88"),
        "the CPACR write is no fault: {err}"
    );
    assert!(err.contains("unpriced instruction `vmsr fpscr"), "{err}");
    assert!(
        err.contains("target `cortex-m4`'s cycle table has no row for class `fp_status`"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 45: an ELF for another core whose segments also miss the target's
/// memory map (a cortex-m4 ELF on cortex-m0plus, a cortex-m33 ELF on
/// cortex-m4f) was refused by the memory map alone, which sent the user
/// looking at the linker script; the refusal now names the architecture
/// first and a target that runs it, the memory map after.
#[test]
fn an_elf_for_another_core_and_map_names_the_architecture() {
    let dir = scratch("mismatch-map");
    for (built_for, run_on) in [("cortex-m4", "cortex-m0plus"), ("cortex-m33", "cortex-m4f")] {
        let out = sim_host(&dir, &["--target", run_on], &guest(built_for, "filter"));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(125), "{err}");
        assert!(err.contains("built for another core"), "{err}");
        assert!(err.contains(&format!("target `{run_on}` is")), "{err}");
        assert!(err.contains("try --target"), "{err}");
        assert!(err.contains("memory map"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
