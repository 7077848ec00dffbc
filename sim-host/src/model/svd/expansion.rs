//! svd-parser's expansion (arrays, `derivedFrom`), run only once it is
//! known to end within [`MAX_SVD_ELEMENTS`] (issue 43, M03).
//!
//! `derivedFrom` copies are what the streaming scan (`super::prescan`)
//! cannot count: a cluster of two copies of a cluster of two copies ...
//! doubles per level, and a chain of derivations that loops without
//! coming back to its first element (`X` from `B`, `B` from `C`, `C` from
//! `B`) makes svd-parser recurse forever. So the expansion is first
//! walked as svd-parser's `expand` walks it, with its own index and
//! derivation functions, counting instead of building: every chain is
//! followed with the paths it visited (a loop is refused), and the count
//! stops at the cap, fields counted with their registers (the poll
//! warning names them). A field's own `derivedFrom` is dropped first: it
//! would only copy a description and enumerated values, which sim-host
//! does not read, and a field chain could loop as the others do.

use crate::model::limits::MAX_SVD_ELEMENTS;
use std::collections::HashSet;
use svd_parser::expand::{
    derive_cluster, derive_peripheral, derive_register, BlockPath, Index, RegisterPath,
};
use svd_parser::svd::{Cluster, Device, MaybeArray, Peripheral, Register, RegisterCluster};

/// `device` expanded, or why not.
pub(super) fn expand(mut device: Device) -> Result<Device, String> {
    for p in &mut device.peripherals {
        if let Some(list) = p.registers.as_mut() {
            drop_field_derivations(list);
        }
    }
    // the index lists every array element by name: bounded first
    let plain: u64 = device.peripherals.iter().map(plain_count).sum();
    let cap = MAX_SVD_ELEMENTS as u64;
    if plain > cap {
        return Err(format!(
            "{plain} peripherals, clusters, registers and fields once the arrays are expanded: at \
             most {cap} per file (MAX_SVD_ELEMENTS)"
        ));
    }
    Counter {
        index: Index::create(&device),
        total: 0,
    }
    .device(&device)?;
    svd_parser::expand::expand(&device).map_err(|e| format!("{e:#}"))
}

fn drop_field_derivations(list: &mut [RegisterCluster]) {
    for item in list {
        match item {
            RegisterCluster::Register(r) => {
                for f in r.fields_mut() {
                    f.derived_from = None;
                }
            }
            RegisterCluster::Cluster(c) => drop_field_derivations(&mut c.children),
        }
    }
}

fn copies<T>(item: &MaybeArray<T>) -> u64 {
    match item {
        MaybeArray::Single(_) => 1,
        MaybeArray::Array(_, dim) => u64::from(dim.dim).max(1),
    }
}

/// A register's copies, each with its fields (their arrays expanded).
fn with_fields(r: &Register) -> u64 {
    let fields = r.fields().map(copies).fold(0, u64::saturating_add);
    copies(r).saturating_mul(1 + fields)
}

/// Elements of `p` with arrays expanded, derivations not followed.
fn plain_count(p: &Peripheral) -> u64 {
    let inside = p.registers.as_deref().map_or(0, plain_list);
    copies(p).saturating_mul(1 + inside)
}

fn plain_list(list: &[RegisterCluster]) -> u64 {
    list.iter()
        .map(|item| match item {
            RegisterCluster::Register(r) => with_fields(r),
            RegisterCluster::Cluster(c) => copies(c).saturating_mul(1 + plain_list(&c.children)),
        })
        .fold(0, u64::saturating_add)
}

/// The walk of svd-parser's `expand`, counting.
struct Counter<'a> {
    index: Index<'a>,
    total: u64,
}

impl Counter<'_> {
    fn device(&mut self, device: &Device) -> Result<(), String> {
        for p in &device.peripherals {
            let count = self.peripheral(p)?;
            self.total = self.total.saturating_add(count);
            self.check(self.total, "the device", "")?;
        }
        Ok(())
    }

    /// Refuses a count beyond the cap, naming where it was reached.
    fn check(&self, count: u64, what: &str, name: &str) -> Result<(), String> {
        let cap = MAX_SVD_ELEMENTS as u64;
        if count <= cap {
            return Ok(());
        }
        Err(format!(
            "{what}{name}: more than {cap} elements once its arrays are expanded and its \
             derivedFrom copies made: at most {cap} per file (MAX_SVD_ELEMENTS)"
        ))
    }

    fn peripheral(&mut self, p: &Peripheral) -> Result<u64, String> {
        let derived;
        let (p, path) = match &p.derived_from {
            None => (p, BlockPath::new(&p.name)),
            Some(from) => {
                self.peripheral_chain(&p.name, from)?;
                let mut copy = p.clone();
                copy.derived_from = None;
                let path = derive_peripheral(&mut copy, from, &self.index)
                    .map_err(|e| format!("{e:#}"))?
                    .unwrap_or_else(|| BlockPath::new(&p.name));
                derived = copy;
                (&derived, path)
            }
        };
        let inside = self.list(p.registers.as_deref().unwrap_or_default(), &path)?;
        let count = copies(p).saturating_mul(1 + inside);
        self.check(count, "peripheral ", &format!("`{}`", p.name))?;
        Ok(count)
    }

    fn list(&mut self, list: &[RegisterCluster], path: &BlockPath) -> Result<u64, String> {
        let mut sum = 0u64;
        for item in list {
            let count = match item {
                RegisterCluster::Register(r) => self.register(r, path)?,
                RegisterCluster::Cluster(c) => self.cluster(c, path)?,
            };
            sum = sum.saturating_add(count);
            self.check(sum, "the block ", &format!("`{path}`"))?;
        }
        Ok(sum)
    }

    fn cluster(&mut self, c: &Cluster, path: &BlockPath) -> Result<u64, String> {
        let derived;
        let (c, cpath) = match &c.derived_from {
            None => (c, path.new_cluster(&c.name)),
            Some(from) => {
                self.cluster_chain(&c.name, from, path)?;
                let mut copy = c.clone();
                copy.derived_from = None;
                let cpath = derive_cluster(&mut copy, from, path, &self.index)
                    .map_err(|e| format!("{e:#}"))?
                    .unwrap_or_else(|| path.new_cluster(&c.name));
                derived = copy;
                (&derived, cpath)
            }
        };
        let inside = self.list(&c.children, &cpath)?;
        let count = copies(c).saturating_mul(1 + inside);
        self.check(count, "cluster ", &format!("`{cpath}`"))?;
        Ok(count)
    }

    fn register(&mut self, r: &Register, path: &BlockPath) -> Result<u64, String> {
        let Some(from) = &r.derived_from else {
            return Ok(with_fields(r));
        };
        self.register_chain(&r.name, from, path)?;
        let mut copy = r.clone();
        copy.derived_from = None;
        derive_register(&mut copy, from, path, &self.index).map_err(|e| format!("{e:#}"))?;
        Ok(with_fields(&copy))
    }

    /// The peripherals `derive_peripheral` visits from `name`: a loop is
    /// refused (svd-parser itself only catches one back to `name`).
    fn peripheral_chain(&self, name: &str, from: &str) -> Result<(), String> {
        let mut seen = HashSet::new();
        let mut from = from.to_owned();
        loop {
            if from == name || !seen.insert(from.clone()) {
                return loop_or_self(from == name, "peripheral", name, &from);
            }
            let base = self.index.peripherals.get(&BlockPath::new(&from));
            let Some(next) = base.and_then(|d| d.derived_from.clone()) else {
                return Ok(());
            };
            from = next;
        }
    }

    /// The clusters `derive_cluster` visits from `name` in `path`.
    fn cluster_chain(&self, name: &str, from: &str, path: &BlockPath) -> Result<(), String> {
        let (mut from, mut path) = (from.to_owned(), path.clone());
        let mut seen = HashSet::new();
        loop {
            let (parent, dname) = BlockPath::parse_str(&from);
            let rdpath = parent.unwrap_or_else(|| path.clone());
            let cluster_path = rdpath.new_cluster(dname);
            let own = rdpath == path && dname == name;
            if own || !seen.insert(cluster_path.to_string()) {
                return loop_or_self(own, "cluster", name, &cluster_path.to_string());
            }
            let base = self.index.clusters.get(&cluster_path);
            let Some(next) = base.and_then(|d| d.derived_from.clone()) else {
                return Ok(());
            };
            (from, path) = (next, rdpath);
        }
    }

    /// The registers `derive_register` visits from `name` in `path`.
    fn register_chain(&self, name: &str, from: &str, path: &BlockPath) -> Result<(), String> {
        let (mut from, mut path) = (from.to_owned(), path.clone());
        let mut seen = HashSet::new();
        loop {
            let (block, dname) = RegisterPath::parse_str(&from);
            let rdpath = block.unwrap_or_else(|| path.clone());
            let reg_path = rdpath.new_register(dname);
            let own = rdpath == path && dname == name;
            if own || !seen.insert(reg_path.to_string()) {
                return loop_or_self(own, "register", name, &reg_path.to_string());
            }
            let base = self.index.registers.get(&reg_path);
            let Some(next) = base.and_then(|d| d.derived_from.clone()) else {
                return Ok(());
            };
            (from, path) = (next, rdpath);
        }
    }
}

/// A chain back to its own element is svd-parser's to report ("is
/// self-derived"); any other loop is refused here.
fn loop_or_self(own: bool, kind: &str, name: &str, again: &str) -> Result<(), String> {
    if own {
        return Ok(());
    }
    Err(format!(
        "{kind} `{name}`: its derivedFrom chain is a cycle (it reaches `{again}` again)"
    ))
}
