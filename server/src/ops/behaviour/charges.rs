//! Charges: posted to the ledger when created (receivable against income or deposits
//! held), reversed when voided.

use async_trait::async_trait;

use super::{in_parent_currency, nonzero_amount, Behaviour, NewRecord};
use crate::domain::ledger;
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::value::Val;
use crate::domain::workflow::Action;
use crate::error::{Error, Result};
use crate::ops::{postings, Work};

pub(super) struct Charges;

#[async_trait]
impl Behaviour for Charges {
    async fn before_create(&self, w: &mut Work, _c: &'static Collection, new: &mut NewRecord) -> Result<()> {
        nonzero_amount(new)?;
        in_parent_currency(w, new).await
    }

    async fn after_create(&self, w: &mut Work, c: &'static Collection, rec: &Record) -> Result<()> {
        let kind = rec.get("kind").as_str().unwrap_or("fee");
        let Val::Date(due) = rec.get("due_date") else { return Err(Error::internal(anyhow::anyhow!("charge without due date"))) };
        postings::post_for(w, c, rec, ledger::charge(kind, rec.money("amount")), *due, &format!("{kind} charge")).await?;
        Ok(())
    }

    async fn follow(&self, w: &mut Work, c: &'static Collection, a: &Action, _before: &Record, after: &Record) -> Result<()> {
        if a.name == "void" {
            postings::reverse_posting_of(w, c, after, "charge voided").await?;
        }
        Ok(())
    }
}
