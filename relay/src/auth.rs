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

impl ApiKeys {
    pub fn new(keys: &[String]) -> Self {
        ApiKeys { hashes: keys.iter().map(|k| shared::sha256(k.as_bytes())).collect() }
    }

    /// Checks `Authorization: Bearer sk_svc_…` (contract §5: 401 for missing or invalid keys).
    pub fn check(&self, headers: &HeaderMap) -> Result<(), ApiError> {
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
        Ok(())
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
        assert!(keys.check(&headers("Bearer sk_svc_good")).is_ok());
        for bad in ["Bearer sk_svc_other", "Bearer sk_live_good", "Basic sk_svc_good", "sk_svc_good", "Bearer sk_svc_"]
        {
            let e = keys.check(&headers(bad)).unwrap_err();
            assert_eq!((e.status, e.code), (401, "unauthorized"), "{bad}");
        }
        assert_eq!(keys.check(&HeaderMap::new()).unwrap_err().status, 401);
    }
}
