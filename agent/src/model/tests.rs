//! The client against a local stand-in that speaks the OpenAI wire shapes.

use super::*;
use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}/v1")
}

fn ok_body() -> String {
    serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Paris."}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    })
    .to_string()
}

fn request() -> ChatRequest {
    ChatRequest {
        messages: vec![Message { role: shared::envelope::Role::User, content: "capital of France?".into() }],
        max_tokens: Some(16),
        temperature: Some(0.0),
    }
}

fn retry() -> RetryPolicy {
    RetryPolicy { attempts: 4, first_delay: Duration::from_millis(5), max_delay: Duration::from_millis(20) }
}

fn client() -> ModelClient {
    ModelClient::for_endpoint(&endpoint("http://127.0.0.1:1/v1".into()), Duration::from_secs(5), retry()).unwrap()
}

fn endpoint(base_url: String) -> Endpoint {
    Endpoint { base_url, upstream_model: "m".into(), api_key: Some(Zeroizing::new("node-key".into())), tls_pin: None }
}

#[tokio::test]
async fn sends_openai_request_and_reads_reply() {
    let seen = Arc::new(std::sync::Mutex::new(None::<(Option<String>, serde_json::Value)>));
    let s = seen.clone();
    let router = Router::new().route(
        "/v1/chat/completions",
        post(move |headers: axum::http::HeaderMap, body: String| {
            let s = s.clone();
            async move {
                let auth = headers.get("authorization").map(|v| v.to_str().unwrap().to_string());
                *s.lock().unwrap() = Some((auth, serde_json::from_str(&body).unwrap()));
                ok_body()
            }
        }),
    );
    let base = serve(router).await;
    let reply = client().chat(&endpoint(base), &request()).await.unwrap();
    assert_eq!(reply.content, "Paris.");
    assert_eq!(reply.usage, Usage { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
    let (auth, body) = seen.lock().unwrap().take().unwrap();
    assert_eq!(auth.as_deref(), Some("Bearer node-key"));
    assert_eq!(body["model"], "m");
    assert_eq!(body["stream"], false);
    assert_eq!(body["max_tokens"], 16);
    assert_eq!(body["messages"][0]["role"], "user");
    assert_eq!(body["messages"][0]["content"], "capital of France?");
}

/// Token counts are the GPU node's: a total that would overflow saturates instead of
/// panicking (debug builds) or wrapping (release). Found by fuzz/fuzz_targets/model.rs.
#[tokio::test]
async fn huge_token_counts_saturate() {
    let body = serde_json::json!({
        "choices": [{"message": {"role": "assistant", "content": "x"}}],
        "usage": {"prompt_tokens": u64::MAX, "completion_tokens": 1}
    })
    .to_string();
    let router = Router::new().route("/v1/chat/completions", post(move || async move { body }));
    let base = serve(router).await;
    let reply = client().chat(&endpoint(base), &request()).await.unwrap();
    assert_eq!(reply.usage, Usage { prompt_tokens: u64::MAX, completion_tokens: 1, total_tokens: u64::MAX });
}

async fn flaky(warm_answers: u32, status: StatusCode, message: &'static str) -> (String, Arc<AtomicU32>) {
    let calls = Arc::new(AtomicU32::new(0));
    let c = calls.clone();
    let router = Router::new().route(
        "/v1/chat/completions",
        post(move || {
            let c = c.clone();
            async move {
                if c.fetch_add(1, Ordering::SeqCst) < warm_answers {
                    let body =
                        serde_json::json!({"error": {"message": message, "type": "unavailable_error", "code": 503}});
                    (status, body.to_string())
                } else {
                    (StatusCode::OK, ok_body())
                }
            }
        }),
    );
    (serve(router).await, calls)
}

#[tokio::test]
async fn retries_warming_up_then_succeeds() {
    let (base, calls) = flaky(2, StatusCode::SERVICE_UNAVAILABLE, "GPU node is warming up").await;
    let reply = client().chat(&endpoint(base), &request()).await.unwrap();
    assert_eq!(reply.content, "Paris.");
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn retries_llama_cpp_loading() {
    let (base, calls) = flaky(1, StatusCode::SERVICE_UNAVAILABLE, "Loading model").await;
    assert!(client().chat(&endpoint(base), &request()).await.is_ok());
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn gives_up_after_bounded_attempts() {
    let (base, calls) = flaky(100, StatusCode::SERVICE_UNAVAILABLE, "GPU node is warming up").await;
    assert_eq!(client().chat(&endpoint(base), &request()).await, Err(ModelError::WarmingUp(4)));
    assert_eq!(calls.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn other_errors_are_not_retried() {
    let (base, calls) = flaky(100, StatusCode::INTERNAL_SERVER_ERROR, "boom").await;
    assert_eq!(client().chat(&endpoint(base), &request()).await, Err(ModelError::Status(500)));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn malformed_and_unreachable() {
    let router = Router::new().route("/v1/chat/completions", post(|| async { "{\"choices\": []}" }));
    let base = serve(router).await;
    assert_eq!(client().chat(&endpoint(base), &request()).await, Err(ModelError::Malformed));
    // Port 9 on loopback: nothing listens.
    let e = client().chat(&endpoint("http://127.0.0.1:9/v1".into()), &request()).await;
    assert_eq!(e, Err(ModelError::Unreachable));
}

/// A node that redirects: the prompt is not sent on to where it points.
#[tokio::test]
async fn redirects_are_not_followed() {
    let elsewhere_hits = Arc::new(AtomicU32::new(0));
    let hits = elsewhere_hits.clone();
    let elsewhere = serve(Router::new().route(
        "/v1/chat/completions",
        post(move || {
            hits.fetch_add(1, Ordering::SeqCst);
            async { ok_body() }
        }),
    ))
    .await;
    let target = format!("{elsewhere}/chat/completions");
    let redirecting = Router::new().route(
        "/v1/chat/completions",
        post(move || {
            let target = target.clone();
            async move { (StatusCode::TEMPORARY_REDIRECT, [("location", target)]) }
        }),
    );
    let base = serve(redirecting).await;
    assert_eq!(client().chat(&endpoint(base), &request()).await, Err(ModelError::Status(307)));
    assert_eq!(elsewhere_hits.load(Ordering::SeqCst), 0, "the prompt went nowhere else");
}

/// An answer larger than the bound is refused, declared or streamed, even when it would parse.
#[tokio::test]
async fn answers_are_read_up_to_a_bound() {
    let declared = Router::new()
        .route("/v1/chat/completions", post(|| async { format!("{}{}", ok_body(), " ".repeat(MAX_RESPONSE_BYTES)) }));
    let base = serve(declared).await;
    assert_eq!(client().chat(&endpoint(base), &request()).await, Err(ModelError::Malformed));
    // No length declared: chunks without end, until the client hangs up.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = [0u8; 4096];
        let _ = socket.read(&mut request).await;
        let _ = socket
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
            .await;
        let chunk = [b"10000\r\n".as_slice(), &[b' '; 0x10000], b"\r\n"].concat();
        while socket.write_all(&chunk).await.is_ok() {}
    });
    assert_eq!(client().chat(&endpoint(base), &request()).await, Err(ModelError::Malformed));
    // Within the bound, padding and all, the answer reads.
    let padded =
        Router::new().route("/v1/chat/completions", post(|| async { format!("{}{}", ok_body(), " ".repeat(1 << 20)) }));
    let base = serve(padded).await;
    assert_eq!(client().chat(&endpoint(base), &request()).await.map(|r| r.content), Ok("Paris.".into()));
}

#[test]
fn endpoint_debug_hides_key() {
    let e = endpoint("http://x".into());
    assert!(!format!("{e:?}").contains("node-key"));
}

#[test]
fn transport_rules() {
    let pin = Some([1u8; 32]);
    assert_eq!(check_endpoint("https://gpu.example/v1", pin), Ok(()));
    assert_eq!(
        check_endpoint("https://gpu.example/v1", None),
        Err(EndpointError::MissingPin("https://gpu.example/v1".into()))
    );
    assert_eq!(check_endpoint("http://127.0.0.1:8080/v1", None), Ok(()));
    assert_eq!(check_endpoint("http://127.0.0.2:8080/v1", None), Ok(()));
    assert_eq!(check_endpoint("http://[::1]:80/v1", None), Ok(()));
    // A name resolves wherever the resolver says.
    assert!(matches!(check_endpoint("http://localhost/v1", None), Err(EndpointError::PlainHttpRemote(_))));
    assert!(matches!(check_endpoint("http://10.0.2.2:8080/v1", None), Err(EndpointError::PlainHttpRemote(_))));
    assert!(matches!(check_endpoint("http://127.0.0.1.evil.example/v1", None), Err(EndpointError::PlainHttpRemote(_))));
    assert!(matches!(check_endpoint("ftp://x/v1", pin), Err(EndpointError::BadUrl(_))));
    assert!(matches!(check_endpoint("nonsense", None), Err(EndpointError::BadUrl(_))));
}

/// A TLS model server with a self-signed certificate: the enclave's client talks to it only
/// when it pins that certificate's key.
mod pinned_tls {
    use super::*;
    use std::sync::Arc;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn tls_server() -> (String, [u8; 32]) {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["gpu.test".into()]).unwrap().self_signed(&key).unwrap();
        let pin = crate::pin::spki_sha256(cert.der()).unwrap();
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
            )
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                    // Read the request head and body, answer one chat completion, close.
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    loop {
                        let n = tls.read(&mut chunk).await.unwrap_or(0);
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        let text = String::from_utf8_lossy(&buf);
                        if let Some(head_end) = text.find("\r\n\r\n") {
                            let len = text[..head_end]
                                .lines()
                                .find_map(|l| {
                                    l.to_ascii_lowercase()
                                        .strip_prefix("content-length:")
                                        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                                })
                                .unwrap_or(0);
                            if buf.len() >= head_end + 4 + len {
                                break;
                            }
                        }
                    }
                    let body = ok_body();
                    let response = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = tls.write_all(response.as_bytes()).await;
                    let _ = tls.shutdown().await;
                });
            }
        });
        (format!("https://127.0.0.1:{}/v1", addr.port()), pin)
    }

    #[tokio::test]
    async fn pinned_key_is_accepted_and_any_other_refused() {
        let (url, pin) = tls_server().await;
        let good = Endpoint { tls_pin: Some(pin), ..endpoint(url.clone()) };
        let c = ModelClient::for_endpoint(&good, Duration::from_secs(5), retry()).unwrap();
        assert_eq!(c.chat(&good, &request()).await.unwrap().content, "Paris.");

        let mut other = pin;
        other[0] ^= 1;
        let bad = Endpoint { tls_pin: Some(other), ..endpoint(url) };
        let c = ModelClient::for_endpoint(&bad, Duration::from_secs(5), retry()).unwrap();
        assert_eq!(c.chat(&bad, &request()).await, Err(ModelError::Unreachable));
    }
}
