//! Flow tokens for the embeddable flows (DESIGN.md §8): random, shown once by the create
//! response, kept only as a hash, expiring after 30 minutes.

use async_trait::async_trait;
use chrono::Duration;
use rand::distributions::Alphanumeric;
use rand::rngs::OsRng;
use rand::Rng;

use super::{Behaviour, NewRecord};
use crate::domain::registry::Collection;
use crate::domain::value::Val;
use crate::error::{Error, Result};
use crate::ops::Work;

/// The longest a flow token lives.
pub const LIFETIME_MINUTES: i64 = 30;

pub(super) struct FlowTokens;

#[async_trait]
impl Behaviour for FlowTokens {
    async fn before_create(&self, w: &mut Work, c: &'static Collection, new: &mut NewRecord) -> Result<()> {
        let body: String = OsRng.sample_iter(&Alphanumeric).take(43).map(char::from).collect();
        let token = format!("gft_{body}");
        new.changes.values.insert("expires_at", Val::DateTime(w.now + Duration::minutes(LIFETIME_MINUTES)));
        // The description declares where the hash goes (and that responses show the token once).
        let secret = c.secret.ok_or_else(|| Error::internal(anyhow::anyhow!("flow-tokens declares no secret")))?;
        new.hidden.push((secret.column, crate::store::keys::hash_secret(&token).into()));
        new.secret = Some(token);
        Ok(())
    }
}
