//! The HTTP helper the five tools share: transport errors as sentences.
//!
//! Messages name the provider but never the URL, the credential or the transport's own error
//! text. Status errors stay in each tool: every provider's table differs on purpose.

use crate::tool::ToolError;

/// A transport failure as a sentence, the wording of the encrypted-mode tools:
/// `"<provider> did not answer in time"`, `"<provider> is unreachable"` or
/// `"request to <provider> failed"`.
pub fn transport_error_sentence(provider: &str, e: &reqwest::Error) -> ToolError {
    ToolError::Upstream(if e.is_timeout() {
        format!("{provider} did not answer in time")
    } else if e.is_connect() {
        format!("{provider} is unreachable")
    } else {
        format!("request to {provider} failed")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn transport_errors_name_the_provider() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let e = reqwest::Client::new().get(format!("http://{addr}/")).send().await.unwrap_err();
        match transport_error_sentence("brave", &e) {
            ToolError::Upstream(m) => assert_eq!(m, "brave is unreachable"),
            other => panic!("not an upstream error: {other:?}"),
        }
    }
}
