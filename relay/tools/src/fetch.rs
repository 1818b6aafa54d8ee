//! Fetching a URL the model chose, without reaching anything private (SSRF guard).
//!
//! Rules: only http/https; the host is resolved here, every resolved address is checked
//! (loopback, private, link-local, unique-local, CGNAT, multicast, unspecified, broadcast,
//! documentation, and cloud metadata addresses such as 169.254.169.254 and fd00:ec2::254 are
//! refused), and the connection goes to the checked address only (no second lookup, so DNS
//! rebinding cannot swap it). Redirects are followed by hand, each hop checked the same way,
//! at most `max_redirects`. The body is read up to `max_bytes` and the whole fetch is bounded
//! by `timeout_secs`. `allow` lists exact `ip:port` pairs exempt from the refusal (local tests).
//!
//! How: every hop gets its own `reqwest::Client` whose resolver knows only the addresses
//! checked here (`resolve_to_addrs`) and fails every other lookup, with no proxy and no
//! automatic redirects. A redirect that leaves the origin drops the caller's headers (they may
//! carry credentials meant for the first host); 301/302 after a non-GET and 303 become a GET
//! without a body, as browsers do.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode, Url};

use crate::config::FetchConfig;
use agent::tool::ToolError;

/// One request to a model-chosen URL.
pub struct FetchRequest<'a> {
    pub method: reqwest::Method,
    pub url: &'a str,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
}

/// What came back.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The URL after redirects.
    pub final_url: String,
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
    /// True when the body was cut at `max_bytes`.
    pub truncated: bool,
}

#[derive(Clone)]
pub struct GuardedFetch {
    config: FetchConfig,
    allow: Vec<SocketAddr>,
    tls: rustls::ClientConfig,
}

impl GuardedFetch {
    pub fn new(config: &FetchConfig) -> Self {
        let allow = config
            .allow
            .iter()
            .filter_map(|entry| match entry.trim().parse::<SocketAddr>() {
                Ok(addr) => Some(addr),
                Err(_) => {
                    tracing::warn!(entry = %entry, "ignoring fetch.allow entry that is not an ip:port pair");
                    None
                }
            })
            .collect();
        GuardedFetch { config: config.clone(), allow, tls: chain::web_pki() }
    }

    pub async fn fetch(&self, request: FetchRequest<'_>) -> Result<Fetched, ToolError> {
        let secs = self.config.timeout_secs.max(1);
        match tokio::time::timeout(Duration::from_secs(secs), self.fetch_inner(request, secs)).await {
            Ok(result) => result,
            Err(_) => Err(ToolError::Timeout(secs)),
        }
    }

    async fn fetch_inner(&self, request: FetchRequest<'_>, secs: u64) -> Result<Fetched, ToolError> {
        let mut url =
            Url::parse(request.url.trim()).map_err(|e| ToolError::BadArguments(format!("not a valid URL ({e})")))?;
        let mut headers = header_map(&request.headers)?;
        let mut method = request.method;
        let mut body = request.body;
        let mut redirects = 0u32;
        loop {
            url.set_fragment(None);
            let addrs = self.checked_addrs(&url).await?;
            let client = self.hop_client(&url, &addrs, secs)?;
            let mut builder = client.request(method.clone(), url.clone()).headers(headers.clone());
            if let Some(bytes) = &body {
                builder = builder.body(bytes.clone());
            }
            let host = url.host_str().unwrap_or_default().to_string();
            let response = builder.send().await.map_err(|e| transport_error(&host, &e, secs))?;
            let status = response.status();
            if let Some(next) = redirect_target(&url, status, response.headers()) {
                redirects += 1;
                if redirects > self.config.max_redirects {
                    return Err(ToolError::Refused(format!(
                        "more than {} redirects, stopped at {}",
                        self.config.max_redirects, url
                    )));
                }
                if next.origin() != url.origin() {
                    headers.clear();
                }
                let keeps_method = matches!(status, StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT);
                if !keeps_method && (status == StatusCode::SEE_OTHER || method != Method::GET) && method != Method::HEAD
                {
                    method = Method::GET;
                    body = None;
                    headers.remove(reqwest::header::CONTENT_TYPE);
                    headers.remove(reqwest::header::CONTENT_LENGTH);
                }
                url = next;
                continue;
            }
            return self.read_body(url, response, &host, secs).await;
        }
    }

    /// Resolves the URL's host and checks every address; the result is all the hop may reach.
    async fn checked_addrs(&self, url: &Url) -> Result<Vec<SocketAddr>, ToolError> {
        match url.scheme() {
            "http" | "https" => {}
            other => {
                return Err(ToolError::Refused(format!("only http and https URLs can be fetched, not `{other}:`")));
            }
        }
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| ToolError::BadArguments("URL has no host".into()))?;
        let port = url.port_or_known_default().ok_or_else(|| ToolError::BadArguments("URL has no port".into()))?;
        let literal = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        let addrs: Vec<SocketAddr> = match literal.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => tokio::net::lookup_host((host, port))
                .await
                .map_err(|_| ToolError::Upstream(format!("could not resolve `{host}`")))?
                .collect(),
        };
        if addrs.is_empty() {
            return Err(ToolError::Upstream(format!("could not resolve `{host}`")));
        }
        if addrs.iter().any(|addr| is_forbidden(addr.ip()) && !self.allow.contains(addr)) {
            return Err(ToolError::Refused(format!(
                "`{host}` resolves to a private, local or reserved address; only public hosts can be fetched"
            )));
        }
        Ok(addrs)
    }

    /// A client for one hop: it can reach only `addrs` (any other lookup fails), follows no
    /// redirect and uses no proxy.
    fn hop_client(&self, url: &Url, addrs: &[SocketAddr], secs: u64) -> Result<reqwest::Client, ToolError> {
        let tls = self.tls.clone();
        let mut builder = reqwest::Client::builder()
            .use_preconfigured_tls(tls)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .http1_only()
            .dns_resolver(Arc::new(NoLookup))
            .timeout(Duration::from_secs(secs))
            .connect_timeout(Duration::from_secs(secs.min(10)))
            .user_agent(concat!("svc-agent/", env!("CARGO_PKG_VERSION")));
        if let Some(host) = url.host_str().filter(|h| !h.starts_with('[') && h.parse::<IpAddr>().is_err()) {
            builder = builder.resolve_to_addrs(host, addrs);
        }
        builder.build().map_err(|_| ToolError::Upstream("could not set up the HTTP client".into()))
    }

    async fn read_body(
        &self,
        url: Url,
        mut response: reqwest::Response,
        host: &str,
        secs: u64,
    ) -> Result<Fetched, ToolError> {
        let status = response.status().as_u16();
        let content_type =
            response.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_string);
        let max = self.config.max_bytes;
        let mut body = Vec::new();
        let mut truncated = false;
        while let Some(chunk) = response.chunk().await.map_err(|e| transport_error(host, &e, secs))? {
            let room = max - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Fetched { final_url: url.to_string(), status, content_type, body, truncated })
    }
}

/// The next URL when `status` is a redirect with a usable `Location`; `None` otherwise (the
/// response is then the answer).
fn redirect_target(current: &Url, status: StatusCode, headers: &HeaderMap) -> Option<Url> {
    if !matches!(
        status,
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    ) {
        return None;
    }
    let location = headers.get(reqwest::header::LOCATION)?.to_str().ok()?;
    current.join(location.trim()).ok()
}

fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, ToolError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| ToolError::BadArguments(format!("`{name}` is not a valid header name")))?;
        let value = HeaderValue::from_str(value.trim())
            .map_err(|_| ToolError::BadArguments(format!("the value of header `{name}` is not valid")))?;
        map.append(name, value);
    }
    Ok(map)
}

fn transport_error(host: &str, error: &reqwest::Error, secs: u64) -> ToolError {
    if error.is_timeout() {
        ToolError::Timeout(secs)
    } else if error.is_connect() {
        ToolError::Upstream(format!("could not connect to `{host}`"))
    } else {
        ToolError::Upstream(format!("request to `{host}` failed"))
    }
}

/// The resolver of every hop client: the checked addresses are supplied as overrides, so any
/// lookup that reaches this resolver is one that was not checked, and fails.
struct NoLookup;

impl reqwest::dns::Resolve for NoLookup {
    fn resolve(&self, _name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        Box::pin(std::future::ready(Err("name was not resolved by the guard".into())))
    }
}

/// AWS's IPv4 instance metadata address (inside 169.254.0.0/16, listed for clarity).
const METADATA_V4: Ipv4Addr = Ipv4Addr::new(169, 254, 169, 254);
/// AWS's IPv6 instance metadata address (inside fc00::/7, listed for clarity).
const METADATA_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254);

/// True for every address a model-chosen fetch must not reach.
pub fn is_forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4_forbidden(v4),
        IpAddr::V6(v6) => v6_forbidden(v6),
    }
}

fn v4_forbidden(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip == METADATA_V4
        || ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_documentation()
        || a == 0 // 0.0.0.0/8 "this network"
        || (a == 100 && (b & 0xc0) == 64) // 100.64.0.0/10 CGNAT
        || (a == 192 && b == 0 && c == 0) // 192.0.0.0/24 IETF protocol assignments
        || (a == 192 && b == 88 && c == 99) // 192.88.99.0/24 6to4 relay anycast
        || (a == 198 && (b & 0xfe) == 18) // 198.18.0.0/15 benchmarking
        || a >= 240 // 240.0.0.0/4 reserved (and broadcast)
}

fn v6_forbidden(ip: Ipv6Addr) -> bool {
    // ::ffff:a.b.c.d reaches the IPv4 address: judge that.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return v4_forbidden(v4);
    }
    let s = ip.segments();
    // NAT64 64:ff9b::/96 and 6to4 2002::/16 embed an IPv4 destination: judge that too.
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        return v4_forbidden(embedded_v4(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return v4_forbidden(embedded_v4(s[1], s[2]));
    }
    ip == METADATA_V6
        || ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || ip.is_unique_local() // fc00::/7
        || ip.is_unicast_link_local() // fe80::/10
        || (s[0] & 0xe000) != 0x2000 // outside global unicast 2000::/3 (::/96, 100::/64, fec0::/10, ...)
        || (s[0] == 0x2001 && s[1] < 0x0200) // 2001::/23 IETF protocol assignments (Teredo, ORCHID, ...)
        || (s[0] == 0x2001 && s[1] == 0x0db8) // 2001:db8::/32 documentation
        || (s[0] == 0x3fff && s[1] < 0x1000) // 3fff::/20 documentation
        || s[0] == 0x5f00 // 5f00::/16 SRv6 SIDs
}

fn embedded_v4(high: u16, low: u16) -> Ipv4Addr {
    let [a, b] = high.to_be_bytes();
    let [c, d] = low.to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_classifier_refuses_every_non_public_range_and_allows_public_hosts() {
        let table: &[(&str, bool)] = &[
            // IPv4, refused
            ("0.0.0.0", true),
            ("0.1.2.3", true),
            ("10.0.0.1", true),
            ("10.255.255.255", true),
            ("100.64.0.1", true),
            ("100.127.255.254", true),
            ("127.0.0.1", true),
            ("127.255.255.254", true),
            ("169.254.0.1", true),
            ("169.254.169.254", true),
            ("172.16.0.1", true),
            ("172.31.255.255", true),
            ("192.0.0.8", true),
            ("192.0.2.1", true),
            ("192.88.99.1", true),
            ("192.168.1.1", true),
            ("198.18.0.1", true),
            ("198.19.255.255", true),
            ("198.51.100.7", true),
            ("203.0.113.9", true),
            ("224.0.0.1", true),
            ("239.255.255.250", true),
            ("240.0.0.1", true),
            ("255.255.255.255", true),
            // IPv4, allowed (neighbours of the refused ranges included)
            ("1.1.1.1", false),
            ("8.8.8.8", false),
            ("9.255.255.255", false),
            ("11.0.0.1", false),
            ("100.63.255.255", false),
            ("100.128.0.1", false),
            ("126.255.255.255", false),
            ("128.0.0.1", false),
            ("169.253.255.255", false),
            ("169.255.0.1", false),
            ("172.15.255.255", false),
            ("172.32.0.1", false),
            ("192.0.1.1", false),
            ("192.167.255.255", false),
            ("192.169.0.1", false),
            ("198.17.255.255", false),
            ("198.20.0.1", false),
            ("223.255.255.255", false),
            ("93.184.216.34", false),
            // IPv6, refused
            ("::", true),
            ("::1", true),
            ("::ffff:127.0.0.1", true),
            ("::ffff:10.1.2.3", true),
            ("::ffff:169.254.169.254", true),
            ("::127.0.0.1", true),
            ("64:ff9b::10.0.0.1", true),
            ("64:ff9b::7f00:1", true),
            ("64:ff9b:1::1", true),
            ("100::1", true),
            ("2001::1", true),
            ("2001:1ff::1", true),
            ("2001:db8::1", true),
            ("2002:7f00:1::", true),
            ("2002:a9fe:a9fe::1", true),
            ("3fff::1", true),
            ("5f00::1", true),
            ("fc00::1", true),
            ("fd00::1", true),
            ("fd00:ec2::254", true),
            ("fe80::1", true),
            ("febf::1", true),
            ("fec0::1", true),
            ("ff02::1", true),
            ("ff0e::1", true),
            // IPv6, allowed
            ("2001:4860:4860::8888", false),
            ("2606:4700:4700::1111", false),
            ("2a00:1450:4001:80b::200e", false),
            ("::ffff:8.8.8.8", false),
            ("64:ff9b::808:808", false),
            ("2002:808:808::1", false),
            ("2001:200::1", false),
            ("3fff:1000::1", false),
        ];
        for (text, refused) in table {
            let ip: IpAddr = text.parse().unwrap_or_else(|_| panic!("test address {text} parses"));
            assert_eq!(is_forbidden(ip), *refused, "{text} should be {}", if *refused { "refused" } else { "allowed" });
        }
    }

    #[test]
    fn malformed_allow_entries_are_ignored() {
        let config = FetchConfig {
            allow: vec!["127.0.0.1:8080".into(), "localhost:80".into(), "[::1]:443".into(), "10.0.0.1".into()],
            ..FetchConfig::default()
        };
        let fetch = GuardedFetch::new(&config);
        let expected: Vec<SocketAddr> = vec!["127.0.0.1:8080".parse().unwrap(), "[::1]:443".parse().unwrap()];
        assert_eq!(fetch.allow, expected);
    }

    #[test]
    fn redirects_resolve_relative_locations_and_ignore_other_statuses() {
        let base = Url::parse("http://example.com/a/b?x=1").unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(reqwest::header::LOCATION, HeaderValue::from_static("../c#frag"));
        let next = redirect_target(&base, StatusCode::FOUND, &headers).unwrap();
        assert_eq!(next.as_str(), "http://example.com/c#frag");
        assert_eq!(redirect_target(&base, StatusCode::OK, &headers), None);
        assert_eq!(redirect_target(&base, StatusCode::NOT_MODIFIED, &headers), None);
        assert_eq!(redirect_target(&base, StatusCode::FOUND, &HeaderMap::new()), None);
    }

    #[test]
    fn header_names_and_values_are_validated() {
        assert!(header_map(&[("x-ok".into(), "v".into())]).is_ok());
        assert!(matches!(header_map(&[("bad name".into(), "v".into())]), Err(ToolError::BadArguments(_))));
        assert!(matches!(header_map(&[("x".into(), "a\nb".into())]), Err(ToolError::BadArguments(_))));
    }
}
