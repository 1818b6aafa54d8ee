//! [`super::check`] on a log built here: good evidence passes; a tampered path, a head signed
//! by another key, a forked head signed by the right key, and a wrong anchor transaction fail.

use ed25519_dalek::SigningKey;
use shared::address::Address;
use shared::tlog::sth::TreeHead;
use shared::tlog::wire::{Anchor, ConsistencyProof, InclusionProof, SignedTreeHead, WireError};
use shared::tlog::{Hash, NodeId, entry, leaf_hash, proof, root_of};

use super::{LogError, check};

fn entries() -> Vec<Vec<u8>> {
    (0..7u8).map(|i| entry::encode(entry::KIND_CHAT, &Address([i; 32]), &[i; 32], &[i; 64])).collect()
}

fn node(leaves: &[Hash], id: NodeId) -> Hash {
    let start = (id.index << id.level) as usize;
    root_of(&leaves[start..start + (1 << id.level)])
}

fn signed(key: &SigningKey, size: u64, root: Hash) -> (TreeHead, SignedTreeHead, [u8; 64]) {
    let head = TreeHead { size, root, timestamp: 1_000 };
    let sig = head.sign(key);
    (head, SignedTreeHead::new(&head, &sig, &key.verifying_key().to_bytes()), sig)
}

fn anchor(key: &SigningKey, size: u64, root: Hash) -> Anchor {
    let (head, sth, sig) = signed(key, size, root);
    let sth_hash = head.signed_hash(&sig);
    let (tx, parsed) = shared::ledger::anchor::build(key, &[0; 32], &sth_hash);
    Anchor {
        sth,
        sth_hash: hex::encode(sth_hash),
        tx_signature: parsed.id(),
        transaction: shared::b64::encode(&tx),
        anchored_at: 1,
        ledger_signature: None,
    }
}

struct Fixture {
    entries: Vec<Vec<u8>>,
    proof: InclusionProof,
    anchor: Anchor,
    consistency: ConsistencyProof,
    key: SigningKey,
}

/// Leaf 5 of a 7-leaf log; the anchored head has 4 leaves.
fn fixture() -> Fixture {
    let key = SigningKey::from_bytes(&[7; 32]);
    let entries = entries();
    let leaves: Vec<Hash> = entries.iter().map(|e| leaf_hash(e)).collect();
    let path = proof::inclusion(5, 7).unwrap().iter().map(|r| hex::encode(r.hash(|id| node(&leaves, id)))).collect();
    let (_, sth, _) = signed(&key, 7, root_of(&leaves));
    let proof = InclusionProof { leaf_index: 5, tree_size: 7, audit_path: path, sth };
    let consistency = ConsistencyProof {
        first: 4,
        second: 7,
        proof: proof::consistency(4, 7).unwrap().iter().map(|r| hex::encode(r.hash(|id| node(&leaves, id)))).collect(),
    };
    Fixture { anchor: anchor(&key, 4, root_of(&leaves[..4])), entries, proof, consistency, key }
}

#[test]
fn good_evidence_passes() {
    let f = fixture();
    let pk = f.key.verifying_key().to_bytes();
    let done = check(&f.entries[5], &f.proof, Some((&f.anchor, &f.consistency)), Some(&pk)).unwrap();
    assert_eq!((done.leaf_index, done.tree_size), (5, 7));
    assert_eq!(done.anchor.unwrap().tree_size, 4);
    assert!(check(&f.entries[5], &f.proof, None, None).is_ok());
    // Another entry is not at that leaf.
    assert!(matches!(check(&f.entries[4], &f.proof, None, None), Err(LogError::Inclusion(_))));
}

#[test]
fn tampered_paths_fail() {
    let f = fixture();
    for i in 0..f.proof.audit_path.len() {
        let mut p = f.proof.clone();
        let mut bytes = hex::decode(&p.audit_path[i]).unwrap();
        bytes[0] ^= 1;
        p.audit_path[i] = hex::encode(bytes);
        assert!(matches!(check(&f.entries[5], &p, None, None), Err(LogError::Inclusion(_))));
    }
    let mut c = f.consistency.clone();
    c.proof[0] = hex::encode([0u8; 32]);
    assert!(matches!(check(&f.entries[5], &f.proof, Some((&f.anchor, &c)), None), Err(LogError::Consistency(_))));
}

#[test]
fn forked_heads_fail() {
    let f = fixture();
    let other = SigningKey::from_bytes(&[8; 32]);
    let forked_root = root_of(&[leaf_hash(b"another history"); 4]);
    // A different root at the anchored size, signed by another key.
    let fork = anchor(&other, 4, forked_root);
    assert_eq!(
        check(&f.entries[5], &f.proof, Some((&fork, &f.consistency)), None),
        Err(LogError::Wire(WireError::WrongKey))
    );
    // The same fork signed by the log key itself: the heads are not consistent.
    let fork = anchor(&f.key, 4, forked_root);
    assert!(matches!(
        check(&f.entries[5], &f.proof, Some((&fork, &f.consistency)), None),
        Err(LogError::Consistency(_))
    ));
    // A pinned key refuses heads by any other.
    let pinned = other.verifying_key().to_bytes();
    assert_eq!(check(&f.entries[5], &f.proof, None, Some(&pinned)), Err(LogError::Wire(WireError::WrongKey)));
    // An anchor whose transaction carries another head's hash.
    let mut a = f.anchor.clone();
    a.transaction = anchor(&f.key, 5, forked_root).transaction;
    assert!(matches!(
        check(&f.entries[5], &f.proof, Some((&a, &f.consistency)), None),
        Err(LogError::AnchorTransaction(_))
    ));
}
