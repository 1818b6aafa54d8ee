//! The web app's bundle, built from `src/` into `dist/` by `build.mjs` (docs/web.md) and
//! embedded here byte for byte, so that `cargo build` never needs Node and the relay and
//! `svc proxy` serve exactly the files whose hashes `manifest.json` lists. The bundle's
//! published hash (`measurements/web.json`) is the SHA-256 of `manifest.json`.
//!
//! The files are listed by hand: a file added to `dist/` but not here (or the reverse) fails
//! the relay's web tests, which compare this list with the manifest.

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

pub struct Asset {
    /// The path under `dist/`, as `manifest.json` names it.
    pub path: &'static str,
    pub content_type: &'static str,
    pub bytes: &'static [u8],
    /// Hex SHA-256 of `bytes`.
    pub sha256: String,
}

macro_rules! embed {
    ($path:literal, $type:literal) => {
        ($path, $type, include_bytes!(concat!("dist/", $path)) as &[u8])
    };
}

const FILES: [(&str, &str, &[u8]); 6] = [
    embed!("index.html", "text/html; charset=utf-8"),
    embed!("account.html", "text/html; charset=utf-8"),
    embed!("manifest.json", "application/json"),
    embed!("assets/chat.js", "text/javascript; charset=utf-8"),
    embed!("assets/account.js", "text/javascript; charset=utf-8"),
    embed!("assets/style.css", "text/css; charset=utf-8"),
];

/// Which file each page path serves.
pub const PAGES: [(&str, &str); 3] =
    [("/", "index.html"), ("/account", "account.html"), ("/web/manifest.json", "manifest.json")];

/// Every embedded file, hashed once.
pub fn bundle() -> &'static [Asset] {
    static BUNDLE: OnceLock<Vec<Asset>> = OnceLock::new();
    BUNDLE.get_or_init(|| {
        FILES
            .iter()
            .map(|&(path, content_type, bytes)| Asset {
                path,
                content_type,
                bytes,
                sha256: hex::encode(Sha256::digest(bytes)),
            })
            .collect()
    })
}

/// The file a request path names: a page (`PAGES`) or `/assets/<file>`.
pub fn for_path(path: &str) -> Option<&'static Asset> {
    let name = PAGES.iter().find(|(p, _)| *p == path).map(|(_, f)| *f).or_else(|| path.strip_prefix('/'))?;
    if !(PAGES.iter().any(|(_, f)| *f == name) || name.starts_with("assets/")) {
        return None;
    }
    bundle().iter().find(|a| a.path == name)
}

/// The published hash of the bundle: SHA-256 of `manifest.json`, which lists every file's.
pub fn bundle_sha256() -> &'static str {
    bundle().iter().find(|a| a.path == "manifest.json").map_or("", |a| a.sha256.as_str())
}

/// The page's Content-Security-Policy: its own scripts and styles and its own origin's API,
/// nothing else; no inline script, no `eval`, no WASM, no framing. `require-trusted-types-for`
/// lets only DOMPurify's policy write HTML (model replies rendered as Markdown).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; \
     require-trusted-types-for 'script'; trusted-types dompurify";

/// The headers every page and asset carries (besides its type and `ETag`).
pub const HEADERS: [(&str, &str); 9] = [
    ("content-security-policy", CONTENT_SECURITY_POLICY),
    // Scripts load only with an integrity hash that matches (browsers that know the header).
    ("integrity-policy", "blocked-destinations=(script)"),
    ("referrer-policy", "no-referrer"),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
    ("permissions-policy", "camera=(), microphone=(), geolocation=(), payment=()"),
    // Revalidated every time, so a changed deployment is seen at once; the ETag (the file's
    // hash) keeps that cheap.
    ("cache-control", "no-cache"),
];
