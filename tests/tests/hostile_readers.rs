//! The fourth audit's hostile files for the readers (issue 43, M02, M03,
//! M10 and the other readers): nesting that would overflow the stack and
//! arrays that would expand without bound are refused up front, naming the
//! file, the line and the element, with the cap (ARCHITECTURE.md, "Caps");
//! a target file whose address ranges overlap is refused naming both
//! fields before anything is mapped. Memory is measured in a child process
//! (`e2e_tests::measure`), which also keeps an abort from taking the test
//! process with it.

use e2e_tests::measure::in_children;
use e2e_tests::{guest, repo_root, scratch, sim_host_bin};
use sim_host::model::limits::{MAX_SVD_DEPTH, MAX_SVD_ELEMENTS};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

const MIB: u64 = 1024;

/// An SVD device around `peripherals` (the text of its peripherals).
fn device(peripherals: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<device schemaVersion=\"1.3\">\n\
         <name>HOSTILE</name><version>1</version><description>t</description>\n\
         <addressUnitBits>8</addressUnitBits><width>32</width><size>32</size>\n\
         <peripherals>\n{peripherals}</peripherals>\n</device>\n"
    )
}

/// One peripheral holding `registers` (the text inside `<registers>`).
fn peripheral(name: &str, registers: &str) -> String {
    format!(
        "<peripheral><name>{name}</name><baseAddress>0x40000000</baseAddress>\n\
         <registers>\n{registers}</registers></peripheral>\n"
    )
}

/// M02: `depth` clusters, each inside the one before.
fn nested_clusters(depth: usize) -> String {
    let mut s = String::new();
    for i in 0..depth {
        writeln!(
            s,
            "<cluster><name>C{i}</name><addressOffset>0</addressOffset>"
        )
        .unwrap();
    }
    s.push_str("<register><name>R</name><addressOffset>0</addressOffset></register>\n");
    s.push_str(&"</cluster>".repeat(depth));
    s.push('\n');
    device(&peripheral("P", &s))
}

/// A register array of `dim` elements.
fn register_array(dim: u64) -> String {
    device(&peripheral(
        "P",
        &format!(
            "<register><dim>{dim}</dim><dimIncrement>4</dimIncrement>\
             <name>R%s</name><addressOffset>0</addressOffset></register>\n"
        ),
    ))
}

/// M03's 785 bytes: three cluster arrays of 2000 inside each other.
fn nested_arrays() -> String {
    let open = |name: &str| {
        format!(
            "<cluster><dim>2000</dim><dimIncrement>4</dimIncrement><name>{name}%s</name>\
             <addressOffset>0</addressOffset>\n"
        )
    };
    let inner = "<register><name>R</name><addressOffset>0</addressOffset></register>\n";
    let body = format!(
        "{}{}{}{inner}</cluster></cluster></cluster>\n",
        open("A"),
        open("B"),
        open("C")
    );
    device(&peripheral("P", &body))
}

/// `count` peripherals (about 60 bytes each).
fn many_peripherals(count: u64) -> String {
    let mut s = String::with_capacity(count as usize * 64);
    for i in 0..count {
        writeln!(
            s,
            "<peripheral><name>P{i}</name><baseAddress>0</baseAddress></peripheral>"
        )
        .unwrap();
    }
    device(&s)
}

/// A `dimIndex` list of `count` names (svd-parser makes one string of each
/// while it parses).
fn index_range(count: u64) -> String {
    device(&peripheral(
        "P",
        &format!(
            "<register><dim>4</dim><dimIncrement>4</dimIncrement><dimIndex>0-{}</dimIndex>\
             <name>R%s</name><addressOffset>0</addressOffset></register>\n",
            count - 1
        ),
    ))
}

/// Clusters derived from each other in a loop that does not come back to
/// the first (svd-parser's own check only looks for the first's name).
fn derivation_cycle() -> String {
    let regs = "<cluster><name>A</name><addressOffset>0</addressOffset>\
                <register><name>R</name><addressOffset>0</addressOffset></register></cluster>\n\
                <cluster derivedFrom=\"P.B\"><name>X</name><addressOffset>0x10</addressOffset>\
                </cluster>\n\
                <cluster derivedFrom=\"P.C\"><name>B</name><addressOffset>0x20</addressOffset>\
                </cluster>\n\
                <cluster derivedFrom=\"P.B\"><name>C</name><addressOffset>0x30</addressOffset>\
                </cluster>\n";
    device(&peripheral("P", regs))
}

/// Levels of clusters each holding two copies (`derivedFrom`) of the
/// level below: 2^levels registers from a few hundred bytes per level.
fn doubling_derivations(levels: usize) -> String {
    let mut s = String::from(
        "<cluster><name>L0</name><addressOffset>0</addressOffset>\
         <register><name>R</name><addressOffset>0</addressOffset></register></cluster>\n",
    );
    for i in 1..=levels {
        let below = i - 1;
        writeln!(
            s,
            "<cluster><name>L{i}</name><addressOffset>0</addressOffset>\
             <cluster derivedFrom=\"P.L{below}\"><name>A</name><addressOffset>0</addressOffset>\
             </cluster><cluster derivedFrom=\"P.L{below}\"><name>B</name>\
             <addressOffset>0x4</addressOffset></cluster></cluster>"
        )
        .unwrap();
    }
    device(&peripheral("P", &s))
}

/// A hostile SVD shape: name, text, and what the refusal must say.
type Shape = (&'static str, Box<dyn Fn() -> String>, Vec<&'static str>);

/// The hostile SVD shapes.
fn svd_shapes() -> Vec<Shape> {
    vec![
        (
            "nested-clusters",
            Box::new(|| nested_clusters(3_000)),
            vec!["line 67", "<cluster>", "deeper than"],
        ),
        (
            "dim-1e8",
            Box::new(|| register_array(100_000_000)),
            vec!["line 8", "<register>", "R%s", "100000000"],
        ),
        (
            "nested-2000-cubed",
            Box::new(nested_arrays),
            vec!["line 9", "<cluster>", "B%s"],
        ),
        (
            "dim-1e6",
            Box::new(|| register_array(1_000_000)),
            vec!["line 8", "<register>", "R%s", "1000000"],
        ),
        (
            "1e6-peripherals",
            Box::new(|| many_peripherals(1_000_000)),
            vec!["line 5", "<peripherals>"],
        ),
        (
            "dim-index-range",
            Box::new(|| index_range(4_000_000_000)),
            vec!["line 8", "dimIndex", "4000000000"],
        ),
        (
            "derivation-cycle",
            Box::new(derivation_cycle),
            vec!["derivedFrom", "cycle", "P.B"],
        ),
        (
            "doubling-derivations",
            Box::new(|| doubling_derivations(40)),
            vec!["derivedFrom", "elements"],
        ),
    ]
}

/// M02, M03 and derivation: each hostile SVD file is refused with the
/// file, line or element, and the cap, in well under 256 MiB (before: a
/// stack overflow abort, a 2.7 GB allocation abort, 615 MB and 1.3 GB,
/// endless recursion).
#[test]
fn hostile_svd_files_are_refused_up_front_in_bounded_memory() {
    let test = "hostile_svd_files_are_refused_up_front_in_bounded_memory";
    let shapes = svd_shapes();
    for (i, (name, _, _)) in shapes.iter().enumerate() {
        let shape = format!("{test}/{name}");
        let Some(peaks) = in_children(&shape, &[i as u64], |i| {
            let (name, text, expected) = &svd_shapes()[i as usize];
            let dir = scratch("hostile-svd");
            let path = dir.join(format!("{name}.svd"));
            std::fs::write(&path, text()).unwrap();
            let e = sim_host::model::svd::load(&path)
                .err()
                .unwrap_or_else(|| panic!("{name}: loaded, not refused"))
                .to_string();
            eprintln!("{name}: {e}");
            assert!(e.contains(&format!("{name}.svd")), "{name}: {e}");
            for part in expected {
                assert!(e.contains(part), "{name}: `{part}` not in: {e}");
            }
            let cap = if *name == "nested-clusters" {
                MAX_SVD_DEPTH
            } else {
                MAX_SVD_ELEMENTS
            };
            if !name.starts_with("derivation-cycle") {
                let cap = cap.to_string();
                assert!(e.contains(&cap), "{name}: the cap {cap} not in: {e}");
            }
        }) else {
            continue;
        };
        eprintln!("{name}: {}", peaks[0]);
        assert!(peaks[0].kib < 256 * MIB, "{name}: {}", peaks[0]);
    }
}

/// The caps leave real files alone: a file just under both caps loads
/// (nesting at the depth cap, an array of the element cap's size less the
/// device's own elements), and the MPS2 file of the README loads.
#[test]
fn svd_files_within_the_caps_load() {
    let dir = scratch("svd-within-caps");
    let path = dir.join("deep.svd");
    // device > peripherals > peripheral > registers: 4 levels, then
    // clusters, the register and its name (2 more)
    std::fs::write(&path, nested_clusters(MAX_SVD_DEPTH - 6)).unwrap();
    let ps = sim_host::model::svd::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ps[0].registers.len(), 1);
    std::fs::write(&path, nested_clusters(MAX_SVD_DEPTH - 5)).unwrap();
    assert!(sim_host::model::svd::load(&path).is_err());
    // the peripheral and the array: 1 + dim elements
    std::fs::write(&path, register_array(MAX_SVD_ELEMENTS as u64 - 1)).unwrap();
    let ps = sim_host::model::svd::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ps[0].registers.len(), MAX_SVD_ELEMENTS - 1);
    std::fs::write(&path, register_array(MAX_SVD_ELEMENTS as u64)).unwrap();
    assert!(sim_host::model::svd::load(&path).is_err());
    let mps2 = repo_root().join("guest-shim/examples/board/mps2.svd");
    assert!(sim_host::model::svd::load(&mps2).is_ok());
}

/// A copy of built-in target `name`'s file with `from` replaced by `to`.
fn target_with(dir: &Path, name: &str, from: &str, to: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(repo_root().join(format!("targets/{name}.toml"))).unwrap();
    assert!(text.contains(from), "{name}.toml has no `{from}`");
    let path = dir.join(format!("{name}-hostile.toml"));
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    path
}

/// M10: a target file whose `[flash] control` lies in the SCS, or whose
/// machine timer lies in SRAM or in the XIP flash, is refused with exit
/// 125 naming the file and both fields with their ranges (before:
/// "unicorn: map the …: MAP", exit 1).
#[test]
fn overlapping_ranges_of_a_target_file_are_refused_before_mapping() {
    let dir = scratch("target-overlaps");
    let cases = [
        (
            "stm32f407",
            "control = { value = 0x40023C00",
            "control = { value = 0xE000ED00",
            "stm32f407",
            ["flash.control", "System Control Space", "0xe000e000"],
        ),
        (
            "sifive-e31",
            "base = 0x02000000",
            "base = 0x20000000",
            "sifive-e31",
            ["system.machine_timer.base", "memory", "0x20000000"],
        ),
        (
            "rp2350",
            "base = 0xd00001a4",
            "base = 0x100001a4",
            "rp2350",
            ["system.machine_timer.base", "memory", "0x10000000"],
        ),
    ];
    for (target, from, to, guest_target, expected) in cases {
        let file = target_with(&dir, target, from, to);
        let out = Command::new(sim_host_bin())
            .args(["run", "-q", "--target-file"])
            .arg(&file)
            .arg(guest(guest_target, "arpcalls"))
            .output()
            .expect("sim-host starts");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{target}: {err}");
        assert!(!err.contains("unicorn"), "{target}: {err}");
        assert!(err.contains(&format!("{target}-hostile.toml")), "{err}");
        for part in expected {
            assert!(err.contains(part), "{target}: `{part}` not in: {err}");
        }
    }
}

/// The other readers' nesting: TOML (target files, suite manifests) and
/// JSON (suite baselines) nested far deeper than any real file are refused
/// with a located error by their parsers' own depth caps (toml: 80 levels,
/// serde_json: 128), not a stack overflow; each shape in a child process.
#[test]
fn deeply_nested_toml_and_json_are_refused_located() {
    let test = "deeply_nested_toml_and_json_are_refused_located";
    let depth = 100_000;
    let shapes = ["target", "manifest", "baseline"];
    for (i, shape) in shapes.iter().enumerate() {
        let Some(peaks) = in_children(&format!("{test}/{shape}"), &[i as u64], |i| {
            let dir = scratch("deep-toml-json");
            let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            let e = match i {
                0 => {
                    let path = dir.join("deep.toml");
                    std::fs::write(&path, format!("name = {nested}\n")).unwrap();
                    sim_host::model::target::Target::load(&path)
                        .err()
                        .map(|e| e.to_string())
                }
                1 => {
                    let path = dir.join("deep.toml");
                    std::fs::write(&path, format!("[[entry]]\nname = {nested}\n")).unwrap();
                    sim_host::tools::suite::Manifest::load(&path)
                        .err()
                        .map(|e| e.to_string())
                }
                _ => {
                    let path = dir.join("deep.json");
                    std::fs::write(&path, &nested).unwrap();
                    sim_host::tools::suite::baseline::Baseline::load(&path)
                        .err()
                        .map(|e| e.to_string())
                }
            }
            .expect("refused");
            eprintln!("{e}");
            assert!(e.contains("deep.toml") || e.contains("deep.json"), "{e}");
            assert!(e.contains("line "), "{e}");
        }) else {
            continue;
        };
        assert!(peaks[0].kib < 64 * MIB, "{shape}: {}", peaks[0]);
    }
}
