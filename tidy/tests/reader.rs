//! The reader itself, on small crates written here: it must see every
//! kind of use (or the layer test could pass by seeing nothing).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use tidy::{arrows_up, circles, crate_roots, crates_out_of_place, display, read_crate};

/// A scratch folder of the test's own, removed when the test ends.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A crate of `files` (path below `src/`, text) in a fresh folder.
fn write_crate(name: &str, files: &[(&str, &str)]) -> Scratch {
    let dir = std::env::temp_dir().join(format!("tidy-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let file = dir.join("src").join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    Scratch(dir)
}

fn read(dir: &Scratch) -> tidy::CrateGraph {
    read_crate(&dir.0.join("src/lib.rs")).unwrap()
}

fn edges(name: &str, files: &[(&str, &str)]) -> Vec<String> {
    let dir = write_crate(name, files);
    let graph = read(&dir);
    graph
        .edges
        .iter()
        .map(|e| format!("{} -> {}", display(&e.from), display(&e.to)))
        .collect()
}

#[test]
fn every_kind_of_path_is_a_use() {
    let found = edges(
        "kinds",
        &[
            ("lib.rs", "pub mod a; pub mod b; pub mod c;"),
            (
                "a.rs",
                "pub mod inner; use crate::b::X; fn f() { super::c::g(); }",
            ),
            ("a/inner.rs", "fn f() -> super::super::b::X { todo!() }"),
            (
                "b.rs",
                "pub struct X; use self::deep::Y; mod deep { pub struct Y; }",
            ),
            ("c.rs", "pub fn g() { crate::b::deep_is_private(); }"),
        ],
    );
    for want in [
        "a -> b",
        "a -> c",
        "a::inner -> b",
        "b -> b::deep",
        "c -> b",
    ] {
        assert!(found.iter().any(|e| e == want), "{want} not in {found:?}");
    }
}

#[test]
fn a_child_named_without_a_prefix_is_a_use_and_declaring_it_is_not() {
    let found = edges(
        "uniform",
        &[
            ("lib.rs", "mod a; mod b; use a::X;"),
            ("a.rs", "pub struct X;"),
            ("b.rs", "use std::fmt; use serde::Deserialize;"),
        ],
    );
    assert_eq!(found, ["crate -> a"]);
}

#[test]
fn test_code_is_left_out() {
    let found = edges(
        "tests",
        &[
            ("lib.rs", "mod a; mod b;"),
            ("a.rs", "#[cfg(test)] mod tests { use crate::b::X; }"),
            ("b.rs", "pub struct X; #[test] fn t() { crate::a::f(); }"),
        ],
    );
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_circle_through_three_modules_is_found() {
    let dir = write_crate(
        "circle",
        &[
            ("lib.rs", "mod a; mod b; mod c; mod d;"),
            ("a.rs", "use crate::b::X; pub struct Z;"),
            ("b.rs", "pub struct X; use crate::c::Y;"),
            ("c.rs", "pub struct Y; fn f(_: crate::a::Z) {}"),
            ("d.rs", "use crate::a::Z;"),
        ],
    );
    let graph = read(&dir);
    let found: Vec<Vec<String>> = circles(&graph)
        .iter()
        .map(|c| c.iter().map(|m| display(m)).collect())
        .collect();
    assert_eq!(found, [["a", "b", "c"]]);
}

#[test]
fn a_facade_used_by_its_own_child_is_a_circle() {
    let dir = write_crate(
        "facade",
        &[
            ("lib.rs", "mod engine;"),
            (
                "engine/mod.rs",
                "mod api; mod state; pub use api::Stop; pub use state::State;",
            ),
            ("engine/api.rs", "pub enum Stop {}"),
            ("engine/state.rs", "use super::Stop; pub struct State;"),
        ],
    );
    let graph = read(&dir);
    let found: Vec<Vec<String>> = circles(&graph)
        .iter()
        .map(|c| c.iter().map(|m| display(m)).collect())
        .collect();
    assert_eq!(found, [["engine", "engine::state"]]);
}

#[test]
fn function_lengths_run_from_fn_to_the_closing_brace() {
    let dir = write_crate(
        "lengths",
        &[(
            "lib.rs",
            "/// doc\nfn one() {}\n\nstruct S;\nimpl S {\n    fn three(&self) {\n        let _ = 1;\n    }\n}\n",
        )],
    );
    let graph = read(&dir);
    let lengths: Vec<(String, usize)> = graph
        .functions
        .iter()
        .map(|f| (f.name.clone(), f.lines))
        .collect();
    assert_eq!(lengths, [("one".to_owned(), 1), ("three".to_owned(), 3)]);
}

#[test]
fn a_visibility_is_not_a_use() {
    let found = edges(
        "visibility",
        &[
            ("lib.rs", "mod a;"),
            (
                "a.rs",
                "pub(super) fn f() {} pub(crate) struct S; pub(in crate) fn g() {}",
            ),
        ],
    );
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn an_arrow_up_a_layer_is_found() {
    let dir = write_crate(
        "layers",
        &[
            ("lib.rs", "pub mod low; pub mod high;"),
            ("low/mod.rs", "pub mod a;"),
            ("low/a.rs", "pub fn f() { crate::high::b::g(); }"),
            ("high/mod.rs", "pub mod b;"),
            ("high/b.rs", "pub fn g() {} fn h() { crate::low::a::f(); }"),
        ],
    );
    let graph = read(&dir);
    let up: Vec<String> = arrows_up(&graph, &["low", "high"])
        .iter()
        .map(|e| format!("{} -> {}", display(&e.from), display(&e.to)))
        .collect();
    assert_eq!(up, ["low::a -> high::b"]);
}

#[test]
fn a_path_inside_a_macro_or_an_attribute_is_a_use() {
    let dir = write_crate(
        "macros",
        &[
            ("lib.rs", "pub mod low; pub mod high;"),
            ("low/mod.rs", "pub mod a; pub mod b; pub mod c; pub mod d;"),
            (
                "low/a.rs",
                "pub fn f() -> String { format!(\"{}\", crate::high::x::NAME) }",
            ),
            (
                "low/b.rs",
                "macro_rules! m { ($v:ident) => { $crate::high::y::g($v) }; }",
            ),
            ("low/c.rs", "#[derive(crate::high::z::Z)] pub struct S;"),
            (
                "low/d.rs",
                // a metavariable's path, a global path and a lone name are
                // none of the crate's modules
                "macro_rules! n { ($high:ident) => { $high::x::g(); ::high::x::g(); high }; }",
            ),
            ("high/mod.rs", "pub mod x; pub mod y; pub mod z;"),
            ("high/x.rs", "pub const NAME: &str = \"x\";"),
            ("high/y.rs", "pub fn g(_: u8) {}"),
            ("high/z.rs", "pub struct Z;"),
        ],
    );
    let graph = read(&dir);
    let up: Vec<String> = arrows_up(&graph, &["low", "high"])
        .iter()
        .map(|e| format!("{} -> {}", display(&e.from), display(&e.to)))
        .collect();
    assert_eq!(
        up,
        [
            "low::a -> high::x",
            "low::b -> high::y",
            "low::c -> high::z"
        ]
    );
}

#[test]
fn an_external_crate_outside_its_layers_is_found() {
    let dir = write_crate(
        "externals",
        &[
            ("lib.rs", "pub mod low; pub mod high;"),
            (
                "low.rs",
                "use std::fmt; pub fn f(v: u8) -> String { format!(\"{}\", serde_json::json!(v)) } \
                 fn g() { ::capstone::f(); h!(::capstone::Capstone::new); }",
            ),
            (
                "high.rs",
                "use capstone::Capstone; mod serde_json { pub fn f() {} } \
                 fn g() { serde_json::f(); let _ = unicorn_engine::Unicorn::new; }",
            ),
        ],
    );
    let graph = read(&dir);
    let crates: BTreeSet<String> = ["serde_json", "capstone", "unicorn_engine"]
        .map(String::from)
        .into();
    let allowed: BTreeMap<String, BTreeSet<String>> = [
        ("low".to_owned(), BTreeSet::new()),
        ("high".to_owned(), ["capstone".to_owned()].into()),
    ]
    .into();
    let found: Vec<String> =
        crates_out_of_place(&graph, &["low", "high"], "cli", &crates, &allowed)
            .iter()
            .map(|u| format!("{} uses {}", display(&u.from), u.name))
            .collect();
    // high's own module `serde_json` is not the crate
    assert_eq!(
        found,
        [
            "low uses serde_json",
            "low uses capstone",
            "low uses capstone",
            "high uses unicorn_engine"
        ]
    );
}

#[test]
fn every_member_and_target_of_a_workspace_is_a_crate_root() {
    let dir = std::env::temp_dir().join(format!("tidy-workspace-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let scratch = Scratch(dir.clone());
    let files = [
        (
            "Cargo.toml",
            "[workspace]\nresolver = \"2\"\nmembers = [\"a\", \"nested/b-c\"]\n",
        ),
        (
            "a/Cargo.toml",
            "[package]\nname = \"a\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        ),
        ("a/src/lib.rs", ""),
        ("a/src/main.rs", "fn main() {}"),
        ("a/tests/t.rs", ""),
        (
            "nested/b-c/Cargo.toml",
            "[package]\nname = \"b-c\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
             [dependencies]\nalpha = { path = \"../../a\", package = \"a\" }\n\
             [build-dependencies]\na = { path = \"../../a\" }\n",
        ),
        ("nested/b-c/build.rs", "fn main() {}"),
        ("nested/b-c/src/lib.rs", ""),
    ];
    for (path, text) in files {
        let file = dir.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    let roots = crate_roots(&scratch.0).unwrap_or_else(|e| panic!("{e}"));
    let found: Vec<String> = roots
        .iter()
        .map(|r| {
            let crates: Vec<&str> = r.crates.iter().map(String::as_str).collect();
            format!(
                "{} {} {} {crates:?}",
                r.package,
                r.kind,
                r.root.strip_prefix(&dir).unwrap().display()
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            "a lib a/src/lib.rs []",
            "a bin a/src/main.rs [\"a\"]",
            "b-c custom-build nested/b-c/build.rs [\"a\"]",
            "b-c lib nested/b-c/src/lib.rs [\"alpha\"]",
        ]
    );
}
