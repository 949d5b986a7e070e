//! Refunds: money returned against a succeeded payment, in its currency, never more
//! than is left of it; succeeding posts refunds paid against cash.

use async_trait::async_trait;

use super::{col, new_value, nonzero_amount, referenced, Behaviour, NewRecord};
use crate::domain::ledger;
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::value::{money_json, Val};
use crate::domain::workflow::Action;
use crate::error::{Error, Result};
use crate::ops::{postings, Work};
use crate::store::records;

pub(super) struct Refunds;

#[async_trait]
impl Behaviour for Refunds {
    async fn before_create(&self, w: &mut Work, c: &'static Collection, new: &mut NewRecord) -> Result<()> {
        nonzero_amount(new)?;
        let Some(payment_id) = new_value(new, "payment_id").as_uuid() else { return Ok(()) };
        let payment = referenced(w, "payment_id", col("payments"), payment_id).await?;
        if payment.status() != "succeeded" {
            return Err(Error::validation(
                "payment_id",
                format!("the payment is {}; only a succeeded payment can be refunded", payment.status()),
            ));
        }
        let currency = payment.currency().unwrap_or_default().to_string();
        if new_value(new, "currency").as_str() != Some(currency.as_str()) {
            return Err(Error::validation("currency", format!("must be the payment's currency, {currency}")));
        }
        let system = w.system.clone();
        let earlier = records::find(&mut w.tx, &system, c, &[("payment_id", Val::Uuid(payment_id))]).await?;
        let taken: i64 = earlier.iter().filter(|r| r.status() != "failed").map(|r| r.money("amount")).sum();
        let left = payment.money("amount") - taken;
        if matches!(new_value(new, "amount"), Val::Money(a) if a > left) {
            return Err(Error::validation(
                "amount",
                format!("is more than is left to refund on the payment ({})", money_json(left, Some(&currency))),
            ));
        }
        Ok(())
    }

    async fn follow(&self, w: &mut Work, c: &'static Collection, a: &Action, _before: &Record, after: &Record) -> Result<()> {
        if a.name == "succeed" {
            postings::post_for(w, c, after, ledger::refund(after.money("amount")), w.now.date_naive(), "refund paid").await?;
        }
        Ok(())
    }
}
