//! The hostile host of DESIGN §13, played by a test: it holds the relay's database and calls
//! the enclave's internal API itself, and it carries the enclave's messages to the freshness
//! witness (the key holder) and back, as the relay does, choosing what to send and when.

use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use shared::privacy::{OwnerAuth, PrivacyRequest, WalletRequest};
use shared::witness::{AppendRequest, WitnessAnswer};
use sqlx::Row;

use crate::swaps::SwapWorld;

pub struct Host {
    pub db: sqlx::AnyPool,
    http: reqwest::Client,
}

/// An enclave's answer: its status and body.
pub type Answer = (u16, Value);

impl Host {
    /// The relay's database (its SQLite file, or `database_url`).
    pub async fn of(w: &SwapWorld, database_url: Option<&str>) -> Host {
        sqlx::any::install_default_drivers();
        let url = match database_url {
            Some(url) => url.to_string(),
            None => format!("sqlite://{}?mode=rw", w.stack.relay_data_dir().join("relay.sqlite3").display()),
        };
        Host { db: sqlx::AnyPool::connect(&url).await.unwrap(), http: reqwest::Client::new() }
    }

    /// `POST /privacy/step` of the enclave on `port`.
    pub async fn step(&self, port: u16, request: &PrivacyRequest) -> Answer {
        self.post(&format!("http://127.0.0.1:{port}/privacy/step"), &serde_json::to_value(request).unwrap()).await
    }

    /// A JSON POST to `url` (the enclave's internal API, or the relay's routes the host
    /// carries messages to).
    pub async fn post(&self, url: &str, body: &Value) -> Answer {
        let r = self.http.post(url).json(body).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    async fn text(&self, sql: &str, arg: &str) -> Option<String> {
        let row = sqlx::query(sql).bind(arg).fetch_optional(&self.db).await.unwrap();
        row.map(|r| r.try_get::<String, _>(0).unwrap())
    }

    /// The sealed key of a wallet.
    pub async fn wallet_blob(&self, wallet_id: &str) -> String {
        let object = self.text("SELECT object_id FROM wallets WHERE id = $1", wallet_id).await.unwrap();
        self.text("SELECT blob FROM sealed_objects WHERE id = $1", &object).await.unwrap()
    }

    /// The pool key's sealed object.
    pub async fn pool_blob(&self) -> String {
        let row = sqlx::query("SELECT object_id FROM privacy_pool WHERE id = 1").fetch_one(&self.db).await.unwrap();
        let object: String = row.try_get(0).unwrap();
        self.text("SELECT blob FROM sealed_objects WHERE id = $1", &object).await.unwrap()
    }

    /// The mint's stored book: its blob and version.
    pub async fn book(&self, mint: &str) -> Option<(String, u64)> {
        let row =
            sqlx::query("SELECT blob, version FROM privacy_books WHERE mint = $1").bind(mint).fetch_optional(&self.db);
        row.await.unwrap().map(|r| (r.try_get(0).unwrap(), r.try_get::<i64, _>(1).unwrap() as u64))
    }

    /// Stores `blob` as the mint's book, as a relay that finished the step would.
    pub async fn store_book(&self, mint: &str, blob: &str, version: u64) {
        sqlx::query("UPDATE privacy_books SET blob = $1, version = $2 WHERE mint = $3")
            .bind(blob)
            .bind(version as i64)
            .bind(mint)
            .execute(&self.db)
            .await
            .unwrap();
    }
}

/// An owner-signed request as the enclave takes it: the wallet's blob, the exact body, and the
/// owner's signature over it at `timestamp` with `nonce`.
pub fn owner_request(
    wallet_blob: &str,
    path: &str,
    body: &Value,
    owner: &SigningKey,
    (timestamp, nonce): (u64, &str),
) -> WalletRequest {
    let body = body.to_string();
    let (t, n, s) = crate::wallets::signed(owner, path, &body, timestamp, nonce);
    WalletRequest {
        wallet: wallet_blob.to_string(),
        body: shared::b64::encode(body.as_bytes()),
        auth: Some(OwnerAuth { timestamp: t.parse().unwrap(), nonce: n, signature: s }),
    }
}

/// A book step's successor and its append request, from an enclave's answer.
pub fn proposal(answer: &Answer) -> (String, AppendRequest) {
    assert_eq!(answer.0, 200, "{}", answer.1);
    let blob = answer.1["book"]["blob"].as_str().unwrap().to_string();
    (blob, serde_json::from_value(answer.1["append"].clone()).unwrap())
}

/// The witness-answer step the host sends the enclave.
pub fn witnessed(book: Option<&str>, answer: &WitnessAnswer) -> PrivacyRequest {
    PrivacyRequest::Witnessed { book: book.map(str::to_string), answer: answer.clone() }
}

/// `(status, code)` of an enclave's refusal.
pub fn refusal(answer: &Answer) -> (u16, String) {
    (answer.0, answer.1["error"].as_str().unwrap_or("?").to_string())
}

/// A withdrawal body.
pub fn withdrawal(mint: &str, amount: u64, destination: &str) -> Value {
    json!({"mint": mint, "amount": amount.to_string(), "destinationPubkey": destination})
}

/// An owned wallet as the host addresses the enclave for it: its sealed key, its owner's key,
/// the pool's sealed key and the mint.
pub struct OwnedWallet {
    pub id: String,
    pub blob: String,
    pub owner: SigningKey,
    pub pool: String,
    pub mint: String,
}

impl OwnedWallet {
    pub async fn of(host: &Host, id: &str, owner: &SigningKey, mint: &str) -> OwnedWallet {
        OwnedWallet {
            id: id.to_string(),
            blob: host.wallet_blob(id).await,
            owner: owner.clone(),
            pool: host.pool_blob().await,
            mint: mint.to_string(),
        }
    }

    /// A withdrawal of `amount` to `to` over `book`, signed by the owner at `timestamp` with
    /// `nonce`.
    pub fn withdraw(
        &self,
        (amount, to): (u64, &shared::address::Address),
        (timestamp, nonce): (u64, &str),
        book: Option<&str>,
    ) -> PrivacyRequest {
        let path = format!("/agents/v1/wallets/{}/withdraw", self.id);
        let body = withdrawal(&self.mint, amount, &to.to_string());
        let request = owner_request(&self.blob, &path, &body, &self.owner, (timestamp, nonce));
        PrivacyRequest::Withdraw { request, pool: self.pool.clone(), book: book.map(str::to_string) }
    }
}
