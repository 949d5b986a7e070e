//! Webhook subscriptions and their delivery register (`docs/api.md`, "Webhooks").
//!
//! A subscription takes event types that exist (or `*`), at a URL the SSRF guard allows
//! (checked here when set, and again before every attempt by the worker). Its signing
//! secret is generated here, shown by the create and `rotate_secret` responses only, and
//! kept sealed under the master key, bound to the subscription. Replays, recoveries and
//! test sends write new pending attempts, which the delivery worker makes like any other.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value as Json};
use uuid::Uuid;

use super::{col, new_value, Behaviour, NewRecord};
use crate::domain::events::{self, event_type};
use crate::domain::record::Record;
use crate::domain::registry::{Collection, Ty, WriteOp};
use crate::domain::scopes::Access;
use crate::domain::validate::Changes;
use crate::domain::value::Val;
use crate::domain::webhooks;
use crate::error::{Error, Result};
use crate::ops::Work;
use crate::store::deliveries::{self, secrets, NewAttempt, Trigger};
use crate::store::records;

pub(in crate::ops) struct Webhooks;

fn names(v: &Val) -> Vec<String> {
    match v {
        Val::Json(j) => j.as_array().into_iter().flatten().filter_map(|s| s.as_str().map(String::from)).collect(),
        _ => vec![],
    }
}

impl Work {
    /// Sending events somewhere reads them (`Actor::require_event_reads`).
    fn require_event_reads(&self, names: &[String]) -> Result<()> {
        self.actor().require_event_reads(names)
    }

    /// Refuses a URL the SSRF guard does not allow, naming why.
    async fn check_url(&self, url: &str) -> Result<()> {
        let parsed = url::Url::parse(url).map_err(|_| Error::validation("url", "is not a valid URL"))?;
        self.guard
            .check_subscription_url(&parsed)
            .await
            .map_err(|r| Error::validation("url", format!("cannot receive webhooks: {}", r.reason())))
    }

    /// A new secret, sealed to this subscription.
    fn seal_secret(&self, webhook: Uuid) -> (String, String) {
        let secret = webhooks::generate_secret();
        let sealed = self.key.seal(&secret, &webhooks::secret_context(self.scope.tenant, self.scope.livemode, webhook));
        (secret, sealed)
    }
}

#[async_trait]
impl Behaviour for Webhooks {
    async fn before_create(&self, w: &mut Work, c: &'static Collection, new: &mut NewRecord) -> Result<()> {
        let events = names(&new_value(new, "events"));
        webhooks::check_events(&events)?;
        w.require_event_reads(&events)?;
        if let Some(url) = new_value(new, "url").as_str() {
            w.check_url(url).await?;
        }
        let secret = c.secret.ok_or_else(|| Error::internal(anyhow::anyhow!("webhooks declare no secret")))?;
        let (plain, sealed) = w.seal_secret(new.id);
        new.hidden.push((secret.column, sealed));
        new.secret = Some(plain);
        Ok(())
    }

    async fn before_update(&self, w: &mut Work, _c: &'static Collection, current: &Record, ch: &mut Changes) -> Result<()> {
        if let Some(v) = ch.values.get("events") {
            webhooks::check_events(&names(v))?;
        }
        // New events, or the old ones to a new address: either way, who changes it reads them.
        if ch.values.contains_key("events") || ch.values.contains_key("url") {
            let events = names(ch.values.get("events").unwrap_or(current.get("events")));
            w.require_event_reads(&events)?;
        }
        if let Some(url) = ch.values.get("url").and_then(Val::as_str) {
            w.check_url(url).await?;
        }
        // Re-enabled by its owner: Gable's reason for disabling it, and the failing
        // streak that led there, are over.
        if ch.values.get("status").and_then(Val::as_str) == Some("enabled") && current.status() != "enabled" {
            ch.values.insert("disabled_reason", Val::Null);
            ch.values.insert("failing_since", Val::Null);
        }
        Ok(())
    }
}

/// The sample record of a test event: every field with a plausible value of its type.
fn sample_object(c: &'static Collection, now: DateTime<Utc>, livemode: bool) -> Json {
    let mut values = std::collections::HashMap::new();
    for f in c.fields {
        let v = match f.ty {
            Ty::Enum(options) => Val::Str(options[0].to_string()),
            Ty::Str { .. } | Ty::Text => Val::Str(format!("Sample {}", f.name.replace('_', " "))),
            Ty::Email => Val::Str("resident@example.com".into()),
            Ty::Url => Val::Str("https://example.com/".into()),
            Ty::Origin => Val::Str("https://example.com".into()),
            Ty::Int { min, max } => Val::Int(1.clamp(min, max)),
            Ty::Num { min, max } => Val::Num(1.0_f64.clamp(min, max)),
            Ty::Money => Val::Money(125_000),
            Ty::Currency => Val::Str("USD".into()),
            Ty::Bool => Val::Bool(false),
            Ty::Date => Val::Date(now.date_naive()),
            Ty::DateTime => Val::DateTime(now),
            Ty::Ref(_) | Ty::Uuid => Val::Uuid(Uuid::now_v7()),
            Ty::StrList { .. } | Ty::RefList(_) => Val::Json(json!([])),
            Ty::Json(_) => Val::Null,
            Ty::Metadata => Val::Json(json!({})),
        };
        values.insert(f.name, v);
    }
    let rec = Record { id: Uuid::now_v7(), livemode, created_at: now, updated_at: now, values, metadata: c.metadata.then(|| json!({})) };
    rec.to_json(c, None)
}

impl Work {
    /// The webhook, as the caller may see it, locked.
    async fn webhook(&mut self, id: Uuid) -> Result<Record> {
        let scope = self.scope.clone();
        records::fetch(&mut self.tx, &scope, col("webhooks"), id, true).await
    }

    /// `POST /v1/webhooks/{id}/rotate_secret`: a new secret; the old one signs beside it
    /// for `ROTATION_OVERLAP`. Returns the webhook and the new secret (shown this once).
    pub async fn rotate_webhook_secret(&mut self, id: Uuid) -> Result<(Record, String)> {
        self.allow(col("webhooks"), Some(WriteOp::Update))?;
        let hook = self.webhook(id).await?;
        let (tenant, livemode, now) = (self.scope.tenant, self.scope.livemode, self.now);
        let previous = secrets::sealed_secret(&mut self.tx, tenant, livemode, id).await?;
        let (plain, sealed) = self.seal_secret(id);
        secrets::rotate_secret(&mut self.tx, tenant, livemode, id, sealed, (previous, now + webhooks::ROTATION_OVERLAP), now).await?;
        let scope = self.scope.clone();
        let hook = records::fetch(&mut self.tx, &scope, col("webhooks"), hook.id, false).await?;
        Ok((hook, plain))
    }

    /// `POST /v1/webhooks/{id}/test {"type"}`: a sample event of that type, marked
    /// `"test": true`, delivered through the register like any other.
    pub async fn send_test_event(&mut self, id: Uuid, body: &Map<String, Json>) -> Result<Record> {
        self.allow(col("webhooks"), Some(WriteOp::Update))?;
        if let Some(k) = body.keys().find(|k| *k != "type") {
            return Err(Error::validation(k.as_str(), "is not a parameter of this action; give `type`"));
        }
        let kind = body.get("type").and_then(Json::as_str).ok_or_else(|| Error::validation("type", "is required: an event type"))?;
        let contract = event_type(kind).ok_or_else(|| Error::validation("type", format!("`{kind}` is not an event type")))?;
        self.require_event_reads(&[kind.to_string()])?;
        let hook = self.webhook(id).await?;
        if hook.status() != "enabled" {
            return Err(Error::Conflict("the subscription is disabled; enable it to send to it".into()));
        }
        let (now, livemode) = (self.now, self.scope.livemode);
        let object = sample_object(col(contract.collection), now, livemode);
        let event_id = Uuid::now_v7();
        let payload = json!({
            "id": event_id,
            "object": "event",
            "type": kind,
            "created_at": crate::domain::value::format_datetime(&now),
            "livemode": livemode,
            "api_version": events::API_VERSION,
            "data": events::data(object, Map::new(), &[]),
            "test": true,
        });
        let attempt = NewAttempt {
            tenant: self.scope.tenant,
            livemode,
            webhook_id: id,
            url: hook.get("url").as_str().unwrap_or_default().to_string(),
            event_id: None,
            event_type: kind.to_string(),
            event_created_at: now,
            attempt: 1,
            trigger: Trigger::Test,
            due: now,
            payload: Some(payload),
        };
        self.enqueue(attempt).await
    }

    /// Writes a pending attempt, wakes this process's worker at commit, and returns the
    /// attempt as the register shows it.
    async fn enqueue(&mut self, attempt: NewAttempt) -> Result<Record> {
        let now = self.now;
        let id = deliveries::insert(&mut self.tx, attempt, now).await?;
        self.wake.push(self.signals.deliveries_due.clone());
        let system = self.system.clone();
        records::fetch(&mut self.tx, &system, col("webhook-deliveries"), id, false).await
    }

    /// `POST /v1/webhook-deliveries/{id}/replay`: the same event (or test body) to the
    /// same subscription, as a new attempt with a fresh timestamp and signature.
    pub async fn replay_delivery(&mut self, id: Uuid) -> Result<Record> {
        self.allow(col("webhooks"), Some(WriteOp::Update))?;
        let scope = self.scope.clone();
        let original = records::fetch(&mut self.tx, &scope, col("webhook-deliveries"), id, false).await?;
        self.require_event_reads(&[original.get("event_type").as_str().unwrap_or_default().to_string()])?;
        let webhook = original.get("webhook_id").as_uuid().ok_or_else(|| Error::internal(anyhow::anyhow!("delivery without webhook")))?;
        let hook = self.webhook(webhook).await?;
        let (tenant, livemode) = (self.scope.tenant, self.scope.livemode);
        let event_id = original.get("event_id").as_uuid();
        let (payload, attempt) = match event_id {
            Some(e) => (None, deliveries::last_attempt(&mut self.tx, tenant, livemode, webhook, e).await? + 1),
            None => (
                deliveries::payload_of(&mut self.tx, tenant, livemode, id).await?,
                match original.get("attempt") {
                    Val::Int(n) => n + 1,
                    _ => 2,
                },
            ),
        };
        let attempt = NewAttempt {
            tenant,
            livemode,
            webhook_id: webhook,
            url: hook.get("url").as_str().unwrap_or_default().to_string(),
            event_id,
            event_type: original.get("event_type").as_str().unwrap_or_default().to_string(),
            event_created_at: match original.get("event_created_at") {
                Val::DateTime(t) => *t,
                _ => original.created_at,
            },
            attempt,
            trigger: Trigger::Replay,
            due: self.now,
            payload,
        };
        self.enqueue(attempt).await
    }

    /// `POST /v1/events/{id}/replay {"webhook_id"?}`: the event again, to one subscription
    /// (whatever it takes) or to every enabled one that takes it.
    pub async fn replay_event(&mut self, id: Uuid, body: &Map<String, Json>) -> Result<Vec<Record>> {
        self.allow(col("webhooks"), Some(WriteOp::Update))?;
        if let Some(k) = body.keys().find(|k| *k != "webhook_id") {
            return Err(Error::validation(k.as_str(), "is not a parameter of this action; give `webhook_id` or nothing"));
        }
        self.actor().require(col("events"), Access::Read)?;
        let scope = self.scope.clone();
        let event = records::fetch(&mut self.tx, &scope, col("events"), id, false).await?;
        let kind = event.get("type").as_str().unwrap_or_default().to_string();
        self.require_event_reads(std::slice::from_ref(&kind))?;
        let targets: Vec<(Uuid, String)> = match body.get("webhook_id") {
            Some(raw) => {
                let hook_id =
                    raw.as_str().and_then(|s| Uuid::parse_str(s).ok()).ok_or_else(|| Error::validation("webhook_id", "must be a uuid"))?;
                let hook = self.webhook(hook_id).await.map_err(|e| match e {
                    Error::NotFound { .. } => Error::missing_reference("webhook_id", "webhook", hook_id),
                    e => e,
                })?;
                vec![(hook.id, hook.get("url").as_str().unwrap_or_default().to_string())]
            }
            None => {
                let (tenant, livemode) = (self.scope.tenant, self.scope.livemode);
                deliveries::enabled_subscriptions(&mut self.tx, tenant, livemode)
                    .await?
                    .into_iter()
                    .filter(|s| webhooks::takes(&s.events, &kind))
                    .map(|s| (s.id, s.url))
                    .collect()
            }
        };
        let mut out = Vec::with_capacity(targets.len());
        for (webhook, url) in targets {
            let (tenant, livemode) = (self.scope.tenant, self.scope.livemode);
            let attempt = deliveries::last_attempt(&mut self.tx, tenant, livemode, webhook, id).await? + 1;
            let a = NewAttempt {
                tenant,
                livemode,
                webhook_id: webhook,
                url,
                event_id: Some(id),
                event_type: kind.clone(),
                event_created_at: event.created_at,
                attempt,
                trigger: Trigger::Replay,
                due: self.now,
                payload: None,
            };
            out.push(self.enqueue(a).await?);
        }
        Ok(out)
    }

    /// `POST /v1/webhooks/{id}/recover {"since"}`: every event since then that the
    /// subscription takes and has not received, now: retries still waiting fall due at
    /// once, and events that failed for good (or were never attempted) get a new
    /// attempt. Returns how many attempts are queued.
    pub async fn recover_webhook(&mut self, id: Uuid, body: &Map<String, Json>) -> Result<usize> {
        self.allow(col("webhooks"), Some(WriteOp::Update))?;
        if let Some(k) = body.keys().find(|k| *k != "since") {
            return Err(Error::validation(k.as_str(), "is not a parameter of this action; give `since`"));
        }
        let since = body
            .get("since")
            .and_then(Json::as_str)
            .and_then(crate::domain::value::parse_datetime)
            .ok_or_else(|| Error::validation("since", "is required: an RFC 3339 date-time"))?;
        if since > self.now {
            return Err(Error::validation("since", "must not be in the future"));
        }
        let hook = self.webhook(id).await?;
        let takes = names(hook.get("events"));
        self.require_event_reads(&takes)?;
        let url = hook.get("url").as_str().unwrap_or_default().to_string();
        let (tenant, livemode) = (self.scope.tenant, self.scope.livemode);
        let now = self.now;
        let mut n = deliveries::expedite(&mut self.tx, tenant, livemode, id, since, now).await? as usize;
        let missed = deliveries::undelivered_events(&mut self.tx, tenant, livemode, id, since).await?;
        for (event, kind, at) in missed.into_iter().filter(|(_, kind, _)| webhooks::takes(&takes, kind)) {
            let attempt = deliveries::last_attempt(&mut self.tx, tenant, livemode, id, event).await? + 1;
            let a = NewAttempt {
                tenant,
                livemode,
                webhook_id: id,
                url: url.clone(),
                event_id: Some(event),
                event_type: kind,
                event_created_at: at,
                attempt,
                trigger: Trigger::Recovery,
                due: self.now,
                payload: None,
            };
            deliveries::insert(&mut self.tx, a, self.now).await?;
            n += 1;
        }
        if n > 0 {
            self.wake.push(self.signals.deliveries_due.clone());
        }
        Ok(n)
    }
}
