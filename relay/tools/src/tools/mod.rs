//! The thirteen tools of the plaintext path beyond the enclave's five, and the eighteen-tool
//! set the relay offers.

pub mod colosseum;
pub mod crawl_url;
pub mod deepwiki;
pub mod github;
pub mod notion;
pub mod paysh;
pub mod scrape_url;

use agent::tool::{Tool, read_specs};
use agent::tools::{ToolContext, solana_balance, swap_quote, token_price, trending_tokens, web_search};
use agent::toolset::{ToolSet, limits_of};

use crate::config::ToolsConfig;

/// All eighteen tools of the default path (contract §2.4), in registration order.
pub const ALL_TOOL_NAMES: [&str; 18] = [
    "web_search",
    "scrape_url",
    "crawl_url",
    "solana_balance",
    "token_price",
    "swap_quote",
    "trending_tokens",
    "deepwiki",
    "colosseum_search",
    "colosseum_archives",
    "paysh_search_apis",
    "paysh_call_api",
    "github_list_repos",
    "github_issues",
    "github_read_file",
    "notion_search",
    "notion_get_page",
    "notion_query_database",
];

/// All eighteen tools of the default path.
pub fn full(config: &ToolsConfig) -> ToolSet {
    let shared = config.shared();
    let ctx = ToolContext::from_config(&shared);
    let fetch = &config.fetch;
    let tools: Vec<Box<dyn Tool>> = vec![
        Box::new(web_search::WebSearch::new(&ctx)),
        Box::new(scrape_url::ScrapeUrl::new(fetch)),
        Box::new(crawl_url::CrawlUrl::new(fetch)),
        Box::new(solana_balance::SolanaBalance::new(&ctx)),
        Box::new(token_price::TokenPrice::new(&ctx)),
        Box::new(swap_quote::SwapQuote::new(&ctx)),
        Box::new(trending_tokens::TrendingTokens::new(&ctx)),
        Box::new(deepwiki::Deepwiki::new(&ctx)),
        Box::new(colosseum::ColosseumSearch::new(&ctx)),
        Box::new(colosseum::ColosseumArchives::new(&ctx)),
        Box::new(paysh::PayshSearchApis::new(&ctx)),
        Box::new(paysh::PayshCallApi::new(&ctx, fetch)),
        Box::new(github::GithubListRepos::new(&ctx)),
        Box::new(github::GithubIssues::new(&ctx)),
        Box::new(github::GithubReadFile::new(&ctx)),
        Box::new(notion::NotionSearch::new(&ctx)),
        Box::new(notion::NotionGetPage::new(&ctx)),
        Box::new(notion::NotionQueryDatabase::new(&ctx)),
    ];
    let mut specs = agent::tools::specs();
    specs.extend(read_specs(include_str!("specs.json")));
    crawl_url::bound_pages(&mut specs, fetch.crawl_max_pages);
    ToolSet::new(tools, &specs, limits_of(&shared))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The eighteen tools are offered, each with its spec; `github`'s bounds are its code's.
    #[test]
    fn every_tool_is_offered_with_its_bounds() {
        let set = full(&ToolsConfig::default());
        assert_eq!(set.names(), ALL_TOOL_NAMES);
        let offered: Vec<&str> = set.specs().iter().map(|s| s["function"]["name"].as_str().unwrap()).collect();
        assert_eq!(offered, ALL_TOOL_NAMES);
        let limit = &set.specs()[12]["function"]["parameters"]["properties"]["limit"];
        assert_eq!(limit["maximum"], github::MAX_LIMIT);
        assert_eq!(limit["description"], format!("Repositories to return (default {}).", github::DEFAULT_LIMIT));
    }

    /// `crawl_url`'s page bound follows the configuration, and so does what the model is told.
    #[test]
    fn the_crawl_bound_follows_the_configuration() {
        let pages = |config: &str| {
            let set = full(&serde_json::from_str(config).unwrap());
            let specs = set.specs();
            let crawl = specs.iter().find(|s| s["function"]["name"] == "crawl_url").unwrap();
            crawl["function"]["parameters"]["properties"]["maxPages"].clone()
        };
        let three = pages(r#"{"fetch": {"crawlMaxPages": 3}}"#);
        assert_eq!((&three["maximum"], &three["description"]), (&3.into(), &"Pages to visit (default 3).".into()));
        let twenty = pages(r#"{"fetch": {"crawlMaxPages": 20}}"#);
        assert_eq!((&twenty["maximum"], &twenty["description"]), (&20.into(), &"Pages to visit (default 5).".into()));
    }
}
