//! The address policy of outbound requests: which destinations Gable may connect to.
//!
//! A webhook URL is chosen by an integrator, so without a policy Gable would POST to its
//! own loopback, the cloud metadata service (169.254.169.254) or the private network it
//! runs in. The guard refuses every address that is not public unicast, including the
//! IPv6 spellings that embed a refused IPv4 address, unless an operator allow-listed it.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use ipnet::IpNet;
use url::{Host, Url};

/// How long a subscription-time check waits for name resolution; the delivery path is
/// bounded by the request's own timeout instead.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a destination is refused, in words fit for the integrator who gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    reason: String,
}

impl Refusal {
    pub(crate) fn new(reason: impl Into<String>) -> Refusal {
        Refusal { reason: reason.into() }
    }

    /// The reason, e.g. "127.0.0.1 is a loopback address".
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for Refusal {}

/// What a URL's host is, once its shape has passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Destination {
    /// An IP literal (already checked): no resolver is asked for it.
    Ip(IpAddr),
    /// A name, to be resolved and its addresses checked.
    Name(String),
}

/// A name that could not be resolved (at delivery time a transport failure, not a refusal).
#[derive(Debug, Clone)]
pub(crate) struct Unresolved(pub(crate) String);

impl fmt::Display for Unresolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the host {} could not be resolved", self.0)
    }
}

impl std::error::Error for Unresolved {}

/// The address policy, with the operator's allow-list (`--webhook-allow-cidrs`).
#[derive(Debug, Clone, Default)]
pub struct Guard {
    allow: Vec<IpNet>,
}

impl Guard {
    /// A guard that lets addresses inside `allow` through even when the policy refuses them.
    pub fn new(allow: Vec<IpNet>) -> Guard {
        Guard { allow }
    }

    pub fn allow_list(&self) -> &[IpNet] {
        &self.allow
    }

    /// Whether Gable may connect to `ip`.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), Refusal> {
        match self.refused(ip) {
            Some(what) => Err(Refusal::new(format!("{ip} is {what}"))),
            None => Ok(()),
        }
    }

    /// What kind of refused address `ip` is ("a loopback address"), unless it passes.
    fn refused(&self, ip: IpAddr) -> Option<String> {
        if self.allowed(ip) {
            return None;
        }
        match ip {
            IpAddr::V4(v4) => refused_v4(v4).map(str::to_owned),
            IpAddr::V6(v6) => refused_v6(v6),
        }
    }

    /// The refusal of a name by one of its addresses.
    fn refused_name(&self, host: &str, ip: IpAddr) -> Option<Refusal> {
        self.refused(ip).map(|what| Refusal::new(format!("{host} resolves to {ip}, {what}")))
    }

    /// The subscription-time check: the URL's shape, then its host — an IP literal is
    /// checked as such, a name is resolved and every address it resolves to must pass.
    pub async fn check_url(&self, url: &Url) -> Result<(), Refusal> {
        let port = url.port_or_known_default().unwrap_or(0);
        match self.check_literal(url)? {
            Destination::Ip(_) => Ok(()),
            Destination::Name(name) => self.resolve_all(&name, port).await.map(|_| ()),
        }
    }

    /// The check when a subscription's URL is set: as `check_url`, except that a name
    /// that does not resolve (yet: DNS being set up, or no resolver reachable) passes,
    /// since every attempt checks it again before connecting. A name that resolves to
    /// any refused address is refused.
    pub async fn check_subscription_url(&self, url: &Url) -> Result<(), Refusal> {
        let port = url.port_or_known_default().unwrap_or(0);
        let Destination::Name(name) = self.check_literal(url)? else { return Ok(()) };
        if let Some(local) = self.localhost(&name, port) {
            return local.map(|_| ());
        }
        match tokio::time::timeout(RESOLVE_TIMEOUT, lookup(&name, port)).await {
            Ok(Ok(addrs)) => match addrs.iter().find_map(|a| self.refused_name(&name, a.ip())) {
                Some(refusal) => Err(refusal),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// The part of `check_url` that needs no resolution (scheme, credentials, host, an IP
    /// literal's address): for callers that cannot wait; a name passes here unresolved.
    pub fn check_url_literal(&self, url: &Url) -> Result<(), Refusal> {
        self.check_literal(url).map(|_| ())
    }

    /// Resolves `host` and returns its addresses if every one passes (subscription time:
    /// a name with any refused address is refused as a whole).
    pub async fn resolve_all(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, Refusal> {
        if let Some(local) = self.localhost(host, port) {
            return local;
        }
        let addrs = match tokio::time::timeout(RESOLVE_TIMEOUT, lookup(host, port)).await {
            Ok(Ok(addrs)) => addrs,
            Ok(Err(_)) => return Err(Refusal::new(format!("{host} does not resolve to any address"))),
            Err(_) => return Err(Refusal::new(format!("{host} could not be resolved in time"))),
        };
        if let Some(refusal) = addrs.iter().find_map(|a| self.refused_name(host, a.ip())) {
            return Err(refusal);
        }
        Ok(addrs)
    }

    /// The URL's shape and its literal host: http or https, no credentials, a host, and
    /// an IP literal that passes. `url` has already turned decimal, octal, hex and short
    /// IPv4 spellings (`http://2130706433/`, `http://0177.0.0.1/`, `http://127.1/`) into
    /// `Host::Ipv4` (WHATWG URL standard), so no spelling of an address escapes as a name.
    pub(crate) fn check_literal(&self, url: &Url) -> Result<Destination, Refusal> {
        match url.scheme() {
            "http" | "https" => {}
            other => return Err(Refusal::new(format!("the scheme {other}: is not allowed (use https, or http in the sandbox)"))),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Refusal::new("credentials in the URL are not allowed (send them in a header or the path instead)"));
        }
        let ip = match url.host() {
            None => return Err(Refusal::new("the URL has no host")),
            Some(Host::Ipv4(ip)) => IpAddr::V4(ip),
            Some(Host::Ipv6(ip)) => IpAddr::V6(ip),
            Some(Host::Domain(name)) => return Ok(Destination::Name(name.to_owned())),
        };
        self.check_ip(ip)?;
        Ok(Destination::Ip(ip))
    }

    /// Resolves `host` for a connection and keeps only the addresses that pass, so the
    /// connection can only go to a checked address; none passing is the refusal of the first.
    pub(crate) async fn resolve_passing(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
        if let Some(local) = self.localhost(host, port) {
            return Ok(local?);
        }
        let addrs = lookup(host, port).await.map_err(|_| Unresolved(host.to_owned()))?;
        let mut first_refusal = None;
        let mut passing = Vec::with_capacity(addrs.len());
        for addr in addrs {
            match self.refused_name(host, addr.ip()) {
                None => passing.push(addr),
                Some(r) => {
                    first_refusal.get_or_insert(r);
                }
            }
        }
        match (passing.is_empty(), first_refusal) {
            (false, _) => Ok(passing),
            (true, Some(r)) => Err(Box::new(r)),
            (true, None) => Err(Box::new(Unresolved(host.to_owned()))),
        }
    }

    /// `localhost` and `*.localhost` always name this machine (RFC 6761), so they are
    /// answered without asking DNS: the loopback addresses the allow-list admits, or a
    /// refusal. `None` for every other name.
    fn localhost(&self, host: &str, port: u16) -> Option<Result<Vec<SocketAddr>, Refusal>> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if host != "localhost" && !host.ends_with(".localhost") {
            return None;
        }
        let admitted: Vec<SocketAddr> = [IpAddr::V4(Ipv4Addr::LOCALHOST), IpAddr::V6(Ipv6Addr::LOCALHOST)]
            .into_iter()
            .filter(|ip| self.allowed(*ip))
            .map(|ip| SocketAddr::new(ip, port))
            .collect();
        Some(if admitted.is_empty() { Err(Refusal::new(format!("{host} is this machine (a loopback address)"))) } else { Ok(admitted) })
    }

    /// In the allow-list, directly or (for an IPv4-mapped IPv6 address, which is the same
    /// destination) through its IPv4 address.
    fn allowed(&self, ip: IpAddr) -> bool {
        let mapped = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4),
            IpAddr::V4(_) => None,
        };
        self.allow.iter().any(|net| net.contains(&ip) || mapped.is_some_and(|v4| net.contains(&v4)))
    }
}

async fn lookup(host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port)).await?.collect();
    if addrs.is_empty() {
        return Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no address"));
    }
    Ok(addrs)
}

/// What kind of refused IPv4 address `ip` is.
fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    // Order matters where ranges nest: 0.0.0.0 is in 0/8, 255.255.255.255 in 240/4.
    let kind = if ip.is_unspecified() {
        "the unspecified address"
    } else if ip.is_broadcast() {
        "the broadcast address"
    } else if a == 0 {
        "a \"this network\" address (0.0.0.0/8)"
    } else if ip.is_loopback() {
        "a loopback address"
    } else if ip.is_private() {
        "a private address"
    } else if ip.is_link_local() {
        "a link-local address"
    } else if a == 100 && (b & 0xc0) == 64 {
        "a shared (carrier-grade NAT) address"
    } else if ip.is_multicast() {
        "a multicast address"
    } else if ip.is_documentation() {
        "a documentation address"
    } else if a == 198 && (b & 0xfe) == 18 {
        "a benchmarking address"
    } else if a == 192 && b == 0 && c == 0 {
        "an IETF protocol assignment address (192.0.0.0/24)"
    } else if a >= 240 {
        "a reserved address (240.0.0.0/4)"
    } else {
        return None;
    };
    Some(kind)
}

/// What kind of refused IPv6 address `ip` is: its own range, or a refused IPv4 address it embeds.
fn refused_v6(ip: Ipv6Addr) -> Option<String> {
    let s = ip.segments();
    let embedded = |form: &str, v4: Ipv4Addr| refused_v4(v4).map(|kind| format!("the {form} form of {v4}, {kind}"));
    let low_v4 = Ipv4Addr::from(u128::from(ip) as u32);
    if let Some(v4) = ip.to_ipv4_mapped() {
        return embedded("IPv4-mapped", v4);
    }
    let own = if ip.is_unspecified() {
        "the unspecified address"
    } else if ip.is_loopback() {
        "a loopback address"
    } else if s[..6] == [0; 6] {
        return embedded("IPv4-compatible", low_v4);
    } else if s[..4] == [0; 4] && s[4] == 0xffff && s[5] == 0 {
        return embedded("IPv4-translated", low_v4);
    } else if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return embedded("NAT64", low_v4);
    } else if s[..3] == [0x64, 0xff9b, 1] {
        // RFC 8215 local-use NAT64: the IPv4 address's position depends on the local prefix length.
        "a local-use NAT64 address (64:ff9b:1::/48)"
    } else if s[0] == 0x2002 {
        let v4 = Ipv4Addr::from(((s[1] as u32) << 16) | s[2] as u32);
        return embedded("6to4", v4);
    } else if s[0] == 0x2001 && s[1] == 0 {
        // Teredo: the server in plain, the client obfuscated (bits inverted).
        let server = Ipv4Addr::from(((s[2] as u32) << 16) | s[3] as u32);
        let client = Ipv4Addr::from(!(u128::from(ip) as u32));
        return embedded("Teredo server", server).or_else(|| embedded("Teredo client", client));
    } else if (s[0] & 0xfe00) == 0xfc00 {
        "a unique local address (fc00::/7)"
    } else if (s[0] & 0xffc0) == 0xfe80 {
        "a link-local address"
    } else if (s[0] & 0xffc0) == 0xfec0 {
        "a site-local address"
    } else if (s[0] & 0xff00) == 0xff00 {
        "a multicast address"
    } else if (s[0] == 0x2001 && s[1] == 0x0db8) || (s[0] & 0xfff0) == 0x3ff0 {
        "a documentation address"
    } else if s[..4] == [0x100, 0, 0, 0] {
        "a discard-only address (100::/64)"
    } else {
        return None;
    };
    Some(own.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(ip: &str) -> Option<String> {
        Guard::default().check_ip(ip.parse().unwrap()).err().map(|r| r.reason().to_owned())
    }

    #[track_caller]
    fn refused_as(ip: &str, words: &str) {
        let r = reason(ip).unwrap_or_else(|| panic!("{ip} should be refused"));
        assert!(r.starts_with(ip) || r.contains(ip), "{r}");
        assert!(r.contains(words), "{ip}: {r:?} should say {words:?}");
    }

    #[track_caller]
    fn passes(ip: &str) {
        assert_eq!(reason(ip), None, "{ip} should pass");
    }

    #[test]
    fn refused_ipv4_ranges_each_with_its_reason() {
        assert_eq!(reason("127.0.0.1").as_deref(), Some("127.0.0.1 is a loopback address"));
        for (ip, words) in [
            ("127.255.255.254", "loopback"),
            ("10.0.0.1", "private"),
            ("10.255.255.255", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "link-local"),
            ("169.254.0.1", "link-local"),
            ("100.64.0.1", "carrier-grade NAT"),
            ("100.127.255.255", "carrier-grade NAT"),
            ("224.0.0.1", "multicast"),
            ("239.255.255.255", "multicast"),
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "0.0.0.0/8"),
            ("255.255.255.255", "broadcast"),
            ("192.0.2.10", "documentation"),
            ("198.51.100.7", "documentation"),
            ("203.0.113.200", "documentation"),
            ("198.18.0.1", "benchmarking"),
            ("198.19.255.255", "benchmarking"),
            ("192.0.0.8", "192.0.0.0/24"),
            ("240.0.0.1", "reserved"),
            ("250.1.2.3", "reserved"),
        ] {
            refused_as(ip, words);
        }
    }

    #[test]
    fn public_ipv4_passes_even_next_to_refused_ranges() {
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "9.255.255.255",
            "11.0.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.167.255.255",
            "192.169.0.0",
            "169.253.255.255",
            "100.63.255.255",
            "100.128.0.0",
            "198.17.255.255",
            "198.20.0.0",
            "192.0.1.1",
            "192.0.3.1",
            "223.255.255.255",
        ] {
            passes(ip);
        }
    }

    #[test]
    fn refused_ipv6_ranges_each_with_its_reason() {
        for (ip, words) in [
            ("::1", "loopback"),
            ("::", "unspecified"),
            ("fc00::1", "unique local"),
            ("fd12:3456::1", "unique local"),
            ("fe80::1", "link-local"),
            ("febf::1", "link-local"),
            ("fec0::1", "site-local"),
            ("feff::1", "site-local"),
            ("ff02::1", "multicast"),
            ("ff0e::1", "multicast"),
            ("2001:db8::1", "documentation"),
            ("3fff::1", "documentation"),
            ("64:ff9b:1::1", "local-use NAT64"),
            ("100::1", "discard-only"),
        ] {
            refused_as(ip, words);
        }
        for ip in ["2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450::1", "fbff::1", "64:ff9b::808:808"] {
            passes(ip);
        }
    }

    #[test]
    fn ipv6_forms_of_every_refused_ipv4_address_are_refused() {
        let refused_v4 = [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.5.4",
            "192.168.0.1",
            "169.254.169.254",
            "100.64.1.1",
            "224.0.0.251",
            "255.255.255.255",
            "192.0.2.1",
            "198.51.100.1",
            "203.0.113.1",
            "198.18.0.1",
            "0.1.2.3",
            "192.0.0.170",
            "240.0.0.1",
        ];
        for v4 in refused_v4 {
            let bits = u32::from(v4.parse::<Ipv4Addr>().unwrap());
            let (hi, lo) = ((bits >> 16) as u16, bits as u16);
            for (form, ip) in [
                ("IPv4-mapped", format!("::ffff:{v4}")),
                ("IPv4-compatible", format!("::{v4}")),
                ("IPv4-translated", format!("::ffff:0:{v4}")),
                ("NAT64", format!("64:ff9b::{v4}")),
                ("6to4", format!("2002:{hi:x}:{lo:x}::1")),
                ("Teredo client", format!("2001:0:4136:e378:8000:63bf:{:x}:{:x}", !hi, !lo)),
            ] {
                let r = reason(&ip).unwrap_or_else(|| panic!("{ip} ({form} of {v4}) should be refused"));
                assert!(r.contains(form) && r.contains(v4), "{ip}: {r}");
            }
        }
        assert_eq!(
            reason("::ffff:127.0.0.1").as_deref(),
            Some("::ffff:127.0.0.1 is the IPv4-mapped form of 127.0.0.1, a loopback address")
        );
        // The same forms of a public address pass.
        for ip in ["::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2002:808:808::1", "::8.8.8.8"] {
            passes(ip);
        }
    }

    #[test]
    fn the_allow_list_lets_its_ranges_through_and_nothing_else() {
        let loopback = "127.0.0.1".parse().unwrap();
        assert!(Guard::default().check_ip(loopback).is_err(), "refused with an empty allow-list");
        let guard = Guard::new(vec!["127.0.0.0/8".parse().unwrap()]);
        assert_eq!(guard.check_ip(loopback), Ok(()));
        assert_eq!(guard.check_ip("127.9.9.9".parse().unwrap()), Ok(()));
        assert_eq!(guard.check_ip("::ffff:127.0.0.1".parse().unwrap()), Ok(()), "the mapped form is the same destination");
        assert!(guard.check_ip("::1".parse().unwrap()).is_err(), "IPv6 loopback is not in 127.0.0.0/8");
        assert!(guard.check_ip("10.0.0.1".parse().unwrap()).is_err());
        assert!(guard.check_ip("169.254.169.254".parse().unwrap()).is_err());
        let other = Guard::new(vec!["10.0.0.0/8".parse().unwrap(), "fd00::/8".parse().unwrap()]);
        assert!(other.check_ip(loopback).is_err(), "an allow-list without it still refuses 127.0.0.1");
        assert_eq!(other.check_ip("fd00::5".parse().unwrap()), Ok(()));
    }

    fn literal(guard: &Guard, url: &str) -> Result<Destination, Refusal> {
        guard.check_literal(&Url::parse(url).unwrap())
    }

    #[test]
    fn other_ipv4_spellings_are_parsed_as_addresses_and_refused() {
        // WHATWG URL parsing (the `url` crate) makes these `Host::Ipv4`, never a name to resolve.
        for (spelling, ip) in [
            ("http://2130706433/", "127.0.0.1"),
            ("http://0177.0.0.1/", "127.0.0.1"),
            ("http://127.1/", "127.0.0.1"),
            ("http://0x7f.1/", "127.0.0.1"),
            ("http://0x7f000001/", "127.0.0.1"),
            ("http://127.0.0.1./", "127.0.0.1"),
            ("http://0xa9fea9fe/", "169.254.169.254"),
            ("https://012.0.0.1/", "10.0.0.1"),
        ] {
            let url = Url::parse(spelling).unwrap();
            assert_eq!(url.host(), Some(Host::Ipv4(ip.parse().unwrap())), "{spelling}");
            let refusal = literal(&Guard::default(), spelling).unwrap_err();
            assert!(refusal.reason().starts_with(ip), "{spelling}: {refusal}");
        }
        for (url, words) in
            [("http://[::1]/", "::1 is a loopback address"), ("http://[::ffff:127.0.0.1]/", "IPv4-mapped form of 127.0.0.1, a loopback")]
        {
            let refusal = literal(&Guard::default(), url).unwrap_err();
            assert!(refusal.reason().contains(words), "{url}: {refusal}");
        }
        // The url crate writes the mapped form in hex; the guard still reads the IPv4 inside.
        assert_eq!(Url::parse("http://[::ffff:127.0.0.1]/").unwrap().host_str(), Some("[::ffff:7f00:1]"));
    }

    #[test]
    fn url_shape_scheme_credentials_and_host() {
        let guard = Guard::default();
        assert_eq!(literal(&guard, "https://8.8.8.8/hook"), Ok(Destination::Ip("8.8.8.8".parse().unwrap())));
        assert_eq!(literal(&guard, "http://[2606:4700::1]:8080/"), Ok(Destination::Ip("2606:4700::1".parse().unwrap())));
        assert_eq!(literal(&guard, "https://hooks.example.com/x"), Ok(Destination::Name("hooks.example.com".into())));
        for (url, words) in [
            ("ftp://example.com/", "scheme ftp"),
            ("file:///etc/passwd", "scheme file"),
            ("gopher://example.com/", "scheme gopher"),
            ("javascript:alert(1)", "scheme javascript"),
            ("https://user:pass@example.com/", "credentials"),
            ("https://user@example.com/", "credentials"),
            ("https://:secret@example.com/", "credentials"),
            ("http://user:pass@8.8.8.8/", "credentials"),
        ] {
            let refusal = literal(&guard, url).unwrap_err();
            assert!(refusal.reason().contains(words), "{url}: {refusal}");
        }
        assert_eq!(guard.check_url_literal(&Url::parse("https://hooks.example.com/x").unwrap()), Ok(()));
        assert!(guard.check_url_literal(&Url::parse("http://0177.0.0.1/").unwrap()).is_err());
        // A special scheme without a host does not even parse; the guard still refuses hostless URLs.
        assert!(Url::parse("http:///").map(|u| u.host().is_none()).unwrap_or(true));
    }

    #[tokio::test]
    async fn localhost_names_are_refused_without_resolving() {
        let guard = Guard::default();
        for url in ["http://localhost/", "http://LOCALHOST:8080/", "http://localhost./", "https://api.localhost/", "http://a.b.localhost/"]
        {
            let refusal = guard.check_url(&Url::parse(url).unwrap()).await.unwrap_err();
            assert!(refusal.reason().contains("loopback"), "{url}: {refusal}");
        }
        // With loopback allow-listed, localhost is its admitted loopback address (still no DNS).
        let allowed = Guard::new(vec!["127.0.0.0/8".parse().unwrap()]);
        assert_eq!(allowed.resolve_all("localhost", 80).await, Ok(vec!["127.0.0.1:80".parse().unwrap()]));
        assert_eq!(allowed.check_url(&Url::parse("http://localhost:9/").unwrap()).await, Ok(()));
    }

    #[tokio::test]
    async fn names_are_resolved_and_every_address_checked() {
        let guard = Guard::default();
        // Name resolution of IP text needs no network and shows every address is checked.
        let refusal = guard.resolve_all("127.0.0.1", 80).await.unwrap_err();
        assert_eq!(refusal.reason(), "127.0.0.1 resolves to 127.0.0.1, a loopback address");
        let refusal = guard.check_url(&Url::parse("http://no-such-host.invalid/").unwrap()).await.unwrap_err();
        assert!(refusal.reason().contains("no-such-host.invalid") && refusal.reason().contains("resolve"), "{refusal}");
        assert_eq!(guard.check_url(&Url::parse("https://8.8.8.8/").unwrap()).await, Ok(()));
        // The delivery path keeps only passing addresses, and refuses when none pass.
        let err = guard.resolve_passing("10.0.0.1", 443).await.unwrap_err();
        assert_eq!(err.downcast_ref::<Refusal>().map(Refusal::reason), Some("10.0.0.1 resolves to 10.0.0.1, a private address"));
        let err = guard.resolve_passing("no-such-host.invalid", 443).await.unwrap_err();
        assert!(err.downcast_ref::<Unresolved>().is_some(), "{err}");
        assert_eq!(guard.resolve_passing("8.8.4.4", 443).await.unwrap(), vec!["8.8.4.4:443".parse().unwrap()]);
    }
}
