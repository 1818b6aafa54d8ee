//! The eleven tools of the plaintext path that talk to DeepWiki, Colosseum, pay.sh, GitHub and
//! Notion, each against its stand-in: what they send (arguments, headers, paths), what they
//! answer, and how they fail (no credentials, upstream errors, bad or path-climbing arguments).

use std::collections::BTreeMap;
use std::time::Duration;

use agent::tool::{Args, Tool, ToolError};
use agent::tools::{ToolContext, Upstream, upstream_client};
use relay_tools::FetchConfig;
use relay_tools::tools::{colosseum, deepwiki, github, notion, paysh};
use serde_json::{Value, json};
use zeroize::Zeroizing;

/// A context with the given upstreams: (provider id, base URL, key).
fn context(upstreams: &[(&str, String, Option<&str>)]) -> ToolContext {
    let upstreams: BTreeMap<String, Upstream> = upstreams
        .iter()
        .map(|(id, base, key)| {
            (
                id.to_string(),
                Upstream {
                    base_url: base.clone(),
                    api_key: key.map(|k| Zeroizing::new(k.to_string())),
                    awaiting_bundle: false,
                },
            )
        })
        .collect();
    ToolContext { http: upstream_client(Duration::from_secs(10)), upstreams }
}

fn one(id: &str, base: String, key: Option<&str>) -> ToolContext {
    context(&[(id, base, key)])
}

fn none() -> ToolContext {
    context(&[])
}

fn args(value: Value) -> Args {
    value.as_object().cloned().expect("arguments are an object")
}

async fn call(tool: &dyn Tool, value: Value) -> Result<Value, ToolError> {
    tool.call(&args(value)).await
}

fn is_bad_arguments(result: &Result<Value, ToolError>) -> bool {
    matches!(result, Err(ToolError::BadArguments(_)))
}

/// The message of an upstream error.
fn upstream_message(result: Result<Value, ToolError>) -> String {
    match result {
        Err(ToolError::Upstream(message)) => message,
        other => panic!("expected an upstream error, got {other:?}"),
    }
}

/// A base URL nothing listens on.
async fn closed_port() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    format!("http://{addr}")
}

// === deepwiki =============================================================================

mod deepwiki_tool {
    use super::*;
    use standins::deepwiki::{Mode, start};

    #[tokio::test]
    async fn speaks_mcp_with_json_responses() {
        let (server, log) = start(Mode::Json).await;
        let tool = deepwiki::Deepwiki::new(&one("deepwiki", format!("{}/mcp", server.base_url), None));
        let out = call(&tool, json!({"repo": "solana-labs/solana", "question": "Where is the entry point?"}))
            .await
            .expect("answer");
        assert_eq!(out["repo"], "solana-labs/solana");
        assert_eq!(out["truncated"], false);
        let answer = out["answer"].as_str().expect("text");
        assert!(answer.contains("solana-labs/solana is documented on DeepWiki"), "{answer}");
        assert!(answer.contains("Where is the entry point?"));

        let seen = log.lock().unwrap().clone();
        let methods: Vec<Value> = seen.iter().map(|s| s.json()["method"].clone()).collect();
        assert_eq!(methods, vec![json!("initialize"), json!("notifications/initialized"), json!("tools/call")]);
        for s in &seen {
            assert_eq!(s.method, "POST");
            assert_eq!(s.path, "/mcp");
            assert_eq!(s.header("accept"), Some("application/json, text/event-stream"));
            assert!(s.header("content-type").unwrap_or("").starts_with("application/json"));
            assert!(s.header("authorization").is_none());
        }
        let init = seen[0].json();
        assert_eq!(init["jsonrpc"], "2.0");
        assert_eq!(init["params"]["protocolVersion"], "2025-03-26");
        assert!(seen[0].header("mcp-session-id").is_none());
        let session = seen[1].header("mcp-session-id").expect("session id sent back");
        assert!(session.starts_with("dw-"));
        assert_eq!(seen[2].header("mcp-session-id"), Some(session));
        assert_eq!(seen[2].header("mcp-protocol-version"), Some("2025-03-26"));
        assert!(seen[1].json().get("id").is_none(), "a notification has no id");
        let ask = seen[2].json();
        assert_eq!(ask["params"]["name"], "ask_question");
        assert_eq!(
            ask["params"]["arguments"],
            json!({"repoName": "solana-labs/solana", "question": "Where is the entry point?"})
        );
    }

    #[tokio::test]
    async fn reads_the_answer_from_an_event_stream() {
        let (server, log) = start(Mode::Sse).await;
        let tool = deepwiki::Deepwiki::new(&one("deepwiki", format!("{}/mcp", server.base_url), None));
        let out = call(&tool, json!({"repo": "tokio-rs/tokio", "question": "How does the scheduler work?"}))
            .await
            .expect("answer");
        assert!(out["answer"].as_str().unwrap().starts_with("tokio-rs/tokio is documented on DeepWiki"));
        assert_eq!(log.lock().unwrap().len(), 3);
    }

    #[tokio::test]
    async fn gives_tool_errors_to_the_model_and_cuts_long_answers() {
        let (server, _log) = start(Mode::Sse).await;
        let tool = deepwiki::Deepwiki::new(&one("deepwiki", format!("{}/mcp", server.base_url), None));
        let out = call(&tool, json!({"repo": "nobody/nothing", "question": "What is this?"})).await.expect("result");
        assert_eq!(out["isError"], true);
        assert!(out["message"].as_str().unwrap().contains("Repository not found"));

        let out = call(&tool, json!({"repo": "big/answer", "question": "Everything?"})).await.expect("result");
        assert_eq!(out["truncated"], true);
        assert_eq!(out["answer"].as_str().unwrap().chars().count(), 6000);
    }

    #[tokio::test]
    async fn sends_a_configured_key_as_bearer() {
        let (server, log) = start(Mode::Json).await;
        let tool = deepwiki::Deepwiki::new(&one("deepwiki", format!("{}/mcp", server.base_url), Some("devin-key")));
        call(&tool, json!({"repo": "a/b", "question": "q"})).await.expect("answer");
        assert!(log.lock().unwrap().iter().all(|s| s.header("authorization") == Some("Bearer devin-key")));
    }

    #[tokio::test]
    async fn without_an_upstream_is_not_configured() {
        let tool = deepwiki::Deepwiki::new(&none());
        let out = call(&tool, json!({"repo": "a/b", "question": "q"})).await;
        assert_eq!(out, Err(ToolError::NotConfigured("deepwiki")));
    }

    #[tokio::test]
    async fn refuses_malformed_repositories() {
        let (server, log) = start(Mode::Json).await;
        let tool = deepwiki::Deepwiki::new(&one("deepwiki", format!("{}/mcp", server.base_url), None));
        for repo in
            ["../etc/passwd", "owner", "owner/repo/extra", "own er/repo", "../..", "a/..", "a/b?x=1", "a/b#f", ""]
        {
            let out = call(&tool, json!({"repo": repo, "question": "q"})).await;
            assert!(is_bad_arguments(&out), "{repo}: {out:?}");
        }
        assert!(is_bad_arguments(&call(&tool, json!({"repo": "a/b"})).await));
        assert!(is_bad_arguments(&call(&tool, json!({"repo": "a/b", "question": "x".repeat(2001)})).await));
        assert!(is_bad_arguments(&call(&tool, json!({"repo": 7, "question": "q"})).await));
        assert!(log.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn upstream_failures_name_the_status_not_the_body() {
        let (server, _log) = start(Mode::Json).await;
        let tool = deepwiki::Deepwiki::new(&one("deepwiki", format!("{}/mcp", server.base_url), None));
        let message = upstream_message(call(&tool, json!({"repo": "fail/http500", "question": "q"})).await);
        assert!(message.contains("HTTP 500"), "{message}");
        assert!(!message.contains("secret"), "{message}");

        // Wrong endpoint path: the stand-in answers 404 to the initialize request.
        let tool = deepwiki::Deepwiki::new(&one("deepwiki", format!("{}/sse", server.base_url), None));
        let message = upstream_message(call(&tool, json!({"repo": "a/b", "question": "q"})).await);
        assert!(message.contains("HTTP 404"), "{message}");

        let tool = deepwiki::Deepwiki::new(&one("deepwiki", format!("{}/mcp", closed_port().await), None));
        let message = upstream_message(call(&tool, json!({"repo": "a/b", "question": "q"})).await);
        assert!(message.contains("connection failed"), "{message}");
    }
}

// === colosseum ============================================================================

mod colosseum_tools {
    use super::*;
    use standins::colosseum::start;

    const TOKEN: &str = "pat-test-123";

    fn ctx(base: &str, key: Option<&str>) -> ToolContext {
        one("colosseum", format!("{base}/api/v1"), key)
    }

    #[tokio::test]
    async fn search_sends_the_documented_request() {
        let (server, log) = start(TOKEN).await;
        let tool = colosseum::ColosseumSearch::new(&ctx(&server.base_url, Some(TOKEN)));
        let out = call(&tool, json!({"query": "stablecoin wallet", "limit": 2})).await.expect("projects");

        let seen = log.lock().unwrap().clone();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].method, "POST");
        assert_eq!(seen[0].path, "/api/v1/search/projects");
        assert_eq!(seen[0].header("authorization"), Some("Bearer pat-test-123"));
        assert_eq!(seen[0].json(), json!({"query": "stablecoin wallet", "limit": 2}));

        assert_eq!(out["count"], 2);
        let first = &out["projects"][0];
        assert_eq!(first["slug"], "cloak-wallet");
        assert_eq!(first["name"], "Cloak");
        assert_eq!(first["oneLiner"], "Private stablecoin payments wallet");
        assert_eq!(first["hackathon"], "Breakout");
        assert_eq!(first["tracks"], json!(["Consumer"]));
        assert_eq!(first["prize"]["placement"], 1);
        assert_eq!(first["prize"]["amount"], 25000);
        assert!(first["similarity"].is_number());
        assert_eq!(first["links"]["github"], "https://github.com/example/cloak-wallet");
        assert!(first["links"].get("demo").is_none(), "null links are dropped");
        assert!(first.get("tags").is_none() && first.get("team").is_none(), "compact");
    }

    #[tokio::test]
    async fn search_passes_hackathon_and_winner_filters() {
        let (server, log) = start(TOKEN).await;
        let tool = colosseum::ColosseumSearch::new(&ctx(&server.base_url, Some(TOKEN)));
        let out = call(&tool, json!({"query": "onchain games randomness", "hackathon": "Radar", "winners_only": true}))
            .await
            .expect("projects");
        let body = log.lock().unwrap()[0].json();
        assert_eq!(
            body,
            json!({"query": "onchain games randomness", "limit": 8, "hackathons": ["radar"], "filters": {"winnersOnly": true}})
        );
        assert_eq!(out["count"], 1);
        assert_eq!(out["projects"][0]["slug"], "oracle-dice");
    }

    #[tokio::test]
    async fn archives_send_the_documented_request() {
        let (server, log) = start(TOKEN).await;
        let tool = colosseum::ColosseumArchives::new(&ctx(&server.base_url, Some(TOKEN)));
        let out = call(&tool, json!({"query": "futarchy governance beliefs", "limit": 3})).await.expect("documents");
        let seen = log.lock().unwrap().clone();
        assert_eq!(seen[0].path, "/api/v1/search/archives");
        assert_eq!(seen[0].header("authorization"), Some("Bearer pat-test-123"));
        assert_eq!(seen[0].json(), json!({"query": "futarchy governance beliefs", "limit": 3, "maxChunksPerDoc": 1}));
        assert_eq!(out["searchTier"], "vector");
        let first = &out["documents"][0];
        assert_eq!(first["title"], "Futarchy: Vote Values, But Bet Beliefs");
        assert_eq!(first["author"], "Robin Hanson");
        assert!(first["documentId"].is_string() && first["url"].is_string());
        let snippet = first["snippet"].as_str().unwrap();
        assert!(snippet.chars().count() <= 601 && snippet.ends_with('…'), "long snippets are cut");
    }

    #[tokio::test]
    async fn need_a_token() {
        let (server, log) = start(TOKEN).await;
        let search = colosseum::ColosseumSearch::new(&ctx(&server.base_url, None));
        let archives = colosseum::ColosseumArchives::new(&ctx(&server.base_url, None));
        assert_eq!(call(&search, json!({"query": "x"})).await, Err(ToolError::NotConfigured("colosseum_search")));
        assert_eq!(call(&archives, json!({"query": "x"})).await, Err(ToolError::NotConfigured("colosseum_archives")));
        let search = colosseum::ColosseumSearch::new(&none());
        assert_eq!(call(&search, json!({"query": "x"})).await, Err(ToolError::NotConfigured("colosseum_search")));
        assert!(log.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn upstream_failures_name_the_status_not_the_body() {
        let (server, _log) = start(TOKEN).await;
        let tool = colosseum::ColosseumSearch::new(&ctx(&server.base_url, Some("wrong")));
        let message = upstream_message(call(&tool, json!({"query": "x"})).await);
        assert!(message.contains("HTTP 401"), "{message}");
        assert!(!message.contains("personal access token"), "{message}");

        let tool = colosseum::ColosseumArchives::new(&ctx(&server.base_url, Some(TOKEN)));
        let message = upstream_message(call(&tool, json!({"query": "trigger-503"})).await);
        assert!(message.contains("HTTP 503"), "{message}");
        assert!(!message.contains("tiers"), "{message}");

        let tool = colosseum::ColosseumArchives::new(&ctx(&closed_port().await, Some(TOKEN)));
        assert!(upstream_message(call(&tool, json!({"query": "x"})).await).contains("connection failed"));
    }

    #[tokio::test]
    async fn refuse_bad_arguments() {
        let (server, log) = start(TOKEN).await;
        let search = colosseum::ColosseumSearch::new(&ctx(&server.base_url, Some(TOKEN)));
        let archives = colosseum::ColosseumArchives::new(&ctx(&server.base_url, Some(TOKEN)));
        for bad in [
            json!({}),
            json!({"query": ""}),
            json!({"query": "x".repeat(501)}),
            json!({"query": "x", "limit": 26}),
            json!({"query": "x", "winners_only": "yes"}),
            json!({"query": "x", "hackathon": "../status"}),
        ] {
            assert!(is_bad_arguments(&call(&search, bad.clone()).await), "{bad}");
        }
        assert!(is_bad_arguments(&call(&archives, json!({"query": "x", "limit": 11})).await));
        assert!(is_bad_arguments(&call(&archives, json!({"query": 3})).await));
        assert!(log.lock().unwrap().is_empty());
    }
}

// === pay.sh ===============================================================================

mod paysh_tools {
    use super::*;
    use standins::paysh::start;

    fn ctx(base: &str) -> ToolContext {
        context(&[("paysh", format!("{base}/pay-skills/v1"), None)])
    }

    #[tokio::test]
    async fn search_ranks_the_catalog_by_keyword() {
        let (server, log) = start().await;
        let tool = paysh::PayshSearchApis::new(&ctx(&server.base_url));
        let out = call(&tool, json!({"query": "weather forecast"})).await.expect("providers");
        let seen = log.lock().unwrap().clone();
        assert_eq!(seen.len(), 1);
        assert_eq!((seen[0].method.as_str(), seen[0].path.as_str()), ("GET", "/pay-skills/v1/skills.json"));
        assert_eq!(out["matched"], 1);
        let first = &out["providers"][0];
        assert_eq!(first["fqn"], "acme/weather");
        assert_eq!(first["title"], "Acme Weather");
        assert_eq!(first["category"], "data");
        assert_eq!(first["serviceUrl"], format!("{}/acme", server.base_url));
        assert_eq!(first["endpointCount"], 3);
        assert_eq!(first["maxPriceUsd"], 0.05);
        assert_eq!(first["hasFreeTier"], true);
        assert!(first["useCase"].as_str().unwrap().starts_with("Use for weather"));

        let out = call(&tool, json!({"query": "translate language"})).await.expect("providers");
        assert_eq!(out["providers"][0]["fqn"], "solana-foundation/google/translate");
        let out = call(&tool, json!({"query": "no-such-thing"})).await.expect("providers");
        assert_eq!(out["count"], 0);
    }

    #[tokio::test]
    async fn search_filters_by_category_and_limits() {
        let (server, _log) = start().await;
        let tool = paysh::PayshSearchApis::new(&ctx(&server.base_url));
        let out = call(&tool, json!({"category": "COMPUTE"})).await.expect("providers");
        assert_eq!(out["count"], 1);
        assert_eq!(out["providers"][0]["fqn"], "quicknode/rpc");
        let out = call(&tool, json!({"limit": 2})).await.expect("providers");
        assert_eq!((out["matched"].as_u64(), out["count"].as_u64()), (Some(3), Some(2)));
    }

    #[tokio::test]
    async fn search_lists_a_providers_endpoints() {
        let (server, log) = start().await;
        let tool = paysh::PayshSearchApis::new(&ctx(&server.base_url));
        let out = call(&tool, json!({"provider": "acme/weather"})).await.expect("endpoints");
        let paths: Vec<String> = log.lock().unwrap().iter().map(|s| s.path.clone()).collect();
        assert_eq!(paths, vec!["/pay-skills/v1/skills.json", "/pay-skills/v1/providers/acme/weather.json"]);
        assert_eq!(out["fqn"], "acme/weather");
        assert_eq!(out["endpointCount"], 3);
        let endpoints = out["endpoints"].as_array().unwrap();
        assert_eq!(endpoints[0]["method"], "GET");
        assert_eq!(endpoints[0]["url"], format!("{}/acme/current", server.base_url));
        assert_eq!(endpoints[0]["paid"], true);
        assert_eq!(endpoints[0]["pricing"], json!({"amount": "0.01", "currency": "USDC"}));
        assert_eq!(endpoints[2]["paid"], false);

        let out = call(&tool, json!({"provider": "acme/weather", "query": "forecast"})).await.expect("endpoints");
        assert_eq!(out["matched"], 1);
        assert_eq!(out["endpoints"][0]["url"], format!("{}/acme/forecast", server.base_url));
    }

    #[tokio::test]
    async fn search_refuses_bad_provider_names() {
        let (server, log) = start().await;
        let tool = paysh::PayshSearchApis::new(&ctx(&server.base_url));
        for bad in [
            "../skills",
            "acme/../../x",
            "acme",
            "a/b/c/d",
            "acme/weather?x=1",
            "acme/weather#f",
            "acme//weather",
            "acme/%2e%2e",
        ] {
            assert!(is_bad_arguments(&call(&tool, json!({"provider": bad})).await), "{bad}");
        }
        assert!(log.lock().unwrap().is_empty(), "nothing was fetched");
        // A well-formed name that is not in the catalog: only the index is read.
        assert!(is_bad_arguments(&call(&tool, json!({"provider": "acme/unknown"})).await));
        let paths: Vec<String> = log.lock().unwrap().iter().map(|s| s.path.clone()).collect();
        assert_eq!(paths, vec!["/pay-skills/v1/skills.json"]);
    }

    #[tokio::test]
    async fn without_an_upstream_is_not_configured() {
        let search = paysh::PayshSearchApis::new(&none());
        let call_api = paysh::PayshCallApi::new(&none(), &FetchConfig::default());
        assert_eq!(call(&search, json!({"query": "x"})).await, Err(ToolError::NotConfigured("paysh_search_apis")));
        assert_eq!(
            call(&call_api, json!({"url": "https://example.com/"})).await,
            Err(ToolError::NotConfigured("paysh_call_api"))
        );
    }

    #[tokio::test]
    async fn catalog_failures_are_upstream_errors() {
        let (server, _log) = start().await;
        // A base URL where no catalog is published: 404.
        let tool = paysh::PayshSearchApis::new(&one("paysh", format!("{}/nothing-here", server.base_url), None));
        let message = upstream_message(call(&tool, json!({"query": "x"})).await);
        assert!(message.contains("HTTP 404"), "{message}");
        let tool = paysh::PayshSearchApis::new(&one("paysh", closed_port().await, None));
        assert!(upstream_message(call(&tool, json!({"query": "x"})).await).contains("connection failed"));
    }

    #[tokio::test]
    async fn call_refuses_urls_outside_the_catalog() {
        let (server, log) = start().await;
        let tool = paysh::PayshCallApi::new(&ctx(&server.base_url), &FetchConfig::default());
        let base = &server.base_url;
        for url in [
            "http://169.254.169.254/latest/meta-data/iam/security-credentials/".to_string(),
            "http://[fd00:ec2::254]/latest/meta-data/".to_string(),
            "http://localhost:9/".to_string(),
            format!("{base}/pay-skills/v1/skills.json"),
            format!("{base}/acmeevil/current"),
            format!("{base}/other"),
        ] {
            let out = call(&tool, json!({"url": url})).await;
            assert!(matches!(out, Err(ToolError::Refused(_))), "{url}: {out:?}");
        }
        assert!(
            log.lock().unwrap().iter().all(|s| s.path == "/pay-skills/v1/skills.json"),
            "only the catalog was read"
        );
    }

    #[tokio::test]
    async fn call_refuses_a_loopback_provider_unless_allowed() {
        let (server, log) = start().await;
        let tool = paysh::PayshCallApi::new(&ctx(&server.base_url), &FetchConfig::default());
        let out = call(&tool, json!({"url": format!("{}/acme/free/echo?city=Paris", server.base_url)})).await;
        assert!(matches!(out, Err(ToolError::Refused(_))), "{out:?}");
        assert!(log.lock().unwrap().iter().all(|s| !s.path.starts_with("/acme")), "the provider was not reached");
    }

    #[tokio::test]
    async fn call_refuses_bad_arguments() {
        let (server, log) = start().await;
        let tool = paysh::PayshCallApi::new(&ctx(&server.base_url), &FetchConfig::default());
        let echo = format!("{}/acme/free/echo", server.base_url);
        for bad in [
            json!({}),
            json!({"url": "/acme/free/echo"}),
            json!({"url": "ftp://example.com/x"}),
            json!({"url": "file:///etc/passwd"}),
            json!({"url": echo.replace("http://", "http://user:pw@")}),
            json!({"url": echo, "method": "PUT"}),
            json!({"url": echo, "method": "GET", "body": {"a": 1}}),
            json!({"url": echo, "body": [1]}),
        ] {
            assert!(is_bad_arguments(&call(&tool, bad.clone()).await), "{bad}");
        }
        assert!(log.lock().unwrap().is_empty());
    }

    /// The success path: the stand-in's `ip:port` is allowed explicitly.
    #[tokio::test]
    async fn call_returns_the_payment_challenge_and_json_answers() {
        let (server, log) = start().await;
        let fetch = FetchConfig { allow: vec![server.addr.to_string()], ..FetchConfig::default() };
        let tool = paysh::PayshCallApi::new(&ctx(&server.base_url), &fetch);

        let out =
            call(&tool, json!({"url": format!("{}/acme/current?city=Paris", server.base_url)})).await.expect("402");
        assert_eq!(out["status"], 402);
        assert_eq!(out["provider"], "acme/weather");
        assert_eq!(out["x402Version"], 1);
        let option = &out["paymentRequired"][0];
        assert_eq!(option["scheme"], "exact");
        assert_eq!(option["network"], "solana");
        assert_eq!(option["maxAmountRequired"], "10000");
        assert_eq!(option["asset"], "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v");
        assert_eq!(option["assetName"], "USDC");
        assert!(option.get("outputSchema").is_none(), "trimmed");

        let out = call(
            &tool,
            json!({"url": format!("{}/acme/forecast", server.base_url), "method": "post", "body": {"city": "Oslo"}}),
        )
        .await
        .expect("402");
        assert_eq!(out["status"], 402);
        assert_eq!(out["paymentRequired"][0]["maxAmountRequired"], "50000");

        let out =
            call(&tool, json!({"url": format!("{}/acme/free/echo?city=Paris", server.base_url)})).await.expect("200");
        assert_eq!(out["status"], 200);
        assert_eq!(out["body"], json!({"echo": {"city": "Paris"}, "method": "GET"}));

        let out = call(
            &tool,
            json!({"url": format!("{}/acme/free/echo", server.base_url), "method": "POST", "body": {"n": [1, 2]}}),
        )
        .await
        .expect("200");
        assert_eq!(out["body"], json!({"echo": {"n": [1, 2]}, "method": "POST"}));

        let seen = log.lock().unwrap().clone();
        let post = seen.iter().rfind(|s| s.path == "/acme/free/echo" && s.method == "POST").expect("POST reached");
        assert_eq!(post.json(), json!({"n": [1, 2]}));
        assert!(post.header("content-type").unwrap_or("").starts_with("application/json"));
        assert!(
            seen.iter().all(|s| s.header("x-payment").is_none() && s.header("payment-signature").is_none()),
            "never pays"
        );

        let message = upstream_message(call(&tool, json!({"url": format!("{}/acme/missing", server.base_url)})).await);
        assert!(message.contains("HTTP 404") && !message.contains("not found"), "{message}");
    }
}

// === github ===============================================================================

mod github_tools {
    use super::*;
    use standins::github::start;

    const TOKEN: &str = "ghp_test_token";

    #[tokio::test]
    async fn list_repos_sends_the_documented_request() {
        let (server, log) = start(Some(TOKEN)).await;
        let tool = github::GithubListRepos::new(&one("github", server.base_url.clone(), Some(TOKEN)));
        let out = call(&tool, json!({"owner": "octocat", "limit": 2})).await.expect("repos");

        let seen = log.lock().unwrap().clone();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].path, "/users/octocat/repos");
        assert_eq!(seen[0].query.as_deref(), Some("per_page=2&sort=updated"));
        assert_eq!(seen[0].header("accept"), Some("application/vnd.github+json"));
        assert_eq!(seen[0].header("x-github-api-version"), Some("2022-11-28"));
        assert_eq!(seen[0].header("authorization"), Some("Bearer ghp_test_token"));
        assert!(seen[0].header("user-agent").is_some());

        assert_eq!(out["count"], 2);
        assert_eq!(
            out["repos"][0],
            json!({
                "name": "hello-world",
                "full_name": "octocat/hello-world",
                "description": "My first repository on GitHub!",
                "stargazers_count": 2500,
                "language": "Ruby",
                "html_url": "https://github.com/octocat/hello-world",
                "updated_at": "2024-05-01T10:00:00Z"
            })
        );
    }

    #[tokio::test]
    async fn public_data_works_without_a_key() {
        let (server, log) = start(None).await;
        let tool = github::GithubListRepos::new(&one("github", server.base_url.clone(), None));
        let out = call(&tool, json!({"owner": "octocat"})).await.expect("repos");
        assert_eq!(out["count"], 3);
        assert_eq!(out["repos"][2]["description"], Value::Null);
        let seen = log.lock().unwrap().clone();
        assert!(seen[0].header("authorization").is_none());
        assert_eq!(seen[0].query.as_deref(), Some("per_page=10&sort=updated"));
    }

    #[tokio::test]
    async fn issues_skip_pull_requests() {
        let (server, log) = start(Some(TOKEN)).await;
        let tool = github::GithubIssues::new(&one("github", server.base_url.clone(), Some(TOKEN)));
        let out = call(&tool, json!({"owner": "octocat", "repo": "hello-world"})).await.expect("issues");
        assert_eq!(log.lock().unwrap()[0].path, "/repos/octocat/hello-world/issues");
        assert_eq!(log.lock().unwrap()[0].query.as_deref(), Some("state=open&per_page=10"));
        let numbers: Vec<u64> =
            out["issues"].as_array().unwrap().iter().map(|i| i["number"].as_u64().unwrap()).collect();
        assert_eq!(numbers, vec![42, 40], "#41 is a pull request");
        assert_eq!(
            out["issues"][0],
            json!({
                "number": 42,
                "title": "Found a bug",
                "state": "open",
                "user": "octocat",
                "comments": 3,
                "html_url": "https://github.com/octocat/hello-world/issues/42",
                "created_at": "2024-04-15T12:00:00Z"
            })
        );
        let out =
            call(&tool, json!({"repo": "octocat/hello-world", "state": "all", "limit": 30})).await.expect("issues");
        assert_eq!(log.lock().unwrap()[1].query.as_deref(), Some("state=all&per_page=30"));
        assert_eq!(out["count"], 3);
        assert_eq!(out["repo"], "octocat/hello-world");
    }

    #[tokio::test]
    async fn read_file_decodes_base64() {
        let (server, log) = start(Some(TOKEN)).await;
        let tool = github::GithubReadFile::new(&one("github", server.base_url.clone(), Some(TOKEN)));
        let out =
            call(&tool, json!({"owner": "octocat", "repo": "hello-world", "path": "README.md"})).await.expect("file");
        assert_eq!(log.lock().unwrap()[0].path, "/repos/octocat/hello-world/contents/README.md");
        assert_eq!(out["type"], "file");
        assert_eq!(out["path"], "README.md");
        assert_eq!(out["content"], "# Hello World\n\nThis is a test repository. It has a café.\n");
        assert_eq!(out["size"], 58);
        assert!(out["sha"].as_str().is_some_and(|s| s.len() == 40));
        assert_eq!(out["truncated"], false);

        let out = call(&tool, json!({"owner": "octocat", "repo": "hello-world", "path": "/src/main.rs", "ref": "v1"}))
            .await
            .expect("file");
        assert_eq!(log.lock().unwrap()[1].path, "/repos/octocat/hello-world/contents/src/main.rs");
        assert_eq!(log.lock().unwrap()[1].query.as_deref(), Some("ref=v1"));
        assert!(out["content"].as_str().unwrap().starts_with("fn main()"));

        let out = call(&tool, json!({"owner": "octocat", "repo": "hello-world", "path": "README.md", "ref": "v1"}))
            .await
            .expect("file");
        assert_eq!(out["content"], "# Hello World (v1)\n");
    }

    #[tokio::test]
    async fn read_file_lists_directories() {
        let (server, log) = start(None).await;
        let tool = github::GithubReadFile::new(&one("github", server.base_url.clone(), None));
        let out = call(&tool, json!({"owner": "octocat", "repo": "hello-world"})).await.expect("root");
        assert_eq!(log.lock().unwrap()[0].path, "/repos/octocat/hello-world/contents");
        assert_eq!(out["type"], "dir");
        assert_eq!(out["count"], 5);
        assert_eq!(out["entries"][0], json!({"name": "README.md", "type": "file", "size": 58}));
        assert_eq!(out["entries"][2], json!({"name": "docs", "type": "dir"}));
        let out = call(&tool, json!({"owner": "octocat", "repo": "hello-world", "path": "src/"})).await.expect("dir");
        assert_eq!(out["entries"], json!([{"name": "main.rs", "type": "file", "size": 37}]));
    }

    #[tokio::test]
    async fn read_file_pages_long_files_and_skips_binary() {
        let (server, _log) = start(None).await;
        let tool = github::GithubReadFile::new(&one("github", server.base_url.clone(), None));
        let out =
            call(&tool, json!({"owner": "octocat", "repo": "hello-world", "path": "big.txt"})).await.expect("file");
        assert_eq!(out["truncated"], true);
        assert_eq!(out["chars"], 10000);
        assert_eq!(out["content"].as_str().unwrap().len(), 6000);
        assert_eq!(out["nextOffset"], 6000);
        let out = call(&tool, json!({"owner": "octocat", "repo": "hello-world", "path": "big.txt", "offset": 6000}))
            .await
            .expect("file");
        assert_eq!(out["truncated"], false);
        assert_eq!(out["content"].as_str().unwrap().len(), 4000);

        let out =
            call(&tool, json!({"owner": "octocat", "repo": "hello-world", "path": "logo.png"})).await.expect("file");
        assert_eq!(out["binary"], true);
        assert_eq!(out["content"], Value::Null);
    }

    #[tokio::test]
    async fn read_file_percent_encodes_path_and_ref() {
        let (server, log) = start(None).await;
        let tool = github::GithubReadFile::new(&one("github", server.base_url.clone(), None));
        let out =
            call(&tool, json!({"owner": "octocat", "repo": "hello-world", "path": "docs/a b.md"})).await.expect("file");
        assert_eq!(out["content"], "Spaces in names work.\n");
        assert_eq!(log.lock().unwrap()[0].path, "/repos/octocat/hello-world/contents/docs/a%20b.md");

        // `?` and `#` stay inside the path segment: no query or fragment can be injected.
        let out =
            call(&tool, json!({"owner": "octocat", "repo": "hello-world", "path": "README.md?ref=evil#frag"})).await;
        assert!(upstream_message(out).contains("HTTP 404"));
        let seen = log.lock().unwrap()[1].clone();
        assert_eq!(seen.path, "/repos/octocat/hello-world/contents/README.md%3Fref=evil%23frag");
        assert_eq!(seen.query, None);

        let _ = call(&tool, json!({"owner": "octocat", "repo": "hello-world", "path": "README.md", "ref": "main&x=1"}))
            .await;
        assert_eq!(log.lock().unwrap()[2].query.as_deref(), Some("ref=main%26x%3D1"));
    }

    #[tokio::test]
    async fn refuse_path_injection() {
        let (server, log) = start(None).await;
        let ctx = one("github", server.base_url.clone(), None);
        let read = github::GithubReadFile::new(&ctx);
        for path in ["../../users/octocat/repos", "src/../../..", "a//b", "./README.md", "%2e%2e/x", "a\\..\\b", "a\nb"]
        {
            let out = call(&read, json!({"owner": "octocat", "repo": "hello-world", "path": path})).await;
            assert!(is_bad_arguments(&out), "{path}: {out:?}");
        }
        for (owner, repo) in [
            ("..", "x"),
            ("octocat/..", "x"),
            ("octo?cat", "x"),
            ("octocat", "../users"),
            ("octocat", "a#b"),
            ("", "x"),
        ] {
            let out = call(&read, json!({"owner": owner, "repo": repo})).await;
            assert!(is_bad_arguments(&out), "{owner}/{repo}: {out:?}");
        }
        let list = github::GithubListRepos::new(&ctx);
        for owner in ["../repos/x", "a/b", "a?b=c", "."] {
            assert!(is_bad_arguments(&call(&list, json!({"owner": owner})).await), "{owner}");
        }
        let issues = github::GithubIssues::new(&ctx);
        assert!(is_bad_arguments(&call(&issues, json!({"repo": "octocat/hello-world", "state": "mine"})).await));
        assert!(is_bad_arguments(&call(&issues, json!({"repo": "octocat/hello-world", "limit": 31})).await));
        assert!(is_bad_arguments(&call(&issues, json!({"repo": "hello-world"})).await), "owner missing");
        assert!(is_bad_arguments(&call(&read, json!({"repo": "octocat/hello-world", "ref": "a b"})).await));
        assert!(log.lock().unwrap().is_empty(), "nothing reached the server");
    }

    #[tokio::test]
    async fn upstream_failures_name_the_status_not_the_body() {
        let (server, _log) = start(Some(TOKEN)).await;
        let good = one("github", server.base_url.clone(), Some(TOKEN));
        let read = github::GithubReadFile::new(&good);
        let message = upstream_message(call(&read, json!({"repo": "octocat/nothing", "path": "x"})).await);
        assert!(message.contains("HTTP 404"), "{message}");
        assert!(!message.contains("documentation_url"), "{message}");

        let list = github::GithubListRepos::new(&one("github", server.base_url.clone(), Some("wrong")));
        let message = upstream_message(call(&list, json!({"owner": "octocat"})).await);
        assert!(message.contains("HTTP 401") && !message.contains("Bad credentials"), "{message}");

        let list = github::GithubListRepos::new(&good);
        assert!(upstream_message(call(&list, json!({"owner": "status-500"})).await).contains("HTTP 500"));
        let message = upstream_message(call(&list, json!({"owner": "garbled"})).await);
        assert!(message.contains("not valid JSON") && !message.contains("secret"), "{message}");

        let list = github::GithubListRepos::new(&one("github", closed_port().await, None));
        assert!(upstream_message(call(&list, json!({"owner": "octocat"})).await).contains("connection failed"));
    }

    #[tokio::test]
    async fn without_an_upstream_is_not_configured() {
        let ctx = none();
        assert_eq!(
            call(&github::GithubListRepos::new(&ctx), json!({"owner": "x"})).await,
            Err(ToolError::NotConfigured("github_list_repos"))
        );
        assert_eq!(
            call(&github::GithubIssues::new(&ctx), json!({"repo": "x/y"})).await,
            Err(ToolError::NotConfigured("github_issues"))
        );
        assert_eq!(
            call(&github::GithubReadFile::new(&ctx), json!({"repo": "x/y"})).await,
            Err(ToolError::NotConfigured("github_read_file"))
        );
    }
}

// === notion ===============================================================================

mod notion_tools {
    use super::*;
    use standins::notion::{DATABASE_ID, PAGE_ID, start};

    const TOKEN: &str = "secret_notion_test";

    #[tokio::test]
    async fn search_sends_the_version_and_extracts_titles() {
        let (server, log) = start(TOKEN).await;
        let tool = notion::NotionSearch::new(&one("notion", server.base_url.clone(), Some(TOKEN)));
        let out = call(&tool, json!({"query": "", "limit": 5})).await.expect("results");
        let seen = log.lock().unwrap().clone();
        assert_eq!((seen[0].method.as_str(), seen[0].path.as_str()), ("POST", "/v1/search"));
        assert_eq!(seen[0].header("authorization"), Some("Bearer secret_notion_test"));
        assert_eq!(seen[0].header("notion-version"), Some("2022-06-28"));
        assert_eq!(seen[0].json(), json!({"query": "", "page_size": 5}));
        assert_eq!(out["count"], 2);
        assert_eq!(
            out["results"][0],
            json!({
                "object": "page",
                "id": PAGE_ID,
                "title": "Project Roadmap",
                "url": "https://www.notion.so/Project-Roadmap-598337872cf94fdf8782e53db20768a5",
                "last_edited_time": "2024-05-02T15:30:00.000Z"
            })
        );
        assert_eq!(out["results"][1]["object"], "database");
        assert_eq!(out["results"][1]["title"], "Tasks");

        let out = call(&tool, json!({"query": "tasks", "type": "database"})).await.expect("results");
        assert_eq!(
            log.lock().unwrap()[1].json(),
            json!({"query": "tasks", "page_size": 10, "filter": {"property": "object", "value": "database"}})
        );
        assert_eq!(out["count"], 1);
        assert_eq!(out["results"][0]["id"], DATABASE_ID);
    }

    #[tokio::test]
    async fn get_page_reads_properties_and_block_text() {
        let (server, log) = start(TOKEN).await;
        let tool = notion::NotionGetPage::new(&one("notion", server.base_url.clone(), Some(TOKEN)));
        let bare = PAGE_ID.replace('-', "").to_uppercase();
        let out = call(&tool, json!({"page_id": bare})).await.expect("page");

        let mut paths: Vec<(String, Option<String>)> =
            log.lock().unwrap().iter().map(|s| (s.path.clone(), s.query.clone())).collect();
        paths.sort();
        assert_eq!(
            paths,
            vec![
                (format!("/v1/blocks/{PAGE_ID}/children"), Some("page_size=100".to_string())),
                (format!("/v1/pages/{PAGE_ID}"), None),
            ]
        );
        assert!(
            log.lock().unwrap().iter().all(|s| s.method == "GET" && s.header("notion-version") == Some("2022-06-28"))
        );
        assert_eq!(out["id"], PAGE_ID);
        assert_eq!(out["title"], "Project Roadmap");
        assert_eq!(out["properties"]["Owner"], "Ada Lovelace");
        assert_eq!(out["properties"]["Due"], "2024-06-30");
        assert_eq!(
            out["content"],
            "# Goals\nShip the private agent\n- Encrypted chat\n1. Attestation first\n[x] Write the tools\n\
             [ ] Review the tools\n> Trust, but verify.\n```rust\nfn main() {}\n```\n---\n[database] Tasks"
        );
        assert_eq!(out["truncated"], false);
    }

    #[tokio::test]
    async fn query_database_passes_the_filter_and_flattens_rows() {
        let (server, log) = start(TOKEN).await;
        let tool = notion::NotionQueryDatabase::new(&one("notion", server.base_url.clone(), Some(TOKEN)));
        let filter = json!({"property": "Status", "status": {"equals": "Done"}});
        let out =
            call(&tool, json!({"database_id": DATABASE_ID, "filter": filter.clone(), "limit": 5})).await.expect("rows");
        let seen = log.lock().unwrap()[0].clone();
        assert_eq!(
            (seen.method.as_str(), seen.path.as_str()),
            ("POST", &*format!("/v1/databases/{DATABASE_ID}/query"))
        );
        assert_eq!(seen.json(), json!({"page_size": 5, "filter": filter}));
        assert_eq!(out["count"], 1);
        assert_eq!(
            out["rows"][0]["properties"],
            json!({
                "Name": "Write the tools",
                "Status": "Done",
                "Priority": "High",
                "Points": 5.0,
                "Tags": "agent, tools",
                "Done": true,
                "Due": "2024-06-01 → 2024-06-07",
                "Link": null,
                "Notes": "See the roadmap",
                "Key": "TASK-1",
                "Score": 1.5
            })
        );
        let out = call(&tool, json!({"database_id": DATABASE_ID})).await.expect("rows");
        assert_eq!(log.lock().unwrap()[1].json(), json!({"page_size": 20}));
        assert_eq!(out["count"], 3);
        assert_eq!(out["rows"][2]["properties"]["Priority"], Value::Null);
    }

    #[tokio::test]
    async fn need_a_key() {
        let (server, log) = start(TOKEN).await;
        let ctx = one("notion", server.base_url.clone(), None);
        assert_eq!(
            call(&notion::NotionSearch::new(&ctx), json!({})).await,
            Err(ToolError::NotConfigured("notion_search"))
        );
        assert_eq!(
            call(&notion::NotionGetPage::new(&ctx), json!({"page_id": PAGE_ID})).await,
            Err(ToolError::NotConfigured("notion_get_page"))
        );
        assert_eq!(
            call(&notion::NotionQueryDatabase::new(&none()), json!({"database_id": DATABASE_ID})).await,
            Err(ToolError::NotConfigured("notion_query_database"))
        );
        assert!(log.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn refuse_bad_ids_and_filters() {
        let (server, log) = start(TOKEN).await;
        let ctx = one("notion", server.base_url.clone(), Some(TOKEN));
        let page = notion::NotionGetPage::new(&ctx);
        let bad_ids = [
            "../v1/users".to_string(),
            "1234".to_string(),
            "z".repeat(32),
            format!("{}?filter=x", &PAGE_ID[..27]),
            format!("../{}", &PAGE_ID[3..]),
            PAGE_ID.replace('-', "/"),
            format!("{PAGE_ID}-"),
            "5983-3787-2cf9-4fdf-8782-e53db20768a5".to_string(),
        ];
        for id in &bad_ids {
            assert!(is_bad_arguments(&call(&page, json!({"page_id": id})).await), "{id}");
        }
        let query = notion::NotionQueryDatabase::new(&ctx);
        assert!(is_bad_arguments(&call(&query, json!({"database_id": DATABASE_ID, "filter": "Status = Done"})).await));
        assert!(is_bad_arguments(&call(&query, json!({"database_id": DATABASE_ID, "limit": 51})).await));
        assert!(is_bad_arguments(&call(&query, json!({"database_id": "../pages"})).await));
        let search = notion::NotionSearch::new(&ctx);
        assert!(is_bad_arguments(&call(&search, json!({"type": "user"})).await));
        assert!(log.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn upstream_failures_name_the_status_not_the_body() {
        let (server, _log) = start(TOKEN).await;
        let wrong = one("notion", server.base_url.clone(), Some("secret_wrong"));
        let message = upstream_message(call(&notion::NotionSearch::new(&wrong), json!({"query": "x"})).await);
        assert!(message.contains("HTTP 401") && !message.contains("API token is invalid"), "{message}");

        let good = one("notion", server.base_url.clone(), Some(TOKEN));
        let unknown = "0123456789abcdef0123456789abcdef";
        let message = upstream_message(call(&notion::NotionGetPage::new(&good), json!({"page_id": unknown})).await);
        assert!(message.contains("HTTP 404") && !message.contains("Could not find"), "{message}");

        let bad_filter = json!({"database_id": DATABASE_ID, "filter": {"property": "Nope", "select": {"equals": "x"}}});
        let message = upstream_message(call(&notion::NotionQueryDatabase::new(&good), bad_filter).await);
        assert!(message.contains("HTTP 400"), "{message}");

        let down = one("notion", closed_port().await, Some(TOKEN));
        assert!(
            upstream_message(call(&notion::NotionSearch::new(&down), json!({})).await).contains("connection failed")
        );
    }
}
