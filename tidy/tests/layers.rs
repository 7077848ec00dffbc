//! The workspace's layering rules (ARCHITECTURE.md, "Layers"), checked on
//! the sources: sim-host's arrows point down its layers and each layer
//! uses only the external crates ARCHITECTURE.md allows it, no crate has
//! an import circle, and every crate's functions stay short. The crates
//! are those `cargo metadata` lists, so a new one is checked from its
//! first commit.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use tidy::{
    arrows_up, circles, crate_roots, crates_out_of_place, display, layer_of, read_crate,
    CrateGraph, CrateRoot,
};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// Crate roots whose code is not ours to keep: unicorn-patch's library is
/// upstream's Rust bindings, included from `OUT_DIR` (ARCHITECTURE.md).
const NOT_OURS: &[&str] = &["unicorn-patch/src/lib.rs"];

/// Every crate root of the workspace (libraries, binaries, build scripts)
/// but those in `NOT_OURS`.
fn roots() -> Vec<CrateRoot> {
    let all = crate_roots(&repo()).unwrap_or_else(|e| panic!("{e}"));
    let ours: Vec<CrateRoot> = all
        .into_iter()
        .filter(|r| !NOT_OURS.iter().any(|n| repo().join(n) == r.root))
        .collect();
    // a sanity floor: cargo metadata read the whole workspace
    assert!(ours.len() > 10, "crate roots from cargo metadata: {ours:?}");
    ours
}

/// sim-host's library, bottom to top: a module may use its own layer and
/// the ones below. ARCHITECTURE.md says what each holds and why.
const SIM_HOST_LAYERS: &[&str] = &["model", "image", "host", "engine", "observe", "tools"];

fn read(root: impl AsRef<Path>) -> CrateGraph {
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
    for root in roots() {
        let graph = read(&root.root);
        let root = relative(&root.root);
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
fn every_crates_functions_are_short() {
    let mut long = Vec::new();
    for root in roots() {
        for f in read(&root.root).functions {
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
    for root in roots().iter().filter(|r| r.kind != "custom-build") {
        let graph = read(&root.root);
        let text = std::fs::read_to_string(&root.root).unwrap();
        let forbids = text.contains("#![forbid(unsafe_code)]");
        if !has_unsafe(&graph) && !forbids {
            missing.push(relative(&root.root));
        }
    }
    assert!(
        missing.is_empty(),
        "crates without unsafe code that do not #![forbid(unsafe_code)]: {missing:?}"
    );
}

/// The layer the binary's modules (`src/main.rs`, `src/cli`) are in.
const CLI: &str = "cli";

/// ARCHITECTURE.md's table of the external crates each of sim-host's
/// layers may use: the rows after the line naming it, up to a blank line,
/// each `| layer | crate, crate |`.
fn allowed_crates() -> BTreeMap<String, BTreeSet<String>> {
    let doc = std::fs::read_to_string(repo().join("ARCHITECTURE.md")).unwrap();
    let marker = "<!-- tidy: external crates per layer -->";
    let start = doc
        .find(marker)
        .expect("ARCHITECTURE.md names no crates per layer")
        + marker.len();
    let mut allowed = BTreeMap::new();
    for line in doc[start..]
        .trim_start()
        .lines()
        .take_while(|l| !l.trim().is_empty())
    {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let [_, layer, crates, _] = cells[..] else {
            panic!("ARCHITECTURE.md: not a `| layer | crates |` row: {line}");
        };
        let layer = layer.trim_matches('`');
        if layer == "layer" || layer.starts_with("---") {
            continue;
        }
        let names = crates
            .split(',')
            .map(|c| c.trim().trim_matches('`').to_owned())
            .filter(|c| !c.is_empty() && c != "—")
            .collect();
        allowed.insert(layer.to_owned(), names);
    }
    allowed
}

#[test]
fn sim_host_layers_use_only_their_external_crates() {
    let allowed = allowed_crates();
    let mut layers: Vec<&str> = SIM_HOST_LAYERS.to_vec();
    layers.push(CLI);
    let named: Vec<&String> = allowed.keys().collect();
    assert_eq!(
        allowed.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        layers.iter().copied().collect::<BTreeSet<_>>(),
        "ARCHITECTURE.md's crates per layer name these layers: {named:?}"
    );
    let mut wrong = Vec::new();
    let mut listed_but_no_dependency = Vec::new();
    for root in roots().iter().filter(|r| r.package == "sim-host") {
        let graph = read(&root.root);
        for u in crates_out_of_place(&graph, SIM_HOST_LAYERS, CLI, &root.crates, &allowed) {
            let layer = layer_of(&u.from, SIM_HOST_LAYERS).map_or(CLI, |l| SIM_HOST_LAYERS[l]);
            wrong.push(format!(
                "{}:{}: {} ({layer}) uses {}",
                relative(&u.file),
                u.line,
                display(&u.from),
                u.name
            ));
        }
        if root.kind == "lib" {
            for names in allowed.values() {
                let stale = names
                    .iter()
                    .filter(|c| !root.crates.contains(*c) && *c != "sim_host");
                listed_but_no_dependency.extend(stale.cloned());
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "external crates used outside the layers ARCHITECTURE.md allows them:\n{}",
        wrong.join("\n")
    );
    assert!(
        listed_but_no_dependency.is_empty(),
        "ARCHITECTURE.md allows crates sim-host does not depend on: {listed_but_no_dependency:?}"
    );
}
