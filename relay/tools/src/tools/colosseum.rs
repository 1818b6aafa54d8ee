//! `colosseum_search`, `colosseum_archives`: Colosseum Copilot, the research API over Solana
//! hackathon projects and a curated crypto archive.
//!
//! Provider id `colosseum`, base `https://copilot.colosseum.com/api/v1`. Every call sends
//! `Authorization: Bearer <personal access token>` (required: without a key the tools answer
//! "not configured").
//!
//! - `POST /search/projects` `{query, limit, hackathons?, filters?: {winnersOnly}}` →
//!   `{results: [{slug, name, oneLiner, similarity, hackathon, tracks, links, prize, ...}],
//!   totalFound, hasMore}`
//! - `POST /search/archives` `{query, limit, maxChunksPerDoc}` →
//!   `{results: [{documentId, title, author, source, url, publishedAt, similarity, snippet}],
//!   searchTier, hasMore}`
//!
//! Documented in Colosseum's Copilot skill reference
//! (<https://github.com/ColosseumOrg/colosseum-copilot>, `skills/colosseum-copilot/references/
//! api-reference.md`, `api-projects.md`, `api-archives.md`; product docs at
//! <https://docs.colosseum.com/copilot>). Request objects there are strict (unknown keys are
//! refused with 400), so only documented keys are sent. Errors come back as
//! `{error, code, retryable}`; only the status reaches the model.

use reqwest::Method;
use serde_json::{Value, json};

use crate::api::{Api, Key, Statuses};
use crate::http::cut_value;
use agent::tool::{Args, Tool, ToolError, ToolFuture, opt_str_arg, opt_u64_arg, str_arg};
use agent::tools::ToolContext;

const PROVIDER: &str = "colosseum";
const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;
/// The API's own bound on `query`.
const MAX_QUERY_CHARS: usize = 500;
const MAX_TEXT_CHARS: usize = 300;
const MAX_SNIPPET_CHARS: usize = 600;

#[derive(Clone)]
struct Colosseum {
    api: Api,
}

impl Colosseum {
    fn new(ctx: &ToolContext) -> Self {
        Colosseum { api: Api::new(ctx, PROVIDER, Key::Required, STATUSES) }
    }

    async fn post(&self, tool: &'static str, segments: &[&str], body: Value) -> Result<Value, ToolError> {
        let url = self.api.endpoint(tool, segments)?;
        let request =
            self.api.request(tool, Method::POST, url)?.header(reqwest::header::ACCEPT, "application/json").json(&body);
        let value = self.api.json(request, "answer", MAX_BODY_BYTES).await?;
        if !value["results"].is_array() {
            return Err(self.api.unexpected("answer"));
        }
        Ok(value)
    }
}

/// What a status means here (500: any 5xx).
const STATUSES: Statuses = &[
    (400, "request rejected"),
    (401, "credentials rejected"),
    (403, "token lacks the required scope"),
    (404, "not found"),
    (429, "rate limited, retry later"),
    (500, "service unavailable, retry later"),
];

fn query_arg(args: &Args) -> Result<String, ToolError> {
    let query = str_arg(args, "query")?.trim();
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(ToolError::BadArguments(format!("`query` must be at most {MAX_QUERY_CHARS} characters")));
    }
    Ok(query.to_string())
}

// --- colosseum_search -----------------------------------------------------------------------

pub struct ColosseumSearch {
    colosseum: Colosseum,
}

impl ColosseumSearch {
    pub fn new(ctx: &ToolContext) -> Self {
        ColosseumSearch { colosseum: Colosseum::new(ctx) }
    }
}

impl Tool for ColosseumSearch {
    fn name(&self) -> &'static str {
        "colosseum_search"
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let tool = self.name();
            self.colosseum.api.upstream(tool)?;
            let query = query_arg(args)?;
            let limit = opt_u64_arg(args, "limit", 25)?.unwrap_or(8).max(1);
            let mut body = json!({"query": query, "limit": limit});
            if let Some(slug) = opt_str_arg(args, "hackathon")?.map(str::trim).filter(|s| !s.is_empty()) {
                let ok = slug.len() <= 100 && slug.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
                if !ok {
                    return Err(ToolError::BadArguments("`hackathon` must be a hackathon slug like `breakout`".into()));
                }
                body["hackathons"] = json!([slug.to_ascii_lowercase()]);
            }
            match args.get("winners_only") {
                None | Some(Value::Null) | Some(Value::Bool(false)) => {}
                Some(Value::Bool(true)) => body["filters"] = json!({"winnersOnly": true}),
                Some(_) => return Err(ToolError::BadArguments("`winners_only` must be a boolean".into())),
            }
            let answer = self.colosseum.post(tool, &["search", "projects"], body).await?;
            let projects: Vec<Value> =
                answer["results"].as_array().into_iter().flatten().take(limit as usize).map(project).collect();
            Ok(json!({
                "count": projects.len(),
                "hasMore": answer["hasMore"] == true,
                "projects": projects,
            }))
        })
    }
}

fn project(p: &Value) -> Value {
    let tracks: Vec<Value> = p["tracks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str())
        .take(5)
        .map(Value::from)
        .collect();
    let mut links = serde_json::Map::new();
    for key in ["github", "demo", "presentation", "colosseum"] {
        if let Some(link) = p["links"][key].as_str() {
            links.insert(key.to_string(), Value::from(link));
        }
    }
    let mut out = json!({
        "slug": p["slug"],
        "name": p["name"],
        "oneLiner": cut_value(&p["oneLiner"], MAX_TEXT_CHARS, true),
        "hackathon": p["hackathon"]["name"],
        "tracks": tracks,
        "similarity": p["similarity"],
        "links": links,
    });
    if p["prize"].is_object() {
        out["prize"] = json!({
            "type": p["prize"]["type"],
            "name": p["prize"]["name"],
            "placement": p["prize"]["placement"],
            "amount": p["prize"]["amount"],
        });
    }
    if let Some(first) = p["evidence"].as_array().and_then(|e| e.first()) {
        out["evidence"] = cut_value(first, MAX_TEXT_CHARS, true);
    }
    out
}

// --- colosseum_archives ---------------------------------------------------------------------

pub struct ColosseumArchives {
    colosseum: Colosseum,
}

impl ColosseumArchives {
    pub fn new(ctx: &ToolContext) -> Self {
        ColosseumArchives { colosseum: Colosseum::new(ctx) }
    }
}

impl Tool for ColosseumArchives {
    fn name(&self) -> &'static str {
        "colosseum_archives"
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let tool = self.name();
            self.colosseum.api.upstream(tool)?;
            let query = query_arg(args)?;
            let limit = opt_u64_arg(args, "limit", 10)?.unwrap_or(5).max(1);
            let body = json!({"query": query, "limit": limit, "maxChunksPerDoc": 1});
            let answer = self.colosseum.post(tool, &["search", "archives"], body).await?;
            let documents: Vec<Value> = answer["results"]
                .as_array()
                .into_iter()
                .flatten()
                .take(limit as usize)
                .map(|d| {
                    json!({
                        "documentId": d["documentId"],
                        "title": cut_value(&d["title"], MAX_TEXT_CHARS, true),
                        "author": d["author"],
                        "source": d["source"],
                        "url": d["url"],
                        "publishedAt": d["publishedAt"],
                        "similarity": d["similarity"],
                        "snippet": cut_value(&d["snippet"], MAX_SNIPPET_CHARS, true),
                    })
                })
                .collect();
            Ok(json!({
                "count": documents.len(),
                "searchTier": answer["searchTier"],
                "hasMore": answer["hasMore"] == true,
                "documents": documents,
            }))
        })
    }
}
