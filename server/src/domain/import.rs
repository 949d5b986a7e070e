//! Bulk import's files, read row by row into the bodies the API's create takes (plain Rust:
//! a reader in, rows out; the engine that validates and writes them is the operations').
//!
//! Two forms:
//! - **CSV** (`text/csv`), UTF-8, one header row naming the columns, then a record per row.
//!   A column is a field of the collection (`number`, `bedrooms`), or a path into one:
//!   `address.city`, `metadata.floor`, and `unit_id.external_id` for a reference made by
//!   the external id of another record (in the file or already in Gable). Cells are text,
//!   typed by their field: whole numbers, decimals, `true`/`false` (also `yes`/`no`, `1`/
//!   `0`), amounts as written (the API takes decimal text, never a float), lists with `;`
//!   between items, structured values other than addresses as JSON text. An empty cell is
//!   a field left out.
//! - **NDJSON** (`application/x-ndjson`): one JSON object per line, the create's body as
//!   is, a reference by external id written `"unit_id": {"external_id": "U-1"}`. In a
//!   bundle of several collections each line names its own: `"collection": "units"`.
//!
//! What cannot be read (not UTF-8, a malformed line, a header naming nothing) is a
//! [`RowError`] naming the line, so a file's problems are reported all at once.

use std::collections::BTreeMap;
use std::io::Read;

use serde_json::{Map, Value as Json};

use crate::domain::collections::collection;
use crate::domain::registry::{Collection, JsonShape, Ty};

/// The file forms an import takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Ndjson,
}

impl Format {
    /// The form a request's `Content-Type` names (its parameters, such as `charset`,
    /// aside), or `None` for one that is not a form of import.
    pub fn of_content_type(content_type: &str) -> Option<Format> {
        let mime = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
        match mime.as_str() {
            "text/csv" => Some(Format::Csv),
            "application/x-ndjson" | "application/ndjson" | "application/jsonl" => Some(Format::Ndjson),
            _ => None,
        }
    }
}

/// The key by which a row refers to another record: `{"external_id": "U-1"}`.
pub const BY_EXTERNAL_ID: &str = "external_id";
/// Between the items of a list in a CSV cell.
pub const LIST_SEPARATOR: char = ';';

/// One row of a file: where it is, which collection it is for, and its create body.
#[derive(Debug, Clone)]
pub struct Row {
    /// The row's line in the file (1 is the first line; a CSV's header is line 1).
    pub line: u64,
    pub collection: &'static Collection,
    pub body: Json,
}

/// What is wrong with a row (or the file at a line), as the import's error report lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowError {
    pub line: u64,
    /// The field or column concerned, if one is.
    pub field: Option<String>,
    /// A stable code: `malformed_row`, `invalid_value`, `unknown_column`, … or the API's.
    pub code: String,
    pub message: String,
    /// The row's collection and own external id, where the line was read that far (the
    /// error report names the row by them).
    pub collection: Option<&'static str>,
    pub external_id: Option<String>,
}

impl RowError {
    pub fn new(line: u64, field: Option<&str>, code: &str, message: impl Into<String>) -> RowError {
        RowError { line, field: field.map(String::from), code: code.into(), message: message.into(), collection: None, external_id: None }
    }
}

/// How a CSV's header row becomes its columns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Header {
    /// The header names the columns as the API does (`number`, `address.city`,
    /// `property_id.external_id`): the API's and the CLI's uploads.
    #[default]
    AsWritten,
    /// The console's mapping, by the column's position (0 is the first): the column fills
    /// the path chosen for it, or nothing (`None`: left out). A column with no choice is
    /// matched by its name ([`suggest`]), and taken as written when nothing matches.
    Chosen(BTreeMap<usize, Option<String>>),
}

/// A column of a CSV header: the field it fills and the path inside it.
#[derive(Debug, Clone)]
struct Column {
    /// What it fills, as the API names it (`address.city`).
    name: String,
    field: &'static crate::domain::registry::Field,
    /// The keys below the field (`["city"]` for `address.city`); empty for the field itself.
    path: Vec<String>,
}

/// A CSV file's rows for one collection, read as they are asked for.
pub struct CsvRows<R: Read> {
    collection: &'static Collection,
    reader: csv::Reader<R>,
    /// One per column of the file; `None` for a column left out.
    columns: Vec<Option<Column>>,
}

impl<R: Read> CsvRows<R> {
    /// Reads the header; a header that names no field of the collection (or names one
    /// twice) is the file's error, at line 1.
    pub fn new(collection: &'static Collection, input: R, mapping: &Header) -> Result<CsvRows<R>, RowError> {
        let mut reader = csv::ReaderBuilder::new().has_headers(true).flexible(false).from_reader(input);
        let header = reader.headers().map_err(|e| read_error(&e, 1))?.clone();
        let mut columns: Vec<Option<Column>> = vec![];
        for (at, raw) in header.iter().enumerate() {
            // A spreadsheet's byte-order mark is not part of the first name.
            let name = raw.trim_start_matches('\u{feff}').trim().to_string();
            let target = match mapping {
                Header::AsWritten => Some(name.clone()),
                Header::Chosen(chosen) => match chosen.get(&at) {
                    Some(choice) => choice.clone(),
                    None => Some(suggest(collection, &name).unwrap_or_else(|| name.clone())),
                },
            };
            let Some(target) = target else {
                columns.push(None);
                continue;
            };
            // The file's own name for the column, and what it fills when that differs.
            let called = if target == name { format!("`{name}`") } else { format!("`{name}` (as `{target}`)") };
            let column = column(collection, &target).map_err(|why| RowError::new(1, Some(&name), "unknown_column", why))?;
            if columns.iter().flatten().any(|c| c.name == column.name) {
                return Err(RowError::new(1, Some(&name), "duplicate_column", format!("the header names {called} twice")));
            }
            columns.push(Some(column));
        }
        let named: Vec<&Column> = columns.iter().flatten().collect();
        if named.is_empty() {
            return Err(RowError::new(1, None, "empty_header", "the file has no header row naming its columns"));
        }
        // A field is given whole (`address`, as JSON text) or in parts (`address.city`).
        if let Some(whole) =
            named.iter().find(|w| w.path.is_empty() && named.iter().any(|p| !p.path.is_empty() && p.field.name == w.field.name))
        {
            return Err(RowError::new(1, Some(&whole.name), "duplicate_column", format!("`{}` is named whole and in parts", whole.name)));
        }
        Ok(CsvRows { collection, reader, columns })
    }
}

impl<R: Read> Iterator for CsvRows<R> {
    type Item = Result<Row, RowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut record = csv::StringRecord::new();
        match self.reader.read_record(&mut record) {
            Ok(false) => None,
            Err(e) => {
                let line = e.position().map(|p| p.line()).unwrap_or(0);
                // A line that cannot be read ends the file: what follows may be misaligned.
                Some(Err(read_error(&e, line)))
            }
            Ok(true) => {
                let line = record.position().map(|p| p.line()).unwrap_or(0);
                Some(row_of(self.collection, &self.columns, &record, line))
            }
        }
    }
}

fn read_error(e: &csv::Error, line: u64) -> RowError {
    match e.kind() {
        csv::ErrorKind::Utf8 { .. } => RowError::new(line, None, "invalid_encoding", "the line is not UTF-8 text (save the file as UTF-8)"),
        csv::ErrorKind::UnequalLengths { expected_len, len, .. } => {
            RowError::new(line, None, "malformed_row", format!("the line has {len} cells where the header has {expected_len}"))
        }
        _ => RowError::new(line, None, "malformed_row", format!("the line cannot be read as CSV: {e}")),
    }
}

/// What a header name fills.
fn column(c: &'static Collection, name: &str) -> Result<Column, String> {
    let mut parts = name.split('.');
    let first = parts.next().unwrap_or_default();
    let path: Vec<String> = parts.map(String::from).collect();
    let field = crate::domain::validate::create_fields(c)
        .find(|f| f.name == first)
        .or_else(|| (c.metadata && first == "metadata").then_some(&METADATA))
        .ok_or_else(|| format!("`{first}` is not a field a create of {} takes", c.name))?;
    let fits = match (field.ty, path.as_slice()) {
        (_, []) => true,
        (Ty::Ref(_), [key]) => key == BY_EXTERNAL_ID,
        (Ty::Json(JsonShape::Address), [_]) | (Ty::Metadata, [_]) => true,
        _ => false,
    };
    if !fits || path.iter().any(String::is_empty) {
        return Err(match field.ty {
            Ty::Ref(_) => format!("`{name}`: a reference is an id (`{first}`) or another record's external id (`{first}.external_id`)"),
            _ => format!("`{name}`: `{first}` has no part named so"),
        });
    }
    Ok(Column { name: name.to_string(), field, path })
}

/// `metadata`, which collections have without declaring it as a field.
static METADATA: crate::domain::registry::Field = crate::domain::registry::Field::new("metadata", Ty::Metadata);

fn row_of(c: &'static Collection, columns: &[Option<Column>], record: &csv::StringRecord, line: u64) -> Result<Row, RowError> {
    row_body(c, columns, record, line).map_err(|mut e| {
        // A row with a bad cell is still named by its collection and external id.
        e.collection = Some(c.name);
        e.external_id = columns
            .iter()
            .zip(record.iter())
            .find(|(col, cell)| col.as_ref().is_some_and(|col| col.name == BY_EXTERNAL_ID) && !cell.is_empty())
            .map(|(_, cell)| cell.to_string());
        e
    })
}

fn row_body(c: &'static Collection, columns: &[Option<Column>], record: &csv::StringRecord, line: u64) -> Result<Row, RowError> {
    let mut body = Map::new();
    for (column, cell) in columns.iter().zip(record.iter()) {
        let Some(column) = column else { continue };
        if cell.is_empty() {
            continue;
        }
        let bad = |why: String| RowError::new(line, Some(&column.name), "invalid_value", why);
        let value = cell_value(column, cell).map_err(bad)?;
        let whole_and_in_parts = || bad(format!("`{}` is given whole and in parts", column.field.name));
        // `column` allows one part below a field at most (`address.city`).
        let previous = match column.path.first() {
            None => body.insert(column.field.name.to_string(), value),
            Some(part) => match body.entry(column.field.name).or_insert_with(|| Json::Object(Map::new())) {
                Json::Object(parts) => parts.insert(part.clone(), value),
                _ => return Err(whole_and_in_parts()),
            },
        };
        if previous.is_some() {
            return Err(whole_and_in_parts());
        }
    }
    Ok(Row { line, collection: c, body: Json::Object(body) })
}

/// A cell's text as its field's JSON value.
fn cell_value(column: &Column, cell: &str) -> Result<Json, String> {
    if !column.path.is_empty() {
        // An address's line, a metadata value, another record's external id: text.
        return Ok(Json::String(cell.to_string()));
    }
    let text = cell.trim();
    Ok(match column.field.ty {
        Ty::Int { .. } => Json::from(text.parse::<i64>().map_err(|_| format!("`{cell}` is not a whole number"))?),
        Ty::Num { .. } => {
            let n: f64 = text.parse().map_err(|_| format!("`{cell}` is not a number"))?;
            serde_json::Number::from_f64(n).map(Json::Number).ok_or_else(|| format!("`{cell}` is not a number"))?
        }
        Ty::Bool => match text.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Json::Bool(true),
            "false" | "no" | "0" => Json::Bool(false),
            _ => return Err(format!("`{cell}` is not true or false")),
        },
        Ty::StrList { .. } | Ty::RefList(_) => {
            Json::Array(text.split(LIST_SEPARATOR).map(str::trim).filter(|s| !s.is_empty()).map(|s| Json::String(s.into())).collect())
        }
        Ty::Json(_) | Ty::Metadata => serde_json::from_str(text).map_err(|_| {
            format!("`{}` is written as JSON text in one cell (or, for an address or metadata, one column per part)", column.field.name)
        })?,
        // Amounts stay decimal text (the API reads them exactly); the rest is text the
        // create's validation reads.
        _ => Json::String(cell.to_string()),
    })
}

/// An NDJSON file's rows, for one collection or (`collection: None`) a bundle whose lines
/// each name theirs.
pub struct NdjsonRows<R: Read> {
    collection: Option<&'static Collection>,
    lines: std::io::Lines<std::io::BufReader<R>>,
    line: u64,
}

impl<R: Read> NdjsonRows<R> {
    pub fn new(collection: Option<&'static Collection>, input: R) -> NdjsonRows<R> {
        use std::io::BufRead;
        NdjsonRows { collection, lines: std::io::BufReader::new(input).lines(), line: 0 }
    }
}

impl<R: Read> Iterator for NdjsonRows<R> {
    type Item = Result<Row, RowError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            self.line += 1;
            let line = self.line;
            let text = match self.lines.next()? {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                    return Some(Err(RowError::new(line, None, "invalid_encoding", "the line is not UTF-8 text (save the file as UTF-8)")))
                }
                Err(e) => return Some(Err(RowError::new(line, None, "malformed_row", format!("the file could not be read: {e}")))),
            };
            let text = text.trim_start_matches('\u{feff}').trim();
            // Blank lines (a trailing newline, spacing) carry nothing.
            if text.is_empty() {
                continue;
            }
            return Some(self.row(line, text));
        }
    }
}

impl<R: Read> NdjsonRows<R> {
    fn row(&self, line: u64, text: &str) -> Result<Row, RowError> {
        let Ok(Json::Object(mut body)) = serde_json::from_str::<Json>(text) else {
            return Err(RowError::new(line, None, "malformed_row", "the line is not one JSON object"));
        };
        let named = match body.remove("collection") {
            None => None,
            Some(Json::String(name)) => Some(
                collection(&name)
                    .ok_or_else(|| RowError::new(line, Some("collection"), "invalid_value", format!("`{name}` is not a collection")))?,
            ),
            Some(_) => return Err(RowError::new(line, Some("collection"), "invalid_value", "`collection` names a collection, as text")),
        };
        let c = match (self.collection, named) {
            (Some(file), Some(row)) if file.name != row.name => {
                return Err(RowError::new(
                    line,
                    Some("collection"),
                    "invalid_value",
                    format!("the file is of {}, the line of {}", file.name, row.name),
                ))
            }
            (Some(file), _) => file,
            (None, Some(row)) => row,
            (None, None) => {
                return Err(RowError::new(
                    line,
                    Some("collection"),
                    "missing_collection",
                    "a line of a bundle names its collection (`\"collection\": \"units\"`)",
                ))
            }
        };
        Ok(Row { line, collection: c, body: Json::Object(body) })
    }
}

/// The other records a row refers to by external id: (field, target collection,
/// external id), in the order of the collection's fields.
pub fn references(row: &Row) -> Vec<(&'static str, &'static str, String)> {
    let mut out = vec![];
    for f in row.collection.fields {
        let Ty::Ref(target) = f.ty else { continue };
        if let Some(id) = row.body.get(f.name).and_then(|v| v.get(BY_EXTERNAL_ID)).and_then(Json::as_str) {
            out.push((f.name, target, id.to_string()));
        }
    }
    out
}

/// The parts of an address, as CSV columns take them (`address.city`).
pub const ADDRESS_PARTS: &[&str] = &["line1", "line2", "city", "region", "postal_code", "country"];

/// Whether a collection's records are made by uploading a file (the imports themselves):
/// its create takes the file, not a JSON body (`http::api::imports`).
pub fn is_uploaded(c: &Collection) -> bool {
    c.name == "imports"
}

/// Whether files of a collection can be imported: the collections whose records carry an
/// `external_id` (what a client writes; not Gable's own records or a tenant's settings).
pub fn importable(c: &Collection) -> bool {
    c.fields.iter().any(|f| f.name == BY_EXTERNAL_ID && f.unique)
}

/// A CSV template of a collection, from the registry: every column a create takes (the
/// record's own `external_id` first, then the required fields, then the rest; a reference
/// by external id, an address in parts) and an example value for each. `None` for a
/// collection that cannot be imported. Fields only the sandbox takes are left out: an
/// import is a portfolio, the same in both environments.
pub fn template(c: &'static Collection) -> Option<Vec<(String, String)>> {
    use crate::domain::registry::EnvRule;
    if !importable(c) {
        return None;
    }
    let mut fields: Vec<_> = crate::domain::validate::create_fields(c)
        .filter(|f| !matches!(f.env, EnvRule::SandboxOnly | EnvRule::SandboxRequired))
        .filter(|f| !matches!(f.ty, Ty::Metadata))
        .collect();
    // Stable: the record's id, what must be given, then the rest, each in the registry's order.
    fields.sort_by_key(|f| (f.name != BY_EXTERNAL_ID, !f.required));
    let mut columns = vec![];
    for f in fields {
        match f.ty {
            Ty::Ref(target) => columns.push((format!("{}.{BY_EXTERNAL_ID}", f.name), example_external_id(target))),
            Ty::Json(JsonShape::Address) => {
                for part in ADDRESS_PARTS {
                    let example = match *part {
                        "line1" => "1 Example Street",
                        "city" => "Springfield",
                        "postal_code" => "12345",
                        "country" => "US",
                        _ => "",
                    };
                    columns.push((format!("{}.{part}", f.name), example.to_string()));
                }
            }
            _ if f.name == BY_EXTERNAL_ID => columns.push((f.name.to_string(), example_external_id(c.name))),
            ty => columns.push((f.name.to_string(), example_value(ty, f.default))),
        }
    }
    Some(columns)
}

/// The columns a CSV of a collection can have, as the API names them: the template's
/// (an external id, a reference by external id, an address in parts) and each reference
/// by Gable's own id. What the console's mapping offers for a column.
pub fn column_choices(c: &'static Collection) -> Vec<String> {
    let mut choices: Vec<String> = template(c).unwrap_or_default().into_iter().map(|(name, _)| name).collect();
    for f in crate::domain::validate::create_fields(c).filter(|f| matches!(f.ty, Ty::Ref(_))) {
        if let Some(at) = choices.iter().position(|name| name.split('.').next() == Some(f.name)) {
            choices.insert(at + 1, f.name.to_string());
        }
    }
    choices
}

/// The column a header most likely means, for the console to offer first: the API's own
/// name as written (`number`, `address.city`, `property_id`); else a name for people,
/// compared without case, spaces or punctuation (`Unit number`, `Bedrooms`), where a
/// reference (`Property`, `Property ID`) is another system's id, so the record's external
/// id, and an address's parts go by their usual names (`Street`, `ZIP`, `State`). `None`
/// when nothing fits.
pub fn suggest(c: &'static Collection, header: &str) -> Option<String> {
    let header = header.trim_start_matches('\u{feff}').trim();
    if column(c, header).is_ok() {
        return Some(header.to_string());
    }
    let key = compact(header);
    if key.is_empty() {
        return None;
    }
    let own = compact(c.object);
    // `Unit number` in a file of units means `number`.
    let keys: Vec<&str> = [Some(key.as_str()), key.strip_prefix(own.as_str()).filter(|k| !k.is_empty())].into_iter().flatten().collect();
    let is = |names: &[&str]| keys.iter().any(|k| names.iter().any(|n| compact(n) == *k));
    if importable(c) && is(&["id", "external_id", "external_ref", "reference", "ref", "legacy_id", "old_id", "source_id"]) {
        return Some(BY_EXTERNAL_ID.into());
    }
    for f in crate::domain::validate::create_fields(c) {
        match f.ty {
            Ty::Metadata => {}
            Ty::Ref(_) => {
                let base = f.name.strip_suffix("_id").unwrap_or(f.name);
                let by_external =
                    [f.name, base, &format!("{base}_external_id"), &format!("{base}_ref"), &format!("{}_external_id", f.name)]
                        .map(String::from);
                if is(&by_external.iter().map(String::as_str).collect::<Vec<_>>()) {
                    return Some(format!("{}.{BY_EXTERNAL_ID}", f.name));
                }
            }
            Ty::Json(JsonShape::Address) => {
                for (part, names) in ADDRESS_NAMES {
                    let prefixed: Vec<String> = names.iter().chain([part]).map(|n| format!("{}_{n}", f.name)).collect();
                    if is(names) || is(&[part]) || is(&prefixed.iter().map(String::as_str).collect::<Vec<_>>()) {
                        return Some(format!("{}.{part}", f.name));
                    }
                }
            }
            _ if is(&[f.name]) => return Some(f.name.to_string()),
            _ => {}
        }
    }
    None
}

/// An address's parts and the other names files give them.
const ADDRESS_NAMES: &[(&str, &[&str])] = &[
    ("line1", &["street", "street_address", "address", "address_line_1", "address1", "line_1"]),
    ("line2", &["address_line_2", "address2", "line_2", "street_2"]),
    ("city", &["town"]),
    ("region", &["state", "province", "county"]),
    ("postal_code", &["zip", "zip_code", "postcode", "post_code"]),
    ("country", &["country_code"]),
];

/// A name without case, spaces or punctuation: `Postal Code`, `postal_code` and
/// `postalCode` are one.
fn compact(name: &str) -> String {
    name.chars().filter(char::is_ascii_alphanumeric).map(|ch| ch.to_ascii_lowercase()).collect()
}

/// `UNIT-1`: how a template's example rows name records by external id.
fn example_external_id(collection_name: &str) -> String {
    let object = collection(collection_name).map(|c| c.object).unwrap_or(collection_name);
    format!("{}-1", object.to_ascii_uppercase().replace('_', "-"))
}

/// An example cell of a type; empty where no one value reads as an example (a list of ids,
/// a structure).
fn example_value(ty: Ty, default: crate::domain::registry::Default) -> String {
    use crate::domain::registry::Default as D;
    match (ty, default) {
        (Ty::Enum(_), D::Str(d)) => d.to_string(),
        (Ty::Enum(values), _) => values.first().map(|v| v.to_string()).unwrap_or_default(),
        (Ty::Int { min, max }, _) => 1.clamp(min, max).to_string(),
        (Ty::Num { min, max }, _) => format!("{}", 1.0_f64.clamp(min, max)),
        (Ty::Money, _) => "100.00".into(),
        (Ty::Currency, _) => "USD".into(),
        (Ty::Bool, _) => "false".into(),
        (Ty::Date, _) => "2026-01-31".into(),
        (Ty::DateTime, _) => "2026-01-31T09:00:00Z".into(),
        (Ty::Email, _) => "name@example.com".into(),
        (Ty::Url | Ty::Origin, _) => "https://www.example.com".into(),
        (Ty::Str { .. } | Ty::Text, _) => "Example".into(),
        (Ty::StrList { .. }, _) => "first;second".into(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::domain::collections::named;

    fn csv_rows(c: &str, text: &str) -> Result<Vec<Result<Row, RowError>>, RowError> {
        Ok(CsvRows::new(named(c).unwrap(), text.as_bytes(), &Header::AsWritten)?.collect())
    }

    #[test]
    fn a_csv_row_becomes_the_create_body_its_fields_type() {
        let text = "\u{feff}number,bedrooms,bathrooms,property_id.external_id,external_id,metadata.floor\n\
                    1A,2,1.5,P-1,U-1,ground\n\
                    1B,,2,P-1,U-2,\n";
        let rows = csv_rows("units", text).unwrap();
        let first = rows[0].clone().unwrap();
        assert_eq!(first.line, 2);
        assert_eq!(
            first.body,
            json!({ "number": "1A", "bedrooms": 2, "bathrooms": 1.5, "property_id": { "external_id": "P-1" },
                    "external_id": "U-1", "metadata": { "floor": "ground" } })
        );
        assert_eq!(references(&first), vec![("property_id", "properties", "P-1".to_string())]);
        // Empty cells are fields left out.
        assert_eq!(
            rows[1].clone().unwrap().body,
            json!({ "number": "1B", "bathrooms": 2.0, "property_id": { "external_id": "P-1" }, "external_id": "U-2" })
        );
    }

    #[test]
    fn addresses_amounts_and_flags_are_read_as_the_api_takes_them() {
        let text = "name,kind,address.line1,address.city,address.country\nMaple Court,residential,1 Maple St,Portland,US\n";
        let row = csv_rows("properties", text).unwrap().remove(0).unwrap();
        assert_eq!(row.body["address"], json!({ "line1": "1 Maple St", "city": "Portland", "country": "US" }));
        let text = "unit_id,rent,currency,start_date\n0192f0c0-0000-7000-8000-000000000000,1250.50,USD,2026-01-01\n";
        let row = csv_rows("leases", text).unwrap().remove(0).unwrap();
        assert_eq!(row.body["rent"], json!("1250.50"), "amounts stay decimal text");
    }

    #[test]
    fn a_bad_header_or_line_names_where() {
        let e = csv_rows("units", "number,floors\n1A,3\n").err().unwrap();
        assert_eq!((e.line, e.field.as_deref(), e.code.as_str()), (1, Some("floors"), "unknown_column"));
        let e = csv_rows("units", "number,number\n").err().unwrap();
        assert_eq!(e.code, "duplicate_column");
        let e = csv_rows("properties", "name,address,address.city\n").err().unwrap();
        assert_eq!((e.code.as_str(), e.field.as_deref()), ("duplicate_column", Some("address")));
        let e = csv_rows("units", "number,property_id.name\n").err().unwrap();
        assert!(e.message.contains("external id"), "{e:?}");
        let rows = csv_rows("units", "number,bedrooms\n1A,two\n1B\n").unwrap();
        let bad = rows[0].clone().unwrap_err();
        assert_eq!((bad.line, bad.field.as_deref(), bad.code.as_str()), (2, Some("bedrooms"), "invalid_value"));
        let short = rows[1].clone().unwrap_err();
        assert_eq!((short.line, short.code.as_str()), (3, "malformed_row"));
        let latin1: &[u8] = b"number\nCaf\xe9\n";
        let rows: Vec<_> = CsvRows::new(named("units").unwrap(), latin1, &Header::AsWritten).unwrap().collect();
        assert_eq!(rows[0].clone().unwrap_err().code, "invalid_encoding");
    }

    #[test]
    fn ndjson_lines_are_bodies_and_a_bundle_names_each_collection() {
        let text = "{\"collection\":\"properties\",\"name\":\"A\",\"external_id\":\"P-1\"}\n\n\
                    {\"collection\":\"units\",\"number\":\"1A\",\"property_id\":{\"external_id\":\"P-1\"}}\n\
                    not json\n{\"number\":\"1B\"}\n{\"collection\":\"nothing\"}\n";
        let rows: Vec<_> = NdjsonRows::new(None, text.as_bytes()).collect();
        let first = rows[0].clone().unwrap();
        assert_eq!((first.line, first.collection.name), (1, "properties"));
        assert_eq!(first.body, json!({ "name": "A", "external_id": "P-1" }));
        let unit = rows[1].clone().unwrap();
        assert_eq!((unit.line, unit.collection.name), (3, "units"));
        assert_eq!(references(&unit), vec![("property_id", "properties", "P-1".to_string())]);
        assert_eq!(rows[2].clone().unwrap_err().code, "malformed_row");
        assert_eq!(rows[3].clone().unwrap_err().code, "missing_collection");
        assert_eq!(rows[4].clone().unwrap_err().field.as_deref(), Some("collection"));
        // A file of one collection: lines need not name it, and may not name another.
        let rows: Vec<_> =
            NdjsonRows::new(Some(named("units").unwrap()), "{\"number\":\"1A\"}\n{\"collection\":\"leases\"}\n".as_bytes()).collect();
        assert_eq!(rows[0].clone().unwrap().collection.name, "units");
        assert_eq!(rows[1].clone().unwrap_err().code, "invalid_value");
    }

    #[test]
    fn every_importable_collection_has_a_template_its_own_reader_takes() {
        use crate::domain::collections::COLLECTIONS;
        let mut made = 0;
        for c in COLLECTIONS {
            let Some(columns) = template(c) else {
                assert!(!importable(c), "{}", c.name);
                continue;
            };
            made += 1;
            let header: Vec<&str> = columns.iter().map(|(h, _)| h.as_str()).collect();
            assert_eq!(header[0], "external_id", "{}: the record's own id first", c.name);
            for f in crate::domain::validate::create_fields(c).filter(|f| f.required) {
                assert!(header.iter().any(|h| h.split('.').next() == Some(f.name)), "{}: required {} has a column", c.name, f.name);
            }
            let mut text = String::new();
            let mut w = csv::Writer::from_writer(vec![]);
            w.write_record(&header).unwrap();
            w.write_record(columns.iter().map(|(_, e)| e.as_str())).unwrap();
            text.push_str(&String::from_utf8(w.into_inner().unwrap()).unwrap());
            let rows = csv_rows(c.name, &text).unwrap_or_else(|e| panic!("{}: {e:?}", c.name));
            let row = rows[0].clone().unwrap_or_else(|e| panic!("{}: {e:?}", c.name));
            assert_eq!(row.body["external_id"], json!(example_external_id(c.name)), "{}", c.name);
        }
        assert_eq!(made, 31);
        assert!(template(named("events").unwrap()).is_none() && template(named("users").unwrap()).is_none());
        let units: Vec<String> = template(named("units").unwrap()).unwrap().into_iter().map(|(h, _)| h).collect();
        assert_eq!(units[..3], ["external_id", "property_id.external_id", "number"]);
    }

    #[test]
    fn a_header_for_people_is_matched_to_the_columns_it_means() {
        let units = named("units").unwrap();
        let props = named("properties").unwrap();
        let guess = |c, h: &str| suggest(c, h);
        // The API's names as written, including a reference by Gable's id.
        assert_eq!(guess(units, "number").as_deref(), Some("number"));
        assert_eq!(guess(units, "property_id").as_deref(), Some("property_id"));
        assert_eq!(guess(props, "address.city").as_deref(), Some("address.city"));
        // Names for people.
        assert_eq!(guess(units, "Unit Number").as_deref(), Some("number"));
        assert_eq!(guess(units, "Bedrooms").as_deref(), Some("bedrooms"));
        assert_eq!(guess(units, "Property ID").as_deref(), Some("property_id.external_id"));
        assert_eq!(guess(units, "property").as_deref(), Some("property_id.external_id"));
        assert_eq!(guess(units, "ID").as_deref(), Some("external_id"));
        assert_eq!(guess(props, "ZIP").as_deref(), Some("address.postal_code"));
        assert_eq!(guess(props, "State").as_deref(), Some("address.region"));
        assert_eq!(guess(props, "Street").as_deref(), Some("address.line1"));
        assert_eq!(guess(units, "Floor plan colour"), None);
        assert_eq!(guess(units, " "), None);
    }

    #[test]
    fn a_chosen_mapping_renames_leaves_out_and_matches_the_rest() {
        let units = named("units").unwrap();
        let text = "Unit No,Notes,Property,Beds\n1A,corner,P-1,2\n";
        // As written, the header is refused: the API's names only.
        assert_eq!(CsvRows::new(units, text.as_bytes(), &Header::AsWritten).err().unwrap().code, "unknown_column");
        let chosen = Header::Chosen(BTreeMap::from([(0, Some("number".to_string())), (1, None), (3, Some("bedrooms".to_string()))]));
        let rows: Vec<_> = CsvRows::new(units, text.as_bytes(), &chosen).unwrap().collect();
        assert_eq!(rows[0].clone().unwrap().body, json!({ "number": "1A", "property_id": { "external_id": "P-1" }, "bedrooms": 2 }));
        // Two columns filling one field, or a choice that is no column, name the header.
        let twice = Header::Chosen(BTreeMap::from([(0, Some("number".to_string())), (1, Some("number".to_string()))]));
        let e = CsvRows::new(units, text.as_bytes(), &twice).err().unwrap();
        assert_eq!((e.code.as_str(), e.field.as_deref()), ("duplicate_column", Some("Notes")));
        assert!(e.message.contains("`Notes` (as `number`)"), "{e:?}");
        let wrong = Header::Chosen(BTreeMap::from([(0, Some("number".to_string())), (1, Some("floors".to_string()))]));
        assert_eq!(CsvRows::new(units, text.as_bytes(), &wrong).err().unwrap().field.as_deref(), Some("Notes"));
        let none = Header::Chosen((0..4).map(|i| (i, None)).collect());
        assert_eq!(CsvRows::new(units, text.as_bytes(), &none).err().unwrap().code, "empty_header");
    }

    #[test]
    fn the_choices_of_a_column_are_the_templates_and_references_by_id() {
        let choices = column_choices(named("units").unwrap());
        assert_eq!(choices[..4], ["external_id", "property_id.external_id", "property_id", "number"]);
    }

    #[test]
    fn content_types_name_the_forms() {
        assert_eq!(Format::of_content_type("text/csv; charset=utf-8"), Some(Format::Csv));
        assert_eq!(Format::of_content_type("application/x-ndjson"), Some(Format::Ndjson));
        assert_eq!(Format::of_content_type("application/json"), None);
    }
}
