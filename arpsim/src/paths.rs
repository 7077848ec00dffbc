//! Section-id paths (traces) as small numbers: node 0 is the empty path,
//! and every other node is a parent node plus one section id. Entering a
//! section is one step from its parent's node, so the engine and the
//! simulator's statistics key their per-trace data by node instead of
//! hashing whole paths at every call.

use crate::types::Sid;
use rustc_hash::FxHashMap;

/// The most distinct section paths (traces) a run may enter, the root not
/// counted (issue 43, N04: a path costs the engine's and the simulator's
/// statistics about 340 bytes, and 2 M paths took 661 MiB). Past it,
/// [`PathInterner::try_child`] refuses the new path and the run stops
/// with [`crate::error::ArpError::TooManyPaths`]: about 90 MiB at most.
/// Listed in ARCHITECTURE.md's Caps table.
pub const MAX_SECTION_PATHS: usize = 1 << 18;

/// Interned paths; node 0 is the root (no open section).
#[derive(Debug, Clone)]
pub struct PathInterner {
    /// (parent, sid) of each node; the root's is unused.
    keys: Vec<(u32, Sid)>,
    /// The child a node was last asked for (node 0: none yet, as no child
    /// is the root): a loop that enters the same section again and again
    /// finds it without hashing.
    last_child: Vec<(Sid, u32)>,
    children: FxHashMap<(u32, Sid), u32>,
}

impl Default for PathInterner {
    fn default() -> Self {
        PathInterner {
            keys: vec![(0, 0)],
            last_child: vec![(0, Self::ROOT)],
            children: FxHashMap::default(),
        }
    }
}

impl PathInterner {
    pub const ROOT: u32 = 0;

    /// The node of `parent`'s path followed by `sid`, made on first use.
    #[inline]
    pub fn child(&mut self, parent: u32, sid: Sid) -> u32 {
        let (memo_sid, memo_node) = self.last_child[parent as usize];
        if memo_sid == sid && memo_node != Self::ROOT {
            return memo_node;
        }
        let node = match self.children.get(&(parent, sid)) {
            Some(&n) => n,
            None => self.insert(parent, sid),
        };
        self.last_child[parent as usize] = (sid, node);
        node
    }

    /// [`PathInterner::child`] for a run: `None` when the path is new and
    /// [`MAX_SECTION_PATHS`] paths exist already (an existing path is
    /// always found).
    #[inline]
    pub fn try_child(&mut self, parent: u32, sid: Sid) -> Option<u32> {
        let (memo_sid, memo_node) = self.last_child[parent as usize];
        if memo_sid == sid && memo_node != Self::ROOT {
            return Some(memo_node);
        }
        if self.keys.len() > MAX_SECTION_PATHS && !self.children.contains_key(&(parent, sid)) {
            return None;
        }
        Some(self.child(parent, sid))
    }

    #[cold]
    fn insert(&mut self, parent: u32, sid: Sid) -> u32 {
        let node = self.keys.len() as u32;
        self.keys.push((parent, sid));
        self.last_child.push((0, Self::ROOT));
        self.children.insert((parent, sid), node);
        node
    }

    /// The section ids of `node`'s path, outermost first.
    pub fn path(&self, mut node: u32) -> Vec<Sid> {
        let mut out = Vec::new();
        while node != Self::ROOT {
            let (parent, sid) = self.keys[node as usize];
            out.push(sid);
            node = parent;
        }
        out.reverse();
        out
    }

    /// The node `node`'s path extends by one section (`None` for the root).
    pub fn parent(&self, node: u32) -> Option<u32> {
        (node != Self::ROOT).then(|| self.keys[node as usize].0)
    }

    /// How many nodes there are, the root included.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether only the root exists.
    pub fn is_empty(&self) -> bool {
        self.keys.len() == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_node_per_path_whatever_the_order_of_lookups() {
        let mut p = PathInterner::default();
        let a = p.child(PathInterner::ROOT, 1);
        let ab = p.child(a, 2);
        let ac = p.child(a, 3);
        // the memo now holds (a, 3): asking for 2 again must not return ac
        assert_eq!(p.child(a, 2), ab);
        assert_eq!(p.child(a, 3), ac);
        assert_eq!(p.child(PathInterner::ROOT, 1), a);
        assert_ne!(ab, ac);
        assert_eq!(p.path(ab), [1, 2]);
        assert_eq!(p.path(ac), [1, 3]);
        assert_eq!(p.path(PathInterner::ROOT), Vec::<Sid>::new());
        assert_eq!(p.len(), 4);
    }

    #[test]
    fn a_run_holds_at_most_the_cap_of_paths() {
        let mut p = PathInterner::default();
        for sid in 0..=Sid::MAX {
            let top = p.try_child(PathInterner::ROOT, sid).unwrap();
            for inner in 0..3 {
                p.try_child(top, inner).unwrap();
            }
        }
        // 65,536 x 4 = MAX_SECTION_PATHS exactly
        assert_eq!(p.len(), MAX_SECTION_PATHS + 1);
        let first = p.try_child(PathInterner::ROOT, 0).unwrap();
        assert_eq!(p.try_child(first, 1), p.try_child(first, 1));
        assert!(p.try_child(first, 1).is_some(), "an existing path is found");
        assert_eq!(p.try_child(first, 3), None, "a new one is refused");
        assert_eq!(p.len(), MAX_SECTION_PATHS + 1);
    }

    #[test]
    fn no_sid_is_mistaken_for_an_empty_memo() {
        for sid in [0, 1, Sid::MAX] {
            let mut p = PathInterner::default();
            let node = p.child(PathInterner::ROOT, sid);
            assert_ne!(node, PathInterner::ROOT);
            assert_eq!(p.child(PathInterner::ROOT, sid), node);
            assert_eq!(p.child(node, sid), p.child(node, sid));
            assert_ne!(p.child(node, sid), node);
            assert_eq!(p.path(node), [sid]);
        }
    }
}
