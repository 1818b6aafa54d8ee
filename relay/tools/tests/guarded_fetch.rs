//! `scrape_url` and `crawl_url` against a local site, and the SSRF guard behind them and
//! `paysh_call_api`: private, local and metadata addresses refused, every redirect hop checked,
//! bytes, hops and time bounded.

use std::net::SocketAddr;
use std::time::Duration;

use agent::tool::{Args, Tool, ToolError};
use relay_tools::FetchConfig;
use relay_tools::fetch::{FetchRequest, GuardedFetch};
use relay_tools::tools::crawl_url::CrawlUrl;
use relay_tools::tools::scrape_url::ScrapeUrl;
use serde_json::{Value, json};
use standins::web;

fn args(v: Value) -> Args {
    serde_json::from_value(v).expect("test arguments are an object")
}

fn fetch_config(allow: &[SocketAddr]) -> FetchConfig {
    FetchConfig { allow: allow.iter().map(|a| a.to_string()).collect(), ..FetchConfig::default() }
}

fn refused_message<T: std::fmt::Debug>(result: Result<T, ToolError>) -> String {
    match result {
        Err(ToolError::Refused(message)) => message,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn is_bad_arguments<T>(result: &Result<T, ToolError>) -> bool {
    matches!(result, Err(ToolError::BadArguments(_)))
}

// ---------------------------------------------------------------------------------------
// scrape_url

#[tokio::test]
async fn scrape_url_returns_readable_text_of_an_allowed_page() {
    let (site, recorder) = web::start().await;
    let tool = ScrapeUrl::new(&fetch_config(&[site.addr]));
    let url = format!("{}/", site.base_url);
    let out = tool.call(&args(json!({"url": url}))).await.expect("scrape");
    assert_eq!(
        out,
        json!({
            "url": url, "finalUrl": url, "status": 200, "title": "Stand-in home",
            "text": "Welcome & hello\nThe home page of the stand-in site.\n\
                     About\nTeam\nDocs\nPlain\nElsewhere\nMail\nNothing",
            "truncated": false
        })
    );
    assert_eq!(recorder.requests(), vec!["GET /".to_string()]);

    let plain = tool.call(&args(json!({"url": format!("{}/plain.txt", site.base_url)}))).await.expect("text");
    assert_eq!(plain["text"], "Just plain text.\nSecond line.");
    assert_eq!(plain["title"], Value::Null);
    let data = tool.call(&args(json!({"url": format!("{}/data.json", site.base_url)}))).await.expect("json");
    assert_eq!(data["text"], r#"{"answer":42}"#);
    let untyped = tool.call(&args(json!({"url": format!("{}/no-type", site.base_url)}))).await.expect("sniffed");
    assert_eq!(untyped["text"], "untyped text body");
    let moved = tool.call(&args(json!({"url": format!("{}/moved", site.base_url)}))).await.expect("redirected");
    assert_eq!(moved["finalUrl"], format!("{}/about", site.base_url));
    assert_eq!(moved["title"], "About us");

    let image = tool.call(&args(json!({"url": format!("{}/image.png", site.base_url)}))).await;
    assert!(refused_message(image).contains("image/png"));
}

#[tokio::test]
async fn scrape_url_marks_cut_pages_and_refuses_bad_urls() {
    let (site, _) = web::start().await;
    let small = FetchConfig { max_bytes: 1000, ..fetch_config(&[site.addr]) };
    let tool = ScrapeUrl::new(&small);
    let out = tool.call(&args(json!({"url": format!("{}/large", site.base_url)}))).await.expect("large page");
    assert_eq!(out["truncated"], true);
    assert_eq!(out["title"], "Large");
    let head = "<!DOCTYPE html><html><head><title>Large</title></head><body><p>";
    assert_eq!(out["text"], "x".repeat(1000 - head.len()));

    let default_cap = ScrapeUrl::new(&fetch_config(&[site.addr]));
    let out = default_cap.call(&args(json!({"url": format!("{}/large", site.base_url)}))).await.expect("large page");
    assert_eq!(out["truncated"], true);
    assert_eq!(out["text"].as_str().map(|t| t.chars().count()), Some(8_000));

    for bad in [json!({}), json!({"url": ""}), json!({"url": "not a url"}), json!({"url": ["http://x/"]})] {
        assert!(is_bad_arguments(&tool.call(&args(bad.clone())).await), "{bad}");
    }
    let private = tool.call(&args(json!({"url": "http://169.254.169.254/latest/meta-data/"}))).await;
    assert!(refused_message(private).contains("169.254.169.254"));
}

// ---------------------------------------------------------------------------------------
// crawl_url

#[tokio::test]
async fn crawl_url_walks_the_site_breadth_first_on_one_origin() {
    let (site, recorder) = web::start().await;
    let tool = CrawlUrl::new(&fetch_config(&[site.addr]));
    let start = format!("{}/", site.base_url);
    let out = tool.call(&args(json!({"url": start, "maxPages": 10}))).await.expect("crawl");
    assert_eq!(out["start"], start);
    let pages = out["pages"].as_array().expect("pages");
    let urls: Vec<&str> = pages.iter().filter_map(|p| p["url"].as_str()).collect();
    let base = &site.base_url;
    assert_eq!(
        urls,
        vec![
            format!("{base}/"),
            format!("{base}/about"),
            format!("{base}/docs/"),
            format!("{base}/plain.txt"),
            format!("{base}/docs/intro"),
            format!("{base}/docs/deeper"),
        ]
    );
    let titles: Vec<&Value> = pages.iter().map(|p| &p["title"]).collect();
    assert_eq!(
        titles,
        vec![
            &json!("Stand-in home"),
            &json!("About us"),
            &json!("Docs index"),
            &Value::Null,
            &json!("Intro"),
            &json!("Deeper")
        ]
    );
    assert_eq!(pages[1]["text"], "We are a stand-in.\nHome Intro");
    assert_eq!(pages[3]["text"], "Just plain text.\nSecond line.");
    assert!(out.get("unvisitedLinks").is_none());
    // Every page once, nothing off-origin, no fragment duplicates.
    assert_eq!(
        recorder.requests(),
        vec!["GET /", "GET /about", "GET /docs/", "GET /plain.txt", "GET /docs/intro", "GET /docs/deeper"]
    );
}

#[tokio::test]
async fn crawl_url_stops_at_max_pages_and_checks_its_arguments() {
    let (site, _) = web::start().await;
    let config = FetchConfig { crawl_max_pages: 4, ..fetch_config(&[site.addr]) };
    let tool = CrawlUrl::new(&config);
    let start = format!("{}/", site.base_url);
    let out = tool.call(&args(json!({"url": start, "maxPages": 2}))).await.expect("crawl");
    let pages = out["pages"].as_array().expect("pages");
    assert_eq!(pages.len(), 2);
    assert_eq!(pages[1]["url"], format!("{}/about", site.base_url));
    assert_eq!(out["unvisitedLinks"], 3);
    for bad in [
        json!({"url": start, "maxPages": 5}),
        json!({"url": start, "maxPages": 0}),
        json!({"maxPages": 2}),
        json!({"url": "::not a url::"}),
    ] {
        assert!(is_bad_arguments(&tool.call(&args(bad.clone())).await), "{bad}");
    }
    let ftp = tool.call(&args(json!({"url": "ftp://example.com/"}))).await;
    assert!(refused_message(ftp).contains("http"));
}

#[tokio::test]
async fn crawl_url_is_guarded_like_scrape_url() {
    let (site, recorder) = web::start().await;
    let unlisted = CrawlUrl::new(&FetchConfig::default());
    let refused = unlisted.call(&args(json!({"url": format!("{}/", site.base_url)}))).await;
    assert!(refused_message(refused).contains("127.0.0.1"));
    assert!(recorder.requests().is_empty());

    let allowed = CrawlUrl::new(&fetch_config(&[site.addr]));
    let refused = allowed.call(&args(json!({"url": format!("{}/redirect-private", site.base_url)}))).await;
    assert!(refused_message(refused).contains("169.254.169.254"));
}

// ---------------------------------------------------------------------------------------
// The SSRF guard itself

fn get(url: &str) -> FetchRequest<'_> {
    FetchRequest { method: reqwest::Method::GET, url, headers: Vec::new(), body: None }
}

fn post(url: &str) -> FetchRequest<'_> {
    FetchRequest {
        method: reqwest::Method::POST,
        url,
        headers: vec![("content-type".into(), "text/plain".into())],
        body: Some(b"hello".to_vec()),
    }
}

#[tokio::test]
async fn the_guard_refuses_private_local_and_metadata_addresses() {
    let (site, recorder) = web::start().await;
    let port = site.addr.port();
    let fetch = GuardedFetch::new(&FetchConfig::default());
    let refused_urls = [
        format!("http://127.0.0.1:{port}/"),
        format!("http://localhost:{port}/"),
        "http://localhost/".to_string(),
        "http://[::1]/".to_string(),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        "http://169.254.169.254/latest/meta-data/".to_string(),
        "http://[fd00:ec2::254]/".to_string(),
        "http://10.0.0.1/".to_string(),
        "http://192.168.1.1/".to_string(),
        "http://100.64.0.1/".to_string(),
        "http://0.0.0.0/".to_string(),
        // Other spellings of loopback the URL parser normalizes.
        format!("http://2130706433:{port}/"),
        format!("http://0x7f.1:{port}/"),
        format!("http://127.1:{port}/"),
    ];
    for url in &refused_urls {
        let message = refused_message(fetch.fetch(get(url)).await);
        assert!(message.contains("only public hosts"), "{url}: {message}");
    }
    assert!(recorder.requests().is_empty(), "nothing reached the server");

    for url in ["file:///etc/passwd", "ftp://example.com/file", "gopher://example.com/"] {
        let message = refused_message(fetch.fetch(get(url)).await);
        assert!(message.contains("only http and https"), "{url}: {message}");
    }
    assert!(is_bad_arguments(&fetch.fetch(get("not a url")).await));
    assert!(is_bad_arguments(&fetch.fetch(get("http://")).await));
}

#[tokio::test]
async fn the_allow_list_exempts_exactly_one_ip_and_port() {
    let (site, recorder) = web::start().await;
    let fetch = GuardedFetch::new(&fetch_config(&[site.addr]));
    let fetched = fetch.fetch(get(&format!("{}/about", site.base_url))).await.expect("allowed");
    assert_eq!(fetched.status, 200);
    assert_eq!(fetched.final_url, format!("{}/about", site.base_url));
    assert_eq!(fetched.content_type.as_deref(), Some("text/html; charset=utf-8"));
    assert!(String::from_utf8_lossy(&fetched.body).contains("We are a stand-in."));
    assert!(!fetched.truncated);

    let port = site.addr.port();
    let other_port = if port == u16::MAX { port - 1 } else { port + 1 };
    refused_message(fetch.fetch(get(&format!("http://127.0.0.1:{other_port}/"))).await);
    refused_message(fetch.fetch(get(&format!("http://127.0.0.2:{port}/"))).await);
    assert_eq!(recorder.requests(), vec!["GET /about".to_string()]);
}

#[tokio::test]
async fn every_redirect_hop_is_checked() {
    let (site, recorder) = web::start().await;
    let fetch = GuardedFetch::new(&fetch_config(&[site.addr]));
    let message = refused_message(fetch.fetch(get(&format!("{}/redirect-private", site.base_url))).await);
    assert!(message.contains("169.254.169.254"), "{message}");
    let message = refused_message(fetch.fetch(get(&format!("{}/file-redirect", site.base_url))).await);
    assert!(message.contains("only http and https"), "{message}");
    // A hop to the allowed ip:port itself is fine.
    let fetched = fetch.fetch(get(&format!("{}/redirect-loopback", site.base_url))).await.expect("allowed hop");
    assert_eq!(fetched.final_url, format!("http://127.0.0.1:{}/about", site.addr.port()));
    assert_eq!(
        recorder.requests(),
        vec!["GET /redirect-private", "GET /file-redirect", "GET /redirect-loopback", "GET /about"]
    );

    // Without the allow-list entry the same redirect target is refused.
    let unlisted = GuardedFetch::new(&FetchConfig::default());
    refused_message(unlisted.fetch(get(&format!("{}/redirect-loopback", site.base_url))).await);
}

#[tokio::test]
async fn redirects_are_capped() {
    let (site, recorder) = web::start().await;
    let config = FetchConfig { max_redirects: 3, ..fetch_config(&[site.addr]) };
    let fetch = GuardedFetch::new(&config);
    let fetched = fetch.fetch(get(&format!("{}/redirect/3", site.base_url))).await.expect("three hops");
    assert_eq!(fetched.final_url, format!("{}/redirect/0", site.base_url));
    assert!(String::from_utf8_lossy(&fetched.body).contains("Arrived"));
    let message = refused_message(fetch.fetch(get(&format!("{}/redirect/4", site.base_url))).await);
    assert!(message.contains("more than 3 redirects"), "{message}");
    // Four requests for the first fetch, four (not five) for the second.
    assert_eq!(recorder.requests().len(), 8);
}

#[tokio::test]
async fn the_body_is_cut_at_max_bytes() {
    let (site, _) = web::start().await;
    let url = format!("{}/large", site.base_url);
    let small = GuardedFetch::new(&FetchConfig { max_bytes: 1000, ..fetch_config(&[site.addr]) });
    let fetched = small.fetch(get(&url)).await.expect("cut");
    assert_eq!(fetched.body.len(), 1000);
    assert!(fetched.truncated);
    assert!(fetched.body.starts_with(b"<!DOCTYPE html>"));
    let exact = GuardedFetch::new(&FetchConfig { max_bytes: web::LARGE_BYTES, ..fetch_config(&[site.addr]) });
    let fetched = exact.fetch(get(&url)).await.expect("whole");
    assert_eq!(fetched.body.len(), web::LARGE_BYTES);
    assert!(!fetched.truncated);
}

#[tokio::test]
async fn methods_bodies_and_see_other() {
    let (site, _) = web::start().await;
    let fetch = GuardedFetch::new(&fetch_config(&[site.addr]));
    let direct = format!("{}/echo", site.base_url);
    let fetched = fetch.fetch(post(&direct)).await.expect("post");
    assert_eq!(String::from_utf8_lossy(&fetched.body), "POST /echo body=5");
    let see_other = format!("{}/see-other", site.base_url);
    let fetched = fetch.fetch(post(&see_other)).await.expect("303");
    assert_eq!(String::from_utf8_lossy(&fetched.body), "GET /echo body=0");

    let bad_header = FetchRequest {
        method: reqwest::Method::GET,
        url: &direct,
        headers: vec![("bad name".into(), "v".into())],
        body: None,
    };
    assert!(is_bad_arguments(&fetch.fetch(bad_header).await));
}

#[tokio::test]
async fn the_whole_fetch_is_bounded_in_time() {
    let (site, _) = web::start().await;
    let fetch = GuardedFetch::new(&FetchConfig { timeout_secs: 1, ..fetch_config(&[site.addr]) });
    let started = std::time::Instant::now();
    let result = fetch.fetch(get(&format!("{}/slow", site.base_url))).await;
    assert!(matches!(result, Err(ToolError::Timeout(1))), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(web::SLOW_SECS));
}
