//! Local stand-ins for third-party APIs. One module per provider; each exposes a function
//! that starts the server on an ephemeral loopback port and returns its base URL.

#![forbid(unsafe_code)]

pub mod brave;
pub mod coingecko;
pub mod colosseum;
pub mod deepwiki;
pub mod facilitator;
pub mod github;
pub mod jupiter;
pub mod notion;
pub mod openai;
pub mod paysh;
pub mod solana_rpc;
pub mod web;

use std::net::SocketAddr;

/// A running stand-in: its base URL (no trailing slash) and the server task.
pub struct Running {
    pub base_url: String,
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves `router` on 127.0.0.1 with an ephemeral port.
pub async fn serve(router: axum::Router) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
    let addr = listener.local_addr().expect("bound address");
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>()).await;
    });
    Running { base_url: format!("http://{addr}"), addr, task }
}
