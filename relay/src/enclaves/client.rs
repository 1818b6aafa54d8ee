//! The relay's client for the enclave's internal API. It moves bytes; it never parses a
//! prompt or a reply (it cannot: they are ciphertext).

use std::time::Duration;

use axum::body::Bytes;

/// What the enclave answered.
pub struct EnclaveAnswer {
    pub status: u16,
    pub body: Bytes,
}

#[derive(Clone)]
pub struct EnclaveClient {
    http: reqwest::Client,
    /// Requests in flight to this enclave at most: beyond, callers wait their turn, so the
    /// relay opens no more connections than this however many clients it holds.
    in_flight: std::sync::Arc<tokio::sync::Semaphore>,
    pub endpoint: String,
    /// What `teeEndpoint` says when this enclave does not answer (contract §2.1 keeps the
    /// field; its value need not be the internal address).
    shown: String,
}

/// The enclave did not answer (connection refused, reset, timed out).
#[derive(Debug)]
pub struct Unreachable;

impl EnclaveClient {
    /// A client of `endpoint`; `shown` replaces it in `tee_unreachable` answers when given.
    pub fn new(endpoint: &str, timeout: Duration, shown: Option<&str>, max_in_flight: usize) -> Self {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(Duration::from_secs(5))
            .pool_max_idle_per_host(max_in_flight)
            .build()
            .expect("static reqwest configuration is valid");
        let endpoint = endpoint.trim_end_matches('/').to_string();
        let shown = shown.map_or_else(|| endpoint.clone(), str::to_string);
        let in_flight = std::sync::Arc::new(tokio::sync::Semaphore::new(max_in_flight.max(1)));
        EnclaveClient { http, in_flight, endpoint, shown }
    }

    /// The error a caller answers when this enclave did not.
    pub fn unreachable(&self) -> crate::error::RelayError {
        crate::error::RelayError::TeeUnreachable { endpoint: self.shown.clone() }
    }

    pub async fn get(&self, path: &str) -> Result<EnclaveAnswer, Unreachable> {
        let _turn = self.in_flight.acquire().await.map_err(|_| Unreachable)?;
        self.get_now(path).await
    }

    /// A GET outside the bound: the key refresh, one at a time, which must not wait behind
    /// slow requests (a stale key would make every new envelope fail).
    pub(super) async fn get_now(&self, path: &str) -> Result<EnclaveAnswer, Unreachable> {
        let response = self.http.get(format!("{}{path}", self.endpoint)).send().await.map_err(|_| Unreachable)?;
        Self::answer(response).await
    }

    pub async fn post_json(&self, path: &str, body: Bytes) -> Result<EnclaveAnswer, Unreachable> {
        let _turn = self.in_flight.acquire().await.map_err(|_| Unreachable)?;
        let response = self
            .http
            .post(format!("{}{path}", self.endpoint))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .map_err(|_| Unreachable)?;
        Self::answer(response).await
    }

    async fn answer(response: reqwest::Response) -> Result<EnclaveAnswer, Unreachable> {
        let status = response.status().as_u16();
        let body = response.bytes().await.map_err(|_| Unreachable)?;
        Ok(EnclaveAnswer { status, body })
    }
}
