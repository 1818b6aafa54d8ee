//! Appending leaves inside the transaction that stores their receipts: bump the one-row size
//! (its row lock serialises appenders), read the frontier nodes the new leaves complete, write
//! the leaves and the completed nodes. O(log n) rows a leaf, never a recomputed tree, and the
//! same four statements for a group of leaves as for one.

use std::collections::HashSet;

use shared::tlog::tree::completed_by;
use shared::tlog::{Hash, NodeId, leaf_hash, node_hash};
use sqlx::Row;

use super::read::nodes_in;
use crate::store::StoreError;

/// A leaf to append: the log entry, the receipt it names, when.
#[derive(Debug, Clone, Copy)]
pub struct NewLeaf<'a> {
    pub entry: &'a [u8],
    pub address: &'a str,
    pub now: i64,
}

/// Takes the log head's row lock (PostgreSQL) or the write lock (SQLite) inside `tx` without
/// changing anything. Every commit writer takes it before it reads or writes the commit
/// chain, so writers in two relays always wait for each other in the same order.
pub async fn lock_head(tx: &mut sqlx::Transaction<'_, sqlx::Any>) -> Result<(), StoreError> {
    sqlx::query("UPDATE tlog_head SET size = size WHERE id = 0").execute(&mut **tx).await?;
    Ok(())
}

/// Appends `entry` (naming the receipt at `address`) inside `tx`; returns its leaf index.
pub async fn append(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    entry: &[u8],
    address: &str,
    now: i64,
) -> Result<u64, StoreError> {
    append_all(tx, &[NewLeaf { entry, address, now }]).await
}

/// Appends `leaves` in order inside `tx`, in four statements whatever their number; returns
/// the index of the first. The head's update comes first: it is the row lock that serialises
/// appenders, and on SQLite a transaction that writes first never has to upgrade a read lock.
pub async fn append_all(tx: &mut sqlx::Transaction<'_, sqlx::Any>, leaves: &[NewLeaf<'_>]) -> Result<u64, StoreError> {
    let count = i64::try_from(leaves.len()).map_err(|_| StoreError::Corrupt("too many leaves"))?;
    // The row lock: held until this transaction ends, so the next appender reads our nodes.
    let row = sqlx::query("UPDATE tlog_head SET size = size + $1 WHERE id = 0 RETURNING size")
        .bind(count)
        .fetch_one(&mut **tx)
        .await?;
    let size: i64 = row.try_get("size")?;
    let first = u64::try_from(size - count).map_err(|_| StoreError::Corrupt("tlog_head.size"))?;
    if leaves.is_empty() {
        return Ok(first);
    }
    let hashes: Vec<Hash> = leaves.iter().map(|l| leaf_hash(l.entry)).collect();
    insert_entries(tx, first, leaves, &hashes).await?;

    // Every node the new leaves complete; the left children not made by this batch are on
    // the tree's frontier before it, and are read once.
    let completed: Vec<Vec<(NodeId, NodeId, NodeId)>> = (first..).take(leaves.len()).map(completed_by).collect();
    let made: HashSet<NodeId> = completed.iter().flatten().map(|(node, _, _)| *node).collect();
    let is_new = |id: &NodeId| (id.level == 0 && id.index >= first) || made.contains(id);
    let stored: Vec<NodeId> =
        completed.iter().flatten().map(|(_, left, _)| *left).filter(|left| !is_new(left)).collect();
    let mut known = nodes_in(&mut **tx, &stored).await?;
    let mut written: Vec<(NodeId, Hash)> = Vec::with_capacity(2 * leaves.len());
    for ((index, leaf), nodes) in (first..).zip(&hashes).zip(completed) {
        let mut right = *leaf;
        written.push((NodeId { level: 0, index }, right));
        known.insert(NodeId { level: 0, index }, right);
        for (node, left, _) in nodes {
            let left = known.get(&left).ok_or(StoreError::Corrupt("a frontier node is missing"))?;
            right = node_hash(left, &right);
            written.push((node, right));
            known.insert(node, right);
        }
    }
    insert_nodes(tx, &written).await?;
    Ok(first)
}

/// One multi-row insert for the leaves' entries.
async fn insert_entries(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    first: u64,
    leaves: &[NewLeaf<'_>],
    hashes: &[Hash],
) -> Result<(), StoreError> {
    let sql = format!(
        "INSERT INTO tlog_entries (idx, leaf_hash, address, entry_hex, created_at) VALUES {}",
        crate::store::placeholders(leaves.len(), 5)
    );
    let mut query = sqlx::query(&sql);
    for ((index, leaf), hash) in (first..).zip(leaves).zip(hashes) {
        let index = i64::try_from(index).map_err(|_| StoreError::Corrupt("tlog index"))?;
        query =
            query.bind(index).bind(hex::encode(hash)).bind(leaf.address).bind(hex::encode(leaf.entry)).bind(leaf.now);
    }
    query.execute(&mut **tx).await?;
    Ok(())
}

/// One multi-row insert for the leaves and the nodes they complete.
async fn insert_nodes(tx: &mut sqlx::Transaction<'_, sqlx::Any>, nodes: &[(NodeId, Hash)]) -> Result<(), StoreError> {
    let sql =
        format!("INSERT INTO tlog_nodes (level, idx, hash) VALUES {}", crate::store::placeholders(nodes.len(), 3));
    let mut query = sqlx::query(&sql);
    for (id, hash) in nodes {
        query = query.bind(i64::from(id.level)).bind(id.index as i64).bind(hex::encode(hash));
    }
    query.execute(&mut **tx).await?;
    Ok(())
}
