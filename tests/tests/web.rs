//! The web app as the relay and `svc proxy` serve it (the pages themselves are tested in a real
//! browser by relay/web/test/browser.test.mjs): the exact bytes of the published bundle with
//! their headers, `svc web-check` accepting them and naming a swapped script, and the proxy
//! serving the page from svc's own copy with svc's own development root.

use std::process::Command;
use std::time::{Duration, Instant};

use e2e::{Process, Stack, binary, free_port};
use serde_json::Value;
use sha2::{Digest, Sha256};

const PUBLISHED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/web.json");

fn published() -> Value {
    serde_json::from_slice(&std::fs::read(PUBLISHED).unwrap()).unwrap()
}

/// The path the page loads a bundle file from.
fn url_path(file: &str) -> String {
    web_bundle::PAGES.iter().find(|(_, f)| *f == file).map_or(format!("/{file}"), |(p, _)| p.to_string())
}

#[tokio::test]
async fn the_relay_serves_the_published_bundle_with_its_headers() {
    let stack = Stack::start();
    let http = reqwest::Client::new();
    let published = published();
    // The embedded list is the manifest's, and the manifest's hash is the published one.
    let manifest =
        http.get(format!("{}/web/manifest.json", stack.relay_url)).send().await.unwrap().bytes().await.unwrap();
    assert_eq!(hex::encode(Sha256::digest(&manifest)), published["bundleSha256"].as_str().unwrap());
    let listed: Value = serde_json::from_slice(&manifest).unwrap();
    let mut embedded: Vec<&str> =
        web_bundle::bundle().iter().map(|a| a.path).filter(|p| *p != "manifest.json").collect();
    embedded.sort();
    let manifest_files: Vec<&str> = listed["files"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(embedded, manifest_files);
    assert_eq!(listed["files"], published["files"]);

    for (file, digest) in listed["files"].as_object().unwrap() {
        let url = format!("{}{}", stack.relay_url, url_path(file));
        let answer = http.get(&url).send().await.unwrap();
        assert_eq!(answer.status(), 200, "{url}");
        let headers = answer.headers().clone();
        let body = answer.bytes().await.unwrap();
        assert_eq!(hex::encode(Sha256::digest(&body)), digest.as_str().unwrap(), "{file}");
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
        assert_eq!(header("content-security-policy"), web_bundle::CONTENT_SECURITY_POLICY, "{file}");
        assert!(header("content-security-policy").contains("script-src 'self';"));
        assert!(header("content-security-policy").contains("frame-ancestors 'none'"));
        assert_eq!(header("referrer-policy"), "no-referrer");
        assert_eq!(header("x-content-type-options"), "nosniff");
        assert_eq!(header("integrity-policy"), "blocked-destinations=(script)");
        assert_eq!(header("etag"), format!("\"{}\"", digest.as_str().unwrap()));
        // Revalidation by the file's hash.
        let again = http.get(&url).header("if-none-match", header("etag")).send().await.unwrap();
        assert_eq!(again.status(), 304, "{file}");
        assert_eq!(again.headers()["content-security-policy"], web_bundle::CONTENT_SECURITY_POLICY);
    }
    // No development root unless configured (make run configures one).
    let dev = http.get(format!("{}/web/dev-trust.json", stack.relay_url)).send().await.unwrap();
    assert_eq!(dev.status(), 404);
    assert_eq!(dev.json::<Value>().await.unwrap()["error"], "not_found");
    let missing = http.get(format!("{}/assets/nothing.js", stack.relay_url)).send().await.unwrap();
    assert_eq!(missing.status(), 404);
}

fn web_check(base: &str, extra: &[&str]) -> (i32, Value) {
    let out = Command::new(binary("svc")).args(["--relay", base, "--json", "web-check"]).args(extra).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    (out.status.code().unwrap_or(-1), serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}")))
}

/// A server that serves the bundle with one script byte changed: what a relay that swaps the
/// JavaScript looks like to `svc web-check`.
async fn swapped_server() -> String {
    use axum::http::{HeaderName, HeaderValue};
    use axum::response::IntoResponse;
    let app = axum::Router::new().fallback(|uri: axum::http::Uri| async move {
        let Some(asset) = web_bundle::for_path(uri.path()) else {
            return axum::http::StatusCode::NOT_FOUND.into_response();
        };
        let mut bytes = asset.bytes.to_vec();
        if asset.path == "assets/chat.js" {
            bytes[100] ^= 1;
        }
        let mut response = bytes.into_response();
        for (name, value) in web_bundle::HEADERS {
            response.headers_mut().insert(HeaderName::from_static(name), HeaderValue::from_static(value));
        }
        response
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

#[tokio::test]
async fn svc_web_check_accepts_the_published_bundle_and_names_a_swapped_script() {
    let stack = Stack::start();
    let relay = stack.relay_url.clone();
    let (code, report) = tokio::task::spawn_blocking(move || web_check(&relay, &[])).await.unwrap();
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["matches"], true);
    assert_eq!(report["expectedBundleSha256"], published()["bundleSha256"]);
    // The relay logged the bundle it serves when it started: its first leaf.
    assert_eq!(report["log"]["leafIndex"], 0, "{report}");
    // The same against the published file.
    let relay = stack.relay_url.clone();
    let (code, _) = tokio::task::spawn_blocking(move || web_check(&relay, &["--published", PUBLISHED])).await.unwrap();
    assert_eq!(code, 0);

    let swapped = swapped_server().await;
    let (code, report) = tokio::task::spawn_blocking(move || web_check(&swapped, &[])).await.unwrap();
    assert_eq!(code, 10, "{report}");
    assert_eq!(report["matches"], false);
    let bad: Vec<&str> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["ok"] == false)
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(bad, ["assets/chat.js"]);
    // The served manifest is still the published one: the script's own hash gives it away.
    assert_eq!(report["servedManifestSha256"], report["expectedBundleSha256"]);
    // And a server with no log has no leaf to show for its bundle.
    assert!(report["logError"].as_str().unwrap().contains("not in the log"), "{report}");

    let (code, _) = tokio::task::spawn_blocking(|| web_check("http://127.0.0.1:9", &["--published", "/nonexistent"]))
        .await
        .unwrap();
    assert_eq!(code, 30);
}

#[tokio::test]
async fn svc_proxy_serves_the_page_from_its_own_bundle_and_root() {
    let stack = Stack::start();
    let port = free_port();
    let mut cmd = Command::new(binary("svc"));
    cmd.args(["--relay", &stack.relay_url, "--api-key", &stack.api_key])
        .arg("--measurements")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/dev.json"))
        .arg("--dev-root")
        .arg(stack.dev_root_pem_path())
        .args(["proxy", "--listen", &format!("127.0.0.1:{port}"), "--token", "local-token"]);
    let process = Process::spawn_command(&mut cmd, stack.dir.path().join("proxy.log"));
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let page = loop {
        if let Ok(answer) = http.get(format!("{base}/")).send().await
            && answer.status() == 200
        {
            break answer;
        }
        assert!(Instant::now() < deadline, "the proxy never served: {}", process.log_text());
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // The page's own bytes and headers, with no token (the page shows its own key).
    assert_eq!(page.headers()["content-security-policy"], web_bundle::CONTENT_SECURITY_POLICY);
    let index = web_bundle::for_path("/").unwrap();
    assert_eq!(page.bytes().await.unwrap().as_ref(), index.bytes);
    // The development root is svc's own, not the relay's (the relay offers none here).
    let trust: Value = http.get(format!("{base}/web/dev-trust.json")).send().await.unwrap().json().await.unwrap();
    assert_eq!(trust["rootPem"].as_str().unwrap(), std::fs::read_to_string(stack.dev_root_pem_path()).unwrap());
    assert_eq!(trust["measurements"]["images"][0]["mrtd"], "d0".repeat(48));
    // The page's API calls pass to the relay unchanged.
    let attestation: Value = http
        .get(format!("{base}/tee/attestation?nonce={}", "ab".repeat(32)))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(attestation["nonce"], "ab".repeat(32));
    assert!(attestation["nonceSignature"].is_string());
    // A web page elsewhere gets nothing; the OpenAI routes still need the token; nothing else passes.
    let foreign =
        http.get(format!("{base}/tee/attestation")).header("origin", "https://attacker.example").send().await.unwrap();
    assert_eq!(foreign.status(), 403);
    assert_eq!(http.get(format!("{base}/v1/models")).send().await.unwrap().status(), 401);
    let other = http.get(format!("{base}/tee/keys")).bearer_auth("local-token").send().await.unwrap();
    assert_eq!(other.status(), 404);
    drop(process);
}
