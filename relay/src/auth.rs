//! Bearer API keys. Until accounts exist the accepted keys come from configuration; only
//! their sha256 is kept in memory, and lookups compare hashes.

use std::collections::HashSet;

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;

use crate::error::ApiError;

pub const KEY_PREFIX: &str = "sk_svc_";

pub fn well_formed(key: &str) -> bool {
    key.len() > KEY_PREFIX.len()
        && key.len() <= 128
        && key.starts_with(KEY_PREFIX)
        && key.bytes().all(|b| b.is_ascii_graphic())
}

pub struct ApiKeys {
    hashes: HashSet<[u8; 32]>,
}

/// The public identity of an API key: balances and usage are kept under it, and it can be
/// shown and logged, unlike the key.
pub fn key_id(key: &str) -> String {
    format!("key_{}", &hex::encode(shared::sha256(key.as_bytes()))[..16])
}

impl ApiKeys {
    pub fn new(keys: &[String]) -> Self {
        ApiKeys { hashes: keys.iter().map(|k| shared::sha256(k.as_bytes())).collect() }
    }

    /// Checks `Authorization: Bearer sk_svc_…` (contract §5: 401 for missing or invalid keys)
    /// and returns the key's id.
    pub fn check(&self, headers: &HeaderMap) -> Result<String, ApiError> {
        let value = headers
            .get(AUTHORIZATION)
            .ok_or_else(|| ApiError::unauthorized("missing Authorization: Bearer sk_svc_… header"))?;
        let key = value
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .ok_or_else(|| ApiError::unauthorized("Authorization must be `Bearer <API key>`"))?;
        if !well_formed(key) {
            return Err(ApiError::unauthorized("API keys start with sk_svc_"));
        }
        if !self.hashes.contains(&shared::sha256(key.as_bytes())) {
            return Err(ApiError::unauthorized("unknown API key"));
        }
        Ok(key_id(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(AUTHORIZATION, HeaderValue::from_str(v).unwrap());
        h
    }

    #[test]
    fn key_rules() {
        let keys = ApiKeys::new(&["sk_svc_good".into()]);
        assert_eq!(keys.check(&headers("Bearer sk_svc_good")).unwrap(), key_id("sk_svc_good"));
        assert!(key_id("sk_svc_good").starts_with("key_") && key_id("sk_svc_good").len() == 20);
        for bad in ["Bearer sk_svc_other", "Bearer sk_live_good", "Basic sk_svc_good", "sk_svc_good", "Bearer sk_svc_"]
        {
            let e = keys.check(&headers(bad)).unwrap_err();
            assert_eq!((e.status, e.code), (401, "unauthorized"), "{bad}");
        }
        assert_eq!(keys.check(&HeaderMap::new()).unwrap_err().status, 401);
    }
}
