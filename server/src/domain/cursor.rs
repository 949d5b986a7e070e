//! Opaque, tamper-evident keyset cursors.
//!
//! A cursor carries the sort-key values of the last row of a page and a digest of what
//! it is bound to (collection, sort, filters, tenant, environment), signed with HMAC-SHA256
//! under the instance's secret. A cursor altered, or used on another list or tenant, is
//! `400 invalid_cursor`.

use base64::{engine::general_purpose::URL_SAFE_NO_PAD as B64, Engine};
use hmac::{Hmac, Mac};
use serde_json::Value as Json;
use sha2::Sha256;

use super::list::SortKey;
use super::value::{from_json, to_json, Val};
use crate::error::{Error, Result};

type HmacSha256 = Hmac<Sha256>;

pub struct CursorKey(Vec<u8>);

impl CursorKey {
    pub fn new(secret: &[u8]) -> Self {
        CursorKey(secret.to_vec())
    }

    fn mac(&self, payload: &[u8]) -> HmacSha256 {
        let mut m = HmacSha256::new_from_slice(&self.0).expect("HMAC accepts any key length");
        m.update(b"gable-cursor-v1");
        m.update(payload);
        m
    }

    pub fn encode(&self, binding: &str, keys: &[SortKey], values: &[Val]) -> String {
        let vals: Vec<Json> = keys.iter().zip(values).map(|(_, v)| to_json(v, None)).collect();
        // Money sort keys would need the currency; money fields are never sortable.
        let payload = serde_json::json!({ "b": binding, "k": vals }).to_string();
        let tag = self.mac(payload.as_bytes()).finalize().into_bytes();
        format!("{}.{}", B64.encode(payload.as_bytes()), B64.encode(&tag[..16]))
    }

    pub fn decode(&self, cursor: &str, binding: &str, keys: &[SortKey]) -> Result<Vec<Val>> {
        let (payload, tag) = cursor.split_once('.').ok_or(Error::InvalidCursor)?;
        let payload = B64.decode(payload).map_err(|_| Error::InvalidCursor)?;
        let tag = B64.decode(tag).map_err(|_| Error::InvalidCursor)?;
        // `verify_truncated_left` compares in constant time.
        self.mac(&payload).verify_truncated_left(&tag).map_err(|_| Error::InvalidCursor)?;
        if tag.len() != 16 {
            return Err(Error::InvalidCursor);
        }
        let body: Json = serde_json::from_slice(&payload).map_err(|_| Error::InvalidCursor)?;
        if body.get("b").and_then(Json::as_str) != Some(binding) {
            return Err(Error::InvalidCursor);
        }
        let vals = body.get("k").and_then(Json::as_array).ok_or(Error::InvalidCursor)?;
        if vals.len() != keys.len() {
            return Err(Error::InvalidCursor);
        }
        keys.iter()
            .zip(vals)
            .map(|(k, v)| match from_json(k.field, v) {
                Ok(Val::Null) | Err(_) => Err(Error::InvalidCursor),
                Ok(val) => Ok(val),
            })
            .collect()
    }
}
