//! A file served from memory: the embeddable flows' loader and bundle (`Assets`, served
//! by `embed`) and the API description (`api::openapi`). Each is compressed once, when it is made, and
//! answered gzipped to clients that take gzip, with an `ETag` so that a client holding it
//! gets `304 Not Modified` instead of the bytes again.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path as FsPath;
use std::sync::Arc;

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

/// One file, with its gzipped form and its entity tag.
pub struct Asset {
    content_type: &'static str,
    body: Vec<u8>,
    gzip: Vec<u8>,
    etag: String,
}

impl Asset {
    pub fn new(content_type: &'static str, body: Vec<u8>) -> Asset {
        let etag = format!("\"{}\"", &hex::encode(Sha256::digest(&body))[..16]);
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        // An encoder writing to memory cannot fail; if it did, the file goes out uncompressed.
        let gzip = enc.write_all(&body).and_then(|_| enc.finish()).unwrap_or_default();
        Asset { content_type, body, gzip, etag }
    }

    /// The file, gzipped when the client takes gzip, `304` when it holds this version
    /// already (`If-None-Match`). `cache` is its `Cache-Control`.
    pub fn respond(&self, req: &HeaderMap, cache: &'static str) -> Response {
        let mut h = HeaderMap::new();
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
        h.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
        h.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
        // Public files meant for other sites' pages: those that isolate themselves (COEP)
        // may still load them.
        h.insert("cross-origin-resource-policy", HeaderValue::from_static("cross-origin"));
        if let Ok(v) = HeaderValue::from_str(&self.etag) {
            h.insert(header::ETAG, v);
        }
        let holds_it = req.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()).is_some_and(|v| matches_etag(v, &self.etag));
        if holds_it {
            return (StatusCode::NOT_MODIFIED, h).into_response();
        }
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static(self.content_type));
        let gzip_ok = !self.gzip.is_empty() && req.get(header::ACCEPT_ENCODING).and_then(|v| v.to_str().ok()).is_some_and(takes_gzip);
        if gzip_ok {
            h.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            (h, self.gzip.clone()).into_response()
        } else {
            (h, self.body.clone()).into_response()
        }
    }
}

/// Whether an `If-None-Match` list names `etag` (weakly: `W/` is ignored, as for a GET) or is `*`.
fn matches_etag(list: &str, etag: &str) -> bool {
    list.split(',').map(|t| t.trim().trim_start_matches("W/")).any(|t| t == etag || t == "*")
}

/// Whether an `Accept-Encoding` takes gzip: named (or `*`) without `q=0` (RFC 9110 §12.5.3).
fn takes_gzip(accept: &str) -> bool {
    let mut star = false;
    for item in accept.split(',') {
        let mut parts = item.split(';');
        let coding = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let refused = parts
            .filter_map(|p| p.trim().strip_prefix("q=").or_else(|| p.trim().strip_prefix("Q=")))
            .any(|q| q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0));
        match coding.as_str() {
            "gzip" | "x-gzip" => return !refused,
            "*" => star = !refused,
            _ => {}
        }
    }
    star
}

/// The loader, as served (plain JavaScript, no build step).
const LOADER: &str = include_str!("../../../embed/loader/embed.js");

/// The files of the flows' bundle, by the name `embed/build.sh` gives them.
const BUNDLE: &[(&str, &str)] = &[
    ("boot.js", "text/javascript; charset=utf-8"),
    ("gable_embed.js", "text/javascript; charset=utf-8"),
    ("gable_embed_bg.wasm", "application/wasm"),
    ("embed.css", "text/css; charset=utf-8"),
];

/// The loader and the flows' bundle, read once at start-up.
pub struct Assets {
    pub loader: Asset,
    pub bundle: HashMap<&'static str, Asset>,
    /// A hash of the bundle's files: the path segment that versions its URLs.
    pub version: String,
}

impl Assets {
    /// Reads the bundle from `{site_root}/embed/`. Without it Gable still serves the
    /// loader and the pages, whose flows then cannot start; the log says how to build it.
    pub fn load(site_root: &str) -> Arc<Assets> {
        let dir = FsPath::new(site_root).join("embed");
        let mut bundle = HashMap::new();
        let mut all = Sha256::new();
        for (name, content_type) in BUNDLE {
            match std::fs::read(dir.join(name)) {
                Ok(body) => {
                    all.update(name.as_bytes());
                    all.update(&body);
                    bundle.insert(*name, Asset::new(content_type, body));
                }
                Err(e) => {
                    tracing::warn!(file = %dir.join(name).display(), error = %e, "the embeddable flows' bundle is incomplete; build it with `bash embed/build.sh` (make run does)");
                    bundle.clear();
                    break;
                }
            }
        }
        let version = if bundle.is_empty() { "unbuilt".to_string() } else { hex::encode(all.finalize())[..16].to_string() };
        Arc::new(Assets { loader: Asset::new("text/javascript; charset=utf-8", LOADER.as_bytes().to_vec()), bundle, version })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_is_taken_only_when_offered_and_not_refused() {
        for yes in ["gzip", "gzip, deflate, br", "br;q=1.0, gzip;q=0.5", "*", "deflate, *;q=0.1", "GZIP", "x-gzip"] {
            assert!(takes_gzip(yes), "{yes}");
        }
        for no in ["", "identity", "br", "gzip;q=0", "gzip; q=0.0, br", "*;q=0", "gzip;q=0, *"] {
            assert!(!takes_gzip(no), "{no}");
        }
    }

    #[test]
    fn if_none_match_names_the_tag_or_any() {
        assert!(matches_etag("\"abc\"", "\"abc\""));
        assert!(matches_etag("\"x\", W/\"abc\"", "\"abc\""));
        assert!(matches_etag("*", "\"abc\""));
        assert!(!matches_etag("\"abd\"", "\"abc\""));
    }

    #[tokio::test]
    async fn answers_gzip_and_not_modified() {
        let original = br#"{"a":1}"#.repeat(100);
        let a = Asset::new("application/json", original.clone());
        let mut req = HeaderMap::new();
        req.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
        let r = a.respond(&req, "no-cache");
        assert_eq!(r.headers()[header::CONTENT_ENCODING], "gzip");
        let etag = r.headers()[header::ETAG].clone();
        let body = axum::body::to_bytes(r.into_body(), usize::MAX).await.unwrap();
        let mut plain = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&body[..]), &mut plain).unwrap();
        assert_eq!(plain, original);
        req.insert(header::IF_NONE_MATCH, etag);
        assert_eq!(a.respond(&req, "no-cache").status(), StatusCode::NOT_MODIFIED);
        assert!(a.respond(&HeaderMap::new(), "no-cache").headers().get(header::CONTENT_ENCODING).is_none());
    }
}
