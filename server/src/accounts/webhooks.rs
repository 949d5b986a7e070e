//! Webhook subscriptions and their delivery register, in the environment the console
//! shows (`me.livemode`).
//!
//! Writes go through `Operations` as the signed-in user, like the API's: the same
//! validation (events, https in live mode, the SSRF guard), the same secret handling and
//! the same register. Reads go through the operations' one read path (`ops::reads`) as
//! the signed-in user, checked against their role: `webhooks:read` for subscriptions,
//! `webhook-deliveries:read` for the register, and read access to an event's collection
//! for the body a delivery sent (the event carries its record). Only owners and admins
//! (`require_manage`) change.

use gable_app::service::{
    ConsoleError, DeliveryDetail, DeliveryFilter, DeliveryView, Me, WebhookForm, WebhookView, WebhookWithSecret, Webhooks,
};
use serde_json::{json, Map, Value as Json};
use uuid::Uuid;

use super::{actor_of, invalid, refused, require_manage, store_error, AccountService};
use crate::domain::collections::collection;
use crate::domain::events::EVENT_TYPES;
use crate::domain::expand::Expand;
use crate::domain::list::ListQuery;
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::scopes::Access;
use crate::domain::value::{format_datetime, Val};
use crate::error::Error;
use crate::ops::reads::Sent;
use crate::ops::Actor;

const MANAGE: &str = "manage webhooks";
const SEE: &str = "webhook subscriptions";
const SEE_REGISTER: &str = "the webhook delivery register";
/// How many attempts the register page shows (newest first; the filters narrow it).
const REGISTER_LIMIT: &str = "50";
const DESCRIPTION_MAX: usize = 500;

fn not_found() -> ConsoleError {
    ConsoleError::NotFound("The webhook subscription".into())
}

fn delivery_not_found() -> ConsoleError {
    ConsoleError::NotFound("The delivery".into())
}

fn col(name: &str) -> Result<&'static Collection, ConsoleError> {
    collection(name).ok_or(ConsoleError::Internal)
}

/// An id from a form or a link; anything else cannot name a record of this tenant.
fn event_not_found() -> ConsoleError {
    ConsoleError::NotFound("The event".into())
}

fn parse_id(id: &str, missing: fn() -> ConsoleError) -> Result<Uuid, ConsoleError> {
    Uuid::parse_str(id.trim()).map_err(|_| missing())
}

/// A domain error of a webhook operation, in words, with the form field it concerns.
fn webhook_error(doing: &'static str, missing: fn() -> ConsoleError) -> impl FnOnce(Error) -> ConsoleError {
    move |e| match e {
        Error::Validation { param, message } | Error::InvalidParameter { param, message } => {
            // The API's messages start with the field's name ("url: must use https …").
            let message = message.strip_prefix(&format!("{param}: ")).unwrap_or(&message).trim_end_matches('.').to_string();
            let label = match param.as_str() {
                "url" => "The URL",
                "events" => "Events:",
                "description" => "The description",
                "type" => "The event type",
                other => return invalid(other, format!("Check the {other} field: {message}.")),
            };
            invalid(&param, format!("{label} {message}."))
        }
        Error::NotFound { .. } => missing(),
        Error::Conflict(why) | Error::Immutable(why) => ConsoleError::Conflict(capitalised(&why)),
        Error::InsufficientScope { message, .. } => ConsoleError::Forbidden(message),
        other => store_error(doing)(other),
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), c.as_str().trim_end_matches('.')),
        None => String::new(),
    }
}

fn text(v: &Val) -> Option<String> {
    v.as_str().map(String::from)
}

fn time(v: &Val) -> Option<String> {
    match v {
        Val::DateTime(t) => Some(format_datetime(t)),
        _ => None,
    }
}

fn int(v: &Val) -> Option<i64> {
    match v {
        Val::Int(n) => Some(*n),
        _ => None,
    }
}

/// A JSON object of headers as (name, value) pairs, in the order stored.
fn headers(v: &Val) -> Vec<(String, String)> {
    let Val::Json(Json::Object(map)) = v else { return vec![] };
    map.iter()
        .map(|(k, v)| {
            let value = match v {
                Json::String(s) => s.clone(),
                Json::Array(items) => {
                    items.iter().map(|i| i.as_str().map_or_else(|| i.to_string(), String::from)).collect::<Vec<_>>().join(", ")
                }
                other => other.to_string(),
            };
            (k.clone(), value)
        })
        .collect()
}

fn webhook_view(r: &Record) -> WebhookView {
    let events = match r.get("events") {
        Val::Json(Json::Array(items)) => items.iter().filter_map(|s| s.as_str().map(String::from)).collect(),
        _ => vec![],
    };
    WebhookView {
        id: r.id.to_string(),
        url: text(r.get("url")).unwrap_or_default(),
        events,
        description: text(r.get("description")).filter(|d| !d.is_empty()),
        status: r.status().to_string(),
        disabled_reason: text(r.get("disabled_reason")),
        failing_since: time(r.get("failing_since")),
        created_at: format_datetime(&r.created_at),
    }
}

fn delivery_view(r: &Record) -> DeliveryView {
    DeliveryView {
        id: r.id.to_string(),
        webhook_id: r.get("webhook_id").as_uuid().map(|u| u.to_string()).unwrap_or_default(),
        event_id: r.get("event_id").as_uuid().map(|u| u.to_string()),
        event_type: text(r.get("event_type")).unwrap_or_default(),
        event_created_at: time(r.get("event_created_at")).unwrap_or_default(),
        url: text(r.get("url")).unwrap_or_default(),
        attempt: int(r.get("attempt")).unwrap_or(1),
        trigger: text(r.get("trigger")).unwrap_or_default(),
        status: r.status().to_string(),
        response_status: int(r.get("response_status")),
        latency_ms: int(r.get("latency_ms")),
        error: text(r.get("error")),
        next_attempt_at: time(r.get("next_attempt_at")),
        created_at: format_datetime(&r.created_at),
    }
}

/// The request body of a create or an edit, checked for what the API would not say in
/// a person's words (the API checks the rest: event names, https, the SSRF guard).
fn body(form: &WebhookForm, editing: bool) -> Result<Json, ConsoleError> {
    let url = form.url.trim();
    if url.is_empty() {
        return Err(invalid("url", "Enter the URL that should receive the events, like https://example.com/webhooks/gable."));
    }
    let mut events: Vec<&str> = form.events.iter().map(|e| e.trim()).filter(|e| !e.is_empty()).collect();
    events.dedup();
    if events.is_empty() {
        return Err(invalid("events", "Choose at least one event type, or all events."));
    }
    // "All events" ticked beside single types means all events.
    if events.contains(&"*") {
        events = vec!["*"];
    }
    let description = form.description.trim();
    if description.chars().count() > DESCRIPTION_MAX {
        return Err(invalid("description", format!("Use at most {DESCRIPTION_MAX} characters for the description.")));
    }
    if description.chars().any(char::is_control) {
        return Err(invalid("description", "Use letters, digits and punctuation only in the description."));
    }
    let mut b = Map::new();
    b.insert("url".into(), json!(url));
    b.insert("events".into(), json!(events));
    if !description.is_empty() {
        b.insert("description".into(), json!(description));
    } else if editing {
        // Emptying the field removes the description.
        b.insert("description".into(), Json::Null);
    }
    Ok(Json::Object(b))
}

impl AccountService {
    /// The signed-in owner or admin acting in the console's environment, with their
    /// role's permissions (the operations check them as they check a key's scopes).
    fn manager(&self, me: &Me, what: &str) -> Result<Actor, ConsoleError> {
        require_manage(me, what)?;
        actor_of(me)
    }

    /// The signed-in user as a reader of `c`, refused at once when their role may not
    /// read it (before an id is even looked at; the read checks again).
    fn reader(&self, me: &Me, c: &Collection, what: &str) -> Result<Actor, ConsoleError> {
        let actor = actor_of(me)?;
        actor.require(c, Access::Read).map_err(refused(what, "checking a permission"))?;
        Ok(actor)
    }

    /// The body the attempt sent, pretty-printed, or why it cannot be shown.
    async fn sent_body(&self, actor: &Actor, rec: &Record) -> Result<(Option<String>, Option<String>), ConsoleError> {
        let pretty = |j: &Json| serde_json::to_string_pretty(j).map_err(|_| ConsoleError::Internal);
        Ok(match self.ops.sent(actor, rec).await.map_err(store_error("reading what a delivery sent"))? {
            Sent::Body(body) => (Some(pretty(&body)?), None),
            Sent::Concealed(c) => (
                None,
                Some(format!(
                    "The body and the receiver's answer are not shown: the body carries a {} record, and your role does not allow reading {} (`{}`).",
                    c.object,
                    c.name,
                    c.read_scope()
                )),
            ),
            Sent::EventGone => (None, Some("The event is no longer kept (events are kept 30 days).".into())),
            Sent::NotKept => (None, Some("The test event sent is not kept with this attempt.".into())),
        })
    }
}

#[async_trait::async_trait]
impl Webhooks for AccountService {
    fn webhook_event_types(&self) -> Vec<String> {
        EVENT_TYPES.iter().map(|e| e.name.to_string()).collect()
    }

    async fn webhooks(&self, me: &Me) -> Result<Vec<WebhookView>, ConsoleError> {
        let c = col("webhooks")?;
        let actor = self.reader(me, c, SEE)?;
        let q = ListQuery::parse(c, &[("limit".into(), "100".into())]).map_err(store_error("listing webhooks"))?;
        let page = self.ops.list(&actor, c, q).await.map_err(refused(SEE, "listing webhooks"))?;
        Ok(page.records.iter().map(webhook_view).collect())
    }

    async fn webhook(&self, me: &Me, id: &str) -> Result<WebhookView, ConsoleError> {
        let c = col("webhooks")?;
        let actor = self.reader(me, c, SEE)?;
        let id = parse_id(id, not_found)?;
        let rec = self.ops.read(&actor, c, id, &Expand::default()).await.map_err(webhook_error("reading a webhook", not_found))?.record;
        Ok(webhook_view(&rec))
    }

    async fn create_webhook(&self, me: &Me, form: WebhookForm) -> Result<WebhookWithSecret, ConsoleError> {
        let actor = self.manager(me, MANAGE)?;
        let created = self
            .ops
            .create(&actor, col("webhooks")?, &body(&form, false)?)
            .await
            .map_err(webhook_error("creating a webhook", not_found))?;
        let secret = created.secret.ok_or(ConsoleError::Internal)?;
        tracing::info!(tenant = %actor.scope.tenant, webhook = %created.record.id, by = %me.user_id, "console: webhook created");
        Ok(WebhookWithSecret { webhook: webhook_view(&created.record), secret })
    }

    async fn update_webhook(&self, me: &Me, id: &str, form: WebhookForm) -> Result<WebhookView, ConsoleError> {
        let actor = self.manager(me, MANAGE)?;
        let id = parse_id(id, not_found)?;
        let rec = self
            .ops
            .update(&actor, col("webhooks")?, id, &body(&form, true)?)
            .await
            .map_err(webhook_error("editing a webhook", not_found))?;
        Ok(webhook_view(&rec))
    }

    async fn set_webhook_enabled(&self, me: &Me, id: &str, enabled: bool) -> Result<WebhookView, ConsoleError> {
        let actor = self.manager(me, MANAGE)?;
        let id = parse_id(id, not_found)?;
        let status = if enabled { "enabled" } else { "disabled" };
        let rec = self
            .ops
            .update(&actor, col("webhooks")?, id, &json!({ "status": status }))
            .await
            .map_err(webhook_error("enabling or disabling a webhook", not_found))?;
        Ok(webhook_view(&rec))
    }

    async fn rotate_webhook_secret(&self, me: &Me, id: &str) -> Result<WebhookWithSecret, ConsoleError> {
        let actor = self.manager(me, MANAGE)?;
        let id = parse_id(id, not_found)?;
        let fail = || webhook_error("rotating a webhook secret", not_found);
        let mut w = self.ops.begin(&actor).await.map_err(fail())?;
        let (rec, secret) = w.rotate_webhook_secret(id).await.map_err(fail())?;
        w.commit().await.map_err(fail())?;
        tracing::info!(tenant = %actor.scope.tenant, webhook = %id, by = %me.user_id, "console: webhook secret rotated");
        Ok(WebhookWithSecret { webhook: webhook_view(&rec), secret })
    }

    async fn delete_webhook(&self, me: &Me, id: &str) -> Result<(), ConsoleError> {
        let actor = self.manager(me, MANAGE)?;
        let id = parse_id(id, not_found)?;
        self.ops.delete(&actor, col("webhooks")?, id).await.map_err(webhook_error("deleting a webhook", not_found))?;
        tracing::info!(tenant = %actor.scope.tenant, webhook = %id, by = %me.user_id, "console: webhook deleted");
        Ok(())
    }

    async fn send_test_webhook(&self, me: &Me, id: &str, event_type: &str) -> Result<DeliveryView, ConsoleError> {
        let actor = self.manager(me, "send test events")?;
        let id = parse_id(id, not_found)?;
        let kind = event_type.trim();
        if kind.is_empty() {
            return Err(invalid("type", "Choose the type of event to send."));
        }
        let fail = || webhook_error("sending a test event", not_found);
        let mut params = Map::new();
        params.insert("type".into(), json!(kind));
        let mut w = self.ops.begin(&actor).await.map_err(fail())?;
        let attempt = w.send_test_event(id, &params).await.map_err(fail())?;
        w.commit().await.map_err(fail())?;
        Ok(delivery_view(&attempt))
    }

    async fn webhook_deliveries(&self, me: &Me, webhook_id: &str, filter: DeliveryFilter) -> Result<Vec<DeliveryView>, ConsoleError> {
        let (hooks, c) = (col("webhooks")?, col("webhook-deliveries")?);
        let actor = self.reader(me, hooks, SEE)?;
        self.reader(me, c, SEE_REGISTER)?;
        let hook = parse_id(webhook_id, not_found)?;
        // The subscription must be one of this tenant's, in this environment.
        self.ops.read(&actor, hooks, hook, &Expand::default()).await.map_err(webhook_error("reading a webhook", not_found))?;
        let mut pairs = vec![("limit".to_string(), REGISTER_LIMIT.to_string()), ("filter[webhook_id]".to_string(), hook.to_string())];
        for (name, value) in [("status", filter.status), ("event_type", filter.event_type), ("trigger", filter.trigger)] {
            if let Some(v) = value.map(|v| v.trim().to_string()).filter(|v| !v.is_empty()) {
                pairs.push((format!("filter[{name}]"), v));
            }
        }
        let q = ListQuery::parse(c, &pairs).map_err(|e| match e {
            Error::InvalidParameter { param, message } => invalid(&param, format!("Check the filter ({message}).")),
            other => store_error("listing deliveries")(other),
        })?;
        let page = self.ops.list(&actor, c, q).await.map_err(refused(SEE_REGISTER, "listing deliveries"))?;
        Ok(page.records.iter().map(delivery_view).collect())
    }

    async fn webhook_delivery(&self, me: &Me, id: &str) -> Result<DeliveryDetail, ConsoleError> {
        let c = col("webhook-deliveries")?;
        let actor = self.reader(me, c, SEE_REGISTER)?;
        let id = parse_id(id, delivery_not_found)?;
        // Read through the gate, which conceals the receiver's answer when it may echo a
        // body the user may not read; the page says why.
        let rec =
            self.ops.read(&actor, c, id, &Expand::default()).await.map_err(webhook_error("reading a delivery", delivery_not_found))?.record;
        let response_note = crate::domain::webhooks::unreadable_carried(&actor.grants, &rec)
            .map(|_| "Not shown: the receiver's answer may repeat the body, which your role may not read.".to_string());
        let (request_body, request_body_note) = self.sent_body(&actor, &rec).await?;
        Ok(DeliveryDetail {
            delivery: delivery_view(&rec),
            request_headers: headers(rec.get("request_headers")),
            request_body,
            request_body_note,
            response_headers: headers(rec.get("response_headers")),
            response_excerpt: text(rec.get("response_excerpt")),
            response_note,
        })
    }

    async fn replay_webhook_delivery(&self, me: &Me, id: &str) -> Result<DeliveryView, ConsoleError> {
        let actor = self.manager(me, "replay deliveries")?;
        let id = parse_id(id, delivery_not_found)?;
        let fail = || webhook_error("replaying a delivery", delivery_not_found);
        let mut w = self.ops.begin(&actor).await.map_err(fail())?;
        let attempt = w.replay_delivery(id).await.map_err(fail())?;
        w.commit().await.map_err(fail())?;
        Ok(delivery_view(&attempt))
    }

    async fn resend_event(&self, me: &Me, event_id: &str) -> Result<Vec<DeliveryView>, ConsoleError> {
        let actor = self.manager(me, "resend events")?;
        let id = parse_id(event_id, event_not_found)?;
        let fail = || webhook_error("resending an event", event_not_found);
        let mut w = self.ops.begin(&actor).await.map_err(fail())?;
        let attempts = w.replay_event(id, &Map::new()).await.map_err(fail())?;
        w.commit().await.map_err(fail())?;
        Ok(attempts.iter().map(delivery_view).collect())
    }
}
