//! An account's deposit owner: a signing key made and sealed by the enclave (a sealed object
//! of kind `signing-key`), made on first ask and kept. Only its public half is here.

use shared::address::Address;
use sqlx::Row;

use super::Deposits;
use crate::enclaves::objects;
use crate::http::error::RelayError;
use crate::store::is_unique_violation;

/// The deposit owner of `key_id`, made by an enclave the first time it is asked.
pub async fn owner_of(deposits: &Deposits, key_id: &str) -> Result<Address, RelayError> {
    if let Some(owner) = stored(deposits, key_id).await? {
        return Ok(owner);
    }
    let object = objects::create(&deposits.store, &deposits.enclaves, "signing-key").await?;
    let owner = object
        .public_key
        .as_deref()
        .and_then(Address::parse)
        .ok_or(RelayError::EnclaveAnswer("a signing key came back without its public key"))?;
    let inserted =
        sqlx::query("INSERT INTO deposit_addresses (key_id, owner, object_id, created_at) VALUES ($1, $2, $3, $4)")
            .bind(key_id)
            .bind(owner.to_string())
            .bind(&object.id)
            .bind(crate::unix_now())
            .execute(deposits.store.pool())
            .await
            .map_err(crate::store::StoreError::from);
    match inserted {
        Ok(_) => Ok(owner),
        // Two asks at once: the first one's owner stands (the other key stays sealed, unused).
        Err(e) if is_unique_violation(&e) => {
            stored(deposits, key_id).await?.ok_or(RelayError::Internal("a deposit address vanished after a conflict"))
        }
        Err(e) => Err(e.into()),
    }
}

async fn stored(deposits: &Deposits, key_id: &str) -> Result<Option<Address>, RelayError> {
    let row = sqlx::query("SELECT owner FROM deposit_addresses WHERE key_id = $1")
        .bind(key_id)
        .fetch_optional(deposits.store.pool())
        .await?;
    row.map(|r| parse_owner(r.try_get("owner")?)).transpose()
}

fn parse_owner(stored: String) -> Result<Address, RelayError> {
    Address::parse(&stored).ok_or(RelayError::Internal("a stored deposit owner is not base58"))
}

/// Every (key id, owner) watched. A row that does not read as one is left out and logged: one
/// damaged row must not stop every other key's deposits from being credited.
pub async fn all(deposits: &Deposits) -> Result<Vec<(String, Address)>, RelayError> {
    let rows = sqlx::query("SELECT key_id, owner FROM deposit_addresses ORDER BY created_at")
        .fetch_all(deposits.store.pool())
        .await?;
    let read = |r: &sqlx::any::AnyRow| -> Result<(String, Address), RelayError> {
        Ok((r.try_get("key_id")?, parse_owner(r.try_get("owner")?)?))
    };
    Ok(rows
        .iter()
        .filter_map(|r| match read(r) {
            Ok(watched) => Some(watched),
            Err(e) => {
                let key_id = r.try_get::<String, _>("key_id").unwrap_or_default();
                tracing::error!(%key_id, error = %e, "a deposit address row is unreadable: not watched");
                None
            }
        })
        .collect())
}
