//! `colosseum_search`, `colosseum_archives`: skeleton, to be written.

use serde_json::{Value, json};

use crate::tool::{Args, Tool, ToolError, ToolFuture};
use crate::tools::ToolContext;

pub struct ColosseumSearch;

impl ColosseumSearch {
    pub fn new(_ctx: &ToolContext) -> Self {
        ColosseumSearch
    }
}

impl Tool for ColosseumSearch {
    fn name(&self) -> &'static str {
        "colosseum_search"
    }
    fn description(&self) -> &'static str {
        "not written yet"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::NotConfigured("colosseum_search")) })
    }
}

pub struct ColosseumArchives;

impl ColosseumArchives {
    pub fn new(_ctx: &ToolContext) -> Self {
        ColosseumArchives
    }
}

impl Tool for ColosseumArchives {
    fn name(&self) -> &'static str {
        "colosseum_archives"
    }
    fn description(&self) -> &'static str {
        "not written yet"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::NotConfigured("colosseum_archives")) })
    }
}
