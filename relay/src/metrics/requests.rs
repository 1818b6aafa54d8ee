//! Requests by route template, method and status, and a latency histogram per route
//! template. The route is the template the router matched (`/attestation/{address}`), or
//! `unmatched`: never the path a caller sent, which would put addresses and ids in labels and
//! let callers grow the series without bound.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::http::Method;

use super::exposition::{Exposition, Kind};

/// The route label of a request no route matched.
pub const UNMATCHED: &str = "unmatched";

/// Upper bounds of the latency buckets, in seconds: Prometheus's defaults, then the minutes a
/// private call may take (the enclave timeout is 330 s by default).
pub const BUCKETS: [f64; 15] =
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

const REQUESTS: &str = "svc_http_requests_total";
const DURATION: &str = "svc_http_request_duration_seconds";

/// Every route's series, created on a route's first request.
#[derive(Debug, Default)]
pub struct Requests {
    routes: RwLock<HashMap<String, Arc<RouteSeries>>>,
}

#[derive(Debug, Default)]
struct RouteSeries {
    latency: Histogram,
    /// (method, status) → requests.
    counts: RwLock<BTreeMap<(&'static str, u16), Arc<AtomicU64>>>,
}

impl Requests {
    /// Counts one answered request of `route` (a template, or [`UNMATCHED`]).
    pub fn record(&self, route: &str, method: &Method, status: u16, elapsed: Duration) {
        let series = self.series(route);
        series.latency.observe(elapsed);
        let key = (method_label(method), status);
        let known = series.counts.read().unwrap_or_else(|e| e.into_inner()).get(&key).cloned();
        let counter = match known {
            Some(c) => c,
            None => series.counts.write().unwrap_or_else(|e| e.into_inner()).entry(key).or_default().clone(),
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn series(&self, route: &str) -> Arc<RouteSeries> {
        // A lock poisoned by a panic elsewhere still holds consistent maps (inserts only).
        if let Some(s) = self.routes.read().unwrap_or_else(|e| e.into_inner()).get(route) {
            return s.clone();
        }
        self.routes.write().unwrap_or_else(|e| e.into_inner()).entry(route.to_string()).or_default().clone()
    }

    /// Both families, routes in name order.
    pub fn render(&self, out: &mut Exposition) {
        let mut routes: Vec<(String, Arc<RouteSeries>)> =
            self.routes.read().unwrap_or_else(|e| e.into_inner()).iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        routes.sort_by(|a, b| a.0.cmp(&b.0));
        out.family(REQUESTS, "Requests answered, by route template, method and status code.", Kind::Counter);
        for (route, series) in &routes {
            let counts = series.counts.read().unwrap_or_else(|e| e.into_inner());
            for ((method, status), n) in counts.iter() {
                let status = status.to_string();
                let labels = [("route", route.as_str()), ("method", *method), ("status", status.as_str())];
                out.sample(REQUESTS, &labels, n.load(Ordering::Relaxed));
            }
        }
        out.family(DURATION, "Time to the response head, by route template.", Kind::Histogram);
        for (route, series) in &routes {
            series.latency.render(out, route);
        }
    }
}

/// The method as a label: the standard ones by name, any other as `other` (a method is any
/// token a caller chooses).
fn method_label(method: &Method) -> &'static str {
    match method.as_str() {
        "GET" => "GET",
        "POST" => "POST",
        "PUT" => "PUT",
        "DELETE" => "DELETE",
        "PATCH" => "PATCH",
        "HEAD" => "HEAD",
        "OPTIONS" => "OPTIONS",
        "CONNECT" => "CONNECT",
        "TRACE" => "TRACE",
        _ => "other",
    }
}

/// One latency histogram. Each observation is counted once, in the first bucket that holds
/// it (made cumulative when rendered); `count` is raised before the bucket, and read after
/// the buckets, so a scrape never shows a bucket above `+Inf`.
#[derive(Debug, Default)]
struct Histogram {
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_micros: AtomicU64,
}

impl Histogram {
    fn observe(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        self.count.fetch_add(1, Ordering::SeqCst);
        if let Some(i) = BUCKETS.iter().position(|bound| seconds <= *bound) {
            self.buckets[i].fetch_add(1, Ordering::SeqCst);
        }
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.sum_micros.fetch_add(micros, Ordering::SeqCst);
    }

    fn render(&self, out: &mut Exposition, route: &str) {
        let bucket = format!("{DURATION}_bucket");
        let mut cumulative = 0u64;
        for (bound, n) in BUCKETS.iter().zip(&self.buckets) {
            cumulative += n.load(Ordering::SeqCst);
            let le = bound.to_string();
            out.sample(&bucket, &[("route", route), ("le", le.as_str())], cumulative);
        }
        let count = self.count.load(Ordering::SeqCst);
        out.sample(&bucket, &[("route", route), ("le", "+Inf")], count);
        let sum = self.sum_micros.load(Ordering::SeqCst) as f64 / 1e6;
        out.sample(&format!("{DURATION}_sum"), &[("route", route)], sum);
        out.sample(&format!("{DURATION}_count"), &[("route", route)], count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_cumulative_buckets_per_route() {
        let r = Requests::default();
        r.record("/a/{id}", &Method::GET, 200, Duration::from_millis(3));
        r.record("/a/{id}", &Method::GET, 200, Duration::from_millis(700));
        r.record("/a/{id}", &Method::GET, 404, Duration::from_secs(400));
        r.record(UNMATCHED, &Method::from_bytes(b"BREW").unwrap(), 405, Duration::ZERO);
        let mut e = Exposition::default();
        r.render(&mut e);
        let text = e.finish();
        for line in [
            "svc_http_requests_total{route=\"/a/{id}\",method=\"GET\",status=\"200\"} 2",
            "svc_http_requests_total{route=\"/a/{id}\",method=\"GET\",status=\"404\"} 1",
            "svc_http_requests_total{route=\"unmatched\",method=\"other\",status=\"405\"} 1",
            "svc_http_request_duration_seconds_bucket{route=\"/a/{id}\",le=\"0.005\"} 1",
            "svc_http_request_duration_seconds_bucket{route=\"/a/{id}\",le=\"0.5\"} 1",
            "svc_http_request_duration_seconds_bucket{route=\"/a/{id}\",le=\"1\"} 2",
            "svc_http_request_duration_seconds_bucket{route=\"/a/{id}\",le=\"300\"} 2",
            "svc_http_request_duration_seconds_bucket{route=\"/a/{id}\",le=\"+Inf\"} 3",
            "svc_http_request_duration_seconds_sum{route=\"/a/{id}\"} 400.703",
            "svc_http_request_duration_seconds_count{route=\"/a/{id}\"} 3",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing from\n{text}");
        }
        // One family each, samples after their TYPE line.
        assert_eq!(text.matches("# TYPE ").count(), 2);
    }
}
