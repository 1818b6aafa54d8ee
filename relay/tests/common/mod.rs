//! Fresh databases for storage tests: a temp SQLite file, and, when `DATABASE_URL` is set, a
//! new PostgreSQL database created for the test and dropped afterwards.

use ed25519_dalek::SigningKey;
use relay::store::Store;
use shared::address::default_program_id;
use shared::keys::{ClientKey, PromptHash, TeeKey};
use shared::receipt::{Receipt, ReceiptBody, ReceiptContext};
use sqlx::Connection;

pub struct Db {
    pub store: Store,
    /// Where it is, to open a second pool on it (a second relay).
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    drop_pg: Option<(String, String)>,
}

pub async fn sqlite() -> Db {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("t.sqlite3").display());
    Db { store: Store::open(&url).await.unwrap(), url, _dir: Some(dir), drop_pg: None }
}

/// `None` (and a note) when `DATABASE_URL` is not set; CI sets it.
pub async fn postgres(label: &str) -> Option<Db> {
    let Ok(admin_url) = std::env::var("DATABASE_URL") else {
        eprintln!("DATABASE_URL not set: PostgreSQL {label} test skipped (CI sets it)");
        return None;
    };
    sqlx::any::install_default_drivers();
    let stamp = hex::encode(shared::sha256(format!("{label}{:?}", std::time::SystemTime::now()).as_bytes()));
    let name = format!("svc_test_{}", &stamp[..12]);
    let mut admin = sqlx::AnyConnection::connect(&admin_url).await.unwrap();
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.unwrap();
    let (base, _) = admin_url.rsplit_once('/').expect("DATABASE_URL has a database part");
    let url = format!("{base}/{name}");
    let store = Store::open(&url).await.unwrap();
    assert!(!store.is_sqlite);
    Some(Db { store, url, _dir: None, drop_pg: Some((admin_url, name)) })
}

impl Db {
    /// Drops the PostgreSQL database (call at the end of the test).
    pub async fn finish(self) {
        let Db { store, drop_pg, .. } = self;
        store.pool().close().await;
        if let Some((admin_url, name)) = drop_pg {
            let mut admin = sqlx::AnyConnection::connect(&admin_url).await.unwrap();
            let _ = sqlx::query(&format!("DROP DATABASE {name} WITH (FORCE)")).execute(&mut admin).await;
        }
    }
}

/// Receipt `n` of a test's own enclave key, and its prompt hash (distinct for each `n`).
pub fn receipt(n: u32) -> (Receipt, PromptHash) {
    let hash = PromptHash(shared::sha256(&n.to_be_bytes()));
    let body = ReceiptBody {
        prompt_hash: hash,
        tee_pubkey: TeeKey([1; 32]),
        nonce: [(n % 251) as u8; 16],
        client_pubkey: ClientKey([2; 32]),
        model: "gpt-oss:20b".into(),
        provider: "svc-gpu".into(),
    };
    let ctx = ReceiptContext { program_id: default_program_id(), timestamp: 1, tdx_quote_hash: None };
    (Receipt::issue(&body, &SigningKey::from_bytes(&[3; 32]), &ctx).unwrap(), hash)
}

/// Two tests of one body: `sqlite_name` on a fresh SQLite file, `postgres_name` on a fresh
/// PostgreSQL database (skipped without `DATABASE_URL`); the body sees the database as `db`.
macro_rules! on_both_stores {
    (#[$attr:meta] $on_sqlite:ident, $on_postgres:ident, |$db:ident| $body:expr) => {
        #[$attr]
        async fn $on_sqlite() {
            let $db = $crate::common::sqlite().await;
            $body;
            $db.finish().await;
        }

        #[$attr]
        async fn $on_postgres() {
            let Some($db) = $crate::common::postgres(stringify!($on_postgres)).await else { return };
            $body;
            $db.finish().await;
        }
    };
}
pub(crate) use on_both_stores;
