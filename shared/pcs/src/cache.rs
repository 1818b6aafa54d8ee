//! A process's memory of the collateral it fetched, one entry per (FMSPC, CA), each kept until
//! its `nextUpdate`: a relay serving many attestations asks Intel once per platform and period.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use shared::attest::collateral::pcs_query;

use crate::{PcsClient, PcsError};

/// Platforms behind one relay are few; past this many the oldest answers are dropped.
const MAX_ENTRIES: usize = 64;

struct Entry {
    /// The collateral's JSON form (`Collateral::to_json`).
    json: Arc<str>,
    valid_until: u64,
}

pub struct CachedPcs {
    pcs: PcsClient,
    entries: Mutex<HashMap<(String, &'static str), Entry>>,
}

impl CachedPcs {
    pub fn new(pcs: PcsClient) -> Self {
        CachedPcs { pcs, entries: Mutex::new(HashMap::new()) }
    }

    pub fn base(&self) -> &str {
        self.pcs.base()
    }

    /// The collateral (JSON) for `quote`'s platform: the remembered copy while `now` is before
    /// its `nextUpdate`, else fetched. Collateral without a `nextUpdate` is never remembered.
    pub async fn collateral_for(&self, quote: &[u8], now: u64) -> Result<Arc<str>, PcsError> {
        let (fmspc, ca) = pcs_query(quote).map_err(|e| PcsError::Malformed(e.to_string()))?;
        let key = (fmspc, ca);
        if let Some(e) = self.lock().get(&key)
            && e.valid_until > now
        {
            return Ok(e.json.clone());
        }
        let collateral = self.pcs.fetch(&key.0, ca).await?;
        let json: Arc<str> = collateral.to_json().into();
        if let Some(valid_until) = collateral.valid_until.filter(|t| *t > now) {
            let mut entries = self.lock();
            entries.retain(|_, e| e.valid_until > now);
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
            entries.insert(key, Entry { json: json.clone(), valid_until });
        }
        Ok(json)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, &'static str), Entry>> {
        // Entries are replaced whole, so a panic elsewhere cannot leave one half-written.
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}
