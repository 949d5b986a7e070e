//! Payments: money received. A payment against an invoice takes the invoice's currency
//! and needs it open; succeeding posts cash against receivables and settles the
//! invoice; reversing undoes both. A payment with refunds cannot be reversed.
//!
//! In live mode a payment records money received outside Gable (cash, a cheque, a bank
//! transfer), and `succeed` is staff confirming it arrived. In the sandbox a payment is a
//! test payment (`createTestPayment`): its required `scenario` runs at once, in the
//! create's transaction, through the same actions: `succeeded` succeeds it, `failed`
//! fails it as a declined card, `reversed` succeeds and then reverses it. The field rules
//! for that are in `domain::collections`.

use async_trait::async_trait;
use serde_json::{json, Map};

use super::{blocked, changes, col, new_value, nonzero_amount, referenced, Behaviour, NewRecord, Step};
use crate::domain::ledger;
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::validate::Changes;
use crate::domain::value::Val;
use crate::domain::workflow::Action;
use crate::error::{Error, Result};
use crate::ops::{postings, Work};
use crate::store::records;

pub(super) struct Payments;

/// What the `failed` scenario answers: a declined card, as card processors say it.
const DECLINED: (&str, &str) = ("card_declined", "The card was declined (test scenario `failed`).");

#[async_trait]
impl Behaviour for Payments {
    async fn before_create(&self, w: &mut Work, _c: &'static Collection, new: &mut NewRecord) -> Result<()> {
        nonzero_amount(new)?;
        let lease_id = new_value(new, "lease_id").as_uuid();
        if let Some(lease_id) = lease_id {
            let lease = referenced(w, "lease_id", col("leases"), lease_id).await?;
            if lease.currency() != new_value(new, "currency").as_str() {
                return Err(Error::validation(
                    "currency",
                    format!("must be the lease's currency, {}", lease.currency().unwrap_or_default()),
                ));
            }
        }
        let Some(invoice_id) = new_value(new, "invoice_id").as_uuid() else { return Ok(()) };
        let invoice = referenced(w, "invoice_id", col("invoices"), invoice_id).await?;
        match (invoice.get("lease_id").as_uuid(), lease_id) {
            (Some(of_invoice), Some(given)) if of_invoice != given => {
                return Err(Error::validation("lease_id", "must be the lease of the invoice, or left out"));
            }
            (Some(of_invoice), None) => {
                new.changes.values.insert("lease_id", Val::Uuid(of_invoice));
            }
            _ => {}
        }
        if invoice.status() != "open" {
            return Err(Error::validation(
                "invoice_id",
                format!("the invoice is {}; only an open invoice takes payments", invoice.status()),
            ));
        }
        if invoice.currency() != new_value(new, "currency").as_str() {
            return Err(Error::validation(
                "currency",
                format!("must be the invoice's currency, {}", invoice.currency().unwrap_or_default()),
            ));
        }
        Ok(())
    }

    async fn settle(&self, w: &mut Work, c: &'static Collection, rec: &Record) -> Result<Option<Record>> {
        let Some(scenario) = rec.get("scenario").as_str().map(str::to_owned) else { return Ok(None) };
        let none = Map::new();
        // The payment was inserted by this unit of work: each action runs on it as written.
        let after = match scenario.as_str() {
            "succeeded" => w.act_named_on_own(c, "succeed", rec.clone(), &none).await?,
            "reversed" => {
                let succeeded = w.act_named_on_own(c, "succeed", rec.clone(), &none).await?;
                w.act_named_on_own(c, "reverse", succeeded, &none).await?
            }
            _ => {
                let declined =
                    Map::from_iter([("failure_code".to_string(), json!(DECLINED.0)), ("failure_message".to_string(), json!(DECLINED.1))]);
                w.act_named_on_own(c, "fail", rec.clone(), &declined).await?
            }
        };
        Ok(Some(after))
    }

    async fn prepare(&self, w: &mut Work, s: &Step<'_>, _ch: &mut Changes) -> Result<()> {
        if s.a.name == "reverse" {
            let system = w.system.clone();
            let refunds = records::find(&mut w.tx, &system, col("refunds"), &[("payment_id", Val::Uuid(s.current.id))]).await?;
            if refunds.iter().any(|r| r.status() != "failed") {
                return Err(blocked(s, "a payment with refunds cannot be reversed; its refunds already return money".into()));
            }
        }
        Ok(())
    }

    async fn follow(&self, w: &mut Work, c: &'static Collection, a: &Action, _before: &Record, after: &Record) -> Result<()> {
        let amount = after.money("amount");
        match a.name {
            "succeed" => {
                postings::post_for(w, c, after, ledger::payment(amount), w.now.date_naive(), "payment received").await?;
                settle_invoice(w, after, amount).await
            }
            "reverse" => {
                postings::reverse_posting_of(w, c, after, "payment reversed").await?;
                settle_invoice(w, after, -amount).await
            }
            _ => Ok(()),
        }
    }
}

/// A payment settles its invoice (a negative amount unsettles it, on reversal).
async fn settle_invoice(w: &mut Work, payment: &Record, amount: i64) -> Result<()> {
    let Some(invoice_id) = payment.get("invoice_id").as_uuid() else { return Ok(()) };
    let invoices = col("invoices");
    let system = w.system.clone();
    records::modify(&mut w.tx, &system, invoices, invoice_id, w.now, |inv| {
        let paid = inv.money("amount_paid") + amount;
        let mut ch = changes([("amount_paid", Val::Money(paid))]);
        let settled = paid >= inv.money("amount_due");
        match inv.status() {
            "open" if settled => ch.values.insert("status", Val::Str("paid".into())),
            "paid" if !settled => ch.values.insert("status", Val::Str("open".into())),
            _ => None,
        };
        Ok(ch)
    })
    .await?;
    Ok(())
}
