//! Invoices: what is owed is in the lease's or booking's currency; the amount is fixed
//! once issued; an invoice with live payments cannot be voided. Payments settle them
//! (see `payments`).

use async_trait::async_trait;

use super::{blocked, col, in_parent_currency, Behaviour, NewRecord, Step};
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::validate::Changes;
use crate::domain::value::Val;
use crate::error::{Error, Result};
use crate::ops::Work;
use crate::store::records;

pub(super) struct Invoices;

#[async_trait]
impl Behaviour for Invoices {
    async fn before_create(&self, w: &mut Work, _c: &'static Collection, new: &mut NewRecord) -> Result<()> {
        in_parent_currency(w, new).await
    }

    async fn before_update(&self, _w: &mut Work, _c: &'static Collection, current: &Record, ch: &mut Changes) -> Result<()> {
        if ch.values.contains_key("amount_due") && current.status() != "draft" {
            return Err(Error::validation(
                "amount_due",
                format!("can change only while the invoice is a draft; it is {}", current.status()),
            ));
        }
        Ok(())
    }

    async fn prepare(&self, w: &mut Work, s: &Step<'_>, _ch: &mut Changes) -> Result<()> {
        if s.a.name == "void" {
            let system = w.system.clone();
            let payments = records::find(&mut w.tx, &system, col("payments"), &[("invoice_id", Val::Uuid(s.current.id))]).await?;
            if let Some(p) = payments.iter().find(|p| matches!(p.status(), "pending" | "succeeded")) {
                let why = format!("the invoice has a {} payment ({}); fail or reverse it before voiding the invoice", p.status(), p.id);
                return Err(blocked(s, why));
            }
        }
        Ok(())
    }
}
