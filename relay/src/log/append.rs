//! Appending a leaf inside the transaction that stores its receipt: bump the one-row size
//! (its row lock serialises appenders), read the frontier nodes the new leaf completes, write
//! the leaf and the completed nodes. O(log n) rows, never a recomputed tree.

use shared::tlog::tree::completed_by;
use shared::tlog::{Hash, NodeId, leaf_hash, node_hash};
use sqlx::Row;

use super::read::nodes_in;
use crate::store::StoreError;

/// Appends `entry` (naming the receipt at `address`) inside `tx`; returns its leaf index.
pub async fn append(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    entry: &[u8],
    address: &str,
    now: i64,
) -> Result<u64, StoreError> {
    // The row lock: held until this transaction ends, so the next appender reads our nodes.
    let row =
        sqlx::query("UPDATE tlog_head SET size = size + 1 WHERE id = 0 RETURNING size").fetch_one(&mut **tx).await?;
    let size: i64 = row.try_get("size")?;
    let index = u64::try_from(size - 1).map_err(|_| StoreError::Corrupt("tlog_head.size"))?;
    let leaf = leaf_hash(entry);
    sqlx::query(
        "INSERT INTO tlog_entries (idx, leaf_hash, address, entry_hex, created_at) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(index as i64)
    .bind(hex::encode(leaf))
    .bind(address)
    .bind(hex::encode(entry))
    .bind(now)
    .execute(&mut **tx)
    .await?;
    let completed = completed_by(index);
    let lefts: Vec<NodeId> = completed.iter().map(|(_, left, _)| *left).collect();
    let known = nodes_in(&mut **tx, &lefts).await?;
    let mut written: Vec<(NodeId, Hash)> = vec![(NodeId { level: 0, index }, leaf)];
    for (node, left, _) in completed {
        let left = known.get(&left).ok_or(StoreError::Corrupt("a frontier node is missing"))?;
        let right = written.last().expect("the leaf is written first").1;
        written.push((node, node_hash(left, &right)));
    }
    insert_nodes(tx, &written).await?;
    Ok(index)
}

/// One multi-row insert for the leaf and the nodes it completes.
async fn insert_nodes(tx: &mut sqlx::Transaction<'_, sqlx::Any>, nodes: &[(NodeId, Hash)]) -> Result<(), StoreError> {
    let values: Vec<String> =
        (0..nodes.len()).map(|i| format!("(${}, ${}, ${})", 3 * i + 1, 3 * i + 2, 3 * i + 3)).collect();
    let sql = format!("INSERT INTO tlog_nodes (level, idx, hash) VALUES {}", values.join(", "));
    let mut query = sqlx::query(&sql);
    for (id, hash) in nodes {
        query = query.bind(i64::from(id.level)).bind(id.index as i64).bind(hex::encode(hash));
    }
    query.execute(&mut **tx).await?;
    Ok(())
}
