//! API keys issued by wallet sign-in (Sign-In-With-Solana style): the relay issues a one-time
//! challenge, the wallet signs it with its ed25519 key, the relay verifies and issues an
//! `sk_svc_…` key, shown once and stored only as its sha256.

use crate::ids::{random_bytes, random_hex};
use ed25519_dalek::{Signature, VerifyingKey};
use shared::address::Address;
use sqlx::Row;

use super::keys::{Account, Chat, Keys, Scope, Swap};
use crate::store::{Store, StoreError};

/// Scopes a key can hold: `chat` (private inference and the agent), `account` (balance,
/// usage, deposits), `swap` (the Agent Privacy API), `keys` (list, rotate and revoke the
/// wallet's keys).
pub const SCOPES: [&str; 4] = [Chat::NAME, Account::NAME, Swap::NAME, Keys::NAME];
/// What a sign-in that names no scopes gets: everything but managing keys.
pub const DEFAULT_SCOPES: &str = "chat account swap";

/// Who asks the wallet to sign: the SIWS `domain`, `URI` and `Chain ID` of the message, from
/// the relay's configuration. A wallet shows the domain, so a phishing site that relays a
/// challenge shows someone else's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub domain: String,
    pub uri: String,
    pub chain_id: String,
}

impl axum::extract::FromRef<crate::state::App> for Origin {
    fn from_ref(app: &crate::state::App) -> Self {
        app.sign_in.clone()
    }
}

/// The scopes asked for, checked and in canonical order; none asked: [`DEFAULT_SCOPES`].
pub fn scopes(requested: Option<&[String]>) -> Result<String, AccountError> {
    let Some(requested) = requested else { return Ok(DEFAULT_SCOPES.into()) };
    if requested.is_empty() || requested.iter().any(|s| !SCOPES.contains(&s.as_str())) {
        return Err(AccountError::BadScopes);
    }
    Ok(SCOPES.iter().filter(|s| requested.iter().any(|r| r == *s)).copied().collect::<Vec<_>>().join(" "))
}
/// How long a challenge may be answered.
pub const CHALLENGE_TTL_SECS: i64 = 300;

#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error("wallet must be a base58 ed25519 public key")]
    BadWallet,
    #[error("signature must be base58 of 64 bytes")]
    BadSignatureFormat,
    #[error("unknown, expired or already used challenge")]
    BadChallenge,
    #[error("signature does not verify for this wallet and challenge")]
    BadSignature,
    #[error("no such key for this wallet")]
    NotFound,
    #[error("scopes must be a non-empty list of chat, account, swap, keys")]
    BadScopes,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for AccountError {
    fn from(e: sqlx::Error) -> Self {
        AccountError::Store(e.into())
    }
}

/// A new secret key: `sk_svc_` + 32 random bytes in base58.
fn new_secret() -> String {
    format!("{}{}", super::keys::KEY_PREFIX, Address(random_bytes()))
}

pub fn hash_key(key: &str) -> String {
    hex::encode(shared::sha256(key.as_bytes()))
}

/// The exact text the wallet signs: a Sign-In-With-Solana message (the CAIP-122 / EIP-4361
/// layout), whose statement names the scopes the key will hold.
pub fn challenge_message(origin: &Origin, wallet: &str, nonce: &str, scopes: &str, expires_at: i64) -> String {
    let time = |t: i64| shared::time::rfc3339(t.max(0) as u64);
    format!(
        "{domain} wants you to sign in with your Solana account:\n{wallet}\n\n\
         Issue an API key for the private inference service with the scopes: {scopes}.\n\n\
         URI: {uri}\nVersion: 1\nChain ID: {chain}\nNonce: {nonce}\nIssued At: {issued}\nExpiration Time: {expires}",
        domain = origin.domain,
        uri = origin.uri,
        chain = origin.chain_id,
        issued = time(expires_at - CHALLENGE_TTL_SECS),
        expires = time(expires_at),
    )
}

fn wallet_key(wallet: &str) -> Result<VerifyingKey, AccountError> {
    let address = Address::parse(wallet).ok_or(AccountError::BadWallet)?;
    VerifyingKey::from_bytes(&address.0).map_err(|_| AccountError::BadWallet)
}

/// Issues a challenge for `wallet` and `scopes` (from [`scopes`]): `(nonce, message, expires_at)`.
pub async fn challenge(
    store: &Store,
    origin: &Origin,
    wallet: &str,
    scopes: &str,
    now: i64,
) -> Result<(String, String, i64), AccountError> {
    wallet_key(wallet)?;
    let nonce = random_hex(16);
    let expires_at = now + CHALLENGE_TTL_SECS;
    sqlx::query("INSERT INTO sign_in_challenges (nonce, wallet, expires_at) VALUES ($1, $2, $3)")
        .bind(&nonce)
        .bind(wallet)
        .bind(expires_at)
        .execute(store.pool())
        .await?;
    Ok((nonce.clone(), challenge_message(origin, wallet, &nonce, scopes, expires_at), expires_at))
}

/// Verifies the signed challenge and issues a key with `scopes`: `(api_key, key_id)`. The
/// scopes are not stored with the challenge: the signed message names them, so other scopes
/// than the ones the wallet signed make the signature fail. The challenge is spent by the first
/// attempt, right or wrong, and the key is issued in the same transaction.
pub async fn sign_in(
    store: &Store,
    origin: &Origin,
    wallet: &str,
    nonce: &str,
    signature: &str,
    scopes: &str,
    now: i64,
) -> Result<(String, String), AccountError> {
    let key = wallet_key(wallet)?;
    let sig: [u8; 64] = shared::ledger::parse_id(signature).ok_or(AccountError::BadSignatureFormat)?;
    let mut tx = store.begin().await?;
    let spent = sqlx::query(
        "UPDATE sign_in_challenges SET used_at = $1 WHERE nonce = $2 AND wallet = $3 AND used_at IS NULL AND expires_at >= $1 RETURNING expires_at",
    )
    .bind(now)
    .bind(nonce)
    .bind(wallet)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(row) = spent else { return Err(AccountError::BadChallenge) };
    let expires_at: i64 = row.try_get("expires_at")?;
    let message = challenge_message(origin, wallet, nonce, scopes, expires_at);
    if key.verify_strict(message.as_bytes(), &Signature::from_bytes(&sig)).is_err() {
        // One attempt per challenge: a wrong signature spends it too.
        tx.commit().await?;
        return Err(AccountError::BadSignature);
    }
    let secret = new_secret();
    let key_id = format!("key_{}", random_hex(8));
    sqlx::query("INSERT INTO api_keys (id, key_hash, wallet, scopes, created_at) VALUES ($1, $2, $3, $4, $5)")
        .bind(&key_id)
        .bind(hash_key(&secret))
        .bind(wallet)
        .bind(scopes)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok((secret, key_id))
}

/// A stored key, without its secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRecord {
    pub id: String,
    pub wallet: String,
    pub scopes: String,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

fn record(r: &sqlx::any::AnyRow) -> Result<KeyRecord, sqlx::Error> {
    Ok(KeyRecord {
        id: r.try_get("id")?,
        wallet: r.try_get("wallet")?,
        scopes: r.try_get("scopes")?,
        created_at: r.try_get("created_at")?,
        revoked_at: r.try_get("revoked_at")?,
    })
}

/// The live key with this secret, if any.
pub async fn find(store: &Store, secret: &str) -> Result<Option<KeyRecord>, AccountError> {
    let row = sqlx::query(
        "SELECT id, wallet, scopes, created_at, revoked_at FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL",
    )
    .bind(hash_key(secret))
    .fetch_optional(store.pool())
    .await?;
    Ok(row.as_ref().map(record).transpose()?)
}

pub async fn list(store: &Store, wallet: &str) -> Result<Vec<KeyRecord>, AccountError> {
    let rows = sqlx::query(
        "SELECT id, wallet, scopes, created_at, revoked_at FROM api_keys WHERE wallet = $1 ORDER BY created_at, id",
    )
    .bind(wallet)
    .fetch_all(store.pool())
    .await?;
    Ok(rows.iter().map(record).collect::<Result<_, _>>()?)
}

pub async fn revoke(store: &Store, wallet: &str, key_id: &str, now: i64) -> Result<(), AccountError> {
    let done = sqlx::query("UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND wallet = $3 AND revoked_at IS NULL")
        .bind(now)
        .bind(key_id)
        .bind(wallet)
        .execute(store.pool())
        .await?;
    if done.rows_affected() == 1 { Ok(()) } else { Err(AccountError::NotFound) }
}

/// A new secret for the same key id (balances stay); the old secret stops working.
pub async fn rotate(store: &Store, wallet: &str, key_id: &str) -> Result<String, AccountError> {
    let secret = new_secret();
    let done = sqlx::query("UPDATE api_keys SET key_hash = $1 WHERE id = $2 AND wallet = $3 AND revoked_at IS NULL")
        .bind(hash_key(&secret))
        .bind(key_id)
        .bind(wallet)
        .execute(store.pool())
        .await?;
    if done.rows_affected() == 1 { Ok(secret) } else { Err(AccountError::NotFound) }
}

/// Whether `key_id` names an issued key (revoked or not: its balance still exists).
pub async fn exists(store: &Store, key_id: &str) -> Result<bool, AccountError> {
    let row = sqlx::query("SELECT id FROM api_keys WHERE id = $1").bind(key_id).fetch_optional(store.pool()).await?;
    Ok(row.is_some())
}
