//! Bulk import in the console: a file uploaded (checked, nothing written), its CSV
//! columns mapped to fields, the rows with errors shown by line, then committed and
//! followed to the end. One engine serves the API, the CLI and these pages; the server
//! runs every step as the signed-in user, through the operations.

use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::{Me, Result};

use super::CollectionLink;

/// The imports page: the latest imports and what the role may import into.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportsView {
    pub imports: Vec<ImportSummary>,
    /// The collections whose files the role may import (it writes imports and them).
    pub targets: Vec<CollectionLink>,
}

/// What a file of a collection can hold, for the upload form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportTarget {
    pub name: String,
    pub label: String,
    /// The columns a CSV can have, as the API names them (`number`,
    /// `property_id.external_id`, `address.city`): what a column of the file can fill.
    pub columns: Vec<ColumnChoice>,
    /// Whether records of it keep `metadata`: a column no field fits can be kept there.
    pub metadata: bool,
    /// The CSV template: the header and an example row.
    pub template: String,
}

/// A column a file can fill, for people.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnChoice {
    /// As the API names it (`property_id.external_id`).
    pub name: String,
    /// For people (`Property (its external id)`).
    pub label: String,
    pub required: bool,
}

/// An import as lists and its page show it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportSummary {
    pub id: String,
    pub file_name: String,
    /// What the file holds: `Units`, or the collections of a bundle.
    pub what: String,
    /// `validating`, `validated`, `importing`, `completed`, `failed`, `cancelled`.
    pub status: String,
    pub total_rows: i64,
    pub valid_rows: i64,
    pub invalid_rows: i64,
    pub processed_rows: i64,
    pub created: i64,
    pub updated: i64,
    pub unchanged: i64,
    pub skipped: i64,
    pub skip_invalid: bool,
    /// Why it failed, in words.
    pub failure: Option<String>,
    pub created_at: String,
    pub completed_at: Option<String>,
    /// The collections its rows are in, linked to their lists (for a role that reads them).
    pub collections: Vec<CollectionLink>,
}

impl ImportSummary {
    /// Whether the server is still at work on it (the page follows it).
    pub fn working(&self) -> bool {
        matches!(self.status.as_str(), "validating" | "importing")
    }
}

/// One error of a row of the file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportErrorLine {
    pub line: u64,
    pub external_id: Option<String>,
    pub field: Option<String>,
    pub code: String,
    pub message: String,
}

/// An import's page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportView {
    pub summary: ImportSummary,
    /// Errors of the rows after line `errors_after`, in line order.
    pub errors: Vec<ImportErrorLine>,
    pub errors_after: u64,
    /// Where the next page of errors starts, if rows with errors follow.
    pub more_errors_after: Option<u64>,
    /// The role may commit and cancel it (it writes imports and every collection of the file).
    pub can_commit: bool,
    /// The key the page's commit and cancel forms are sent with: a second submit acts once.
    pub once: String,
}

/// An upload from the console's form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportUpload {
    /// The collection of a CSV's rows; `None` for an NDJSON bundle whose lines name theirs.
    pub collection: Option<String>,
    pub file_name: String,
    pub ndjson: bool,
    /// The mapping chosen for a CSV's columns, by position: the column a column fills, or
    /// `None` to leave it out. A column not listed is matched by its header's name.
    pub columns: Vec<(usize, Option<String>)>,
}

#[cfg(feature = "ssr")]
#[async_trait::async_trait]
pub trait Imports: Send + Sync {
    /// The latest imports of the console's environment (`imports:read`).
    async fn imports(&self, me: &Me) -> Result<ImportsView>;
    /// What a file of `collection` can hold (the role may import it).
    fn target(&self, me: &Me, collection: &str) -> Result<ImportTarget>;
    /// The column each header most likely means (`None`: nothing fits), as the upload
    /// would match it.
    fn match_columns(&self, me: &Me, collection: &str, headers: &[String]) -> Result<Vec<Option<String>>>;
    /// An import's page, with the errors of the rows after line `errors_after`.
    async fn import(&self, me: &Me, id: &str, errors_after: u64) -> Result<ImportView>;
    /// Uploads a file (read as it comes) and checks every row; answers the new import's
    /// id, or why the file as a whole was refused (nothing kept).
    async fn upload(&self, me: &Me, upload: ImportUpload, file: Box<dyn std::io::Read + Send>) -> Result<String>;
    /// Starts writing a checked import, leaving out its invalid rows if `skip_invalid`.
    async fn commit(&self, me: &Me, id: &str, skip_invalid: bool, once: &str) -> Result<()>;
    /// Drops an import that is not written yet (or stops one being written).
    async fn cancel(&self, me: &Me, id: &str, once: &str) -> Result<()>;
}
