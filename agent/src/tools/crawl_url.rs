//! `crawl_url`: skeleton, to be written.

use serde_json::{Value, json};

use crate::tool::{Args, Tool, ToolError, ToolFuture};
use crate::tools::ToolContext;

pub struct CrawlUrl;

impl CrawlUrl {
    pub fn new(_ctx: &ToolContext) -> Self {
        CrawlUrl
    }
}

impl Tool for CrawlUrl {
    fn name(&self) -> &'static str {
        "crawl_url"
    }
    fn description(&self) -> &'static str {
        "not written yet"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::NotConfigured("crawl_url")) })
    }
}
