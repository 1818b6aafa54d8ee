//! The pool's keys as sealed objects the relay stores: a wallet's key sealed with its id and
//! owner, the pool key, and books. Only public halves leave.

use ed25519_dalek::Signer;
use ed25519_dalek::{SigningKey, VerifyingKey};
use rand_core::OsRng;
use serde::{Deserialize, Serialize};
use shared::address::Address;
use shared::privacy::{CreatedWallet, NewWallet, WalletCertificate, signature_text};
use shared::wire::SealedObject;
use zeroize::Zeroizing;

use super::book::Book;
use super::{FundsError, sealed};
use crate::keys::custody::Custody;
use crate::keys::{EnclaveKeys, SeedText};

pub const WALLET_KIND: &str = "managed-wallet";
pub const POOL_KIND: &str = "privacy-pool";
pub const BOOK_KIND: &str = "privacy-book";
/// The layout of a key's plaintext (a wallet's, the pool's, a shield's intermediate key's),
/// bound into its blob as the sealed header's version.
pub const KEY_FORMAT: u32 = 1;
/// The layout of a book's plaintext. 2: what a step releases is one variant per step (1 was a
/// struct of options; a book of format 1 does not open).
pub const BOOK_FORMAT: u32 = 2;

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct WalletSecret {
    seed: SeedText,
    wallet_id: String,
    owner_pubkey: Option<String>,
}

pub struct Wallet {
    pub key: SigningKey,
    pub address: Address,
    pub id: String,
    pub owner: Option<VerifyingKey>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PoolSecret {
    seed: SeedText,
}

pub struct Pool {
    pub key: SigningKey,
    pub address: Address,
}

/// A new wallet key sealed with its id and owner, and its certificate.
pub fn new_wallet(custody: &Custody, keys: &EnclaveKeys, request: &NewWallet) -> Result<CreatedWallet, FundsError> {
    shared::swap::parse_uuid(&request.wallet_id).ok_or(FundsError::BadBody("walletId"))?;
    if let Some(owner) = &request.owner_pubkey {
        Address::parse(owner).ok_or(FundsError::BadBody("ownerPubkey"))?;
    }
    let key = SigningKey::generate(&mut OsRng);
    let secret = WalletSecret {
        seed: SeedText::of(&key),
        wallet_id: request.wallet_id.clone(),
        owner_pubkey: request.owner_pubkey.clone(),
    };
    let object = seal_key(custody, WALLET_KIND, &secret, &key)?;
    let wallet = open_wallet(custody, &object.blob)?;
    Ok(CreatedWallet { object, certificate: certificate(&wallet, keys) })
}

/// What this boot signs of a sealed wallet: its id, address and owner.
pub fn certificate(wallet: &Wallet, keys: &EnclaveKeys) -> WalletCertificate {
    let mut certificate = WalletCertificate {
        wallet_id: wallet.id.clone(),
        address: wallet.address,
        owner_pubkey: wallet.owner.map(|o| Address(o.to_bytes())),
        enclave_pubkey: shared::b64::encode(keys.enclave_public()),
        signature: String::new(),
    };
    certificate.signature = signature_text(&keys.signer().sign(&certificate.message()).to_bytes());
    certificate
}

/// A new pool key.
pub fn new_pool(custody: &Custody) -> Result<SealedObject, FundsError> {
    let key = SigningKey::generate(&mut OsRng);
    seal_key(custody, POOL_KIND, &PoolSecret { seed: SeedText::of(&key) }, &key)
}

pub fn seal_key<T: Serialize>(
    custody: &Custody,
    kind: &str,
    secret: &T,
    key: &SigningKey,
) -> Result<SealedObject, FundsError> {
    let plaintext = Zeroizing::new(serde_json::to_vec(secret).map_err(|_| sealed())?);
    let (id, blob) = custody.seal_new(kind, KEY_FORMAT, &plaintext).map_err(|_| sealed())?;
    Ok(SealedObject {
        id: hex::encode(id),
        kind: kind.into(),
        version: KEY_FORMAT,
        blob,
        public_key: Some(Address(key.verifying_key().to_bytes()).to_string()),
    })
}

pub fn open_wallet(custody: &Custody, blob: &str) -> Result<Wallet, FundsError> {
    let plaintext = custody.open_kind(blob, WALLET_KIND, KEY_FORMAT).map_err(|_| sealed())?;
    let secret: WalletSecret = serde_json::from_slice(&plaintext).map_err(|_| sealed())?;
    let key = secret.seed.key().ok_or_else(sealed)?;
    let owner = match &secret.owner_pubkey {
        Some(text) => {
            let bytes = Address::parse(text).ok_or_else(sealed)?.0;
            Some(VerifyingKey::from_bytes(&bytes).map_err(|_| sealed())?)
        }
        None => None,
    };
    Ok(Wallet { address: Address(key.verifying_key().to_bytes()), key, id: secret.wallet_id, owner })
}

pub fn open_pool(custody: &Custody, blob: &str) -> Result<Pool, FundsError> {
    let plaintext = custody.open_kind(blob, POOL_KIND, KEY_FORMAT).map_err(|_| sealed())?;
    let secret: PoolSecret = serde_json::from_slice(&plaintext).map_err(|_| sealed())?;
    let key = secret.seed.key().ok_or_else(sealed)?;
    Ok(Pool { address: Address(key.verifying_key().to_bytes()), key })
}

pub fn open_book(custody: &Custody, blob: &str) -> Result<Book, FundsError> {
    let plaintext = custody.open_kind(blob, BOOK_KIND, BOOK_FORMAT).map_err(|_| sealed())?;
    Book::from_plaintext(&plaintext).ok_or_else(sealed)
}

pub fn seal_book(custody: &Custody, book: &Book) -> Result<String, FundsError> {
    Ok(custody.seal_new(BOOK_KIND, BOOK_FORMAT, &book.to_plaintext()).map_err(|_| sealed())?.1)
}
