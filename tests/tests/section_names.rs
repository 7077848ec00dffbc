//! Section names that survive the optimiser (issue 39, part 7), on the
//! `fourkernels` example: four kernels in one loop, each with its
//! `ato_kernel_*` label, built with -O2. GCC gives the four labels one
//! address; the labels-only build must say so (a warning naming the
//! labels and the address) instead of naming one section by a guess and
//! the others silently by place. The `-named` build also names the
//! sections with `ARP_SECTION_NAME` (the ELF's `.arp_names`), and those
//! names are the ones every output shows. A malformed `.arp_names` is a
//! warning naming the section and the record's offset.

use e2e_tests::process::{sim_host, text};
use e2e_tests::{guest, guests_dir, scratch, sim_host_bin};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

/// The kernels: section id, label, given name.
const KERNELS: [(u16, &str, &str); 4] = [
    (1, "ato_kernel_add", "add"),
    (2, "ato_kernel_fold", "fold"),
    (3, "ato_kernel_mix", "mix"),
    (4, "ato_kernel_step", "step"),
];

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every target the example was built for.
fn targets() -> Vec<String> {
    guest("cortex-m4", "fourkernels");
    let mut names: Vec<String> = std::fs::read_dir(guests_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("fourkernels.elf").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 3, "{names:?}");
    names
}

/// The address of each kernel label in `elf`'s DWARF.
fn label_addresses(elf: &Path) -> Vec<u64> {
    let bytes = std::fs::read(elf).unwrap();
    let debug = sim_host::image::dwarf::DebugInfo::load(&bytes)
        .unwrap()
        .expect("built with -g");
    KERNELS
        .iter()
        .map(|(_, label, _)| {
            debug
                .labels
                .iter()
                .find(|l| l.name == *label)
                .unwrap_or_else(|| panic!("{}: no label {label}", elf.display()))
                .addr
        })
        .collect()
}

/// Runs `elf` on `target` in `dir` with a JSON report, a callgrind
/// profile and trace events; the report.
fn run_all_outputs(dir: &Path, target: &str, elf: &Path) -> Value {
    let out = Command::new(sim_host_bin())
        .current_dir(dir)
        .args(["run", "-q", "--target", target, "--mode", "record_all"])
        .args(["-o", "data.arp", "--report-json", "r.json"])
        .args(["--callgrind", "p.callgrind", "--trace-events", "t.json"])
        .arg(elf)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{target}: {}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("fourkernels: 100 rounds"),
        "{target}: {}",
        text(&out)
    );
    json(&dir.join("r.json"))
}

/// The names of the report's sections, by section id.
fn report_names(report: &Value) -> Vec<(u64, Value)> {
    let mut names: Vec<(u64, Value)> = report["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["path"][0].as_u64().unwrap(), s["names"].clone()))
        .collect();
    names.sort_by_key(|(sid, _)| *sid);
    names
}

fn warnings(report: &Value) -> Vec<String> {
    report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn optimised_labels_at_one_address_are_a_warning_naming_them() {
    for target in targets() {
        let elf = guest(&target, "fourkernels");
        let addrs = label_addresses(&elf);
        // what makes the example: GCC -O2 gave the four labels one address
        assert!(addrs.iter().all(|a| *a == addrs[0]), "{target}: {addrs:x?}");
        let dir = scratch("names-labels");
        let report = run_all_outputs(&dir, &target, &elf);
        let said: Vec<String> = warnings(&report)
            .into_iter()
            .filter(|w| w.contains("ato_kernel_"))
            .collect();
        assert_eq!(said.len(), 1, "{target}: {said:?}");
        let labels: Vec<&str> = KERNELS.iter().map(|k| k.1).collect();
        assert!(
            said[0].starts_with(&format!(
                "labels {} are all at {:#010x} (main (fourkernels.c:",
                labels.join(", "),
                addrs[0]
            )),
            "{target}: {}",
            said[0]
        );
        assert!(said[0].contains("ARP_SECTION_NAME"), "{}", said[0]);
        // no section is named by a label it may not be: each by its place
        // (the enter call's line as the line table gives it: GCC -O2 may
        // attribute a call to a neighbouring line)
        let names = report_names(&report);
        assert_eq!(
            names.iter().map(|(sid, _)| *sid).collect::<Vec<_>>(),
            [1, 2, 3, 4],
            "{target}"
        );
        for (sid, name) in &names {
            let name = name[0].as_str().unwrap();
            assert!(
                name.starts_with("main (fourkernels.c:"),
                "{target} {sid}: {name}"
            );
        }
        // the text report shows the warning too
        let out = sim_host(&dir, &["run", "--target", &target, elf.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert!(
            text(&out).contains(&format!("warning: labels {}", labels.join(", "))),
            "{}",
            text(&out)
        );
        // the arp tools, named from the ELF, say it on stderr
        let out = sim_host(
            &dir,
            &["arp", "stats", "data.arp", "--elf", elf.to_str().unwrap()],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("warning: labels {}", labels.join(", "))),
            "{err}"
        );
    }
}

#[test]
fn names_given_with_the_macro_name_every_kernel_in_every_output() {
    for target in targets() {
        let elf = guest(&target, "fourkernels-named");
        let dir = scratch("names-given");
        let report = run_all_outputs(&dir, &target, &elf);
        // the labels collide as in the labels-only build, but every kernel
        // has a given name: nothing to warn about
        let addrs = label_addresses(&elf);
        assert!(addrs.iter().all(|a| *a == addrs[0]), "{target}: {addrs:x?}");
        assert_eq!(warnings(&report), Vec::<String>::new(), "{target}");
        let expected: Vec<(u64, Value)> = KERNELS
            .iter()
            .map(|(sid, _, name)| (u64::from(*sid), serde_json::json!([name])))
            .collect();
        assert_eq!(report_names(&report), expected, "{target}");
        // callgrind: one frame per kernel, named so
        let callgrind = std::fs::read_to_string(dir.join("p.callgrind")).unwrap();
        for (_, _, name) in KERNELS {
            assert!(
                callgrind.contains(&format!(") {name}\n")),
                "{target} {name}: {callgrind}"
            );
        }
        // trace events
        let trace = json(&dir.join("t.json"));
        let mut names: Vec<&str> = trace["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "B")
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        names.sort();
        names.dedup();
        assert_eq!(names, ["add", "fold", "mix", "step"], "{target}");
        // the arp tools, named from the ELF
        let out = sim_host(
            &dir,
            &["arp", "stats", "data.arp", "--elf", elf.to_str().unwrap()],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert!(out.stderr.is_empty(), "{}", text(&out));
        let stats = String::from_utf8_lossy(&out.stdout);
        for (sid, _, name) in KERNELS {
            assert!(
                stats
                    .lines()
                    .any(|l| l.starts_with(&format!("{sid} ")) && l.ends_with(&format!("  {name}"))),
                "{target} {name}: {stats}"
            );
        }
    }
}

#[test]
fn the_names_cost_the_guest_nothing() {
    // the -named build differs from the labels-only one in .arp_names and
    // debug information only: what is loaded is byte for byte the same
    for target in targets() {
        let load = |example: &str| -> Vec<(u64, Vec<u8>)> {
            let bytes = std::fs::read(guest(&target, example)).unwrap();
            let elf = goblin::elf::Elf::parse(&bytes).unwrap();
            elf.program_headers
                .iter()
                .filter(|p| p.p_type == goblin::elf::program_header::PT_LOAD)
                .map(|p| {
                    let range = p.file_range();
                    (p.p_paddr, bytes[range].to_vec())
                })
                .collect()
        };
        assert_eq!(load("fourkernels"), load("fourkernels-named"), "{target}");
        let bytes = std::fs::read(guest(&target, "fourkernels-named")).unwrap();
        let elf = goblin::elf::Elf::parse(&bytes).unwrap();
        let names = arp_names_header(&elf);
        assert_eq!(names.sh_flags, 0, "{target}: .arp_names is not allocated");
        assert_eq!(
            names.sh_type,
            goblin::elf::section_header::SHT_PROGBITS,
            "{target}"
        );
    }
}

fn arp_names_header(elf: &goblin::elf::Elf<'_>) -> goblin::elf::SectionHeader {
    elf.section_headers
        .iter()
        .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".arp_names"))
        .expect("the ELF has .arp_names")
        .clone()
}

#[test]
fn a_malformed_arp_names_section_is_a_warning_at_its_offset() {
    let dir = scratch("names-malformed");
    let mut bytes = std::fs::read(guest("cortex-m4", "fourkernels-named")).unwrap();
    let header = arp_names_header(&goblin::elf::Elf::parse(&bytes).unwrap());
    let start = header.sh_offset as usize;
    let section = &mut bytes[start..start + header.sh_size as usize];
    // the records: 1 "add" at 0x0, 2 "fold" at 0x6, 3 "mix" at 0xd,
    // 4 "step" at 0x13
    assert_eq!(
        &section[..],
        b"\x01\x00add\x00\x02\x00fold\x00\x03\x00mix\x00\x04\x00step\x00"
    );
    section[0xd] = 1; // "mix" names section 1 too
    let last = section.len() - 1;
    section[last] = b'!'; // "step" loses its NUL
    let elf = dir.join("bad.elf");
    std::fs::write(&elf, &bytes).unwrap();
    let out = sim_host(
        &dir,
        &[
            "run",
            "-q",
            "--target",
            "cortex-m4",
            "-o",
            "data.arp",
            "--mode",
            "record_all",
            "--report-json",
            "r.json",
            "bad.elf",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report = json(&dir.join("r.json"));
    let said = warnings(&report);
    let truncated = "section .arp_names, offset 0x13: the name of section 4 has no NUL";
    let twice = "section .arp_names: section 1 is given 2 different names: \"add\" (offset 0x0), \"mix\" (offset 0xd)";
    for expected in [truncated, twice] {
        assert!(
            said.iter().any(|w| w.starts_with(expected)),
            "{expected}: {said:?}"
        );
    }
    let names = report_names(&report);
    assert_eq!(names[0].1, serde_json::json!(["add | mix"]));
    assert_eq!(names[1].1, serde_json::json!(["fold"]));
    // sections 3 and 4 lost their given names: the labels collide, so they
    // are named by place (and the collision is said)
    assert!(names[3].1[0]
        .as_str()
        .unwrap()
        .starts_with("main (fourkernels.c:"));
    assert!(
        said.iter().any(|w| w.starts_with("labels ato_kernel_add")),
        "{said:?}"
    );
    let out = sim_host(&dir, &["arp", "stats", "data.arp", "--elf", "bad.elf"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    for expected in [truncated, twice] {
        assert!(
            err.contains(&format!("sim-host: --elf bad.elf: warning: {expected}")),
            "{err}"
        );
    }
}

#[test]
fn a_label_no_section_reaches_is_a_warning_naming_it() {
    // the -stray build: the four kernels have given names, and a kernel
    // label sits in a function that enters no section
    for target in ["cortex-m4", "rv32imac"] {
        let elf = guest(target, "fourkernels-stray");
        let bytes = std::fs::read(&elf).unwrap();
        let debug = sim_host::image::dwarf::DebugInfo::load(&bytes)
            .unwrap()
            .unwrap();
        let stray = debug
            .labels
            .iter()
            .find(|l| l.name == "ato_kernel_stray")
            .expect("the label has an address")
            .addr;
        let dir = scratch("names-stray");
        let report = run_all_outputs(&dir, target, &elf);
        let said = warnings(&report);
        assert_eq!(said.len(), 1, "{target}: {said:?}");
        assert!(
            said[0].starts_with(&format!(
                "label ato_kernel_stray at {stray:#010x} (stray (fourkernels.c:"
            )),
            "{target}: {}",
            said[0]
        );
        assert!(said[0].contains("names no section"), "{}", said[0]);
        let expected: Vec<(u64, Value)> = KERNELS
            .iter()
            .map(|(sid, _, name)| (u64::from(*sid), serde_json::json!([name])))
            .collect();
        assert_eq!(report_names(&report), expected, "{target}");
    }
}

#[test]
fn sir_generate_names_sections_by_the_same_rule() {
    let dir = scratch("names-sir");
    for (example, warned, names) in [
        ("fourkernels", true, None),
        (
            "fourkernels-named",
            false,
            Some(["add", "fold", "mix", "step"]),
        ),
    ] {
        let elf = guest("rv32imac", example);
        let out = sim_host(
            &dir,
            &[
                "sir",
                "generate",
                "--target",
                "rv32imac",
                "--output",
                "p.sir",
                elf.to_str().unwrap(),
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err.contains("labels ato_kernel_add, ato_kernel_fold, ato_kernel_mix, ato_kernel_step are all at 0x"),
            warned,
            "{example}: {err}"
        );
        let sir = std::fs::read_to_string(dir.join("p.sir")).unwrap();
        let found: Vec<&str> = sir
            .split("arp:name=\"")
            .skip(1)
            .map(|rest| &rest[..rest.find('"').unwrap()])
            .collect();
        match names {
            Some(names) => assert_eq!(found, names, "{example}: {sir}"),
            // no label names a section: each is named by its place
            None => {
                assert_eq!(found.len(), 4, "{found:?}");
                assert!(found.iter().all(|n| n.starts_with("main:")), "{found:?}");
            }
        }
    }
}

#[test]
fn an_uninstrumented_build_keeps_its_labels_without_a_word() {
    // -DARP_NONE: the labels are there, no section is: nothing to say
    let dir = scratch("names-none");
    let elf = guest("cortex-m4", "fourkernels-none");
    assert_eq!(label_addresses(&elf).len(), 4);
    let out = sim_host(
        &dir,
        &[
            "run",
            "-q",
            "--target",
            "cortex-m4",
            "--report-json",
            "r.json",
            elf.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(warnings(&json(&dir.join("r.json"))), Vec::<String>::new());
    let out = sim_host(
        &dir,
        &["arp", "stats", "/dev/null", "--elf", elf.to_str().unwrap()],
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("warning"),
        "{}",
        text(&out)
    );
}
