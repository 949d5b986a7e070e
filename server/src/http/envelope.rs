//! The success envelope: `{object, data, meta: {request_id, next_cursor, has_more}}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::request_id::current_request_id;

pub fn single(status: StatusCode, object: &str, data: Value) -> Response {
    envelope(status, object, data, None, false)
}

pub fn list(data: Vec<Value>, next_cursor: Option<String>, has_more: bool) -> Response {
    envelope(StatusCode::OK, "list", Value::Array(data), next_cursor, has_more)
}

fn envelope(status: StatusCode, object: &str, data: Value, next_cursor: Option<String>, has_more: bool) -> Response {
    let body = json!({
        "object": object,
        "data": data,
        "meta": {
            "request_id": current_request_id().map(|id| id.to_string()),
            "next_cursor": next_cursor,
            "has_more": has_more,
        }
    });
    (status, Json(body)).into_response()
}
