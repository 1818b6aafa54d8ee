//! `github_list_repos`, `github_issues`, `github_read_file`: GitHub's REST API (v3).
//!
//! Provider id `github`, base `https://api.github.com`. Every call sends
//! `Accept: application/vnd.github+json` and `X-GitHub-Api-Version: 2022-11-28`, plus
//! `Authorization: Bearer <token>` when a key is configured (public data works without one).
//!
//! - `GET /users/{owner}/repos?per_page=N&sort=updated`
//!   (<https://docs.github.com/en/rest/repos/repos#list-repositories-for-a-user>)
//! - `GET /repos/{owner}/{repo}/issues?state=open|closed|all&per_page=N`; entries carrying
//!   `pull_request` are pull requests and are skipped
//!   (<https://docs.github.com/en/rest/issues/issues#list-repository-issues>)
//! - `GET /repos/{owner}/{repo}/contents/{path}?ref=` — a file comes back as an object with
//!   base64 `content`, a directory as an array
//!   (<https://docs.github.com/en/rest/repos/contents#get-repository-content>)
//!
//! Owner and repository names must use GitHub's character set; file paths are split on `/`,
//! empty, `.` and `..` segments are refused, and each segment is percent-encoded, so no
//! argument can leave `/repos/{owner}/{repo}/contents/` or add a query or fragment.

use base64::Engine as _;
use reqwest::{Method, Url};
use serde_json::{Value, json};

use crate::api::{Api, Key, Statuses};
use crate::http::{cut, cut_value};
use agent::tool::{Args, Tool, ToolError, ToolFuture, opt_str_arg, opt_u64_arg, str_arg};
use agent::tools::ToolContext;

const PROVIDER: &str = "github";
pub(crate) const DEFAULT_LIMIT: u64 = 10;
pub(crate) const MAX_LIMIT: u64 = 30;
/// Characters of a file returned per call; `offset` pages through the rest.
const MAX_FILE_CHARS: usize = 6000;
const MAX_DIR_ENTRIES: usize = 100;
const MAX_DESCRIPTION_CHARS: usize = 300;
/// The contents API serves files up to 1 MB inline (base64, so ~1.4 MB of JSON).
const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// What the three tools share: the API, and GitHub's own headers.
#[derive(Clone)]
struct Github {
    api: Api,
}

impl Github {
    fn new(ctx: &ToolContext) -> Self {
        Github { api: Api::new(ctx, PROVIDER, Key::Optional, STATUSES) }
    }

    async fn get(&self, tool: &'static str, url: Url) -> Result<Value, ToolError> {
        let request = self
            .api
            .request(tool, Method::GET, url)?
            .header(reqwest::header::ACCEPT, "application/vnd.github+json")
            .header("X-GitHub-Api-Version", "2022-11-28");
        self.api.json(request, "answer", MAX_BODY_BYTES).await
    }
}

/// What a status means here (500: any 5xx).
const STATUSES: Statuses = &[
    (401, "credentials rejected"),
    (403, "forbidden or rate limited"),
    (404, "not found"),
    (422, "request rejected"),
    (429, "rate limited"),
    (500, "server error"),
];

/// An owner or repository name: GitHub's characters only, never `.` or `..`.
pub(crate) fn is_name(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 100
        && value != "."
        && value != ".."
        && value.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn check_name(value: &str, key: &str) -> Result<(), ToolError> {
    if is_name(value) {
        Ok(())
    } else {
        Err(ToolError::BadArguments(format!("`{key}` must be a GitHub name (letters, digits, `-`, `_`, `.`)")))
    }
}

/// `owner` and `repo`; `repo` may also be given as `owner/repo` when `owner` is absent.
fn owner_and_repo(args: &Args) -> Result<(String, String), ToolError> {
    let repo = str_arg(args, "repo")?.trim();
    let (owner, repo) = match opt_str_arg(args, "owner")?.map(str::trim).filter(|o| !o.is_empty()) {
        Some(owner) => (owner, repo),
        None => repo.split_once('/').ok_or_else(|| ToolError::BadArguments("`owner` is required".into()))?,
    };
    check_name(owner, "owner")?;
    check_name(repo, "repo")?;
    Ok((owner.to_string(), repo.to_string()))
}

fn limit(args: &Args) -> Result<u64, ToolError> {
    Ok(opt_u64_arg(args, "limit", MAX_LIMIT)?.unwrap_or(DEFAULT_LIMIT).max(1))
}

/// Splits a repository path into segments. Leading and trailing `/` are ignored; empty,
/// `.` and `..` segments (also percent-encoded ones), backslashes and control characters
/// are refused.
fn path_segments(path: &str) -> Result<Vec<&str>, ToolError> {
    let bad = |why: &str| ToolError::BadArguments(format!("`path` {why}"));
    if path.len() > 1000 {
        return Err(bad("is too long"));
    }
    if path.chars().any(|c| c.is_control() || c == '\\') {
        return Err(bad("must not contain control characters or backslashes"));
    }
    let trimmed = path.trim().trim_matches('/');
    if trimmed.is_empty() {
        return Ok(Vec::new());
    }
    let segments: Vec<&str> = trimmed.split('/').collect();
    for segment in &segments {
        let dots = segment.to_ascii_lowercase().replace("%2e", ".");
        if segment.is_empty() || dots == "." || dots == ".." {
            return Err(bad("must be a plain path inside the repository (no empty, `.` or `..` segments)"));
        }
    }
    Ok(segments)
}

// --- github_list_repos ----------------------------------------------------------------------

pub struct GithubListRepos {
    github: Github,
}

impl GithubListRepos {
    pub fn new(ctx: &ToolContext) -> Self {
        GithubListRepos { github: Github::new(ctx) }
    }
}

impl Tool for GithubListRepos {
    fn name(&self) -> &'static str {
        "github_list_repos"
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let tool = self.name();
            self.github.api.upstream(tool)?;
            let owner = str_arg(args, "owner")?.trim();
            check_name(owner, "owner")?;
            let limit = limit(args)?;
            let mut url = self.github.api.endpoint(tool, &["users", owner, "repos"])?;
            url.query_pairs_mut().append_pair("per_page", &limit.to_string()).append_pair("sort", "updated");
            let answer = self.github.get(tool, url).await?;
            let list = answer.as_array().ok_or_else(|| self.github.api.unexpected("answer"))?;
            let repos: Vec<Value> = list
                .iter()
                .take(limit as usize)
                .map(|r| {
                    json!({
                        "name": r["name"],
                        "full_name": r["full_name"],
                        "description": cut_value(&r["description"], MAX_DESCRIPTION_CHARS, false),
                        "stargazers_count": r["stargazers_count"],
                        "language": r["language"],
                        "html_url": r["html_url"],
                        "updated_at": r["updated_at"],
                    })
                })
                .collect();
            Ok(json!({"owner": owner, "count": repos.len(), "repos": repos}))
        })
    }
}

// --- github_issues --------------------------------------------------------------------------

pub struct GithubIssues {
    github: Github,
}

impl GithubIssues {
    pub fn new(ctx: &ToolContext) -> Self {
        GithubIssues { github: Github::new(ctx) }
    }
}

impl Tool for GithubIssues {
    fn name(&self) -> &'static str {
        "github_issues"
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let tool = self.name();
            self.github.api.upstream(tool)?;
            let (owner, repo) = owner_and_repo(args)?;
            let state = match opt_str_arg(args, "state")?.map(|s| s.trim().to_ascii_lowercase()) {
                None => "open".to_string(),
                Some(s) if s.is_empty() => "open".to_string(),
                Some(s) if matches!(s.as_str(), "open" | "closed" | "all") => s,
                Some(_) => return Err(ToolError::BadArguments("`state` must be `open`, `closed` or `all`".into())),
            };
            let limit = limit(args)?;
            let mut url = self.github.api.endpoint(tool, &["repos", &owner, &repo, "issues"])?;
            url.query_pairs_mut().append_pair("state", &state).append_pair("per_page", &limit.to_string());
            let answer = self.github.get(tool, url).await?;
            let list = answer.as_array().ok_or_else(|| self.github.api.unexpected("answer"))?;
            let issues: Vec<Value> = list
                .iter()
                .filter(|i| i.get("pull_request").is_none())
                .take(limit as usize)
                .map(|i| {
                    json!({
                        "number": i["number"],
                        "title": cut_value(&i["title"], MAX_DESCRIPTION_CHARS, false),
                        "state": i["state"],
                        "user": i["user"]["login"],
                        "comments": i["comments"],
                        "html_url": i["html_url"],
                        "created_at": i["created_at"],
                    })
                })
                .collect();
            Ok(json!({"repo": format!("{owner}/{repo}"), "state": state, "count": issues.len(), "issues": issues}))
        })
    }
}

// --- github_read_file -----------------------------------------------------------------------

pub struct GithubReadFile {
    github: Github,
}

impl GithubReadFile {
    pub fn new(ctx: &ToolContext) -> Self {
        GithubReadFile { github: Github::new(ctx) }
    }
}

impl Tool for GithubReadFile {
    fn name(&self) -> &'static str {
        "github_read_file"
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let tool = self.name();
            self.github.api.upstream(tool)?;
            let (owner, repo) = owner_and_repo(args)?;
            let segments = path_segments(opt_str_arg(args, "path")?.unwrap_or(""))?;
            let git_ref = opt_str_arg(args, "ref")?.map(str::trim).filter(|r| !r.is_empty());
            if let Some(r) = git_ref
                && (r.len() > 255 || r.chars().any(|c| c.is_control() || c.is_whitespace()))
            {
                return Err(ToolError::BadArguments("`ref` must be a branch, tag or commit name".into()));
            }
            let offset = opt_u64_arg(args, "offset", u32::MAX as u64)?.unwrap_or(0) as usize;

            let mut parts = vec!["repos", owner.as_str(), repo.as_str(), "contents"];
            parts.extend(segments.iter().copied());
            let mut url = self.github.api.endpoint(tool, &parts)?;
            if let Some(r) = git_ref {
                url.query_pairs_mut().append_pair("ref", r);
            }
            let answer = self.github.get(tool, url).await?;
            let path = segments.join("/");
            match answer {
                Value::Array(entries) => Ok(directory(&path, &entries)),
                Value::Object(_) => file(&answer, offset),
                _ => Err(self.github.api.unexpected("answer")),
            }
        })
    }
}

fn directory(path: &str, entries: &[Value]) -> Value {
    let listed: Vec<Value> = entries
        .iter()
        .take(MAX_DIR_ENTRIES)
        .map(|e| {
            let mut entry = json!({"name": e["name"], "type": e["type"]});
            if e["type"] == "file" {
                entry["size"] = e["size"].clone();
            }
            entry
        })
        .collect();
    json!({
        "type": "dir",
        "path": path,
        "count": entries.len(),
        "entries": listed,
        "truncated": entries.len() > MAX_DIR_ENTRIES,
    })
}

fn file(answer: &Value, offset: usize) -> Result<Value, ToolError> {
    let kind = answer["type"].as_str().unwrap_or("");
    let mut out = json!({"type": kind, "path": answer["path"], "size": answer["size"], "sha": answer["sha"]});
    if kind != "file" {
        // Symlinks and submodules: say what they point at, nothing to decode.
        if let Some(target) = answer.get("target").filter(|t| t.is_string()) {
            out["target"] = target.clone();
        }
        return Ok(out);
    }
    let encoded = match (answer["encoding"].as_str(), answer["content"].as_str()) {
        (Some("base64"), Some(content)) => content,
        _ => {
            out["content"] = Value::Null;
            out["note"] = json!("the file is too large for the contents API");
            return Ok(out);
        }
    };
    let compact: String = encoded.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact.as_bytes())
        .map_err(|_| ToolError::Upstream(format!("{PROVIDER}: file content is not valid base64")))?;
    let Ok(text) = String::from_utf8(bytes) else {
        out["binary"] = json!(true);
        out["content"] = Value::Null;
        return Ok(out);
    };
    let total = text.chars().count();
    let start = text.char_indices().nth(offset).map(|(i, _)| i).unwrap_or(text.len());
    let (content, truncated) = cut(&text[start..], MAX_FILE_CHARS);
    out["content"] = json!(content);
    out["chars"] = json!(total);
    out["offset"] = json!(offset.min(total));
    out["truncated"] = json!(truncated);
    if truncated {
        out["nextOffset"] = json!(offset + MAX_FILE_CHARS);
    }
    Ok(out)
}
