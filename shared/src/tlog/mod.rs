//! The transparency log's pure parts (DESIGN §12, docs/log.md): RFC 9162 hashing, the shape
//! of the tree as complete subtrees, proof generation and verification, the entry encoding,
//! signed tree heads and the routes' JSON. The relay stores, the client checks, both with this.

pub mod entry;
pub mod hash;
pub mod proof;
pub mod sth;
pub mod tree;
pub mod verify;
pub mod wire;

pub use hash::{Hash, empty_root, leaf_hash, node_hash, root_of};
pub use tree::{NodeId, Range};
pub use verify::{ProofError, verify_consistency, verify_inclusion};

#[cfg(test)]
mod tests;
