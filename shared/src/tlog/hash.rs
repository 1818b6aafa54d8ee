//! RFC 9162 §2.1.1 hashing: leaves and interior nodes are hashed with distinct one-byte
//! prefixes so a leaf can never be passed off as a node (second-preimage resistance).

use sha2::{Digest, Sha256};

/// A SHA-256 tree hash.
pub type Hash = [u8; 32];

/// MTH({}) = SHA-256() (RFC 9162 §2.1.1).
pub fn empty_root() -> Hash {
    Sha256::digest([]).into()
}

/// SHA-256(0x00 ‖ entry).
pub fn leaf_hash(entry: &[u8]) -> Hash {
    let mut h = Sha256::new();
    h.update([0x00]);
    h.update(entry);
    h.finalize().into()
}

/// SHA-256(0x01 ‖ left ‖ right).
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([0x01]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// MTH(D[n]) computed from every leaf hash: the reference definition, O(n). For tests,
/// benchmarks and in-memory cross-checks; the relay never recomputes a tree.
pub fn root_of(leaves: &[Hash]) -> Hash {
    match leaves.len() {
        0 => empty_root(),
        1 => leaves[0],
        n => {
            let k = split(n as u64) as usize;
            node_hash(&root_of(&leaves[..k]), &root_of(&leaves[k..]))
        }
    }
}

/// The largest power of two smaller than `n` (n ≥ 2): where RFC 9162 splits a tree.
pub fn split(n: u64) -> u64 {
    debug_assert!(n >= 2);
    1 << (63 - (n - 1).leading_zeros())
}

/// Parses 64 hex characters (either case).
pub fn parse_hex(text: &str) -> Option<Hash> {
    let mut out = [0u8; 32];
    hex::decode_to_slice(text, &mut out).ok()?;
    Some(out)
}
