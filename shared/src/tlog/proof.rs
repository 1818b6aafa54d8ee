//! Proof generation (RFC 9162 §2.1.3.1 PATH and §2.1.4.1 SUBPROOF) as plans: each element is
//! a [`Range`] of complete subtrees, so a store fetches every hash a proof needs in one read
//! and folds them. At most one element is an incomplete right edge, so a proof costs
//! O(log n) stored hashes.

use super::hash::split;
use super::tree::{NodeId, Range};

/// The audit path of leaf `index` in a tree of `size` leaves, leaf to root; `None` unless
/// `index < size`.
pub fn inclusion(index: u64, size: u64) -> Option<Vec<Range>> {
    if index >= size {
        return None;
    }
    let mut out = Vec::new();
    path(index, 0, size, &mut out);
    Some(out)
}

fn path(m: u64, lo: u64, hi: u64, out: &mut Vec<Range>) {
    if hi - lo == 1 {
        return;
    }
    let k = split(hi - lo);
    if m - lo < k {
        path(m, lo, lo + k, out);
        out.push(Range::new(lo + k, hi));
    } else {
        path(m, lo + k, hi, out);
        out.push(Range::new(lo, lo + k));
    }
}

/// The consistency proof from the tree of `first` leaves to the tree of `second`; empty when
/// `first` is 0 or equal to `second`, `None` when `first > second`.
pub fn consistency(first: u64, second: u64) -> Option<Vec<Range>> {
    if first > second {
        return None;
    }
    let mut out = Vec::new();
    if first > 0 && first < second {
        subproof(first, 0, second, true, &mut out);
    }
    Some(out)
}

fn subproof(m: u64, lo: u64, hi: u64, whole: bool, out: &mut Vec<Range>) {
    let n = hi - lo;
    if m == n {
        if !whole {
            out.push(Range::new(lo, hi));
        }
        return;
    }
    let k = split(n);
    if m <= k {
        subproof(m, lo, lo + k, whole, out);
        out.push(Range::new(lo + k, hi));
    } else {
        subproof(m - k, lo + k, hi, false, out);
        out.push(Range::new(lo, lo + k));
    }
}

/// Every stored hash a set of ranges needs, sorted and without repeats (one read).
pub fn nodes_of<'a>(ranges: impl IntoIterator<Item = &'a Range>) -> Vec<NodeId> {
    let mut ids: Vec<NodeId> = ranges.into_iter().flat_map(|r| r.parts.iter().copied()).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}
