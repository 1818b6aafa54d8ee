//! One provider's JSON API, as the tools of that provider share it.
//!
//! Every call takes the same steps: the configured base URL (http or https only), the
//! arguments appended as percent-encoded path segments (so none can leave the API's path or add
//! a query), the key as a bearer token, the status read through the provider's own table, and
//! the body read under a cap and parsed. The tables stay with each provider: what a 403 means
//! differs on purpose.

use agent::tool::ToolError;
use agent::tools::{ToolContext, Upstream};
use reqwest::{Method, RequestBuilder, StatusCode, Url};
use serde_json::Value;

use crate::http::{read_capped_as, transport_error};

/// Whether the provider answers without a key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    /// Every call needs one: without it the tools answer "not configured".
    Required,
    /// Public data works without one; a configured key is sent.
    Optional,
}

/// What each HTTP status means at one provider, for the model: `(status, meaning)`, where 500
/// stands for every 5xx. Any other status is an "unexpected status".
pub(crate) type Statuses = &'static [(u16, &'static str)];

/// `"<provider>: HTTP <code>, <meaning>"`.
pub(crate) fn status_error(provider: &str, statuses: Statuses, status: StatusCode) -> ToolError {
    let code = status.as_u16();
    let key = if status.is_server_error() { 500 } else { code };
    let what = statuses.iter().find(|(c, _)| *c == key).map_or("unexpected status", |(_, what)| what);
    ToolError::Upstream(format!("{provider}: HTTP {code}, {what}"))
}

#[derive(Clone)]
pub(crate) struct Api {
    pub provider: &'static str,
    key: Key,
    statuses: Statuses,
    http: reqwest::Client,
    upstream: Option<Upstream>,
}

impl Api {
    pub fn new(ctx: &ToolContext, provider: &'static str, key: Key, statuses: Statuses) -> Self {
        Api { provider, key, statuses, http: ctx.http.clone(), upstream: ctx.upstream(provider).cloned() }
    }

    /// The upstream, if it is configured (with a key, where every call needs one).
    pub fn upstream(&self, tool: &'static str) -> Result<&Upstream, ToolError> {
        self.upstream
            .as_ref()
            .filter(|u| self.key == Key::Optional || u.api_key.is_some())
            .ok_or(ToolError::NotConfigured(tool))
    }

    /// The base URL with `segments` appended, each percent-encoded as one path segment.
    pub fn endpoint(&self, tool: &'static str, segments: &[&str]) -> Result<Url, ToolError> {
        let upstream = self.upstream(tool)?;
        let mut url = Url::parse(&upstream.base_url).map_err(|_| ToolError::NotConfigured(tool))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError::NotConfigured(tool));
        }
        url.set_query(None);
        url.set_fragment(None);
        url.path_segments_mut().map_err(|_| ToolError::NotConfigured(tool))?.pop_if_empty().extend(segments);
        Ok(url)
    }

    /// A request to `url`, with the key as a bearer token when there is one.
    pub fn request(&self, tool: &'static str, method: Method, url: Url) -> Result<RequestBuilder, ToolError> {
        let upstream = self.upstream(tool)?;
        let request = self.http.request(method, url);
        Ok(match &upstream.api_key {
            Some(key) => request.bearer_auth(key.as_str()),
            None => request,
        })
    }

    /// Sends `request` and parses its answer; the body may take `max` bytes, and refusals
    /// name it as `what` ("answer", "catalog").
    pub async fn json(&self, request: RequestBuilder, what: &str, max: usize) -> Result<Value, ToolError> {
        let provider = self.provider;
        let response = request.send().await.map_err(|e| transport_error(provider, &e))?;
        let status = response.status();
        if !status.is_success() {
            return Err(status_error(provider, self.statuses, status));
        }
        let body = read_capped_as(provider, what, response, max).await?;
        serde_json::from_slice(&body)
            .map_err(|_| ToolError::Upstream(format!("{provider}: the {what} is not valid JSON")))
    }

    /// An answer that is JSON but not of the expected shape.
    pub fn unexpected(&self, what: &str) -> ToolError {
        ToolError::Upstream(format!("{}: unexpected {what}", self.provider))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_reads_through_the_table_and_500_stands_for_every_5xx() {
        const TABLE: Statuses = &[(404, "not found"), (500, "server error")];
        let say = |code| match status_error("github", TABLE, StatusCode::from_u16(code).unwrap()) {
            ToolError::Upstream(m) => m,
            other => panic!("{other:?}"),
        };
        assert_eq!(say(404), "github: HTTP 404, not found");
        assert_eq!(say(503), "github: HTTP 503, server error");
        assert_eq!(say(418), "github: HTTP 418, unexpected status");
    }
}
