//! The relay's client for the enclave's internal API. It moves bytes; it never parses a
//! prompt or a reply (it cannot: they are ciphertext).

use std::time::Duration;

use axum::body::Bytes;

/// What the enclave answered.
pub struct TeeAnswer {
    pub status: u16,
    pub body: Bytes,
}

#[derive(Clone)]
pub struct TeeClient {
    http: reqwest::Client,
    pub endpoint: String,
}

/// The enclave did not answer (connection refused, reset, timed out).
#[derive(Debug)]
pub struct Unreachable;

impl TeeClient {
    pub fn new(endpoint: &str, timeout: Duration) -> Self {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(Duration::from_secs(5))
            .build()
            .expect("static reqwest configuration is valid");
        TeeClient { http, endpoint: endpoint.trim_end_matches('/').to_string() }
    }

    pub async fn get(&self, path: &str) -> Result<TeeAnswer, Unreachable> {
        let response = self.http.get(format!("{}{path}", self.endpoint)).send().await.map_err(|_| Unreachable)?;
        Self::answer(response).await
    }

    pub async fn post_json(&self, path: &str, body: Bytes) -> Result<TeeAnswer, Unreachable> {
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

    async fn answer(response: reqwest::Response) -> Result<TeeAnswer, Unreachable> {
        let status = response.status().as_u16();
        let body = response.bytes().await.map_err(|_| Unreachable)?;
        Ok(TeeAnswer { status, body })
    }
}
