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

const USAGE: &str = "usage: relay [--config FILE]\n       relay [--config FILE] admin credit --key-id ID --currency usdc|svc --amount BASE_UNITS [--reference TEXT]";

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

/// `admin credit`: the operator's way to add prepaid balance (docs/billing.md).
async fn admin(config: &RelayConfig, args: &[String]) -> Result<(), String> {
    let [cmd, rest @ ..] = args else { return Err(USAGE.into()) };
    if cmd != "credit" {
        return Err(USAGE.into());
    }
    let mut key_id = None;
    let mut currency = None;
    let mut amount = None;
    let mut reference = "operator credit".to_string();
    let mut it = rest.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(USAGE)?;
        match flag.as_str() {
            "--key-id" => key_id = Some(value.clone()),
            "--currency" => currency = Some(value.clone()),
            "--amount" => {
                amount = Some(value.parse::<i64>().map_err(|_| "--amount must be an integer number of base units")?)
            }
            "--reference" => reference = value.clone(),
            _ => return Err(USAGE.into()),
        }
    }
    let (Some(key_id), Some(currency), Some(amount)) = (key_id, currency, amount) else { return Err(USAGE.into()) };
    std::fs::create_dir_all(&config.data_dir).map_err(|e| format!("data dir: {e}"))?;
    let store = Store::open(&config.database_url()).await.map_err(|e| e.to_string())?;
    // A mistyped id would credit an account nobody holds: only known keys can be credited.
    let configured = config.api_keys.iter().any(|k| relay::auth::key_id(k) == key_id);
    if !configured && !relay::accounts::exists(&store, &key_id).await.map_err(|e| e.to_string())? {
        return Err(format!("unknown key id `{key_id}`: not a configured key and not issued by sign-in"));
    }
    let after = relay::billing::credit(&store, &key_id, &currency, amount, "admin", &reference, relay::unix_now())
        .await
        .map_err(|e| e.to_string())?;
    println!("{key_id}: {currency} balance is now {after} base units");
    Ok(())
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
    let (config_path, args) = parse_args()?;
    let config = RelayConfig::load(config_path.as_deref()).map_err(|e| e.to_string())?;
    match args.first().map(String::as_str) {
        None => {}
        Some("admin") => return admin(&config, &args[1..]).await,
        Some(_) => return Err(USAGE.into()),
    }
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
        keys: ApiKeys::new(&config.api_keys, store.clone()),
        store,
        ledger,
        public_url: config.public_url(),
        prices: config.price_per_million_tokens.clone(),
        plain: relay::plain_agent::PlainAgent::from_config(&config).map_err(|e| e.to_string())?,
        agent_price: config.agent_price_per_call,
        tee_process_price: config.tee_process_price_per_call,
        free_per_day: config.free_messages_per_day,
        trusted_proxies: config.trusted_proxies.clone(),
        max_history_turns: config.max_history_turns,
        x402: relay::x402::X402::new(&config.x402).map_err(|e| e.to_string())?,
        rate_limits: config.rate_limits,
    });
    let listener = tokio::net::TcpListener::bind(&config.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    tracing::info!(listen = %listener.local_addr().map_err(|e| e.to_string())?, "serving");
    axum::serve(listener, router(state).into_make_service_with_connect_info::<std::net::SocketAddr>())
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| e.to_string())
}
