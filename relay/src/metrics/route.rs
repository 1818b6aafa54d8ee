//! The two places requests meet the metrics: the timer that counts every request under the
//! route template it matched (run by the router's one layer), and the `GET /metrics` handler.

use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request, State};
use axum::http::{Method, header};
use axum::response::{IntoResponse, Response};

use super::exposition::{CONTENT_TYPE, Exposition};
use super::requests::{Requests, UNMATCHED};
use crate::state::App;

/// One request's count and latency, under the route template it matched (set by the router
/// before its layers run, since router layers wrap each route): started when the request
/// comes, recorded once its response head is ready.
pub struct Timer {
    route: Option<MatchedPath>,
    method: Method,
    started: Instant,
}

impl Timer {
    pub fn start(request: &Request) -> Self {
        Timer {
            route: request.extensions().get::<MatchedPath>().cloned(),
            method: request.method().clone(),
            started: Instant::now(),
        }
    }

    /// The template, or `unmatched` (never a raw path: it could carry an address).
    pub fn route(&self) -> &str {
        self.route.as_ref().map_or(UNMATCHED, MatchedPath::as_str)
    }

    pub fn method(&self) -> &Method {
        &self.method
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    pub fn record(&self, requests: &Requests, status: u16) {
        requests.record(self.route(), &self.method, status, self.elapsed());
    }
}

/// `GET /metrics`.
#[utoipa::path(get, path = "/metrics", tag = "meta",
    summary = "Metrics in the Prometheus text format 0.0.4: requests, latency, billing outcomes, enclaves, log size",
    responses((status = 200, description = "Prometheus text exposition format 0.0.4", content_type = "text/plain", body = String)))]
pub async fn handle(State(app): State<App>) -> Response {
    let mut out = Exposition::default();
    app.metrics.requests.render(&mut out);
    app.metrics.billing.render(&mut out);
    super::gauges::enclaves(&app, &mut out);
    super::gauges::log_size(&app, &mut out).await;
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], out.finish()).into_response()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use axum::Router;
    use axum::body::Body;
    use axum::routing::get;
    use tower::ServiceExt;

    use super::*;

    /// The labels are the templates the router matched, whatever path was sent.
    #[tokio::test]
    async fn requests_are_counted_under_their_route_template() {
        let requests = Arc::new(Requests::default());
        let nested = tower::service_fn(|_req: Request| async {
            Ok::<_, std::convert::Infallible>(Response::new(Body::from("mcp")))
        });
        let app = Router::new()
            .route("/attestation/{address}", get(|| async { "ok" }))
            .nest_service("/mcp/v1", nested)
            .fallback(|| async { (axum::http::StatusCode::NOT_FOUND, "no") })
            .layer(axum::middleware::from_fn_with_state(
                requests.clone(),
                |State(r): State<Arc<Requests>>, req: Request, next: axum::middleware::Next| async move {
                    let timer = Timer::start(&req);
                    let response = next.run(req).await;
                    timer.record(&r, response.status().as_u16());
                    response
                },
            ));
        for uri in [
            "/attestation/SecretAddr1",
            "/attestation/SecretAddr2",
            "/mcp/v1",
            "/mcp/v1/SecretTail",
            "/nowhere/SecretPath",
        ] {
            let request = axum::http::Request::get(uri).body(Body::empty()).unwrap();
            app.clone().oneshot(request).await.unwrap();
        }
        let mut out = Exposition::default();
        requests.render(&mut out);
        let text = out.finish();
        assert!(!text.contains("Secret"), "a raw path reached a label:\n{text}");
        for line in [
            "svc_http_requests_total{route=\"/attestation/{address}\",method=\"GET\",status=\"200\"} 2",
            "svc_http_requests_total{route=\"/mcp/v1\",method=\"GET\",status=\"200\"} 1",
            // Below a nested service's mount the router names no template: counted, unnamed.
            "svc_http_requests_total{route=\"unmatched\",method=\"GET\",status=\"200\"} 1",
            "svc_http_requests_total{route=\"unmatched\",method=\"GET\",status=\"404\"} 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing from\n{text}");
        }
    }
}
