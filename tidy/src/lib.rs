//! The code's own rules, checked by reading the sources (in the spirit of
//! rust-analyzer's tidy tests): which module uses which, so that layers
//! point one way and no import circle forms, and how long functions are.
//!
//! A crate is read from its root file along its `mod` declarations; test
//! code (`#[cfg(test)]` items and modules) is left out. A module *uses*
//! another when one of its paths names an item of it: `crate::a::b::X`,
//! `super::X`, `self::a::X`, or `a::X` where `a` is a child module (Rust
//! 2018's uniform paths), in `use` lines and in code alike. Declaring a
//! child (`mod a;`) is not a use. A `pub use` re-export is a use: a facade
//! module that re-exports its children's items is above them, so they must
//! not reach their siblings through it. Paths written inside macro calls
//! (`format!("{}", crate::a::X)`), `macro_rules!` bodies (`$crate::a::X`)
//! and attribute arguments (`#[derive(serde::Serialize)]`) count as well:
//! they are read from the token stream as `a::b` runs of identifiers.
//!
//! The first segment of every other path (`capstone::Insn`, `use toml;`)
//! is kept as an [`ExternalUse`]: the caller knows which of those names are
//! crates (a package's dependencies) and which layer may use them.

#![forbid(unsafe_code)]

use proc_macro2::TokenTree;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::spanned::Spanned;
use syn::visit::Visit;

/// A module's path below its crate root (`["engine", "state"]`; empty for
/// the root).
pub type ModPath = Vec<String>;

/// One use of a module by another, where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    pub from: ModPath,
    pub to: ModPath,
    pub file: PathBuf,
    pub line: usize,
}

/// A function's length in lines, from `fn` to its closing brace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FnLength {
    pub file: PathBuf,
    pub line: usize,
    pub name: String,
    pub lines: usize,
}

/// A path of a module that starts with a name that is not one of the
/// crate's modules (`capstone::Insn`, `std::fmt`, `Self::new`): `name` is
/// that first segment. Which of them are external crates is the caller's
/// to say (a package's dependencies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalUse {
    pub from: ModPath,
    pub name: String,
    pub file: PathBuf,
    pub line: usize,
}

/// What reading a crate found.
#[derive(Debug, Default)]
pub struct CrateGraph {
    /// Every (non-test) module, with the file it is written in.
    pub modules: BTreeMap<ModPath, PathBuf>,
    pub edges: Vec<Edge>,
    pub externals: Vec<ExternalUse>,
    pub functions: Vec<FnLength>,
}

/// Why a crate could not be read.
#[derive(Debug)]
pub struct ReadError(pub String);

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads the crate whose root file is `root` (`src/lib.rs`, `src/main.rs`).
pub fn read_crate(root: &Path) -> Result<CrateGraph, ReadError> {
    let mut found = Vec::new();
    let dir = root.parent().unwrap_or(Path::new(".")).to_owned();
    collect_modules(root, Vec::new(), &dir, true, &mut found)?;
    let mut graph = CrateGraph::default();
    for m in &found {
        graph.modules.insert(m.path.clone(), m.file.clone());
    }
    let known: BTreeSet<ModPath> = graph.modules.keys().cloned().collect();
    for m in &found {
        let mut refs = References {
            module: &m.path,
            known: &known,
            file: &m.file,
            edges: &mut graph.edges,
            externals: &mut graph.externals,
            functions: &mut graph.functions,
        };
        for item in &m.items {
            if !is_test(item_attrs(item)) && !matches!(item, syn::Item::Mod(_)) {
                refs.visit_item(item);
            }
        }
    }
    graph
        .edges
        .sort_by(|a, b| (&a.from, &a.to, a.line).cmp(&(&b.from, &b.to, b.line)));
    Ok(graph)
}

/// A module as read: its path, file and items (inline modules share
/// their parent's file).
struct Module {
    path: ModPath,
    file: PathBuf,
    items: Vec<syn::Item>,
}

fn parse(file: &Path) -> Result<syn::File, ReadError> {
    let text =
        std::fs::read_to_string(file).map_err(|e| ReadError(format!("{}: {e}", file.display())))?;
    syn::parse_file(&text).map_err(|e| {
        let at = e.span().start();
        ReadError(format!(
            "{}:{}:{}: {e}",
            file.display(),
            at.line,
            at.column + 1
        ))
    })
}

/// Reads the module in `file` and, along its `mod` declarations, its
/// children. `children_dir` is where its `mod x;` files are; `mod_rs`
/// whether the file is a `lib.rs`/`main.rs`/`mod.rs` (children beside it).
fn collect_modules(
    file: &Path,
    path: ModPath,
    children_dir: &Path,
    mod_rs: bool,
    out: &mut Vec<Module>,
) -> Result<(), ReadError> {
    let parsed = parse(file)?;
    let dir = if mod_rs {
        children_dir.to_owned()
    } else {
        children_dir.join(path.last().map(String::as_str).unwrap_or(""))
    };
    collect_items(file, path, &dir, parsed.items, out)
}

fn collect_items(
    file: &Path,
    path: ModPath,
    dir: &Path,
    mut items: Vec<syn::Item>,
    out: &mut Vec<Module>,
) -> Result<(), ReadError> {
    for item in &mut items {
        let syn::Item::Mod(m) = item else { continue };
        if is_test(&m.attrs) {
            continue;
        }
        let mut child = path.clone();
        child.push(m.ident.to_string());
        match &mut m.content {
            Some((_, inner)) => {
                // read as a module of its own (a module item is not visited)
                let inner = std::mem::take(inner);
                let inner_dir = dir.join(m.ident.to_string());
                collect_items(file, child, &inner_dir, inner, out)?;
            }
            None => {
                let (child_file, mod_rs) = module_file(dir, &m.ident.to_string(), &m.attrs)
                    .ok_or_else(|| {
                        ReadError(format!(
                            "{}: no file for `mod {}` in {}",
                            file.display(),
                            m.ident,
                            dir.display()
                        ))
                    })?;
                let parent = child_file.parent().unwrap_or(dir).to_owned();
                collect_modules(&child_file, child, &parent, mod_rs, out)?;
            }
        }
    }
    out.push(Module {
        path,
        file: file.to_owned(),
        items,
    });
    Ok(())
}

/// The file of `mod name;` declared in a module whose children live in
/// `dir`: `#[path]`, `name.rs` or `name/mod.rs`.
fn module_file(dir: &Path, name: &str, attrs: &[syn::Attribute]) -> Option<(PathBuf, bool)> {
    for a in attrs {
        if let syn::Meta::NameValue(nv) = &a.meta {
            if nv.path.is_ident("path") {
                if let syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) = &nv.value
                {
                    return Some((dir.join(s.value()), false));
                }
            }
        }
    }
    let flat = dir.join(format!("{name}.rs"));
    if flat.is_file() {
        return Some((flat, false));
    }
    let nested = dir.join(name).join("mod.rs");
    nested.is_file().then_some((nested, true))
}

/// Whether attributes mark test-only code: `#[cfg(test)]`, `#[test]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        if a.path().is_ident("test") {
            return true;
        }
        if !a.path().is_ident("cfg") {
            return false;
        }
        a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
    })
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item::*;
    match item {
        Const(i) => &i.attrs,
        Enum(i) => &i.attrs,
        ExternCrate(i) => &i.attrs,
        Fn(i) => &i.attrs,
        ForeignMod(i) => &i.attrs,
        Impl(i) => &i.attrs,
        Macro(i) => &i.attrs,
        Mod(i) => &i.attrs,
        Static(i) => &i.attrs,
        Struct(i) => &i.attrs,
        Trait(i) => &i.attrs,
        TraitAlias(i) => &i.attrs,
        Type(i) => &i.attrs,
        Union(i) => &i.attrs,
        Use(i) => &i.attrs,
        _ => &[],
    }
}

/// Collects a module's uses of other modules and its functions' lengths.
struct References<'a> {
    module: &'a ModPath,
    known: &'a BTreeSet<ModPath>,
    file: &'a Path,
    edges: &'a mut Vec<Edge>,
    externals: &'a mut Vec<ExternalUse>,
    functions: &'a mut Vec<FnLength>,
}

impl References<'_> {
    /// The module a path names an item of (or is), if it is one of this
    /// crate's.
    fn resolve(&self, segments: &[String]) -> Option<ModPath> {
        let first = segments.first()?;
        let (mut base, rest): (ModPath, &[String]) = match first.as_str() {
            "crate" => (Vec::new(), &segments[1..]),
            "self" => (self.module.clone(), &segments[1..]),
            "super" => {
                let ups = segments.iter().take_while(|s| *s == "super").count();
                if ups > self.module.len() {
                    return None;
                }
                (
                    self.module[..self.module.len() - ups].to_vec(),
                    &segments[ups..],
                )
            }
            name => {
                let mut child = self.module.clone();
                child.push(name.to_owned());
                if !self.known.contains(&child) {
                    return None;
                }
                (self.module.clone(), segments)
            }
        };
        for s in rest {
            let mut next = base.clone();
            next.push(s.clone());
            if !self.known.contains(&next) {
                break;
            }
            base = next;
        }
        Some(base)
    }

    /// Notes what a path uses: a module of this crate, or else (when the
    /// path can name a crate: a `use` path, or two segments or more) the
    /// name it starts with.
    fn note(&mut self, segments: &[String], line: usize, from_use: bool) {
        let Some(to) = self.resolve(segments) else {
            let first = segments.first().map(String::as_str);
            let local = matches!(first, None | Some("crate" | "self" | "super" | "Self"));
            if !local && (from_use || segments.len() > 1) {
                self.note_external(&segments[0], line);
            }
            return;
        };
        if &to != self.module {
            self.edges.push(Edge {
                from: self.module.clone(),
                to,
                file: self.file.to_owned(),
                line,
            });
        }
    }

    /// Notes a name that is no module of this crate (a global path
    /// `::name::...` is always one).
    fn note_external(&mut self, name: &str, line: usize) {
        self.externals.push(ExternalUse {
            from: self.module.clone(),
            name: name.to_owned(),
            file: self.file.to_owned(),
            line,
        });
    }

    fn function(&mut self, name: String, sig: &syn::Signature, block: &syn::Block) {
        let start = sig.fn_token.span.start().line;
        let end = block.brace_token.span.close().end().line;
        self.functions.push(FnLength {
            file: self.file.to_owned(),
            line: start,
            name,
            lines: end + 1 - start,
        });
    }
}

impl References<'_> {
    /// Notes the paths written in a token stream (a macro's arguments or
    /// body, an attribute's arguments): every run `a::b::c` of two
    /// identifiers or more, `$crate` read as `crate`. A run after `::` (a
    /// global path `::name::x`, or one after generic arguments) names an
    /// external crate if anything; one after `$` but `$crate` is a
    /// metavariable's (`$x::y`) and is skipped; a single identifier is a
    /// variable or a type as often as a module.
    fn token_paths(&mut self, tokens: proc_macro2::TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < tokens.len() {
            let TokenTree::Ident(first) = &tokens[i] else {
                if let TokenTree::Group(g) = &tokens[i] {
                    self.token_paths(g.stream());
                }
                i += 1;
                continue;
            };
            let mut segments = vec![first.to_string()];
            let mut next = i + 1;
            while path_separator(&tokens, next) {
                let Some(TokenTree::Ident(s)) = tokens.get(next + 2) else {
                    break;
                };
                segments.push(s.to_string());
                next += 3;
            }
            // `$crate` is the punctuation `$` and the identifier `crate`
            let after_dollar = i > 0 && punct(&tokens[i - 1], '$');
            let global = i > 1 && path_separator(&tokens, i - 2);
            let line = first.span().start().line;
            if segments.len() > 1 && global {
                self.note_external(&segments[0], line);
            } else if segments.len() > 1 && (!after_dollar || segments[0] == "crate") {
                self.note(&segments, line, false);
            }
            i = next;
        }
    }
}

fn punct(t: &TokenTree, c: char) -> bool {
    matches!(t, TokenTree::Punct(p) if p.as_char() == c)
}

/// Whether `::` starts at `tokens[at]`.
fn path_separator(tokens: &[TokenTree], at: usize) -> bool {
    match (tokens.get(at), tokens.get(at + 1)) {
        (Some(TokenTree::Punct(a)), Some(b)) => {
            a.as_char() == ':' && a.spacing() == proc_macro2::Spacing::Joint && punct(b, ':')
        }
        _ => false,
    }
}

/// The paths a `use` tree brings in, each as its segments.
fn use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut p = prefix.clone();
            if n.ident != "self" {
                p.push(n.ident.to_string());
            }
            out.push(p);
        }
        syn::UseTree::Rename(r) => {
            let mut p = prefix.clone();
            p.push(r.ident.to_string());
            out.push(p);
        }
        syn::UseTree::Glob(_) => out.push(prefix.clone()),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_paths(t, prefix, out);
            }
        }
    }
}

impl<'ast> Visit<'ast> for References<'_> {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut paths = Vec::new();
        use_paths(&u.tree, &mut Vec::new(), &mut paths);
        let line = u.span().start().line;
        for p in paths {
            match (&u.leading_colon, p.first()) {
                (Some(_), Some(first)) => self.note_external(first, line),
                _ => self.note(&p, line, true),
            }
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        let line = p.span().start().line;
        match &p.leading_colon {
            Some(_) => self.note_external(&segments[0], line),
            None => self.note(&segments, line, false),
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.token_paths(m.tokens.clone());
    }

    fn visit_meta_list(&mut self, m: &'ast syn::MetaList) {
        self.visit_path(&m.path);
        self.token_paths(m.tokens.clone());
    }

    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {
        // `pub(super)` names where an item is visible, not a use
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {
        // a module of its own, read separately
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if is_test(&f.attrs) {
            return;
        }
        self.function(f.sig.ident.to_string(), &f.sig, &f.block);
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if is_test(&i.attrs) {
            return;
        }
        syn::visit::visit_item_impl(self, i);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if is_test(&f.attrs) {
            return;
        }
        self.function(f.sig.ident.to_string(), &f.sig, &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.function(f.sig.ident.to_string(), &f.sig, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

/// The import circles: every set of two or more modules that reach each
/// other (strongly connected components), each as the module paths.
///
/// Uses of the crate root are left out: the root is the crate's public
/// face (its `pub use` lines and `#[macro_export]` macros), and a module
/// naming an item by its public path is no circle of the code's own.
pub fn circles(graph: &CrateGraph) -> Vec<Vec<ModPath>> {
    let nodes: Vec<&ModPath> = graph.modules.keys().collect();
    let index: BTreeMap<&ModPath, usize> = nodes.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let mut next: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); nodes.len()];
    for e in graph.edges.iter().filter(|e| !e.to.is_empty()) {
        if let (Some(&a), Some(&b)) = (index.get(&e.from), index.get(&e.to)) {
            next[a].insert(b);
        }
    }
    strongly_connected(&next)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| c.into_iter().map(|i| nodes[i].clone()).collect())
        .collect()
}

/// Tarjan's algorithm, iterative (no recursion per node).
fn strongly_connected(next: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    let n = next.len();
    let (mut index, mut low) = (vec![usize::MAX; n], vec![0; n]);
    let (mut on_stack, mut stack, mut out) = (vec![false; n], Vec::new(), Vec::new());
    let mut counter = 0;
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work: Vec<(usize, Vec<usize>)> = Vec::new();
        index[start] = counter;
        low[start] = counter;
        counter += 1;
        stack.push(start);
        on_stack[start] = true;
        work.push((start, next[start].iter().copied().collect()));
        while let Some((v, pending)) = work.last_mut() {
            let v = *v;
            if let Some(w) = pending.pop() {
                if index[w] == usize::MAX {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, next[w].iter().copied().collect()));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some((parent, _)) = work.last() {
                low[*parent] = low[*parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                component.sort_unstable();
                out.push(component);
            }
        }
    }
    out
}

/// The layer of a module: the position of its top-level module in
/// `layers` (bottom first); `None` for the root and modules outside.
pub fn layer_of(module: &[String], layers: &[&str]) -> Option<usize> {
    let top = module.first()?;
    layers.iter().position(|l| l == top)
}

/// Every use of a module in a higher layer than the user's.
pub fn arrows_up<'g>(graph: &'g CrateGraph, layers: &[&str]) -> Vec<&'g Edge> {
    graph
        .edges
        .iter()
        .filter(
            |e| match (layer_of(&e.from, layers), layer_of(&e.to, layers)) {
                (Some(from), Some(to)) => to > from,
                _ => false,
            },
        )
        .collect()
}

/// `a::b` for a module path (`crate` for the root).
pub fn display(path: &[String]) -> String {
    if path.is_empty() {
        "crate".to_owned()
    } else {
        path.join("::")
    }
}

/// A crate root of the workspace: one library, binary or build script of a
/// member package, as `cargo metadata` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrateRoot {
    pub package: String,
    /// `lib`, `bin`, `custom-build`, ... (Cargo's first kind of the target).
    pub kind: String,
    /// The root file, absolute.
    pub root: PathBuf,
    /// The external crates its code may name: its package's dependencies
    /// of its kind (build dependencies for a build script), as Rust names
    /// them (`-` read as `_`, renames applied), and for a binary its own
    /// package's library.
    pub crates: BTreeSet<String>,
}

/// The crate roots of the workspace at `dir` (its libraries, binaries and
/// build scripts; tests, benches and examples left out), read from
/// `cargo metadata` so that a new member or target is never forgotten.
pub fn crate_roots(dir: &Path) -> Result<Vec<CrateRoot>, ReadError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(dir)
        .output()
        .map_err(|e| ReadError(format!("cargo metadata in {}: {e}", dir.display())))?;
    if !out.status.success() {
        return Err(ReadError(format!(
            "cargo metadata in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| ReadError(format!("cargo metadata's output: {e}")))?;
    let packages = meta["packages"].as_array().cloned().unwrap_or_default();
    // a member's library may be named otherwise than its package
    // (`sim-plot`'s is `plot`); a registry package's is taken to be its name
    let lib_names: BTreeMap<String, String> = packages
        .iter()
        .filter_map(|p| Some((p["name"].as_str()?.to_owned(), library_name(p)?)))
        .collect();
    let mut roots = Vec::new();
    for package in &packages {
        roots.extend(package_roots(package, &lib_names)?);
    }
    roots.sort_by(|a, b| a.root.cmp(&b.root));
    Ok(roots)
}

/// The target kinds whose code is the product (not tests or examples).
const ROOT_KINDS: &[&str] = &[
    "lib",
    "rlib",
    "cdylib",
    "staticlib",
    "dylib",
    "proc-macro",
    "bin",
    "custom-build",
];

/// The crate name of a package's library (`-` read as `_`), if it has one.
fn library_name(package: &serde_json::Value) -> Option<String> {
    let targets = package["targets"].as_array()?;
    let lib = targets.iter().find(|t| {
        t["kind"].as_array().is_some_and(|kinds| {
            kinds
                .iter()
                .filter_map(|k| k.as_str())
                .any(|k| ROOT_KINDS.contains(&k) && k != "bin" && k != "custom-build")
        })
    })?;
    Some(lib["name"].as_str()?.replace('-', "_"))
}

fn package_roots(
    package: &serde_json::Value,
    lib_names: &BTreeMap<String, String>,
) -> Result<Vec<CrateRoot>, ReadError> {
    let name = package["name"].as_str().unwrap_or_default().to_owned();
    let field = |what: &str| ReadError(format!("cargo metadata: package {name}: no {what}"));
    let lib_name = library_name(package);
    let mut roots = Vec::new();
    for target in package["targets"]
        .as_array()
        .ok_or_else(|| field("targets"))?
    {
        let kinds: Vec<&str> = target["kind"]
            .as_array()
            .ok_or_else(|| field("target kind"))?
            .iter()
            .filter_map(|k| k.as_str())
            .collect();
        let Some(kind) = kinds.iter().find(|k| ROOT_KINDS.contains(k)) else {
            continue;
        };
        let root = target["src_path"]
            .as_str()
            .ok_or_else(|| field("src_path"))?;
        roots.push(CrateRoot {
            package: name.clone(),
            kind: (*kind).to_owned(),
            root: PathBuf::from(root),
            crates: BTreeSet::new(),
        });
    }
    let deps = package["dependencies"]
        .as_array()
        .ok_or_else(|| field("dependencies"))?;
    for root in &mut roots {
        let wanted = if root.kind == "custom-build" {
            "build"
        } else {
            "normal"
        };
        for dep in deps {
            let kind = dep["kind"].as_str().unwrap_or("normal");
            if kind != wanted {
                continue;
            }
            let package = dep["name"].as_str().unwrap_or_default();
            let crate_name = match dep["rename"].as_str() {
                Some(rename) => rename.replace('-', "_"),
                None => lib_names
                    .get(package)
                    .cloned()
                    .unwrap_or_else(|| package.replace('-', "_")),
            };
            root.crates.insert(crate_name);
        }
        if root.kind == "bin" {
            root.crates.extend(lib_name.clone());
        }
    }
    Ok(roots)
}

/// Every use of an external crate (a name in `crates`) by a module whose
/// layer (`layer_of` in `layers`; `outside` for modules in none, such as a
/// binary's) is not allowed it: `allowed` maps a layer's name to the
/// crates it may use. The standard library is always allowed.
pub fn crates_out_of_place<'g>(
    graph: &'g CrateGraph,
    layers: &[&str],
    outside: &str,
    crates: &BTreeSet<String>,
    allowed: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<&'g ExternalUse> {
    graph
        .externals
        .iter()
        .filter(|u| crates.contains(&u.name))
        .filter(|u| {
            let layer = layer_of(&u.from, layers).map_or(outside, |l| layers[l]);
            !allowed.get(layer).is_some_and(|a| a.contains(&u.name))
        })
        .collect()
}
