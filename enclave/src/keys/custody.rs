//! Custody (DESIGN §10): the secrets bundle this boot holds, and the sealed objects it opens.
//!
//! The enclave starts with nothing that outlives a boot. A key holder that verified this boot's
//! quote sends a bundle, signed by a provisioner key of the measured configuration and sealed
//! to this boot's X25519 key; from it the enclave takes the KEK (which opens sealed objects) and
//! the tool credentials. Nothing here is ever logged or returned but public halves.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use ed25519_dalek::SigningKey;
use rand_core::{OsRng, RngCore};
use shared::address::Address;
use shared::envelope::{Envelope, Purpose};
use shared::provision::{BundleError, SignedBundle};
use shared::wire::{OpenedObject, ProvisioningState, SealedObject};
use shared::{b64, sha256};
use zeroize::Zeroizing;

use crate::keys::EnclaveKeys;
use crate::keys::sealed::{self, Header, Keks, SealError};

/// The one object kind so far: an ed25519 key (a Solana wallet), sealed as its 32-byte seed.
pub const SIGNING_KEY: &str = "signing-key";

/// What a bundle gave this boot.
pub struct Provisioned {
    pub version: u64,
    /// The key holder's clock when it made the bundle.
    pub issued_at: u64,
    /// The freshness witness's heads (DESIGN §13).
    pub heads: BTreeMap<String, shared::witness::Head>,
    pub provisioner: Address,
    pub keks: Keks,
    pub credentials: BTreeMap<String, Zeroizing<String>>,
}

#[derive(Debug, thiserror::Error)]
pub enum CustodyError {
    #[error("this enclave holds no secrets bundle yet; a key holder must provision it")]
    NotProvisioned,
    #[error("the bundle is malformed: {0}")]
    Malformed(&'static str),
    #[error("the bundle is for another enclave key; fetch this enclave's attestation")]
    WrongEnclaveKey,
    #[error("the bundle does not decrypt with this enclave's key")]
    DecryptFailed,
    #[error("the bundle is not signed by a provisioner of this enclave's measured configuration")]
    UnknownProvisioner,
    #[error("the bundle signature does not verify")]
    BadSignature,
    #[error("bundle version {offered} is not newer than the version {held} this enclave holds")]
    Stale { held: u64, offered: u64 },
    #[error("{0}")]
    Sealed(#[from] SealError),
    #[error("unknown object kind; this enclave makes `{SIGNING_KEY}`")]
    UnknownKind,
}

impl From<BundleError> for CustodyError {
    fn from(e: BundleError) -> Self {
        match e {
            BundleError::UnknownProvisioner => CustodyError::UnknownProvisioner,
            BundleError::BadSignature => CustodyError::BadSignature,
            BundleError::Malformed(what) => CustodyError::Malformed(what),
        }
    }
}

pub struct Custody {
    /// Provisioner keys of the measured configuration.
    provisioners: Vec<Address>,
    held: RwLock<Option<Arc<Provisioned>>>,
}

impl Custody {
    pub fn new(provisioners: Vec<Address>) -> Self {
        Custody { provisioners, held: RwLock::new(None) }
    }

    pub fn held(&self) -> Option<Arc<Provisioned>> {
        self.held.read().ok().and_then(|h| h.clone())
    }

    pub fn state(&self) -> ProvisioningState {
        match self.held() {
            None => ProvisioningState::default(),
            Some(p) => ProvisioningState {
                provisioned: true,
                bundle_version: Some(p.version),
                provisioner_key: Some(p.provisioner.to_string()),
                witness_keys: Vec::new(),
            },
        }
    }

    /// Opens, checks and installs a bundle. Nothing changes unless every check passes.
    pub fn provision(&self, encrypted_bundle: &str, keys: &EnclaveKeys) -> Result<Arc<Provisioned>, CustodyError> {
        let tee = keys.tee_public();
        let key_id = sha256(&tee);
        let envelope = Envelope::parse(encrypted_bundle).map_err(|_| CustodyError::Malformed("envelope"))?;
        if envelope.key_id.is_some_and(|id| id != key_id) {
            return Err(CustodyError::WrongEnclaveKey);
        }
        let (plaintext, _) =
            envelope.open_for(Purpose::Provision, keys.x25519(), &tee).map_err(|_| CustodyError::DecryptFailed)?;
        let signed: SignedBundle =
            serde_json::from_slice(&plaintext).map_err(|_| CustodyError::Malformed("signed bundle"))?;
        let (bundle, provisioner) = signed.verify(&self.provisioners)?;
        if bundle.enclave_key_id != hex::encode(key_id) {
            return Err(CustodyError::WrongEnclaveKey);
        }
        let (current, previous) = bundle.keks()?;
        let credentials =
            bundle.credentials.iter().map(|(k, v)| (k.clone(), Zeroizing::new(v.expose().to_string()))).collect();
        let fresh = Arc::new(Provisioned {
            version: bundle.version,
            issued_at: bundle.issued_at,
            heads: bundle.heads.clone(),
            provisioner,
            keks: Keks { current, previous },
            credentials,
        });
        let mut held = self.held.write().map_err(|_| CustodyError::Malformed("state"))?;
        if let Some(h) = held.as_ref()
            && h.version >= fresh.version
        {
            return Err(CustodyError::Stale { held: h.version, offered: fresh.version });
        }
        *held = Some(fresh.clone());
        Ok(fresh)
    }

    fn keks(&self) -> Result<Arc<Provisioned>, CustodyError> {
        self.held().ok_or(CustodyError::NotProvisioned)
    }

    /// Seals `plaintext` as a new object of `kind` (for other modules' objects, e.g. a swap
    /// session's key with its terms); returns its id and blob. `format` is the version of the
    /// plaintext's layout, bound into the blob with the kind.
    pub fn seal_new(&self, kind: &str, format: u32, plaintext: &[u8]) -> Result<([u8; 16], String), CustodyError> {
        let held = self.keks()?;
        let mut id = [0u8; 16];
        OsRng.fill_bytes(&mut id);
        let header = Header { id, kind: kind.into(), version: format };
        Ok((id, b64::encode(sealed::seal(&held.keks, &header, plaintext)?)))
    }

    /// Opens a blob that must be of `kind` and `format`; returns its plaintext.
    pub fn open_kind(&self, blob: &str, kind: &str, format: u32) -> Result<Zeroizing<Vec<u8>>, CustodyError> {
        let held = self.keks()?;
        let bytes = b64::decode(blob).map_err(|_| SealError::Malformed)?;
        let opened = sealed::open(&held.keks, &bytes)?;
        if opened.header.kind != kind || opened.header.version != format {
            return Err(SealError::Tampered.into());
        }
        Ok(opened.plaintext)
    }

    /// Makes a new secret of `kind` and seals it; only its public half leaves.
    pub fn new_object(&self, kind: &str) -> Result<SealedObject, CustodyError> {
        if kind != SIGNING_KEY {
            return Err(CustodyError::UnknownKind);
        }
        let held = self.keks()?;
        let mut id = [0u8; 16];
        OsRng.fill_bytes(&mut id);
        let key = SigningKey::generate(&mut OsRng);
        let header = Header { id, kind: kind.into(), version: 1 };
        let blob = sealed::seal(&held.keks, &header, key.as_bytes())?;
        Ok(SealedObject {
            id: hex::encode(id),
            kind: header.kind,
            version: header.version,
            blob: b64::encode(blob),
            public_key: Some(Address(key.verifying_key().to_bytes()).to_string()),
        })
    }

    /// Opens a stored blob: its id, kind, version and public half, and, when it was sealed
    /// under an earlier KEK, the same object sealed under the current one.
    pub fn open_object(&self, blob: &str) -> Result<(OpenedObject, Zeroizing<Vec<u8>>), CustodyError> {
        let held = self.keks()?;
        let bytes = b64::decode(blob).map_err(|_| SealError::Malformed)?;
        let opened = sealed::open(&held.keks, &bytes)?;
        let public_key = match opened.header.kind.as_str() {
            SIGNING_KEY => {
                let seed: &[u8; 32] = opened.plaintext.as_slice().try_into().map_err(|_| SealError::Tampered)?;
                Some(Address(SigningKey::from_bytes(seed).verifying_key().to_bytes()).to_string())
            }
            _ => None,
        };
        let rewrapped = match opened.under_previous_kek {
            true => Some(b64::encode(sealed::seal(&held.keks, &opened.header, &opened.plaintext)?)),
            false => None,
        };
        let view = OpenedObject {
            id: hex::encode(opened.header.id),
            kind: opened.header.kind.clone(),
            version: opened.header.version,
            public_key,
            rewrapped,
        };
        Ok((view, opened.plaintext))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A blob opens only as the kind and the format it was sealed as: a book of an older
    /// layout is refused, not read as the new one.
    #[test]
    fn a_blob_opens_only_as_its_kind_and_format() {
        let keks = Keks { current: Zeroizing::new([7; 32]), previous: Vec::new() };
        let held = Provisioned {
            version: 1,
            issued_at: 0,
            heads: BTreeMap::new(),
            provisioner: Address([1; 32]),
            keks,
            credentials: BTreeMap::new(),
        };
        let custody = Custody { provisioners: Vec::new(), held: RwLock::new(Some(Arc::new(held))) };
        let (_, blob) = custody.seal_new("privacy-book", 2, b"a book").unwrap();
        assert_eq!(custody.open_kind(&blob, "privacy-book", 2).unwrap().as_slice(), b"a book");
        for (kind, format) in [("privacy-book", 1), ("privacy-book", 3), ("privacy-pool", 2)] {
            assert!(matches!(custody.open_kind(&blob, kind, format), Err(CustodyError::Sealed(SealError::Tampered))));
        }
    }
}
