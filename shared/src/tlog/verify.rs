//! Proof verification, step for step as RFC 9162 §2.1.3.2 (inclusion) and §2.1.4.2
//! (consistency) write it, with the edge cases transparency-dev/merkle settles the same way
//! (an empty first tree is consistent with anything; equal sizes need equal roots and an
//! empty proof).

use super::hash::{Hash, node_hash};

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    #[error("leaf index {0} is not below the tree size {1}")]
    IndexBeyondSize(u64, u64),
    #[error("the first tree ({0}) is larger than the second ({1})")]
    SizesReversed(u64, u64),
    #[error("the proof has the wrong number of elements")]
    WrongLength,
    #[error("the proof does not lead to the expected root")]
    RootMismatch,
}

/// The root an inclusion proof leads to (RFC 9162 §2.1.3.2 steps 1 to 4).
pub fn root_from_inclusion(index: u64, size: u64, leaf: &Hash, path: &[Hash]) -> Result<Hash, ProofError> {
    if index >= size {
        return Err(ProofError::IndexBeyondSize(index, size));
    }
    let (mut fn_, mut sn) = (index, size - 1);
    let mut r = *leaf;
    for p in path {
        if sn == 0 {
            return Err(ProofError::WrongLength);
        }
        if fn_ & 1 == 1 || fn_ == sn {
            r = node_hash(p, &r);
            while fn_ & 1 == 0 && fn_ != 0 {
                fn_ >>= 1;
                sn >>= 1;
            }
        } else {
            r = node_hash(&r, p);
        }
        fn_ >>= 1;
        sn >>= 1;
    }
    if sn != 0 {
        return Err(ProofError::WrongLength);
    }
    Ok(r)
}

/// Checks that `leaf` is at `index` in the tree of `size` leaves whose root is `root`.
pub fn verify_inclusion(index: u64, size: u64, leaf: &Hash, path: &[Hash], root: &Hash) -> Result<(), ProofError> {
    if root_from_inclusion(index, size, leaf, path)? == *root { Ok(()) } else { Err(ProofError::RootMismatch) }
}

/// Checks that the tree of `first` leaves with root `first_root` is a prefix of the tree of
/// `second` leaves with root `second_root`.
pub fn verify_consistency(
    first: u64,
    second: u64,
    first_root: &Hash,
    second_root: &Hash,
    proof: &[Hash],
) -> Result<(), ProofError> {
    if first > second {
        return Err(ProofError::SizesReversed(first, second));
    }
    if first == second {
        if !proof.is_empty() {
            return Err(ProofError::WrongLength);
        }
        return if first_root == second_root { Ok(()) } else { Err(ProofError::RootMismatch) };
    }
    if first == 0 {
        return if proof.is_empty() { Ok(()) } else { Err(ProofError::WrongLength) };
    }
    // 1. An empty path cannot prove a proper extension.
    if proof.is_empty() {
        return Err(ProofError::WrongLength);
    }
    // 2. A first tree that is a complete subtree is its own first proof node.
    let mut path: Vec<Hash> = Vec::with_capacity(proof.len() + 1);
    if first.is_power_of_two() {
        path.push(*first_root);
    }
    path.extend_from_slice(proof);
    // 3, 4.
    let (mut fn_, mut sn) = (first - 1, second - 1);
    while fn_ & 1 == 1 {
        fn_ >>= 1;
        sn >>= 1;
    }
    // 5.
    let (mut fr, mut sr) = (path[0], path[0]);
    // 6.
    for c in &path[1..] {
        if sn == 0 {
            return Err(ProofError::WrongLength);
        }
        if fn_ & 1 == 1 || fn_ == sn {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            while fn_ & 1 == 0 && fn_ != 0 {
                fn_ >>= 1;
                sn >>= 1;
            }
        } else {
            sr = node_hash(&sr, c);
        }
        fn_ >>= 1;
        sn >>= 1;
    }
    // 7.
    if sn != 0 {
        return Err(ProofError::WrongLength);
    }
    if fr == *first_root && sr == *second_root { Ok(()) } else { Err(ProofError::RootMismatch) }
}
