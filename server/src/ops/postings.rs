//! Writes journal entries: an `accounting-entries` record plus one `ledger_lines` row
//! per line, in the operation's transaction. Entries are never changed; a correction
//! is a reversing entry.

use chrono::NaiveDate;
use serde_json::Value as Json;
use uuid::Uuid;

use super::Work;
use crate::domain::collections::collection;
use crate::domain::ledger::{self, Line};
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::validate::Changes;
use crate::domain::value::Val;
use crate::error::{Error, Result};
use crate::store::{ledger as ledger_lines, records};

/// The `source_type`s of the entries Gable posts itself. Manual entries may not use
/// them, and these entries are corrected through their record's action, not by hand.
pub(super) const GABLE_SOURCES: &[&str] = &["charge", "payment", "refund"];

fn entries() -> &'static Collection {
    collection("accounting-entries").expect("accounting-entries is a collection")
}

/// An entry Gable posts for a record.
pub(super) struct Posting<'a> {
    pub lines: Vec<Line>,
    pub currency: &'a str,
    pub posted_on: NaiveDate,
    pub memo: String,
    pub source: (&'static str, Uuid),
    pub property: Option<Uuid>,
    pub reverses: Option<Uuid>,
}

pub(super) async fn post(w: &mut Work, p: Posting<'_>) -> Result<Record> {
    debug_assert!(ledger::is_balanced(&p.lines));
    let mut ch = Changes::default();
    let v = &mut ch.values;
    v.insert("lines", Val::Json(ledger::to_json(&p.lines, p.currency)));
    v.insert("currency", Val::Str(p.currency.to_string()));
    v.insert("posted_on", Val::Date(p.posted_on));
    v.insert("memo", Val::Str(p.memo));
    v.insert("source_type", Val::Str(p.source.0.to_string()));
    v.insert("source_id", Val::Uuid(p.source.1));
    v.insert("property_id", p.property.map(Val::Uuid).unwrap_or(Val::Null));
    v.insert("reverses_id", p.reverses.map(Val::Uuid).unwrap_or(Val::Null));
    let system = w.system.clone();
    let entry = records::insert(&mut w.tx, &system, entries(), ch, vec![], w.now).await?;
    write_lines(w, &entry, &p.lines).await?;
    Ok(entry)
}

/// Posts what a charge, payment or refund books: its lines, in its currency, for its
/// property, naming it as the source.
pub(super) async fn post_for(
    w: &mut Work,
    c: &Collection,
    rec: &Record,
    lines: Vec<Line>,
    posted_on: NaiveDate,
    memo: &str,
) -> Result<Record> {
    let currency = rec.currency().unwrap_or_default().to_string();
    let posting = Posting {
        lines,
        currency: &currency,
        posted_on,
        memo: memo.to_string(),
        source: source_of(c, rec),
        property: rec.property_id(c),
        reverses: None,
    };
    post(w, posting).await
}

/// The source of the entries Gable posts for a charge, payment or refund.
fn source_of(c: &Collection, rec: &Record) -> (&'static str, Uuid) {
    let source_type = GABLE_SOURCES.iter().find(|s| **s == c.object).copied().expect("Gable posts for charges, payments and refunds");
    (source_type, rec.id)
}

/// The lines of an entry as stored.
pub(super) fn lines_of(entry: &Record) -> Result<Vec<Line>> {
    let (Val::Json(lines), Some(currency)) = (entry.get("lines"), entry.currency()) else {
        return Err(Error::internal(anyhow::anyhow!("entry {} has no lines", entry.id)));
    };
    ledger::parse("lines", lines, currency)
}

/// Writes an entry's lines to `ledger_lines`, where balances are summed.
pub(super) async fn write_lines(w: &mut Work, entry: &Record, lines: &[Line]) -> Result<()> {
    let scope = w.scope.clone();
    ledger_lines::insert_lines(&mut w.tx, &scope, entry, lines).await
}

/// The entry a record posted that has not been reversed yet, if any.
async fn open_entry(w: &mut Work, source: (&'static str, Uuid)) -> Result<Option<Record>> {
    let system = w.system.clone();
    let all =
        records::find(&mut w.tx, &system, entries(), &[("source_type", Val::Str(source.0.into())), ("source_id", Val::Uuid(source.1))])
            .await?;
    let reversed: Vec<Uuid> = all.iter().filter_map(|e| e.get("reverses_id").as_uuid()).collect();
    Ok(all.into_iter().find(|e| e.get("reverses_id").is_null() && !reversed.contains(&e.id)))
}

/// Posts the reversing entry of what a record posted (a voided charge, a reversed payment).
pub(super) async fn reverse_posting_of(w: &mut Work, c: &Collection, rec: &Record, memo: &str) -> Result<()> {
    let source = source_of(c, rec);
    let Some(original) = open_entry(w, source).await? else {
        return Err(Error::internal(anyhow::anyhow!("{} {} has no posting to reverse", source.0, source.1)));
    };
    let lines = ledger::reversal(&lines_of(&original)?);
    let currency = original.currency().unwrap_or_default().to_string();
    let posting = Posting {
        lines,
        currency: &currency,
        posted_on: w.now.date_naive(),
        memo: memo.to_string(),
        source,
        property: original.get("property_id").as_uuid(),
        reverses: Some(original.id),
    };
    post(w, posting).await.map(|_| ())
}

/// A manual entry that reverses another must mirror it exactly, once, and may reverse
/// only manual entries: Gable's own postings are corrected by their record's action.
pub(super) async fn check_manual_reversal(w: &mut Work, lines: &Json, currency: &str, reverses: Uuid) -> Result<()> {
    let system = w.system.clone();
    let original = records::fetch(&mut w.tx, &system, entries(), reverses, true).await.map_err(|e| match e {
        Error::NotFound { .. } => Error::missing_reference("reverses_id", entries().object, reverses),
        e => e,
    })?;
    if let Some(source) = original.get("source_type").as_str().filter(|s| GABLE_SOURCES.contains(s)) {
        return Err(Error::validation(
            "reverses_id",
            format!(
                "names an entry Gable posted for a {source}; it is corrected through the {source}'s actions (void, reverse), not by hand"
            ),
        ));
    }
    let already = records::find(&mut w.tx, &system, entries(), &[("reverses_id", Val::Uuid(reverses))]).await?;
    if !already.is_empty() {
        return Err(Error::Conflict(format!("accounting entry {reverses} is already reversed by {}", already[0].id)));
    }
    if original.currency() != Some(currency) {
        return Err(Error::validation("currency", "must be the currency of the entry it reverses"));
    }
    if ledger::parse("lines", lines, currency)? != ledger::reversal(&lines_of(&original)?) {
        return Err(Error::validation("lines", "must mirror the entry it reverses: each line's debit and credit swapped"));
    }
    Ok(())
}
