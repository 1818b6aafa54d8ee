//! Stand-in for GitHub's REST API (v3): the three calls the `github_*` tools make.
//!
//! ```ignore
//! pub async fn start(token: Option<&str>) -> (Running, Log)
//! ```
//!
//! Starts the server; point the `github` upstream's base URL at `running.base_url`. `token` is
//! the one valid credential: a request with an `Authorization` header must carry
//! `Bearer <token>` (or `token <token>`), otherwise 401 `{"message":"Bad credentials",...}`;
//! requests without one are served as anonymous (public data). Like GitHub, a request without
//! `User-Agent` gets 403 and an unsupported `X-GitHub-Api-Version` gets 400. The [`Log`]
//! records every request (method, raw path, query, headers, body).
//!
//! Served:
//! - `GET /users/octocat/repos?per_page&sort=updated` — three repositories;
//! - `GET /repos/octocat/hello-world/issues?state&per_page` — open, closed issues and one
//!   pull request (an entry with `pull_request`); an unknown `state` gets 422;
//! - `GET /repos/octocat/hello-world/contents/{path}?ref=` — files as
//!   `{type:"file", encoding:"base64", content (wrapped at 60 columns), size, sha, path, ...}`,
//!   directories as arrays: `README.md` (different text at `ref=v1`), `src/main.rs`,
//!   `docs/a b.md`, `big.txt` (10 000 characters), `logo.png` (binary); the root and `src`,
//!   `docs` directories.
//!
//! Anything else is 404 `{"message":"Not Found","documentation_url":...,"status":"404"}`.
//! Failure triggers: owner `status-500` answers 500, owner `garbled` answers 200 with HTML.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::{Incoming, Running};

pub use crate::{Log, Seen};

struct Stand {
    token: Option<String>,
    log: Log,
}

pub async fn start(token: Option<&str>) -> (Running, Log) {
    let log: Log = Arc::default();
    let stand = Arc::new(Stand { token: token.map(str::to_string), log: log.clone() });
    let running = crate::serve(Router::new().fallback(handle).with_state(stand)).await;
    (running, log)
}

const DOCS: &str = "https://docs.github.com/rest";

fn error(status: StatusCode, message: &str, docs: &str) -> Response {
    let body = json!({"message": message, "documentation_url": docs, "status": status.as_u16().to_string()});
    (status, axum::Json(body)).into_response()
}

fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "Not Found", "https://docs.github.com/rest")
}

async fn handle(State(stand): State<Arc<Stand>>, request: Incoming) -> Response {
    crate::record(&stand.log, request.seen());
    let Incoming { method, uri, headers, body: _ } = request;

    if !headers.contains_key(header::USER_AGENT) {
        return error(
            StatusCode::FORBIDDEN,
            "Request forbidden by administrative rules. Please make sure your request has a User-Agent header.",
            "https://docs.github.com/en/rest/using-the-rest-api/getting-started-with-the-rest-api",
        );
    }
    if let Some(auth) = headers.get(header::AUTHORIZATION) {
        let auth = auth.to_str().unwrap_or("");
        let given = auth.strip_prefix("Bearer ").or_else(|| auth.strip_prefix("token "));
        if stand.token.is_none() || given != stand.token.as_deref() {
            return error(StatusCode::UNAUTHORIZED, "Bad credentials", DOCS);
        }
    }
    if let Some(version) = headers.get("x-github-api-version") {
        let version = version.to_str().unwrap_or("");
        if version != "2022-11-28" && version != "2026-03-10" {
            return error(StatusCode::BAD_REQUEST, &format!("API version {version} is not supported."), DOCS);
        }
    }
    if method != Method::GET {
        return not_found();
    }
    let query: HashMap<String, String> =
        Query::<HashMap<String, String>>::try_from_uri(&uri).map(|q| q.0).unwrap_or_default();
    let segments: Vec<String> = uri.path().trim_start_matches('/').split('/').map(percent_decode).collect();
    let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
    match segs.as_slice() {
        ["users", "status-500", "repos"] => {
            (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(json!({"message": "Server Error"}))).into_response()
        }
        ["users", "garbled", "repos"] => {
            ([(header::CONTENT_TYPE, "text/html")], "<html><body>unicorn secret-page</body></html>").into_response()
        }
        ["users", "octocat", "repos"] => repos(&query),
        ["repos", "octocat", "hello-world", "issues"] => issues(&query),
        ["repos", "octocat", "hello-world", "contents", path @ ..] => contents(&path.join("/"), query.get("ref")),
        _ => not_found(),
    }
}

fn per_page(query: &HashMap<String, String>) -> usize {
    query.get("per_page").and_then(|p| p.parse().ok()).unwrap_or(30).min(100)
}

fn repo(name: &str, description: Option<&str>, stars: u64, language: Option<&str>, updated: &str) -> Value {
    json!({
        "id": stars + 1_000_000,
        "node_id": format!("R_{name}"),
        "name": name,
        "full_name": format!("octocat/{name}"),
        "private": false,
        "owner": {"login": "octocat", "id": 583231, "type": "User", "site_admin": false},
        "html_url": format!("https://github.com/octocat/{name}"),
        "description": description,
        "fork": false,
        "url": format!("https://api.github.com/repos/octocat/{name}"),
        "created_at": "2011-01-26T19:01:12Z",
        "updated_at": updated,
        "pushed_at": updated,
        "homepage": null,
        "size": 108,
        "stargazers_count": stars,
        "watchers_count": stars,
        "language": language,
        "forks_count": stars / 3,
        "open_issues_count": 3,
        "default_branch": "main",
        "topics": [],
        "visibility": "public"
    })
}

fn repos(query: &HashMap<String, String>) -> Response {
    let all = [
        repo("hello-world", Some("My first repository on GitHub!"), 2500, Some("Ruby"), "2024-05-01T10:00:00Z"),
        repo(
            "spoon-knife",
            Some("This repo is for demonstration purposes only."),
            12000,
            Some("HTML"),
            "2024-03-12T08:30:00Z",
        ),
        repo("linguist", None, 70, None, "2023-11-02T16:45:00Z"),
    ];
    let list: Vec<Value> = all.into_iter().take(per_page(query)).collect();
    axum::Json(Value::Array(list)).into_response()
}

fn issue(number: u64, title: &str, state: &str, login: &str, comments: u64, pull: bool) -> Value {
    let mut issue = json!({
        "id": 1_000_000 + number,
        "number": number,
        "title": title,
        "state": state,
        "user": {"login": login, "id": number * 7, "type": "User"},
        "labels": [{"name": "bug", "color": "f29513"}],
        "comments": comments,
        "body": "Long body text that the tool should not pass on.",
        "html_url": format!("https://github.com/octocat/hello-world/{}/{number}", if pull { "pull" } else { "issues" }),
        "url": format!("https://api.github.com/repos/octocat/hello-world/issues/{number}"),
        "created_at": format!("2024-04-{:02}T12:00:00Z", number % 28 + 1),
        "updated_at": "2024-05-01T12:00:00Z",
        "closed_at": if state == "closed" { json!("2024-04-30T12:00:00Z") } else { Value::Null },
        "author_association": "OWNER"
    });
    if pull {
        issue["pull_request"] = json!({
            "url": format!("https://api.github.com/repos/octocat/hello-world/pulls/{number}"),
            "html_url": format!("https://github.com/octocat/hello-world/pull/{number}")
        });
    }
    issue
}

fn issues(query: &HashMap<String, String>) -> Response {
    let state = query.get("state").map(String::as_str).unwrap_or("open");
    if !matches!(state, "open" | "closed" | "all") {
        let body = json!({
            "message": "Validation Failed",
            "errors": [{"resource": "Issue", "field": "state", "code": "invalid"}],
            "documentation_url": "https://docs.github.com/rest/issues/issues#list-repository-issues",
            "status": "422"
        });
        return (StatusCode::UNPROCESSABLE_ENTITY, axum::Json(body)).into_response();
    }
    let all = [
        issue(42, "Found a bug", "open", "octocat", 3, false),
        issue(41, "Add a feature", "open", "hubot", 1, true),
        issue(40, "Docs typo", "open", "hubot", 0, false),
        issue(12, "Old crash", "closed", "monalisa", 8, false),
    ];
    let list: Vec<Value> =
        all.into_iter().filter(|i| state == "all" || i["state"] == state).take(per_page(query)).collect();
    axum::Json(Value::Array(list)).into_response()
}

/// path → (bytes, at `ref=v1`).
fn file_bytes(path: &str, git_ref: Option<&String>) -> Option<Vec<u8>> {
    let v1 = git_ref.is_some_and(|r| r == "v1");
    Some(match path {
        "README.md" if v1 => b"# Hello World (v1)\n".to_vec(),
        "README.md" => b"# Hello World\n\nThis is a test repository. It has a caf\xc3\xa9.\n".to_vec(),
        "src/main.rs" => b"fn main() {\n    println!(\"hello\");\n}\n".to_vec(),
        "docs/a b.md" => b"Spaces in names work.\n".to_vec(),
        "big.txt" => "abcdefghij".repeat(1000).into_bytes(),
        "logo.png" => vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe, 0x80],
        _ => return None,
    })
}

fn dir_entries(path: &str) -> Option<Vec<(&'static str, &'static str)>> {
    Some(match path {
        "" => vec![("README.md", "file"), ("big.txt", "file"), ("docs", "dir"), ("logo.png", "file"), ("src", "dir")],
        "src" => vec![("main.rs", "file")],
        "docs" => vec![("a b.md", "file")],
        _ => return None,
    })
}

fn sha(bytes: &[u8]) -> String {
    // Not git's SHA-1, just a stable 40-hex-digit id.
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}{:016x}{:08x}", h.rotate_left(17), (h >> 7) as u32)
}

fn item(path: &str, kind: &str, bytes: Option<&[u8]>) -> Value {
    let name = path.rsplit('/').next().unwrap_or(path);
    let size = bytes.map(<[u8]>::len).unwrap_or(0);
    json!({
        "type": kind,
        "size": size,
        "name": name,
        "path": path,
        "sha": sha(path.as_bytes()),
        "url": format!("https://api.github.com/repos/octocat/hello-world/contents/{path}?ref=main"),
        "html_url": format!("https://github.com/octocat/hello-world/{}/main/{path}", if kind == "dir" { "tree" } else { "blob" }),
        "git_url": format!("https://api.github.com/repos/octocat/hello-world/git/blobs/{}", sha(path.as_bytes())),
        "download_url": if kind == "file" { json!(format!("https://raw.githubusercontent.com/octocat/hello-world/main/{path}")) } else { Value::Null },
    })
}

fn contents(path: &str, git_ref: Option<&String>) -> Response {
    if let Some(entries) = dir_entries(path) {
        let list: Vec<Value> = entries
            .into_iter()
            .map(|(name, kind)| {
                let full = if path.is_empty() { name.to_string() } else { format!("{path}/{name}") };
                let bytes = file_bytes(&full, None);
                item(&full, kind, bytes.as_deref())
            })
            .collect();
        return axum::Json(Value::Array(list)).into_response();
    }
    let Some(bytes) = file_bytes(path, git_ref) else {
        return error(
            StatusCode::NOT_FOUND,
            "Not Found",
            "https://docs.github.com/rest/repos/contents#get-repository-content",
        );
    };
    let mut file = item(path, "file", Some(&bytes));
    file["sha"] = json!(sha(&bytes));
    file["encoding"] = json!("base64");
    file["content"] = json!(base64_wrapped(&bytes));
    axum::Json(file).into_response()
}

/// Standard base64 with padding, a newline every 60 characters, as GitHub sends it.
fn base64_wrapped(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut plain = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                plain.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                plain.push('=');
            }
        }
    }
    let mut wrapped = String::new();
    for (i, c) in plain.chars().enumerate() {
        if i > 0 && i % 60 == 0 {
            wrapped.push('\n');
        }
        wrapped.push(c);
    }
    wrapped.push('\n');
    wrapped
}

/// Decodes `%XX` escapes (invalid ones are kept as they are).
fn percent_decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(v) = std::str::from_utf8(&bytes[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
