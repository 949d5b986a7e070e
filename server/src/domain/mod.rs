//! Plain-Rust domain: the collection registry, validation, lists and cursors, the shape
//! of an answer (fieldsets, expansions) and a record's rendering, scopes, whose records an
//! act reaches, and the ledger rules. Nothing here knows HTTP or SQL.

pub mod answer;
pub mod collections;
pub mod cursor;
pub mod events;
pub mod expand;
pub mod flows;
pub mod import;
pub mod ledger;
pub mod list;
pub mod oauth;
pub mod reach;
pub mod record;
pub mod registry;
pub mod rent;
pub mod reports;
pub mod request_log;
pub mod scopes;
pub mod validate;
pub mod value;
pub mod view;
pub mod webhooks;
pub mod workflow;
