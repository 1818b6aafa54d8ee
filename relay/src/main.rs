//! `relay [--config FILE]`: open storage and the ledger key, then serve the public API.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use relay::config::RelayConfig;
use relay::enclaves::EnclavePool;
use relay::receipts::load_or_create_key;
use relay::router::router;
use relay::state::{App, AppState};
use relay::store::Store;

const USAGE: &str = "usage: relay [--config FILE] [admin …]\n       relay admin help";

/// `relay [--config FILE] [admin …]`.
fn parse_args() -> Result<(Option<PathBuf>, Vec<String>), String> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let config = match args.first().map(String::as_str) {
        Some("--config") if args.len() >= 2 => {
            let path = PathBuf::from(args.remove(1));
            args.remove(0);
            Some(path)
        }
        Some("--config") => return Err(USAGE.into()),
        _ => std::env::var_os("SVC_RELAY_CONFIG").map(PathBuf::from),
    };
    Ok((config, args))
}

#[tokio::main]
async fn main() {
    match relay::http::logging::LogFormat::from_env() {
        Ok(format) => relay::http::logging::init(format),
        Err(e) => {
            eprintln!("relay: {e}");
            std::process::exit(1);
        }
    }
    if let Err(e) = run().await {
        tracing::error!("fatal: {e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), String> {
    relay::failpoint::check_environment()?;
    let (config_path, args) = parse_args()?;
    let config = RelayConfig::load(config_path.as_deref()).map_err(|e| e.to_string())?;
    match args.first().map(String::as_str) {
        None => {}
        Some("admin") => return relay::admin::run(&config, &args[1..]).await,
        Some(_) => return Err(USAGE.into()),
    }
    std::fs::create_dir_all(&config.data_dir).map_err(|e| format!("data dir {}: {e}", config.data_dir.display()))?;
    let store = Store::open(&config.database_url()).await.map_err(|e| e.to_string())?;
    let key = load_or_create_key(&config.ledger_key_file()).map_err(|e| e.to_string())?;
    let backfilled =
        relay::receipts::log::backfill::backfill(&store, relay::unix_now()).await.map_err(|e| e.to_string())?;
    let bundle =
        shared::tlog::hash::parse_hex(web_bundle::bundle_sha256()).ok_or("the embedded web bundle has no hash")?;
    if relay::receipts::log::web_bundle::log_bundle(&store, &bundle, relay::unix_now())
        .await
        .map_err(|e| e.to_string())?
    {
        tracing::info!(bundle = web_bundle::bundle_sha256(), "appended the web app bundle to the log");
    }
    if backfilled > 0 {
        tracing::info!(receipts = backfilled, "appended receipts committed before the log existed");
    }
    let timeout = Duration::from_secs(config.enclave_timeout_secs);
    let enclaves = Arc::new(EnclavePool::new(
        &config.enclave_urls(),
        timeout,
        config.tee_endpoint_shown.as_deref(),
        config.enclave_max_in_flight,
    ));
    let state = App::new(AppState::new(&config, store, key, enclaves.clone())?);
    tracing::info!(
        backend = if state.store.is_sqlite { "sqlite" } else { "postgres" },
        ledger_key = %shared::address::Address(state.receipts.commits.public_key()),
        ledger = if state.receipts.ledger.is_some() { "solana" } else { "embedded" },
        program_id = %config.program_id().map_err(|e| e.to_string())?,
        enclaves = ?config.enclave_urls(),
        api_keys = config.api_keys.len(),
        "relay starting"
    );
    enclaves.refresh().await;
    enclaves.keep_fresh(Duration::from_secs(config.enclave_refresh_secs.max(1)));
    relay::worker::start(&state);
    relay::billing::deposits::start(&state.deposits);
    relay::x402::start_reconciler(state.x402.clone(), state.store.clone());
    let abandon_after = config.abandoned_usage_secs.unwrap_or(config.enclave_timeout_secs + 60);
    relay::housekeeping::start(state.store.clone(), state.metrics.clone(), abandon_after);
    relay::receipts::start(&state.receipts);
    let listener = tokio::net::TcpListener::bind(&config.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    tracing::info!(listen = %listener.local_addr().map_err(|e| e.to_string())?, "serving");
    relay::http::body::set_read_deadline(Duration::from_secs(config.server.body_read_secs));
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    relay::http::serve::serve(listener, router(state), config.server, shutdown).await.map_err(|e| e.to_string())
}
