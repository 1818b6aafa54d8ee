//! The web app (docs/web.md): the chat page at `/`, the operator's site at `/account`, their
//! assets and manifest, all embedded from `relay/web/dist/` (crate `web-bundle`), so the relay
//! serves exactly the bundle whose hash is published. The page verifies the enclave and seals
//! every prompt itself; here the relay only serves files.

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

use crate::http::error::RelayError;
use crate::state::App;

/// The `web` section of the relay's configuration.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebConfig {
    /// A development quote root (PEM) and the placeholder measurements its quotes carry,
    /// offered at `/web/dev-trust.json` (`make run`). The page takes them only when it is
    /// itself served from a loopback address, and then says "development" wherever it shows
    /// the verdict.
    pub dev_root_pem: Option<std::path::PathBuf>,
    pub dev_measurements: Option<std::path::PathBuf>,
}

pub fn routes() -> Router<App> {
    let mut router = Router::new();
    for (path, _) in web_bundle::PAGES {
        router = router.route(path, get(file));
    }
    router.route("/assets/{file}", get(file)).route("/web/dev-trust.json", get(dev_trust))
}

async fn file(uri: Uri, request: HeaderMap) -> Response {
    match web_bundle::for_path(uri.path()) {
        Some(asset) => serve(asset, &request),
        None => RelayError::NotFound("no such file").into_response(),
    }
}

/// One embedded file with the page headers; `If-None-Match` on its hash answers 304.
pub fn serve(asset: &web_bundle::Asset, request: &HeaderMap) -> Response {
    let etag = format!("\"{}\"", asset.sha256);
    let matched = request.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) == Some(etag.as_str());
    let mut response = match matched {
        true => StatusCode::NOT_MODIFIED.into_response(),
        false => ([(header::CONTENT_TYPE, asset.content_type)], asset.bytes).into_response(),
    };
    let headers = response.headers_mut();
    for (name, value) in web_bundle::HEADERS {
        headers.insert(HeaderName::from_static(name), HeaderValue::from_static(value));
    }
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, value);
    }
    response
}

/// `GET /web/dev-trust.json` → `{rootPem, measurements}`, only when configured (`make run`).
async fn dev_trust(State(app): State<App>) -> Result<Response, RelayError> {
    let (Some(root), Some(measurements)) = (&app.web.dev_root_pem, &app.web.dev_measurements) else {
        return Err(RelayError::NotFound("this relay offers no development root"));
    };
    // Read on each request: the enclave writes its root when it starts, which may be after us.
    let root =
        std::fs::read_to_string(root).map_err(|_| RelayError::NotFound("the development root is not written yet"))?;
    let measurements: serde_json::Value = std::fs::read(measurements)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or(RelayError::Internal("the development measurements do not read"))?;
    let mut response = axum::Json(serde_json::json!({ "rootPem": root, "measurements": measurements })).into_response();
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}
