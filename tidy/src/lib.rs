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
//! not reach their siblings through it.

#![forbid(unsafe_code)]

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

/// What reading a crate found.
#[derive(Debug, Default)]
pub struct CrateGraph {
    /// Every (non-test) module, with the file it is written in.
    pub modules: BTreeMap<ModPath, PathBuf>,
    pub edges: Vec<Edge>,
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

    fn note(&mut self, segments: &[String], line: usize) {
        let Some(to) = self.resolve(segments) else {
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
            self.note(&p, line);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.note(&segments, p.span().start().line);
        syn::visit::visit_path(self, p);
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
