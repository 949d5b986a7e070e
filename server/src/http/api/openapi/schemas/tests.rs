//! Bodies made from the create/update schemas alone (no registry knowledge beyond the
//! rules JSON Schema cannot say) must validate, and the rules the schemas do state must be
//! the ones `validate::create` enforces.

use chrono::Utc;
use serde_json::{json, Map, Value as Json};

use super::super::tests::{doc, resolve};
use super::*;
use crate::domain::record::Record;
use crate::domain::registry::EnvRule;

/// Bodies are validated as the sandbox does: one schema serves both listeners, and what
/// live mode refuses besides (sandbox-only fields, http URLs) is said in words.
const SANDBOX: bool = false;

/// Builds a body from a schema alone. `full`: every property; otherwise the required
/// ones. `nulls`: nullable optional properties are sent as `null`.
struct Sampler<'a> {
    doc: &'a Json,
    counter: i64,
}

impl Sampler<'_> {
    fn value(&mut self, s: &Json, full: bool, nulls: bool) -> Json {
        let s = resolve(self.doc, s);
        // A bare `anyOf` of alternatives (a nullable reference); an object's `anyOf` of
        // required lists is handled with its properties.
        if let (Some(first), None) = (s.get("anyOf").and_then(|a| a.get(0)), s.get("type")) {
            return self.value(first, full, nulls);
        }
        if let Some(d) = s.get("default") {
            return d.clone();
        }
        if let Some(first) = s.get("enum").and_then(|e| e.get(0)) {
            return first.clone();
        }
        let types: Vec<&str> = match &s["type"] {
            Json::String(t) => vec![t.as_str()],
            Json::Array(ts) => ts.iter().filter_map(Json::as_str).collect(),
            _ => vec![],
        };
        self.counter += 1;
        let n = self.counter;
        match (types.first().copied(), s["format"].as_str()) {
            (Some("object"), _) => self.object(s, full, nulls),
            (Some("array"), _) => {
                let min = s["minItems"].as_u64().unwrap_or(0).max(1) as usize;
                Json::Array((0..min).map(|_| self.value(&s["items"], full, nulls)).collect())
            }
            (_, Some("uuid")) => json!(uuid::Uuid::now_v7().to_string()),
            // Increasing, so "later" fields in declaration order come after "earlier" ones.
            (_, Some("date")) => json!(format!("2026-01-{:02}", 1 + n % 28)),
            (_, Some("date-time")) => json!(format!("2026-01-01T{:02}:00:00Z", n % 24)),
            (_, Some("email")) => json!("someone@example.com"),
            (_, Some("uri")) => json!("https://www.example.com"),
            (Some("integer"), _) => s.get("minimum").cloned().unwrap_or(json!(1)),
            (Some("number"), _) => {
                let min = s["minimum"].as_f64().or(s["exclusiveMinimum"].as_f64().map(|m| m + 1.0)).unwrap_or(1.0);
                json!(min + 12.5)
            }
            (Some("boolean"), _) => json!(true),
            _ if s["pattern"] == "^[A-Z]{3}$" => json!("USD"),
            _ if s["pattern"] == "^[A-Z]{2}$" => json!("US"),
            _ => json!("text"),
        }
    }

    fn object(&mut self, s: &Json, full: bool, nulls: bool) -> Json {
        let required: Vec<&str> = s["required"].as_array().into_iter().flatten().filter_map(Json::as_str).collect();
        let mut out = Map::new();
        for (k, p) in s["properties"].as_object().into_iter().flatten() {
            let rp = resolve(self.doc, p);
            let can_null = rp["type"].as_array().is_some_and(|t| t.contains(&json!("null")))
                || rp["anyOf"].as_array().is_some_and(|a| a.contains(&json!({"type": "null"})));
            if required.contains(&k.as_str()) || full {
                out.insert(k.clone(), self.value(p, full, nulls));
            } else if nulls && can_null {
                out.insert(k.clone(), Json::Null);
            }
        }
        // `anyOf` of required lists: satisfy the first alternative if none is.
        let groups: Vec<&Json> = match (s.get("anyOf"), s["allOf"].as_array()) {
            (Some(a), _) => vec![a],
            (None, Some(all)) => all.iter().map(|x| &x["anyOf"]).collect(),
            _ => vec![],
        };
        for alternatives in groups.into_iter().filter_map(Json::as_array) {
            let names = |alt: &Json| {
                alt["required"].as_array().into_iter().flatten().filter_map(Json::as_str).map(String::from).collect::<Vec<_>>()
            };
            if !alternatives.iter().any(|alt| names(alt).iter().all(|n| out.get(n).is_some_and(|v| !v.is_null()))) {
                for n in names(&alternatives[0]) {
                    let v = self.value(&s["properties"][&n], full, false);
                    out.insert(n, v);
                }
            }
        }
        // JSON Schema `dependentRequired`: a present key brings its dependencies.
        for (k, deps) in s["dependentRequired"].as_object().into_iter().flatten() {
            if out.contains_key(k) {
                for dep in deps.as_array().into_iter().flatten().filter_map(Json::as_str) {
                    if !out.contains_key(dep) || out[dep].is_null() {
                        let v = self.value(&s["properties"][dep], full, false);
                        out.insert(dep.into(), v);
                    }
                }
            }
        }
        Json::Object(out)
    }
}

/// The rules JSON Schema cannot say (they are in the schema's description), applied the
/// way a reader of that description would.
fn apply_rules(c: &Collection, body: &mut Json) {
    // A field the sandbox requires (its description says so; the schema serves both
    // environments) is given, as a sandbox client gives it.
    for f in c.fields.iter().filter(|f| f.env == crate::domain::registry::EnvRule::SandboxRequired) {
        if body.get(f.name).is_none() {
            if let crate::domain::registry::Ty::Enum(values) = f.ty {
                body[f.name] = json!(values[0]);
            }
        }
    }
    for rule in c.rules {
        if let Rule::Balanced(field) = rule {
            body[field] = json!([
                { "account": "cash", "debit": 100.5, "credit": 0 },
                { "account": "rent_income", "debit": 0, "credit": 100.5 },
            ]);
        }
    }
}

/// A stored record to update: it already satisfies the "one of" rules, as any stored record does.
fn current(c: &Collection) -> Record {
    let mut values = std::collections::HashMap::new();
    for rule in c.rules {
        if let Rule::OneOf(names) = rule {
            values.insert(names[0], crate::domain::value::Val::Uuid(uuid::Uuid::now_v7()));
        }
    }
    // A stored record has its currency (create-only on some collections, so an
    // update body cannot give it).
    if c.field("currency").is_some_and(|f| f.required) {
        values.insert("currency", crate::domain::value::Val::Str("USD".into()));
    }
    Record { id: uuid::Uuid::now_v7(), livemode: false, created_at: Utc::now(), updated_at: Utc::now(), values, metadata: None }
}

#[test]
fn bodies_made_from_the_write_schemas_are_accepted() {
    let d = doc();
    // A fresh sampler per body, so its dates and times increase within the body.
    let sampler = || Sampler { doc: &d, counter: 0 };
    for c in COLLECTIONS {
        let name = pascal(c.object);
        if json_create(c) {
            let schema = &d["components"]["schemas"][format!("{name}Create")];
            for (full, nulls) in [(false, false), (true, false), (false, true)] {
                let mut body = sampler().value(schema, full, nulls);
                apply_rules(c, &mut body);
                if let Err(e) = validate::create(c, &body, SANDBOX) {
                    panic!("{name}Create refuses a body built from its schema: {e}\n{body:#}");
                }
            }
        }
        if offers(c, WriteOp::Update) {
            let schema = &d["components"]["schemas"][format!("{name}Update")];
            let body = sampler().value(schema, true, false);
            if body.as_object().is_some_and(|o| !o.is_empty()) {
                if let Err(e) = validate::update(c, &body, &current(c), SANDBOX) {
                    panic!("{name}Update refuses a body built from its schema: {e}\n{body:#}");
                }
            }
        }
    }
}

#[test]
fn write_schemas_are_closed_and_list_only_writable_fields() {
    let d = doc();
    for c in COLLECTIONS.iter().filter(|c| json_create(c)) {
        let s = &d["components"]["schemas"][format!("{}Create", pascal(c.object))];
        assert_eq!(s["additionalProperties"], json!(false));
        for f in c.fields.iter().filter(|f| f.access == Access::ReadOnly) {
            assert!(s["properties"].get(f.name).is_none(), "{}.{} is read-only", c.name, f.name);
        }
    }
}

/// "At least one of" is an `anyOf` of `required` lists, and it means what the server
/// does: each alternative alone is accepted; none of them, or only `null`s, is refused.
#[test]
fn one_of_rules_are_any_of_required_lists() {
    let d = doc();
    let mut seen = 0;
    for c in COLLECTIONS.iter().filter(|c| json_create(c)) {
        let schema = &d["components"]["schemas"][format!("{}Create", pascal(c.object))];
        for rule in c.rules {
            let Rule::OneOf(names) = rule else { continue };
            seen += 1;
            // The schema's own `anyOf`, or one item of its `allOf` beside other rules.
            let any_of = schema["anyOf"].as_array().or_else(|| schema["allOf"].as_array()?.iter().find_map(|r| r["anyOf"].as_array()));
            let alternatives: Vec<Vec<&str>> = any_of
                .unwrap_or_else(|| panic!("{}Create has no anyOf for {names:?}", pascal(c.object)))
                .iter()
                .map(|alt| alt["required"].as_array().unwrap().iter().filter_map(Json::as_str).collect())
                .collect();
            assert_eq!(alternatives, names.iter().map(|n| vec![*n]).collect::<Vec<_>>(), "{}", c.name);
            let mut base = Sampler { doc: &d, counter: 0 }.value(schema, false, false);
            for n in names.iter() {
                base.as_object_mut().unwrap().remove(*n);
            }
            for n in names.iter() {
                let mut body = base.clone();
                body[*n] = json!(uuid::Uuid::now_v7().to_string());
                assert!(validate::create(c, &body, SANDBOX).is_ok(), "{}: {n} alone is refused: {body}", c.name);
            }
            assert!(validate::create(c, &base, SANDBOX).is_err(), "{}: none of {names:?} is accepted", c.name);
            let mut nulls = base.clone();
            for n in names.iter() {
                nulls[*n] = Json::Null;
            }
            assert!(validate::create(c, &nulls, SANDBOX).is_err(), "{}: only nulls for {names:?} is accepted", c.name);
            for (alt, n) in any_of.unwrap().iter().zip(names.iter()) {
                assert_eq!(alt["properties"][*n]["not"], json!({"type": "null"}), "{}: {n}", c.name);
            }
        }
    }
    assert!(seen >= 3, "charges, invoices and viewings have one-of rules; found {seen}");
}

/// Each listener's document states its environment's rules, as `validate::create` applies
/// them: the sandbox requires a test payment's scenario; production refuses it, takes
/// only live payment methods and https webhook URLs.
#[test]
fn each_environment_has_its_own_rules() {
    let sandbox = doc();
    let live = super::super::document("http://127.0.0.1:8080", true);
    let payment = |d: &Json| d["components"]["schemas"]["PaymentCreate"].clone();
    assert!(payment(&sandbox)["required"].as_array().unwrap().contains(&json!("scenario")));
    assert!(payment(&live)["properties"].get("scenario").is_none());
    let c = crate::domain::collections::collection("payments").unwrap();
    let f = c.field("scenario").unwrap();
    assert_eq!(f.env, EnvRule::SandboxRequired);
    let methods = payment(&live)["properties"]["method"]["enum"].clone();
    let EnvRule::LiveValues(values) = c.field("method").unwrap().env else { panic!("payment methods have live values") };
    assert!(values.iter().all(|v| methods.as_array().unwrap().contains(&json!(v))));
    let webhook = &live["components"]["schemas"]["WebhookCreate"]["properties"]["url"];
    assert!(webhook["pattern"].as_str().unwrap().starts_with("^https://["));
    let hooks = crate::domain::collections::collection("webhooks").unwrap();
    let body = |url: &str| json!({ "url": url, "events": ["*"] });
    assert!(validate::create(hooks, &body("http://example.com/h"), true).is_err(), "live mode refuses http");
    assert!(validate::create(hooks, &body("http://example.com/h"), false).is_ok(), "the sandbox takes http");
}

/// A balanced entry needs two lines: the schema says so, and one line is refused.
#[test]
fn balanced_lines_need_two_items() {
    let d = doc();
    for c in COLLECTIONS.iter().filter(|c| json_create(c)) {
        for rule in c.rules {
            let Rule::Balanced(field) = rule else { continue };
            let schema = &d["components"]["schemas"][format!("{}Create", pascal(c.object))];
            assert_eq!(schema["properties"][*field]["minItems"], json!(2), "{}.{field}", c.name);
            let mut body = Sampler { doc: &d, counter: 0 }.value(schema, false, false);
            apply_rules(c, &mut body);
            assert!(validate::create(c, &body, SANDBOX).is_ok(), "{}: {body}", c.name);
            body[*field].as_array_mut().unwrap().truncate(1);
            assert!(validate::create(c, &body, SANDBOX).is_err(), "{}: one line is accepted", c.name);
        }
    }
}
