//! What the embeddable flows read and write (`docs/embed.md`, "The flow API"). A flow
//! token's grant names one flow and one subject; everything here starts from the grant,
//! never from ids the page sends (but the invoice a tenant portal pays, which must be its
//! lease's). Writes run through [`Work`](super::Work) with the grant's narrow actor, so the same
//! validation, events, postings and webhooks follow as on the API.
//!
//! `read` builds the session of `GET /v1/flow`; `write` makes the four writes of
//! `POST /v1/flow/…`. What both need of a record (its view, its references, a stay's
//! rate) is here.

mod read;
mod write;

pub use read::session;
pub use write::{begin, write};

use serde_json::{json, Value as Json};
use uuid::Uuid;

use crate::domain::reach::Scope;
use crate::domain::record::Record;
use crate::domain::registry::{Collection, Ty};
use crate::domain::value::{money_fixed, Val};
use crate::error::{Error, Result};

/// The whole tenant environment of a grant: the flow reads its subject's records there.
fn system(tenant: Uuid, livemode: bool) -> Scope {
    Scope { tenant, livemode, properties: None }
}

/// A record's chosen fields as the flow reads them: money as fixed decimal strings.
fn view(rec: &Record, c: &Collection, fields: &[&str]) -> Json {
    let mut v = rec.to_json(c, Some(fields));
    for f in c.fields.iter().filter(|f| f.ty == Ty::Money && fields.contains(&f.name)) {
        v[f.name] = match rec.get(f.name) {
            Val::Money(m) => json!(money_fixed(*m, rec.currency())),
            _ => Json::Null,
        };
    }
    v
}

fn ref_of(rec: &Record, field: &str) -> Result<Uuid> {
    rec.get(field).as_uuid().ok_or_else(|| Error::internal(anyhow::anyhow!("record {} has no {field}", rec.id)))
}

/// The nightly rate of a stay and its currency: the listing's, or the unit's.
fn nightly_rate(listing: Option<&Record>, unit: &Record) -> Result<(i64, String)> {
    let source = listing.filter(|l| !l.get("nightly_rate").is_null()).unwrap_or(unit);
    match (source.get("nightly_rate"), source.currency()) {
        (Val::Money(rate), Some(cur)) => Ok((*rate, cur.to_string())),
        _ => Err(Error::Conflict("this stay has no nightly rate any more; the property must set one to take bookings".into())),
    }
}
