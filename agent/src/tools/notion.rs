//! `notion_search`, `notion_get_page`, `notion_query_database`: skeleton, to be written.

use serde_json::{Value, json};

use crate::tool::{Args, Tool, ToolError, ToolFuture};
use crate::tools::ToolContext;

pub struct NotionSearch;

impl NotionSearch {
    pub fn new(_ctx: &ToolContext) -> Self {
        NotionSearch
    }
}

impl Tool for NotionSearch {
    fn name(&self) -> &'static str {
        "notion_search"
    }
    fn description(&self) -> &'static str {
        "not written yet"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::NotConfigured("notion_search")) })
    }
}

pub struct NotionGetPage;

impl NotionGetPage {
    pub fn new(_ctx: &ToolContext) -> Self {
        NotionGetPage
    }
}

impl Tool for NotionGetPage {
    fn name(&self) -> &'static str {
        "notion_get_page"
    }
    fn description(&self) -> &'static str {
        "not written yet"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::NotConfigured("notion_get_page")) })
    }
}

pub struct NotionQueryDatabase;

impl NotionQueryDatabase {
    pub fn new(_ctx: &ToolContext) -> Self {
        NotionQueryDatabase
    }
}

impl Tool for NotionQueryDatabase {
    fn name(&self) -> &'static str {
        "notion_query_database"
    }
    fn description(&self) -> &'static str {
        "not written yet"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::NotConfigured("notion_query_database")) })
    }
}
