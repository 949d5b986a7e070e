//! Bulk import, the engine behind the API's upload, `gable import` and the console: a file
//! read row by row (`domain::import`), every row checked as the API's create would check it
//! (a dry run that writes no record), then, once committed, written in batches by the
//! import worker (`jobs::imports`), each batch one transaction through the operations.
//!
//! - **Upload** ([`Operations::upload_import`]): the import is made (`validating`), the
//!   file read as a stream on a blocking thread, and each chunk of rows checked and kept
//!   (`store::imports`) before the next is read, so memory holds a chunk, not the file.
//!   A row's references by external id resolve to a row above it in the file or to a
//!   record already in Gable; its body is then checked by `domain::validate::create`,
//!   whose messages the error report repeats. The file's own faults (not UTF-8, a bad
//!   header, too large) refuse the whole upload and leave nothing behind.
//! - **Commit** ([`Operations::commit_import_batch`]): the rows from `next_line` on, a
//!   batch at a time. A row whose `external_id` a record of its collection has updates
//!   that record with the row's fields that differ (fields the file leaves out stay as
//!   they are) or leaves it unchanged; any other row is created. The batch's records,
//!   the import's counts and `next_line` commit together, so an interrupted commit goes
//!   on from the last whole batch and a file imported again creates nothing new.
//!   Imported records cause no events of their own (a portfolio's history would
//!   otherwise reach subscribers as thousands of "new" leads, bookings and payments);
//!   the import's end is one event, `import.completed`.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::sync::{Arc, Mutex};

use chrono::Duration;
use serde_json::{json, Map, Value as Json};
use uuid::Uuid;

use super::{Actor, Operations, Work};
use crate::domain::collections::{collection, named};
use crate::domain::import::{self, importable, Format, Header, Row, RowError, BY_EXTERNAL_ID};
use crate::domain::reach::Scope;
use crate::domain::record::Record;
use crate::domain::registry::{Collection, Ty};
use crate::domain::scopes::Access;
use crate::domain::validate::{self, Changes};
use crate::domain::value::Val;
use crate::error::{Error, Result};
use crate::store::imports::{self as stored, NewRow, StoredRow};
use crate::store::{records, Intent};

/// Rows checked and kept per transaction by the upload, and written per batch (one
/// transaction each) by the commit: short enough that SQLite's one writer is never held
/// long, long enough that a transaction's own cost is spread thin.
pub const BATCH: usize = 500;
/// The largest file an upload takes (`413 payload_too_large` past it): 100,000 units with
/// their addresses are about 15 MB of CSV.
pub const MAX_FILE_BYTES: usize = 100 << 20;
/// How long an import and its rows are kept after it was made.
pub const KEEP_DAYS: i64 = 30;

/// What an upload says about its file.
#[derive(Debug, Clone)]
pub struct Upload {
    /// The collection of every row; `None` for an NDJSON bundle whose lines name theirs.
    pub collection: Option<&'static Collection>,
    pub format: Format,
    pub file_name: Option<String>,
    /// How a CSV's header becomes its columns: as written (the API), or as the console's
    /// mapping chose.
    pub header: Header,
}

/// What one call of the commit did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A batch was written; more may follow.
    Wrote(usize),
    /// The import is no longer importing (completed, failed or cancelled).
    Ended,
}

fn imports() -> Result<&'static Collection> {
    named("imports")
}

/// A row's error as the report lists it.
fn error_json(field: Option<&str>, code: &str, message: &str) -> Json {
    json!({ "field": field, "code": code, "message": message })
}

fn row_error_json(e: &RowError) -> Json {
    error_json(e.field.as_deref(), &e.code, &e.message)
}

/// An API error met by a row, as the report lists it: the same code and message the API
/// would have answered.
fn api_error_json(e: &Error) -> Json {
    let message = match e {
        Error::Internal(_) => "internal error".to_string(),
        e => e.to_string(),
    };
    error_json(e.param(), e.code(), &message)
}

/// A file fault that refuses the whole upload, naming its line.
fn file_error(e: &RowError) -> Error {
    Error::InvalidRequest { message: format!("line {}: {}", e.line, e.message), param: Some("file".into()) }
}

/// Reads the file through, at most [`MAX_FILE_BYTES`], remembering why it stopped early.
struct Limited<R> {
    inner: R,
    read: usize,
    fault: Arc<Mutex<Option<Error>>>,
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf).inspect_err(|e| {
            if e.kind() != std::io::ErrorKind::InvalidData {
                self.remember(Error::InvalidRequest { message: format!("the file could not be read to its end: {e}"), param: None });
            }
        })?;
        self.read += n;
        if self.read > MAX_FILE_BYTES {
            self.remember(Error::PayloadTooLarge(MAX_FILE_BYTES));
            return Err(std::io::Error::other("the file is over the limit"));
        }
        Ok(n)
    }
}

impl<R> Limited<R> {
    fn remember(&self, e: Error) {
        if let Ok(mut f) = self.fault.lock() {
            f.get_or_insert(e);
        }
    }
}

/// What the reading thread hands over: the header's verdict first, then chunks of rows.
type Chunk = std::result::Result<Vec<std::result::Result<Row, RowError>>, RowError>;

/// Reads `file` on a blocking thread, handing over chunks of [`BATCH`] rows.
fn read_rows<R: Read + Send + 'static>(upload: &Upload, file: R, fault: Arc<Mutex<Option<Error>>>) -> tokio::sync::mpsc::Receiver<Chunk> {
    let (tx, rx) = tokio::sync::mpsc::channel::<Chunk>(2);
    let (collection, format, header) = (upload.collection, upload.format, upload.header.clone());
    tokio::task::spawn_blocking(move || {
        let file = Limited { inner: file, read: 0, fault };
        let rows: Box<dyn Iterator<Item = std::result::Result<Row, RowError>>> = match (format, collection) {
            (Format::Csv, Some(c)) => match import::CsvRows::new(c, file, &header) {
                Ok(rows) => Box::new(rows),
                Err(e) => {
                    let _ = tx.blocking_send(Err(e));
                    return;
                }
            },
            (Format::Csv, None) => return,
            (Format::Ndjson, c) => Box::new(import::NdjsonRows::new(c, file)),
        };
        let mut chunk = Vec::with_capacity(BATCH);
        for row in rows {
            chunk.push(row);
            if chunk.len() == BATCH && tx.blocking_send(Ok(std::mem::replace(&mut chunk, Vec::with_capacity(BATCH)))).is_err() {
                break;
            }
        }
        if !chunk.is_empty() {
            let _ = tx.blocking_send(Ok(chunk));
        }
    });
    rx
}

/// One error of a row, as the import's error report lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportError {
    pub line: u64,
    /// The row's collection and own external id, where the line was read that far.
    pub collection: Option<String>,
    pub external_id: Option<String>,
    pub field: Option<String>,
    pub code: String,
    pub message: String,
}

impl ImportError {
    pub fn to_json(&self) -> Json {
        json!({
            "object": "import_error",
            "line": self.line,
            "collection": self.collection,
            "external_id": self.external_id,
            "field": self.field,
            "code": self.code,
            "message": self.message,
        })
    }
}

/// A page of an import's error report: the errors of up to `limit` rows after a line, and
/// whether rows with errors follow.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorPage {
    pub errors: Vec<ImportError>,
    pub has_more: bool,
}

/// A row of the file by its collection and external id, as later rows may refer to it.
#[derive(Clone, Copy)]
struct Seen {
    line: u64,
    valid: bool,
    /// Stands for the record's id while rows are checked (the record does not exist yet).
    id: Uuid,
}

/// What the upload has read so far.
#[derive(Default)]
struct Tally {
    /// The collection the upload names for every row, if it does.
    file_collection: Option<&'static str>,
    total: u64,
    invalid: u64,
    collections: Vec<&'static str>,
    /// Collections whose write scope the credential was found to hold.
    allowed: HashSet<&'static str>,
    seen: HashMap<(&'static str, String), Seen>,
}

impl Operations {
    /// The rows with errors after `after_line` (at most `limit` rows, each with every
    /// error it has), in line order: the error report of an import the actor may read
    /// (another tenant's, or none, is `404` as any record).
    pub async fn import_errors(&self, actor: &Actor, id: Uuid, after_line: u64, limit: u64) -> Result<ErrorPage> {
        let c = imports()?;
        actor.require(c, Access::Read)?;
        self.read(actor, c, id, &Default::default()).await?;
        let scope = actor.scope.clone();
        let rows = self
            .store
            .in_tenant(scope.tenant, scope.livemode, Intent::Read, async |tx| {
                stored::rows_from(tx, &scope, id, after_line + 1, limit + 1, true).await
            })
            .await?;
        let has_more = rows.len() as u64 > limit;
        let mut errors = vec![];
        for row in rows.into_iter().take(limit as usize) {
            for e in row.errors.as_ref().and_then(Json::as_array).into_iter().flatten() {
                let text = |k: &str| e.get(k).and_then(Json::as_str).map(String::from);
                errors.push(ImportError {
                    line: row.line,
                    collection: (!row.collection.is_empty()).then(|| row.collection.clone()),
                    external_id: row.external_id.clone(),
                    field: text("field"),
                    code: text("code").unwrap_or_default(),
                    message: text("message").unwrap_or_default(),
                });
            }
        }
        Ok(ErrorPage { errors, has_more })
    }

    /// Makes an import from a file (`file`, read as a stream): every row read, checked and
    /// kept, no record written. Answers the import, `validated` with its counts, or refuses
    /// the upload (nothing kept) for what is wrong with the file as a whole.
    pub async fn upload_import<R: Read + Send + 'static>(&self, actor: &Actor, upload: Upload, file: R) -> Result<Record> {
        let c = imports()?;
        actor.require(c, Access::Write)?;
        if actor.scope.properties.is_some() {
            return Err(Error::PropertyForbidden(
                "an import is made with a credential that reaches every property (this one is limited to some)".into(),
            ));
        }
        match (upload.collection, upload.format) {
            (Some(target), _) => {
                if !importable(target) {
                    return Err(Error::parameter("collection", format!("{} cannot be imported; {}", target.name, importable_list())));
                }
                actor.require(target, Access::Write)?;
            }
            (None, Format::Csv) => {
                return Err(Error::parameter("collection", "a CSV file holds rows of one collection: name it (`collection=units`)"));
            }
            (None, Format::Ndjson) => {}
        }
        let fault = Arc::new(Mutex::new(None));
        let mut chunks = read_rows(&upload, file, fault.clone());
        // The header is read before anything is kept: a file that is not one is refused as is.
        let first = chunks.recv().await;
        if let Some(Err(e)) = &first {
            return Err(taken_fault(&fault).unwrap_or_else(|| file_error(e)));
        }
        let body = json!({
            "collection": upload.collection.map(|t| t.name),
            "file_name": upload.file_name,
        });
        let now = self.clock.now();
        let set = Changes::of([
            (
                "format",
                Val::Str(
                    match upload.format {
                        Format::Csv => "csv",
                        Format::Ndjson => "ndjson",
                    }
                    .into(),
                ),
            ),
            ("expires_at", Val::DateTime(now + Duration::days(KEEP_DAYS))),
            ("next_line", Val::Int(0)),
        ]);
        let mut w = self.begin(actor).await?;
        let made = w.create_with(c, &body, set).await?.record;
        w.commit().await?;
        let scope = Scope { tenant: actor.scope.tenant, livemode: actor.scope.livemode, properties: None };
        let mut tally = Tally { file_collection: upload.collection.map(|c| c.name), ..Tally::default() };
        let read = async {
            let mut next = first;
            while let Some(chunk) = next {
                let rows = chunk.map_err(|e| file_error(&e))?;
                self.check_chunk(actor, &scope, made.id, rows, &mut tally, &fault).await?;
                next = chunks.recv().await;
            }
            taken_fault(&fault).map_or(Ok(()), Err)
        };
        if let Err(e) = read.await {
            // Nothing of a refused upload stays (its rows go with it).
            self.store
                .in_tenant(scope.tenant, scope.livemode, Intent::Write, async |tx| records::remove(tx, &scope, c, &made).await)
                .await?;
            return Err(e);
        }
        let counts = [
            ("total_rows", Val::Int(tally.total as i64)),
            ("valid_rows", Val::Int((tally.total - tally.invalid) as i64)),
            ("invalid_rows", Val::Int(tally.invalid as i64)),
            ("collections", Val::Json(json!(tally.collections))),
        ];
        self.store
            .in_tenant(scope.tenant, scope.livemode, Intent::Write, async |tx| {
                let (_, after) = records::modify(tx, &scope, c, made.id, now, |current| {
                    let mut ch = Changes::of(counts);
                    // Cancelled while it was read: it stays cancelled.
                    if current.status() == "validating" {
                        ch.values.insert("status", Val::Str("validated".into()));
                    }
                    Ok(ch)
                })
                .await?;
                Ok(after)
            })
            .await
    }

    /// Checks a chunk of rows and keeps them.
    async fn check_chunk(
        &self,
        actor: &Actor,
        scope: &Scope,
        import_id: Uuid,
        rows: Vec<std::result::Result<Row, RowError>>,
        tally: &mut Tally,
        fault: &Arc<Mutex<Option<Error>>>,
    ) -> Result<()> {
        // References the file has not given yet are looked up in Gable, a query per collection.
        let mut wanted: HashMap<&'static str, HashSet<String>> = HashMap::new();
        for row in rows.iter().flatten() {
            for (_, target, ext) in import::references(row) {
                if !tally.seen.contains_key(&(target, ext.clone())) {
                    wanted.entry(target).or_default().insert(ext);
                }
            }
        }
        let found = self.existing(scope, wanted).await?;
        let mut keep = Vec::with_capacity(rows.len());
        for row in rows {
            tally.total += 1;
            let row = match row {
                Ok(row) => row,
                // A fault of the file itself (not UTF-8, too large) refuses it whole.
                Err(e) if e.code == "invalid_encoding" => return Err(file_error(&e)),
                Err(e) => {
                    if let Some(f) = taken_fault(fault) {
                        return Err(f);
                    }
                    tally.invalid += 1;
                    let errors = Some(json!([row_error_json(&e)]));
                    let collection = e.collection.or(tally.file_collection).unwrap_or("");
                    keep.push(NewRow { line: e.line, collection, external_id: e.external_id.clone(), body: Json::Null, errors });
                    continue;
                }
            };
            let c = row.collection;
            if !tally.allowed.contains(c.name) {
                actor.require(c, Access::Write)?;
                tally.allowed.insert(c.name);
            }
            if !tally.collections.contains(&c.name) {
                tally.collections.push(c.name);
            }
            let external_id = row.body.get(BY_EXTERNAL_ID).and_then(Json::as_str).map(str::to_string);
            let errors = check_row(&row, external_id.as_deref(), tally, &found, scope.livemode);
            if let Some(ext) = &external_id {
                tally.seen.entry((c.name, ext.clone())).or_insert(Seen { line: row.line, valid: errors.is_empty(), id: Uuid::now_v7() });
            }
            if !errors.is_empty() {
                tally.invalid += 1;
            }
            keep.push(NewRow {
                line: row.line,
                collection: c.name,
                external_id,
                body: row.body,
                errors: (!errors.is_empty()).then_some(Json::Array(errors)),
            });
        }
        let imports = imports()?;
        let total = tally.total as i64;
        self.store
            .in_tenant(scope.tenant, scope.livemode, Intent::Write, async |tx| {
                stored::insert(tx, scope, import_id, keep).await?;
                // The progress of a long upload, for whoever watches it.
                records::modify(tx, scope, imports, import_id, self.clock.now(), |_| Ok(Changes::of([("total_rows", Val::Int(total))])))
                    .await?;
                Ok(())
            })
            .await
    }

    /// The ids of records of each collection by external id: `(collection, external id) → record`.
    async fn existing(
        &self,
        scope: &Scope,
        wanted: HashMap<&'static str, HashSet<String>>,
    ) -> Result<HashMap<(&'static str, String), Record>> {
        if wanted.is_empty() {
            return Ok(HashMap::new());
        }
        self.store.in_tenant(scope.tenant, scope.livemode, Intent::Read, async |tx| by_external_id(tx, scope, wanted).await).await
    }
}

/// The records of each collection whose external ids are `wanted`, a query per collection:
/// `(collection, external id) → record`. The upload's references and the commit's matches.
async fn by_external_id(
    tx: &mut crate::store::Tx,
    scope: &Scope,
    wanted: HashMap<&'static str, HashSet<String>>,
) -> Result<HashMap<(&'static str, String), Record>> {
    let mut found = HashMap::new();
    for (name, ids) in wanted {
        let c = named(name)?;
        for rec in records::by_external_ids(tx, scope, c, ids.into_iter().collect()).await? {
            if let Some(ext) = rec.get(BY_EXTERNAL_ID).as_str().map(str::to_string) {
                found.insert((name, ext), rec);
            }
        }
    }
    Ok(found)
}

fn taken_fault(fault: &Arc<Mutex<Option<Error>>>) -> Option<Error> {
    fault.lock().ok().and_then(|mut f| f.take())
}

fn importable_list() -> String {
    let names: Vec<_> = crate::domain::collections::COLLECTIONS.iter().filter(|c| importable(c)).map(|c| c.name).collect();
    format!("the collections an import takes are {}", names.join(", "))
}

/// What is wrong with a row, as `[{field, code, message}]` (empty when nothing is).
fn check_row(
    row: &Row,
    external_id: Option<&str>,
    tally: &Tally,
    found: &HashMap<(&'static str, String), Record>,
    livemode: bool,
) -> Vec<Json> {
    let c = row.collection;
    let mut errors = vec![];
    if !importable(c) {
        errors.push(error_json(Some("collection"), "invalid_value", &format!("{} cannot be imported; {}", c.name, importable_list())));
        return errors;
    }
    if let Some(ext) = external_id {
        if let Some(earlier) = tally.seen.get(&(c.name, ext.to_string())) {
            errors.push(error_json(
                Some(BY_EXTERNAL_ID),
                "duplicate_external_id",
                &format!("line {} of the file has the external_id `{ext}` for {} too", earlier.line, c.name),
            ));
        }
    }
    // References by external id become ids (the record's, or a stand-in for a row above).
    let mut body = row.body.clone();
    for (field, target, ext) in import::references(row) {
        let id = match tally.seen.get(&(target, ext.clone())) {
            Some(seen) if !seen.valid => {
                errors.push(error_json(
                    Some(field),
                    "invalid_reference",
                    &format!("refers to line {} (external_id `{ext}`), which has errors", seen.line),
                ));
                continue;
            }
            Some(seen) => seen.id,
            None => match found.get(&(target, ext.clone())) {
                Some(rec) => rec.id,
                None => {
                    errors.push(error_json(
                        Some(field),
                        "missing_reference",
                        &format!("no record of {target} has the external_id `{ext}`, in Gable or on a line above this one"),
                    ));
                    continue;
                }
            },
        };
        body[field] = json!(id);
    }
    if errors.is_empty() {
        if let Err(e) = validate::create(c, &body, livemode) {
            errors.push(api_error_json(&e));
        }
    }
    errors
}

// ---- the commit ------------------------------------------------------------------

/// A row the commit could not write: its line and the API's error.
struct Refused {
    line: u64,
    error: Json,
}

/// What a batch wrote.
#[derive(Default)]
struct Written {
    created: i64,
    updated: i64,
    unchanged: i64,
    skipped: i64,
    rows: usize,
    next_line: u64,
}

impl Operations {
    /// Writes the next batch of a committed import (its worker calls this until it says
    /// [`Step::Ended`]). A batch is one transaction: its records, the import's counts and
    /// `next_line`. A row the API refuses there (a check that needs other records, such as
    /// a charge's currency against its lease's) rolls the batch back and is recorded
    /// against its line; the import then fails there, or, if its commit skips invalid
    /// rows, the batch is written again without it.
    pub async fn commit_import_batch(&self, tenant: Uuid, livemode: bool, import_id: Uuid) -> Result<Step> {
        let c = imports()?;
        let actor = Actor::system(tenant, livemode);
        let scope = actor.scope.clone();
        let mut w = self.begin(&actor).await?;
        w.quiet = true;
        // Locked: batches of one import are written one after another, by whichever process.
        let current = records::fetch(&mut w.tx, &scope, c, import_id, true).await?;
        if current.status() != "importing" {
            return Ok(Step::Ended);
        }
        let from = current.get("next_line").as_i64().unwrap_or(0).max(0) as u64;
        let rows = stored::rows_from(&mut w.tx, &scope, import_id, from, BATCH as u64, false).await?;
        if rows.is_empty() {
            drop(w);
            self.end_import(&actor, import_id, "completed", None).await?;
            return Ok(Step::Ended);
        }
        match write_rows(&mut w, &rows).await? {
            Ok(done) => {
                let counts = [
                    ("next_line", Val::Int(done.next_line as i64)),
                    ("processed_rows", add(&current, "processed_rows", done.rows as i64)),
                    ("created", add(&current, "created", done.created)),
                    ("updated", add(&current, "updated", done.updated)),
                    ("unchanged", add(&current, "unchanged", done.unchanged)),
                    ("skipped", add(&current, "skipped", done.skipped)),
                ];
                let now = w.now;
                records::write_changes(&mut w.tx, &scope, c, current, Changes::of(counts), now).await?;
                w.commit().await?;
                Ok(Step::Wrote(done.rows))
            }
            Err(refused) => {
                drop(w);
                let skip = current.get("skip_invalid") == &Val::Bool(true);
                let error = refused.error.clone();
                self.store
                    .in_tenant(tenant, livemode, Intent::Write, async |tx| {
                        stored::set_errors(tx, &scope, import_id, refused.line, &json!([error])).await?;
                        records::modify(tx, &scope, c, import_id, self.clock.now(), |cur| {
                            Ok(Changes::of([("invalid_rows", add(cur, "invalid_rows", 1)), ("valid_rows", add(cur, "valid_rows", -1))]))
                        })
                        .await?;
                        Ok(())
                    })
                    .await?;
                if skip {
                    return Ok(Step::Wrote(0));
                }
                let mut failure = refused.error.as_object().cloned().unwrap_or_default();
                failure.insert("line".into(), json!(refused.line));
                self.end_import(&actor, import_id, "failed", Some(Json::Object(failure))).await?;
                Ok(Step::Ended)
            }
        }
    }

    /// Ends an importing import (`completed` or `failed`), with its one event.
    async fn end_import(&self, actor: &Actor, import_id: Uuid, status: &str, failure: Option<Json>) -> Result<()> {
        let c = imports()?;
        let mut w = self.begin(actor).await?;
        let scope = w.scope.clone();
        let current = records::fetch(&mut w.tx, &scope, c, import_id, true).await?;
        if current.status() != "importing" {
            return Ok(());
        }
        let mut ch = Changes::of([("status", Val::Str(status.into())), ("completed_at", Val::DateTime(w.now))]);
        if let Some(f) = failure {
            ch.values.insert("failure", Val::Json(f));
        }
        let now = w.now;
        let (before, after) = records::write_changes(&mut w.tx, &scope, c, current, ch, now).await?;
        if status == "completed" {
            super::outbox::emit(&mut w, "import.completed", c, &after, Some(&before), None).await?;
        }
        w.commit().await
    }
}

fn add(rec: &Record, field: &str, n: i64) -> Val {
    Val::Int(rec.get(field).as_i64().unwrap_or(0) + n)
}

/// Writes a batch's rows in the unit of work; `Err(Refused)` for the first row the API
/// refuses (the caller rolls the batch back).
async fn write_rows(w: &mut Work, rows: &[StoredRow]) -> Result<std::result::Result<Written, Refused>> {
    let scope = w.scope.clone();
    // Every record the batch refers to or matches, by external id, a query per collection.
    let mut wanted: HashMap<&'static str, HashSet<String>> = HashMap::new();
    for row in rows.iter().filter(|r| r.errors.is_none()) {
        let Some(c) = collection(&row.collection) else { continue };
        if let Some(ext) = &row.external_id {
            wanted.entry(c.name).or_default().insert(ext.clone());
        }
        for (field, target) in ref_fields(c) {
            if let Some(ext) = row.body.get(field).and_then(|v| v.get(BY_EXTERNAL_ID)).and_then(Json::as_str) {
                wanted.entry(target).or_default().insert(ext.to_string());
            }
        }
    }
    let mut known = by_external_id(&mut w.tx, &scope, wanted).await?;
    let mut done = Written::default();
    for row in rows {
        done.rows += 1;
        done.next_line = row.line + 1;
        if row.errors.is_some() {
            done.skipped += 1;
            continue;
        }
        let Some(c) = collection(&row.collection) else {
            return Ok(Err(Refused { line: row.line, error: error_json(Some("collection"), "invalid_value", "not a collection") }));
        };
        let body = match resolve(c, &row.body, &known) {
            Ok(body) => body,
            Err(error) => return Ok(Err(Refused { line: row.line, error })),
        };
        let matched = row.external_id.as_ref().and_then(|ext| known.get(&(c.name, ext.clone())));
        let outcome = match matched {
            Some(rec) => match changed(c, &body, rec, scope.livemode) {
                Ok(None) => {
                    done.unchanged += 1;
                    continue;
                }
                Ok(Some(patch)) => w.update(c, rec.id, &patch).await.map(|r| (r, false)),
                Err(e) => Err(e),
            },
            None => w.create(c, &body).await.map(|made| (made.record, true)),
        };
        match outcome {
            Ok((rec, created)) => {
                if created {
                    done.created += 1;
                } else {
                    done.updated += 1;
                }
                if let Some(ext) = &row.external_id {
                    known.insert((c.name, ext.clone()), rec);
                }
            }
            // The database itself failing is not the row's fault: the batch is tried again.
            Err(e @ (Error::Internal(_) | Error::Unavailable { .. })) => return Err(e),
            Err(e) => return Ok(Err(Refused { line: row.line, error: api_error_json(&e) })),
        }
    }
    Ok(Ok(done))
}

/// The reference fields of a collection and the collections they name.
fn ref_fields(c: &'static Collection) -> impl Iterator<Item = (&'static str, &'static str)> {
    c.fields.iter().filter_map(|f| match f.ty {
        Ty::Ref(target) => Some((f.name, target)),
        _ => None,
    })
}

/// A row's body with its references by external id replaced by the records' ids.
fn resolve(c: &'static Collection, body: &Json, known: &HashMap<(&'static str, String), Record>) -> std::result::Result<Json, Json> {
    let mut out = body.clone();
    for (field, target) in ref_fields(c) {
        let Some(ext) = body.get(field).and_then(|v| v.get(BY_EXTERNAL_ID)).and_then(Json::as_str) else { continue };
        match known.get(&(target, ext.to_string())) {
            Some(rec) => out[field] = json!(rec.id),
            None => {
                return Err(error_json(
                    Some(field),
                    "missing_reference",
                    &format!("no record of {target} has the external_id `{ext}` (was its row left out?)"),
                ))
            }
        }
    }
    Ok(out)
}

/// The PATCH that makes `rec` what the row says: the row's fields whose values differ
/// (metadata key by key); `None` when there are none. Fields the row leaves out stay.
fn changed(c: &'static Collection, body: &Json, rec: &Record, livemode: bool) -> Result<Option<Json>> {
    let wanted = validate::create(c, body, livemode)?;
    let Some(given) = body.as_object() else { return Ok(None) };
    let mut patch = Map::new();
    for (name, raw) in given {
        if name == "metadata" {
            let current = rec.metadata.as_ref().and_then(Json::as_object);
            let differs = raw.as_object().is_some_and(|m| m.iter().any(|(k, v)| current.and_then(|cur| cur.get(k)) != Some(v)));
            if differs {
                patch.insert(name.clone(), raw.clone());
            }
            continue;
        }
        let Some(v) = wanted.values.get(name.as_str()) else { continue };
        if v != rec.get(name) {
            patch.insert(name.clone(), raw.clone());
        }
    }
    Ok((!patch.is_empty()).then_some(Json::Object(patch)))
}
