//! The thirteen tools of the plaintext path beyond the enclave's five, and the eighteen-tool
//! set the relay offers.

pub mod colosseum;
pub mod crawl_url;
pub mod deepwiki;
pub mod github;
pub mod notion;
pub mod paysh;
pub mod scrape_url;

use agent::tool::Tool;
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
    ToolSet::new(tools, limits_of(&shared))
}
