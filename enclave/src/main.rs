//! `enclave [--config FILE]`: boot, then serve the internal API.

use std::path::PathBuf;
use std::sync::Arc;

use enclave::config::EnclaveConfig;
use enclave::keys::EnclaveKeys;
use enclave::platform::attestation::{Attestation, ConfigfsTsm, QuoteProvider};
use enclave::platform::tsm::{Retry, StdFs};
use enclave::service::Enclave;
use shared::time::unix_now;

fn config_path() -> Result<Option<PathBuf>, String> {
    if is_pid1() {
        return Ok(Some(PathBuf::from(enclave::platform::init::CONFIG_PATH)));
    }
    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next()) {
        (None, _) => Ok(std::env::var_os("SVC_ENCLAVE_CONFIG").map(PathBuf::from)),
        (Some("--config"), Some(path)) => Ok(Some(PathBuf::from(path))),
        _ => Err("usage: enclave [--config FILE]".into()),
    }
}

/// configfs-tsm, unless the configuration asks for dev quotes (only a binary built with the
/// `dev-quotes` feature can).
fn quote_provider(config: &EnclaveConfig) -> Result<Box<dyn QuoteProvider>, String> {
    #[cfg(feature = "dev-quotes")]
    if let Some(dev) = &config.dev_quotes {
        tracing::warn!(
            "DEVELOPMENT QUOTES: signed by a test PKI, not by TDX hardware; verifiable only with --dev-root"
        );
        return Ok(Box::new(enclave::platform::dev_quotes::DevQuotes::new(dev).map_err(|e| e.to_string())?));
    }
    Ok(Box::new(ConfigfsTsm { fs: StdFs { root: config.tsm_root.clone() }, retry: Retry::default() }))
}

/// Inside the image the enclave is `/init`.
fn is_pid1() -> bool {
    std::process::id() == 1
}

/// As PID 1 a fatal error must end the TD, with the reason on the console.
fn fatal(message: &str) -> ! {
    eprintln!("enclave: fatal: {message}");
    if is_pid1() {
        enclave::platform::boot::power_off();
    }
    std::process::exit(1)
}

fn main() {
    if is_pid1()
        && let Err(e) = enclave::platform::init::setup()
    {
        fatal(&e);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build();
    match runtime {
        Ok(rt) => rt.block_on(serve_main()),
        Err(e) => fatal(&format!("tokio runtime: {e}")),
    }
}

async fn serve_main() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    if let Err(e) = run().await {
        tracing::error!("fatal: {e}");
        fatal(&e);
    }
    if is_pid1() {
        // PID 1 must not exit: the kernel would panic instead of powering off cleanly.
        enclave::platform::boot::power_off();
    }
}

async fn run() -> Result<(), String> {
    let config = EnclaveConfig::load(config_path()?.as_deref()).map_err(|e| e.to_string())?;
    if is_pid1() && !config.dns_servers.is_empty() {
        enclave::platform::init::write_resolv_conf(&config.dns_servers)?;
    }
    let keys = EnclaveKeys::generate();
    let provider = quote_provider(&config)?;
    let attestation = tokio::task::block_in_place(|| Attestation::at_boot(&keys, provider.as_ref(), unix_now()));
    tracing::info!(
        tee_public_key = %attestation.public.tee_public_key,
        enclave_public_key = %attestation.public.enclave_public_key,
        quote = attestation.public.tdx_quote.is_some(),
        quote_error = attestation.public.tdx_quote_error.as_deref().unwrap_or(""),
        models = ?config.models.keys().collect::<Vec<_>>(),
        "booted"
    );
    let enclave = Arc::new(Enclave::new(&config, keys, attestation).map_err(|e| e.to_string())?);
    let limits = enclave::api::Limits {
        max_concurrent: config.max_concurrent_requests,
        request_timeout: config.request_timeout(),
    };
    let listener = tokio::net::TcpListener::bind(config.listen_address().map_err(|e| e.to_string())?)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    tracing::info!(listen = %listener.local_addr().map_err(|e| e.to_string())?, "serving");
    axum::serve(listener, enclave::api::router(enclave, limits))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| e.to_string())
}
