//! The cached enclave key: in memory, and optionally in a file so that separate CLI runs
//! reuse it. The cache is only a shortcut: a stale key is detected (decrypt failure or
//! `tee_unreachable`) and dropped.

use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedKey {
    #[serde(with = "hex_key")]
    pub tee_public_key: [u8; 32],
}

mod hex_key {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(k: &[u8; 32], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(k))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; 32], D::Error> {
        let text = String::deserialize(d)?;
        shared::receipt::decode_hex32(&text).ok_or_else(|| serde::de::Error::custom("bad key"))
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
        KeyCache {
            file,
            current: Mutex::new(current),
        }
    }

    pub fn get(&self) -> Option<CachedKey> {
        *self.current.lock().unwrap_or_else(|p| p.into_inner())
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

    #[test]
    fn file_cache_survives_and_clears() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.json");
        let a = KeyCache::new(Some(path.clone()));
        assert_eq!(a.get(), None);
        a.set(CachedKey {
            tee_public_key: [5; 32],
        });
        assert_eq!(
            KeyCache::new(Some(path.clone())).get(),
            Some(CachedKey {
                tee_public_key: [5; 32]
            })
        );
        a.clear();
        assert_eq!(KeyCache::new(Some(path.clone())).get(), None);
        std::fs::write(&path, "garbage").unwrap();
        assert_eq!(KeyCache::new(Some(path)).get(), None);
    }
}
