//! Turns a create or update body into typed values, refusing anything that does not
//! fit the collection's description: unknown fields, read-only fields, wrong types,
//! missing required fields, broken cross-field rules.

use std::collections::HashMap;

use serde_json::{Map, Value as Json};

use super::ledger;
use super::record::Record;
use super::registry::{Access, Collection, Default as D, EnvRule, Field, Rule, Ty};
use super::value::{from_json, parse_money, Val};
use crate::error::{Error, Result};

/// Validated values to write. `values` holds only the fields to set.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    pub values: HashMap<&'static str, Val>,
    pub metadata: Option<Json>,
}

impl Changes {
    /// Changes to exactly these fields (what Gable itself sets, unvalidated).
    pub fn of(pairs: impl IntoIterator<Item = (&'static str, Val)>) -> Changes {
        Changes { values: pairs.into_iter().collect(), metadata: None }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Create,
    Update,
}

fn body_object(body: &Json) -> Result<&Map<String, Json>> {
    body.as_object().ok_or_else(|| Error::InvalidRequest { message: "the request body must be a JSON object".into(), param: None })
}

/// Validates a create body for live mode (`livemode`) or the sandbox; applies defaults.
pub fn create(c: &Collection, body: &Json, livemode: bool) -> Result<Changes> {
    let obj = body_object(body)?;
    let mut ch = parse_fields(c, obj, Mode::Create)?;
    for f in c.fields {
        // `null` where the field cannot be absent: as the description says, no `null` there.
        if ch.values.get(f.name).is_some_and(Val::is_null) && !f.nullable() {
            return Err(match default_value(f) {
                Some(_) => Error::validation(f.name, "cannot be null; leave it out to take its default"),
                None => Error::validation(f.name, "is required"),
            });
        }
        if ch.values.contains_key(f.name) {
            continue;
        }
        if f.required && f.access != Access::ReadOnly {
            return Err(Error::validation(f.name, "is required"));
        }
        if let Some(d) = default_value(f) {
            ch.values.insert(f.name, d);
        }
    }
    finish_money(c, &mut ch, None)?;
    check_environment(c, &ch, livemode)?;
    if !livemode {
        if let Some(f) = c.fields.iter().find(|f| f.env == EnvRule::SandboxRequired && !ch.values.contains_key(f.name)) {
            return Err(Error::validation(f.name, "is required in the sandbox"));
        }
    }
    check_rules(c, &merged(&ch, None))?;
    Ok(ch)
}

/// A field's default value, if it has one.
pub fn default_value(f: &Field) -> Option<Val> {
    Some(match f.default {
        D::None => return None,
        D::Str(s) => Val::Str(s.into()),
        D::Int(i) => Val::Int(i),
        D::Bool(b) => Val::Bool(b),
        D::Zero => Val::Money(0),
    })
}

/// Validates an update body against the current record, in its environment.
pub fn update(c: &Collection, body: &Json, current: &Record, livemode: bool) -> Result<Changes> {
    let obj = body_object(body)?;
    if obj.is_empty() {
        return Err(Error::InvalidRequest { message: "the body names no field to change".into(), param: None });
    }
    let mut ch = parse_fields(c, obj, Mode::Update)?;
    for (name, v) in &ch.values {
        let f = c.field(name).expect("parsed fields exist");
        if v.is_null() && !f.nullable() {
            return Err(Error::validation(*name, "cannot be removed"));
        }
    }
    finish_money(c, &mut ch, Some(current))?;
    check_environment(c, &ch, livemode)?;
    check_rules(c, &merged(&ch, Some(current)))?;
    Ok(ch)
}

/// The rules that differ between live mode and the sandbox, on the values being written.
fn check_environment(c: &Collection, ch: &Changes, livemode: bool) -> Result<()> {
    if !livemode {
        return Ok(());
    }
    for f in c.fields {
        let Some(v) = ch.values.get(f.name).filter(|v| !v.is_null()) else { continue };
        match f.env {
            EnvRule::Same => {}
            EnvRule::SandboxOnly | EnvRule::SandboxRequired => {
                return Err(Error::validation(f.name, "is accepted in the sandbox only; live mode records what really happened"));
            }
            EnvRule::HttpsInLive => {
                if !v.as_str().is_some_and(|s| s.starts_with("https://")) {
                    return Err(Error::validation(f.name, "must use https in live mode (the sandbox also takes http)"));
                }
            }
            EnvRule::LiveValues(allowed) => {
                if !v.as_str().is_some_and(|s| allowed.contains(&s)) {
                    return Err(Error::validation(f.name, format!("in live mode must be one of {}", allowed.join(", "))));
                }
            }
        }
    }
    Ok(())
}

fn parse_fields(c: &Collection, obj: &Map<String, Json>, mode: Mode) -> Result<Changes> {
    let mut ch = Changes::default();
    for (key, raw) in obj {
        if key == "metadata" && c.metadata {
            ch.metadata = Some(if raw.is_null() { Json::Object(Map::new()) } else { super::value::metadata(raw)? });
            continue;
        }
        let Some(f) = c.field(key) else {
            let system = super::registry::SYSTEM_FIELDS.contains(&key.as_str());
            return Err(if system {
                Error::validation(key.as_str(), "is set by Gable and cannot be written")
            } else {
                Error::validation(key.as_str(), format!("is not a field of {}; allowed: {}", c.name, writable_names(c, mode)))
            });
        };
        match (f.access, mode) {
            (Access::ReadOnly, _) => {
                let why = if f.name == "status" { "; it changes through actions" } else { "" };
                return Err(Error::validation(key.as_str(), format!("is read-only{why}")));
            }
            (Access::CreateOnly, Mode::Update) => {
                return Err(Error::validation(key.as_str(), "cannot be changed after creation"));
            }
            _ => {}
        }
        let v = from_json(f, raw)?;
        if v.is_null() && f.required {
            return Err(Error::validation(key.as_str(), "is required"));
        }
        ch.values.insert(f.name, v);
    }
    Ok(ch)
}

fn writable_names(c: &Collection, mode: Mode) -> String {
    let mut names: Vec<&str> = c
        .fields
        .iter()
        .filter(|f| f.access == Access::Write || (f.access == Access::CreateOnly && mode == Mode::Create))
        .map(|f| f.name)
        .collect();
    if c.metadata {
        names.push("metadata");
    }
    names.join(", ")
}

/// Money values arrive as raw JSON; convert them with the record's currency. A currency
/// may change only when every amount on the record is given again in the same request.
fn finish_money(c: &Collection, ch: &mut Changes, current: Option<&Record>) -> Result<()> {
    let has_lines = c.fields.iter().any(|f| f.ty == Ty::Json(super::registry::JsonShape::LedgerLines));
    if !c.has_money() && !has_lines {
        return Ok(());
    }
    let new_currency = ch.values.get("currency").and_then(|v| v.as_str().map(str::to_owned));
    let old_currency = current.and_then(|r| r.currency().map(str::to_owned));
    let currency = new_currency.clone().or(old_currency.clone());
    if let (Some(cur), Some(old), Some(rec)) = (&new_currency, &old_currency, current) {
        if cur != old {
            for f in c.fields.iter().filter(|f| f.ty == Ty::Money && f.access != Access::ReadOnly) {
                if !rec.get(f.name).is_null() && !ch.values.contains_key(f.name) {
                    return Err(Error::validation("currency", format!("changing the currency needs `{}` given again in it", f.name)));
                }
            }
        }
    }
    for f in c.fields.iter().filter(|f| f.ty == Ty::Money) {
        let Some(v) = ch.values.get_mut(f.name) else { continue };
        if let Val::Json(raw) = v {
            let cur =
                currency.as_deref().ok_or_else(|| Error::validation("currency", format!("is required when `{}` is given", f.name)))?;
            *v = Val::Money(parse_money(f.name, raw, cur)?);
        }
    }
    // Ledger lines carry amounts too: normalise them to the currency's exact form.
    for f in c.fields.iter().filter(|f| matches!(f.ty, Ty::Json(super::registry::JsonShape::LedgerLines))) {
        if let Some(Val::Json(lines)) = ch.values.get_mut(f.name) {
            let cur = currency.as_deref().ok_or_else(|| Error::validation("currency", "is required"))?;
            ledger::normalise_lines(f.name, lines, cur)?;
        }
    }
    Ok(())
}

/// The record's values after the change, for cross-field rules.
fn merged(ch: &Changes, current: Option<&Record>) -> HashMap<&'static str, Val> {
    let mut m = current.map(|r| r.values.clone()).unwrap_or_default();
    for (k, v) in &ch.values {
        m.insert(k, v.clone());
    }
    m
}

fn check_rules(c: &Collection, values: &HashMap<&'static str, Val>) -> Result<()> {
    let get = |n: &str| values.get(n).filter(|v| !v.is_null());
    for rule in c.rules {
        match rule {
            Rule::OneOf(names) => {
                if !names.iter().any(|n| get(n).is_some()) {
                    return Err(Error::validation(names[0], format!("one of {} is required", names.join(", "))));
                }
            }
            Rule::After { earlier, later } => {
                if let (Some(a), Some(b)) = (get(earlier), get(later)) {
                    let before = match (a, b) {
                        (Val::Date(a), Val::Date(b)) => a < b,
                        (Val::DateTime(a), Val::DateTime(b)) => a < b,
                        _ => true,
                    };
                    if !before {
                        return Err(Error::validation(*later, format!("must be after `{earlier}`")));
                    }
                }
            }
            Rule::Balanced(field) => {
                if let (Some(Val::Json(lines)), Some(Val::Str(currency))) = (get(field), get("currency")) {
                    ledger::check_balanced(field, lines, currency)?;
                }
            }
            // Needs the referenced record: checked by the store inside the write transaction.
            Rule::SameProperty(_) => {}
        }
    }
    Ok(())
}

/// Every field a create body may carry, for the API description.
pub fn create_fields(c: &Collection) -> impl Iterator<Item = &'static Field> + '_ {
    c.fields.iter().filter(|f| f.access != Access::ReadOnly)
}

/// Every field an update body may carry.
pub fn update_fields(c: &Collection) -> impl Iterator<Item = &'static Field> + '_ {
    c.fields.iter().filter(|f| f.access == Access::Write)
}
