//! Stand-in for ordinary websites, for `scrape_url`, `crawl_url` and the SSRF guard.
//!
//! `start()` serves on loopback and returns `(Running, Recorder)`. Since it listens on
//! 127.0.0.1, a guarded fetch reaches it only when `Running::addr` is in `fetch.allow`.
//! Pages:
//! - `/` "Stand-in home": links to `/about`, `/about#team`, `/docs/`, `/plain.txt`,
//!   `http://other.invalid/x` (another origin), `mailto:` and `javascript:` links;
//!   contains a script, a style and entities.
//! - `/about` links to `/` and `/docs/intro`; `/docs/` links to `intro` and `../about`;
//!   `/docs/intro` links to `/` and `/docs/deeper`; `/docs/deeper` links nowhere.
//! - `/plain.txt` (text/plain), `/data.json` (application/json), `/image.png` (image/png),
//!   `/no-type` (no Content-Type, text body).
//! - `/large`: an HTML page of [`LARGE_BYTES`] bytes.
//! - `/redirect-private`: 302 to `http://169.254.169.254/latest/meta-data/`.
//! - `/redirect-loopback`: 302 to `http://127.0.0.1:<this port>/about` (allowed only by `allow`).
//! - `/redirect/{n}`: 302 to `/redirect/{n-1}`; `/redirect/0` is a page "Arrived".
//! - `/moved`: 301 to `/about`; `/see-other`: 303 to `/echo`.
//! - `/echo`: any method; answers `METHOD path` and the body length as text/plain.
//! - `/file-redirect`: 302 to `file:///etc/passwd`.
//! - `/slow`: answers after [`SLOW_SECS`] seconds.
//!
//! `Recorder::requests` lists every request as `"METHOD /path?query"`.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};

/// Size of `/large` in bytes.
pub const LARGE_BYTES: usize = 2 * 1024 * 1024;
/// How long `/slow` takes.
pub const SLOW_SECS: u64 = 10;

#[derive(Clone, Default)]
pub struct Recorder {
    seen: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    pub fn requests(&self) -> Vec<String> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
    fn record(&self, method: &Method, uri: &Uri) {
        let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).push(format!("{method} {path}"));
    }
}

#[derive(Clone)]
struct App {
    recorder: Recorder,
    port: Arc<Mutex<u16>>,
}

pub async fn start() -> (crate::Running, Recorder) {
    let recorder = Recorder::default();
    let port = Arc::new(Mutex::new(0));
    let app = App { recorder: recorder.clone(), port: port.clone() };
    let router = Router::new()
        .route("/", get(home))
        .route("/about", get(about))
        .route("/docs/", get(docs))
        .route("/docs/intro", get(intro))
        .route("/docs/deeper", get(deeper))
        .route("/plain.txt", get(plain))
        .route("/data.json", get(data))
        .route("/image.png", get(image))
        .route("/no-type", get(no_type))
        .route("/large", get(large))
        .route("/redirect-private", get(redirect_private))
        .route("/redirect-loopback", get(redirect_loopback))
        .route("/redirect/{n}", get(redirect_chain))
        .route("/moved", any(moved))
        .route("/see-other", any(see_other))
        .route("/echo", any(echo))
        .route("/file-redirect", get(file_redirect))
        .route("/slow", get(slow))
        .layer(axum::middleware::from_fn_with_state(app.clone(), record))
        .with_state(app);
    let running = crate::serve(router).await;
    *port.lock().unwrap_or_else(|e| e.into_inner()) = running.addr.port();
    (running, recorder)
}

async fn record(State(app): State<App>, request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    app.recorder.record(request.method(), request.uri());
    next.run(request).await
}

fn html(body: String) -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

fn page(title: &str, body: &str) -> Response {
    html(format!("<!DOCTYPE html><html><head><title>{title}</title></head><body>{body}</body></html>"))
}

fn redirect(status: StatusCode, location: &str) -> Response {
    (status, [(header::LOCATION, location.to_string())], "").into_response()
}

async fn home() -> Response {
    page(
        "Stand-in home",
        r#"<script>document.write("<p>script text</p>")</script><style>p { color: red }</style>
        <h1>Welcome &amp; hello</h1>
        <p>The home page of the stand-in site.</p>
        <ul>
          <li><a href="/about">About</a></li>
          <li><a href="/about#team">Team</a></li>
          <li><a href='/docs/'>Docs</a></li>
          <li><a href="/plain.txt">Plain</a></li>
          <li><a href="http://other.invalid/x">Elsewhere</a></li>
          <li><a href="mailto:someone@example.com">Mail</a></li>
          <li><a href="javascript:void(0)">Nothing</a></li>
        </ul>"#,
    )
}

async fn about() -> Response {
    page("About us", r#"<p>We are a stand-in.</p><a href="/">Home</a> <a href="/docs/intro">Intro</a>"#)
}

async fn docs() -> Response {
    page("Docs index", r#"<p>Documentation.</p><a href="intro">Intro</a> <a href="../about">About</a>"#)
}

async fn intro() -> Response {
    page("Intro", r#"<p>Introduction text.</p><a href="/">Home</a> <a href="/docs/deeper">Deeper</a>"#)
}

async fn deeper() -> Response {
    page("Deeper", "<p>The deepest page.</p>")
}

async fn plain() -> Response {
    ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], "Just plain text.\nSecond line.\n").into_response()
}

async fn data() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], r#"{"answer":42}"#).into_response()
}

async fn image() -> Response {
    let png: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";
    ([(header::CONTENT_TYPE, "image/png")], png).into_response()
}

async fn no_type() -> Response {
    let mut response = Bytes::from_static(b"untyped text body").into_response();
    response.headers_mut().remove(header::CONTENT_TYPE);
    response
}

async fn large() -> Response {
    let head = "<!DOCTYPE html><html><head><title>Large</title></head><body><p>";
    let tail = "</p></body></html>";
    let filler = "x".repeat(LARGE_BYTES - head.len() - tail.len());
    html(format!("{head}{filler}{tail}"))
}

async fn redirect_private() -> Response {
    redirect(StatusCode::FOUND, "http://169.254.169.254/latest/meta-data/")
}

async fn redirect_loopback(State(app): State<App>) -> Response {
    let port = *app.port.lock().unwrap_or_else(|e| e.into_inner());
    redirect(StatusCode::FOUND, &format!("http://127.0.0.1:{port}/about"))
}

async fn redirect_chain(Path(n): Path<u32>) -> Response {
    if n == 0 {
        page("Arrived", "<p>End of the redirect chain.</p>")
    } else {
        redirect(StatusCode::FOUND, &format!("/redirect/{}", n - 1))
    }
}

async fn moved() -> Response {
    redirect(StatusCode::MOVED_PERMANENTLY, "/about")
}

async fn see_other() -> Response {
    redirect(StatusCode::SEE_OTHER, "/echo")
}

async fn echo(method: Method, uri: Uri, body: Bytes) -> Response {
    let text = format!("{method} {} body={}", uri.path(), body.len());
    ([(header::CONTENT_TYPE, "text/plain")], text).into_response()
}

async fn file_redirect() -> Response {
    redirect(StatusCode::FOUND, "file:///etc/passwd")
}

async fn slow() -> Response {
    tokio::time::sleep(std::time::Duration::from_secs(SLOW_SECS)).await;
    page("Slow", "<p>Finally.</p>")
}
