//! Applications: an approved application's `convert` makes its draft lease, with the
//! unit, rent, deposit and currency taken from the application and its listing.

use async_trait::async_trait;
use serde_json::{Map, Value as Json};

use super::{col, related, Behaviour, Step};
use crate::domain::record::Record;
use crate::domain::validate::{self, Changes};
use crate::domain::value::{to_json, Val};
use crate::error::{Error, Result};
use crate::ops::Work;
use crate::store::records;

/// Fields of the lease an application's `convert` makes that Gable sets itself.
pub const SET_BY_CONVERT: &[&str] = &["unit_id", "application_id"];

pub(super) struct Applications;

#[async_trait]
impl Behaviour for Applications {
    async fn prepare(&self, w: &mut Work, s: &Step<'_>, ch: &mut Changes) -> Result<()> {
        if s.a.name == "convert" {
            let lease = convert(w, s.current, s.body).await?;
            ch.values.insert("lease_id", Val::Uuid(lease.id));
        }
        Ok(())
    }
}

/// Makes the draft lease of an approved application from the `convert` body.
async fn convert(w: &mut Work, app: &Record, body: &Map<String, Json>) -> Result<Record> {
    let leases = col("leases");
    if let Some(f) = SET_BY_CONVERT.iter().find(|f| body.contains_key(**f)) {
        return Err(Error::validation(*f, "is set by Gable from the application"));
    }
    let listing = match app.get("listing_id").as_uuid() {
        Some(id) => Some(related(w, col("listings"), id).await?),
        None => None,
    };
    let unit = app.get("unit_id").as_uuid().or_else(|| listing.as_ref().and_then(|l| l.get("unit_id").as_uuid()));
    let mut lease = body.clone();
    lease.insert("unit_id".into(), unit.map(|u| Json::String(u.to_string())).unwrap_or(Json::Null));
    lease.insert("application_id".into(), Json::String(app.id.to_string()));
    if let Some(l) = &listing {
        for f in ["rent", "deposit", "currency"] {
            if !lease.contains_key(f) && !l.get(f).is_null() {
                lease.insert(f.into(), to_json(l.get(f), l.currency()));
            }
        }
    }
    let ch = validate::create(leases, &Json::Object(lease), w.scope.livemode)?;
    let scope = w.scope.clone();
    records::insert(&mut w.tx, &scope, leases, ch, vec![], w.now).await
}
