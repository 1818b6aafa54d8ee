//! The secrets bundle (DESIGN §10): what a key holder releases to an enclave it verified.
//!
//! The bundle's exact JSON text is signed (ed25519) by a provisioner key that the enclave's
//! measured configuration lists, then sealed to the enclave's attested X25519 key as an
//! envelope of purpose `Provision`. The bundle names the one enclave key it is for, so a
//! signed bundle cannot be re-aimed at another enclave, and carries a version the enclave only
//! lets grow.

use std::collections::BTreeMap;

use ed25519_dalek::{Signature, VerifyingKey};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use zeroize::Zeroizing;

use crate::address::Address;
use crate::b64;

/// Domain separation of the bundle signature.
pub const SIGNATURE_PREFIX: &[u8] = b"SVC-BUNDLE-v1";

/// A secret string: zeroized on drop, never printed.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(pub Zeroizing<String>);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Secret(Zeroizing::new(s.into()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<secret>")
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Secret(Zeroizing::new(String::deserialize(d)?)))
    }
}

/// What the enclave receives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Bundle {
    /// Grows with every new bundle; the enclave refuses one not newer than what it holds.
    pub version: u64,
    /// Hex sha256 of the X25519 key of the one enclave this bundle is for (its `keyId`).
    pub enclave_key_id: String,
    /// Unix seconds, when the key holder made it.
    pub issued_at: u64,
    /// The key-encryption key: base64 of 32 bytes.
    pub kek: Secret,
    /// Earlier KEKs whose sealed objects must still open (rotation).
    #[serde(default)]
    pub previous_keks: Vec<Secret>,
    /// Provider id (as in the tools' `upstreams`) → credential.
    #[serde(default)]
    pub credentials: BTreeMap<String, Secret>,
    /// Per mint, the head of the pool's book lineage the key holder (the freshness witness)
    /// acknowledged last: the only book this boot opens first (DESIGN §13). Sealed to this
    /// boot's key, so it cannot be replayed from an earlier boot.
    #[serde(default)]
    pub heads: BTreeMap<String, crate::witness::Head>,
}

/// What is sealed: the bundle's exact text and the provisioner's signature over it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SignedBundle {
    pub bundle: Secret,
    /// The provisioner's ed25519 public key, base58.
    pub provisioner: String,
    /// ed25519 over `SVC-BUNDLE-v1` ‖ the bundle text, base64.
    pub signature: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BundleError {
    #[error("the bundle is not signed by a provisioner this enclave's configuration lists")]
    UnknownProvisioner,
    #[error("the bundle signature does not verify")]
    BadSignature,
    #[error("the bundle is malformed: {0}")]
    Malformed(&'static str),
}

fn signed_message(bundle_text: &str) -> Vec<u8> {
    [SIGNATURE_PREFIX, bundle_text.as_bytes()].concat()
}

/// Signs the bundle's text (the key holder's side).
#[cfg(feature = "sender")]
pub fn sign(bundle: &Bundle, key: &ed25519_dalek::SigningKey) -> SignedBundle {
    use ed25519_dalek::Signer;
    let text = Secret::new(serde_json::to_string(bundle).expect("a bundle serialises"));
    let signature = key.sign(&signed_message(text.expose())).to_bytes();
    SignedBundle {
        bundle: text,
        provisioner: Address(key.verifying_key().to_bytes()).to_string(),
        signature: b64::encode(signature),
    }
}

impl SignedBundle {
    /// Checks the signer is in `allowed` and the signature verifies, then parses the bundle.
    pub fn verify(&self, allowed: &[Address]) -> Result<(Bundle, Address), BundleError> {
        let provisioner = Address::parse(&self.provisioner).ok_or(BundleError::Malformed("provisioner"))?;
        if !allowed.contains(&provisioner) {
            return Err(BundleError::UnknownProvisioner);
        }
        let key = VerifyingKey::from_bytes(&provisioner.0).map_err(|_| BundleError::Malformed("provisioner"))?;
        let signature: [u8; 64] = b64::decode_array(&self.signature).ok_or(BundleError::Malformed("signature"))?;
        key.verify_strict(&signed_message(self.bundle.expose()), &Signature::from_bytes(&signature))
            .map_err(|_| BundleError::BadSignature)?;
        let bundle: Bundle =
            serde_json::from_str(self.bundle.expose()).map_err(|_| BundleError::Malformed("bundle"))?;
        Ok((bundle, provisioner))
    }
}

/// A key-encryption key.
pub type Kek = Zeroizing<[u8; 32]>;

impl Bundle {
    /// The KEK and the earlier ones as key bytes.
    pub fn keks(&self) -> Result<(Kek, Vec<Kek>), BundleError> {
        let decode = |s: &Secret| -> Result<Kek, BundleError> {
            b64::decode_array::<32>(s.expose()).map(Zeroizing::new).ok_or(BundleError::Malformed("kek"))
        };
        let previous = self.previous_keks.iter().map(decode).collect::<Result<_, _>>()?;
        Ok((decode(&self.kek)?, previous))
    }
}

#[cfg(all(test, feature = "sender"))]
mod tests {
    use super::*;
    use ed25519_dalek::SigningKey;

    fn bundle() -> Bundle {
        Bundle {
            version: 3,
            enclave_key_id: "ab".repeat(32),
            issued_at: 1_800_000_000,
            kek: Secret::new(b64::encode([7u8; 32])),
            previous_keks: vec![Secret::new(b64::encode([6u8; 32]))],
            credentials: [("brave".to_string(), Secret::new("brave-key"))].into(),
            heads: BTreeMap::new(),
        }
    }

    #[test]
    fn a_listed_provisioner_signs_and_the_bundle_comes_back() {
        let key = SigningKey::from_bytes(&[1; 32]);
        let me = Address(key.verifying_key().to_bytes());
        let signed = sign(&bundle(), &key);
        let (back, by) = signed.verify(&[Address([9; 32]), me]).unwrap();
        assert_eq!((back, by), (bundle(), me));
        let (kek, previous) = bundle().keks().unwrap();
        assert_eq!((*kek, previous.len(), *previous[0]), ([7; 32], 1, [6; 32]));
        assert_eq!(format!("{:?}", bundle().kek), "<secret>", "secrets never print");
    }

    #[test]
    fn other_signers_and_altered_bundles_are_refused() {
        let key = SigningKey::from_bytes(&[1; 32]);
        let signed = sign(&bundle(), &key);
        assert_eq!(signed.verify(&[Address([9; 32])]), Err(BundleError::UnknownProvisioner));
        let me = [Address(key.verifying_key().to_bytes())];
        let mut altered = signed.clone();
        altered.bundle = Secret::new(signed.bundle.expose().replace("\"version\":3", "\"version\":4"));
        assert_eq!(altered.verify(&me), Err(BundleError::BadSignature));
        // Signed by an unlisted key that claims to be the listed one.
        let mut forged = sign(&bundle(), &SigningKey::from_bytes(&[2; 32]));
        forged.provisioner = signed.provisioner.clone();
        assert_eq!(forged.verify(&me), Err(BundleError::BadSignature));
        let mut junk = signed.clone();
        junk.signature = "AAAA".into();
        assert_eq!(junk.verify(&me), Err(BundleError::Malformed("signature")));
        let mut bad_kek = bundle();
        bad_kek.kek = Secret::new("short");
        assert_eq!(bad_kek.keks().unwrap_err(), BundleError::Malformed("kek"));
    }
}
