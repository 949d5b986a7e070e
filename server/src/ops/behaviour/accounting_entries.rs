//! Manual journal entries: balanced (a validation rule), never with a source Gable posts
//! itself, and a reversal must mirror the entry it reverses.

use async_trait::async_trait;

use super::{new_value, Behaviour, NewRecord};
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::value::Val;
use crate::error::{Error, Result};
use crate::ops::{postings, Work};

pub(super) struct AccountingEntries;

#[async_trait]
impl Behaviour for AccountingEntries {
    /// A second reversal of one entry conflicts with the first.
    fn create_answers(&self) -> &'static [u16] {
        &[409]
    }

    async fn before_create(&self, w: &mut Work, _c: &'static Collection, new: &mut NewRecord) -> Result<()> {
        if let Some(source) = new_value(new, "source_type").as_str().filter(|s| postings::GABLE_SOURCES.contains(s)) {
            return Err(Error::validation("source_type", format!("`{source}` is reserved for the entries Gable posts itself")));
        }
        if let (Some(reverses), Val::Json(lines), Val::Str(currency)) =
            (new_value(new, "reverses_id").as_uuid(), new_value(new, "lines"), new_value(new, "currency"))
        {
            postings::check_manual_reversal(w, &lines, &currency, reverses).await?;
        }
        Ok(())
    }

    /// A balanced manual entry: its lines join the ledger's sums.
    async fn after_create(&self, w: &mut Work, _c: &'static Collection, rec: &Record) -> Result<()> {
        postings::write_lines(w, rec, &postings::lines_of(rec)?).await
    }
}
