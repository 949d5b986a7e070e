//! The flow API (`docs/embed.md`): `GET /v1/flow` and `POST /v1/flow/{collection}`, same
//! origin, with the page's flow token. Answers are read as JSON values (smaller code than
//! a typed model of four flows' shapes); errors as the API's error body.

use crate::json::Value;
use leptos::prelude::{window, RwSignal, Set};
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Headers, Request, RequestCache, RequestInit, Response};

use crate::env;
use crate::rules::{Keys, Outcome};

/// An error of the flow API (`{"error": {code, message, param?, request_id}}`), or of the
/// network (`status` 0, `network_error`).
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    pub status: u16,
    pub code: String,
    pub message: String,
    pub param: Option<String>,
}

impl ApiError {
    fn network() -> ApiError {
        ApiError {
            status: 0,
            code: "network_error".into(),
            message: "The form could not reach Gable. Check your connection and try again.".into(),
            param: None,
        }
    }

    /// Whether the same request may be sent again with the same key.
    pub fn outcome(&self) -> Outcome {
        if self.status == 0 || self.status >= 500 || self.code == "idempotency_key_in_use" {
            Outcome::Retry
        } else {
            Outcome::Answered
        }
    }

    /// The flow's token no longer works: the flow cannot go on.
    pub fn is_fatal(&self) -> bool {
        self.status == 401
    }
}

fn net(_: JsValue) -> ApiError {
    ApiError::network()
}

async fn call(method: &str, path: &str, body: Option<&str>, key: Option<&str>) -> Result<Value, ApiError> {
    let init = RequestInit::new();
    init.set_method(method);
    init.set_cache(RequestCache::NoStore);
    let headers = Headers::new().map_err(net)?;
    let auth = format!("Bearer {}", env::ctx().token);
    if headers.set("Authorization", &auth).is_err() {
        return Err(ApiError {
            status: 401,
            code: "unauthenticated".into(),
            message: "this page's flow token is not valid".into(),
            param: None,
        });
    }
    headers.set("Accept", "application/json").map_err(net)?;
    if let Some(b) = body {
        headers.set("Content-Type", "application/json").map_err(net)?;
        init.set_body(&JsValue::from_str(b));
    }
    if let Some(k) = key {
        headers.set("Idempotency-Key", k).map_err(net)?;
    }
    init.set_headers(&headers);
    let req = Request::new_with_str_and_init(path, &init).map_err(net)?;
    let resp: Response = JsFuture::from(window().fetch_with_request(&req)).await.map_err(net)?.unchecked_into();
    let status = resp.status();
    let text = JsFuture::from(resp.text().map_err(net)?).await.map_err(net)?.as_string().unwrap_or_default();
    let json: Option<Value> = Value::parse(&text);
    match json {
        Some(mut v) if (200..300).contains(&status) => Ok(v["data"].take()),
        Some(v) if v["error"].is_object() => {
            let e = &v["error"];
            Err(ApiError {
                status,
                code: e["code"].as_str().unwrap_or("error").to_string(),
                message: e["message"].as_str().unwrap_or_default().to_string(),
                param: e["param"].as_str().map(str::to_string),
            })
        }
        _ => Err(ApiError {
            status,
            code: if status >= 500 { "server_error".into() } else { format!("http_{status}") },
            message: format!("Gable answered with an unexpected response (HTTP {status}). Try again in a moment."),
            param: None,
        }),
    }
}

/// `GET /v1/flow`: the flow's session (`data`).
pub async fn session() -> Result<Value, ApiError> {
    call("GET", "/v1/flow", None, None).await
}

/// `POST /v1/flow/{what}` with the attempt's `Idempotency-Key` from `keys`; the made
/// record (`data`). The keys learn how it ended.
pub async fn create(what: &str, body: &Value, keys: leptos::prelude::StoredValue<Keys>) -> Result<Value, ApiError> {
    use leptos::prelude::UpdateValue;
    let text = body.to_json();
    let mut key = String::new();
    keys.update_value(|k| key = k.key_for(&text, env::random_key));
    let result = call("POST", &format!("/v1/flow/{what}"), Some(&text), Some(&key)).await;
    let outcome = match &result {
        Ok(_) => Outcome::Answered,
        Err(e) => e.outcome(),
    };
    keys.update_value(|k| k.settle(outcome));
    result
}

/// Reads the session again (after a write) into `data`; a failure leaves it as it was.
pub fn refresh(data: RwSignal<Value>) {
    spawn_local(async move {
        if let Ok(d) = session().await {
            data.set(d);
        }
    });
}
