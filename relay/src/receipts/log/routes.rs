//! `/log/v1`: public and CORS-open like the receipt lookups. Thin handlers: parse the query,
//! call `read`, sign a head. Bad input is 400 (`bad_request` when a parameter is missing,
//! `invalid_field` when one is malformed or out of range); an unknown leaf is 404.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State};
use serde::Deserialize;
use shared::address::Address;
use shared::tlog::wire::{Anchors, ConsistencyProof, Entries, InclusionProof, SignedTreeHead};
use shared::wire::codes;

use super::{anchor, read};
use crate::http::error::{ErrorBody, RelayError};
use crate::receipts::Receipts;

/// Most entries one `GET /log/v1/entries` returns.
pub const MAX_ENTRIES: u64 = 1000;
/// Most anchors one `GET /log/v1/anchors` returns.
pub const MAX_ANCHORS: u64 = 100;

fn invalid(message: impl Into<String>) -> RelayError {
    RelayError::input(codes::INVALID_FIELD, message)
}

fn number(name: &str, text: Option<&str>) -> Result<Option<u64>, RelayError> {
    text.map(|t| t.parse::<u64>().map_err(|_| invalid(format!("{name} must be a non-negative integer")))).transpose()
}

#[utoipa::path(get, path = "/log/v1/sth", tag = "log", summary = "The current signed tree head",
    responses((status = 200, body = SignedTreeHead), (status = "default", body = ErrorBody)))]
pub async fn sth(State(receipts): State<Arc<Receipts>>) -> Result<Json<SignedTreeHead>, RelayError> {
    Ok(Json(receipts.log.head().await?))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InclusionQuery {
    /// hex of the leaf hash, SHA-256(0x00 ‖ entry)
    leaf_hash: Option<String>,
    /// or the receipt's ledger address (base58)
    address: Option<String>,
    /// the tree size to prove against; default the current size
    tree_size: Option<String>,
}

#[utoipa::path(get, path = "/log/v1/proof/inclusion", tag = "log",
    summary = "The audit path of a receipt's leaf, with a signed head of that size", params(("leafHash" = Option<String>, Query, description = "hex of SHA-256(0x00 ‖ entry)", pattern = "^[0-9a-fA-F]{64}$"),
           ("address" = Option<String>, Query, description = "or the receipt's ledger address (base58)"),
           ("treeSize" = Option<u64>, Query, description = "the size to prove against; default the current size")),
    responses((status = 200, body = InclusionProof), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn inclusion(
    State(receipts): State<Arc<Receipts>>,
    Query(q): Query<InclusionQuery>,
) -> Result<Json<InclusionProof>, RelayError> {
    let pool = receipts.store.pool();
    let index = match (q.leaf_hash.as_deref(), q.address.as_deref()) {
        (Some(h), None) => {
            let leaf = shared::tlog::hash::parse_hex(h).ok_or_else(|| invalid("leafHash must be 64 hex characters"))?;
            read::index_of_leaf(pool, &leaf).await?
        }
        (None, Some(a)) => {
            let address = Address::parse(a).ok_or_else(|| invalid("address must be base58 of 32 bytes"))?;
            read::index_of_address(pool, &address.to_string()).await?
        }
        _ => return Err(RelayError::BadRequest("give exactly one of leafHash and address".into())),
    };
    let index = index.ok_or(RelayError::NotFound("no such leaf in the log"))?;
    let current = read::size(pool).await?;
    let size = number("treeSize", q.tree_size.as_deref())?.unwrap_or(current);
    if size <= index || size > current {
        return Err(invalid(format!("treeSize must be above the leaf index {index} and at most {current}")));
    }
    let (path, root) = read::inclusion(pool, index, size).await?;
    let (head, signature) = receipts.log.sign(size, root);
    Ok(Json(InclusionProof {
        leaf_index: index,
        tree_size: size,
        audit_path: path.iter().map(hex::encode).collect(),
        sth: receipts.log.wire(&head, &signature),
    }))
}

#[derive(Debug, Deserialize)]
pub struct ConsistencyQuery {
    /// the smaller tree size
    first: Option<String>,
    /// the larger tree size, at most the current one
    second: Option<String>,
}

#[utoipa::path(get, path = "/log/v1/proof/consistency", tag = "log",
    summary = "The proof that the tree of `first` leaves is a prefix of the tree of `second`", params(("first" = u64, Query, description = "the smaller tree size"),
           ("second" = u64, Query, description = "the larger tree size, at most the current one")),
    responses((status = 200, body = ConsistencyProof), (status = 400, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn consistency(
    State(receipts): State<Arc<Receipts>>,
    Query(q): Query<ConsistencyQuery>,
) -> Result<Json<ConsistencyProof>, RelayError> {
    let (Some(first), Some(second)) = (number("first", q.first.as_deref())?, number("second", q.second.as_deref())?)
    else {
        return Err(RelayError::BadRequest("first and second are required".into()));
    };
    let pool = receipts.store.pool();
    let current = read::size(pool).await?;
    if first > second || second > current {
        return Err(invalid(format!("need first <= second <= {current}")));
    }
    let proof = read::consistency(pool, first, second).await?;
    Ok(Json(ConsistencyProof { first, second, proof: proof.iter().map(hex::encode).collect() }))
}

#[derive(Debug, Deserialize)]
pub struct EntriesQuery {
    /// the first index
    start: Option<String>,
    /// one past the last index; at most `start + 1000`
    end: Option<String>,
}

#[utoipa::path(get, path = "/log/v1/entries", tag = "log", summary = "The hashed entries [start, end), at most 1000",
    params(("start" = u64, Query, description = "the first index"),
           ("end" = u64, Query, description = "one past the last index; at most start + 1000")),
    responses((status = 200, body = Entries), (status = 400, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn entries(
    State(receipts): State<Arc<Receipts>>,
    Query(q): Query<EntriesQuery>,
) -> Result<Json<Entries>, RelayError> {
    let (Some(start), Some(end)) = (number("start", q.start.as_deref())?, number("end", q.end.as_deref())?) else {
        return Err(RelayError::BadRequest("start and end are required".into()));
    };
    if start > end || end - start > MAX_ENTRIES {
        return Err(invalid(format!("need start <= end <= start + {MAX_ENTRIES}")));
    }
    Ok(Json(Entries { entries: read::entries(receipts.store.pool(), start, end).await? }))
}

#[derive(Debug, Deserialize)]
pub struct AnchorsQuery {
    /// how many, newest first; default 20, at most 100
    limit: Option<String>,
}

#[utoipa::path(get, path = "/log/v1/anchors", tag = "log", summary = "Anchored tree heads, newest first",
    params(("limit" = Option<u64>, Query, description = "1 to 100 (default 20)")),
    responses((status = 200, body = Anchors), (status = 400, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn anchors(
    State(receipts): State<Arc<Receipts>>,
    Query(q): Query<AnchorsQuery>,
) -> Result<Json<Anchors>, RelayError> {
    let limit = number("limit", q.limit.as_deref())?.unwrap_or(20);
    if limit == 0 || limit > MAX_ANCHORS {
        return Err(invalid(format!("limit must be 1 to {MAX_ANCHORS}")));
    }
    Ok(Json(Anchors { anchors: anchor::list(&receipts.log, limit).await? }))
}
