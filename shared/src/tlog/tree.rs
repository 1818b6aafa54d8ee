//! The shape of a log as complete subtrees: what a store keeps and what a proof names.
//!
//! A complete subtree at `level` l and `index` i covers leaves [i·2^l, (i+1)·2^l). Once its
//! last leaf is appended its hash never changes, so a store keeps every one, keyed by
//! (level, index), and any root or proof is a handful of those rows. The right edge of a tree
//! whose size is not a power of two is not complete: its hash is folded from the complete
//! subtrees it splits into ([`Range`]).

use super::hash::{Hash, node_hash};

/// A complete subtree: 2^level leaves starting at leaf `index << level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId {
    pub level: u32,
    pub index: u64,
}

/// The leaves [start, end) of a tree as RFC 9162 splits them, i.e. `start` is a multiple of
/// the largest power of two not above `end - start`: its complete subtrees, largest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    pub parts: Vec<NodeId>,
}

impl Range {
    /// The range [start, end); `end > start`.
    pub fn new(start: u64, end: u64) -> Self {
        debug_assert!(end > start);
        let mut parts = Vec::new();
        let mut at = start;
        let mut left = end - start;
        while left > 0 {
            let level = 63 - left.leading_zeros();
            parts.push(NodeId { level, index: at >> level });
            at += 1 << level;
            left -= 1 << level;
        }
        Range { parts }
    }

    /// The range's hash: MTH of its leaves, folding the parts from the right.
    pub fn hash(&self, mut get: impl FnMut(NodeId) -> Hash) -> Hash {
        let mut parts = self.parts.iter().rev();
        let last = parts.next().expect("a range is never empty");
        parts.fold(get(*last), |acc, id| node_hash(&get(*id), &acc))
    }
}

/// The complete subtrees of a tree of `size` leaves (its frontier, largest first); empty for
/// an empty tree. The root is their fold ([`Range::hash`]).
pub fn frontier(size: u64) -> Vec<NodeId> {
    if size == 0 { Vec::new() } else { Range::new(0, size).parts }
}

/// The nodes that become complete when leaf `index` is appended, with the two children
/// each is hashed from: (node, left child, right child), lowest first. The left children
/// are on the frontier of the tree before the append, so an append reads at most log2(n)
/// stored hashes and writes as many.
pub fn completed_by(index: u64) -> Vec<(NodeId, NodeId, NodeId)> {
    let mut out = Vec::new();
    let mut level = 0;
    let mut i = index;
    while i & 1 == 1 {
        let node = NodeId { level: level + 1, index: i >> 1 };
        out.push((node, NodeId { level, index: i - 1 }, NodeId { level, index: i }));
        level += 1;
        i >>= 1;
    }
    out
}
