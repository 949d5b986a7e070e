//! Flow tokens for the embeddable flows (`docs/embed.md`): random, shown once by the create
//! response, kept only as a hash, expiring after 30 minutes, and bound to one flow and
//! the one subject that flow serves (`domain::flows`). Minting needs the scopes the flow
//! exercises (`Flow::scopes`); a token is revoked by its `revoke` action, which the flow
//! API sees on the next request.

use async_trait::async_trait;
use chrono::Duration;

use super::{col, new_value, referenced, Behaviour, NewRecord};
use crate::domain::flows::{Flow, LIFETIME_MINUTES};
use crate::domain::registry::Collection;
use crate::domain::value::Val;
use crate::error::{Error, Result};
use crate::ops::Work;

pub(super) struct FlowTokens;

#[async_trait]
impl Behaviour for FlowTokens {
    fn create_answers(&self) -> &'static [u16] {
        // A subject in a state its flow cannot serve (an unpublished listing, a paid invoice).
        &[409]
    }

    async fn before_create(&self, w: &mut Work, c: &'static Collection, new: &mut NewRecord) -> Result<()> {
        let flow = new_value(new, "flow").as_str().and_then(Flow::parse).ok_or_else(|| Error::validation("flow", "is required"))?;
        // A token reads and writes what its flow does: only a creator who may do all of
        // that itself can hand it to a web page (checked before the subject is looked up).
        let wanted: Vec<String> = flow.scopes().iter().map(|s| s.to_string()).collect();
        w.actor().require_all(&wanted, &format!("a `{}` flow token", flow.name()))?;
        // The subject is looked up within the creator's property constraint, so a key
        // limited to some properties cannot mint a token for another's records (404).
        check_subject(w, flow, new).await?;
        let token = crate::store::keys::random_secret(crate::domain::flows::TOKEN_PREFIX);
        new.changes.values.insert("expires_at", Val::DateTime(w.now + Duration::minutes(LIFETIME_MINUTES)));
        // The description declares where the hash goes (and that responses show the token once).
        let secret = c.secret.ok_or_else(|| Error::internal(anyhow::anyhow!("flow-tokens declares no secret")))?;
        new.hidden.push((secret.column, crate::store::keys::hash_secret(&token)));
        new.secret = Some(token);
        Ok(())
    }
}

/// Exactly the subject the flow serves, in a state it can serve.
async fn check_subject(w: &mut Work, flow: Flow, new: &NewRecord) -> Result<()> {
    let allowed = flow.subjects();
    for field in crate::domain::flows::SUBJECT_FIELDS {
        if !allowed.contains(field) && !new_value(new, field).is_null() {
            return Err(Error::validation(
                *field,
                format!("is not a subject of the `{}` flow, which takes {}", flow.name(), words(allowed)),
            ));
        }
    }
    let given: Vec<&str> = allowed.iter().copied().filter(|f| !new_value(new, f).is_null()).collect();
    let field = match given.as_slice() {
        [one] => *one,
        [] => return Err(Error::validation(allowed[0], format!("is required: the `{}` flow needs {}", flow.name(), words(allowed)))),
        _ => return Err(Error::validation(given[1], format!("give one of {}, not both", words(allowed)))),
    };
    let id = new_value(new, field).as_uuid().ok_or_else(|| Error::validation(field, "must be an id"))?;
    let target = col(match field {
        "listing_id" => "listings",
        "unit_id" => "units",
        "invoice_id" => "invoices",
        _ => "leases",
    });
    let rec = referenced(w, field, target, id).await?;
    let refuse = |why: String| Err(Error::Conflict(format!("{field}: {why}")));
    match flow {
        Flow::RentalApplication | Flow::Booking if field == "listing_id" && rec.status() != "published" => {
            refuse(format!("the listing is {}; only a published listing takes applications and bookings", rec.status()))
        }
        Flow::Booking if rec.get("nightly_rate").is_null() => {
            refuse(format!("the {} has no `nightly_rate`; set one to take bookings", target.object))
        }
        Flow::Payment if rec.status() != "open" => refuse(format!("the invoice is {}; only an open invoice can be paid", rec.status())),
        Flow::TenantPortal if !crate::domain::flows::PORTAL_LEASE_STATES.contains(&rec.status()) => refuse(format!(
            "the lease is {}; the portal serves a lease that is {}",
            rec.status(),
            crate::domain::flows::PORTAL_LEASE_STATES.join(", ")
        )),
        _ => Ok(()),
    }
}

fn words(fields: &[&str]) -> String {
    fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(" or ")
}
