//! Finding a flow token by its secret: across tenants, as Gable's own bookkeeping (like an
//! API key's lookup), since the token is what tells the tenant.

use chrono::{DateTime, Utc};
use sea_query::{Alias, Expr};
use uuid::Uuid;

use super::records::{self, ScanLock};
use super::{Intent, Store};
use crate::domain::collections;
use crate::domain::record::Record;
use crate::error::Result;

/// A flow token as stored, with its tenant and the time of its environment.
pub struct FoundToken {
    pub tenant: Uuid,
    pub record: Record,
    /// Now in the token's environment: real time, or the sandbox's clock (tokens are
    /// stamped with it, so advancing the sandbox's clock expires them).
    pub now: DateTime<Utc>,
}

impl Store {
    /// The flow token whose secret this is, if any (expired ones included: the caller
    /// tells an expired token from an unknown one).
    pub async fn find_flow_token(&self, secret: &str, now: DateTime<Utc>) -> Result<Option<FoundToken>> {
        let c = collections::named("flow-tokens")?;
        let column = c.secret.map(|s| s.column).unwrap_or("token_hash");
        let hash = super::keys::hash_secret(secret);
        self.in_system(Intent::Read, async |tx| {
            let found = records::scan(tx, c, vec![Expr::col(Alias::new(column)).eq(hash)], 1, ScanLock::None).await?;
            let Some((tenant, record)) = found.into_iter().next() else { return Ok(None) };
            let ahead = if record.livemode { chrono::Duration::zero() } else { super::sandbox::offset(tx, tenant).await? };
            Ok(Some(FoundToken { tenant, record, now: now + ahead }))
        })
        .await
    }
}
