//! Verified enclave keys: in memory, and optionally in a file so separate CLI runs reuse a
//! verification until it expires. An entry exists only after the enclave passed `attest`.
//! The cache is a shortcut: a stale key is detected (decrypt failure or `tee_unreachable`)
//! and dropped.

use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CachedKey {
    #[serde(with = "hex32")]
    pub tee_public_key: [u8; 32],
    #[serde(with = "hex32")]
    pub enclave_public_key: [u8; 32],
    /// sha256 of the verified binding quote; `None` when accepted unattested.
    #[serde(with = "opt_hex32")]
    pub binding_quote_hash: Option<[u8; 32]>,
    /// Unix seconds after which the enclave must be verified again.
    pub verified_until: u64,
    pub unattested: bool,
}

mod hex32 {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(k: &[u8; 32], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(k))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; 32], D::Error> {
        let text = String::deserialize(d)?;
        shared::receipt::decode_hex32(&text).ok_or_else(|| serde::de::Error::custom("bad key"))
    }
}

mod opt_hex32 {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(k: &Option<[u8; 32]>, s: S) -> Result<S::Ok, S::Error> {
        match k {
            Some(k) => s.serialize_str(&hex::encode(k)),
            None => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<[u8; 32]>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(t) => shared::receipt::decode_hex32(&t).map(Some).ok_or_else(|| serde::de::Error::custom("bad hash")),
        }
    }
}

#[derive(Default)]
pub struct KeyCache {
    file: Option<PathBuf>,
    current: Mutex<Option<CachedKey>>,
}

impl KeyCache {
    pub fn new(file: Option<PathBuf>) -> Self {
        let current = file
            .as_ref()
            .and_then(|f| std::fs::read(f).ok())
            .and_then(|bytes| serde_json::from_slice::<CachedKey>(&bytes).ok());
        KeyCache { file, current: Mutex::new(current) }
    }

    /// The cached entry, if still within its verification period.
    pub fn get(&self, now: u64) -> Option<CachedKey> {
        let entry = *self.current.lock().unwrap_or_else(|p| p.into_inner());
        entry.filter(|k| k.verified_until > now)
    }

    pub fn set(&self, key: CachedKey) {
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Some(key);
        if let Some(f) = &self.file {
            if let Some(dir) = f.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = std::fs::write(f, serde_json::to_vec(&key).expect("key serialises"));
        }
    }

    pub fn clear(&self) {
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = None;
        if let Some(f) = &self.file {
            let _ = std::fs::remove_file(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> CachedKey {
        CachedKey {
            tee_public_key: [5; 32],
            enclave_public_key: [6; 32],
            binding_quote_hash: Some([7; 32]),
            verified_until: 100,
            unattested: false,
        }
    }

    #[test]
    fn file_cache_survives_expires_and_clears() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.json");
        let a = KeyCache::new(Some(path.clone()));
        assert_eq!(a.get(0), None);
        a.set(key());
        assert_eq!(KeyCache::new(Some(path.clone())).get(99), Some(key()));
        assert_eq!(KeyCache::new(Some(path.clone())).get(100), None, "expired verification must not be reused");
        a.clear();
        assert_eq!(KeyCache::new(Some(path.clone())).get(0), None);
        std::fs::write(&path, "garbage").unwrap();
        assert_eq!(KeyCache::new(Some(path)).get(0), None);
    }
}
