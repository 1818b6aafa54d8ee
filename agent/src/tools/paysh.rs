//! `paysh_search_apis`, `paysh_call_api`: skeleton, to be written.

use serde_json::{Value, json};

use crate::tool::{Args, Tool, ToolError, ToolFuture};
use crate::tools::ToolContext;

pub struct PayshSearchApis;

impl PayshSearchApis {
    pub fn new(_ctx: &ToolContext) -> Self {
        PayshSearchApis
    }
}

impl Tool for PayshSearchApis {
    fn name(&self) -> &'static str {
        "paysh_search_apis"
    }
    fn description(&self) -> &'static str {
        "not written yet"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::NotConfigured("paysh_search_apis")) })
    }
}

pub struct PayshCallApi;

impl PayshCallApi {
    pub fn new(_ctx: &ToolContext) -> Self {
        PayshCallApi
    }
}

impl Tool for PayshCallApi {
    fn name(&self) -> &'static str {
        "paysh_call_api"
    }
    fn description(&self) -> &'static str {
        "not written yet"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::NotConfigured("paysh_call_api")) })
    }
}
