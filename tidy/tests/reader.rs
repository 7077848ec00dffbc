//! The reader itself, on small crates written here: it must see every
//! kind of use (or the layer test could pass by seeing nothing).

use std::path::PathBuf;
use tidy::{arrows_up, circles, display, read_crate};

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
