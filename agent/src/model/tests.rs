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

fn client() -> ModelClient {
    ModelClient::new(
        Duration::from_secs(5),
        RetryPolicy { attempts: 4, first_delay: Duration::from_millis(5), max_delay: Duration::from_millis(20) },
    )
}

fn endpoint(base_url: String) -> Endpoint {
    Endpoint { base_url, upstream_model: "m".into(), api_key: Some(Zeroizing::new("node-key".into())) }
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

#[test]
fn endpoint_debug_hides_key() {
    let e = endpoint("http://x".into());
    assert!(!format!("{e:?}").contains("node-key"));
}
