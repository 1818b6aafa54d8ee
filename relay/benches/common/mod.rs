//! The two backends a storage benchmark runs on: a SQLite file, then, when `DATABASE_URL` is
//! set, a fresh PostgreSQL database dropped afterwards.

use std::future::Future;

use relay::store::Store;
use sqlx::Connection;

/// Runs `bench` on SQLite (labelled as such) and on PostgreSQL (labelled `pg_label`).
pub async fn on_each_backend<F, Fut>(tag: &str, pg_label: &'static str, bench: F)
where
    F: Fn(&'static str, Store) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("bench.sqlite3").display());
    bench("sqlite (WAL, file)", Store::open(&url).await.unwrap()).await;

    let Ok(admin_url) = std::env::var("DATABASE_URL") else {
        println!("postgres: skipped (set DATABASE_URL)");
        return;
    };
    sqlx::any::install_default_drivers();
    let name = format!("svc_bench_{tag}_{}", std::process::id());
    let mut admin = sqlx::AnyConnection::connect(&admin_url).await.unwrap();
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.unwrap();
    let (base, _) = admin_url.rsplit_once('/').unwrap();
    let store = Store::open(&format!("{base}/{name}")).await.unwrap();
    bench(pg_label, store.clone()).await;
    store.pool().close().await;
    let _ = sqlx::query(&format!("DROP DATABASE {name} WITH (FORCE)")).execute(&mut admin).await;
}
