//! The STM32F746's ART accelerator on the flash's ITCM view (issue 40,
//! `sim-host/src/model/memsys.rs`, kind `stm32f7-art`) against
//! hand-derived counts.
//!
//! `guest-shim/examples/art` runs each loop of `arm/loops.S` with the
//! FLASH_ACR of its kernel, 100 times (kernel 2i+1) and 200 times (kernel
//! 2i+2), after disabling and resetting the ART and a warm-up run of 8
//! iterations through the same call site: the two samples differ by
//! exactly 100 steady-state iterations. A loop run from its copy in the
//! ITCM RAM (no fetch stall) on DTCM data (no data stall) is the
//! reference: 100 x what the cortex-m7 table charges an iteration. The
//! others run through the flash at 0x00200000 (the same bytes as
//! 0x08000000), where the rules (targets/stm32f746.toml `[flash]`) are:
//! - 256-bit (32-byte) lines; a line that is not the one being executed
//!   is read in FLASH_ACR.LATENCY = W = 7 stall cycles (RM0385 Table 5:
//!   7 wait states at 216 MHz);
//! - PRFTEN: the line after the current one is ready W + 1 cycles after
//!   the current one was delivered: it stalls max(0, W + 1 - E), E the
//!   cycles of the current line's instructions priced alone;
//! - ARTEN: the ART keeps 64 lines, least recently used replaced, for
//!   instructions and data read through the ITCM view alike: a hit costs
//!   nothing.

use e2e_tests::process::{sim_host, text};
use e2e_tests::{expected_output, guest, scratch};

const W: u64 = 7;

/// The 100-iteration difference of each kernel pair, in kernel order,
/// from the second pair (the first trains the branch predictor on the
/// guest's call sites).
fn measured() -> Vec<u64> {
    e2e_tests::pair_differences("stm32f746", "art", 1..12)
}

#[test]
fn art_loops_match_hand_derived_counts() {
    let d = measured();
    assert_eq!(d.len(), 11);
    // the references from the ITCM RAM: straight, jumps64, jumps65, and
    // dload4 on DTCM data
    let (straight, jumps64, jumps65, dload4) = (d[0], d[4], d[6], d[8]);
    for r in [straight, jumps64, jumps65, dload4] {
        assert!(r >= 100, "an iteration costs at least a cycle: {d:?}");
    }
    // 8 ADD.W priced alone (one line of straight): the cortex-m7 table
    // issues two a cycle (two ALUs, [cycles.issue]): E = 4
    let e = 4;
    let expected = [
        straight,
        // straight from the flash, no ART, no prefetch: its three lines
        // are read every iteration (none is the line being executed when
        // it is reached): 3 x W
        straight + 100 * 3 * W,
        // with PRFTEN: line 0 after the jump back, read: W; line 1 after
        // line 0's 8 ADD.W (E = 4): W + 1 - 4 = 4; line 2 (SUBS, BNE.N)
        // after line 1's 8 ADD.W: 4
        straight + 100 * (W + 2 * (W + 1 - e)),
        // with ARTEN: the three lines stay in the ART
        straight,
        jumps64,
        // 64 lines in a loop: they fit the ART's 64
        jumps64,
        jumps65,
        // 65 lines in a loop, least recently used replaced: each evicted
        // before its next use, 65 reads of W
        jumps65 + 100 * 65 * W,
        dload4,
        // four loads of four lines through the ITCM view, no ART: 4 x W
        dload4 + 100 * 4 * W,
        // with ARTEN the four data lines stay in the ART
        dload4,
    ];
    assert_eq!(d, expected, "{d:?}");
}

#[test]
fn art_reruns_are_identical() {
    e2e_tests::assert_reruns_identical("stm32f746", "art");
}

/// The report and `--report-json` show both models: the ART on the ITCM
/// view and the L1 caches on AXIM (the code around the loops).
#[test]
fn the_report_shows_the_art_and_the_l1_caches() {
    let dir = scratch("art-report");
    let elf = guest("stm32f746", "art");
    std::fs::write(dir.join("expected.txt"), expected_output("art")).unwrap();
    let out = sim_host(
        &dir,
        &[
            "run",
            "--target",
            "stm32f746",
            "--expect-output",
            "expected.txt",
            "--report-json",
            "r.json",
            elf.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    let flash = &report["flash"];
    assert_eq!(flash["region"], "flash_itcm");
    // the guest never sets its clock: the part runs on the 16 MHz HSI
    // (issue 40), where RM0385 Table 5 requires no wait state
    assert_eq!(flash["required_wait_states"], 0);
    assert_eq!(flash["blocks_below_required_latency"], 0);
    assert!(flash["icache_hits"].as_u64().unwrap() > 0, "{flash}");
    assert!(flash["prefetched"].as_u64().unwrap() > 0, "{flash}");
    assert!(flash["dcache_hits"].as_u64().unwrap() > 0, "{flash}");
    assert!(report["l1cache"].is_object(), "{report}");
    assert!(text(&out).contains("flash `flash_itcm`"), "{}", text(&out));
}

/// An ELF linked at the flash's ITCM view (picolibc.ld with the flash at
/// 0x00200000) runs from there and finds its bytes at the AXIM view too:
/// the target's two regions hold the same image.
#[test]
fn an_elf_linked_at_the_itcm_view_runs_and_is_mirrored() {
    e2e_tests::require_tool("arm-none-eabi-gcc");
    let dir = scratch("art-itcm-link");
    let program = "#include <stdio.h>\n#include <stdint.h>\n#include <string.h>\n\
        static const char text[] = \"the same bytes\";\n\
        int main(void)\n{\n\
            uintptr_t at = (uintptr_t)main, data = (uintptr_t)text;\n\
            const char *axim = (const char *)(data - 0x00200000u + 0x08000000u);\n\
            int itcm = at >= 0x00200000u && at < 0x00300000u;\n\
            printf(\"%s %s\\n\", itcm ? \"itcm\" : \"elsewhere\",\n\
                   strcmp(axim, text) == 0 ? \"mirrored\" : \"different\");\n\
            return 0;\n}\n";
    std::fs::write(dir.join("itcm.c"), program).unwrap();
    let out = std::process::Command::new("arm-none-eabi-gcc")
        .current_dir(&*dir)
        .args([
            "-mcpu=cortex-m7",
            "-mthumb",
            "-mfpu=fpv5-sp-d16",
            "-mfloat-abi=hard",
            "-O2",
            "--specs=picolibc.specs",
            "--oslib=semihost",
            "--crt0=semihost",
            "-Wl,--defsym=__flash=0x00200000",
            "-Wl,--defsym=__flash_size=0x00100000",
            "-Wl,--defsym=__ram=0x20000000",
            "-Wl,--defsym=__ram_size=0x00050000",
            "-Tpicolibc.ld",
            "itcm.c",
            "-o",
            "itcm.elf",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let out = sim_host(&dir, &["run", "-q", "--target", "stm32f746", "itcm.elf"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "itcm mirrored\n");
}
