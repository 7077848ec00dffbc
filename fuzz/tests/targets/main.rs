//! A fuzz target per input reader (issue 43): each feeds its corpus and
//! mutations of it to the reader's public entry point, under the reader's
//! own caps, and accepts a value or a clean error (one that names the file
//! where the reader promises to); a panic, a hang, a stack overflow or an
//! allocation beyond the fuzz caps fails. See `fuzz_targets` for the
//! harness and fuzz/README.md for the corpus.

mod gdb;

use fuzz_targets::{fuzz, Target};
use sim_host::image::attributes;
use sim_host::image::elf::GuestImage;
use sim_host::model::target::{self, Arch};
use std::path::Path;
use std::sync::OnceLock;

#[global_allocator]
static ALLOCATOR: fuzz_targets::alloc::Capped = fuzz_targets::alloc::Capped;

/// `Ok` when `message` names `file` (the readers' promise).
fn names(message: String, file: &Path) -> Result<(), String> {
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    if message.contains(name.as_ref()) {
        Ok(())
    } else {
        Err(format!("the error does not name {name}: {message}"))
    }
}

/// Writes `bytes` to `name` in `scratch`; its path.
fn file(scratch: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = scratch.join(name);
    std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

fn builtin(name: &str) -> &'static target::Target {
    static M4: OnceLock<target::Target> = OnceLock::new();
    static RV: OnceLock<target::Target> = OnceLock::new();
    let slot = if name == "rv32imac" { &RV } else { &M4 };
    slot.get_or_init(|| target::builtin(name).expect("a built-in target"))
}

// ---- ELF images -----------------------------------------------------------

const ELF: Target = Target {
    cases: 5000,
    tokens: &[
        ".ARM.attributes",
        ".riscv.attributes",
        ".debug_info",
        ".symtab",
        "arp_enter",
    ],
    ..Target::new("elf")
};

/// An ELF loads for its machine's target (the e_machine byte chooses
/// cortex-m4 or rv32imac) or is refused naming the file; a loaded one's
/// attributes are checked against the target as `run` does, and its
/// DWARF, symbols and RTOS layout are read as the profiles, reports and
/// `sir generate` read them.
#[test]
fn elf_images() {
    fuzz(&ELF, |bytes, _| {
        let riscv = bytes.get(18) == Some(&243);
        let target = builtin(if riscv { "rv32imac" } else { "cortex-m4" });
        let file = Path::new("/fuzz/input.elf");
        let image = match GuestImage::parse(bytes, file, target) {
            Ok(image) => image,
            Err(e) => return names(e.to_string(), file),
        };
        read_debug_information(&image, bytes);
        match attributes::check(image.needs.as_ref(), file, target) {
            Ok(()) => Ok(()),
            Err(mismatch) => names(mismatch.to_string(), file),
        }
    });
}

/// What the observers read of a loaded ELF: the source frames and
/// locations of its entry and functions, and the FreeRTOS layout.
fn read_debug_information(image: &GuestImage, bytes: &[u8]) {
    let debug = sim_host::image::dwarf::DebugInfo::load(bytes)
        .ok()
        .flatten();
    let addrs = std::iter::once(image.entry).chain(image.functions.iter().map(|f| f.addr));
    for addr in addrs.take(64) {
        if let Some(debug) = &debug {
            let _ = debug.frames(addr);
        }
        let _ = sim_host::image::symbols::locate(image, debug.as_ref(), addr);
    }
    let _ = sim_host::image::rtos::freertos(image);
}

// ---- ELF build attributes -------------------------------------------------

const ATTRIBUTES: Target = Target {
    cases: 10000,
    tokens: &[
        "aeabi\0",
        "riscv\0",
        "rv32imac",
        "_zicsr2p0",
        "_f2p2",
        "E-M\0",
        "\x01",
        "\x05",
    ],
    max_len: 4096,
    ..Target::new("attributes")
};

/// An attributes section (the input's first byte: even for Arm, odd for
/// RISC-V; the rest the section's bytes) in an ELF of its own: read as
/// `run` reads it, then checked against the architecture's target.
#[test]
fn elf_attributes() {
    fuzz(&ATTRIBUTES, |bytes, _| {
        let (arch, section) = match bytes.split_first() {
            Some((kind, rest)) if kind % 2 == 1 => (Arch::Riscv, rest),
            Some((_, rest)) => (Arch::Arm, rest),
            None => (Arch::Arm, &[][..]),
        };
        let image = elf_with_section(arch, section);
        let elf = goblin::elf::Elf::parse(&image).map_err(|e| format!("the harness's ELF: {e}"))?;
        let needs = attributes::needs(&elf, &image, arch);
        let target = builtin(if arch == Arch::Riscv {
            "rv32imac"
        } else {
            "cortex-m4"
        });
        let file = Path::new("/fuzz/input.elf");
        match attributes::check(needs.as_ref(), file, target) {
            Ok(()) => Ok(()),
            Err(mismatch) => names(mismatch.to_string(), file),
        }
    });
}

/// A 32-bit little-endian ELF of `arch` whose only sections are the
/// attributes (`section`) and the section names.
fn elf_with_section(arch: Arch, section: &[u8]) -> Vec<u8> {
    let (machine, name): (u16, &[u8]) = match arch {
        Arch::Arm => (40, b".ARM.attributes\0"),
        Arch::Riscv => (243, b".riscv.attributes\0"),
    };
    let names = [b"\0.shstrtab\0".as_slice(), name].concat();
    let data = 52u32;
    let strings = data + section.len() as u32;
    let headers = (strings + names.len() as u32 + 3) & !3;
    let mut out = Vec::new();
    out.extend_from_slice(b"\x7fELF\x01\x01\x01\0\0\0\0\0\0\0\0\0");
    for half in [2u16, machine] {
        out.extend_from_slice(&half.to_le_bytes());
    }
    for word in [1u32, 0, 0, headers, 0] {
        out.extend_from_slice(&word.to_le_bytes()); // version, entry, phoff, shoff, flags
    }
    for half in [52u16, 0, 0, 40, 3, 1] {
        out.extend_from_slice(&half.to_le_bytes()); // ehsize, ph*, sh*, shstrndx
    }
    out.extend_from_slice(section);
    out.extend_from_slice(&names);
    out.resize(headers as usize, 0);
    out.extend_from_slice(&[0; 40]);
    let section_header =
        |name: u32, kind: u32, offset: u32, size: u32| [name, kind, 0, 0, offset, size, 0, 0, 1, 0];
    let string_table = section_header(1, 3, strings, names.len() as u32);
    let attributes = section_header(11, 0x7000_0003, data, section.len() as u32);
    for word in string_table.iter().chain(&attributes) {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out
}

// ---- CMSIS-SVD ------------------------------------------------------------

const SVD: Target = Target {
    cases: 1500,
    shared: &["guest-shim/examples/board/mps2.svd"],
    tokens: &[
        "<cluster>",
        "</cluster>",
        "<register>",
        "</register>",
        "<dim>",
        "</dim>",
        "<dimIncrement>",
        "<dimIndex>",
        "derivedFrom=\"",
        "<addressOffset>",
        "<size>",
        "<peripheral>",
        "</peripheral>",
        "<name>",
        "</name>",
        "[%s]",
        "%s",
        "<baseAddress>",
    ],
    max_len: 64 * 1024,
    ..Target::new("svd")
};

/// An SVD file gives peripherals or an error naming the file, within
/// the reader's caps on nesting and expansion (issue 43 M02, M03).
#[test]
fn svd_files() {
    fuzz(&SVD, |bytes, scratch| {
        let path = file(scratch, "input.svd", bytes);
        match sim_host::model::svd::load(&path) {
            Ok(_) => Ok(()),
            Err(e) => names(e.to_string(), &path),
        }
    });
}

// ---- target files ---------------------------------------------------------

const TARGET_FILES: Target = Target {
    cases: 1500,
    shared: &[
        "targets/cortex-m0.toml",
        "targets/cortex-m7.toml",
        "targets/rp2040.toml",
        "targets/rp2350.toml",
        "targets/rv32imac.toml",
        "targets/stm32f407.toml",
    ],
    tokens: &[
        "[",
        "]",
        "{ ",
        " }",
        " = ",
        "\"",
        ",",
        "\n[",
        "0x",
        "memory = [",
        "kind = \"ram\"",
        "start = ",
        "size = ",
        "wait_states = ",
        "[flash]",
        "[machine_timer]",
        "cores = ",
    ],
    max_len: 64 * 1024,
    ..Target::new("target")
};

/// A target file gives a target or an error naming the file.
#[test]
fn target_files() {
    fuzz(&TARGET_FILES, |bytes, scratch| {
        let path = file(scratch, "input.toml", bytes);
        match target::Target::load(&path) {
            Ok(_) => Ok(()),
            Err(e) => names(e.to_string(), &path),
        }
    });
}

// ---- data.arp -------------------------------------------------------------

const DATA_ARP: Target = Target {
    cases: 1500,
    shared: &["tests/golden/memsort-4-cores.data.arp"],
    tokens: &[
        "@",
        ": ",
        ";",
        "\n",
        " ",
        "ARPB",
        "# Atomium record and playback data - format version 1.1.\n",
    ],
    max_len: 64 * 1024,
    ..Target::new("data_arp")
};

/// A data.arp (ASCII, binary or gzip) reads or gives a located error, in
/// memory (`arp` tools) and as the playback index (`run --playback`).
#[test]
fn data_arp_files() {
    fuzz(&DATA_ARP, |bytes, scratch| {
        if let Err(e) = arpsim::query::Dataset::from_bytes(bytes) {
            if e.to_string().is_empty() {
                return Err("an empty error".into());
            }
        }
        let path = file(scratch, "input.arp", bytes);
        match arpsim::playback::PlaybackIndex::load(&path) {
            Ok(_) => Ok(()),
            Err(e) => names(e.to_string(), &path),
        }
    });
}

// ---- SIR ------------------------------------------------------------------

const SIR: Target = Target {
    cases: 10000,
    shared: &[
        "sir/tests/fixtures/apart/figure7_fortran_io_location.xml",
        "sir/tests/fixtures/periscope/add_f90.xml",
    ],
    tokens: &[
        "<codeRegion ",
        "</codeRegion>",
        "<unit ",
        "</unit>",
        " id=\"",
        "\"",
        "/>",
        "<!DOCTYPE sir [",
        "&amp;",
        "&#x10FFFF;",
        "<![CDATA[",
        "m:cycles=\"",
        "xmlns:m=\"urn:arpsim:measure\"",
    ],
    max_len: 128 * 1024,
    ..Target::new("sir")
};

/// A SIR document parses or gives a positioned error; a parsed one is
/// validated, written and converted to the other dialect.
#[test]
fn sir_documents() {
    fuzz(&SIR, |bytes, _| {
        let Ok(parsed) = sir::parse(bytes, &sir::ParseOptions::default()) else {
            return Ok(());
        };
        let _ = parsed.document.validate();
        let mut out = Vec::new();
        let _ = parsed.document.write(&mut out);
        match &parsed.document {
            sir::Document::Apart(apart) => {
                let _ = sir::convert::to_periscope(apart);
            }
            sir::Document::Periscope(periscope) => {
                let _ = sir::convert::to_apart(periscope);
            }
        }
        Ok(())
    });
}

// ---- CHIP3S ---------------------------------------------------------------

const CHIP3S: Target = Target {
    cases: 1000,
    shared: &[
        "chips-eval/tests/cases/call/app.la",
        "chips-eval/tests/cases/case/app.la",
        "chips-eval/tests/cases/compute_cycles/app.la",
        "chips-eval/tests/cases/err_endless_loop/app.la",
        "chips-eval/tests/cases/err_endless_recursion/app.la",
    ],
    tokens: &[
        "application ",
        "subtask ",
        "partmp ",
        "include ",
        "var numeric: ",
        "proc exec ",
        "proc cflow ",
        "loop (",
        "case (",
        "call ",
        "compute <is clc, ",
        "step cpu { ",
        "{",
        "}",
        "(",
        ")",
        ";",
        ",",
        "if ",
        " then ",
        " else ",
        "while (",
        "confdev ",
        "Log2(",
    ],
    max_len: 64 * 1024,
    ..Target::new("chip3s")
};

fn hardware() -> &'static chips_eval::HardwareModel {
    static HW: OnceLock<chips_eval::HardwareModel> = OnceLock::new();
    HW.get_or_init(|| {
        let path = fuzz_targets::repo_root().join("chips-eval/hardware/cortex-m4-quad.toml");
        chips_eval::HardwareModel::load(&path).expect("the hardware model")
    })
}

/// A CHIP3S model loads and evaluates (under a small step budget) or
/// gives diagnostics; nothing it says is empty.
#[test]
fn chip3s_models() {
    fuzz(&CHIP3S, |bytes, scratch| {
        let path = file(scratch, "app.la", bytes);
        let options = chips_eval::LoadOptions::default();
        let program = match chips_eval::Program::load(&path, &options, Some(hardware())) {
            Ok(p) => p,
            Err(e) => return not_empty(e.to_string()),
        };
        let run = chips_eval::runtime::RunOptions {
            limits: chips_eval::Limits {
                step_budget: 100_000,
                max_depth: 64,
            },
            ..Default::default()
        };
        match chips_eval::runtime::run(&program, hardware(), &[], run) {
            Ok(_) => Ok(()),
            Err(e) => not_empty(e.to_string()),
        }
    });
}

fn not_empty(message: String) -> Result<(), String> {
    if message.trim().is_empty() {
        Err("an empty error".into())
    } else {
        Ok(())
    }
}

// ---- suite manifests ------------------------------------------------------

const MANIFEST: Target = Target {
    cases: 1000,
    shared: &["suites/ci.toml", "suites/mcu.toml"],
    tokens: &[
        "[[entry]]\n",
        "name = \"",
        "elf = \"",
        "target = \"",
        "matrix = { ",
        "budget = { ",
        "{target}",
        "{cores}",
        "cores = ",
        "args = [",
        "mode = \"",
        "max_cycles = ",
        "timeout = ",
        "mean_cycles = ",
        "exit_code = ",
        "expected_output = \"",
    ],
    max_len: 64 * 1024,
    ..Target::new("suite_manifest")
};

/// A suite manifest gives entries or an error naming the file. The
/// corpus's own manifests name `a.elf` and `expected.txt`, made here, so
/// that inputs get past the check that the files exist.
#[test]
fn suite_manifests() {
    fuzz(&MANIFEST, |bytes, scratch| {
        for name in ["a.elf", "expected.txt"] {
            if !scratch.join(name).exists() {
                file(scratch, name, b"");
            }
        }
        let path = file(scratch, "input.toml", bytes);
        match sim_host::tools::suite::Manifest::load(&path) {
            Ok(_) => Ok(()),
            Err(e) => names(e.to_string(), &path),
        }
    });
}

// ---- baselines and suite results ------------------------------------------

const BASELINE: Target = Target {
    cases: 1000,
    shared: &["suites/ci-baseline.json"],
    tokens: &[
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\"",
        "null",
        "true",
        "\"format\": ",
        "\"version\": ",
        "\"schema_version\": ",
        "\"shard\": ",
    ],
    max_len: 128 * 1024,
    ..Target::new("baseline")
};

/// A baseline or suite result loads, as `--baseline` and as a `suite
/// merge` shard, or gives an error naming the file.
#[test]
fn baselines_and_results() {
    fuzz(&BASELINE, |bytes, scratch| {
        let path = file(scratch, "input.json", bytes);
        if let Err(e) = sim_host::tools::suite::baseline::Baseline::load(&path) {
            names(e.to_string(), &path)?;
        }
        match sim_host::tools::suite::merge::load(&path) {
            Ok(_) => Ok(()),
            Err(e) => names(e.to_string(), &path),
        }
    });
}

// ---- GDB packets ----------------------------------------------------------

const GDB: Target = Target {
    cases: 300,
    tokens: &[
        "qSupported:",
        "qXfer:features:read:target.xml:",
        "qRcmd,",
        "m",
        "M",
        "X",
        "G",
        "g",
        "P",
        "p",
        "Z0,",
        "z0,",
        "Z2,",
        "Z3,",
        "Z4,",
        "vCont;",
        "vCont;s:",
        "s",
        "c",
        "H",
        "qfThreadInfo",
        "T",
        "0,",
        ",ffffffff",
        ":",
        ";",
        "#",
        "$",
        "}",
    ],
    max_edits: 4,
    max_len: 16 * 1024,
    ..Target::new("gdb")
};

/// GDB packets (one a line, framed here) to the stub of a tiny guest run
/// in this process: each gets an answer or ends the session, and the run
/// then ends on its own (see `gdb`).
#[test]
fn gdb_packets() {
    fuzz(&GDB, gdb::session);
}
