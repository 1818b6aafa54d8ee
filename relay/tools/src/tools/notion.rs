//! `notion_search`, `notion_get_page`, `notion_query_database`: Notion's public API.
//!
//! Provider id `notion`, base `https://api.notion.com`. Every call sends
//! `Authorization: Bearer <integration token>` (required: without a key the tools answer
//! "not configured") and `Notion-Version: 2022-06-28`.
//!
//! - `POST /v1/search` `{query, page_size, filter?}` (<https://developers.notion.com/reference/post-search>)
//! - `GET /v1/pages/{id}` (<https://developers.notion.com/reference/retrieve-a-page>) and
//!   `GET /v1/blocks/{id}/children?page_size=100`
//!   (<https://developers.notion.com/reference/get-block-children>)
//! - `POST /v1/databases/{id}/query` `{page_size, filter?}`
//!   (<https://developers.notion.com/reference/post-database-query>)
//!
//! Ids must be 32 hex digits, with or without the 8-4-4-4-12 dashes; they are sent in the
//! dashed form, so nothing from the arguments reaches the path unchecked.

use reqwest::{Method, Url};
use serde_json::{Map, Value, json};

use crate::api::{Api, Key, Statuses};
use crate::http::cut;
use agent::tool::{Args, Tool, ToolError, ToolFuture, opt_str_arg, opt_u64_arg, str_arg};
use agent::tools::ToolContext;

const PROVIDER: &str = "notion";
const NOTION_VERSION: &str = "2022-06-28";
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
const MAX_PAGE_CHARS: usize = 4000;
const MAX_VALUE_CHARS: usize = 300;
const MAX_PROPERTIES: usize = 25;

#[derive(Clone)]
struct Notion {
    api: Api,
}

impl Notion {
    fn new(ctx: &ToolContext) -> Self {
        Notion { api: Api::new(ctx, PROVIDER, Key::Required, STATUSES) }
    }

    async fn send(
        &self,
        tool: &'static str,
        method: Method,
        url: Url,
        body: Option<Value>,
    ) -> Result<Value, ToolError> {
        let mut request = self
            .api
            .request(tool, method, url)?
            .header("Notion-Version", NOTION_VERSION)
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(body) = body {
            request = request.json(&body);
        }
        let value = self.api.json(request, "answer", MAX_BODY_BYTES).await?;
        if !value.is_object() {
            return Err(self.api.unexpected("answer"));
        }
        Ok(value)
    }
}

/// What a status means here (500: any 5xx).
const STATUSES: Statuses = &[
    (400, "request rejected"),
    (401, "credentials rejected"),
    (403, "the integration lacks access"),
    (404, "not found, or not shared with the integration"),
    (409, "conflict"),
    (429, "rate limited"),
    (500, "server error"),
];

/// A Notion id: 32 hex digits, bare or in the dashed 8-4-4-4-12 form. Returns the dashed form.
fn notion_id(args: &Args, key: &str) -> Result<String, ToolError> {
    let raw = str_arg(args, key)?.trim();
    let bad = || ToolError::BadArguments(format!("`{key}` must be a Notion id: 32 hex digits, with or without dashes"));
    let hex: String = match raw.len() {
        32 => raw.to_string(),
        36 => {
            let dashes_in_place = raw.char_indices().all(|(i, c)| (c == '-') == matches!(i, 8 | 13 | 18 | 23));
            if !dashes_in_place {
                return Err(bad());
            }
            raw.replace('-', "")
        }
        _ => return Err(bad()),
    };
    if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let hex = hex.to_ascii_lowercase();
    Ok(format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..]))
}

/// The concatenated `plain_text` of a rich-text array.
fn plain_text(rich: &Value) -> String {
    rich.as_array()
        .map(|parts| parts.iter().filter_map(|p| p["plain_text"].as_str()).collect::<String>())
        .unwrap_or_default()
}

/// A page's title is its `title`-typed property; a database's is its top-level `title`.
fn title_of(object: &Value) -> String {
    if object["object"] == "database" {
        return plain_text(&object["title"]);
    }
    object["properties"]
        .as_object()
        .and_then(|props| props.values().find(|p| p["type"] == "title"))
        .map(|p| plain_text(&p["title"]))
        .unwrap_or_default()
}

fn short(s: &str) -> Value {
    Value::String(cut(s, MAX_VALUE_CHARS).0)
}

fn names(list: &Value, field: &str) -> Value {
    let joined = list
        .as_array()
        .map(|items| {
            items.iter().filter_map(|i| i[field].as_str().or_else(|| i["id"].as_str())).collect::<Vec<_>>().join(", ")
        })
        .unwrap_or_default();
    short(&joined)
}

fn date(d: &Value) -> Value {
    match (d["start"].as_str(), d["end"].as_str()) {
        (Some(start), Some(end)) => json!(format!("{start} → {end}")),
        (Some(start), None) => json!(start),
        _ => Value::Null,
    }
}

/// One property value as a string, number or boolean (null when empty or unknown).
fn flatten_property(prop: &Value) -> Value {
    let Some(kind) = prop["type"].as_str() else {
        return Value::Null;
    };
    let v = &prop[kind];
    match kind {
        "title" | "rich_text" => short(&plain_text(v)),
        "number" | "checkbox" => v.clone(),
        "select" | "status" => v["name"].as_str().map(short).unwrap_or(Value::Null),
        "multi_select" => names(v, "name"),
        "date" => date(v),
        "url" | "email" | "phone_number" | "created_time" | "last_edited_time" => {
            v.as_str().map(short).unwrap_or(Value::Null)
        }
        "people" => names(v, "name"),
        "relation" => names(v, "id"),
        "files" => names(v, "name"),
        "created_by" | "last_edited_by" => {
            v["name"].as_str().or_else(|| v["id"].as_str()).map(short).unwrap_or(Value::Null)
        }
        "formula" => match v["type"].as_str() {
            Some("string") => v["string"].as_str().map(short).unwrap_or(Value::Null),
            Some("number") => v["number"].clone(),
            Some("boolean") => v["boolean"].clone(),
            Some("date") => date(&v["date"]),
            _ => Value::Null,
        },
        "rollup" => match v["type"].as_str() {
            Some("number") => v["number"].clone(),
            Some("date") => date(&v["date"]),
            Some("array") => json!(v["array"].as_array().map(Vec::len).unwrap_or(0)),
            _ => Value::Null,
        },
        "unique_id" => match (v["prefix"].as_str(), v["number"].as_u64()) {
            (Some(prefix), Some(n)) => json!(format!("{prefix}-{n}")),
            (None, Some(n)) => json!(n),
            _ => Value::Null,
        },
        _ => Value::Null,
    }
}

fn flatten_properties(object: &Value) -> Value {
    let mut out = Map::new();
    if let Some(props) = object["properties"].as_object() {
        for (name, prop) in props.iter().take(MAX_PROPERTIES) {
            out.insert(name.clone(), flatten_property(prop));
        }
    }
    Value::Object(out)
}

/// One block as a line of text (markdown-ish), or `None` for blocks without text.
fn block_line(block: &Value) -> Option<String> {
    let kind = block["type"].as_str()?;
    let data = &block[kind];
    let text = plain_text(&data["rich_text"]);
    Some(match kind {
        "paragraph" | "callout" | "toggle" => text,
        "heading_1" => format!("# {text}"),
        "heading_2" => format!("## {text}"),
        "heading_3" => format!("### {text}"),
        "bulleted_list_item" => format!("- {text}"),
        "numbered_list_item" => format!("1. {text}"),
        "to_do" => format!("[{}] {text}", if data["checked"] == true { "x" } else { " " }),
        "quote" => format!("> {text}"),
        "code" => format!("```{}\n{text}\n```", data["language"].as_str().unwrap_or("")),
        "divider" => "---".to_string(),
        "child_page" | "child_database" => {
            format!("[{}] {}", kind.trim_start_matches("child_"), data["title"].as_str()?)
        }
        _ => return None,
    })
}

fn results(answer: &Value) -> Result<&Vec<Value>, ToolError> {
    answer["results"].as_array().ok_or_else(|| ToolError::Upstream(format!("{PROVIDER}: unexpected answer")))
}

// --- notion_search --------------------------------------------------------------------------

pub struct NotionSearch {
    notion: Notion,
}

impl NotionSearch {
    pub fn new(ctx: &ToolContext) -> Self {
        NotionSearch { notion: Notion::new(ctx) }
    }
}

impl Tool for NotionSearch {
    fn name(&self) -> &'static str {
        "notion_search"
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let tool = self.name();
            self.notion.api.upstream(tool)?;
            let query = opt_str_arg(args, "query")?.unwrap_or("").trim();
            if query.chars().count() > 500 {
                return Err(ToolError::BadArguments("`query` is too long".into()));
            }
            let limit = opt_u64_arg(args, "limit", 20)?.unwrap_or(10).max(1);
            let mut body = json!({"query": query, "page_size": limit});
            match opt_str_arg(args, "type")?.map(str::trim) {
                None | Some("") => {}
                Some(kind @ ("page" | "database")) => body["filter"] = json!({"property": "object", "value": kind}),
                Some(_) => return Err(ToolError::BadArguments("`type` must be `page` or `database`".into())),
            }
            let url = self.notion.api.endpoint(tool, &["v1", "search"])?;
            let answer = self.notion.send(tool, Method::POST, url, Some(body)).await?;
            let found: Vec<Value> = results(&answer)?
                .iter()
                .take(limit as usize)
                .map(|r| {
                    json!({
                        "object": r["object"],
                        "id": r["id"],
                        "title": short(&title_of(r)),
                        "url": r["url"],
                        "last_edited_time": r["last_edited_time"],
                    })
                })
                .collect();
            Ok(json!({"count": found.len(), "has_more": answer["has_more"] == true, "results": found}))
        })
    }
}

// --- notion_get_page ------------------------------------------------------------------------

pub struct NotionGetPage {
    notion: Notion,
}

impl NotionGetPage {
    pub fn new(ctx: &ToolContext) -> Self {
        NotionGetPage { notion: Notion::new(ctx) }
    }
}

impl Tool for NotionGetPage {
    fn name(&self) -> &'static str {
        "notion_get_page"
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let tool = self.name();
            self.notion.api.upstream(tool)?;
            let id = notion_id(args, "page_id")?;
            let page_url = self.notion.api.endpoint(tool, &["v1", "pages", &id])?;
            let mut blocks_url = self.notion.api.endpoint(tool, &["v1", "blocks", &id, "children"])?;
            blocks_url.query_pairs_mut().append_pair("page_size", "100");
            let (page, blocks) = tokio::try_join!(
                self.notion.send(tool, Method::GET, page_url, None),
                self.notion.send(tool, Method::GET, blocks_url, None),
            )?;
            let lines: Vec<String> = results(&blocks)?.iter().filter_map(block_line).collect();
            let (content, truncated) = cut(&lines.join("\n"), MAX_PAGE_CHARS);
            Ok(json!({
                "id": page["id"],
                "url": page["url"],
                "title": short(&title_of(&page)),
                "last_edited_time": page["last_edited_time"],
                "properties": flatten_properties(&page),
                "content": content,
                "truncated": truncated,
                "more_blocks": blocks["has_more"] == true,
            }))
        })
    }
}

// --- notion_query_database ------------------------------------------------------------------

pub struct NotionQueryDatabase {
    notion: Notion,
}

impl NotionQueryDatabase {
    pub fn new(ctx: &ToolContext) -> Self {
        NotionQueryDatabase { notion: Notion::new(ctx) }
    }
}

impl Tool for NotionQueryDatabase {
    fn name(&self) -> &'static str {
        "notion_query_database"
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let tool = self.name();
            self.notion.api.upstream(tool)?;
            let id = notion_id(args, "database_id")?;
            let limit = opt_u64_arg(args, "limit", 50)?.unwrap_or(20).max(1);
            let mut body = json!({"page_size": limit});
            match args.get("filter") {
                None | Some(Value::Null) => {}
                Some(filter @ Value::Object(_)) => body["filter"] = filter.clone(),
                Some(_) => return Err(ToolError::BadArguments("`filter` must be a Notion filter object".into())),
            }
            let url = self.notion.api.endpoint(tool, &["v1", "databases", &id, "query"])?;
            let answer = self.notion.send(tool, Method::POST, url, Some(body)).await?;
            let rows: Vec<Value> = results(&answer)?
                .iter()
                .take(limit as usize)
                .map(|row| json!({"id": row["id"], "url": row["url"], "properties": flatten_properties(row)}))
                .collect();
            Ok(json!({"count": rows.len(), "has_more": answer["has_more"] == true, "rows": rows}))
        })
    }
}
