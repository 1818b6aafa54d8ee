//! `crawl_url`: a small breadth-first crawl of one site.
//!
//! From `url`, pages are fetched one at a time through the SSRF guard of [`crate::fetch`]
//! (so every page and every redirect is checked), links are taken from `<a href>`, resolved
//! against the page's final URL, stripped of fragments, and followed only when they stay on
//! the start URL's origin (scheme, host and port). At most `maxPages` pages are visited
//! (never more than `fetch.crawlMaxPages`), and the crawl stops starting new fetches after
//! `fetch.timeoutSecs`, returning what it has. Each page contributes its title and the start
//! of its text, sized so the whole result fits the tool output cap.

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

use reqwest::Url;
use serde_json::{Value, json};

use super::scrape_url::{page_request, read_page};
use crate::config::FetchConfig;
use crate::fetch::GuardedFetch;
use agent::tool::{Args, Tool, ToolError, ToolFuture, ToolSpec, opt_u64_arg, str_arg};

/// Characters of text per page at most.
const PAGE_TEXT_CHARS: usize = 1_500;
/// Characters of text over all pages (keeps the result under the default output cap).
const TOTAL_TEXT_CHARS: usize = 12_000;
/// Pages visited when the model does not say.
const DEFAULT_PAGES: usize = 5;
/// Links waiting at most (bounds memory on link-heavy sites).
const MAX_QUEUE: usize = 1_000;

const NAME: &str = "crawl_url";

/// `maxPages` is bounded by the configured `fetch.crawlMaxPages`, so this tool's spec among
/// `specs` says that bound and the default under it (`specs.json` holds those of the default
/// configuration).
pub fn bound_pages(specs: &mut [ToolSpec], max_pages: usize) {
    let max_pages = max_pages.max(1);
    for spec in specs.iter_mut().filter(|s| s.name == NAME) {
        spec.parameters["properties"]["maxPages"] = json!({
            "type": "integer", "minimum": 1, "maximum": max_pages,
            "description": format!("Pages to visit (default {}).", DEFAULT_PAGES.min(max_pages))
        });
    }
}

pub struct CrawlUrl {
    fetch: GuardedFetch,
    max_pages: usize,
    time_budget: Duration,
}

impl CrawlUrl {
    pub fn new(fetch: &FetchConfig) -> Self {
        CrawlUrl {
            fetch: GuardedFetch::new(fetch),
            max_pages: fetch.crawl_max_pages.max(1),
            time_budget: Duration::from_secs(fetch.timeout_secs.max(1)),
        }
    }
}

impl Tool for CrawlUrl {
    fn name(&self) -> &'static str {
        NAME
    }
    fn call<'a>(&'a self, args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async move {
            let start = str_arg(args, "url")?.trim();
            let max_pages = match opt_u64_arg(args, "maxPages", self.max_pages as u64)? {
                Some(0) => return Err(ToolError::BadArguments("`maxPages` must be at least 1".into())),
                Some(n) => usize::try_from(n).unwrap_or(self.max_pages),
                None => DEFAULT_PAGES.min(self.max_pages),
            };
            let mut start_url =
                Url::parse(start).map_err(|e| ToolError::BadArguments(format!("`url` is not a valid URL ({e})")))?;
            if !matches!(start_url.scheme(), "http" | "https") {
                return Err(ToolError::Refused("only http and https URLs can be fetched".into()));
            }
            start_url.set_fragment(None);
            self.crawl(start, start_url, max_pages).await
        })
    }
}

impl CrawlUrl {
    async fn crawl(&self, start: &str, start_url: Url, max_pages: usize) -> Result<Value, ToolError> {
        let origin = start_url.origin();
        let text_chars = (TOTAL_TEXT_CHARS / max_pages).min(PAGE_TEXT_CHARS);
        let deadline = tokio::time::Instant::now() + self.time_budget;
        let mut visited: HashSet<String> = HashSet::from([start_url.to_string()]);
        let mut queue = VecDeque::from([start_url]);
        let mut pages = Vec::new();
        let mut stopped_for_time = false;
        while pages.len() < max_pages {
            let Some(url) = queue.pop_front() else { break };
            let fetched = match tokio::time::timeout_at(deadline, self.fetch.fetch(page_request(url.as_str()))).await {
                Ok(result) => result,
                Err(_) => {
                    stopped_for_time = true;
                    break;
                }
            };
            let fetched = match fetched {
                Ok(fetched) => fetched,
                // The start page failing is the tool failing; a later page is one entry.
                Err(e) if pages.is_empty() => return Err(e),
                Err(e) => {
                    pages.push(json!({"url": url.as_str(), "error": e.to_string()}));
                    continue;
                }
            };
            let page = match read_page(&fetched, text_chars) {
                Ok(page) => page,
                Err(e) => {
                    pages.push(json!({"url": url.as_str(), "error": e.to_string()}));
                    continue;
                }
            };
            let base = Url::parse(&fetched.final_url).unwrap_or(url.clone());
            visited.insert(base.to_string());
            for href in &page.links {
                let Ok(mut link) = base.join(href) else { continue };
                link.set_fragment(None);
                if link.origin() != origin || queue.len() >= MAX_QUEUE {
                    continue;
                }
                if visited.insert(link.to_string()) {
                    queue.push_back(link);
                }
            }
            let mut entry = json!({"url": url.as_str(), "title": page.title, "text": page.text});
            if fetched.final_url != url.as_str() {
                entry["finalUrl"] = json!(fetched.final_url);
            }
            if !(200..300).contains(&fetched.status) {
                entry["status"] = json!(fetched.status);
            }
            pages.push(entry);
        }
        if pages.is_empty() {
            return Err(ToolError::Timeout(self.time_budget.as_secs()));
        }
        let mut result = json!({"start": start, "pages": pages});
        if !queue.is_empty() {
            result["unvisitedLinks"] = json!(queue.len());
        }
        if stopped_for_time {
            result["stoppedEarly"] = json!("time limit");
        }
        Ok(result)
    }
}
