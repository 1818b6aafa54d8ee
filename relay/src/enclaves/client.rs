//! The relay's client for the enclave's internal API. It moves bytes; it never parses a
//! prompt or a reply (it cannot: they are ciphertext).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::body::Bytes;
use tokio::sync::OnceCell;

/// What the enclave answered.
#[derive(Clone)]
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
    /// The `GET /attestation` in flight, which every caller asking meanwhile shares.
    attestation: Arc<Mutex<Option<Flight>>>,
}

/// One request's answer, for all who wait on it (`None`: the enclave did not answer).
type Flight = Arc<OnceCell<Option<EnclaveAnswer>>>;

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
        EnclaveClient { http, in_flight, endpoint, shown, attestation: Arc::default() }
    }

    /// The error a caller answers when this enclave did not.
    pub fn unreachable(&self) -> crate::http::error::RelayError {
        crate::http::error::RelayError::TeeUnreachable { endpoint: self.shown.clone() }
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

    /// `GET /attestation` without a nonce, once for every caller who asks while it is in
    /// flight. The enclave's answer is the same for all of them (the quotes it made at boot),
    /// so ten thousand waiting callers cost it one request and hold one copy of the body. A
    /// caller who arrives after the answer came starts a new request: nothing is kept.
    /// Requests with a nonce are each the enclave's own (`get`).
    pub async fn attestation(&self) -> Result<EnclaveAnswer, Unreachable> {
        let flight = {
            let mut slot = self.attestation.lock().unwrap_or_else(PoisonError::into_inner);
            match slot.as_ref() {
                Some(flight) if !flight.initialized() => flight.clone(),
                _ => slot.insert(Flight::default()).clone(),
            }
        };
        // Should the caller running the request leave, the next one waiting runs it.
        flight.get_or_init(|| async { self.get("/attestation").await.ok() }).await.clone().ok_or(Unreachable)
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// An enclave stand-in whose `/attestation` answers after `delay`, numbering its answers.
    async fn enclave(delay: Duration) -> (String, Arc<AtomicUsize>) {
        let asked = Arc::new(AtomicUsize::new(0));
        let counter = asked.clone();
        let app = axum::Router::new().route(
            "/attestation",
            axum::routing::get(move || {
                let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
                async move {
                    tokio::time::sleep(delay).await;
                    format!("{{\"answer\":{n}}}")
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (url, asked)
    }

    #[tokio::test]
    async fn callers_asking_at_once_share_one_request_and_later_callers_get_a_new_one() {
        let (url, asked) = enclave(Duration::from_millis(300)).await;
        let client = EnclaveClient::new(&url, Duration::from_secs(5), None, 4);
        let wave = |client: EnclaveClient| async move {
            let calls: Vec<_> = (0..50)
                .map(|_| {
                    let client = client.clone();
                    tokio::spawn(async move { client.attestation().await.ok().map(|a| (a.status, a.body)) })
                })
                .collect();
            let mut answers = Vec::new();
            for call in calls {
                answers.push(call.await.unwrap());
            }
            answers
        };
        let first = wave(client.clone()).await;
        assert_eq!(asked.load(Ordering::SeqCst), 1, "fifty callers, one request");
        assert!(first.iter().all(|a| a.as_ref() == Some(&(200, Bytes::from_static(b"{\"answer\":1}")))));
        // After the answer came, nothing is kept: the next callers get the enclave's next answer.
        let second = wave(client.clone()).await;
        assert_eq!(asked.load(Ordering::SeqCst), 2);
        assert!(second.iter().all(|a| a.as_ref().is_some_and(|(_, body)| body.as_ref() == b"{\"answer\":2}")));
    }

    #[tokio::test]
    async fn a_caller_who_leaves_hands_the_request_to_the_next() {
        let (url, asked) = enclave(Duration::from_millis(200)).await;
        let client = EnclaveClient::new(&url, Duration::from_secs(5), None, 4);
        let leaving = tokio::spawn({
            let client = client.clone();
            async move { client.attestation().await.map(|a| a.body) }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        let staying = tokio::spawn({
            let client = client.clone();
            async move { client.attestation().await.map(|a| a.body) }
        });
        leaving.abort();
        let body = staying.await.unwrap().ok().unwrap();
        assert!(body.starts_with(b"{\"answer\":"), "{body:?}");
        assert!(asked.load(Ordering::SeqCst) <= 2);
    }

    #[tokio::test]
    async fn an_enclave_that_does_not_answer_is_unreachable_for_everyone_waiting() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let client = EnclaveClient::new(&url, Duration::from_secs(2), None, 4);
        let (a, b) = tokio::join!(client.attestation(), client.attestation());
        assert!(a.is_err() && b.is_err());
    }
}
