//! Bulk import in the console (`Imports`): the upload form's targets and column mapping,
//! the imports list, an import's page with its errors by row, commit and cancel. Every
//! step is the engine's (`ops::imports`) acting as the signed-in user, so the role's
//! permissions decide exactly as a key's scopes do in the API.

use std::collections::BTreeMap;

use async_trait::async_trait;
use gable_app::service::{
    CollectionLink, ColumnChoice, ConsoleError, ImportErrorLine, ImportSummary, ImportTarget, ImportUpload, ImportView, Imports,
    ImportsView, Me,
};
use serde_json::Value as Json;
use uuid::Uuid;

use super::records::{describe, forms, show};
use super::{actor_of, store_error, AccountService};
use crate::domain::collections::{collection, named, COLLECTIONS};
use crate::domain::import::{self, Format, Header, BY_EXTERNAL_ID};
use crate::domain::list::ListQuery;
use crate::domain::record::Record;
use crate::domain::registry::{Collection, Ty};
use crate::domain::scopes::Access;
use crate::domain::value::Val;
use crate::domain::workflow;
use crate::error::Error;
use crate::ops::imports::Upload;
use crate::ops::Actor;

/// Imports the list shows, newest first.
const LATEST: usize = 25;
/// Rows with errors a page of the import's report shows.
const ERROR_ROWS: u64 = 50;

fn imports() -> Result<&'static Collection, ConsoleError> {
    named("imports").map_err(|_| ConsoleError::Internal)
}

/// A collection whose files can be imported.
fn importable(name: &str) -> Result<&'static Collection, ConsoleError> {
    collection(name)
        .filter(|c| import::importable(c))
        .ok_or_else(|| ConsoleError::Invalid { field: "collection".into(), message: format!("Files of “{name}” cannot be imported.") })
}

/// Whether the actor may import files of `c`: it writes imports and `c`.
fn may_import(actor: &Actor, c: &Collection) -> bool {
    imports().is_ok_and(|i| actor.require(i, Access::Write).is_ok()) && actor.require(c, Access::Write).is_ok()
}

fn refused_import(c: &Collection) -> ConsoleError {
    ConsoleError::Forbidden(format!(
        "Your role does not allow importing {} (it needs the permissions `imports:write` and `{}:write`).",
        describe::plural_label(c).to_lowercase(),
        c.name
    ))
}

/// A column as the API names it, for people: `Property (its external id)`, `Address: city`.
fn column_label(name: &str) -> String {
    match name.split_once('.') {
        None if name == BY_EXTERNAL_ID => "External id (its id in your old system)".into(),
        None => describe::field_label(name),
        Some((field, BY_EXTERNAL_ID)) => format!("{} (its external id)", describe::field_label(field)),
        Some(("metadata", key)) => format!("Metadata: {key}"),
        Some((field, part)) => {
            let part = gable_app::service::ADDRESS_PARTS.iter().find(|(p, _)| *p == part).map_or(part, |(_, label)| *label);
            format!("{}: {}", describe::field_label(field), part.to_lowercase())
        }
    }
}

fn template_csv(c: &'static Collection) -> String {
    let columns = import::template(c).unwrap_or_default();
    let mut w = csv::Writer::from_writer(vec![]);
    let header = w.write_record(columns.iter().map(|(h, _)| h.as_str()));
    let example = w.write_record(columns.iter().map(|(_, e)| e.as_str()));
    match (header, example, w.into_inner()) {
        (Ok(()), Ok(()), Ok(bytes)) => String::from_utf8(bytes).unwrap_or_default(),
        _ => String::new(),
    }
}

fn int(r: &Record, name: &str) -> i64 {
    r.get(name).as_i64().unwrap_or(0)
}

/// The collections an import's rows are in.
fn touched(r: &Record) -> Vec<&'static Collection> {
    match r.get("collections") {
        Val::Json(Json::Array(list)) => list.iter().filter_map(Json::as_str).filter_map(collection).collect(),
        _ => vec![],
    }
}

/// An import as the pages show it (its collections linked where the actor reads them).
fn summary(actor: &Actor, r: &Record) -> ImportSummary {
    let text = |name: &str| r.get(name).as_str().map(String::from);
    let touched = touched(r);
    let labels: Vec<String> = touched.iter().map(|c| describe::plural_label(c)).collect();
    let what = match (text("collection").and_then(|n| collection(&n)), labels.is_empty()) {
        (Some(c), _) => describe::plural_label(c),
        (None, true) => "A bundle".into(),
        (None, false) => labels.join(", "),
    };
    let failure = match r.get("failure") {
        Val::Json(f @ Json::Object(_)) => {
            let line = f.get("line").and_then(Json::as_u64).map(|l| format!("Line {l}: ")).unwrap_or_default();
            Some(format!("{line}{}", f.get("message").and_then(Json::as_str).unwrap_or("the import stopped")))
        }
        _ => None,
    };
    ImportSummary {
        id: r.id.to_string(),
        file_name: text("file_name").unwrap_or_else(|| "(unnamed file)".into()),
        what,
        status: r.status().to_string(),
        total_rows: int(r, "total_rows"),
        valid_rows: int(r, "valid_rows"),
        invalid_rows: int(r, "invalid_rows"),
        processed_rows: int(r, "processed_rows"),
        created: int(r, "created"),
        updated: int(r, "updated"),
        unchanged: int(r, "unchanged"),
        skipped: int(r, "skipped"),
        skip_invalid: r.get("skip_invalid") == &Val::Bool(true),
        failure,
        created_at: show::datetime(&r.created_at),
        completed_at: r.get("completed_at").as_datetime().map(|t| show::datetime(&t)),
        collections: touched
            .into_iter()
            .filter(|c| actor.require(c, Access::Read).is_ok())
            .map(|c| CollectionLink { name: c.name.into(), label: describe::plural_label(c) })
            .collect(),
    }
}

/// An engine's refusal in the console's words: the file's faults are the file field's.
fn upload_refusal(e: Error) -> ConsoleError {
    match e {
        Error::PayloadTooLarge(limit) => ConsoleError::Invalid {
            field: "file".into(),
            message: format!("The file is larger than {} MB, the most an import takes. Split it and import the parts.", limit >> 20),
        },
        Error::UnsupportedMediaType(_) => ConsoleError::Invalid { field: "file".into(), message: "Choose a CSV or NDJSON file.".into() },
        Error::InvalidRequest { message, .. } => ConsoleError::Invalid { field: "file".into(), message: forms::sentence(&message) },
        Error::InvalidParameter { param, message } => ConsoleError::Invalid { field: param, message: forms::sentence(&message) },
        other => forms::refusal("uploading an import", "imports")(other),
    }
}

impl AccountService {
    /// An import the actor may read, or "not found" (another tenant's or environment's).
    async fn one_import(&self, actor: &Actor, id: &str) -> Result<Record, ConsoleError> {
        let c = imports()?;
        let id = Uuid::parse_str(id.trim()).map_err(|_| ConsoleError::NotFound("The import".into()))?;
        match self.ops.read(actor, c, id, &Default::default()).await {
            Ok(one) => Ok(one.record),
            Err(Error::NotFound { .. }) => Err(ConsoleError::NotFound("The import".into())),
            Err(Error::InsufficientScope { scope, .. }) => {
                Err(ConsoleError::Forbidden(format!("Your role does not allow seeing imports (it needs the permission `{scope}`).")))
            }
            Err(e) => Err(store_error("reading an import")(e)),
        }
    }

    /// Runs the import's `action` (commit, cancel) once per form key, recording who did.
    async fn act_on_import(
        &self,
        me: &Me,
        id: &str,
        action: &str,
        body: serde_json::Map<String, Json>,
        once: &str,
    ) -> Result<(), ConsoleError> {
        let c = imports()?;
        let actor = actor_of(me)?;
        let record = self.one_import(&actor, id).await?;
        let machine = workflow::machine(c.name).ok_or(ConsoleError::Internal)?;
        let a = machine.action(action).ok_or_else(|| ConsoleError::NotFound("That action".into()))?;
        let print = format!("import {action} {} {}", record.id, Json::Object(body.clone()));
        self.once(me, &actor, once, print, async |w| {
            w.act(c, machine, a, record.id, &body).await.map_err(forms::refusal("running an import's action", "imports"))?;
            super::records::acted(w, me, c, record.id, a.name, vec![]).await?;
            Ok(record.id.to_string())
        })
        .await?;
        tracing::info!(tenant = %actor.scope.tenant, import = %record.id, action, by = %me.user_id, "console: import action run");
        Ok(())
    }
}

#[async_trait]
impl Imports for AccountService {
    async fn imports(&self, me: &Me) -> Result<ImportsView, ConsoleError> {
        let c = imports()?;
        let actor = actor_of(me)?;
        let pairs = vec![("limit".to_string(), LATEST.to_string())];
        let q = ListQuery::parse(c, &pairs).map_err(|_| ConsoleError::Internal)?;
        let page = self.ops.list(&actor, c, q).await.map_err(|e| match e {
            Error::InsufficientScope { scope, .. } => {
                ConsoleError::Forbidden(format!("Your role does not allow seeing imports (it needs the permission `{scope}`)."))
            }
            other => store_error("listing imports")(other),
        })?;
        let targets = COLLECTIONS
            .iter()
            .filter(|t| import::importable(t) && may_import(&actor, t))
            .map(|t| CollectionLink { name: t.name.into(), label: describe::plural_label(t) })
            .collect();
        Ok(ImportsView { imports: page.records.iter().map(|r| summary(&actor, r)).collect(), targets })
    }

    fn target(&self, me: &Me, name: &str) -> Result<ImportTarget, ConsoleError> {
        let c = importable(name)?;
        let actor = actor_of(me)?;
        if !may_import(&actor, c) {
            return Err(refused_import(c));
        }
        let columns = import::column_choices(c)
            .into_iter()
            .map(|name| {
                let field = c.field(name.split('.').next().unwrap_or_default());
                // A reference may be given by id or by external id: neither column alone is required.
                let required = field.is_some_and(|f| f.required && !matches!(f.ty, Ty::Ref(_)) && !name.contains('.'));
                ColumnChoice { label: column_label(&name), required, name }
            })
            .collect();
        Ok(ImportTarget { name: c.name.into(), label: describe::plural_label(c), columns, metadata: c.metadata, template: template_csv(c) })
    }

    fn match_columns(&self, me: &Me, name: &str, headers: &[String]) -> Result<Vec<Option<String>>, ConsoleError> {
        let c = importable(name)?;
        if !may_import(&actor_of(me)?, c) {
            return Err(refused_import(c));
        }
        Ok(headers.iter().take(500).map(|h| import::suggest(c, h)).collect())
    }

    async fn import(&self, me: &Me, id: &str, errors_after: u64) -> Result<ImportView, ConsoleError> {
        let actor = actor_of(me)?;
        let record = self.one_import(&actor, id).await?;
        let page =
            self.ops.import_errors(&actor, record.id, errors_after, ERROR_ROWS).await.map_err(store_error("reading an import's errors"))?;
        let more_errors_after = page.has_more.then(|| page.errors.last().map_or(errors_after, |e| e.line));
        let errors = page
            .errors
            .into_iter()
            .map(|e| ImportErrorLine { line: e.line, external_id: e.external_id, field: e.field, code: e.code, message: e.message })
            .collect();
        let summary = summary(&actor, &record);
        let can_commit = imports().is_ok_and(|c| actor.require(c, Access::Write).is_ok())
            && touched(&record).iter().all(|c| actor.require(c, Access::Write).is_ok());
        Ok(ImportView { summary, errors, errors_after, more_errors_after, can_commit, once: Uuid::new_v4().to_string() })
    }

    async fn upload(&self, me: &Me, upload: ImportUpload, file: Box<dyn std::io::Read + Send>) -> Result<String, ConsoleError> {
        let actor = actor_of(me)?;
        let target = match &upload.collection {
            Some(name) => Some(importable(name)?),
            None => None,
        };
        if let Some(c) = target {
            if !may_import(&actor, c) {
                return Err(refused_import(c));
            }
        }
        let file_name = upload.file_name.trim();
        let file_name = (!file_name.is_empty()).then(|| file_name.chars().filter(|ch| !ch.is_control()).take(255).collect::<String>());
        let chosen: BTreeMap<usize, Option<String>> = upload.columns.into_iter().collect();
        let work = Upload {
            collection: target,
            format: if upload.ndjson { Format::Ndjson } else { Format::Csv },
            file_name,
            header: Header::Chosen(chosen),
        };
        let made = self.ops.upload_import(&actor, work, file).await.map_err(upload_refusal)?;
        tracing::info!(tenant = %actor.scope.tenant, import = %made.id, by = %me.user_id, "console: import uploaded");
        Ok(made.id.to_string())
    }

    async fn commit(&self, me: &Me, id: &str, skip_invalid: bool, once: &str) -> Result<(), ConsoleError> {
        let actor = actor_of(me)?;
        let record = self.one_import(&actor, id).await?;
        let invalid = int(&record, "invalid_rows");
        if invalid > 0 && !skip_invalid && record.status() == "validated" {
            return Err(ConsoleError::Invalid {
                field: "skip_invalid".into(),
                message: format!(
                    "{invalid} row{} of the file {} errors: tick “Leave out the rows with errors” to import the rest, or fix the file and \
                     upload it again.",
                    if invalid == 1 { "" } else { "s" },
                    if invalid == 1 { "has" } else { "have" }
                ),
            });
        }
        let mut body = serde_json::Map::new();
        if skip_invalid {
            body.insert("skip_invalid".into(), Json::Bool(true));
        }
        self.act_on_import(me, id, "commit", body, once).await
    }

    async fn cancel(&self, me: &Me, id: &str, once: &str) -> Result<(), ConsoleError> {
        self.act_on_import(me, id, "cancel", serde_json::Map::new(), once).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_named_for_people() {
        assert_eq!(column_label("property_id.external_id"), "Property (its external id)");
        assert_eq!(column_label("property_id"), "Property");
        assert_eq!(column_label("address.postal_code"), "Address: postal code");
        assert_eq!(column_label("external_id"), "External id (its id in your old system)");
        assert_eq!(column_label("rent_due_day"), "Rent due day");
    }

    #[test]
    fn a_template_is_a_header_and_an_example_row() {
        let text = template_csv(named("units").unwrap());
        let mut lines = text.lines();
        assert!(lines.next().unwrap().starts_with("external_id,property_id.external_id,number"));
        assert!(lines.next().unwrap().starts_with("UNIT-1,PROPERTY-1,"));
    }
}
