//! `svc-gpu-node --config <config.json>`: the GPU node's agent (README.md).

use std::sync::Arc;

use gpu_node::config::Config;
use gpu_node::serve::{self, Node, TlsListener};

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    if let Err(e) = run().await {
        eprintln!("svc-gpu-node: {e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), String> {
    let mut args = std::env::args_os().skip(1);
    let path = match (args.next(), args.next()) {
        (Some(flag), Some(path)) if flag == "--config" => path,
        _ => return Err("usage: svc-gpu-node --config <config.json>".into()),
    };
    let config = Config::read(std::path::Path::new(&path))?;
    let key = serve::load_or_make_key(&config.tls_key)?;
    let acceptor = serve::tls(&key)?;
    let pin = serve::pin(&key);
    let node = Arc::new(Node {
        attester: config.attester()?,
        pin,
        upstream: config.model_server.trim_end_matches('/').to_string(),
        http: reqwest::Client::new(),
    });
    let tcp = tokio::net::TcpListener::bind(config.listen).await.map_err(|e| format!("{}: {e}", config.listen))?;
    let addr = tcp.local_addr().map_err(|e| e.to_string())?;
    // Read by whoever configures the enclave (`gpuNodes[].tlsPinSha256`) and by the tests.
    eprintln!("svc-gpu-node: listening on https://{addr} tlsPinSha256={}", hex::encode(pin));
    axum::serve(TlsListener { tcp, acceptor }, serve::router(node))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| e.to_string())
}
