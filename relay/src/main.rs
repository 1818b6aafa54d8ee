//! `relay [--config FILE]`: open storage and the ledger key, then serve the public API.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use relay::app::{AppState, router};
use relay::auth::ApiKeys;
use relay::config::RelayConfig;
use relay::ledger::{Ledger, load_or_create_key};
use relay::store::Store;
use relay::tee::TeeClient;

fn config_path() -> Result<Option<PathBuf>, String> {
    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next()) {
        (None, _) => Ok(std::env::var_os("SVC_RELAY_CONFIG").map(PathBuf::from)),
        (Some("--config"), Some(path)) => Ok(Some(PathBuf::from(path))),
        _ => Err("usage: relay [--config FILE]".into()),
    }
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    if let Err(e) = run().await {
        tracing::error!("fatal: {e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), String> {
    let config = RelayConfig::load(config_path()?.as_deref()).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&config.data_dir).map_err(|e| format!("data dir {}: {e}", config.data_dir.display()))?;
    let store = Store::open(&config.database_url()).await.map_err(|e| e.to_string())?;
    let key = load_or_create_key(&config.ledger_key_file()).map_err(|e| e.to_string())?;
    let program_id = config.program_id().map_err(|e| e.to_string())?;
    let ledger = Ledger::new(key, program_id, store.clone());
    tracing::info!(
        backend = if store.is_sqlite { "sqlite" } else { "postgres" },
        ledger_key = %shared::address::Address(ledger.public_key()),
        program_id = %program_id,
        enclave = %config.enclave_url,
        api_keys = config.api_keys.len(),
        "relay starting"
    );
    let state = Arc::new(AppState {
        tee: TeeClient::new(&config.enclave_url, Duration::from_secs(config.enclave_timeout_secs)),
        keys: ApiKeys::new(&config.api_keys),
        store,
        ledger,
        public_url: config.public_url(),
    });
    let listener = tokio::net::TcpListener::bind(&config.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    tracing::info!(listen = %listener.local_addr().map_err(|e| e.to_string())?, "serving");
    axum::serve(listener, router(state))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| e.to_string())
}
