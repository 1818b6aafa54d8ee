//! The tests' HTTP calls. Each answers the status and the body, which must be JSON: every
//! answer of the relay and the enclave is (the contract), so a body that is not fails the test
//! here rather than passing a check of the status alone.

use serde_json::Value;

/// Sends `request`: its status and JSON body.
pub async fn send(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or_else(|_| panic!("HTTP {status} body is not JSON: {text:?}"));
    (status, body)
}

pub async fn get(url: &str) -> (u16, Value) {
    send(reqwest::Client::new().get(url)).await
}

/// POSTs `body` as JSON, with `key` as the bearer token when given.
pub async fn post(url: &str, body: &Value, key: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new().post(url).json(body);
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    send(request).await
}

/// GETs `url` with `key` as the bearer token.
pub async fn get_with_key(url: &str, key: &str) -> (u16, Value) {
    send(reqwest::Client::new().get(url).bearer_auth(key)).await
}
