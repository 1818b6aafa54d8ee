//! `paysh_search_apis`, `paysh_call_api`: pay.sh, a catalog of pay-per-call APIs (HTTP 402,
//! x402 or MPP challenges, settled in stablecoins).
//!
//! Provider id `paysh`; the base URL is the published catalog directory, e.g.
//! `https://storage.googleapis.com/pay-skills/v1` (no credential). pay.sh documents the
//! catalog as a static index built from the `pay-skills` registry
//! (<https://pay.sh/docs/using-pay/skills>, <https://github.com/solana-foundation/pay-skills>),
//! which the `pay` CLI downloads and searches locally:
//!
//! - `GET {base}/skills.json` → `{version, generated_at, base_url, provider_count,
//!   providers: [{fqn, title, description, use_case, category, service_url,
//!   sandbox_service_url?, endpoint_count, has_metering, has_free_tier, min_price_usd,
//!   max_price_usd, sha}]}`;
//! - `GET {base}/providers/{fqn}.json` → `{endpoints: [{method, path, full_path, resource,
//!   description, pricing}], content}`.
//!
//! Our assumptions: there is no server-side search endpoint, so `paysh_search_apis` downloads
//! the index and ranks it here by keyword; an endpoint's URL is `service_url` + `path`, as the
//! `pay` CLI builds it.
//!
//! `paysh_call_api` calls one listed API: the URL comes from the model, so it must lie under a
//! catalog provider's `service_url` (or `sandbox_service_url`), and the request goes through
//! [`GuardedFetch`] (no private addresses, bounded size and time). Only GET or POST with a JSON
//! body. The agent never pays: an HTTP 402 answer is returned as
//! `{status: 402, paymentRequired: [accepts…]}`, read from the x402 JSON body
//! (<https://github.com/x402-foundation/x402/blob/main/specs/transports-v1/http.md>). x402 v2
//! and MPP put the challenge in response headers (`PAYMENT-REQUIRED`, `WWW-Authenticate`),
//! which `Fetched` does not carry, so for those `paymentRequired` is empty.

use reqwest::{Method, Url};
use serde_json::{Map, Value, json};

use crate::api::{Api, Key, Statuses};
use crate::config::FetchConfig;
use crate::fetch::{FetchRequest, GuardedFetch};
use crate::http::{cut, cut_value};
use agent::tool::{Args, Tool, ToolError, ToolFuture, opt_str_arg, opt_u64_arg, str_arg};
use agent::tools::ToolContext;

const PROVIDER: &str = "paysh";
/// The index lists every provider with prose; a few hundred KB today.
const MAX_CATALOG_BYTES: usize = 8 * 1024 * 1024;
const MAX_TEXT_CHARS: usize = 255;
const MAX_ENDPOINTS: usize = 25;
const MAX_BODY_TEXT_CHARS: usize = 4000;
const MAX_JSON_BODY_BYTES: usize = 8000;
const MAX_ACCEPTS: usize = 5;

#[derive(Clone)]
struct Catalog {
    api: Api,
}

impl Catalog {
    fn new(ctx: &ToolContext) -> Self {
        Catalog { api: Api::new(ctx, PROVIDER, Key::Optional, STATUSES) }
    }

    async fn get(&self, tool: &'static str, segments: &[&str]) -> Result<Value, ToolError> {
        let url = self.api.endpoint(tool, segments)?;
        let request = self.api.request(tool, Method::GET, url)?.header(reqwest::header::ACCEPT, "application/json");
        let value = self.api.json(request, "catalog", MAX_CATALOG_BYTES).await?;
        if !value.is_object() {
            return Err(self.api.unexpected("catalog answer"));
        }
        Ok(value)
    }

    /// The providers of the index.
    async fn providers(&self, tool: &'static str) -> Result<Vec<Value>, ToolError> {
        let mut index = self.get(tool, &["skills.json"]).await?;
        match index.get_mut("providers").map(Value::take) {
            Some(Value::Array(providers)) => Ok(providers),
            _ => Err(ToolError::Upstream(format!("{PROVIDER}: the catalog has no provider list"))),
        }
    }
}

/// What a status means here (500: any 5xx).
const STATUSES: Statuses =
    &[(403, "not in the catalog"), (404, "not in the catalog"), (429, "rate limited"), (500, "server error")];

/// A provider FQN: two or three lowercase segments (`operator/name`,
/// `operator/origin/name`) of letters, digits, `-`, `_` and `.`, never `.` or `..`.
fn check_fqn(fqn: &str) -> Result<Vec<&str>, ToolError> {
    let segments: Vec<&str> = fqn.split('/').collect();
    let ok = (2..=3).contains(&segments.len())
        && segments.iter().all(|s| {
            !s.is_empty()
                && s.len() <= 100
                && *s != "."
                && *s != ".."
                && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        });
    if ok {
        Ok(segments)
    } else {
        Err(ToolError::BadArguments("`provider` must be a catalog name like `operator/name`".into()))
    }
}

/// How well a provider matches the query terms (0: not at all).
fn score(provider: &Value, terms: &[String]) -> u32 {
    let field = |key: &str| provider[key].as_str().unwrap_or("").to_lowercase();
    let (fqn, title, use_case, category, description) =
        (field("fqn"), field("title"), field("use_case"), field("category"), field("description"));
    terms
        .iter()
        .map(|t| {
            let mut s = 0;
            if fqn.contains(t.as_str()) || title.contains(t.as_str()) {
                s += 3;
            }
            if use_case.contains(t.as_str()) || category.contains(t.as_str()) {
                s += 2;
            }
            if description.contains(t.as_str()) {
                s += 1;
            }
            s
        })
        .sum()
}

fn summary(p: &Value) -> Value {
    json!({
        "fqn": p["fqn"],
        "title": cut_value(&p["title"], 100, false),
        "description": cut_value(&p["description"], MAX_TEXT_CHARS, false),
        "useCase": cut_value(&p["use_case"], MAX_TEXT_CHARS, false),
        "category": p["category"],
        "serviceUrl": p["service_url"],
        "endpointCount": p["endpoint_count"],
        "minPriceUsd": p["min_price_usd"],
        "maxPriceUsd": p["max_price_usd"],
        "hasFreeTier": p["has_free_tier"],
    })
}

/// `service_url` + `path`, as the `pay` CLI joins them.
fn endpoint_url(service_url: &str, path: &str) -> String {
    let base = service_url.trim_end_matches('/');
    let path = path.trim_start_matches('/');
    if path.is_empty() { base.to_string() } else { format!("{base}/{path}") }
}

// --- paysh_search_apis ----------------------------------------------------------------------

pub struct PayshSearchApis {
    catalog: Catalog,
}

impl PayshSearchApis {
    pub fn new(ctx: &ToolContext) -> Self {
        PayshSearchApis { catalog: Catalog::new(ctx) }
    }
}

impl Tool for PayshSearchApis {
    fn name(&self) -> &'static str {
        "paysh_search_apis"
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let tool = self.name();
            self.catalog.api.upstream(tool)?;
            let query = opt_str_arg(args, "query")?.unwrap_or("").trim().to_lowercase();
            if query.chars().count() > 200 {
                return Err(ToolError::BadArguments("`query` is too long".into()));
            }
            let terms: Vec<String> = query.split_whitespace().take(8).map(str::to_string).collect();
            let category = opt_str_arg(args, "category")?.map(str::trim).filter(|c| !c.is_empty());
            let provider = opt_str_arg(args, "provider")?.map(str::trim).filter(|p| !p.is_empty());
            let limit = opt_u64_arg(args, "limit", 20)?.unwrap_or(8).max(1) as usize;
            if let Some(fqn) = provider {
                let segments = check_fqn(fqn)?;
                return self.endpoints(tool, fqn, &segments, &terms).await;
            }

            let providers = self.catalog.providers(tool).await?;
            let mut ranked: Vec<(u32, &Value)> = providers
                .iter()
                .filter(|p| {
                    category.is_none_or(|c| p["category"].as_str().is_some_and(|pc| pc.eq_ignore_ascii_case(c)))
                })
                .map(|p| (if terms.is_empty() { 1 } else { score(p, &terms) }, p))
                .filter(|(s, _)| *s > 0)
                .collect();
            ranked.sort_by(|(sa, a), (sb, b)| {
                sb.cmp(sa).then_with(|| a["fqn"].as_str().unwrap_or("").cmp(b["fqn"].as_str().unwrap_or("")))
            });
            let results: Vec<Value> = ranked.iter().take(limit).map(|(_, p)| summary(p)).collect();
            Ok(json!({"matched": ranked.len(), "count": results.len(), "providers": results}))
        })
    }
}

impl PayshSearchApis {
    /// One provider's endpoints (those matching `terms`, if any), with full URLs.
    async fn endpoints(
        &self,
        tool: &'static str,
        fqn: &str,
        segments: &[&str],
        terms: &[String],
    ) -> Result<Value, ToolError> {
        let providers = self.catalog.providers(tool).await?;
        let provider = providers
            .iter()
            .find(|p| p["fqn"].as_str() == Some(fqn))
            .ok_or_else(|| ToolError::BadArguments(format!("`{fqn}` is not in the pay.sh catalog")))?;
        let service_url = provider["service_url"].as_str().unwrap_or("");
        let mut path: Vec<String> = segments.iter().map(|s| s.to_string()).collect();
        if let Some(last) = path.last_mut() {
            last.push_str(".json");
        }
        let mut parts = vec!["providers"];
        parts.extend(path.iter().map(String::as_str));
        let detail = self.catalog.get(tool, &parts).await?;
        let all: Vec<&Value> = detail["endpoints"].as_array().into_iter().flatten().collect();
        let matching: Vec<&&Value> = all
            .iter()
            .filter(|e| {
                terms.is_empty() || {
                    let hay = format!(
                        "{} {} {}",
                        e["path"].as_str().unwrap_or(""),
                        e["resource"].as_str().unwrap_or(""),
                        e["description"].as_str().unwrap_or("")
                    )
                    .to_lowercase();
                    terms.iter().any(|t| hay.contains(t.as_str()))
                }
            })
            .collect();
        let endpoints: Vec<Value> = matching
            .iter()
            .take(MAX_ENDPOINTS)
            .map(|e| {
                let mut out = json!({
                    "method": e["method"],
                    "url": endpoint_url(service_url, e["path"].as_str().unwrap_or("")),
                    "description": cut_value(&e["description"], 200, false),
                    "paid": !e["pricing"].is_null(),
                });
                if !e["pricing"].is_null() && e["pricing"].to_string().len() <= 300 {
                    out["pricing"] = e["pricing"].clone();
                }
                out
            })
            .collect();
        let mut out = summary(provider);
        out["endpointCount"] = json!(all.len());
        out["matched"] = json!(matching.len());
        out["endpoints"] = json!(endpoints);
        Ok(out)
    }
}

// --- paysh_call_api -------------------------------------------------------------------------

pub struct PayshCallApi {
    catalog: Catalog,
    fetch: GuardedFetch,
}

impl PayshCallApi {
    pub fn new(ctx: &ToolContext, fetch: &FetchConfig) -> Self {
        PayshCallApi { catalog: Catalog::new(ctx), fetch: GuardedFetch::new(fetch) }
    }
}

impl Tool for PayshCallApi {
    fn name(&self) -> &'static str {
        "paysh_call_api"
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let tool = self.name();
            self.catalog.api.upstream(tool)?;
            let raw_url = str_arg(args, "url")?.trim();
            let url =
                Url::parse(raw_url).map_err(|_| ToolError::BadArguments("`url` must be an absolute URL".into()))?;
            if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
                return Err(ToolError::BadArguments("`url` must be an http(s) URL".into()));
            }
            if !url.username().is_empty() || url.password().is_some() {
                return Err(ToolError::BadArguments("`url` must not carry credentials".into()));
            }
            let method = match opt_str_arg(args, "method")?.map(|m| m.trim().to_ascii_uppercase()) {
                None => Method::GET,
                Some(m) if m.is_empty() || m == "GET" => Method::GET,
                Some(m) if m == "POST" => Method::POST,
                Some(_) => return Err(ToolError::BadArguments("`method` must be GET or POST".into())),
            };
            let body = match args.get("body") {
                None | Some(Value::Null) => None,
                Some(_) if method == Method::GET => {
                    return Err(ToolError::BadArguments("a `body` needs method POST".into()));
                }
                Some(body) => Some(serde_json::to_vec(body).map_err(|_| ToolError::BadArguments("bad `body`".into()))?),
            };

            let providers = self.catalog.providers(tool).await?;
            let provider = providers.iter().find(|p| serves(p, &url)).ok_or_else(|| {
                ToolError::Refused("`url` is not under a pay.sh catalog provider's service URL".into())
            })?;

            let mut headers = vec![("Accept".to_string(), "application/json".to_string())];
            if body.is_some() {
                headers.push(("Content-Type".to_string(), "application/json".to_string()));
            }
            let mut target = url.clone();
            target.set_fragment(None);
            let fetched = self.fetch.fetch(FetchRequest { method, url: target.as_str(), headers, body }).await?;

            let mut out = json!({"provider": provider["fqn"], "status": fetched.status, "url": fetched.final_url});
            if fetched.status == 402 {
                let challenge: Value = serde_json::from_slice(&fetched.body).unwrap_or(Value::Null);
                out["paymentRequired"] = Value::Array(accepts(&challenge));
                if let Some(version) = challenge["x402Version"].as_u64() {
                    out["x402Version"] = json!(version);
                }
                out["note"] = json!("payment required; this agent does not pay");
                return Ok(out);
            }
            if !(200..300).contains(&fetched.status) {
                return Err(ToolError::Upstream(format!("the API answered HTTP {}", fetched.status)));
            }
            out["contentType"] = json!(fetched.content_type);
            let json_body = serde_json::from_slice::<Value>(&fetched.body).ok().filter(|_| !fetched.truncated);
            match json_body {
                Some(value) if value.to_string().len() <= MAX_JSON_BODY_BYTES => {
                    out["body"] = value;
                    out["truncated"] = json!(false);
                }
                _ => {
                    let text = String::from_utf8_lossy(&fetched.body);
                    let (text, cut_here) = cut(&text, MAX_BODY_TEXT_CHARS);
                    out["body"] = json!(text);
                    out["truncated"] = json!(cut_here || fetched.truncated);
                }
            }
            Ok(out)
        })
    }
}

/// Whether `url` lies under the provider's `service_url` or `sandbox_service_url`: same
/// scheme, host and port, and a path inside the service's path.
fn serves(provider: &Value, url: &Url) -> bool {
    ["service_url", "sandbox_service_url"].iter().filter_map(|k| provider[*k].as_str()).any(|service| {
        let Ok(service) = Url::parse(service) else {
            return false;
        };
        if service.scheme() != url.scheme()
            || service.host_str().map(str::to_ascii_lowercase) != url.host_str().map(str::to_ascii_lowercase)
            || service.port_or_known_default() != url.port_or_known_default()
        {
            return false;
        }
        let base = service.path().trim_end_matches('/');
        let path = url.path();
        base.is_empty() || path == base || path.strip_prefix(base).is_some_and(|rest| rest.starts_with('/'))
    })
}

/// The x402 `accepts` list of a 402 body, trimmed to the fields a payer needs.
fn accepts(challenge: &Value) -> Vec<Value> {
    const KEYS: [&str; 9] = [
        "scheme",
        "network",
        "amount",
        "maxAmountRequired",
        "asset",
        "payTo",
        "resource",
        "description",
        "maxTimeoutSeconds",
    ];
    challenge["accepts"]
        .as_array()
        .into_iter()
        .flatten()
        .take(MAX_ACCEPTS)
        .filter_map(|option| {
            let option = option.as_object()?;
            let mut out = Map::new();
            for key in KEYS {
                match option.get(key) {
                    Some(Value::String(s)) => {
                        out.insert(key.to_string(), Value::String(cut(s, 200).0));
                    }
                    Some(v @ Value::Number(_)) => {
                        out.insert(key.to_string(), v.clone());
                    }
                    _ => {}
                }
            }
            if let Some(name) = option.get("extra").and_then(|e| e["name"].as_str()) {
                out.insert("assetName".to_string(), Value::String(cut(name, 40).0));
            }
            Some(Value::Object(out))
        })
        .collect()
}
