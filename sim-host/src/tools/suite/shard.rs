//! Shards: `--shard K/N` runs the K-th (from 1) of N parts of a manifest,
//! so that a cluster scheduler, a CI matrix or GNU parallel can spread a
//! suite over machines (docs/scale-out.md).
//!
//! The split is deterministic and balanced by an estimate of each entry's
//! cost: its cycles in the `--balance-from` result (a previous run, when it
//! names the entry and the entry ran), else its `max_cycles`, else 1.
//! Entries are taken by cost, highest first (ties in manifest order), and
//! each goes to the shard with the least cost so far (ties: the lowest
//! shard number). Every shard computes the whole plan and keeps its part;
//! the plan's hash goes into the result so `suite merge` can tell shards
//! that were split differently (a different `--balance-from`).

use super::error::{corrupt, read_text, SuiteError};
use super::manifest::{sha256_hex, Manifest};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

pub use arpsim::shard::Shard;

/// What a shard's result records about its part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardInfo {
    pub index: usize,
    pub count: usize,
    /// sha256 of the whole plan (every entry's shard).
    pub plan: String,
}

/// The name of a shard's result file in `--out DIR`.
pub fn result_file_name(shard: Option<Shard>) -> String {
    match shard {
        Some(s) => format!("shard-{}-of-{}.json", s.index, s.count),
        None => "result.json".into(),
    }
}

/// Each entry's cycles in a previous result file (`--balance-from`);
/// entries that did not run (0 cycles) are left out. Any schema version
/// with `entries[].name` and `entries[].cycles` will do.
pub fn recorded_cycles(path: &Path) -> Result<HashMap<String, u64>, SuiteError> {
    let text = read_text(path)?;
    let corrupt = |message: String| corrupt(path, message);
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()))?;
    let entries = value["entries"]
        .as_array()
        .ok_or_else(|| corrupt("no `entries` list".into()))?;
    let mut cycles = HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        let (Some(name), Some(c)) = (e["name"].as_str(), e["cycles"].as_u64()) else {
            return Err(corrupt(format!(
                "entries[{i}]: expected `name` (text) and `cycles` (a count)"
            )));
        };
        if c > 0 {
            cycles.insert(name.to_owned(), c);
        }
    }
    Ok(cycles)
}

/// The estimated cost of each entry (see the module documentation).
pub fn costs(manifest: &Manifest, recorded: &HashMap<String, u64>) -> Vec<u64> {
    manifest
        .entries
        .iter()
        .map(|e| {
            recorded
                .get(&e.name)
                .copied()
                .or(e.max_cycles)
                .unwrap_or(1)
                .max(1)
        })
        .collect()
}

/// The shard (from 1) of each entry: greedy, costliest first, into the
/// lightest shard. Costs are at least 1, so an empty shard is always the
/// lightest: only the first `min(count, entries)` shards ever get entries.
pub fn plan(costs: &[u64], count: usize) -> Vec<usize> {
    use std::cmp::Reverse;
    let mut order: Vec<usize> = (0..costs.len()).collect();
    // stable sort: equal costs stay in manifest order
    order.sort_by(|&a, &b| costs[b].cmp(&costs[a]));
    let used = count.min(costs.len()).max(1);
    // (load, shard): the smallest load first, then the lowest shard
    let mut lightest: std::collections::BinaryHeap<Reverse<(u128, usize)>> =
        (1..=used).map(|s| Reverse((0, s))).collect();
    let mut shard_of = vec![1; costs.len()];
    for i in order {
        let Some(Reverse((load, shard))) = lightest.pop() else {
            break;
        };
        shard_of[i] = shard;
        lightest.push(Reverse((load + u128::from(costs[i].max(1)), shard)));
    }
    shard_of
}

/// The plan's hash, recorded in each shard's result.
pub fn plan_hash(plan: &[usize], count: usize) -> String {
    let text: Vec<String> = plan.iter().map(usize::to_string).collect();
    sha256_hex(format!("{count}:{}", text.join(",")).as_bytes())
}

/// One line of `suite --list`.
#[derive(Debug, Serialize)]
pub struct ListedEntry {
    pub index: usize,
    pub name: String,
    pub elf: String,
    pub target: String,
    pub args: Vec<String>,
    pub cores: Option<usize>,
    pub mode: Option<String>,
    pub max_cycles: Option<u64>,
    pub cost: u64,
    pub shard: Option<usize>,
}

/// What `--list`'s `cost` column is, printed under the table.
pub const COST_NOTE: &str = "cost: the cycles an entry is expected to take, to balance shards: \
its cycles in --balance-from, else its max_cycles, else 1\n";

enum Align {
    Left,
    Right,
}

/// How a `--list` column is aligned, by its header.
fn row_kind(header: &str) -> Align {
    match header {
        "#" | "cores" | "max cycles" | "cost" | "shard" => Align::Right,
        _ => Align::Left,
    }
}

/// `suite --list --json`.
#[derive(Debug, Serialize)]
pub struct Listing {
    pub manifest: String,
    pub manifest_hash: String,
    pub shard: Option<ShardInfo>,
    pub entries: Vec<ListedEntry>,
}

impl Listing {
    /// The listing as a table: a header, one aligned row per entry (the
    /// shard column only with `--shard`), and what `cost` means.
    pub fn to_text(&self) -> String {
        let mut rows = vec![self.header()];
        rows.extend(self.entries.iter().map(|e| self.row(e)));
        let columns = rows[0].len();
        let widths: Vec<usize> = (0..columns)
            .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
            .collect();
        let mut out = String::new();
        for row in &rows {
            let mut line = String::new();
            for (c, (cell, width)) in row.iter().zip(&widths).enumerate() {
                let pad = width - cell.chars().count();
                if c > 0 {
                    line.push_str("  ");
                }
                // numbers to the right, text to the left
                if matches!(row_kind(&rows[0][c]), Align::Right) {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out.push_str(COST_NOTE);
        out
    }

    fn header(&self) -> Vec<String> {
        let mut h = vec![
            "#",
            "entry",
            "target",
            "cores",
            "mode",
            "max cycles",
            "cost",
        ];
        if self.shard.is_some() {
            h.push("shard");
        }
        h.push("args");
        h.into_iter().map(str::to_owned).collect()
    }

    fn row(&self, e: &ListedEntry) -> Vec<String> {
        let dash = || "-".to_owned();
        let mut row = vec![
            e.index.to_string(),
            e.name.clone(),
            e.target.clone(),
            e.cores.map_or_else(dash, |c| c.to_string()),
            e.mode.clone().unwrap_or_else(dash),
            e.max_cycles.map_or_else(dash, |c| c.to_string()),
            e.cost.to_string(),
        ];
        if self.shard.is_some() {
            row.push(e.shard.map_or_else(dash, |s| s.to_string()));
        }
        row.push(e.args.join(" "));
        row
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(index: usize, name: &str, target: &str, cost: u64) -> ListedEntry {
        ListedEntry {
            index,
            name: name.into(),
            elf: "e.elf".into(),
            target: target.into(),
            args: vec!["exit".into(), "3".into()],
            cores: (index == 2).then_some(4),
            mode: None,
            max_cycles: None,
            cost,
            shard: None,
        }
    }

    /// issue 45: the columns were misaligned past a 10-character target
    /// and `cost` was not explained; each column now starts (text) or
    /// ends (numbers) at the same place on every line, under its header.
    #[test]
    fn the_listing_is_aligned_under_a_header_and_explains_cost() {
        let listing = Listing {
            manifest: "m.toml".into(),
            manifest_hash: String::new(),
            shard: None,
            entries: vec![
                listed(1, "a", "cortex-m4", 1),
                listed(2, "a-longer-name", "stm32f407-discovery", 123_456_789),
            ],
        };
        let text = listing.to_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(lines[3], COST_NOTE.trim_end());
        let at = |line: &str, what: &str| line.find(what).unwrap();
        assert_eq!(at(lines[1], "cortex-m4"), at(lines[0], "target"), "{text}");
        assert_eq!(at(lines[2], "stm32f407"), at(lines[0], "target"), "{text}");
        assert_eq!(at(lines[1], "exit 3"), at(lines[2], "exit 3"), "{text}");
        // numbers end where their header ends
        let end = |line: &str, what: &str| line.find(what).unwrap() + what.len();
        assert_eq!(end(lines[2], "123456789"), end(lines[0], "cost"), "{text}");
        assert_eq!(
            end(lines[1], "1  exit") - "  exit".len(),
            end(lines[0], "cost"),
            "{text}"
        );
        assert!(!lines[0].contains("shard"), "{text}");
    }

    #[test]
    fn the_plan_is_greedy_by_cost_and_deterministic() {
        // costs 10, 1, 7, 7, 3 into 2 shards: 10→1, 7→2, 7→2, 3→1, 1→1
        assert_eq!(plan(&[10, 1, 7, 7, 3], 2), [1, 1, 2, 2, 1]);
        // equal costs: manifest order, round robin from shard 1
        assert_eq!(plan(&[1, 1, 1, 1, 1], 3), [1, 2, 3, 1, 2]);
        // more shards than entries: the last shards are empty
        assert_eq!(plan(&[5, 9], 4), [2, 1]);
        assert_eq!(plan(&[], 3), Vec::<usize>::new());
        // a huge shard count costs nothing
        assert_eq!(plan(&[1, 2], usize::MAX), [2, 1]);
    }

    #[test]
    fn every_entry_is_in_exactly_one_shard_and_shards_are_balanced() {
        let costs: Vec<u64> = (0..200u64).map(|i| (i * 7919) % 1000 + 1).collect();
        let p = plan(&costs, 7);
        let mut loads = [0u64; 7];
        for (i, s) in p.iter().enumerate() {
            assert!((1..=7).contains(s));
            loads[s - 1] += costs[i];
        }
        let (min, max) = (loads.iter().min().unwrap(), loads.iter().max().unwrap());
        // greedy by decreasing cost: the spread is at most the largest item
        assert!(max - min <= 1000, "{loads:?}");
        assert_eq!(plan_hash(&p, 7), plan_hash(&plan(&costs, 7), 7));
        assert_ne!(plan_hash(&p, 7), plan_hash(&plan(&costs, 6), 6));
    }
}
