//! The HTTP client of outbound requests (webhook deliveries), connecting only where the
//! guard allows.
//!
//! Names are resolved by `GuardedResolver`, which hands reqwest only addresses the guard
//! passes: the address checked is the address connected to, so a name that answers a
//! public address to the check and a private one to the connection (DNS rebinding) gains
//! nothing. reqwest does not resolve IP literals, so `post_json` checks those itself.

use std::error::Error as StdError;
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};
use url::Url;

use super::guard::{Guard, Refusal, Unresolved};

/// The `User-Agent` of every outbound request.
pub const USER_AGENT: &str = "Gable-Webhooks/1.0 (+https://gable.dev/docs/webhooks)";
/// The total time of one request, connection to the end of the excerpt read.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of a response body that is kept (and read).
pub const EXCERPT_LIMIT: usize = 4096;

/// What a receiver answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// In the order received; values that are not UTF-8 are decoded lossily.
    pub headers: Vec<(String, String)>,
    /// The first `EXCERPT_LIMIT` bytes of the body at most (UTF-8, lossily decoded, cut
    /// at a character boundary).
    pub body_excerpt: String,
    /// Whether the body went on past the excerpt (or could not be read to its end).
    pub truncated: bool,
    /// From sending the request to the end of the excerpt.
    pub latency_ms: u64,
}

impl Response {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The first value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Why no response was had. The messages are fit to show the integrator: they name what
/// went wrong on the way to their receiver, nothing of Gable's insides.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The destination is not allowed (the SSRF guard); the reason says why.
    #[error("refused: {0}")]
    Refused(String),
    #[error("timed out: the receiver did not respond in time")]
    Timeout,
    /// No connection could be made (name resolution, TCP, TLS).
    #[error("connection failed: {0}")]
    Connect(String),
    #[error("{0}")]
    Other(String),
}

impl From<Refusal> for SendError {
    fn from(r: Refusal) -> SendError {
        SendError::Refused(r.reason().to_owned())
    }
}

/// The outbound HTTP client: one per process, cheap to clone (connections are pooled).
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    guard: Arc<Guard>,
    timeout: Duration,
}

impl Client {
    /// A client with the 10 s total timeout of webhook deliveries.
    pub fn new(guard: Guard) -> anyhow::Result<Client> {
        Client::with_timeout(guard, DEFAULT_TIMEOUT)
    }

    /// A client whose requests each get `timeout` in total (tests use a short one).
    pub fn with_timeout(guard: Guard, timeout: Duration) -> anyhow::Result<Client> {
        let guard = Arc::new(guard);
        let http = reqwest::Client::builder()
            .dns_resolver(Arc::new(GuardedResolver { guard: guard.clone() }))
            // A redirect would lead to a destination never checked; the 3xx is the answer.
            .redirect(reqwest::redirect::Policy::none())
            // A proxy from the environment would connect on Gable's behalf, past the guard.
            .no_proxy()
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(USER_AGENT)
            .build()
            .map_err(|e| anyhow::anyhow!("cannot build the outbound HTTP client: {e}"))?;
        Ok(Client { http, guard, timeout })
    }

    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// POSTs `body` as `application/json` with `headers` (which may replace the
    /// `Content-Type` and `User-Agent`). Any status is a `Response`, redirects included
    /// (never followed); `Err` means no response was had.
    pub async fn post_json<K, V>(&self, url: &Url, headers: &[(K, V)], body: Vec<u8>) -> Result<Response, SendError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        // IP literals never reach the resolver, so they are checked here; names are
        // checked by the resolver, at connection time.
        self.guard.check_literal(url)?;
        let mut map = HeaderMap::with_capacity(headers.len() + 1);
        map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        for (name, value) in headers {
            let (name, value) = (name.as_ref(), value.as_ref());
            let header =
                HeaderName::from_bytes(name.as_bytes()).map_err(|_| SendError::Other(format!("`{name}` is not a valid header name")))?;
            let value =
                HeaderValue::from_str(value).map_err(|_| SendError::Other(format!("the value of the header {name} is not valid")))?;
            map.insert(header, value);
        }
        let started = Instant::now();
        let deadline = tokio::time::Instant::from_std(started + self.timeout);
        let request = self.http.post(url.clone()).headers(map).body(body).send();
        let mut response = match tokio::time::timeout_at(deadline, request).await {
            Err(_) => return Err(SendError::Timeout),
            Ok(Err(e)) => return Err(classify(&e)),
            Ok(Ok(response)) => response,
        };
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(n, v)| {
                (n.as_str().to_owned(), v.to_str().map_or_else(|_| String::from_utf8_lossy(v.as_bytes()).into_owned(), str::to_owned))
            })
            .collect();
        // The head is the answer; of the body only an excerpt is kept, and no more than
        // the excerpt and one byte (to know it went on) is waited for.
        let mut body = Vec::with_capacity(1024);
        let mut truncated = false;
        loop {
            match tokio::time::timeout_at(deadline, response.chunk()).await {
                Ok(Ok(Some(chunk))) => {
                    let room = EXCERPT_LIMIT + 1 - body.len();
                    body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                    if body.len() > EXCERPT_LIMIT {
                        truncated = true;
                        break;
                    }
                }
                Ok(Ok(None)) => break,
                // A body cut short or too slow still leaves the status the receiver gave.
                Ok(Err(_)) | Err(_) => {
                    truncated = true;
                    break;
                }
            }
        }
        let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Ok(Response { status, headers, body_excerpt: excerpt(&body), truncated, latency_ms })
    }
}

/// At most `EXCERPT_LIMIT` bytes of UTF-8 from the first bytes of a body.
fn excerpt(body: &[u8]) -> String {
    let mut text = String::from_utf8_lossy(&body[..body.len().min(EXCERPT_LIMIT)]).into_owned();
    // Lossy decoding can lengthen (U+FFFD is 3 bytes); cut back at a character boundary.
    if text.len() > EXCERPT_LIMIT {
        let mut end = EXCERPT_LIMIT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

/// A reqwest error as the integrator should read it.
fn classify(e: &reqwest::Error) -> SendError {
    let mut io_kind = None;
    let mut source: Option<&(dyn StdError + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(refusal) = err.downcast_ref::<Refusal>() {
            return SendError::Refused(refusal.reason().to_owned());
        }
        if let Some(unresolved) = err.downcast_ref::<Unresolved>() {
            return SendError::Connect(unresolved.to_string());
        }
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            io_kind.get_or_insert((io.kind(), io.to_string()));
        }
        source = err.source();
    }
    if e.is_timeout() || matches!(io_kind, Some((std::io::ErrorKind::TimedOut, _))) {
        return SendError::Timeout;
    }
    use std::io::ErrorKind as K;
    let what = match &io_kind {
        Some((K::ConnectionRefused, _)) => "connection refused".to_owned(),
        Some((K::ConnectionReset, _)) => "connection reset by the receiver".to_owned(),
        Some((K::ConnectionAborted, _)) => "connection aborted".to_owned(),
        Some((K::HostUnreachable, _)) => "host unreachable".to_owned(),
        Some((K::NetworkUnreachable, _)) => "network unreachable".to_owned(),
        Some((K::AddrNotAvailable, _)) => "address not available".to_owned(),
        // rustls's errors reach here as `InvalidData`; their text names the certificate
        // or protocol problem, which is what the integrator must fix.
        Some((K::InvalidData, text)) => format!("TLS handshake failed: {text}"),
        Some((K::UnexpectedEof, _)) => "the receiver closed the connection".to_owned(),
        _ if e.is_connect() => "could not connect to the receiver".to_owned(),
        _ => "the receiver closed the connection or sent a response that is not valid HTTP".to_owned(),
    };
    if e.is_connect() {
        SendError::Connect(what)
    } else {
        SendError::Other(what)
    }
}

/// reqwest's resolver: the guard's resolution, which answers only passing addresses.
struct GuardedResolver {
    guard: Arc<Guard>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = self.guard.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            // Port 0: reqwest puts the URL's port (or the scheme's) in its place.
            let addrs = guard.resolve_passing(&host, 0).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_are_at_most_the_limit_and_valid_utf8() {
        assert_eq!(excerpt(b"ok"), "ok");
        assert_eq!(excerpt(&[b'a'; 5000]).len(), EXCERPT_LIMIT);
        // Invalid bytes become U+FFFD (3 bytes each) and still fit the limit.
        let lossy = excerpt(&[0xff; 5000]);
        assert!(lossy.len() <= EXCERPT_LIMIT && lossy.chars().all(|c| c == '\u{fffd}'), "{}", lossy.len());
        // A multi-byte character cut by the limit is dropped, not split.
        let mut body = vec![b'a'; EXCERPT_LIMIT - 1];
        body.extend("é".as_bytes());
        assert_eq!(excerpt(&body), "a".repeat(EXCERPT_LIMIT - 1));
    }

    #[tokio::test]
    async fn literal_destinations_are_refused_before_anything_is_sent() {
        let client = Client::new(Guard::default()).unwrap();
        for (url, words) in [
            ("http://127.0.0.1:9/", "127.0.0.1 is a loopback address"),
            ("http://2130706433:9/", "127.0.0.1 is a loopback address"),
            ("http://[::ffff:169.254.169.254]/", "169.254.169.254, a link-local address"),
            ("http://[fd00::1]/", "unique local"),
            ("ftp://example.com/", "scheme ftp"),
            ("https://u:p@example.com/", "credentials"),
        ] {
            let err = client.post_json::<&str, &str>(&Url::parse(url).unwrap(), &[], b"{}".to_vec()).await.unwrap_err();
            assert!(matches!(&err, SendError::Refused(reason) if reason.contains(words)), "{url}: {err}");
        }
    }

    #[tokio::test]
    async fn names_go_through_the_guarded_resolver() {
        let client = Client::new(Guard::default()).unwrap();
        let err = client.post_json::<&str, &str>(&Url::parse("http://localhost:9/").unwrap(), &[], Vec::new()).await.unwrap_err();
        assert!(matches!(&err, SendError::Refused(reason) if reason.contains("loopback")), "{err}");
        let err = client.post_json::<&str, &str>(&Url::parse("http://no-such-host.invalid/").unwrap(), &[], Vec::new()).await.unwrap_err();
        assert_eq!(err, SendError::Connect("the host no-such-host.invalid could not be resolved".into()));
    }

    #[tokio::test]
    async fn bad_headers_are_an_error_not_a_panic() {
        let client = Client::new(Guard::new(vec!["127.0.0.0/8".parse().unwrap()])).unwrap();
        let url = Url::parse("http://127.0.0.1:9/").unwrap();
        let err = client.post_json(&url, &[("bad name", "x")], Vec::new()).await.unwrap_err();
        assert!(matches!(err, SendError::Other(_)), "{err}");
        let err = client.post_json(&url, &[("X-Ok", "line\nbreak")], Vec::new()).await.unwrap_err();
        assert!(matches!(err, SendError::Other(_)), "{err}");
    }
}
