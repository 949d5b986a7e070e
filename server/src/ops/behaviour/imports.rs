//! Imports: `commit` needs the write of every collection the file touches (checked again
//! here, since the credential that commits may not be the one that uploaded) and every
//! row valid unless it skips the invalid ones; it wakes the import worker
//! (`jobs::imports`), which writes the rows (`ops::imports`).

use async_trait::async_trait;

use super::{blocked, Behaviour, Step};
use crate::domain::collections::collection;
use crate::domain::scopes::Access;
use crate::domain::validate::Changes;
use crate::domain::value::Val;
use crate::error::{Error, Result};
use crate::ops::Work;

pub(super) struct Imports;

#[async_trait]
impl Behaviour for Imports {
    async fn prepare(&self, w: &mut Work, s: &Step<'_>, ch: &mut Changes) -> Result<()> {
        if s.a.name != "commit" {
            return Ok(());
        }
        let actor = w.actor();
        if actor.scope.properties.is_some() {
            return Err(Error::PropertyForbidden(
                "an import is committed with a credential that reaches every property (this one is limited to some)".into(),
            ));
        }
        let touched = s.current.get("collections");
        let names = match touched {
            Val::Json(list) => list.as_array().cloned().unwrap_or_default(),
            _ => vec![],
        };
        for name in names.iter().filter_map(|n| n.as_str()) {
            if let Some(c) = collection(name) {
                actor.require(c, Access::Write)?;
            }
        }
        let skip = ch.values.get("skip_invalid") == Some(&Val::Bool(true));
        let invalid = s.current.get("invalid_rows").as_i64().unwrap_or(0);
        if invalid > 0 && !skip {
            return Err(blocked(
                s,
                format!(
                    "{invalid} row{} of the file {} errors (GET /v1/imports/{}/errors lists them): fix the file and upload it again, \
                     or commit with `skip_invalid: true` to leave them out",
                    if invalid == 1 { "" } else { "s" },
                    if invalid == 1 { "has" } else { "have" },
                    s.current.id
                ),
            ));
        }
        ch.values.insert("skip_invalid", Val::Bool(skip));
        let committed = w.signals.imports_committed.clone();
        w.wake.push(committed);
        Ok(())
    }
}
