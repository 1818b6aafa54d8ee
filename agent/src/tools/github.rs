//! `github_list_repos`, `github_issues`, `github_read_file`: skeleton, to be written.

use serde_json::{Value, json};

use crate::tool::{Args, Tool, ToolError, ToolFuture};
use crate::tools::ToolContext;

pub struct GithubListRepos;

impl GithubListRepos {
    pub fn new(_ctx: &ToolContext) -> Self {
        GithubListRepos
    }
}

impl Tool for GithubListRepos {
    fn name(&self) -> &'static str {
        "github_list_repos"
    }
    fn description(&self) -> &'static str {
        "not written yet"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::NotConfigured("github_list_repos")) })
    }
}

pub struct GithubIssues;

impl GithubIssues {
    pub fn new(_ctx: &ToolContext) -> Self {
        GithubIssues
    }
}

impl Tool for GithubIssues {
    fn name(&self) -> &'static str {
        "github_issues"
    }
    fn description(&self) -> &'static str {
        "not written yet"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::NotConfigured("github_issues")) })
    }
}

pub struct GithubReadFile;

impl GithubReadFile {
    pub fn new(_ctx: &ToolContext) -> Self {
        GithubReadFile
    }
}

impl Tool for GithubReadFile {
    fn name(&self) -> &'static str {
        "github_read_file"
    }
    fn description(&self) -> &'static str {
        "not written yet"
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn call<'a>(&'a self, _args: &'a Args) -> ToolFuture<'a> {
        Box::pin(async { Err(ToolError::NotConfigured("github_read_file")) })
    }
}
