//! Reports: a requested run, computed by the report worker (`jobs::reports`), which
//! this wakes once the request commits.

use async_trait::async_trait;

use super::{col, new_value, referenced, Behaviour, NewRecord};
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::reports::{self, Parameters};
use crate::domain::validate::Changes;
use crate::error::Result;
use crate::ops::Work;

pub(super) struct Reports;

#[async_trait]
impl Behaviour for Reports {
    /// `parameters.property_id` names a property; the kind's reads are held (403).
    fn create_answers(&self) -> &'static [u16] {
        &[404]
    }

    async fn before_create(&self, w: &mut Work, _c: &'static Collection, new: &mut NewRecord) -> Result<()> {
        // A report shows what it aggregates: making one needs the reads of all of it.
        if let Some(kind) = new_value(new, "kind").as_str() {
            reports::require_reads(&w.actor().grants, kind)?;
        }
        let params = Parameters::parse(&new_value(new, "parameters"))?;
        if let Some(p) = params.property_id {
            referenced(w, "parameters.property_id", col("properties"), p).await?;
        }
        Ok(())
    }

    /// A change (its metadata) answers with the whole report, result included: changing
    /// one is reading it, so it needs the same reads as reading it (`403` before anything
    /// is written).
    async fn before_update(&self, w: &mut Work, _c: &'static Collection, current: &Record, _ch: &mut Changes) -> Result<()> {
        reports::require_reads(&w.actor().grants, current.get("kind").as_str().unwrap_or_default())
    }

    async fn after_create(&self, w: &mut Work, _c: &'static Collection, _rec: &Record) -> Result<()> {
        let queued = w.signals.reports_queued.clone();
        w.wake.push(queued);
        Ok(())
    }
}
