//! The Developers area (`gable_app::service::Developers`): an API call as a person reads
//! it, the errors overview and the live tail. Every read acts as the signed-in user
//! through the operations (`Operations::read`, `list`, `request_errors`): the request
//! log's scope, the environment the console shows, the events' and deliveries' reads.

use chrono::Duration;
use gable_app::service::{CallView, ConsoleError, Developers, ErrorGroup, ErrorsView, Me, TailLine};
use serde_json::Value as Json;
use uuid::Uuid;

use super::records::show;
use super::{actor_of, refused, store_error, AccountService};
use crate::domain::collections::collection;
use crate::domain::expand::Expand;
use crate::domain::list::ListQuery;
use crate::domain::record::Record;
use crate::error::Error;

/// Error groups the overview shows at most.
const GROUPS: u64 = 100;
/// Calls the live tail sends at once at most.
const TAIL: &str = "50";
/// Headers a `curl` of a call repeats: what shapes the answer; never a credential.
const REPEATED_HEADERS: &[&str] = &["content-type", "idempotency-key", "gable-version"];

fn calls() -> Result<&'static crate::domain::registry::Collection, ConsoleError> {
    collection("request-logs").ok_or(ConsoleError::Internal)
}

fn refusal(e: Error) -> ConsoleError {
    match e {
        Error::NotFound { .. } => ConsoleError::NotFound("That API call".into()),
        other => refused("the request log", "reading the request log")(other),
    }
}

/// `text` as one argument of a POSIX shell: single-quoted, a quote inside closed,
/// escaped and reopened.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A body as people read it: pretty-printed when it is whole JSON, as sent otherwise.
fn pretty(body: &str) -> String {
    serde_json::from_str::<Json>(body).ok().and_then(|j| serde_json::to_string_pretty(&j).ok()).unwrap_or_else(|| body.to_string())
}

/// The call again as a `curl` command, against `base` (its environment's public
/// address), with the credential as `$GABLE_KEY`: what was redacted stays `[redacted]`.
pub fn curl(base: &str, r: &Record) -> String {
    let method = r.get("method").as_str().unwrap_or("GET");
    let path = r.get("path").as_str().unwrap_or("/v1");
    let url = match r.get("query").as_str() {
        Some(q) => format!("{base}{path}?{q}"),
        None => format!("{base}{path}"),
    };
    let first = if method == "GET" { format!("curl {}", quoted(&url)) } else { format!("curl -X {method} {}", quoted(&url)) };
    let mut parts = vec![first];
    parts.push("-H \"Authorization: Bearer $GABLE_KEY\"".into());
    if let crate::domain::value::Val::Json(Json::Object(headers)) = r.get("request_headers") {
        for name in REPEATED_HEADERS {
            if let Some(v) = headers.get(*name).and_then(Json::as_str) {
                parts.push(format!("-H {}", quoted(&format!("{}: {v}", header_name(name)))));
            }
        }
    }
    if let Some(body) = r.get("request_body").as_str() {
        parts.push(format!("--data-raw {}", quoted(body)));
    }
    parts.join(" \\\n  ")
}

/// `idempotency-key` → `Idempotency-Key`.
fn header_name(name: &str) -> String {
    name.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join("-")
}

/// A list address of the request log with these filters.
fn logs_href(filters: &[(&str, String)]) -> String {
    let q: String =
        url::form_urlencoded::Serializer::new(String::new()).extend_pairs(filters.iter().map(|(k, v)| (*k, v.as_str()))).finish();
    format!("/console/request-logs?{q}")
}

/// A call's answered status.
fn status_of(r: &Record) -> u16 {
    match r.get("status") {
        crate::domain::value::Val::Int(n) => u16::try_from(*n).unwrap_or(0),
        _ => 0,
    }
}

fn tail_line(r: &Record) -> TailLine {
    let status = status_of(r);
    let duration = match r.get("duration_ms") {
        crate::domain::value::Val::Num(ms) => format!("{ms:.1} ms"),
        _ => String::new(),
    };
    TailLine {
        id: r.id.to_string(),
        at: r.created_at.format("%H:%M:%S").to_string(),
        method: r.get("method").as_str().unwrap_or_default().to_string(),
        path: r.get("path").as_str().unwrap_or_default().to_string(),
        status,
        class: r.get("status_class").as_str().unwrap_or_default().to_string(),
        duration,
        href: format!("/console/request-logs/{}", r.id),
    }
}

#[async_trait::async_trait]
impl Developers for AccountService {
    async fn call(&self, me: &Me, id: &str) -> Result<CallView, ConsoleError> {
        let c = calls()?;
        let actor = actor_of(me)?;
        let id = Uuid::parse_str(id.trim()).map_err(|_| ConsoleError::NotFound("That API call".into()))?;
        let r = self.ops.read(&actor, c, id, &Expand::default()).await.map_err(refusal)?.record;
        let status = status_of(&r);
        let line = format!("{} {}", r.get("method").as_str().unwrap_or_default(), r.get("path").as_str().unwrap_or_default());
        let base = self.api_base(me.livemode);
        let caused = matches!(r.get("event_ids"), crate::domain::value::Val::Json(Json::Array(ids)) if !ids.is_empty());
        let (events, events_note) = if caused { self.events_where(&actor, "request_id", r.id, "created_at").await } else { (vec![], None) };
        Ok(CallView {
            id: r.id.to_string(),
            line,
            status,
            curl: curl(&base, &r),
            request_body: r.get("request_body").as_str().map(pretty),
            response_body: r.get("response_body").as_str().map(pretty),
            events,
            events_note,
        })
    }

    async fn errors(&self, me: &Me, window: &str) -> Result<ErrorsView, ConsoleError> {
        let span = match window {
            "24h" => Duration::hours(24),
            "7d" => Duration::days(7),
            other => return Err(ConsoleError::Invalid { field: "window".into(), message: format!("\"{other}\" is not 24h or 7d.") }),
        };
        let actor = actor_of(me)?;
        let since = self.now() - span;
        let since_text = crate::domain::value::format_datetime(&since);
        let (counts, calls, errors) = self.ops.request_errors(&actor, since, GROUPS).await.map_err(refusal)?;
        let groups = counts
            .into_iter()
            .map(|g| {
                let mut filters = vec![("filter[created_at][gte]", since_text.clone())];
                match &g.code {
                    Some(code) => filters.push(("filter[error_code]", code.clone())),
                    None => filters.extend([("filter[error_code][exists]", "false".to_string()), ("filter[status_class]", "4xx".into())]),
                }
                if let Some(route) = &g.route {
                    filters.push(("filter[route]", route.clone()));
                }
                ErrorGroup {
                    code: g.code.unwrap_or_else(|| "(no error body)".into()),
                    route: g.route.unwrap_or_default(),
                    status: g.status,
                    count: g.count,
                    last_seen: show::datetime(&g.last_seen),
                    last_href: format!("/console/request-logs/{}", g.last_id),
                    logs_href: logs_href(&filters),
                }
            })
            .collect();
        Ok(ErrorsView { window: window.to_string(), groups, calls, errors })
    }

    async fn tail(&self, me: &Me, after: Option<&str>) -> Result<Vec<TailLine>, ConsoleError> {
        let c = calls()?;
        let actor = actor_of(me)?;
        let after = after
            .filter(|a| !a.is_empty())
            .map(|a| Uuid::parse_str(a.trim()))
            .transpose()
            .map_err(|_| ConsoleError::Invalid { field: "after".into(), message: "That is not a call's id.".into() })?;
        let q = ListQuery::parse(c, &[("limit".to_string(), TAIL.to_string())]).map_err(store_error("listing the newest calls"))?;
        let page = self.ops.list(&actor, c, q).await.map_err(refusal)?;
        // Newest first from the list; the tail shows them in the order they came.
        Ok(page.records.iter().rev().filter(|r| after.is_none_or(|a| r.id > a)).map(tail_line).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_argument_keeps_its_quotes() {
        assert_eq!(quoted("it's"), r"'it'\''s'");
        assert_eq!(header_name("idempotency-key"), "Idempotency-Key");
    }
}
