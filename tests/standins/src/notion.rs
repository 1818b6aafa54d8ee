//! Stand-in for Notion's public API (version 2022-06-28): the calls of the `notion_*` tools.
//!
//! ```ignore
//! pub async fn start(token: &str) -> (Running, Log)
//! ```
//!
//! Starts the server; point the `notion` upstream's base URL at `running.base_url`. Every
//! request must carry `Authorization: Bearer <token>` (else 401
//! `{"object":"error","status":401,"code":"unauthorized","message":"API token is invalid."}`)
//! and a `Notion-Version` header (else 400 `missing_version`). The [`Log`] records every
//! request (method, raw path, query, headers, body).
//!
//! Served, with the ids in [`PAGE_ID`] and [`DATABASE_ID`] (accepted with or without dashes):
//! - `POST /v1/search` `{query, page_size, filter?}` — the page "Project Roadmap" and the
//!   database "Tasks", matched by title; `page_size` above 100 gets 400 `validation_error`;
//! - `GET /v1/pages/{id}` and `GET /v1/blocks/{id}/children?page_size=` — the page and its
//!   blocks (headings, paragraph, list items, to-dos, quote, code, divider, an image, a child
//!   database);
//! - `POST /v1/databases/{id}/query` `{page_size, filter?}` — three rows; a filter
//!   `{"property": P, "status"|"select"|"checkbox": {"equals": V}}` is applied, an unknown
//!   property gets 400 `validation_error`.
//!
//! Unknown ids get 404 `object_not_found`; malformed ids 400 `validation_error`.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::{Incoming, Running, TokenStand};

pub const PAGE_ID: &str = "59833787-2cf9-4fdf-8782-e53db20768a5";
pub const DATABASE_ID: &str = "a8aec43c-6dc8-4bb6-9e5b-7a0a3e7f5b21";

pub use crate::{Log, Seen};

pub async fn start(token: &str) -> (Running, Log) {
    crate::serve_token_stand(token, handle).await
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    let body = json!({
        "object": "error",
        "status": status.as_u16(),
        "code": code,
        "message": message,
        "request_id": "7c5b2f0e-1d2a-4c1e-9a51-0b4f2a9d3e11"
    });
    (status, axum::Json(body)).into_response()
}

async fn handle(State(stand): State<Arc<TokenStand>>, request: Incoming) -> Response {
    crate::record(&stand.log, request.seen());
    let Incoming { method, uri, headers, body } = request;

    let auth = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).unwrap_or("");
    if auth.strip_prefix("Bearer ") != Some(stand.token.as_str()) {
        return error(StatusCode::UNAUTHORIZED, "unauthorized", "API token is invalid.");
    }
    if !headers.contains_key("notion-version") {
        return error(
            StatusCode::BAD_REQUEST,
            "missing_version",
            "Notion-Version header failed validation: Notion-Version header should be defined, instead was `undefined`.",
        );
    }
    let query: HashMap<String, String> =
        Query::<HashMap<String, String>>::try_from_uri(&uri).map(|q| q.0).unwrap_or_default();
    let json_body: Value =
        if body.is_empty() { json!({}) } else { serde_json::from_slice(&body).unwrap_or(Value::Null) };
    if !json_body.is_object() {
        return error(StatusCode::BAD_REQUEST, "invalid_json", "Error parsing JSON body.");
    }
    let segments: Vec<&str> = uri.path().trim_start_matches('/').split('/').collect();
    match (method.as_str(), segments.as_slice()) {
        ("POST", ["v1", "search"]) => search(&json_body),
        ("GET", ["v1", "pages", id]) => match canonical(id, "page_id") {
            Err(e) => *e,
            Ok(id) if id == PAGE_ID => axum::Json(page()).into_response(),
            Ok(id) => not_found(&id),
        },
        ("GET", ["v1", "blocks", id, "children"]) => match canonical(id, "block_id") {
            Err(e) => *e,
            Ok(id) if id == PAGE_ID => {
                let size: usize = query.get("page_size").and_then(|s| s.parse().ok()).unwrap_or(100);
                if size == 0 || size > 100 {
                    return validation("body failed validation: page_size should be ≤ `100`.");
                }
                axum::Json(list(blocks(), "block")).into_response()
            }
            Ok(id) => not_found(&id),
        },
        ("POST", ["v1", "databases", id, "query"]) => match canonical(id, "database_id") {
            Err(e) => *e,
            Ok(id) if id == DATABASE_ID => query_database(&json_body),
            Ok(id) => not_found(&id),
        },
        _ => error(StatusCode::BAD_REQUEST, "invalid_request_url", "Invalid request URL."),
    }
}

fn validation(message: &str) -> Response {
    error(StatusCode::BAD_REQUEST, "validation_error", message)
}

fn not_found(id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "object_not_found",
        &format!(
            "Could not find object with ID: {id}. Make sure the relevant pages and databases are shared with your integration."
        ),
    )
}

/// An error answer, boxed to keep `Result`s small.
type Reject = Box<Response>;

/// The dashed lower-case form of an id, or 400 like Notion for anything that is not a uuid.
fn canonical(raw: &str, what: &str) -> Result<String, Reject> {
    let hex: String = raw.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(Box::new(validation(&format!(
            "path failed validation: path.{what} should be a valid uuid, instead was `\"{raw}\"`."
        ))));
    }
    let h = hex.to_ascii_lowercase();
    Ok(format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..]))
}

fn rich(text: &str) -> Value {
    json!([{
        "type": "text",
        "text": {"content": text, "link": null},
        "annotations": {"bold": false, "italic": false, "strikethrough": false, "underline": false, "code": false, "color": "default"},
        "plain_text": text,
        "href": null
    }])
}

fn list(results: Vec<Value>, kind: &str) -> Value {
    json!({"object": "list", "results": results, "next_cursor": null, "has_more": false, "type": kind, kind: {}})
}

fn page() -> Value {
    json!({
        "object": "page",
        "id": PAGE_ID,
        "created_time": "2024-04-01T09:00:00.000Z",
        "last_edited_time": "2024-05-02T15:30:00.000Z",
        "created_by": {"object": "user", "id": "ee5f0f84-409a-440f-983a-a5315961c6e4"},
        "archived": false,
        "in_trash": false,
        "parent": {"type": "workspace", "workspace": true},
        "url": "https://www.notion.so/Project-Roadmap-598337872cf94fdf8782e53db20768a5",
        "public_url": null,
        "properties": {
            "title": {"id": "title", "type": "title", "title": rich("Project Roadmap")},
            "Owner": {"id": "a%3Cb", "type": "people", "people": [{"object": "user", "id": "ee5f0f84-409a-440f-983a-a5315961c6e4", "name": "Ada Lovelace"}]},
            "Due": {"id": "d%3Ee", "type": "date", "date": {"start": "2024-06-30", "end": null, "time_zone": null}}
        }
    })
}

fn block(kind: &str, data: Value) -> Value {
    json!({
        "object": "block",
        "id": format!("b10c{:028x}", kind.len() * 7919 + data.to_string().len()),
        "parent": {"type": "page_id", "page_id": PAGE_ID},
        "created_time": "2024-04-01T09:00:00.000Z",
        "last_edited_time": "2024-05-02T15:30:00.000Z",
        "has_children": false,
        "archived": false,
        "type": kind,
        kind: data
    })
}

fn blocks() -> Vec<Value> {
    vec![
        block("heading_1", json!({"rich_text": rich("Goals"), "color": "default", "is_toggleable": false})),
        block(
            "paragraph",
            json!({"rich_text": [rich("Ship the ")[0].clone(), rich("private agent")[0].clone()], "color": "default"}),
        ),
        block("bulleted_list_item", json!({"rich_text": rich("Encrypted chat"), "color": "default"})),
        block("numbered_list_item", json!({"rich_text": rich("Attestation first"), "color": "default"})),
        block("to_do", json!({"rich_text": rich("Write the tools"), "checked": true, "color": "default"})),
        block("to_do", json!({"rich_text": rich("Review the tools"), "checked": false, "color": "default"})),
        block("quote", json!({"rich_text": rich("Trust, but verify."), "color": "default"})),
        block("code", json!({"rich_text": rich("fn main() {}"), "language": "rust", "caption": []})),
        block("divider", json!({})),
        block("image", json!({"type": "external", "external": {"url": "https://example.com/a.png"}, "caption": []})),
        block("child_database", json!({"title": "Tasks"})),
    ]
}

fn database() -> Value {
    json!({
        "object": "database",
        "id": DATABASE_ID,
        "created_time": "2024-04-01T09:00:00.000Z",
        "last_edited_time": "2024-05-01T11:00:00.000Z",
        "title": rich("Tasks"),
        "description": [],
        "url": "https://www.notion.so/a8aec43c6dc84bb69e5b7a0a3e7f5b21",
        "archived": false,
        "is_inline": true,
        "properties": {
            "Name": {"id": "title", "name": "Name", "type": "title", "title": {}},
            "Status": {"id": "s", "name": "Status", "type": "status", "status": {}}
        },
        "parent": {"type": "page_id", "page_id": PAGE_ID}
    })
}

fn row(n: u32, name: &str, status: &str, priority: Option<&str>, points: Option<f64>, done: bool) -> Value {
    json!({
        "object": "page",
        "id": format!("00000000-0000-4000-8000-00000000000{n}"),
        "created_time": "2024-04-02T09:00:00.000Z",
        "last_edited_time": "2024-05-01T11:00:00.000Z",
        "parent": {"type": "database_id", "database_id": DATABASE_ID},
        "archived": false,
        "url": format!("https://www.notion.so/row-{n}"),
        "properties": {
            "Name": {"id": "title", "type": "title", "title": rich(name)},
            "Status": {"id": "s", "type": "status", "status": {"id": "1", "name": status, "color": "green"}},
            "Priority": {"id": "p", "type": "select", "select": priority.map(|p| json!({"id": "2", "name": p, "color": "red"}))},
            "Points": {"id": "n", "type": "number", "number": points},
            "Tags": {"id": "t", "type": "multi_select", "multi_select": [{"id": "3", "name": "agent", "color": "blue"}, {"id": "4", "name": "tools", "color": "gray"}]},
            "Done": {"id": "c", "type": "checkbox", "checkbox": done},
            "Due": {"id": "d", "type": "date", "date": {"start": "2024-06-01", "end": "2024-06-07", "time_zone": null}},
            "Link": {"id": "u", "type": "url", "url": null},
            "Notes": {"id": "r", "type": "rich_text", "rich_text": rich("See the roadmap")},
            "Key": {"id": "k", "type": "unique_id", "unique_id": {"prefix": "TASK", "number": n}},
            "Score": {"id": "f", "type": "formula", "formula": {"type": "number", "number": f64::from(n) * 1.5}}
        }
    })
}

fn rows() -> Vec<Value> {
    vec![
        row(1, "Write the tools", "Done", Some("High"), Some(5.0), true),
        row(2, "Review the tools", "In progress", Some("Medium"), Some(3.0), false),
        row(3, "Ship", "Not started", None, None, false),
    ]
}

fn page_size(body: &Value) -> Result<usize, Reject> {
    match body.get("page_size") {
        None => Ok(100),
        Some(v) => match v.as_u64() {
            Some(n) if (1..=100).contains(&n) => Ok(n as usize),
            _ => Err(Box::new(validation(&format!(
                "body failed validation: body.page_size should be ≤ `100`, instead was `{v}`."
            )))),
        },
    }
}

fn title(object: &Value) -> String {
    let rich = if object["object"] == "database" { &object["title"] } else { &object["properties"]["title"]["title"] };
    rich.as_array().map(|r| r.iter().filter_map(|p| p["plain_text"].as_str()).collect()).unwrap_or_default()
}

fn search(body: &Value) -> Response {
    let size = match page_size(body) {
        Ok(size) => size,
        Err(e) => return *e,
    };
    let query = body["query"].as_str().unwrap_or("").to_lowercase();
    let wanted = body["filter"]["value"].as_str();
    let results: Vec<Value> = [page(), database()]
        .into_iter()
        .filter(|o| wanted.is_none_or(|w| o["object"] == w))
        .filter(|o| title(o).to_lowercase().contains(&query))
        .take(size)
        .collect();
    axum::Json(list(results, "page_or_database")).into_response()
}

fn query_database(body: &Value) -> Response {
    let size = match page_size(body) {
        Ok(size) => size,
        Err(e) => return *e,
    };
    let mut all = rows();
    if let Some(filter) = body.get("filter") {
        let Some(property) = filter["property"].as_str() else {
            return validation("body failed validation: body.filter.property should be defined.");
        };
        if rows()[0]["properties"].get(property).is_none() {
            return validation(&format!("Could not find property with name or id: {property}"));
        }
        all.retain(|r| {
            let prop = &r["properties"][property];
            match prop["type"].as_str() {
                Some("status") | Some("select") => {
                    let kind = prop["type"].as_str().unwrap_or("");
                    prop[kind]["name"] == filter[kind]["equals"]
                }
                Some("checkbox") => prop["checkbox"] == filter["checkbox"]["equals"],
                _ => true,
            }
        });
    }
    all.truncate(size);
    axum::Json(list(all, "page_or_database")).into_response()
}
