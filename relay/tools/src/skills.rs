//! The skill graph of the plaintext path: tools grouped into skills, rendered into the
//! system prompt so a small model sees what it can do and when. It shapes only the prompt;
//! it is never returned (no `skillGraph` field) and never used in encrypted mode.

/// Skill → the tools that serve it, and when to reach for them.
pub const SKILLS: &[(&str, &str, &[&str])] = &[
    ("Web research", "current events, facts, documentation", &["web_search", "scrape_url", "crawl_url"]),
    ("Solana markets", "token prices, trending tokens, swap routes", &["token_price", "trending_tokens", "swap_quote"]),
    ("Wallets", "SOL and token balances of an address", &["solana_balance"]),
    (
        "Code",
        "repositories, issues, files, explanations of a codebase",
        &["github_list_repos", "github_issues", "github_read_file", "deepwiki"],
    ),
    ("Hackathons", "Colosseum projects and archives", &["colosseum_search", "colosseum_archives"]),
    ("Paid APIs", "find and call pay-per-call APIs", &["paysh_search_apis", "paysh_call_api"]),
    ("Notes", "the operator's Notion workspace", &["notion_search", "notion_get_page", "notion_query_database"]),
];

/// The system prompt for a loop offering `available` tools (none: a plain completion).
pub fn system_prompt(available: &[&str]) -> String {
    let mut prompt = String::from(
        "You are a helpful research agent. Answer in Markdown, concisely. Use a tool only when the question needs \
         fresh or external data; never invent tool results.",
    );
    let lines: Vec<String> = SKILLS
        .iter()
        .filter_map(|(skill, when, tools)| {
            let offered: Vec<&str> = tools.iter().copied().filter(|t| available.contains(t)).collect();
            (!offered.is_empty()).then(|| format!("- {skill} ({when}): {}", offered.join(", ")))
        })
        .collect();
    if !lines.is_empty() {
        prompt.push_str("\n\nSkills and their tools:\n");
        prompt.push_str(&lines.join("\n"));
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_is_in_exactly_one_skill_and_only_offered_tools_are_named() {
        let mut all: Vec<&str> = SKILLS.iter().flat_map(|(_, _, t)| t.iter().copied()).collect();
        all.sort();
        let mut expected = crate::tools::ALL_TOOL_NAMES.to_vec();
        expected.sort();
        assert_eq!(all, expected);
        let p = system_prompt(&["web_search", "token_price"]);
        assert!(p.contains("- Web research (current events, facts, documentation): web_search\n"));
        assert!(p.ends_with("- Solana markets (token prices, trending tokens, swap routes): token_price"));
        assert!(!p.contains("Notes"));
        assert!(!system_prompt(&[]).contains("Skills"));
    }
}
