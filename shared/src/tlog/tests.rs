//! Known answers from transparency-dev/merkle and property checks over random sizes.
//!
//! Vectors: github.com/transparency-dev/merkle, `testonly/constants.go` (leaf inputs, every
//! complete subtree's hash, roots for sizes 0..8) and `proof/verify_test.go`
//! (`inclusionProofs`, `consistencyProofs`; leaf numbers there are 1-based), RFC 6962 hashing,
//! which RFC 9162 keeps unchanged for SHA-256.

use std::collections::HashMap;

use super::hash::{empty_root, leaf_hash, node_hash, root_of};
use super::tree::{NodeId, Range, completed_by, frontier};
use super::verify::{ProofError, root_from_inclusion, verify_consistency, verify_inclusion};
use super::{Hash, proof};

fn h(text: &str) -> Hash {
    super::hash::parse_hex(text).unwrap()
}

const LEAF_INPUTS: [&str; 8] =
    ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"];

/// `NodeHashes()`: level, then index.
const NODE_HASHES: [&[&str]; 4] = [
    &[
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
        "0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7",
        "07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7",
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        "4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658",
        "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
        "46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1",
    ],
    &[
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
        "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
    ],
    &[
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
    ],
    &["5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"],
];

/// `RootHashes()`, by tree size 0..=8.
const ROOTS: [&str; 9] = [
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
];

/// `inclusionProofs`: (1-based leaf, size, path).
const INCLUSION: [(u64, u64, &[&str]); 5] = [
    (1, 1, &[]),
    (
        1,
        8,
        &[
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        6,
        8,
        &[
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (3, 3, &["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (
        2,
        5,
        &[
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
];

/// `consistencyProofs`: (size1, size2, proof).
const CONSISTENCY: [(u64, u64, &[&str]); 5] = [
    (1, 1, &[]),
    (
        1,
        8,
        &[
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        6,
        8,
        &[
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (
        2,
        5,
        &[
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
    (
        6,
        7,
        &[
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
];

/// Every complete subtree's hash, built the way the relay builds them: append by append.
struct Memory {
    nodes: HashMap<NodeId, Hash>,
    size: u64,
}

impl Memory {
    fn new() -> Self {
        Memory { nodes: HashMap::new(), size: 0 }
    }

    fn append(&mut self, leaf: Hash) {
        let index = self.size;
        self.nodes.insert(NodeId { level: 0, index }, leaf);
        for (node, left, right) in completed_by(index) {
            let hash = node_hash(&self.nodes[&left], &self.nodes[&right]);
            self.nodes.insert(node, hash);
        }
        self.size += 1;
    }

    fn get(&self, id: NodeId) -> Hash {
        self.nodes[&id]
    }

    fn root(&self, size: u64) -> Hash {
        if size == 0 { empty_root() } else { Range::new(0, size).hash(|id| self.get(id)) }
    }

    fn hashes(&self, ranges: &[Range]) -> Vec<Hash> {
        ranges.iter().map(|r| r.hash(|id| self.get(id))).collect()
    }
}

fn vector_tree() -> (Memory, Vec<Hash>) {
    let leaves: Vec<Hash> = LEAF_INPUTS.iter().map(|t| leaf_hash(&hex::decode(t).unwrap())).collect();
    let mut tree = Memory::new();
    for l in &leaves {
        tree.append(*l);
    }
    (tree, leaves)
}

#[test]
fn leaf_and_node_hashes_match_the_vectors() {
    let (tree, leaves) = vector_tree();
    for (i, l) in leaves.iter().enumerate() {
        assert_eq!(*l, h(NODE_HASHES[0][i]), "leaf {i}");
    }
    for (level, row) in NODE_HASHES.iter().enumerate() {
        for (index, want) in row.iter().enumerate() {
            assert_eq!(tree.get(NodeId { level: level as u32, index: index as u64 }), h(want), "node {level}/{index}");
        }
    }
}

#[test]
fn roots_for_sizes_0_to_8_match_the_vectors() {
    let (tree, leaves) = vector_tree();
    for (size, want) in ROOTS.iter().enumerate() {
        assert_eq!(root_of(&leaves[..size]), h(want), "reference root, size {size}");
        assert_eq!(tree.root(size as u64), h(want), "stored-node root, size {size}");
    }
}

#[test]
fn inclusion_proofs_match_and_verify() {
    let (tree, leaves) = vector_tree();
    for (leaf, size, want) in INCLUSION {
        let index = leaf - 1;
        let path = tree.hashes(&proof::inclusion(index, size).unwrap());
        let want: Vec<Hash> = want.iter().map(|t| h(t)).collect();
        assert_eq!(path, want, "proof for leaf {index} of {size}");
        let root = h(ROOTS[size as usize]);
        verify_inclusion(index, size, &leaves[index as usize], &want, &root).unwrap();
        // transparency-dev's corruptions: wrong index, size, leaf, root, extra or missing nodes.
        let bad = |i: u64, s: u64, l: &Hash, p: &[Hash], r: &Hash| verify_inclusion(i, s, l, p, r).is_err();
        assert!(index == 0 || bad(index - 1, size, &leaves[index as usize], &want, &root));
        assert!(bad(index + 1, size, &leaves[index as usize], &want, &root));
        assert!(bad(index ^ 2, size, &leaves[index as usize], &want, &root));
        assert!(bad(index, size * 2, &leaves[index as usize], &want, &root));
        assert!(size < 2 || bad(index, size / 2, &leaves[index as usize], &want, &root));
        assert!(bad(index, size, &leaf_hash(b"WrongLeaf"), &want, &root));
        assert!(bad(index, size, &leaves[index as usize], &want, &empty_root()));
        let mut longer = want.clone();
        longer.push(root);
        assert!(bad(index, size, &leaves[index as usize], &longer, &root));
        let mut preceded = vec![root];
        preceded.extend_from_slice(&want);
        assert!(bad(index, size, &leaves[index as usize], &preceded, &root));
        if !want.is_empty() {
            assert!(bad(index, size, &leaves[index as usize], &want[..want.len() - 1], &root));
        }
    }
}

#[test]
fn consistency_proofs_match_and_verify() {
    let (tree, _) = vector_tree();
    for (first, second, want) in CONSISTENCY {
        let proof = tree.hashes(&proof::consistency(first, second).unwrap());
        let want: Vec<Hash> = want.iter().map(|t| h(t)).collect();
        assert_eq!(proof, want, "proof {first} to {second}");
        let (r1, r2) = (h(ROOTS[first as usize]), h(ROOTS[second as usize]));
        verify_consistency(first, second, &r1, &r2, &want).unwrap();
        if want.is_empty() {
            continue;
        }
        let bad = |a: u64, b: u64, x: &Hash, y: &Hash, p: &[Hash]| verify_consistency(a, b, x, y, p).is_err();
        assert!(bad(first - 1, second, &r1, &r2, &want));
        assert!(bad(first + 1, second, &r1, &r2, &want));
        assert!(bad(first ^ 2, second, &r1, &r2, &want));
        assert!(bad(first, second * 2, &r1, &r2, &want));
        assert!(bad(first, second / 2, &r1, &r2, &want));
        assert!(bad(first, second, &r2, &r1, &want));
        assert!(bad(first, second, &r1, &r2, &[]));
        assert!(bad(first, second, &r1, &r2, &want[..want.len() - 1]));
        let mut longer = want.clone();
        longer.push(r2);
        assert!(bad(first, second, &r1, &r2, &longer));
        let mut preceded = vec![want[0]];
        preceded.extend_from_slice(&want);
        assert!(bad(first, second, &r1, &r2, &preceded));
    }
}

#[test]
fn consistency_edge_cases_as_transparency_dev() {
    let (a, b) = (leaf_hash(b"a"), leaf_hash(b"b"));
    assert!(verify_consistency(0, 0, &a, &a, &[]).is_ok());
    assert!(verify_consistency(0, 1, &a, &b, &[]).is_ok());
    assert!(verify_consistency(1, 1, &b, &b, &[]).is_ok());
    assert_eq!(verify_consistency(1, 1, &a, &b, &[]), Err(ProofError::RootMismatch));
    assert_eq!(verify_consistency(2, 1, &a, &b, &[]), Err(ProofError::SizesReversed(2, 1)));
    assert_eq!(verify_consistency(1, 2, &a, &b, &[]), Err(ProofError::WrongLength));
    assert!(verify_consistency(1, 1, &a, &a, &[empty_root()]).is_err());
    assert!(verify_consistency(0, 1, &a, &a, &[empty_root()]).is_err());
    assert!(verify_inclusion(0, 0, &a, &[], &a).is_err());
    assert!(verify_inclusion(0, 1, &a, &[], &a).is_ok());
    assert!(verify_inclusion(1, 1, &a, &[], &a).is_err());
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

fn flipped(proof: &[Hash], element: usize, bit: usize) -> Vec<Hash> {
    let mut p = proof.to_vec();
    p[element][bit / 8] ^= 1 << (bit % 8);
    p
}

#[test]
fn random_trees_every_proof_verifies_and_every_flip_fails() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let max = 3000;
    let leaves: Vec<Hash> = (0..max as u32).map(|i| leaf_hash(&i.to_be_bytes())).collect();
    let mut tree = Memory::new();
    let mut roots = vec![empty_root()];
    for l in &leaves {
        tree.append(*l);
        roots.push(tree.root(tree.size));
    }
    // The incremental roots are the reference roots.
    for size in [1, 2, 3, 7, 8, 9, 255, 256, 257, 1000, 2047, 2048, 2049, max] {
        assert_eq!(roots[size], root_of(&leaves[..size]), "size {size}");
    }
    let mut sizes: Vec<u64> = (1..=20).collect();
    sizes.extend((0..12).map(|_| 1 + rng.below(max as u64)));
    sizes.push(max as u64);
    for &size in &sizes {
        let root = roots[size as usize];
        let indexes: Vec<u64> =
            if size <= 64 { (0..size).collect() } else { (0..48).map(|_| rng.below(size)).collect() };
        for index in indexes {
            let path = tree.hashes(&proof::inclusion(index, size).unwrap());
            assert!(path.len() <= 64 - (size - 1).leading_zeros() as usize);
            assert_eq!(root_from_inclusion(index, size, &leaves[index as usize], &path), Ok(root));
            for e in 0..path.len() {
                let bit = rng.below(256) as usize;
                assert!(
                    verify_inclusion(index, size, &leaves[index as usize], &flipped(&path, e, bit), &root).is_err(),
                    "flip {e}/{bit} accepted, leaf {index} of {size}"
                );
            }
        }
        let firsts: Vec<u64> =
            if size <= 64 { (0..=size).collect() } else { (0..48).map(|_| rng.below(size + 1)).collect() };
        for first in firsts {
            let proof = tree.hashes(&proof::consistency(first, size).unwrap());
            verify_consistency(first, size, &roots[first as usize], &root, &proof)
                .unwrap_or_else(|e| panic!("{first} to {size}: {e}"));
            for e in 0..proof.len() {
                let bit = rng.below(256) as usize;
                assert!(
                    verify_consistency(first, size, &roots[first as usize], &root, &flipped(&proof, e, bit)).is_err(),
                    "flip {e}/{bit} accepted, {first} to {size}"
                );
            }
            if first > 0 && first < size {
                // Another tree's root at the first size is not consistent.
                assert!(verify_consistency(first, size, &roots[first as usize - 1], &root, &proof).is_err());
            }
        }
    }
}

#[test]
fn frontier_and_appends_touch_log_n_nodes() {
    assert!(frontier(0).is_empty());
    assert_eq!(frontier(6), vec![NodeId { level: 2, index: 0 }, NodeId { level: 1, index: 2 }]);
    // Appending leaf 7 completes (1,3), (2,1), (3,0), each from frontier nodes.
    let done = completed_by(7);
    assert_eq!(
        done.iter().map(|(n, _, _)| *n).collect::<Vec<_>>(),
        vec![NodeId { level: 1, index: 3 }, NodeId { level: 2, index: 1 }, NodeId { level: 3, index: 0 }]
    );
    for (_, left, _) in &done {
        assert!(frontier(7).contains(left));
    }
    for size in 1..2000u64 {
        assert_eq!(frontier(size).len(), size.count_ones() as usize);
        assert_eq!(completed_by(size - 1).len(), (size - 1).trailing_ones() as usize);
    }
    // A proof at 1M entries names O(log n) stored nodes.
    let ranges = proof::inclusion(123_456, 1_000_003).unwrap();
    assert!(proof::nodes_of(&ranges).len() <= 2 * 20);
}

#[test]
fn tree_heads_sign_and_refuse_changes() {
    use super::sth::TreeHead;
    use super::wire::{SignedTreeHead, WireError};
    let key = ed25519_dalek::SigningKey::from_bytes(&[5; 32]);
    let head = TreeHead { size: 8, root: h(ROOTS[8]), timestamp: 1_700_000_000_000 };
    let msg = head.message();
    assert_eq!(msg.len(), 14 + 8 + 32 + 8);
    assert_eq!(&msg[..14], b"SVC-LOG-STH-v1");
    assert_eq!(&msg[14..22], &8u64.to_be_bytes());
    let sig = head.sign(&key);
    let pk = key.verifying_key().to_bytes();
    let wire = SignedTreeHead::new(&head, &sig, &pk);
    assert_eq!(wire.verify(Some(&pk)), Ok(head));
    let other = ed25519_dalek::SigningKey::from_bytes(&[6; 32]).verifying_key().to_bytes();
    assert_eq!(wire.verify(Some(&other)), Err(WireError::WrongKey));
    for change in 0..3 {
        let mut w = wire.clone();
        match change {
            0 => w.tree_size += 1,
            1 => w.timestamp += 1,
            _ => w.root_hash = ROOTS[7].into(),
        }
        assert!(w.verify(None).is_err(), "change {change} accepted");
    }
    // The anchored hash covers the signature, not only the message.
    assert_ne!(head.signed_hash(&sig), crate::sha256(&msg));
}
