//! Who the caller is (its address), and whether it reached Gable over https: worked out once per
//! request from the TCP peer, the forwarding headers and the trusted-proxy list, and
//! put in the request's extensions as `Caller` (the console throttles sign-in and
//! sign-up by its address and marks cookies `Secure` by it).
//!
//! Forwarding headers are believed only from a peer in the trusted list (empty by
//! default): anyone else could write anything in them. From a trusted peer:
//! - the client is the right-most address of `X-Forwarded-For` (or, when the request
//!   has none, of `Forwarded`'s `for=`) that is not itself a trusted proxy. Each proxy
//!   appends the address it saw, so the entries right of the client were written by
//!   proxies we trust, and whatever a client prepends stays to the left, unread. A
//!   hop a trusted proxy could not name (`unknown`, obfuscated, malformed) stops the
//!   walk at that proxy: its address stands for the client. When every hop is a
//!   trusted proxy, the left-most one is the client.
//! - https: `X-Forwarded-Proto` (or, when absent, `Forwarded`'s `proto=`), its first
//!   value, i.e. the scheme the outermost proxy received. A client that lies about it
//!   only changes the cookie sent back to itself.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request};
use axum::http::HeaderMap;
pub use gable_app::api::Caller;
use ipnet::IpNet;

/// The proxies whose forwarding headers are believed, in the request's extensions
/// (put there by the listener, `startup.rs`); absent means none.
#[derive(Clone, Debug, Default)]
pub struct TrustedProxies(Arc<[IpNet]>);

impl TrustedProxies {
    pub fn new(nets: &[IpNet]) -> Self {
        TrustedProxies(nets.into())
    }

    pub fn contains(&self, ip: &IpAddr) -> bool {
        self.0.iter().any(|net| net.contains(ip))
    }
}

/// Works out the request's client and puts it in its extensions (`http::edge`).
pub fn attach(req: &mut Request) {
    let peer = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip());
    let info = match req.extensions().get::<TrustedProxies>() {
        Some(trusted) => resolve(peer, req.headers(), trusted),
        None => resolve(peer, req.headers(), &TrustedProxies::default()),
    };
    req.extensions_mut().insert(info);
}

/// Whether a browser says the request comes from a page of another origin: its `Origin`
/// names another host than the one asked, or (without `Origin`) its `Sec-Fetch-Site` is
/// not same-origin. A request with neither header is not one a page could drive.
pub fn cross_site(headers: &HeaderMap) -> bool {
    let host = headers.get(axum::http::header::HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
    let origin_host =
        headers.get(axum::http::header::ORIGIN).and_then(|v| v.to_str().ok()).map(|o| o.split_once("://").map_or(o, |(_, rest)| rest));
    let fetch_site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
    match (origin_host, fetch_site) {
        // `Origin: null` names no origin (a page with `Referrer-Policy: no-referrer`, a
        // sandboxed frame): the browser's own `Sec-Fetch-Site` decides, and without it the
        // request is taken as cross-site.
        (Some("null"), Some(site)) => !matches!(site, "same-origin" | "none"),
        (Some("null"), None) => true,
        (Some(o), _) => o != host,
        (None, Some(site)) => !matches!(site, "same-origin" | "none"),
        (None, None) => false,
    }
}

/// The client of a request from `peer` with these headers.
pub fn resolve(peer: Option<IpAddr>, headers: &HeaderMap, trusted: &TrustedProxies) -> Caller {
    // An IPv4 peer on a dual-stack listener arrives as ::ffff:a.b.c.d.
    let Some(peer) = peer.map(|p| p.to_canonical()) else { return Caller { address: None, https: false } };
    if !trusted.contains(&peer) {
        return Caller { address: Some(peer), https: false };
    }
    let mut client = peer;
    for hop in forwarded_for(headers).iter().rev() {
        match hop {
            Some(ip) if trusted.contains(ip) => client = *ip,
            Some(ip) => {
                client = *ip;
                break;
            }
            None => break,
        }
    }
    let https = forwarded_proto(headers).is_some_and(|p| p.eq_ignore_ascii_case("https"));
    Caller { address: Some(client), https }
}

/// The hops the proxies recorded, left (farthest) to right (nearest); `None` for one
/// that names no address.
fn forwarded_for(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    if headers.contains_key("x-forwarded-for") {
        return headers
            .get_all("x-forwarded-for")
            .iter()
            .flat_map(|line| match line.to_str() {
                Ok(s) => s.split(',').map(str::trim).filter(|h| !h.is_empty()).map(node).collect(),
                Err(_) => vec![None],
            })
            .collect();
    }
    forwarded(headers).into_iter().filter_map(|element| element.into_iter().find(|(k, _)| k == "for").map(|(_, v)| node(&v))).collect()
}

/// The scheme the outermost proxy received, if a proxy said.
fn forwarded_proto(headers: &HeaderMap) -> Option<String> {
    if let Some(line) = headers.get("x-forwarded-proto") {
        return line.to_str().ok().and_then(|s| s.split(',').next()).map(|s| s.trim().to_string());
    }
    forwarded(headers).into_iter().find_map(|element| element.into_iter().find(|(k, _)| k == "proto").map(|(_, v)| v))
}

/// RFC 7239 `Forwarded`: elements (comma-separated, over every header line) of
/// `name=value` pairs (semicolon-separated), names lowercased, quoted values unquoted.
fn forwarded(headers: &HeaderMap) -> Vec<Vec<(String, String)>> {
    headers
        .get_all("forwarded")
        .iter()
        .filter_map(|line| line.to_str().ok())
        .flat_map(|line| split_outside_quotes(line, ','))
        .map(|element| {
            split_outside_quotes(element, ';')
                .into_iter()
                .filter_map(|pair| pair.split_once('='))
                .map(|(k, v)| (k.trim().to_ascii_lowercase(), unquote(v.trim())))
                .collect()
        })
        .collect()
}

fn split_outside_quotes(s: &str, sep: char) -> Vec<&str> {
    let (mut parts, mut start, mut quoted, mut escaped) = (Vec::new(), 0, false, false);
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == sep && !quoted => {
                parts.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

fn unquote(v: &str) -> String {
    match v.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        Some(inner) => {
            let mut out = String::with_capacity(inner.len());
            let mut chars = inner.chars();
            while let Some(c) = chars.next() {
                out.push(if c == '\\' { chars.next().unwrap_or('\\') } else { c });
            }
            out
        }
        None => v.to_string(),
    }
}

/// A node as proxies write it: `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1`,
/// `[2001:db8::1]` or `[2001:db8::1]:4711`; anything else (`unknown`, `_hidden`) names
/// no address.
fn node(s: &str) -> Option<IpAddr> {
    let s = s.trim();
    let ip = s
        .parse::<IpAddr>()
        .ok()
        .or_else(|| s.parse::<SocketAddr>().ok().map(|a| a.ip()))
        .or_else(|| s.strip_prefix('[').and_then(|r| r.strip_suffix(']')).and_then(|r| r.parse().ok()))?;
    Some(ip.to_canonical())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trusted(list: &[&str]) -> TrustedProxies {
        let nets: Vec<IpNet> = list.iter().map(|s| crate::config::parse_proxy(s).expect("proxy")).collect();
        TrustedProxies::new(&nets)
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.append(*name, value.parse().expect("header value"));
        }
        h
    }

    fn client(peer: &str, list: &[&str], pairs: &[(&'static str, &str)]) -> (String, bool) {
        let info = resolve(Some(peer.parse().expect("peer")), &headers(pairs), &trusted(list));
        (info.address.map(|a| a.to_string()).unwrap_or_default(), info.https)
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_says() {
        let says = [("x-forwarded-for", "203.0.113.9"), ("forwarded", "for=198.51.100.1;proto=https"), ("x-forwarded-proto", "https")];
        assert_eq!(client("192.0.2.7", &[], &says), ("192.0.2.7".into(), false));
        assert_eq!(client("192.0.2.7", &["10.0.0.0/8"], &says), ("192.0.2.7".into(), false));
    }

    #[test]
    fn behind_a_trusted_proxy_the_right_most_untrusted_hop_is_the_client() {
        let proxies = ["10.0.0.0/8", "192.0.2.1"];
        // The client prepended a made-up address; the proxy appended the real one.
        assert_eq!(client("10.0.0.2", &proxies, &[("x-forwarded-for", "1.1.1.1, 203.0.113.9")]).0, "203.0.113.9");
        // Through two trusted proxies, across header lines.
        assert_eq!(
            client("10.0.0.2", &proxies, &[("x-forwarded-for", "6.6.6.6, 203.0.113.9"), ("x-forwarded-for", "192.0.2.1")]).0,
            "203.0.113.9"
        );
        // With ports and IPv6, as some proxies write them.
        assert_eq!(client("10.0.0.2", &proxies, &[("x-forwarded-for", "[2001:db8::7]:4711")]).0, "2001:db8::7");
        assert_eq!(client("10.0.0.2", &proxies, &[("x-forwarded-for", "203.0.113.9:5555")]).0, "203.0.113.9");
        // No header: the proxy itself; only trusted hops: the farthest of them.
        assert_eq!(client("10.0.0.2", &proxies, &[]).0, "10.0.0.2");
        assert_eq!(client("10.0.0.2", &proxies, &[("x-forwarded-for", "10.9.9.9, 192.0.2.1")]).0, "10.9.9.9");
        // A hop the proxy could not name: the proxy stands for the client (never a guess further left).
        assert_eq!(client("10.0.0.2", &proxies, &[("x-forwarded-for", "203.0.113.9, unknown")]).0, "10.0.0.2");
        // An IPv4 peer seen as IPv4-mapped IPv6 is still the trusted proxy.
        assert_eq!(client("::ffff:10.0.0.2", &proxies, &[("x-forwarded-for", "203.0.113.9")]).0, "203.0.113.9");
    }

    #[test]
    fn forwarded_is_read_when_there_is_no_x_forwarded_for() {
        let proxies = ["10.0.0.0/8"];
        let h = [("forwarded", r#"for=1.1.1.1, for="[2001:db8:cafe::17]:4711";proto=https;by=10.0.0.2"#), ("forwarded", "For=10.3.3.3")];
        assert_eq!(client("10.0.0.2", &proxies, &h), ("2001:db8:cafe::17".into(), true));
        // A quoted comma is not a new element.
        assert_eq!(client("10.0.0.2", &proxies, &[("forwarded", r#"for="_a,b";proto=http, for=203.0.113.9"#)]).0, "203.0.113.9");
        assert_eq!(client("10.0.0.2", &proxies, &[("forwarded", "for=_hidden")]).0, "10.0.0.2");
        // X-Forwarded-For wins when both are present (the header most proxies append to).
        let both = [("forwarded", "for=1.1.1.1"), ("x-forwarded-for", "203.0.113.9")];
        assert_eq!(client("10.0.0.2", &proxies, &both).0, "203.0.113.9");
    }

    #[test]
    fn https_is_what_a_trusted_proxy_received() {
        let proxies = ["10.0.0.0/8"];
        assert!(client("10.0.0.2", &proxies, &[("x-forwarded-proto", "HTTPS")]).1);
        assert!(client("10.0.0.2", &proxies, &[("x-forwarded-proto", "https, http")]).1);
        assert!(!client("10.0.0.2", &proxies, &[("x-forwarded-proto", "http")]).1);
        assert!(client("10.0.0.2", &proxies, &[("forwarded", "for=203.0.113.9;proto=https")]).1);
        assert!(!client("10.0.0.2", &proxies, &[]).1);
    }

    #[test]
    fn cross_site_is_decided_by_what_the_browser_says() {
        let host = ("host", "gable.example:8080");
        assert!(!cross_site(&headers(&[host])), "no browser headers: not a page's request");
        assert!(!cross_site(&headers(&[host, ("origin", "http://gable.example:8080")])));
        assert!(cross_site(&headers(&[host, ("origin", "https://evil.example")])));
        assert!(!cross_site(&headers(&[host, ("sec-fetch-site", "same-origin")])));
        assert!(cross_site(&headers(&[host, ("sec-fetch-site", "cross-site")])));
        // `Origin: null` (a no-referrer page's form): the browser's Sec-Fetch-Site decides.
        assert!(!cross_site(&headers(&[host, ("origin", "null"), ("sec-fetch-site", "same-origin")])));
        assert!(cross_site(&headers(&[host, ("origin", "null"), ("sec-fetch-site", "cross-site")])));
        assert!(cross_site(&headers(&[host, ("origin", "null")])));
    }
}
