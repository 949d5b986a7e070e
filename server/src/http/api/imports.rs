//! The import endpoints beyond the collection's own reads and actions: the upload
//! (`POST /v1/imports`, the file as the body, reached through `resources::create`) and the
//! error report (`GET /v1/imports/{id}/errors`). The engine is `ops::imports`.

use axum::extract::{Path, RawQuery, Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use futures_util::TryStreamExt;
use serde_json::Value as Json;

use super::query;
use crate::domain::collections::{collection, named};
use crate::domain::import::Format;
use crate::domain::scopes::Access;
use crate::error::{Error, Result};
use crate::http::auth::Principal;
use crate::http::envelope;
use crate::http::state::ApiState;
use crate::ops::imports::Upload;

pub fn router() -> Router<ApiState> {
    Router::new().route("/v1/imports/{id}/errors", get(errors))
}

/// The error report's page size, by default and at most.
const ERRORS_PAGE: u64 = 100;
const ERRORS_PAGE_MAX: u64 = 1000;

/// `POST /v1/imports?collection=units&file_name=units.csv`: `201` with the import, every
/// row read and checked (`validated`), or the refusal of the file as a whole.
pub async fn upload(st: ApiState, cred: Principal, raw: Option<String>, req: Request) -> Result<Response> {
    let (parts, body) = req.into_parts();
    let upload = match what_is_uploaded(&cred, raw, &parts.headers) {
        Ok(upload) => upload,
        Err(e) => {
            // Refused before the file is read: read it away, so the client gets the answer
            // rather than a broken pipe while it is still sending.
            tokio::spawn(crate::http::admission::linger(body));
            return Err(e);
        }
    };
    let c = named("imports")?;
    let stream = body.into_data_stream().map_err(std::io::Error::other);
    let file = tokio_util::io::SyncIoBridge::new(tokio_util::io::StreamReader::new(stream));
    let made = st.app.ops.upload_import(&cred.actor, upload, file).await?;
    Ok(envelope::single(StatusCode::CREATED, c.object, made.to_json(c, None)))
}

/// What an upload's query and headers say, or why they are refused.
fn what_is_uploaded(cred: &Principal, raw: Option<String>, headers: &axum::http::HeaderMap) -> Result<Upload> {
    let c = named("imports")?;
    cred.actor.require(c, Access::Write)?;
    let mut target = None;
    let mut file_name = None;
    for (k, v) in query::pairs(raw) {
        match k.as_str() {
            "collection" => {
                target = Some(collection(&v).ok_or_else(|| Error::parameter("collection", format!("there is no collection named `{v}`")))?)
            }
            "file_name" => {
                if v.is_empty() || v.chars().count() > 255 || v.chars().any(char::is_control) {
                    return Err(Error::parameter("file_name", "must be 1 to 255 characters, without control characters"));
                }
                file_name = Some(v)
            }
            _ => return Err(Error::parameter(&k, "is not a parameter of an upload; it takes `collection` and `file_name`")),
        }
    }
    let content_type = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let format = Format::of_content_type(content_type).ok_or_else(|| {
        Error::UnsupportedMediaType(
            "an import's body is the file itself: send it as Content-Type: text/csv (one collection, `collection=…`) or \
             application/x-ndjson"
                .into(),
        )
    })?;
    Ok(Upload { collection: target, format, file_name, header: Default::default() })
}

/// `GET /v1/imports/{id}/errors?limit=100&after_line=N`: the rows with errors, in line
/// order, one entry per error.
async fn errors(State(st): State<ApiState>, cred: Principal, Path(id): Path<String>, RawQuery(raw): RawQuery) -> Result<Response> {
    cred.actor.require(named("imports")?, Access::Read)?;
    let id = query::record_id(&id)?;
    let mut limit = ERRORS_PAGE;
    let mut after = 0u64;
    for (k, v) in query::pairs(raw) {
        match k.as_str() {
            "limit" => {
                limit = v
                    .parse()
                    .ok()
                    .filter(|n| (1..=ERRORS_PAGE_MAX).contains(n))
                    .ok_or_else(|| Error::parameter("limit", format!("must be a whole number from 1 to {ERRORS_PAGE_MAX}")))?
            }
            "after_line" => after = v.parse().map_err(|_| Error::parameter("after_line", "must be a line number (0 or more)"))?,
            _ => return Err(Error::parameter(&k, "is not a parameter of this list; it takes `limit` and `after_line`")),
        }
    }
    let page = st.app.ops.import_errors(&cred.actor, id, after, limit).await?;
    let data: Vec<Json> = page.errors.iter().map(|e| e.to_json()).collect();
    Ok(envelope::list(&data, None, page.has_more))
}
