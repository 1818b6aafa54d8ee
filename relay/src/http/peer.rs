//! The caller's network address, for the free trial and per-address limits: the socket's
//! peer, or, only when that peer is a configured trusted proxy, the right-most address of
//! `X-Forwarded-For` that is not itself a trusted proxy (the left part is client-supplied).
//! IPv6 callers are grouped by prefix (a /64 by default): one subscriber gets a whole /64, so
//! counting single IPv6 addresses would give each unlimited free calls.

use std::net::{IpAddr, SocketAddr};

use axum::http::HeaderMap;

/// How callers are told apart.
#[derive(Debug, Clone)]
pub struct Peers {
    pub trusted_proxies: Vec<IpAddr>,
    /// Leading bits of an IPv6 address that name one caller (0 to 128).
    pub ipv6_prefix: u8,
}

impl Peers {
    /// The caller as counted: its address, an IPv6 one cut to the prefix.
    pub fn caller(&self, peer: SocketAddr, headers: &HeaderMap) -> IpAddr {
        bucket(client_address(peer, headers, &self.trusted_proxies), self.ipv6_prefix)
    }
}

/// `ip` with the bits after `prefix` cleared (IPv6 only).
fn bucket(ip: IpAddr, prefix: u8) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix.min(128))).unwrap_or(0);
            IpAddr::V6((bits & mask).into())
        }
        v4 => v4,
    }
}

pub fn client_address(peer: SocketAddr, headers: &HeaderMap, trusted: &[IpAddr]) -> IpAddr {
    let peer_ip = canonical(peer.ip());
    if !trusted.contains(&peer_ip) {
        return peer_ip;
    }
    let forwarded = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect::<Vec<_>>();
    for hop in forwarded.iter().rev() {
        match hop.parse::<IpAddr>().map(canonical) {
            Ok(ip) if trusted.contains(&ip) => continue,
            Ok(ip) => return ip,
            // A malformed hop ends the trusted chain: what lies left of it cannot be believed.
            Err(_) => return peer_ip,
        }
    }
    peer_ip
}

/// `::ffff:a.b.c.d` and `a.b.c.d` are one caller.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn xff(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-for", HeaderValue::from_str(v).unwrap());
        h
    }

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_proxies() {
        let proxy: IpAddr = "10.0.0.2".parse().unwrap();
        let from_proxy: SocketAddr = "10.0.0.2:5000".parse().unwrap();
        let direct: SocketAddr = "203.0.113.9:5000".parse().unwrap();
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        // Direct callers cannot choose their address.
        assert_eq!(client_address(direct, &xff("198.51.100.1"), &[proxy]), ip("203.0.113.9"));
        // Through the proxy: the right-most untrusted hop, not the spoofable left one.
        assert_eq!(client_address(from_proxy, &xff("1.1.1.1, 198.51.100.7"), &[proxy]), ip("198.51.100.7"));
        assert_eq!(client_address(from_proxy, &xff("198.51.100.7, 10.0.0.2"), &[proxy]), ip("198.51.100.7"));
        assert_eq!(client_address(from_proxy, &HeaderMap::new(), &[proxy]), proxy);
        assert_eq!(client_address(from_proxy, &xff("1.1.1.1, junk"), &[proxy]), proxy);
        let mapped: SocketAddr = "[::ffff:203.0.113.9]:1".parse().unwrap();
        assert_eq!(client_address(mapped, &HeaderMap::new(), &[]), ip("203.0.113.9"));
    }

    #[test]
    fn ipv6_callers_are_one_per_prefix() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let peers = Peers { trusted_proxies: Vec::new(), ipv6_prefix: 64 };
        let at = |s: &str| peers.caller(s.parse().unwrap(), &HeaderMap::new());
        assert_eq!(at("[2001:db8:1:2:aaaa::1]:1"), ip("2001:db8:1:2::"));
        assert_eq!(at("[2001:db8:1:2:ffff:ffff:ffff:ffff]:1"), at("[2001:db8:1:2::7]:9"));
        assert_ne!(at("[2001:db8:1:3::1]:1"), at("[2001:db8:1:2::1]:1"));
        assert_eq!(at("198.51.100.7:1"), ip("198.51.100.7"), "IPv4 is kept whole");
        assert_eq!(bucket(ip("2001:db8::1"), 128), ip("2001:db8::1"));
        assert_eq!(bucket(ip("2001:db8::1"), 0), ip("::"));
        assert_eq!(bucket(ip("2001:db8:ffff::1"), 48), ip("2001:db8:ffff::"));
    }
}
