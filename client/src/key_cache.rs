//! Verified enclave keys: in memory, and optionally in a file so separate CLI runs reuse a
//! verification until it expires. An entry exists only after the enclave passed `attest`.
//! The cache is a shortcut: a stale key is detected (decrypt failure or `tee_unreachable`)
//! and dropped. An entry holds only for the relay and trust options it was verified under (its
//! context, a hash of both): a key verified against a dev root or other measurements is not
//! reused by a client that trusts less.

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

/// A verified key and the context it was verified in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    #[serde(with = "hex32")]
    context: [u8; 32],
    key: CachedKey,
}

#[derive(Default)]
pub struct KeyCache {
    file: Option<PathBuf>,
    current: Mutex<Option<Entry>>,
}

impl KeyCache {
    pub fn new(file: Option<PathBuf>) -> Self {
        let current = file
            .as_ref()
            .and_then(|f| std::fs::read(f).ok())
            .and_then(|bytes| serde_json::from_slice::<Entry>(&bytes).ok());
        KeyCache { file, current: Mutex::new(current) }
    }

    /// The cached key, if it was verified in `context` and its verification still holds.
    pub fn get(&self, now: u64, context: &[u8; 32]) -> Option<CachedKey> {
        let entry = *self.current.lock().unwrap_or_else(|p| p.into_inner());
        entry.filter(|e| e.context == *context && e.key.verified_until > now).map(|e| e.key)
    }

    pub fn set(&self, context: [u8; 32], key: CachedKey) {
        let entry = Entry { context, key };
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Some(entry);
        if let Some(f) = &self.file {
            let _ = crate::private_file::write(f, &serde_json::to_vec(&entry).expect("key serialises"));
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
        let ctx = [1u8; 32];
        assert_eq!(a.get(0, &ctx), None);
        a.set(ctx, key());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "the pinned key is the owner's only");
        }
        assert_eq!(KeyCache::new(Some(path.clone())).get(99, &ctx), Some(key()));
        assert_eq!(KeyCache::new(Some(path.clone())).get(99, &[2u8; 32]), None, "another relay or trust: verify again");
        assert_eq!(KeyCache::new(Some(path.clone())).get(100, &ctx), None, "expired verification must not be reused");
        a.clear();
        assert_eq!(KeyCache::new(Some(path.clone())).get(0, &ctx), None);
        // A file of the older format (a bare key, no context) is not trusted.
        std::fs::write(&path, serde_json::to_vec(&key()).unwrap()).unwrap();
        assert_eq!(KeyCache::new(Some(path.clone())).get(0, &ctx), None);
        std::fs::write(&path, "garbage").unwrap();
        assert_eq!(KeyCache::new(Some(path)).get(0, &ctx), None);
    }
}
