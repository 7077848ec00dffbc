//! The docs stay true: every repository path and every Rust path
//! (`engine::devices`, `crate::model::target::Target`, `FlashState::fetch_block`)
//! that README.md, ARCHITECTURE.md, docs/ and the crates' READMEs name in
//! backticks must exist in the repository. A renamed file or function
//! fails here, naming the document, its line and what is gone.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Names the docs use that live outside this repository, each with where.
const OUTSIDE: &[(&str, &str)] = &[
    (
        ".cargo/config.toml",
        "in the project `sim-host new` generates",
    ),
    (
        "bindings/rust/sys/src/lib.rs",
        "in the unicorn-engine-sys crate",
    ),
    ("DWT::unlock", "the cortex-m crate's"),
    ("Mode::MCLASS", "unicorn-engine's"),
    ("Mode::THUMB", "unicorn-engine's"),
    ("TlbType::VIRTUAL", "unicorn-engine's"),
];

fn documents(root: &Path) -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "CONTRIBUTING.md"]
        .iter()
        .map(|d| root.join(d))
        .collect();
    for dir in [
        "docs",
        "chips-eval",
        "sir",
        "fuzz",
        "arpsim",
        "sim-host",
        "tests",
    ] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            if name.ends_with(".md") && (dir == "docs" || name == "README.md") {
                docs.push(p);
            }
        }
    }
    docs.retain(|d| d.is_file());
    docs.sort();
    docs
}

/// Every file of the repository (not the build's `target/`, not `.git`),
/// relative to its root, with `/` separators.
fn repository_files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir)
            .expect("a readable directory")
            .flatten()
        {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if !(dir == root && (name == "target" || name == ".git")) {
                    stack.push(p);
                }
            } else if let Ok(rel) = p.strip_prefix(root) {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out
}

/// The spans in backticks of a document, each with its line number.
fn code_spans(text: &str) -> Vec<(usize, &str)> {
    let mut spans = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut parts = line.split('`');
        parts.next();
        while let (Some(inside), Some(_)) = (parts.next(), parts.next()) {
            spans.push((i + 1, inside));
        }
    }
    spans
}

const EXTENSIONS: &[&str] = &[
    ".rs", ".toml", ".md", ".c", ".h", ".S", ".py", ".ld", ".json", ".sh", ".xml", ".csv",
];

/// A word of a span that names a repository path, or None.
fn as_path<'a>(word: &'a str, top: &BTreeSet<String>) -> Option<&'a str> {
    let word = word.trim_matches(|c: char| "(),;:\"'".contains(c));
    let word = word.split(':').next()?.trim_end_matches('.');
    let placeholder = word.contains(['<', '>', '*', '{', '}', '$', '…', '|'])
        || word.starts_with('/')
        || word.starts_with("target/")
        || word.contains("://")
        || word.split('/').any(placeholder_component);
    let first = word.split('/').next()?;
    let pathlike =
        word.contains('/') && (top.contains(first) || EXTENSIONS.iter().any(|e| word.ends_with(e)));
    (pathlike && !placeholder).then_some(word)
}

/// Words the docs use for "a name goes here" in a path.
const PLACEHOLDERS: &[&str] = &["DIR", "NAME", "FILE", "PATH", "TARGET", "EXAMPLE", "OUT"];

/// A path component that stands for names (`DIR`, `shard-K-of-N.json`): a
/// placeholder word or a single capital, its extension apart (`loops.S`
/// and `README.md` are files).
fn placeholder_component(component: &str) -> bool {
    let stem = component
        .rsplit_once('.')
        .map_or(component, |(stem, _)| stem);
    stem.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| {
        PLACEHOLDERS.contains(&w) || (w.len() == 1 && w.chars().all(|c| c.is_ascii_uppercase()))
    })
}

fn path_exists(path: &str, root: &Path, files: &[String]) -> bool {
    // outside the repository: not there in a clean clone elsewhere
    if path.starts_with("../") {
        return false;
    }
    let path = path.trim_start_matches("./").trim_end_matches('/');
    root.join(path).exists()
        || files
            .iter()
            .any(|f| f.ends_with(&format!("/{path}")) || f.starts_with(&format!("{path}/")))
        || files.iter().any(|f| f.contains(&format!("/{path}/")))
}

/// The Rust sources of the repository, with their text, and its crates'
/// root files by crate name.
struct Sources {
    files: Vec<(String, String)>,
    crates: Vec<(String, String)>,
}

/// `[package] name` of a Cargo.toml, as Rust spells it.
fn package_name(manifest: &str) -> Option<String> {
    let package = manifest.split("[package]").nth(1)?;
    let line = package
        .lines()
        .find(|l| l.trim_start().starts_with("name"))?;
    Some(line.split('"').nth(1)?.replace('-', "_"))
}

impl Sources {
    fn load(root: &Path, files: &[String]) -> Sources {
        let read = |f: &String| std::fs::read_to_string(root.join(f)).ok();
        let sources: Vec<(String, String)> = files
            .iter()
            .filter(|f| f.ends_with(".rs"))
            .filter_map(|f| Some((f.clone(), read(f)?)))
            .collect();
        let mut crates = Vec::new();
        for manifest in files.iter().filter(|f| f.ends_with("Cargo.toml")) {
            let Some(name) = read(manifest).as_deref().and_then(package_name) else {
                continue;
            };
            let dir = manifest.trim_end_matches("Cargo.toml");
            for root_file in ["src/lib.rs", "src/main.rs"] {
                let file = format!("{dir}{root_file}");
                if sources.iter().any(|(f, _)| *f == file) {
                    crates.push((name.clone(), file));
                    break;
                }
            }
        }
        Sources {
            files: sources,
            crates,
        }
    }

    /// The module files named `name` (`name.rs`, `name/mod.rs`), or the
    /// root of the crate `name` (`crate`: any crate's).
    fn modules(&self, name: &str) -> Vec<String> {
        let crates = self
            .crates
            .iter()
            .filter(|(c, _)| c == name || name == "crate");
        let mut found: Vec<String> = crates.map(|(_, f)| f.clone()).collect();
        found.extend(
            self.files
                .iter()
                .map(|(f, _)| f)
                .filter(|f| {
                    f.ends_with(&format!("/{name}.rs")) || f.ends_with(&format!("/{name}/mod.rs"))
                })
                .cloned(),
        );
        found
    }

    fn text(&self, file: &str) -> &str {
        self.files
            .iter()
            .find(|(f, _)| f == file)
            .map_or("", |(_, t)| t)
    }

    /// The child module `name` of the module in `file`.
    fn child(&self, file: &str, name: &str) -> Option<String> {
        let dir =
            if file.ends_with("/mod.rs") || file.ends_with("/lib.rs") || file.ends_with("/main.rs")
            {
                file.rsplit_once('/').map(|(d, _)| d.to_owned())?
            } else {
                file.trim_end_matches(".rs").to_owned()
            };
        [format!("{dir}/{name}.rs"), format!("{dir}/{name}/mod.rs")]
            .into_iter()
            .find(|c| self.files.iter().any(|(f, _)| f == c))
    }

    /// Files that define the type `name` or implement something for it.
    fn type_files(&self, name: &str) -> Vec<&str> {
        let def = |t: &str| {
            ["struct", "enum", "trait", "type", "union"]
                .iter()
                .any(|k| defines(t, k, name))
                || t.lines()
                    .any(|l| l.trim_start().starts_with("impl") && has_word(l, name))
        };
        self.files
            .iter()
            .filter(|(_, t)| def(t))
            .map(|(f, _)| f.as_str())
            .collect()
    }

    /// Whether a Rust path the docs name exists.
    fn resolves(&self, path: &str) -> bool {
        let segs: Vec<&str> = path.split("::").collect();
        if segs[0].starts_with(|c: char| c.is_ascii_uppercase()) {
            let files = self.type_files(segs[0]);
            return !files.is_empty()
                && segs[1..]
                    .iter()
                    .all(|s| files.iter().any(|f| has_word(self.text(f), s)));
        }
        self.modules(segs[0])
            .iter()
            .any(|m| self.walk(m, &segs[1..]))
    }

    /// The child modules `module` re-exports whole (`pub use child::*;`).
    fn glob_reexports(&self, module: &str, text: &str) -> Vec<String> {
        let globs = text.lines().filter_map(|l| {
            let l = l.trim_start().strip_prefix("pub use ")?;
            l.strip_suffix("::*;")
        });
        globs
            .filter_map(|child| self.child(module, child))
            .collect()
    }

    fn walk(&self, module: &str, rest: &[&str]) -> bool {
        let Some((first, more)) = rest.split_first() else {
            return true;
        };
        if let Some(child) = self.child(module, first) {
            return self.walk(&child, more);
        }
        let text = self.text(module);
        let item = [
            "fn",
            "struct",
            "enum",
            "const",
            "static",
            "trait",
            "type",
            "mod",
            "union",
            "macro_rules!",
        ]
        .iter()
        .any(|k| defines(text, k, first))
            || text
                .lines()
                .any(|l| l.trim_start().starts_with("pub use") && has_word(l, first));
        if !item {
            return self
                .glob_reexports(module, text)
                .iter()
                .any(|m| self.walk(m, rest));
        }
        // a type's member (`State::end`): named in the files about it
        let files = self.type_files(first);
        more.iter()
            .all(|s| has_word(text, s) || files.iter().any(|f| has_word(self.text(f), s)))
    }
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back().is_none_or(|c| !is_ident(c));
        let after = text[i + word.len()..]
            .chars()
            .next()
            .is_none_or(|c| !is_ident(c));
        before && after
    })
}

fn defines(text: &str, keyword: &str, name: &str) -> bool {
    text.match_indices(keyword).any(|(i, _)| {
        let rest = text[i + keyword.len()..].trim_start();
        let before = text[..i].chars().next_back().is_none_or(|c| !is_ident(c));
        before && rest.starts_with(name) && !rest[name.len()..].starts_with(is_ident)
    })
}

/// The Rust paths (`a::b`, `crate::a::B`) of a span, but not those of
/// external crates (Cargo.lock's packages, std).
fn rust_paths<'a>(span: &'a str, external: &BTreeSet<String>) -> Vec<&'a str> {
    let mut out = Vec::new();
    for word in span.split(|c: char| !(is_ident(c) || c == ':')) {
        let word = word.trim_matches(':');
        if !word.contains("::") || word.contains(":::") {
            continue;
        }
        let first = word.split("::").next().unwrap_or_default();
        if !external.contains(first) && word.split("::").all(|s| !s.is_empty()) {
            out.push(word);
        }
    }
    out
}

fn external_crates(root: &Path) -> BTreeSet<String> {
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).expect("Cargo.lock");
    let mut names: BTreeSet<String> = lock
        .lines()
        .filter_map(|l| l.strip_prefix("name = \""))
        .map(|n| n.trim_end_matches('"').replace('-', "_"))
        .collect();
    // the workspace's own crates are checked, not skipped
    for own in [
        "sim_host",
        "arpsim",
        "sir",
        "chips_eval",
        "plot",
        "tidy",
        "e2e_tests",
        "libarp",
    ] {
        names.remove(own);
    }
    names.extend(["std", "core", "alloc", "self", "super", "Self"].map(String::from));
    names
}

#[test]
fn every_path_and_symbol_the_docs_name_exists() {
    let root = e2e_tests::repo_root();
    let files = repository_files(&root);
    let top: BTreeSet<String> = files
        .iter()
        .filter_map(|f| f.split_once('/'))
        .map(|(t, _)| t.to_owned())
        .collect();
    let sources = Sources::load(&root, &files);
    let external = external_crates(&root);
    let outside = |name: &str| OUTSIDE.iter().any(|(n, _)| *n == name);
    let mut gone = Vec::new();
    for doc in documents(&root) {
        let text = std::fs::read_to_string(&doc).expect("a readable document");
        let shown = doc
            .strip_prefix(&root)
            .unwrap_or(&doc)
            .display()
            .to_string();
        for (line, span) in code_spans(&text) {
            for word in span.split_whitespace() {
                if let Some(path) = as_path(word, &top) {
                    if !outside(path) && !path_exists(path, &root, &files) {
                        gone.push(format!("{shown}:{line}: path `{path}`"));
                    }
                }
            }
            for path in rust_paths(span, &external) {
                if !outside(path) && !sources.resolves(path) {
                    gone.push(format!("{shown}:{line}: Rust path `{path}`"));
                }
            }
        }
    }
    assert!(
        gone.is_empty(),
        "{} names the docs use are gone:\n{}",
        gone.len(),
        gone.join("\n")
    );
}

#[test]
fn a_renamed_file_or_function_is_caught() {
    let root = e2e_tests::repo_root();
    let files = repository_files(&root);
    let sources = Sources::load(&root, &files);
    let top: BTreeSet<String> = files
        .iter()
        .filter_map(|f| f.split_once('/'))
        .map(|(t, _)| t.to_owned())
        .collect();
    // what exists resolves
    assert!(path_exists("sim-host/src/engine/flash.rs", &root, &files));
    assert!(path_exists("engine/flash.rs", &root, &files));
    assert!(sources.resolves("engine::flash::fetch"));
    assert!(sources.resolves("crate::model::memsys::FlashState"));
    assert!(sources.resolves("FlashState::set_required"));
    // what does not is caught
    assert!(!path_exists("sim-host/src/engine/flush.rs", &root, &files));
    assert!(
        !path_exists("../shared/DESIGN.md", &root, &files),
        "outside the repository"
    );
    assert!(!sources.resolves("engine::flash::fetch_everything"));
    assert!(!sources.resolves("machine::map_memory"));
    assert!(!sources.resolves("FlashState::no_such_member"));
    assert!(sources.resolves("arpsim::extrap::export"));
    assert!(!sources.resolves("chips_eval::extrap::export"));
    // placeholders and build outputs are not paths
    assert_eq!(as_path("DIR/shard-K-of-N.json", &top), None);
    assert_eq!(as_path("target/guests/cortex-m4/x.elf", &top), None);
    assert_eq!(as_path("<dir>/a.rs", &top), None);
    assert_eq!(as_path("results/shard-K-of-4.json", &top), None);
    assert_eq!(as_path("arm/loops.S", &top), Some("arm/loops.S"));
    assert_eq!(as_path("sir/README.md", &top), Some("sir/README.md"));
    assert!(
        sources.resolves("apart::Sir::new"),
        "through `pub use model::*`"
    );
    assert_eq!(
        as_path("(sim-host/src/engine/flash.rs)", &top),
        Some("sim-host/src/engine/flash.rs")
    );
}
