//! Stand-in for Colosseum Copilot's API (<https://copilot.colosseum.com/api/v1>), as documented
//! in `ColosseumOrg/colosseum-copilot` (`skills/colosseum-copilot/references/api-reference.md`).
//!
//! ```ignore
//! pub async fn start(token: &str) -> (Running, Log)
//! ```
//!
//! Starts the server; the API lives under `/api/v1`, so point the `colosseum` upstream's base
//! URL at `format!("{}/api/v1", running.base_url)`. Every request must carry
//! `Authorization: Bearer <token>`, else 401 `{"error", "code":"UNAUTHORIZED", "retryable":false}`.
//! The [`Log`] records every request (method, raw path, query, headers, body).
//!
//! Served:
//! - `POST /api/v1/search/projects` — strict body (unknown keys, `limit` outside 1..=25 or a
//!   `query` over 500 characters get 400 `INVALID_QUERY`); four sample projects ranked by the
//!   words of `query`, filtered by `hackathons` and `filters.winnersOnly`;
//! - `POST /api/v1/search/archives` — strict body, `query` required, `limit` 1..=10,
//!   `maxChunksPerDoc` 1..=4; three sample documents;
//! - `GET /api/v1/status`.
//!
//! Failure trigger: a `query` containing `trigger-503` answers 503 `SERVICE_UNAVAILABLE`.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::{Incoming, Running, TokenStand};

pub use crate::{Log, Seen};

pub async fn start(token: &str) -> (Running, Log) {
    crate::serve_token_stand(token, handle).await
}

fn error(status: StatusCode, code: &str, message: &str, retryable: bool) -> Response {
    (status, axum::Json(json!({"error": message, "code": code, "retryable": retryable}))).into_response()
}

fn invalid(message: &str) -> Response {
    error(StatusCode::BAD_REQUEST, "INVALID_QUERY", message, false)
}

async fn handle(State(stand): State<Arc<TokenStand>>, request: Incoming) -> Response {
    crate::record(&stand.log, request.seen());
    let Incoming { method, uri, headers, body } = request;

    let auth = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).unwrap_or("");
    if auth.strip_prefix("Bearer ") != Some(stand.token.as_str()) {
        return error(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", "Missing or invalid personal access token", false);
    }
    match (method.as_str(), uri.path()) {
        ("GET", "/api/v1/status") => axum::Json(json!({
            "authenticated": true,
            "expiresAt": null,
            "scope": "evidence:read self-data:read"
        }))
        .into_response(),
        ("POST", "/api/v1/search/projects") => match parse(&headers, &body) {
            Ok(request) => search_projects(&request),
            Err(e) => *e,
        },
        ("POST", "/api/v1/search/archives") => match parse(&headers, &body) {
            Ok(request) => search_archives(&request),
            Err(e) => *e,
        },
        _ => error(StatusCode::NOT_FOUND, "NOT_FOUND", "Not found", false),
    }
}

/// An error answer, boxed to keep `Result`s small.
type Reject = Box<Response>;

fn parse(headers: &HeaderMap, body: &[u8]) -> Result<Value, Reject> {
    let json_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !json_type {
        return Err(Box::new(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UNSUPPORTED_MEDIA_TYPE",
            "Use application/json",
            false,
        )));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        _ => Err(Box::new(error(StatusCode::BAD_REQUEST, "INVALID_JSON", "Malformed JSON body", false))),
    }
}

/// Refuses keys outside `allowed`, like the API's strict request objects.
fn strict(request: &Value, allowed: &[&str]) -> Result<(), Reject> {
    match request.as_object().and_then(|o| o.keys().find(|k| !allowed.contains(&k.as_str()))) {
        Some(key) => Err(Box::new(invalid(&format!("Unrecognized key(s) in object: '{key}'")))),
        None => Ok(()),
    }
}

fn int_in(request: &Value, key: &str, range: std::ops::RangeInclusive<u64>, default: u64) -> Result<u64, Reject> {
    match request.get(key) {
        None => Ok(default),
        Some(v) => v.as_u64().filter(|n| range.contains(n)).ok_or_else(|| {
            Box::new(invalid(&format!("{key}: must be an integer between {} and {}", range.start(), range.end())))
        }),
    }
}

fn query_of(request: &Value, required: bool) -> Result<String, Reject> {
    match request.get("query") {
        None if !required => Ok(String::new()),
        Some(Value::String(q)) if q.trim().chars().count() <= 500 && (!required || !q.trim().is_empty()) => {
            Ok(q.trim().to_string())
        }
        _ => Err(Box::new(invalid("query: must be a string of 1 to 500 characters"))),
    }
}

fn words(query: &str) -> Vec<String> {
    query.to_lowercase().split_whitespace().map(str::to_string).collect()
}

fn project(
    slug: &str,
    name: &str,
    one_liner: &str,
    hackathon: (&str, &str, &str),
    track: &str,
    prize: Option<(u32, u64)>,
) -> Value {
    json!({
        "slug": slug,
        "name": name,
        "oneLiner": one_liner,
        "similarity": 0.0,
        "hackathon": {"name": hackathon.0, "slug": hackathon.1, "startDate": hackathon.2},
        "tracks": [{"name": track, "key": format!("{}/{}", hackathon.1, track.to_lowercase().replace(' ', "-"))}],
        "links": {
            "github": format!("https://github.com/example/{slug}"),
            "demo": null,
            "presentation": format!("https://youtu.be/{slug}"),
            "technicalDemo": null,
            "twitter": null,
            "colosseum": format!("https://arena.colosseum.org/projects/explore/{slug}")
        },
        "evidence": [format!("{name}: {one_liner}. Built during {}.", hackathon.0), "second snippet"],
        "prize": prize.map(|(placement, amount)| json!({
            "type": "TRACK", "name": format!("{track} Track"), "placement": placement, "amount": amount, "trackName": track
        })),
        "metrics": {"updatesCount": 4},
        "team": {"count": 3},
        "tags": {"problemTags": ["payments"], "solutionTags": ["wallet"], "primitives": ["spl-token"], "techStack": ["anchor", "rust"], "targetUsers": ["consumers"]},
        "accelerator": null
    })
}

fn projects() -> Vec<Value> {
    let breakout = ("Breakout", "breakout", "2025-04-14");
    let radar = ("Radar", "radar", "2024-09-02");
    vec![
        project("cloak-wallet", "Cloak", "Private stablecoin payments wallet", breakout, "Consumer", Some((1, 25000))),
        project("streamflow-pay", "StreamPay", "Streaming stablecoin payroll for DAOs", breakout, "Payments", None),
        project(
            "oracle-dice",
            "Oracle Dice",
            "Verifiable randomness for onchain games",
            radar,
            "Gaming",
            Some((3, 5000)),
        ),
        project(
            "ghost-ledger",
            "Ghost Ledger",
            "Privacy-preserving accounting with zk proofs",
            radar,
            "Infrastructure",
            None,
        ),
    ]
}

fn search_projects(request: &Value) -> Response {
    let allowed = [
        "query",
        "hackathons",
        "trackKeys",
        "limit",
        "offset",
        "filters",
        "diversify",
        "includeFacets",
        "facets",
        "facetTopK",
        "includeDiagnostics",
    ];
    if let Err(e) = strict(request, &allowed) {
        return *e;
    }
    if let Some(filters) = request.get("filters") {
        let allowed_filters = [
            "winnersOnly",
            "acceleratorOnly",
            "acceleratorBatchKeys",
            "prizePlacements",
            "prizeTypes",
            "isUniversityProject",
            "isSolanaMobile",
            "techStack",
            "primitives",
            "problemTags",
            "solutionTags",
            "targetUsers",
        ];
        if let Err(e) = strict(filters, &allowed_filters) {
            return *e;
        }
    }
    let (limit, query) = match (int_in(request, "limit", 1..=25, 10), query_of(request, false)) {
        (Ok(l), Ok(q)) => (l, q),
        (Err(e), _) | (_, Err(e)) => return *e,
    };
    if query.contains("trigger-503") {
        return error(StatusCode::SERVICE_UNAVAILABLE, "SERVICE_UNAVAILABLE", "All search tiers failed", true);
    }
    let words = words(&query);
    let hackathons: Option<Vec<&str>> =
        request["hackathons"].as_array().map(|h| h.iter().filter_map(Value::as_str).collect());
    let winners_only = request["filters"]["winnersOnly"] == true;
    let mut hits: Vec<(usize, Value)> = projects()
        .into_iter()
        .filter(|p| hackathons.as_ref().is_none_or(|h| p["hackathon"]["slug"].as_str().is_some_and(|s| h.contains(&s))))
        .filter(|p| !winners_only || p["prize"].is_object())
        .map(|p| {
            let hay = format!("{} {}", p["name"], p["oneLiner"]).to_lowercase();
            (words.iter().filter(|w| hay.contains(w.as_str())).count(), p)
        })
        .filter(|(score, _)| words.is_empty() || *score > 0)
        .collect();
    hits.sort_by_key(|hit| std::cmp::Reverse(hit.0));
    let total = hits.len();
    let results: Vec<Value> = hits
        .into_iter()
        .take(limit as usize)
        .map(|(score, mut p)| {
            p["similarity"] = json!(0.3 + 0.1 * score as f64);
            p
        })
        .collect();
    let has_more = total > results.len();
    axum::Json(json!({
        "results": results,
        "filtersApplied": {"hackathons": request["hackathons"], "filters": request["filters"]},
        "totalFound": total,
        "hasMore": has_more
    }))
    .into_response()
}

fn document(id: u32, title: &str, author: Option<&str>, source: &str, snippet: &str) -> Value {
    json!({
        "documentId": format!("0b7c{id:04}-58a1-4c55-9a7e-5a0d8f0c{id:04}"),
        "title": title,
        "author": author,
        "source": source,
        "url": format!("https://archive.example.org/{source}/{id}"),
        "publishedAt": if id == 3 { Value::Null } else { json!(format!("199{id}-01-01T00:00:00.000Z")) },
        "similarity": 0.0,
        "snippet": snippet,
        "chunkIndex": 0
    })
}

fn search_archives(request: &Value) -> Response {
    let allowed =
        ["query", "sources", "limit", "offset", "maxChunksPerDoc", "maxDocsPerSource", "intent", "minSimilarity"];
    if let Err(e) = strict(request, &allowed) {
        return *e;
    }
    let query = match query_of(request, true) {
        Ok(q) => q,
        Err(e) => return *e,
    };
    let limit = match (int_in(request, "limit", 1..=10, 5), int_in(request, "maxChunksPerDoc", 1..=4, 2)) {
        (Ok(l), Ok(_)) => l,
        (Err(e), _) | (_, Err(e)) => return *e,
    };
    if query.contains("trigger-503") {
        return error(StatusCode::SERVICE_UNAVAILABLE, "SERVICE_UNAVAILABLE", "All search tiers failed", true);
    }
    let long = "Futarchy: vote on values, but bet on beliefs. ".repeat(40);
    let docs = vec![
        document(1, "Futarchy: Vote Values, But Bet Beliefs", Some("Robin Hanson"), "hanson", &long),
        document(
            2,
            "The Cypherpunk Manifesto",
            Some("Eric Hughes"),
            "cypherpunks",
            "Privacy is necessary for an open society.",
        ),
        document(
            3,
            "Prediction markets on Solana",
            None,
            "solana-docs",
            "Markets that aggregate beliefs about governance.",
        ),
    ];
    let words = words(&query);
    let results: Vec<Value> = docs
        .into_iter()
        .filter_map(|mut d| {
            let hay = format!("{} {}", d["title"], d["snippet"]).to_lowercase();
            let score = words.iter().filter(|w| hay.contains(w.as_str())).count();
            (score > 0).then(|| {
                d["similarity"] = json!(0.2 + 0.1 * score as f64);
                d
            })
        })
        .take(limit as usize)
        .collect();
    let found = results.len();
    axum::Json(json!({
        "results": results,
        "filtersApplied": {},
        "searchTier": "vector",
        "totalFound": found,
        "totalMatched": found,
        "hasMore": false
    }))
    .into_response()
}
