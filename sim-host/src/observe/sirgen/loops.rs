//! Natural loops of a control-flow graph: a back edge `u -> h` where `h`
//! dominates `u`; the loop is `h` and every block that reaches `u` without
//! passing `h`. Loops sharing a header are one loop. Loops nest when one's
//! body contains the other's; irreducible cycles (no dominating header)
//! give no loop.

use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A natural loop: its header block and body blocks (header included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NaturalLoop {
    pub header: u64,
    pub body: BTreeSet<u64>,
    /// Blocks with a back edge to the header.
    pub latches: BTreeSet<u64>,
}

/// Immediate dominators of the blocks reachable from `entry` (Cooper,
/// Harvey, Kennedy: "A Simple, Fast Dominance Algorithm").
pub fn dominators(entry: u64, succs: &BTreeMap<u64, Vec<u64>>) -> HashMap<u64, u64> {
    // Reverse post-order by an explicit stack (deep graphs must not overflow).
    let mut order = Vec::new();
    let mut seen = BTreeSet::new();
    let mut stack: Vec<(u64, usize)> = vec![(entry, 0)];
    seen.insert(entry);
    while let Some((node, i)) = stack.pop() {
        let next = succs.get(&node).and_then(|s| s.get(i)).copied();
        match next {
            Some(n) => {
                stack.push((node, i + 1));
                if seen.insert(n) {
                    stack.push((n, 0));
                }
            }
            None => order.push(node),
        }
    }
    order.reverse();
    let rpo: HashMap<u64, usize> = order.iter().enumerate().map(|(i, b)| (*b, i)).collect();
    let mut preds: HashMap<u64, Vec<u64>> = HashMap::new();
    for (b, ss) in succs {
        if !rpo.contains_key(b) {
            continue;
        }
        for s in ss {
            preds.entry(*s).or_default().push(*b);
        }
    }
    let mut idom: HashMap<u64, u64> = HashMap::from([(entry, entry)]);
    let intersect = |idom: &HashMap<u64, u64>, mut a: u64, mut b: u64| {
        while a != b {
            while rpo[&a] > rpo[&b] {
                a = idom[&a];
            }
            while rpo[&b] > rpo[&a] {
                b = idom[&b];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for b in order.iter().skip(1) {
            let mut new: Option<u64> = None;
            for p in preds.get(b).map(Vec::as_slice).unwrap_or(&[]) {
                if idom.contains_key(p) {
                    new = Some(match new {
                        None => *p,
                        Some(n) => intersect(&idom, *p, n),
                    });
                }
            }
            if let Some(n) = new {
                if idom.get(b) != Some(&n) {
                    idom.insert(*b, n);
                    changed = true;
                }
            }
        }
    }
    idom
}

fn dominates(idom: &HashMap<u64, u64>, a: u64, mut b: u64) -> bool {
    loop {
        if a == b {
            return true;
        }
        match idom.get(&b) {
            Some(&p) if p != b => b = p,
            _ => return false,
        }
    }
}

/// The natural loops of the graph `succs` entered at `entry`, outer loops
/// (larger bodies) first.
pub fn natural_loops(entry: u64, succs: &BTreeMap<u64, Vec<u64>>) -> Vec<NaturalLoop> {
    let idom = dominators(entry, succs);
    let mut preds: HashMap<u64, Vec<u64>> = HashMap::new();
    for (b, ss) in succs {
        if idom.contains_key(b) {
            for s in ss {
                preds.entry(*s).or_default().push(*b);
            }
        }
    }
    let mut by_header: BTreeMap<u64, NaturalLoop> = BTreeMap::new();
    for (u, ss) in succs {
        if !idom.contains_key(u) {
            continue;
        }
        for h in ss {
            if !dominates(&idom, *h, *u) {
                continue;
            }
            let lp = by_header.entry(*h).or_insert_with(|| NaturalLoop {
                header: *h,
                body: BTreeSet::from([*h]),
                latches: BTreeSet::new(),
            });
            lp.latches.insert(*u);
            let mut work = vec![*u];
            while let Some(n) = work.pop() {
                if lp.body.insert(n) {
                    work.extend(preds.get(&n).into_iter().flatten().copied());
                }
            }
        }
    }
    let mut loops: Vec<NaturalLoop> = by_header.into_values().collect();
    loops.sort_by(|a, b| {
        b.body
            .len()
            .cmp(&a.body.len())
            .then(a.header.cmp(&b.header))
    });
    loops
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(u64, &[u64])]) -> BTreeMap<u64, Vec<u64>> {
        edges.iter().map(|(b, s)| (*b, s.to_vec())).collect()
    }

    #[test]
    fn nested_loops_are_found_with_their_bodies() {
        // 0 -> 1 (outer header) -> 2 (inner header) -> 3 -> 2 | 4 -> 1 | 5
        let g = graph(&[
            (0, &[1]),
            (1, &[2]),
            (2, &[3]),
            (3, &[2, 4]),
            (4, &[1, 5]),
            (5, &[]),
        ]);
        let loops = natural_loops(0, &g);
        assert_eq!(loops.len(), 2);
        assert_eq!(loops[0].header, 1);
        assert_eq!(loops[0].body, BTreeSet::from([1, 2, 3, 4]));
        assert_eq!(loops[1].header, 2);
        assert_eq!(loops[1].body, BTreeSet::from([2, 3]));
        assert_eq!(loops[1].latches, BTreeSet::from([3]));
    }

    #[test]
    fn an_irreducible_cycle_is_no_loop() {
        // 0 -> 1 | 2 ; 1 -> 2 ; 2 -> 1 : neither 1 nor 2 dominates the other.
        let g = graph(&[(0, &[1, 2]), (1, &[2]), (2, &[1])]);
        assert!(natural_loops(0, &g).is_empty());
    }

    #[test]
    fn a_self_loop_is_a_loop() {
        let g = graph(&[(0, &[1]), (1, &[1, 2]), (2, &[])]);
        let loops = natural_loops(0, &g);
        assert_eq!(loops.len(), 1);
        assert_eq!(loops[0].body, BTreeSet::from([1]));
    }
}
