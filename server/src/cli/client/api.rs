//! The CLI's HTTP client of the public API: the key as a bearer token, JSON in and out,
//! an `Idempotency-Key` on every write (so a retried command never writes twice), and the
//! API's error body turned into one readable line.

use std::time::Duration;

use reqwest::Method;
use serde_json::Value;

use super::profiles::Resolved;

/// A refusal or failure of an API call, as the API's error body states it.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{status} {code}: {message}{}{}", param.as_ref().map(|p| format!(" (param `{p}`)")).unwrap_or_default(), request_id.as_ref().map(|r| format!(" [request {r}]")).unwrap_or_default())]
    Refused { status: u16, code: String, message: String, param: Option<String>, request_id: Option<String> },
    #[error("could not reach Gable at {url}: {reason}")]
    Unreachable { url: String, reason: String },
}

impl ApiError {
    pub fn status(&self) -> Option<u16> {
        match self {
            ApiError::Refused { status, .. } => Some(*status),
            ApiError::Unreachable { .. } => None,
        }
    }

    pub fn code(&self) -> Option<&str> {
        match self {
            ApiError::Refused { code, .. } => Some(code),
            ApiError::Unreachable { .. } => None,
        }
    }

    /// The error of a non-2xx answer: its `error` object, or the status alone.
    pub fn of_answer(status: u16, request_id: Option<String>, body: &str) -> ApiError {
        let json: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let e = &json["error"];
        let text = |v: &Value| v.as_str().map(String::from);
        ApiError::Refused {
            status,
            code: text(&e["code"]).unwrap_or_else(|| "http_error".into()),
            message: text(&e["message"]).unwrap_or_else(|| format!("the server answered {status}")),
            param: text(&e["param"]),
            request_id: text(&e["request_id"]).or(request_id),
        }
    }
}

/// Why a request got no answer: the last of reqwest's error chain (its own message only
/// repeats the URL), e.g. "Connection refused (os error 111)".
pub fn reason(e: &reqwest::Error) -> String {
    let mut reason = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        reason = s.to_string();
        source = s.source();
    }
    reason
}

/// The API of one Gable with one key.
#[derive(Clone)]
pub struct Client {
    pub target: Resolved,
    http: reqwest::Client,
}

pub const USER_AGENT: &str = concat!("gable-cli/", env!("CARGO_PKG_VERSION"));

impl Client {
    pub fn new(target: Resolved) -> anyhow::Result<Client> {
        let http = reqwest::Client::builder().user_agent(USER_AGENT).connect_timeout(Duration::from_secs(10)).build()?;
        Ok(Client { target, http })
    }

    /// `{api_url}/v1{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("{}/v1{path}", self.target.api_url)
    }

    /// A request with the key, for callers that read the answer themselves (a stream).
    pub fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.http.request(method, self.url(path)).bearer_auth(&self.target.api_key)
    }

    pub fn unreachable(&self, e: &reqwest::Error) -> ApiError {
        ApiError::Unreachable { url: self.target.api_url.clone(), reason: reason(e) }
    }

    /// One call; the answer's body (the envelope: the record is its `data`) on a 2xx.
    pub async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> Result<Value, ApiError> {
        let mut req = self.request(method.clone(), path).timeout(Duration::from_secs(60));
        if method != Method::GET {
            req = req.header("Idempotency-Key", uuid::Uuid::new_v4().to_string());
        }
        if let Some(body) = body {
            req = req.header("Content-Type", "application/json").body(body.to_string());
        }
        self.answer(req, path).await
    }

    /// Uploads a file (`POST`, the file as the body, `content_type`): an import's upload.
    pub async fn upload(&self, path: &str, content_type: &str, file: impl Into<reqwest::Body>) -> Result<Value, ApiError> {
        let req = self.request(Method::POST, path).header("Content-Type", content_type).body(file);
        self.answer(req, path).await
    }

    /// Sends `req`; the answer's JSON body on a 2xx, the API's error otherwise.
    async fn answer(&self, req: reqwest::RequestBuilder, path: &str) -> Result<Value, ApiError> {
        let res = req.send().await.map_err(|e| self.unreachable(&e))?;
        let status = res.status().as_u16();
        let request_id = res.headers().get("request-id").and_then(|v| v.to_str().ok()).map(String::from);
        let text = res.text().await.map_err(|e| self.unreachable(&e))?;
        if !(200..300).contains(&status) {
            return Err(ApiError::of_answer(status, request_id, &text));
        }
        let json: Value = serde_json::from_str(&text).map_err(|_| ApiError::Refused {
            status,
            code: "not_json".into(),
            message: format!("the answer of {} is not JSON: is this Gable's API address?", self.url(path)),
            param: None,
            request_id,
        })?;
        Ok(json)
    }

    pub async fn get(&self, path: &str) -> Result<Value, ApiError> {
        self.call(Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: &Value) -> Result<Value, ApiError> {
        self.call(Method::POST, path, Some(body)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_body_becomes_one_line() {
        let body = r#"{"error":{"type":"invalid_request_error","code":"validation_failed","message":"kind is required","param":"kind","request_id":"r1"}}"#;
        let e = ApiError::of_answer(400, None, body);
        assert_eq!(e.to_string(), "400 validation_failed: kind is required (param `kind`) [request r1]");
        let bare = ApiError::of_answer(502, Some("r2".into()), "<html>bad gateway</html>");
        assert_eq!(bare.to_string(), "502 http_error: the server answered 502 [request r2]");
        assert_eq!((bare.status(), bare.code()), (Some(502), Some("http_error")));
    }
}
