//! Webhook subscriptions and their delivery register.

use leptos::prelude::*;
use leptos::server_fn::ServerFnError;

#[cfg(feature = "ssr")]
use super::ssr;

use crate::service::{DeliveryDetail, DeliveryView, WebhookView, WebhookWithSecret};

/// The event types a subscription can take, for the events picker and the test sender.
#[server(endpoint = "webhook_event_types")]
pub async fn webhook_event_types() -> Result<Vec<String>, ServerFnError> {
    let (console, _) = ssr::signed_in().await?;
    Ok(console.webhooks.webhook_event_types())
}

#[server(endpoint = "list_webhooks")]
pub async fn list_webhooks() -> Result<Vec<WebhookView>, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.webhooks.webhooks(&me).await.map_err(ssr::error)
}

#[server(endpoint = "get_webhook")]
pub async fn get_webhook(id: String) -> Result<WebhookView, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.webhooks.webhook(&me, &id).await.map_err(ssr::error)
}

/// The events of a webhook form: `which` is `all` (every event type, `*`) or `some`, with
/// the ticked `events[<type>]` boxes.
#[cfg(feature = "ssr")]
fn webhook_form(
    url: String,
    which: &str,
    events: std::collections::BTreeMap<String, String>,
    description: String,
) -> crate::service::WebhookForm {
    let events = if which == "all" { vec!["*".to_string()] } else { events.into_keys().collect() };
    crate::service::WebhookForm { url, events, description }
}

#[server(endpoint = "create_webhook")]
pub async fn create_webhook(
    csrf: String,
    url: String,
    which: String,
    #[server(default)] events: std::collections::BTreeMap<String, String>,
    #[server(default)] description: String,
) -> Result<WebhookWithSecret, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.webhooks.create_webhook(&me, webhook_form(url, &which, events, description)).await.map_err(ssr::error)
}

#[server(endpoint = "update_webhook")]
pub async fn update_webhook(
    csrf: String,
    id: String,
    url: String,
    which: String,
    #[server(default)] events: std::collections::BTreeMap<String, String>,
    #[server(default)] description: String,
) -> Result<WebhookView, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.webhooks.update_webhook(&me, &id, webhook_form(url, &which, events, description)).await.map_err(ssr::error)
}

#[server(endpoint = "set_webhook_enabled")]
pub async fn set_webhook_enabled(csrf: String, id: String, enabled: bool) -> Result<WebhookView, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.webhooks.set_webhook_enabled(&me, &id, enabled).await.map_err(ssr::error)
}

#[server(endpoint = "rotate_webhook_secret")]
pub async fn rotate_webhook_secret(csrf: String, id: String) -> Result<WebhookWithSecret, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.webhooks.rotate_webhook_secret(&me, &id).await.map_err(ssr::error)
}

#[server(endpoint = "delete_webhook")]
pub async fn delete_webhook(csrf: String, id: String) -> Result<(), ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.webhooks.delete_webhook(&me, &id).await.map_err(ssr::error)?;
    leptos_axum::redirect("/console/webhooks");
    Ok(())
}

#[server(endpoint = "send_test_webhook")]
pub async fn send_test_webhook(csrf: String, id: String, event_type: String) -> Result<DeliveryView, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.webhooks.send_test_webhook(&me, &id, &event_type).await.map_err(ssr::error)
}

/// A subscription's register; empty filters mean any.
#[server(endpoint = "list_webhook_deliveries")]
pub async fn list_webhook_deliveries(
    webhook_id: String,
    #[server(default)] status: String,
    #[server(default)] event_type: String,
    #[server(default)] trigger: String,
) -> Result<Vec<DeliveryView>, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    let some = |v: String| (!v.trim().is_empty()).then_some(v);
    let filter = crate::service::DeliveryFilter { status: some(status), event_type: some(event_type), trigger: some(trigger) };
    console.webhooks.webhook_deliveries(&me, &webhook_id, filter).await.map_err(ssr::error)
}

#[server(endpoint = "get_webhook_delivery")]
pub async fn get_webhook_delivery(id: String) -> Result<DeliveryDetail, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.webhooks.webhook_delivery(&me, &id).await.map_err(ssr::error)
}

#[server(endpoint = "replay_webhook_delivery")]
pub async fn replay_webhook_delivery(csrf: String, id: String) -> Result<DeliveryView, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.webhooks.replay_webhook_delivery(&me, &id).await.map_err(ssr::error)
}

/// Sends an event again to every enabled subscription that takes it.
#[server(endpoint = "resend_event")]
pub async fn resend_event(csrf: String, id: String) -> Result<Vec<DeliveryView>, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.webhooks.resend_event(&me, &id).await.map_err(ssr::error)
}
