//! Bearer API keys. Until accounts exist the accepted keys come from configuration; only
//! their sha256 is kept in memory, and lookups compare hashes.

use std::collections::HashSet;
use std::marker::PhantomData;
use std::sync::Arc;

use axum::extract::{FromRef, FromRequestParts};
use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;

use crate::http::error::RelayError;
use crate::state::App;
use crate::store::Store;

pub const KEY_PREFIX: &str = "sk_svc_";

pub fn well_formed(key: &str) -> bool {
    key.len() > KEY_PREFIX.len()
        && key.len() <= 128
        && key.starts_with(KEY_PREFIX)
        && key.bytes().all(|b| b.is_ascii_graphic())
}

/// The public identity of a configured API key: balances are kept under it, and it can be
/// shown and logged, unlike the key. Keys issued by sign-in get a random stable id instead.
pub fn key_id(key: &str) -> String {
    format!("key_{}", &hex::encode(shared::sha256(key.as_bytes()))[..16])
}

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub key_id: String,
    /// The signed-in wallet; `None` for keys from the relay's configuration (operator keys).
    pub wallet: Option<String>,
    /// The currency the request asks to pay in (`X-Currency`); none: whichever balance covers
    /// the call, stablecoin first.
    pub currency: Option<&'static str>,
}

/// Keys from configuration (only their sha256 kept) and keys issued by wallet sign-in.
pub struct ApiKeys {
    configured: HashSet<[u8; 32]>,
    store: Store,
}

impl ApiKeys {
    pub fn new(keys: &[String], store: Store) -> Self {
        ApiKeys { configured: keys.iter().map(|k| shared::sha256(k.as_bytes())).collect(), store }
    }

    /// Checks `Authorization: Bearer sk_svc_…` (contract §5): 401 for a missing, malformed,
    /// unknown or revoked key, 403 when the key lacks the scope `S`. Routes whose caller always
    /// needs a key take [`Authorized`] instead.
    pub async fn check<S: Scope>(&self, headers: &HeaderMap) -> Result<Caller, RelayError> {
        let scope = S::NAME;
        let key = bearer(headers)?;
        let currency = requested_currency(headers)?;
        if self.configured.contains(&shared::sha256(key.as_bytes())) {
            return Ok(Caller { key_id: key_id(key), wallet: None, currency });
        }
        let record = super::sign_in::find(&self.store, key).await?;
        let record = record.ok_or(RelayError::Unauthorized("unknown or revoked API key"))?;
        if !record.scopes.split_whitespace().any(|s| s == scope) {
            return Err(RelayError::Forbidden(format!("this key lacks the `{scope}` scope")));
        }
        Ok(Caller { key_id: record.id, wallet: Some(record.wallet), currency })
    }
}

/// A scope a signed-in key must hold for a route (configured operator keys hold every scope).
pub trait Scope: Send + Sync {
    const NAME: &'static str;
}

/// Private chat (`/tee/process`, chat completions, encrypted `/agent`).
pub struct Chat;
impl Scope for Chat {
    const NAME: &'static str = "chat";
}

/// The account: balance, usage, deposits, models.
pub struct Account;
impl Scope for Account {
    const NAME: &'static str = "account";
}

/// Swaps and managed wallets.
pub struct Swap;
impl Scope for Swap {
    const NAME: &'static str = "swap";
}

/// Managing the wallet's API keys.
pub struct Keys;
impl Scope for Keys {
    const NAME: &'static str = "keys";
}

/// The caller of a route that needs a key with scope `S`: 401 without a valid key, 403 without
/// the scope. As an extractor, the check comes before anything the handler reads.
/// Only the extractor makes one, so holding one means the check passed.
pub struct Authorized<S: Scope> {
    pub caller: Caller,
    scope: PhantomData<S>,
}

/// Any router state that holds the keys (the app's, or a test's with nothing else).
impl<S: Scope, St: Send + Sync> FromRequestParts<St> for Authorized<S>
where
    Arc<ApiKeys>: FromRef<St>,
{
    type Rejection = RelayError;

    async fn from_request_parts(parts: &mut Parts, state: &St) -> Result<Self, RelayError> {
        let keys = Arc::<ApiKeys>::from_ref(state);
        Ok(Authorized { caller: keys.check::<S>(&parts.headers).await?, scope: PhantomData })
    }
}

impl FromRef<App> for Arc<ApiKeys> {
    fn from_ref(app: &App) -> Self {
        app.keys.clone()
    }
}

/// `X-Currency: usdc|svc`, the balance a request asks to pay from.
fn requested_currency(headers: &HeaderMap) -> Result<Option<&'static str>, RelayError> {
    let Some(value) = headers.get("x-currency") else { return Ok(None) };
    let value = value.to_str().unwrap_or_default().trim().to_ascii_lowercase();
    match crate::currency::named(&value) {
        Some(c) => Ok(Some(c)),
        None => Err(RelayError::input(
            shared::wire::codes::INVALID_FIELD,
            format!("X-Currency must be one of {:?}", crate::currency::CURRENCIES),
        )),
    }
}

fn bearer(headers: &HeaderMap) -> Result<&str, RelayError> {
    let value =
        headers.get(AUTHORIZATION).ok_or(RelayError::Unauthorized("missing Authorization: Bearer sk_svc_… header"))?;
    let key = value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .ok_or(RelayError::Unauthorized("Authorization must be `Bearer <API key>`"))?;
    if !well_formed(key) {
        return Err(RelayError::Unauthorized("API keys start with sk_svc_"));
    }
    Ok(key)
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
    fn bearer_rules() {
        assert_eq!(bearer(&headers("Bearer sk_svc_good")).unwrap(), "sk_svc_good");
        for bad in ["Bearer sk_live_good", "Basic sk_svc_good", "sk_svc_good", "Bearer sk_svc_"] {
            let e = bearer(&headers(bad)).unwrap_err();
            assert_eq!(e.status_and_code(), (401, "unauthorized"), "{bad}");
        }
        assert_eq!(bearer(&HeaderMap::new()).unwrap_err().status_and_code().0, 401);
        assert!(key_id("sk_svc_good").starts_with("key_") && key_id("sk_svc_good").len() == 20);
    }
}
