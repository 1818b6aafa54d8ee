//! `web_search`: the Brave Search API (provider id `brave`).
//!
//! `GET {base}/res/v1/web/search?q=...&count=N` with the subscription token in
//! `X-Subscription-Token` (required). Returns the title, URL and snippet of each web result.
//! Docs: <https://api-dashboard.search.brave.com/api-reference/web/search/get>

use serde_json::{Value, json};

use super::http::transport_error_sentence;
use crate::tool::{Args, Tool, ToolError, ToolFuture, opt_u64_arg, str_arg};
use crate::tools::{ToolContext, Upstream};

const NAME: &str = "web_search";
pub(crate) const DEFAULT_COUNT: u64 = 5;
pub(crate) const MAX_COUNT: u64 = 10;
/// Brave refuses longer queries (400 characters, 50 words).
const MAX_QUERY_CHARS: usize = 400;
/// Characters of a result snippet kept.
const MAX_SNIPPET_CHARS: usize = 300;

pub struct WebSearch {
    http: reqwest::Client,
    upstream: Option<Upstream>,
}

impl WebSearch {
    pub fn new(ctx: &ToolContext) -> Self {
        WebSearch { http: ctx.http.clone(), upstream: ctx.upstream("brave").cloned() }
    }
}

impl Tool for WebSearch {
    fn name(&self) -> &'static str {
        NAME
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let query = str_arg(args, "query")?.trim();
            if query.chars().count() > MAX_QUERY_CHARS {
                return Err(ToolError::BadArguments(format!("`query` must be at most {MAX_QUERY_CHARS} characters")));
            }
            let count = match opt_u64_arg(args, "count", MAX_COUNT)? {
                Some(0) => return Err(ToolError::BadArguments("`count` must be at least 1".into())),
                Some(n) => n,
                None => DEFAULT_COUNT,
            };
            let upstream = self.upstream.as_ref().ok_or(ToolError::NotConfigured(NAME))?;
            let key = upstream.credential(NAME)?;
            let response = self
                .http
                .get(upstream.url("/res/v1/web/search"))
                .query(&[("q", query), ("count", &count.to_string())])
                .header("Accept", "application/json")
                .header("X-Subscription-Token", key)
                .send()
                .await
                .map_err(|e| transport_error_sentence("brave", &e))?;
            let status = response.status();
            if !status.is_success() {
                return Err(ToolError::Upstream(match status.as_u16() {
                    401 | 403 => format!("brave refused the subscription token (HTTP {})", status.as_u16()),
                    429 => "brave rate limit reached (HTTP 429)".to_string(),
                    code => format!("brave answered HTTP {code}"),
                }));
            }
            let body: Value =
                response.json().await.map_err(|_| ToolError::Upstream("brave answered with invalid JSON".into()))?;
            Ok(json!({"query": query, "results": results(&body, count as usize)}))
        })
    }
}

/// The useful part of each web result (absent `web` means no results).
fn results(body: &Value, count: usize) -> Vec<Value> {
    let Some(items) = body.pointer("/web/results").and_then(Value::as_array) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| {
            let url = item.get("url")?.as_str()?;
            let title = item.get("title").and_then(Value::as_str).unwrap_or_default();
            let description = item.get("description").and_then(Value::as_str).unwrap_or_default();
            Some(json!({"title": strip_tags(title), "url": url, "description": snippet(description)}))
        })
        .take(count)
        .collect()
}

/// Brave marks query terms with `<strong>`; the model wants plain text.
fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&amp;", "&").replace("&quot;", "\"").replace("&#x27;", "'").replace("&lt;", "<").replace("&gt;", ">")
}

fn snippet(description: &str) -> String {
    let text = strip_tags(description);
    match text.char_indices().nth(MAX_SNIPPET_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_trimmed_and_tags_removed() {
        let body = json!({"web": {"results": [
            {"title": "A <strong>b</strong>", "url": "https://a.example/",
             "description": "x &amp; <strong>y</strong>", "age": "1d"},
            {"title": "no url"},
            {"title": "C", "url": "https://c.example/"},
            {"title": "D", "url": "https://d.example/"}
        ]}});
        assert_eq!(
            results(&body, 2),
            vec![
                json!({"title": "A b", "url": "https://a.example/", "description": "x & y"}),
                json!({"title": "C", "url": "https://c.example/", "description": ""}),
            ]
        );
        assert!(results(&json!({"type": "search"}), 5).is_empty());
        assert_eq!(snippet(&"é".repeat(400)).chars().count(), MAX_SNIPPET_CHARS + 1);
    }
}
