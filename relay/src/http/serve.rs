//! The relay's accept loop: hyper's HTTP/1 server, configured where `axum::serve` cannot be
//! (issue 18 finding 7). A request's head must arrive within `headerReadSecs`, so a client
//! sending headers a byte at a time (slowloris) cannot hold a connection; open connections are
//! capped (at the cap the loop stops accepting and new ones wait in the kernel's backlog); and
//! at shutdown the open connections finish their requests for up to `shutdownGraceSecs`.
//! Bodies have their own deadline where they are read (`body::read`).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use serde::Deserialize;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// The `server` section of the relay configuration.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ServerConfig {
    /// Seconds for a request's line and headers to arrive, from the first byte or from the
    /// end of the previous request on a kept-alive connection.
    pub header_read_secs: u64,
    /// Seconds for a request's body to arrive, once its handler starts reading it.
    pub body_read_secs: u64,
    /// Open client connections at most.
    pub max_connections: usize,
    /// Seconds open connections get to finish at shutdown.
    pub shutdown_grace_secs: u64,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig { header_read_secs: 30, body_read_secs: 30, max_connections: 20_000, shutdown_grace_secs: 10 }
    }
}

impl ServerConfig {
    pub fn check(&self) -> Result<(), String> {
        if self.header_read_secs == 0 || self.body_read_secs == 0 || self.max_connections == 0 {
            return Err("server: headerReadSecs, bodyReadSecs and maxConnections must be at least 1".into());
        }
        Ok(())
    }
}

/// Serves `router` on `listener` until `shutdown` completes, then drains.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let permits = Arc::new(tokio::sync::Semaphore::new(config.max_connections));
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(Duration::from_secs(config.header_read_secs));
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of file descriptors and the like: back off instead of spinning.
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo::<SocketAddr>(peer));
            router.clone().oneshot(request)
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            // Errors here are the client's (a reset, a header timeout): nothing to report.
            let _ = connection.await;
            drop(permit);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(config.shutdown_grace_secs)) => {
            tracing::info!("connections still open after the shutdown grace period");
        }
    }
    Ok(())
}
