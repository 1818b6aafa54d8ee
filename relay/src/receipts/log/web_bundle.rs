//! The web app bundle the relay serves is a leaf of its log (docs/web.md): appended once, at
//! start, so every bundle a relay ever served is on the public record, and `svc web-check`
//! requires the served bundle's leaf.

use super::append::append;
use crate::store::{Store, StoreError, is_unique_violation};

/// Appends the entry of the bundle with `sha256` unless the log has it; true if appended.
pub async fn log_bundle(store: &Store, sha256: &[u8; 32], now: i64) -> Result<bool, StoreError> {
    let entry = shared::tlog::entry::web_bundle(sha256);
    let address = shared::address::Address(*sha256).to_string();
    let mut tx = store.begin().await?;
    match append(&mut tx, &entry, &address, now).await {
        Ok(_) => {
            tx.commit().await?;
            Ok(true)
        }
        Err(e) if is_unique_violation(&e) => Ok(false),
        Err(e) => Err(e),
    }
}
