//! The workspace's layering rules (ARCHITECTURE.md, "Layers"), checked on
//! the sources: sim-host's arrows point down its layers, no crate has an
//! import circle, and sim-host's and arpsim's functions stay short.

use std::path::{Path, PathBuf};
use tidy::{arrows_up, circles, display, layer_of, read_crate, CrateGraph};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// Every crate root of the workspace (libraries and binaries).
const CRATE_ROOTS: &[&str] = &[
    "arpsim/src/lib.rs",
    "arpsim/libarp/src/lib.rs",
    "sim-host/src/lib.rs",
    "sim-host/src/main.rs",
    "sim-host/plugins/example-rs/src/lib.rs",
    "sir/src/lib.rs",
    "chips-eval/src/lib.rs",
    "chips-eval/src/main.rs",
    "plot/src/lib.rs",
    "tests/src/lib.rs",
    "tidy/src/lib.rs",
];

/// sim-host's library, bottom to top: a module may use its own layer and
/// the ones below. ARCHITECTURE.md says what each holds and why.
const SIM_HOST_LAYERS: &[&str] = &["model", "image", "host", "engine", "observe", "tools"];

fn read(root: &str) -> CrateGraph {
    read_crate(&repo().join(root)).unwrap_or_else(|e| panic!("{e}"))
}

fn relative(file: &Path) -> String {
    file.strip_prefix(repo())
        .unwrap_or(file)
        .display()
        .to_string()
}

#[test]
fn no_crate_has_an_import_circle() {
    let mut found = Vec::new();
    for root in CRATE_ROOTS {
        let graph = read(root);
        for circle in circles(&graph) {
            let names: Vec<String> = circle.iter().map(|m| display(m)).collect();
            let ties: Vec<String> = graph
                .edges
                .iter()
                .filter(|e| circle.contains(&e.from) && circle.contains(&e.to))
                .map(|e| {
                    format!(
                        "    {}:{}: {} -> {}",
                        relative(&e.file),
                        e.line,
                        display(&e.from),
                        display(&e.to)
                    )
                })
                .collect();
            found.push(format!("{root}: {}\n{}", names.join(", "), ties.join("\n")));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn every_sim_host_module_is_in_a_layer() {
    let graph = read("sim-host/src/lib.rs");
    let loose: Vec<String> = graph
        .modules
        .keys()
        .filter(|m| !m.is_empty() && layer_of(m, SIM_HOST_LAYERS).is_none())
        .map(|m| display(m))
        .collect();
    assert!(
        loose.is_empty(),
        "sim-host modules outside the layers {SIM_HOST_LAYERS:?}: {loose:?}"
    );
}

#[test]
fn sim_host_arrows_point_down() {
    let graph = read("sim-host/src/lib.rs");
    let layer = |m: &[String]| SIM_HOST_LAYERS[layer_of(m, SIM_HOST_LAYERS).unwrap_or(0)];
    let up: Vec<String> = arrows_up(&graph, SIM_HOST_LAYERS)
        .into_iter()
        .map(|e| {
            format!(
                "{}:{}: {} ({}) uses {} ({})",
                relative(&e.file),
                e.line,
                display(&e.from),
                layer(&e.from),
                display(&e.to),
                layer(&e.to)
            )
        })
        .collect();
    assert!(
        up.is_empty(),
        "arrows pointing up a layer:\n{}",
        up.join("\n")
    );
}

/// The functions allowed past the limit: flat dispatch tables, a `match`
/// from a name or code to its handler with nothing else in it
/// (ARCHITECTURE.md lists them).
const DISPATCH_TABLES: &[(&str, &str)] = &[];

const MAX_FUNCTION_LINES: usize = 150;

#[test]
fn sim_host_and_arpsim_functions_are_short() {
    let mut long = Vec::new();
    for root in [
        "sim-host/src/lib.rs",
        "sim-host/src/main.rs",
        "arpsim/src/lib.rs",
        "arpsim/libarp/src/lib.rs",
    ] {
        for f in read(root).functions {
            let file = relative(&f.file);
            let excepted = DISPATCH_TABLES
                .iter()
                .any(|(path, name)| *path == file && *name == f.name);
            if f.lines > MAX_FUNCTION_LINES && !excepted {
                long.push(format!("{file}:{}: {} ({} lines)", f.line, f.name, f.lines));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines (split them by concept):\n{}",
        long.join("\n")
    );
}

/// Whether any of a crate's files has unsafe code (outside comments).
fn has_unsafe(graph: &CrateGraph) -> bool {
    let files: std::collections::BTreeSet<&PathBuf> = graph.modules.values().collect();
    files.into_iter().any(|file| {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        text.lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .any(|code| code.contains("unsafe ") || code.contains("unsafe{"))
    })
}

#[test]
fn crates_without_unsafe_code_forbid_it() {
    let mut missing = Vec::new();
    for root in CRATE_ROOTS {
        let graph = read(root);
        let text = std::fs::read_to_string(repo().join(root)).unwrap();
        let forbids = text.contains("#![forbid(unsafe_code)]");
        if !has_unsafe(&graph) && !forbids {
            missing.push(*root);
        }
    }
    assert!(
        missing.is_empty(),
        "crates without unsafe code that do not #![forbid(unsafe_code)]: {missing:?}"
    );
}
