//! `--set FIELD=VALUE`: a field of the body of the record an event is about. A dotted
//! field sets a nested one (`address.city=Leeds`); a value that reads as JSON is taken as
//! JSON (`12.5`, `true`, `{"a": 1}`), anything else as the text typed. Where the field
//! holds text (a name, a date, an address's part, metadata), a number or `true`/`false`
//! stays the text typed, so `--set number=101` names unit "101".

use serde_json::{Map, Value};

use crate::domain::collections::collection;
use crate::domain::registry::{JsonShape, Ty};

/// One `--set`: the field's path and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Set {
    pub path: Vec<String>,
    pub value: Value,
    /// As typed, for messages.
    pub typed: String,
}

/// Reads every `--set` for a record of `collection`; the first malformed one is the error.
pub fn parse(args: &[String], collection: &str) -> anyhow::Result<Vec<Set>> {
    args.iter().map(|a| parse_one(a, collection)).collect()
}

fn parse_one(arg: &str, collection: &str) -> anyhow::Result<Set> {
    let usage = "give FIELD=VALUE, e.g. `--set amount=12.50` or `--set metadata.order=42`";
    let Some((field, text)) = arg.split_once('=') else { anyhow::bail!("--set `{arg}` has no `=`: {usage}") };
    let path: Vec<String> = field.trim().split('.').map(String::from).collect();
    if path.iter().any(|p| p.is_empty()) {
        anyhow::bail!("--set `{arg}` names no field (or an empty part of one): {usage}");
    }
    let value = match serde_json::from_str::<Value>(text) {
        Ok(Value::Number(_) | Value::Bool(_)) if holds_text(collection, &path) => Value::String(text.to_string()),
        Ok(v) => v,
        Err(_) => Value::String(text.to_string()),
    };
    Ok(Set { path, value, typed: arg.to_string() })
}

/// Whether the field at `path` of a record of `collection` holds text, as this build's
/// registry describes it (a server of another version may differ: then the API says so).
fn holds_text(collection_name: &str, path: &[String]) -> bool {
    let Some(c) = collection(collection_name) else { return false };
    let field = |name: &str| c.field(name).map(|f| f.ty);
    match path {
        [name] => matches!(
            field(name),
            Some(
                Ty::Str { .. }
                    | Ty::Text
                    | Ty::Email
                    | Ty::Url
                    | Ty::Origin
                    | Ty::Enum(_)
                    | Ty::Currency
                    | Ty::Date
                    | Ty::DateTime
                    | Ty::Ref(_)
                    | Ty::Uuid
            )
        ),
        [name, _] if name == "metadata" => c.metadata,
        [name, _] => field(name) == Some(Ty::Json(JsonShape::Address)),
        _ => false,
    }
}

/// Sets each field in `body` (a JSON object), making the objects a dotted path goes through.
pub fn apply(body: &mut Value, sets: &[Set]) -> anyhow::Result<()> {
    for set in sets {
        let Some((last, parents)) = set.path.split_last() else { continue };
        let mut at = &mut *body;
        for (depth, part) in parents.iter().enumerate() {
            let Value::Object(map) = at else { anyhow::bail!("--set `{}`: `{}` is not an object", set.typed, set.path[..depth].join(".")) };
            at = map.entry(part.clone()).or_insert_with(|| Value::Object(Map::new()));
        }
        match at {
            Value::Object(map) => {
                map.insert(last.clone(), set.value.clone());
            }
            _ => anyhow::bail!("--set `{}`: `{}` is not an object", set.typed, parents.join(".")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sets(args: &[&str], collection: &str) -> anyhow::Result<Vec<Set>> {
        parse(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>(), collection)
    }

    #[test]
    fn values_read_as_json_where_they_can_and_as_text_where_the_field_holds_text() {
        let mut body = json!({ "amount": "1200.00", "address": { "line1": "1 Trigger Street", "city": "Portland" } });
        let s =
            sets(&["amount=12.5", "address.city=Leeds", "metadata.order=42", "notes.deep.er=true", "description=a=b"], "payments").unwrap();
        apply(&mut body, &s).unwrap();
        assert_eq!(body["amount"].to_string(), "12.5");
        assert_eq!(body["address"], json!({ "line1": "1 Trigger Street", "city": "Leeds" }));
        assert_eq!(body["metadata"], json!({ "order": "42" }), "metadata holds text");
        assert_eq!(body["notes"], json!({ "deep": { "er": true } }));
        assert_eq!(body["description"], "a=b", "the first `=` splits");
        let unit = sets(&["number=101", "bedrooms=2", "address={\"city\": \"Leeds\"}"], "units").unwrap();
        assert_eq!(unit.iter().map(|s| s.value.clone()).collect::<Vec<_>>(), vec![json!("101"), json!(2), json!({ "city": "Leeds" })]);
        assert_eq!(sets(&["address.postal_code=97201"], "properties").unwrap()[0].value, json!("97201"));
    }

    #[test]
    fn malformed_sets_are_clear_errors() {
        let e = sets(&["amount=1", "amount12"], "payments").unwrap_err().to_string();
        assert!(e.contains("`amount12` has no `=`"), "{e}");
        for bad in ["=1", "a..b=1", ".a=1"] {
            let e = sets(&[bad], "payments").unwrap_err().to_string();
            assert!(e.contains("names no field"), "{bad}: {e}");
        }
        let mut body = json!({ "amount": "1200.00" });
        let e = apply(&mut body, &sets(&["amount.cents=5"], "payments").unwrap()).unwrap_err().to_string();
        assert!(e.contains("`amount` is not an object"), "{e}");
    }
}
