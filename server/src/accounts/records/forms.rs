//! A form as the API's request body, and the API's refusals in a person's words.
//!
//! Forms send text; the body takes typed JSON. Each value is turned into what the field's
//! type takes (a number, `true`, a list), and the API's own validation (`domain::validate`,
//! through the operations) decides the rest, so the console accepts exactly what the API
//! accepts and refuses it with the same reason, shown next to the field it names.

use gable_app::service::{ConsoleError, ADDRESS_PARTS};
use serde_json::{json, Map, Value as Json};

use super::describe::field_label;
use crate::domain::registry::{Field, JsonShape, Ty};
use crate::error::Error;

/// Longest value a form field may carry (the longest text field holds 10,000 characters;
/// a structured value a little more).
const MAX_VALUE: usize = 100_000;

fn invalid(field: &str, message: impl Into<String>) -> ConsoleError {
    ConsoleError::Invalid { field: field.into(), message: message.into() }
}

/// One form value as the JSON the field takes; `None` for an empty one.
pub fn value(f: &Field, text: &str) -> Result<Option<Json>, ConsoleError> {
    if text.len() > MAX_VALUE {
        return Err(invalid(f.name, format!("{} is too long.", field_label(f.name))));
    }
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    let label = field_label(f.name);
    Ok(Some(match f.ty {
        Ty::Int { .. } => json!(t.parse::<i64>().map_err(|_| invalid(f.name, format!("{label}: enter a whole number.")))?),
        Ty::Num { .. } => {
            let n: f64 = t.parse().map_err(|_| invalid(f.name, format!("{label}: enter a number.")))?;
            serde_json::Number::from_f64(n).map(Json::Number).ok_or_else(|| invalid(f.name, format!("{label}: enter a number.")))?
        }
        // A decimal text, as the API takes it (never a float).
        Ty::Money => json!(t.replace(',', "")),
        Ty::Bool => match t {
            "true" | "yes" | "on" => json!(true),
            "false" | "no" | "off" => json!(false),
            _ => return Err(invalid(f.name, format!("{label}: choose yes or no."))),
        },
        // `<input type="datetime-local">` sends no zone; the form says times are UTC.
        Ty::DateTime => {
            let full = match t.len() {
                16 => format!("{t}:00Z"),
                19 => format!("{t}Z"),
                _ => t.to_string(),
            };
            json!(full)
        }
        Ty::StrList { .. } | Ty::RefList(_) => {
            json!(t.split(['\n', ',']).map(str::trim).filter(|s| !s.is_empty()).collect::<Vec<_>>())
        }
        Ty::Json(_) | Ty::Metadata => {
            serde_json::from_str::<Json>(t).map_err(|e| invalid(f.name, format!("{label}: this is not valid JSON ({e}).")))?
        }
        _ => json!(t),
    }))
}

/// The form's values by field: an address's parts (`address.city`) gathered into one
/// object, every other value as typed. A field with nothing filled in is `None`.
pub fn values(fields: &[&'static Field], form: &[(String, String)]) -> Result<Vec<(&'static Field, Option<Json>)>, ConsoleError> {
    let mut out: Vec<(&'static Field, Option<Json>)> = vec![];
    for (name, text) in form {
        let (base, part) = name.split_once('.').map_or((name.as_str(), None), |(b, p)| (b, Some(p)));
        let Some(f) = fields.iter().copied().find(|f| f.name == base) else {
            return Err(invalid(base, format!("{} cannot be set here.", field_label(base))));
        };
        let at = match out.iter().position(|(g, _)| g.name == f.name) {
            Some(_) if part.is_none() => return Err(invalid(base, format!("{} was given twice.", field_label(base)))),
            Some(at) => at,
            None => {
                out.push((f, None));
                out.len() - 1
            }
        };
        match (part, f.ty) {
            (Some(part), Ty::Json(JsonShape::Address)) => {
                if !ADDRESS_PARTS.iter().any(|(p, _)| *p == part) || text.len() > 500 {
                    return Err(invalid(base, format!("{} has no part `{part}`.", field_label(base))));
                }
                let t = text.trim();
                if !t.is_empty() {
                    let obj = out[at].1.get_or_insert_with(|| Json::Object(Map::new()));
                    if let Some(o) = obj.as_object_mut() {
                        o.insert(part.to_string(), json!(t));
                    }
                }
            }
            (Some(_), _) => return Err(invalid(base, format!("{} cannot be set here.", field_label(base)))),
            (None, _) => out[at].1 = value(f, text)?,
        }
    }
    Ok(out)
}

/// The body of a create: every field the form filled in, among `fields`.
pub fn body(fields: &[&'static Field], form: &[(String, String)]) -> Result<Map<String, Json>, ConsoleError> {
    Ok(values(fields, form)?.into_iter().filter_map(|(f, v)| v.map(|v| (f.name.to_string(), v))).collect())
}

/// The API's refusal of a write, in words for the page; `what` names the collection.
pub fn refusal<'a>(doing: &'static str, what: &'a str) -> impl FnOnce(Error) -> ConsoleError + 'a {
    move |e| match e {
        Error::Validation { param, message } | Error::InvalidParameter { param, message } => {
            let message = message.strip_prefix(&format!("{param}: ")).unwrap_or(&message).trim_end_matches('.').to_string();
            // `address.city` is the address's city; `lines[0].debit` a line's debit.
            let (field, rest) = match param.find(['.', '[']) {
                Some(at) => (&param[..at], Some(param[at..].trim_start_matches('.'))),
                None => (param.as_str(), None),
            };
            let part = rest.map(|r| {
                let named = ADDRESS_PARTS.iter().find(|(p, _)| *p == r).map_or(r, |(_, label)| *label);
                format!(" ({})", named.to_lowercase())
            });
            invalid(field, format!("{}{} {message}.", field_label(field), part.unwrap_or_default()))
        }
        Error::InvalidRequest { message, param } => invalid(param.as_deref().unwrap_or(""), sentence(&message)),
        Error::InsufficientScope { scope, .. } => {
            ConsoleError::Forbidden(format!("Your role does not allow changing {what} (it needs the permission `{scope}`)."))
        }
        Error::PropertyForbidden(m) => ConsoleError::Forbidden(sentence(&m)),
        Error::NotFound { message, .. } => ConsoleError::NotFound(sentence(&message).trim_end_matches('.').to_string()),
        Error::InvalidStateTransition { message, .. }
        | Error::Immutable(message)
        | Error::Conflict(message)
        | Error::MethodNotAllowed { message, .. } => ConsoleError::Conflict(sentence(&message)),
        Error::IdempotencyKeyInUse { .. } => {
            ConsoleError::Conflict("This form is being sent already. Wait a moment, then reload the page.".into())
        }
        other => super::super::store_error(doing)(other),
    }
}

/// `a lease that is draft cannot activate` → `A lease that is draft cannot activate.`
pub fn sentence(s: &str) -> String {
    let s = s.trim().trim_end_matches('.');
    format!("{}.", super::describe::capitalised(s))
}
