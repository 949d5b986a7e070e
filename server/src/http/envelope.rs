//! The success envelope: `{object, data, meta: {request_id, next_cursor, has_more}}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use serde_json::{json, Value};

use super::request_id::current_request_id;

pub fn single(status: StatusCode, object: &str, data: Value) -> Response {
    envelope(status, object, data, None, false)
}

/// The envelope of one object, as a value (for an answer stored with its write).
pub fn single_value(object: &str, data: Value) -> Value {
    json!({
        "object": object,
        "data": data,
        "meta": { "request_id": current_request_id().map(|id| id.to_string()), "next_cursor": null, "has_more": false }
    })
}

/// A list, serialised straight to bytes from its items.
pub fn list<T: Serialize>(data: &[T], next_cursor: Option<String>, has_more: bool) -> Response {
    match list_bytes(data, next_cursor, has_more) {
        Ok(bytes) => ([(axum::http::header::CONTENT_TYPE, "application/json")], bytes).into_response(),
        Err(e) => crate::error::Error::internal(e).into_response(),
    }
}

/// One object, serialised straight to bytes (a record's view, without a JSON tree).
pub fn single_serialized<T: Serialize + ?Sized>(status: StatusCode, object: &str, data: &T) -> Response {
    let body = Envelope { object, data, meta: Meta { request_id: request_id(), next_cursor: None, has_more: false } };
    match serde_json::to_vec(&body) {
        Ok(bytes) => (status, [(axum::http::header::CONTENT_TYPE, "application/json")], bytes).into_response(),
        Err(e) => crate::error::Error::internal(e).into_response(),
    }
}

/// The bytes of a list's envelope.
pub fn list_bytes<T: Serialize>(data: &[T], next_cursor: Option<String>, has_more: bool) -> serde_json::Result<Vec<u8>> {
    serde_json::to_vec(&Envelope { object: "list", data, meta: Meta { request_id: request_id(), next_cursor, has_more } })
}

#[derive(Serialize)]
struct Meta {
    request_id: Option<String>,
    next_cursor: Option<String>,
    has_more: bool,
}

#[derive(Serialize)]
struct Envelope<'a, T: ?Sized> {
    object: &'a str,
    data: &'a T,
    meta: Meta,
}

fn request_id() -> Option<String> {
    current_request_id().map(|id| id.to_string())
}

fn envelope(status: StatusCode, object: &str, data: Value, next_cursor: Option<String>, has_more: bool) -> Response {
    let mut body = single_value(object, data);
    body["meta"]["next_cursor"] = json!(next_cursor);
    body["meta"]["has_more"] = json!(has_more);
    (status, Json(body)).into_response()
}
