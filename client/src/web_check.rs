//! `svc web-check`: is the page a deployment serves the published bundle? Fetches the
//! manifest, every file it lists (each by the path the page loads it from) and the page
//! headers, and compares them with the bundle this `svc` carries (crate `web-bundle`, built from
//! the same source) or with a published `measurements/web.json`. The answer to "the server
//! could swap the JavaScript": a swap shows here as a file whose hash differs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// What the bundle should be: the manifest's hash and every file's.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Published {
    pub bundle_sha256: String,
    pub files: BTreeMap<String, String>,
}

impl Published {
    /// The bundle this client was built with.
    pub fn embedded() -> Self {
        let files = web_bundle::bundle()
            .iter()
            .filter(|a| a.path != "manifest.json")
            .map(|a| (a.path.to_string(), a.sha256.clone()))
            .collect();
        Published { bundle_sha256: web_bundle::bundle_sha256().to_string(), files }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileCheck {
    pub path: String,
    pub url: String,
    pub expected_sha256: String,
    /// None when it could not be fetched.
    pub served_sha256: Option<String>,
    pub ok: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WebCheck {
    pub base: String,
    pub expected_bundle_sha256: String,
    pub served_manifest_sha256: Option<String>,
    pub files: Vec<FileCheck>,
    /// The page's Content-Security-Policy as served, and whether it is the bundle's.
    pub content_security_policy: Option<String>,
    pub headers_ok: bool,
    /// The expected bundle's leaf in the deployment's transparency log, or why not.
    pub log: Option<crate::log::LogCheck>,
    pub log_error: Option<String>,
    pub matches: bool,
}

/// The URL path a bundle file is loaded from.
fn url_path(file: &str) -> String {
    web_bundle::PAGES.iter().find(|(_, f)| *f == file).map_or(format!("/{file}"), |(p, _)| p.to_string())
}

async fn fetch(http: &reqwest::Client, url: &str) -> Option<(reqwest::header::HeaderMap, Vec<u8>)> {
    let response = http.get(url).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let headers = response.headers().clone();
    Some((headers, response.bytes().await.ok()?.to_vec()))
}

/// The expected bundle's leaf in the log at `base`, its head signed by `log_key` (else by the
/// key the head names).
async fn logged(
    http: &reqwest::Client,
    base: &str,
    expected: &Published,
    log_key: Option<&[u8; 32]>,
) -> Result<crate::log::LogCheck, String> {
    let hash = shared::tlog::hash::parse_hex(&expected.bundle_sha256).ok_or("the expected bundle hash is not hex")?;
    let entry = shared::tlog::entry::web_bundle(&hash);
    let url = format!("{base}/log/v1/proof/inclusion?leafHash={}", hex::encode(shared::tlog::leaf_hash(&entry)));
    let answer = http.get(url).send().await.map_err(|_| "the log could not be reached".to_string())?;
    if !answer.status().is_success() {
        return Err(format!("the bundle is not in the log ({})", answer.status().as_u16()));
    }
    let proof: shared::tlog::wire::InclusionProof =
        answer.json().await.map_err(|_| "the inclusion proof is malformed".to_string())?;
    crate::log::check(&entry, &proof, None, log_key).map_err(|e| e.to_string())
}

pub async fn check(http: &reqwest::Client, base: &str, expected: &Published, log_key: Option<&[u8; 32]>) -> WebCheck {
    let base = base.trim_end_matches('/').to_string();
    let manifest = fetch(http, &format!("{base}/web/manifest.json")).await;
    let served_manifest_sha256 = manifest.as_ref().map(|(_, b)| hex::encode(Sha256::digest(b)));
    let mut files = Vec::new();
    let mut content_security_policy = None;
    for (path, want) in &expected.files {
        let url = format!("{base}{}", url_path(path));
        let served = fetch(http, &url).await;
        if path == "index.html" {
            content_security_policy = served
                .as_ref()
                .and_then(|(h, _)| h.get("content-security-policy"))
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
        }
        let served_sha256 = served.map(|(_, b)| hex::encode(Sha256::digest(&b)));
        let ok = served_sha256.as_deref() == Some(want.as_str());
        files.push(FileCheck { path: path.clone(), url, expected_sha256: want.clone(), served_sha256, ok });
    }
    let headers_ok = content_security_policy.as_deref() == Some(web_bundle::CONTENT_SECURITY_POLICY);
    let log = logged(http, &base, expected, log_key).await;
    let matches = served_manifest_sha256.as_deref() == Some(expected.bundle_sha256.as_str())
        && files.iter().all(|f| f.ok)
        && headers_ok
        && log.is_ok();
    let (log, log_error) = match log {
        Ok(check) => (Some(check), None),
        Err(e) => (None, Some(e)),
    };
    WebCheck {
        base,
        expected_bundle_sha256: expected.bundle_sha256.clone(),
        served_manifest_sha256,
        files,
        content_security_policy,
        headers_ok,
        log,
        log_error,
        matches,
    }
}

impl WebCheck {
    pub fn render(&self) -> String {
        let mut out = format!(
            "web bundle at {}: {}\n  expected bundle {}\n  served manifest {}\n",
            self.base,
            if self.matches { "MATCHES the published bundle" } else { "DIFFERS from the published bundle" },
            self.expected_bundle_sha256,
            self.served_manifest_sha256.as_deref().unwrap_or("(not served)"),
        );
        for f in &self.files {
            let served = f.served_sha256.as_deref().unwrap_or("(not served)");
            let mark = if f.ok { "ok " } else { "BAD" };
            out.push_str(&format!("  {mark} {} {served}\n", f.path));
        }
        out.push_str(&format!(
            "  {} content-security-policy {}\n",
            if self.headers_ok { "ok " } else { "BAD" },
            self.content_security_policy.as_deref().unwrap_or("(none)")
        ));
        match (&self.log, &self.log_error) {
            (Some(c), _) => out.push_str(&format!(
                "  ok  log: the bundle is leaf {} of {} (head signed by log key {})\n",
                c.leaf_index,
                c.tree_size,
                &c.log_key[..16]
            )),
            (None, e) => out.push_str(&format!("  BAD log: {}\n", e.as_deref().unwrap_or("not checked"))),
        }
        out
    }
}
