//! Reads of the stored log: the size, roots and proofs (one query for every stored hash a
//! plan names), leaves by hash or receipt address, entries by range.

use std::collections::HashMap;

use shared::tlog::wire::LogEntry;
use shared::tlog::{Hash, NodeId, Range, empty_root, proof};
use sqlx::Row;

use crate::store::StoreError;

pub fn decode_hash(text: &str) -> Result<Hash, StoreError> {
    shared::tlog::hash::parse_hex(text).ok_or(StoreError::Corrupt("a stored log hash is not 64 hex"))
}

/// The stored hashes of `ids`, in one query.
pub async fn nodes_in<'e, E>(executor: E, ids: &[NodeId]) -> Result<HashMap<NodeId, Hash>, StoreError>
where
    E: sqlx::Executor<'e, Database = sqlx::Any>,
{
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let clauses: Vec<String> =
        (0..ids.len()).map(|i| format!("(level = ${} AND idx = ${})", 2 * i + 1, 2 * i + 2)).collect();
    let sql = format!("SELECT level, idx, hash FROM tlog_nodes WHERE {}", clauses.join(" OR "));
    let mut query = sqlx::query(&sql);
    for id in ids {
        query = query.bind(i64::from(id.level)).bind(id.index as i64);
    }
    let mut out = HashMap::with_capacity(ids.len());
    for row in query.fetch_all(executor).await? {
        let level: i64 = row.try_get("level")?;
        let index: i64 = row.try_get("idx")?;
        let hash = decode_hash(&row.try_get::<String, _>("hash")?)?;
        out.insert(NodeId { level: level as u32, index: index as u64 }, hash);
    }
    Ok(out)
}

/// The number of leaves.
pub async fn size(pool: &sqlx::AnyPool) -> Result<u64, StoreError> {
    let row = sqlx::query("SELECT size FROM tlog_head WHERE id = 0").fetch_one(pool).await?;
    u64::try_from(row.try_get::<i64, _>("size")?).map_err(|_| StoreError::Corrupt("tlog_head.size"))
}

/// The hashes of `ranges`, from one read of the nodes they name.
pub async fn range_hashes(pool: &sqlx::AnyPool, ranges: &[Range]) -> Result<Vec<Hash>, StoreError> {
    let ids = proof::nodes_of(ranges);
    let known = nodes_in(pool, &ids).await?;
    if known.len() != ids.len() {
        return Err(StoreError::Corrupt("a log node is missing"));
    }
    Ok(ranges.iter().map(|r| r.hash(|id| known[&id])).collect())
}

fn root_range(size: u64) -> Option<Range> {
    (size > 0).then(|| Range::new(0, size))
}

/// The root of the first `size` leaves (which must exist).
pub async fn root(pool: &sqlx::AnyPool, size: u64) -> Result<Hash, StoreError> {
    match root_range(size) {
        None => Ok(empty_root()),
        Some(r) => Ok(range_hashes(pool, &[r]).await?[0]),
    }
}

/// The audit path of leaf `index` at `size` and the root at `size`, in one read.
pub async fn inclusion(pool: &sqlx::AnyPool, index: u64, size: u64) -> Result<(Vec<Hash>, Hash), StoreError> {
    let mut ranges = proof::inclusion(index, size).ok_or(StoreError::Corrupt("leaf index beyond the size"))?;
    ranges.push(Range::new(0, size));
    let mut hashes = range_hashes(pool, &ranges).await?;
    let root = hashes.pop().expect("the root was asked for");
    Ok((hashes, root))
}

/// The consistency proof from `first` to `second` leaves (`first <= second <= size`).
pub async fn consistency(pool: &sqlx::AnyPool, first: u64, second: u64) -> Result<Vec<Hash>, StoreError> {
    let ranges = proof::consistency(first, second).ok_or(StoreError::Corrupt("sizes reversed"))?;
    range_hashes(pool, &ranges).await
}

/// A leaf's index by its hash (the first, should an entry ever repeat).
pub async fn index_of_leaf(pool: &sqlx::AnyPool, leaf: &Hash) -> Result<Option<u64>, StoreError> {
    let row = sqlx::query("SELECT idx FROM tlog_entries WHERE leaf_hash = $1 ORDER BY idx LIMIT 1")
        .bind(hex::encode(leaf))
        .fetch_optional(pool)
        .await?;
    Ok(row.map(|r| r.try_get::<i64, _>("idx")).transpose()?.map(|i| i as u64))
}

/// A leaf's index by the receipt address its entry names.
pub async fn index_of_address(pool: &sqlx::AnyPool, address: &str) -> Result<Option<u64>, StoreError> {
    let row = sqlx::query("SELECT idx FROM tlog_entries WHERE address = $1").bind(address).fetch_optional(pool).await?;
    Ok(row.map(|r| r.try_get::<i64, _>("idx")).transpose()?.map(|i| i as u64))
}

/// Entries [start, end).
pub async fn entries(pool: &sqlx::AnyPool, start: u64, end: u64) -> Result<Vec<LogEntry>, StoreError> {
    let rows = sqlx::query(
        "SELECT idx, leaf_hash, address, entry_hex FROM tlog_entries WHERE idx >= $1 AND idx < $2 ORDER BY idx",
    )
    .bind(start as i64)
    .bind(end as i64)
    .fetch_all(pool)
    .await?;
    rows.into_iter()
        .map(|r| {
            Ok(LogEntry {
                index: r.try_get::<i64, _>("idx")? as u64,
                entry: r.try_get("entry_hex")?,
                leaf_hash: r.try_get("leaf_hash")?,
                address: r.try_get("address")?,
            })
        })
        .collect()
}
