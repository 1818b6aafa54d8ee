//! HTTP helpers shared by the relay's tools: transport errors, a size-capped body read, and
//! cutting text to a number of characters.
//!
//! Messages name the provider but never the URL, the credential or the transport's own error
//! text. Status errors stay in each tool: every provider's table differs on purpose.

use agent::tool::ToolError;
use serde_json::Value;

/// A transport failure as `"<provider>: request timed out | connection failed | request failed"`.
pub(crate) fn transport_error(provider: &str, e: &reqwest::Error) -> ToolError {
    let what = if e.is_timeout() {
        "request timed out"
    } else if e.is_connect() {
        "connection failed"
    } else {
        "request failed"
    };
    ToolError::Upstream(format!("{provider}: {what}"))
}

/// The body of `response`, refused with `"<provider>: the answer is too large"` once it
/// exceeds `max` bytes.
pub(crate) async fn read_capped(provider: &str, response: reqwest::Response, max: usize) -> Result<Vec<u8>, ToolError> {
    read_capped_as(provider, "answer", response, max).await
}

/// [`read_capped`] with the refusal naming `what`: `"<provider>: the <what> is too large"`.
pub(crate) async fn read_capped_as(
    provider: &str,
    what: &str,
    mut response: reqwest::Response,
    max: usize,
) -> Result<Vec<u8>, ToolError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| transport_error(provider, &e))? {
        if body.len() + chunk.len() > max {
            return Err(ToolError::Upstream(format!("{provider}: the {what} is too large")));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The first `max` characters of `s`, and whether anything was cut.
pub(crate) fn cut(s: &str, max: usize) -> (String, bool) {
    match s.char_indices().nth(max) {
        Some((end, _)) => (s[..end].to_string(), true),
        None => (s.to_string(), false),
    }
}

/// A JSON string cut to its first `max` characters, with `…` appended when cut and `ellipsis`
/// is set; anything but a string becomes `null`.
pub(crate) fn cut_value(v: &Value, max: usize, ellipsis: bool) -> Value {
    match v.as_str() {
        Some(s) => {
            let (mut text, was_cut) = cut(s, max);
            if was_cut && ellipsis {
                text.push('…');
            }
            Value::String(text)
        }
        None => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(e: ToolError) -> String {
        match e {
            ToolError::Upstream(m) => m,
            other => panic!("not an upstream error: {other:?}"),
        }
    }

    async fn connect_error() -> reqwest::Error {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        reqwest::Client::new().get(format!("http://{addr}/")).send().await.unwrap_err()
    }

    #[tokio::test]
    async fn transport_errors_name_the_provider() {
        let e = connect_error().await;
        assert_eq!(message(transport_error("github", &e)), "github: connection failed");
    }

    #[test]
    fn cut_stops_on_a_character_boundary() {
        assert_eq!(cut("héllo", 2), ("hé".to_string(), true));
        assert_eq!(cut("日本語", 3), ("日本語".to_string(), false));
        assert_eq!(cut("日本語", 1), ("日".to_string(), true));
        assert_eq!(cut("", 0), (String::new(), false));
    }

    #[test]
    fn cut_value_marks_only_when_asked() {
        let v = Value::from("ünïcode");
        assert_eq!(cut_value(&v, 3, true), Value::from("ünï…"));
        assert_eq!(cut_value(&v, 3, false), Value::from("ünï"));
        assert_eq!(cut_value(&v, 7, true), Value::from("ünïcode"));
        assert_eq!(cut_value(&Value::from(3), 3, true), Value::Null);
    }

    #[tokio::test]
    async fn read_capped_refuses_a_body_over_the_cap() {
        let response = |n: usize| reqwest::Response::from(axum::http::Response::new(vec![b'x'; n]));
        assert_eq!(read_capped("notion", response(16), 16).await.unwrap().len(), 16);
        assert_eq!(
            message(read_capped("notion", response(17), 16).await.unwrap_err()),
            "notion: the answer is too large"
        );
        assert_eq!(
            message(read_capped_as("paysh", "catalog", response(17), 16).await.unwrap_err()),
            "paysh: the catalog is too large"
        );
    }
}
