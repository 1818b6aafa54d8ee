//! `relay [--config FILE]`: open storage and the ledger key, then serve the public API.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use relay::accounts::ApiKeys;
use relay::config::RelayConfig;
use relay::enclaves::EnclavePool;
use relay::receipts::ledger_writer::LedgerWriter;
use relay::receipts::{CommitLog, load_or_create_key};
use relay::router::router;
use relay::state::{AppState, Prices};
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
    let program_id = config.program_id().map_err(|e| e.to_string())?;
    // One key for commits, anchors and tree heads (docs/log.md "Keys").
    let log = relay::receipts::log::TransparencyLog::new(key.clone(), store.clone(), config.log.clone());
    let ledger = LedgerWriter::from_config(&config.ledger, key.clone(), program_id, store.clone())?;
    let commits = match ledger {
        Some(_) => CommitLog::new(key, program_id, store.clone()).queue_for_chain(),
        None => CommitLog::new(key, program_id, store.clone()),
    };
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
    tracing::info!(
        backend = if store.is_sqlite { "sqlite" } else { "postgres" },
        ledger_key = %shared::address::Address(commits.public_key()),
        ledger = if ledger.is_some() { "solana" } else { "embedded" },
        program_id = %program_id,
        enclaves = ?config.enclave_urls(),
        api_keys = config.api_keys.len(),
        "relay starting"
    );
    let timeout = Duration::from_secs(config.enclave_timeout_secs);
    let enclaves = Arc::new(EnclavePool::new(
        &config.enclave_urls(),
        timeout,
        config.tee_endpoint_shown.as_deref(),
        config.enclave_max_in_flight,
    ));
    enclaves.refresh().await;
    enclaves.keep_fresh(Duration::from_secs(config.enclave_refresh_secs.max(1)));
    let state = Arc::new(AppState {
        enclaves: enclaves.clone(),
        keys: ApiKeys::new(&config.api_keys, store.clone()),
        usage: relay::billing::usage_writer::UsageWriter::new(store.clone()),
        store,
        commits,
        ledger,
        log,
        public_url: config.public_url(),
        prices: Prices {
            per_million_tokens: config.price_per_million_tokens.clone(),
            agent_call: config.agent_price_per_call,
            tee_process_call: config.tee_process_price_per_call,
            other: config.currency_prices.clone(),
        },
        plain: relay::plain_agent::PlainAgent::from_config(&config).map_err(|e| e.to_string())?,
        free_per_day: config.free_messages_per_day,
        sign_in: config.sign_in_origin(),
        peers: relay::http::peer::Peers {
            trusted_proxies: config.trusted_proxies.clone(),
            ipv6_prefix: config.guest_ipv6_prefix,
        },
        max_history_turns: config.max_history_turns,
        x402: relay::x402::X402::new(&config.x402).map_err(|e| e.to_string())?,
        rate_limiter: relay::billing::rate_limit::RateLimiter::new(config.rate_limits),
        agents: relay::swaps::Agents::from_config(&config.agents)?,
        discovery: config.discovery.clone(),
        deposits: relay::billing::deposits::Deposits::from_config(&config.deposits)?,
        openapi: relay::discovery::openapi::Documents::new(&config.public_url()),
        metrics: Default::default(),
        web: config.web.clone(),
        collateral: relay::enclaves::collateral::CollateralSource::from_config(&config.collateral),
    });
    relay::swaps::start(&state);
    relay::billing::deposits::start(&state);
    relay::x402::start_reconciler(&state);
    let abandon_after = config.abandoned_usage_secs.unwrap_or(config.enclave_timeout_secs + 60);
    relay::housekeeping::start(&state, abandon_after);
    relay::receipts::log::anchor::start(&state);
    relay::receipts::ledger_writer::start(&state);
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
