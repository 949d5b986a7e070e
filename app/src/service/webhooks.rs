//! Webhook subscriptions and their delivery register.

use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::{Me, Result};

/// A webhook subscription as the console shows it (the secret is never part of it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WebhookView {
    pub id: String,
    pub url: String,
    /// Event types, or `["*"]` for all.
    pub events: Vec<String>,
    pub description: Option<String>,
    /// `enabled` or `disabled`.
    pub status: String,
    /// Why Gable disabled it itself (a `410 Gone`, or days of failures), when it did.
    pub disabled_reason: Option<String>,
    pub failing_since: Option<String>,
    pub created_at: String,
}

/// A subscription just created or rotated: the only time its signing secret is shown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WebhookWithSecret {
    pub webhook: WebhookView,
    pub secret: String,
}

/// What a person fills in to create or edit a subscription.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WebhookForm {
    pub url: String,
    /// Event types, or `["*"]` for all.
    pub events: Vec<String>,
    pub description: String,
}

/// Filters of a subscription's delivery register (`None`: any).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeliveryFilter {
    pub status: Option<String>,
    pub event_type: Option<String>,
    pub trigger: Option<String>,
}

/// One attempt in the delivery register.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeliveryView {
    pub id: String,
    pub webhook_id: String,
    /// `None` for a test send.
    pub event_id: Option<String>,
    pub event_type: String,
    pub event_created_at: String,
    pub url: String,
    pub attempt: i64,
    /// `event`, `retry`, `replay`, `recovery` or `test`.
    pub trigger: String,
    /// `pending`, `succeeded`, `retrying` or `failed`.
    pub status: String,
    pub response_status: Option<i64>,
    pub latency_ms: Option<i64>,
    pub error: Option<String>,
    pub next_attempt_at: Option<String>,
    pub created_at: String,
}

impl DeliveryView {
    /// The attempt's page in the console.
    pub fn href(&self) -> String {
        format!("/console/webhooks/{}/deliveries/{}", self.webhook_id, self.id)
    }
}

/// One attempt with what was sent and received.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeliveryDetail {
    pub delivery: DeliveryView,
    pub request_headers: Vec<(String, String)>,
    /// The body sent (the event, or the test event), pretty-printed, when Gable still has it.
    pub request_body: Option<String>,
    /// Why the body is not shown, when it is not.
    pub request_body_note: Option<String>,
    pub response_headers: Vec<(String, String)>,
    pub response_excerpt: Option<String>,
    /// Why the receiver's answer is not shown, when it is kept from this user (it may echo
    /// a record their role cannot read).
    pub response_note: Option<String>,
}

/// Webhook subscriptions and their delivery register (`server/src/console/webhooks.rs`).
#[cfg(feature = "ssr")]
#[async_trait::async_trait]
pub trait Webhooks: Send + Sync + 'static {
    /// The event types a subscription can take (the catalogue's), in their documented order.
    fn webhook_event_types(&self) -> Vec<String>;
    /// The subscriptions of the console's environment, newest first.
    async fn webhooks(&self, me: &Me) -> Result<Vec<WebhookView>>;
    async fn webhook(&self, me: &Me, id: &str) -> Result<WebhookView>;
    async fn create_webhook(&self, me: &Me, form: WebhookForm) -> Result<WebhookWithSecret>;
    async fn update_webhook(&self, me: &Me, id: &str, form: WebhookForm) -> Result<WebhookView>;
    async fn set_webhook_enabled(&self, me: &Me, id: &str, enabled: bool) -> Result<WebhookView>;
    /// A new secret; the old one keeps signing beside it for 24 hours.
    async fn rotate_webhook_secret(&self, me: &Me, id: &str) -> Result<WebhookWithSecret>;
    async fn delete_webhook(&self, me: &Me, id: &str) -> Result<()>;
    /// Queues a sample event of `event_type`, marked `"test": true`; returns its attempt.
    async fn send_test_webhook(&self, me: &Me, id: &str, event_type: &str) -> Result<DeliveryView>;
    /// The latest attempts to deliver to a subscription (at most 50), newest first.
    async fn webhook_deliveries(&self, me: &Me, webhook_id: &str, filter: DeliveryFilter) -> Result<Vec<DeliveryView>>;
    async fn webhook_delivery(&self, me: &Me, id: &str) -> Result<DeliveryDetail>;
    /// Sends the attempt's event again, as a new attempt.
    async fn replay_webhook_delivery(&self, me: &Me, id: &str) -> Result<DeliveryView>;
    /// Sends an event again to every enabled subscription that takes it, a new attempt
    /// each; returns them (none when no subscription takes it now).
    async fn resend_event(&self, me: &Me, event_id: &str) -> Result<Vec<DeliveryView>>;
}
