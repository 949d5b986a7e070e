//! The API description tells the truth: every path and method `/v1/openapi.json` documents
//! is served, every response status it documents for an operation can be produced by a
//! request made for that operation, every status the layers in front of the handlers can
//! answer is documented on each operation they serve, and every security scheme it
//! documents is accepted.
//!
//! Everything is read from the document the running server serves; the registry is used
//! only to build requests (which fields reference what, which actions lead where). Each
//! status has a provoker: the cheapest request that must get it. A documented status
//! without a provoker, or whose provoker gets something else, is a failure: the fix is in
//! the description (`server/src/http/api/openapi/`), unless the server is wrong.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

use futures::StreamExt;
use gable::domain::collections::{collection, COLLECTIONS};
use gable::domain::import::is_uploaded;
use gable::domain::registry::{Collection, Ty};
use gable::domain::workflow;
use gable_tests::{both, world, Res, TestApp};
use serde_json::{json, Map, Value};
use uuid::Uuid;

const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
/// Larger than the 1 MiB body limit (`http::body::MAX_BODY`), by a little.
const TOO_LARGE: usize = (1 << 20) + 1024;

/// What kind of operation a documented path and method is, by the shape of the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Describe,
    List,
    Create,
    Get,
    Update,
    Delete,
    Action,
    /// `POST /v1/{collection}/{id}/{name}` that is not a state-machine action: a command
    /// with a handler of its own (rotate a webhook's secret, replay an event, …).
    Command,
    /// `GET /v1/sandbox/clock` and `POST /v1/sandbox/clock/advance`: no collection's.
    SandboxClock,
    /// `POST /v1/imports`: a file as the body, not JSON, and not held under an
    /// `Idempotency-Key`.
    Upload,
    /// `GET /v1/events/stream`, `GET /v1/request-logs/stream`: server-sent events, an
    /// answer that does not end.
    Stream,
}

#[derive(Debug, Clone)]
struct Op {
    method: &'static str,
    path: String,
    kind: Kind,
    collection: Option<&'static Collection>,
    action: Option<&'static workflow::Action>,
    statuses: Vec<u16>,
    security: Value,
    description: String,
    /// The request body schema (resolved), if the operation takes one.
    body_schema: Option<Value>,
}

impl Op {
    fn name(&self) -> String {
        format!("{} {}", self.method.to_uppercase(), self.path)
    }
    fn c(&self) -> &'static Collection {
        self.collection.expect("collection operations have a collection")
    }
}

/// The test's view of the running server, the document and the tenant's world.
struct Ctx<'a> {
    app: &'a TestApp,
    doc: Value,
    /// The full key of the environment requests go to (the sandbox's, unless `live`).
    key: String,
    /// The other environment's full key.
    other_key: String,
    /// Requests go to production: for what only live mode has (a pending payment).
    live: bool,
    /// Keys holding only another collection's read scope (`[0]`, or `[1]` for that collection).
    narrow: [(String, &'static str); 2],
    /// The world's records as the API returns them, by collection.
    records: BTreeMap<&'static str, Value>,
    /// The sandbox address of a second node on the same database that allows one request
    /// per second per credential: for `429`.
    limited: String,
    failures: Vec<String>,
    checked: usize,
}

impl Ctx<'_> {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.app.base(self.live))
    }

    /// Sends what follows to production (`true`) or back to the sandbox: the address and
    /// the full key change together.
    fn set_live(&mut self, live: bool) {
        if self.live != live {
            std::mem::swap(&mut self.key, &mut self.other_key);
            self.live = live;
        }
    }

    /// A request to the environment, as a client library sends it: every POST with a fresh
    /// `Idempotency-Key` (required on `POST /v1/payments`).
    fn request(&self, method: &str, path: &str) -> reqwest::RequestBuilder {
        let method: reqwest::Method = method.to_uppercase().parse().expect("method");
        let post = method == reqwest::Method::POST;
        let req = self.app.client.request(method, self.url(path));
        if post {
            req.header("Idempotency-Key", Uuid::new_v4().to_string())
        } else {
            req
        }
    }

    fn world_id(&self, c: &str) -> String {
        self.records[c]["id"].as_str().unwrap_or_else(|| panic!("world record of {c} has an id")).to_string()
    }

    fn narrow_key(&self, c: &Collection) -> &str {
        let [(k0, c0), (k1, _)] = &self.narrow;
        if *c0 == c.name {
            k1
        } else {
            k0
        }
    }

    /// A request with the full key (or none), JSON body optional.
    async fn send(&self, key: Option<&str>, method: &str, path: &str, body: Option<&Value>) -> Res {
        let mut req = self.request(method, path);
        if let Some(k) = key {
            req = req.bearer_auth(k);
        }
        if let Some(b) = body {
            req = req.json(b);
        }
        self.app.raw(req).await
    }

    /// A request with a raw body and content type.
    async fn send_raw(&self, method: &str, path: &str, content_type: &str, body: Vec<u8>) -> Res {
        let req = self.request(method, path).bearer_auth(&self.key).header("content-type", content_type).body(body);
        self.app.raw(req).await
    }

    fn fail(&mut self, message: String) {
        self.failures.push(message);
    }
}

async fn every_documented_status_is_served(app: &TestApp) {
    let started = Instant::now();
    let served = app.raw(app.client.get(format!("{}/v1/openapi.json", app.sandbox))).await;
    assert_eq!(served.status, 200, "the description is served without credentials: {}", served.text);
    let doc = served.body;
    assert_eq!(doc["openapi"], "3.1.0");

    let t = app.tenant("A").await;
    let w = world::build(app, t.id, &t.test_key).await;
    let narrow = [
        (app.key(t.id, false, &["events:read"], None).await, "events"),
        (app.key(t.id, false, &["webhooks:read"], None).await, "webhooks"),
    ];
    let mut records = BTreeMap::new();
    for (c, id) in &w.ids {
        let r = app.call(&t.test_key, "GET", &format!("/v1/{c}/{id}"), None).await;
        assert_eq!(r.status, 200, "world record {c}: {}", r.text);
        records.insert(*c, r.body["data"].clone());
    }
    let limited = app.second_node().rate_limits(1, 1).spawn().await;
    let mut cx = Ctx {
        app,
        doc,
        key: t.test_key.clone(),
        other_key: t.live_key.clone(),
        live: false,
        narrow,
        records,
        limited: limited.sandbox.clone(),
        failures: vec![],
        checked: 0,
    };

    let ops = operations(&cx.doc);
    check_security_schemes(&mut cx, &ops).await;
    check_refusals_in_words(&mut cx).await;
    check_layers_are_documented(&mut cx, &ops).await;

    // Ordered so that nothing a later check needs is gone: the world's records are deleted
    // (409 provokers) only after every other check, then the database is kept busy (503),
    // and it closes (500) last.
    for phase in [Phase::Plain, Phase::Actions, Phase::Deletes, Phase::Busy, Phase::Outage] {
        match phase {
            Phase::Busy => {
                provoke_busy(&mut cx, &ops).await;
                continue;
            }
            Phase::Outage => app.store.close().await,
            _ => {}
        }
        for op in &ops {
            let mut statuses: Vec<u16> = op.statuses.iter().copied().filter(|s| phase_of(op, *s) == phase).collect();
            statuses.sort_unstable();
            if phase == Phase::Actions && !statuses.is_empty() {
                provoke_action(&mut cx, op, &statuses).await;
                continue;
            }
            for status in statuses {
                let res = provoke(&mut cx, op, status).await;
                judge(&mut cx, op, status, res);
            }
        }
    }
    limited.stop().await;

    let statuses: usize = ops.iter().map(|o| o.statuses.len()).sum();
    eprintln!(
        "api::openapi ({:?}): {} operations, {statuses} documented statuses, {} checks, {:.1} s",
        app.backend,
        ops.len(),
        cx.checked,
        started.elapsed().as_secs_f64()
    );
    assert!(cx.failures.is_empty(), "the description promises what the server does not do:\n{}", cx.failures.join("\n"));
    assert_eq!(cx.checked, statuses, "every documented status was provoked once");
}
both!(every_documented_status_is_served);

/// The description is large (docs/benchmarks.md): it goes out gzipped to clients that take
/// gzip, the same document once decompressed, and a copy held is revalidated, not resent.
async fn the_description_is_gzipped_and_revalidated(app: &TestApp) {
    let url = format!("{}/v1/openapi.json", app.live);
    let plain = app.client.get(&url).send().await.expect("sent");
    assert_eq!(plain.status(), 200);
    assert!(plain.headers().get("content-encoding").is_none(), "gzipped for a client that did not ask");
    let etag = plain.headers()["etag"].clone();
    let plain = plain.bytes().await.expect("body");

    let zipped = app.client.get(&url).header("accept-encoding", "br, gzip;q=0.8").send().await.expect("sent");
    assert_eq!(zipped.headers()["content-encoding"], "gzip");
    assert_eq!(zipped.headers()["vary"], "Accept-Encoding");
    assert_eq!(zipped.headers()["access-control-allow-origin"], "*");
    let zipped = zipped.bytes().await.expect("body");
    let mut unzipped = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&zipped[..]), &mut unzipped).expect("gzip");
    assert_eq!(unzipped, plain, "the gzipped document is the document");
    assert!(zipped.len() * 5 < plain.len(), "gzip saves little: {} of {} bytes", zipped.len(), plain.len());

    let refused = app.client.get(&url).header("accept-encoding", "gzip;q=0").send().await.expect("sent");
    assert!(refused.headers().get("content-encoding").is_none(), "gzipped although refused (q=0)");

    let held = app.client.get(&url).header("if-none-match", etag.clone()).send().await.expect("sent");
    assert_eq!(held.status(), 304);
    assert!(held.bytes().await.expect("body").is_empty());
    let stale = app.client.get(&url).header("if-none-match", "\"0000\"").send().await.expect("sent");
    assert_eq!(stale.status(), 200);
}
both!(the_description_is_gzipped_and_revalidated);

// ---------------------------------------------------------------------------------------------
// Reading the document
// ---------------------------------------------------------------------------------------------

fn resolve<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    match v.get("$ref").and_then(Value::as_str) {
        Some(r) => resolve(doc, doc.pointer(r.trim_start_matches('#')).unwrap_or_else(|| panic!("unresolved {r}"))),
        None => v,
    }
}

/// Every documented operation, classified by the shape of its path.
fn operations(doc: &Value) -> Vec<Op> {
    let mut ops = vec![];
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            let segments: Vec<&str> = path.trim_start_matches("/v1/").split('/').collect();
            let (kind, collection_name, action) = match (method, segments.as_slice()) {
                ("get", ["openapi.json"]) => (Kind::Describe, None, None),
                ("get", ["sandbox", "clock"]) | ("post", ["sandbox", "clock", "advance"]) => (Kind::SandboxClock, None, None),
                ("get", [c, "stream"]) => (Kind::Stream, Some(*c), None),
                ("get", [c]) => (Kind::List, Some(*c), None),
                ("post", [c]) if collection(c).is_some_and(is_uploaded) => (Kind::Upload, Some(*c), None),
                ("post", [c]) => (Kind::Create, Some(*c), None),
                // A record's own list (an import's errors): read as the record is.
                ("get", [c, "{id}", _]) => (Kind::Get, Some(*c), None),
                ("get", [c, "{id}"]) => (Kind::Get, Some(*c), None),
                ("patch", [c, "{id}"]) => (Kind::Update, Some(*c), None),
                ("delete", [c, "{id}"]) => (Kind::Delete, Some(*c), None),
                ("post", [c, "{id}", a]) if workflow::machine(c).and_then(|m| m.action(a)).is_some() => (Kind::Action, Some(*c), Some(*a)),
                ("post", [_, "{id}", _]) => (Kind::Command, Some(segments[0]), None),
                _ => panic!("{} {path}: an operation of a kind this test has no provokers for; add them", method.to_uppercase()),
            };
            let c = collection_name.map(|n| collection(n).unwrap_or_else(|| panic!("{path}: no collection {n}")));
            let action = action.map(|a| {
                workflow::machine(c.expect("actions belong to collections").name)
                    .and_then(|m| m.action(a))
                    .unwrap_or_else(|| panic!("{path}: no action {a}"))
            });
            let statuses = op["responses"]
                .as_object()
                .expect("responses")
                .keys()
                .map(|s| s.parse().unwrap_or_else(|_| panic!("{method} {path}: response {s} is not a status")))
                .collect();
            let body_schema = op.pointer("/requestBody/content/application~1json/schema").map(|s| resolve(doc, s).clone());
            ops.push(Op {
                method,
                path: path.clone(),
                kind,
                collection: c,
                action,
                statuses,
                security: op.get("security").cloned().unwrap_or(Value::Null),
                description: op["description"].as_str().unwrap_or_default().to_string(),
                body_schema,
            });
        }
    }
    ops
}

/// Every documented scheme is one the server accepts, and every operation asks for
/// documented schemes only; an operation without credentials must be served without them.
async fn check_security_schemes(cx: &mut Ctx<'_>, ops: &[Op]) {
    let schemes = cx.doc["components"]["securitySchemes"].as_object().cloned().unwrap_or_default();
    assert!(!schemes.is_empty(), "no security schemes documented");
    for (name, scheme) in &schemes {
        let scheme = resolve(&cx.doc, scheme).clone();
        match (scheme["type"].as_str(), scheme["scheme"].as_str().map(str::to_ascii_lowercase).as_deref()) {
            // The API key as a bearer token: a list answered with the key, refused without it.
            (Some("http"), Some("bearer")) => {
                let with = cx.send(Some(&cx.key), "get", "/v1/units", None).await;
                let without = cx.send(None, "get", "/v1/units", None).await;
                if with.status != 200 || without.status != 401 {
                    cx.fail(format!("scheme {name}: a bearer key gets {}, none gets {}", with.status, without.status));
                }
            }
            // OAuth 2.1: the flow's endpoints are the authorization server's (its metadata
            // names them) and answer there; tokens themselves are the `oauth` module's tests.
            (Some("oauth2"), _) => {
                let flow = &scheme["flows"]["authorizationCode"];
                let live = cx.app.live.trim_end_matches('/').to_string();
                let meta = cx.app.raw(cx.app.client.get(format!("{live}/.well-known/oauth-authorization-server"))).await;
                for (doc_url, meta_field) in [("authorizationUrl", "authorization_endpoint"), ("tokenUrl", "token_endpoint")] {
                    let documented = format!("{live}{}", flow[doc_url].as_str().unwrap_or_default());
                    if meta.body[meta_field] != json!(documented) {
                        cx.fail(format!(
                            "scheme {name}: {doc_url} {documented} is not the metadata's {meta_field} {}",
                            meta.body[meta_field]
                        ));
                    }
                }
                let token =
                    cx.app.raw(cx.app.client.post(format!("{live}/oauth/token")).form(&[("grant_type", "authorization_code")])).await;
                if token.status != 400 || token.body["error"] != json!("invalid_client") {
                    cx.fail(format!("scheme {name}: the token endpoint answers {} {}", token.status, token.text));
                }
                let scopes = flow["scopes"].as_object().map(|m| m.len()).unwrap_or_default();
                if scopes != meta.body["scopes_supported"].as_array().map(Vec::len).unwrap_or_default() {
                    cx.fail(format!("scheme {name}: {scopes} scopes documented, the metadata has others"));
                }
            }
            (t, s) => cx.fail(format!(
                "scheme {name} ({t:?}, {s:?}) is documented, but the server accepts only bearer API keys and OAuth 2.1 tokens"
            )),
        }
    }
    for op in ops {
        let Some(requirements) = op.security.as_array() else {
            cx.fail(format!("{}: no `security` (the document has no top-level default)", op.name()));
            continue;
        };
        for r in requirements {
            for name in r.as_object().into_iter().flat_map(|m| m.keys()) {
                if !schemes.contains_key(name) {
                    cx.fail(format!("{}: asks for undocumented scheme {name}", op.name()));
                }
            }
        }
        let public = requirements.is_empty() || requirements.iter().any(|r| r.as_object().is_some_and(Map::is_empty));
        if public != (op.kind == Kind::Describe) {
            cx.fail(format!("{}: documented as {}", op.name(), if public { "public" } else { "needing a credential" }));
        }
    }
}

/// Path descriptions say which writes a collection refuses, and with what
/// ("`POST` is refused with `405 method_not_allowed`"): those are served as said.
async fn check_refusals_in_words(cx: &mut Ctx<'_>) {
    let mut claims = vec![];
    for (path, item) in cx.doc["paths"].as_object().expect("paths") {
        let text = item["description"].as_str().unwrap_or_default();
        for part in text.split("\n\n").filter(|p| p.contains(" is refused with ")) {
            let quoted: Vec<&str> = part.split('`').skip(1).step_by(2).collect();
            let (Some(method), Some(answer)) = (quoted.first(), quoted.get(1)) else { continue };
            let (status, code) = answer.split_once(' ').expect("`status code`");
            claims.push((path.clone(), method.to_string(), status.parse::<u16>().expect("a status"), code.to_string()));
        }
    }
    assert!(!claims.is_empty(), "no refusals described; events and payments have some");
    for (path, method, status, code) in claims {
        let c = path.trim_start_matches("/v1/").split('/').next().unwrap_or_default().to_string();
        let concrete = path.replace("{id}", &cx.world_id(&c));
        let r = cx.send(Some(&cx.key.clone()), &method, &concrete, Some(&json!({}))).await;
        if r.status != status || r.body["error"]["code"] != json!(code) {
            cx.fail(format!("{method} {path}: described as refused with {status} {code}, got {} {}", r.status, r.text));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Provokers
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Everything that leaves the world as it was (or adds to it).
    Plain,
    /// Actions' success and their state errors, on fresh records.
    Actions,
    /// Deletes: fresh copies, and the world's referenced records (which may go on failure).
    Deletes,
    /// Every connection of a second node's database pool held: `503`, all at once.
    Busy,
    /// The database closed: `500`.
    Outage,
}

fn phase_of(op: &Op, status: u16) -> Phase {
    match (op.kind, status) {
        (_, 503) => Phase::Busy,
        (_, 500) => Phase::Outage,
        (Kind::Action, 200 | 409) => Phase::Actions,
        (Kind::Delete, 200 | 409) => Phase::Deletes,
        _ => Phase::Plain,
    }
}

/// Checks one provoked response: the documented status, a real error body, and not the
/// router's "no such endpoint" or "method not allowed" (the operation is served).
fn judge(cx: &mut Ctx<'_>, op: &Op, status: u16, res: Option<Res>) {
    cx.checked += 1;
    let Some(res) = res else {
        cx.fail(format!("{}: documents {status}, and no request made for it can get that", op.name()));
        return;
    };
    let unrouted = (res.status == 404 && res.text.contains("no such endpoint")) || res.status == 405;
    if unrouted && status != res.status {
        cx.fail(format!("{}: not served ({} {})", op.name(), res.status, res.text));
    } else if res.status != status {
        cx.fail(format!("{}: documents {status}, its provoker got {}: {}", op.name(), res.status, trim(&res.text)));
    } else if status >= 400 && !res.body["error"]["code"].is_string() {
        cx.fail(format!("{}: {status} without the error body: {}", op.name(), trim(&res.text)));
    } else if status < 400
        && !matches!(op.kind, Kind::Describe | Kind::Stream)
        && !res.body["data"].is_object()
        && !res.body["data"].is_array()
    {
        cx.fail(format!("{}: {status} without an envelope: {}", op.name(), trim(&res.text)));
    }
}

/// The start of a response body, for failure messages (cut on a character boundary).
fn trim(s: &str) -> &str {
    &s[..s.char_indices().nth(400).map_or(s.len(), |(i, _)| i)]
}

/// The concrete path of an operation for a record id.
fn concrete(op: &Op, id: &str) -> String {
    op.path.replace("{id}", id)
}

/// The cheapest request that must get `status` from `op`; `None` if there is none.
async fn provoke(cx: &mut Ctx<'_>, op: &Op, status: u16) -> Option<Res> {
    let key = cx.key.clone();
    let valid = |cx: &Ctx<'_>| match op.kind {
        Kind::Describe | Kind::List | Kind::Create | Kind::SandboxClock | Kind::Upload => op.path.clone(),
        _ => concrete(op, &cx.world_id(op.c().name)),
    };
    let method = op.method;
    if op.kind == Kind::Stream && status != 413 {
        return provoke_stream(cx, op, status).await;
    }
    if op.kind == Kind::Upload {
        match status {
            201 | 500 => {
                let (path, file) = a_file();
                let r = cx.send_raw(method, path, "text/csv", file).await;
                if r.status == 201 {
                    check_success_body(cx, op, 201, &r);
                }
                return Some(r);
            }
            // A CSV file names its collection.
            400 => return Some(cx.send_raw(method, &op.path, "text/csv", b"name\nX\n".to_vec()).await),
            // Declared over the upload's own limit: refused before the file is read.
            413 => {
                let stream = futures::stream::once(async { Ok::<_, std::io::Error>(b"name\n".to_vec()) }).chain(futures::stream::pending());
                let req = cx
                    .app
                    .client
                    .post(cx.url("/v1/imports?collection=owners"))
                    .bearer_auth(&cx.key)
                    .header("content-type", "text/csv")
                    .header("content-length", (200u64 << 20).to_string())
                    .body(reqwest::Body::wrap_stream(stream));
                return Some(cx.app.raw(req).await);
            }
            _ => {}
        }
    }
    match status {
        // A declared body over the limit, on any operation: refused before it is read.
        413 if !matches!(op.kind, Kind::Create | Kind::Update | Kind::Action | Kind::Command | Kind::SandboxClock) => {
            let huge = format!("{{\"pad\": \"{}\"}}", "x".repeat(TOO_LARGE)).into_bytes();
            let path = if op.kind == Kind::Describe { op.path.clone() } else { valid(cx) };
            return Some(cx.send_raw(method, &path, "application/json", huge).await);
        }
        // On a record nobody else uses: when the machine is slow, the limiter may have refilled
        // and let the request through, which must not delete or change the world's records.
        429 => {
            let path = if op.path.contains("{id}") { concrete(op, &Uuid::now_v7().to_string()) } else { op.path.clone() };
            return Some(over_the_rate_limit(cx, op, &path).await);
        }
        422 => return Some(key_reused(cx, op, &valid(cx)).await),
        // A `POST` that conflicts with nothing else: its key is in use.
        409 if op.method == "post" && !own_conflict(op) => return Some(key_in_use(cx, op, &valid(cx)).await),
        _ => {}
    }
    Some(match (op.kind, status) {
        (Kind::Describe, 200) => cx.send(None, method, &op.path, None).await,
        // Revalidated with the entity tag of the copy just read.
        (Kind::Describe, 304) => {
            let first = cx.send(None, method, &op.path, None).await;
            let etag = first.headers.get("etag").and_then(|v| v.to_str().ok()).unwrap_or("\"none\"").to_string();
            cx.app.raw(cx.app.client.get(cx.url(&op.path)).header("if-none-match", etag)).await
        }
        (Kind::Describe, 400) => {
            let req = cx.app.client.get(cx.url(&op.path)).header("gable-version", "1999-01-01");
            cx.app.raw(req).await
        }
        // Every other status of the description's own operation needs a provoker first.
        (Kind::Describe, _) => return None,
        (Kind::SandboxClock, _) => return provoke_clock(cx, op, status).await,
        // No credential: the credential is checked before anything else.
        (_, 401) => cx.send(None, method, &valid(cx), Some(&json!({}))).await,
        // A key holding another collection's read scope only.
        (Kind::Command, 403) => {
            // A valid request, so that only the scope can refuse it; the scope refused is the one described.
            let narrow = cx.narrow_key(op.c()).to_string();
            let r = cx.send(Some(&narrow), method, &valid(cx), command_body(cx, op).as_ref()).await;
            let scope = r.body["error"]["details"]["required_scope"].as_str().unwrap_or("none");
            if r.status == 403 && !op.description.contains(&format!("Needs the scope `{scope}`")) {
                cx.fail(format!("{}: refused for want of `{scope}`, which the description does not name", op.name()));
            }
            r
        }
        (_, 403) => {
            let narrow = cx.narrow_key(op.c()).to_string();
            cx.send(Some(&narrow), method, &valid(cx), Some(&json!({}))).await
        }
        (Kind::List, 200) | (Kind::Get, 200) => cx.send(Some(&key), method, &valid(cx), None).await,
        (Kind::List, 400) => cx.send(Some(&key), method, &format!("{}?limit=0", op.path), None).await,
        (Kind::Get | Kind::Update | Kind::Delete | Kind::Action, 400) => {
            cx.send(Some(&key), method, &concrete(op, "not-a-uuid"), update_body(op).as_ref()).await
        }
        (Kind::Create, 400) => cx.send(Some(&key), method, &op.path, Some(&json!({ "no_such_field": 1 }))).await,
        // A command's body is checked before its record is looked up: a valid one, so the id decides.
        (Kind::Command, 400) => cx.send(Some(&key), method, &concrete(op, "not-a-uuid"), command_body(cx, op).as_ref()).await,
        (Kind::Command, 404) => {
            cx.send(Some(&key), method, &concrete(op, &Uuid::now_v7().to_string()), command_body(cx, op).as_ref()).await
        }
        (Kind::Command, 200 | 201) => {
            let r = cx.send(Some(&key), method, &valid(cx), command_body(cx, op).as_ref()).await;
            if r.status == status {
                check_success_body(cx, op, status, &r);
            }
            r
        }
        (Kind::Command, 409) => command_conflict(cx, op).await?,
        (Kind::Get | Kind::Update | Kind::Delete | Kind::Action, 404) => {
            cx.send(Some(&key), method, &concrete(op, &Uuid::now_v7().to_string()), update_body(op).as_ref()).await
        }
        (Kind::Create, 404) => {
            let body = dangling_reference(cx, op.c())?;
            cx.send(Some(&key), method, &op.path, Some(&body)).await
        }
        (Kind::Create, 201) => {
            let body = copy_body(cx, op.c())?;
            let r = cx.send(Some(&key), method, &op.path, Some(&body)).await;
            // A create response that carries a secret documents it as required.
            if r.status == 201 {
                check_success_body(cx, op, 201, &r);
            }
            r
        }
        (Kind::Create, 409) => create_conflict(cx, op).await?,
        (Kind::Update, 409) => update_conflict(cx, op).await?,
        (Kind::Update, 200) => cx.send(Some(&key), method, &valid(cx), update_body(op).as_ref()).await,
        (Kind::Create | Kind::Update | Kind::Action | Kind::Command, 413) => {
            let huge = format!("{{\"pad\": \"{}\"}}", "x".repeat(TOO_LARGE)).into_bytes();
            cx.send_raw(method, &valid(cx), "application/json", huge).await
        }
        (Kind::Create | Kind::Update | Kind::Action | Kind::Command | Kind::Upload, 415) => {
            cx.send_raw(method, &valid(cx), "text/plain", b"{}".to_vec()).await
        }
        (Kind::Delete, 200) => {
            let body = copy_body(cx, op.c())?;
            let made = cx.send(Some(&key), "post", &format!("/v1/{}", op.c().name), Some(&body)).await;
            let Some(id) = made.body["data"]["id"].as_str().map(String::from) else {
                cx.fail(format!("{}: could not make a record to delete: {}", op.name(), trim(&made.text)));
                return None;
            };
            cx.send(Some(&key), method, &concrete(op, &id), None).await
        }
        (Kind::Delete, 409) => {
            let id = referenced_record(cx, op.c()).await?;
            cx.send(Some(&key), method, &concrete(op, &id), None).await
        }
        // The database is closed: whatever the operation reaches for fails on Gable's side.
        (_, 500) => {
            let body = match op.kind {
                Kind::Create => copy_body(cx, op.c()),
                Kind::Command => command_body(cx, op),
                _ => update_body(op),
            };
            cx.send(Some(&key), method, &valid(cx), body.as_ref()).await
        }
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// What the layers answer
// ---------------------------------------------------------------------------------------------

/// The statuses the layers in front of an operation's handler can answer, as this test
/// knows the server's layers (`server/src/http/mod.rs`): every route checks `Gable-Version`
/// (400) and a declared body size (413); every operation with a credential checks it (401)
/// and its rate limit (429) and waits on the database (503); every `POST` holds its
/// `Idempotency-Key` (409 while in use, 422 when used for another request).
fn layer_statuses(op: &Op) -> Vec<u16> {
    let mut s = vec![400, 413];
    if op.kind != Kind::Describe {
        s.extend([401, 429, 503]);
    }
    if op.method == "post" && op.kind != Kind::Upload {
        s.extend([409, 422]);
    }
    s
}

/// A small valid file to upload: an owner of a new external id, as CSV.
fn a_file() -> (&'static str, Vec<u8>) {
    ("/v1/imports?collection=owners", format!("external_id,name\nOA-{},Contract Owner\n", Uuid::now_v7()).into_bytes())
}

/// Whether a `POST`'s own handler can answer `409` (a state, a disabled subscription, a
/// duplicate), beside the idempotency layer's.
fn own_conflict(op: &Op) -> bool {
    op.kind == Kind::Action || op.description.contains("`409 conflict`")
}

/// Every operation documents what its layers can answer; and every `POST` answers `409`
/// for a key in use (counted where that is the only `409` it has, checked here for all).
async fn check_layers_are_documented(cx: &mut Ctx<'_>, ops: &[Op]) {
    for op in ops {
        for status in layer_statuses(op) {
            if !op.statuses.contains(&status) {
                cx.fail(format!("{}: omits {status}, which the layers in front of it answer", op.name()));
            }
        }
        if op.method == "post" && own_conflict(op) {
            let path = match op.kind {
                Kind::SandboxClock => op.path.clone(),
                _ => concrete(op, &cx.world_id(op.c().name)),
            };
            let r = key_in_use(cx, op, &path).await;
            if r.status != 409 || r.body["error"]["code"] != json!("idempotency_key_in_use") {
                cx.fail(format!("{}: a key in use got {}: {}", op.name(), r.status, trim(&r.text)));
            }
        }
    }
}

/// A stream's statuses, through the streams' own client (`gable_tests::sse`): a `200` is
/// read up to its `ready` event (the answer does not end), every refusal whole. Over the
/// rate limit, each request is one the handler refuses anyway (a bad parameter), so none
/// that gets through opens a stream.
async fn provoke_stream(cx: &mut Ctx<'_>, op: &Op, status: u16) -> Option<Res> {
    use gable_tests::sse::EventStream;
    let (bad, ready) = match op.c().name {
        "events" => ("?events=no.such_type", "event_stream"),
        _ => ("?filter[no_such_field]=1", "request_log_stream"),
    };
    if status == 429 {
        let path = format!("{}{bad}", op.path);
        return Some(over_the_rate_limit(cx, op, &path).await);
    }
    let (key, query) = match status {
        200 | 500 => (cx.key.clone(), ""),
        400 => (cx.key.clone(), bad),
        401 => (String::new(), ""),
        // A key of another collection's read scope (`webhooks:read`): no `events:read`.
        403 => (cx.narrow_key(op.c()).to_string(), ""),
        _ => return None,
    };
    let url = cx.url(&format!("{}{query}", op.path));
    Some(match EventStream::open(&cx.app.client, &url, &key, None).await {
        Ok(stream) => {
            if stream.ready["object"] != json!(ready) {
                cx.fail(format!("{}: 200 whose first event is not `ready`: {}", op.name(), stream.ready));
            }
            Res { status: 200, headers: Default::default(), text: stream.ready.to_string(), body: stream.ready }
        }
        Err(refused) => Res { status: refused.status, headers: Default::default(), text: refused.body.to_string(), body: refused.body },
    })
}

/// A request to the rate-limited node (one request per second per key), repeated until it
/// is refused: `429` with `Retry-After` and the RateLimit fields.
async fn over_the_rate_limit(cx: &mut Ctx<'_>, op: &Op, path: &str) -> Res {
    let mut last = None;
    for _ in 0..3 {
        let method: reqwest::Method = op.method.to_uppercase().parse().expect("method");
        let mut req = cx.app.client.request(method, format!("{}{path}", cx.limited)).bearer_auth(&cx.key).json(&json!({}));
        if op.method == "post" {
            req = req.header("Idempotency-Key", Uuid::new_v4().to_string());
        }
        let r = cx.app.raw(req).await;
        if r.status == 429 {
            for h in ["retry-after", "ratelimit", "ratelimit-policy"] {
                if r.headers.get(h).is_none() {
                    cx.fail(format!("{}: 429 without {h}", op.name()));
                }
            }
            return r;
        }
        last = Some(r);
    }
    last.expect("three tries")
}

/// A key used once (the answer stored, a refusal included), then with another body: `422`.
async fn key_reused(cx: &mut Ctx<'_>, op: &Op, path: &str) -> Res {
    let (app, url, credential, key) = (cx.app, cx.url(path), cx.key.clone(), Uuid::new_v4().to_string());
    let send = |body: Value| app.raw(app.client.post(&url).bearer_auth(&credential).header("Idempotency-Key", &key).json(&body));
    let first = send(json!({ "no_such_field": 1 })).await;
    if first.status >= 500 {
        cx.fail(format!("{}: the first use of a key got {}", op.name(), first.status));
    }
    send(json!({ "no_such_field": 2 })).await
}

/// The same request again while the first still runs (here: its key reserved in the store
/// as the idempotency layer reserves it, by a process that has not answered yet):
/// `409 idempotency_key_in_use`, with `Retry-After`.
async fn key_in_use(cx: &mut Ctx<'_>, op: &Op, path: &str) -> Res {
    use gable::store::idempotency::{reserve, Owner, Request, KEEP};
    let key = Uuid::new_v4().to_string();
    let found = cx.app.store.find_key(&cx.key).await.expect("find key").expect("the key exists");
    let owner = Owner { tenant: found.tenant_id, livemode: found.livemode, credential: found.id };
    let fingerprint = gable::http::idempotency::fingerprint(&axum::http::Method::POST, path, b"{}");
    let running = Request { key: key.clone(), fingerprint, method: "POST".into(), path: path.to_string() };
    let now = cx.app.clock.now();
    cx.app
        .store
        .in_tenant(owner.tenant, owner.livemode, gable::store::Intent::Write, async |tx| {
            reserve(tx, &owner, &running, now, chrono::Duration::seconds(60), KEEP).await
        })
        .await
        .expect("reserve");
    let req = cx
        .app
        .client
        .post(cx.url(path))
        .bearer_auth(&cx.key)
        .header("Idempotency-Key", &key)
        .header("content-type", "application/json")
        .body("{}");
    let r = cx.app.raw(req).await;
    if r.status == 409 && r.headers.get("retry-after").is_none() {
        cx.fail(format!("{}: idempotency_key_in_use without Retry-After", op.name()));
    }
    r
}

/// `503` on every operation that documents it: a second node whose request timeout is 1 s,
/// with every connection of its database pool held (as a burst of slow queries would hold
/// them), answers each request, sent all at once, when its time is up.
async fn provoke_busy(cx: &mut Ctx<'_>, ops: &[Op]) {
    use gable::store::Intent;
    let busy = cx.app.second_node().args(|a| a.request_timeout_secs = 1).spawn().await;
    let pool = busy.store.connections();
    let mut held = vec![busy.store.begin_system(Intent::Write).await.expect("the writer")];
    // Every connection the pool can give (the node's own background work may hold one).
    while held.len() < pool.max {
        match busy.store.begin_system(Intent::Read).await {
            Ok(tx) => held.push(tx),
            Err(_) => break,
        }
    }
    let mut requests = vec![];
    for op in ops.iter().filter(|op| op.statuses.contains(&503)) {
        let path = match op.kind {
            Kind::Describe | Kind::List | Kind::Create | Kind::SandboxClock => op.path.clone(),
            Kind::Upload => a_file().0.to_string(),
            _ => concrete(op, &cx.world_id(op.c().name)),
        };
        let method: reqwest::Method = op.method.to_uppercase().parse().expect("method");
        if op.kind == Kind::Upload {
            let req = cx.app.client.request(method, format!("{}{path}", busy.sandbox)).bearer_auth(&cx.key);
            requests.push((op, cx.app.raw(req.header("content-type", "text/csv").body(a_file().1))));
            continue;
        }
        let body = match op.kind {
            Kind::Create => copy_body(cx, op.c()),
            Kind::Command => command_body(cx, op),
            Kind::SandboxClock if op.method == "post" => {
                Some(json!({ "to": (cx.app.clock.now() + chrono::Duration::days(1)).to_rfc3339() }))
            }
            _ => update_body(op),
        };
        let app = cx.app;
        let mut req = app.client.request(method, format!("{}{path}", busy.sandbox)).bearer_auth(&cx.key);
        if op.method == "post" {
            req = req.header("Idempotency-Key", Uuid::new_v4().to_string());
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        requests.push((op, app.raw(req)));
    }
    let (ops_sent, sent): (Vec<&Op>, Vec<_>) = requests.into_iter().unzip();
    let answers = futures::future::join_all(sent).await;
    drop(held);
    for (op, r) in ops_sent.into_iter().zip(answers) {
        if r.status == 503 && r.headers.get("retry-after").is_none() {
            cx.fail(format!("{}: 503 without Retry-After", op.name()));
        }
        judge(cx, op, 503, Some(r));
    }
    busy.stop().await;
}

/// The sandbox clock's statuses. An advance moves the tenant's sandbox a minute on, so
/// nothing else the test does sees a day pass.
async fn provoke_clock(cx: &mut Ctx<'_>, op: &Op, status: u16) -> Option<Res> {
    let key = cx.key.clone();
    let post = op.method == "post";
    // A valid body: a minute past the sandbox's time (once the database is closed, any future time).
    let to = if status == 500 {
        cx.app.clock.now() + chrono::Duration::days(30)
    } else {
        let r = cx.send(Some(&key), "get", "/v1/sandbox/clock", None).await;
        let now = r.body["data"]["now"].as_str().and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
        now?.to_utc() + chrono::Duration::minutes(1)
    };
    let body = post.then(|| json!({ "to": to.to_rfc3339() }));
    Some(match status {
        200 => {
            let r = cx.send(Some(&key), op.method, &op.path, body.as_ref()).await;
            if r.status == 200 {
                check_success_body(cx, op, 200, &r);
                if post && r.body["data"]["now"].as_str().and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok()) != Some(to.into()) {
                    cx.fail(format!("{}: advanced to {}, asked for {to}", op.name(), r.body["data"]["now"]));
                }
            }
            r
        }
        400 if post => cx.send(Some(&key), op.method, &op.path, Some(&json!({}))).await,
        400 => cx.app.raw(cx.request("get", &op.path).bearer_auth(&key).header("gable-version", "1999-01-01")).await,
        401 => cx.send(None, op.method, &op.path, body.as_ref()).await,
        403 => {
            let narrow = cx.narrow[0].0.clone();
            cx.send(Some(&narrow), op.method, &op.path, body.as_ref()).await
        }
        // Production has no sandbox clock.
        404 => {
            cx.set_live(true);
            let r = cx.send(Some(&cx.key.clone()), op.method, &op.path, body.as_ref()).await;
            cx.set_live(false);
            r
        }
        413 => {
            let huge = format!("{{\"pad\": \"{}\"}}", "x".repeat(TOO_LARGE)).into_bytes();
            cx.send_raw(op.method, &op.path, "application/json", huge).await
        }
        415 => cx.send_raw(op.method, &op.path, "text/plain", b"{}".to_vec()).await,
        500 => cx.send(Some(&key), op.method, &op.path, body.as_ref()).await,
        _ => return None,
    })
}

/// A success body is the documented envelope: its `object` is one the schema allows, and
/// the documented required properties of `data` (of each item, for a list) are there, such
/// as a secret shown once.
fn check_success_body(cx: &mut Ctx<'_>, op: &Op, status: u16, r: &Res) {
    let response = &cx.doc["paths"][&op.path][op.method]["responses"][status.to_string()];
    let Some(schema) = resolve(&cx.doc, response).pointer("/content/application~1json/schema") else { return };
    let envelope = resolve(&cx.doc, schema).clone();
    let objects = envelope["properties"]["object"]["enum"].as_array().cloned().unwrap_or_default();
    if !objects.is_empty() && !objects.contains(&r.body["object"]) {
        cx.fail(format!("{}: {status} with `object` {}, documented as one of {objects:?}", op.name(), r.body["object"]));
    }
    let data = resolve(&cx.doc, &envelope["properties"]["data"]).clone();
    let (schema, records) = match r.body["data"].as_array() {
        Some(items) => (resolve(&cx.doc, &data["items"]).clone(), items.clone()),
        None => (data, vec![r.body["data"].clone()]),
    };
    for record in records {
        for name in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            if record.get(name).is_none_or(Value::is_null) {
                cx.fail(format!("{}: the {status} body lacks required `{name}`", op.name()));
            }
        }
    }
}

/// A valid body for a command, from its documented schema: its required properties (the
/// first value of an enum, a time an hour before the server's clock for a date-time), or
/// none when nothing is required.
fn command_body(cx: &Ctx<'_>, op: &Op) -> Option<Value> {
    let schema = op.body_schema.as_ref()?;
    let required: Vec<&str> = schema["required"].as_array()?.iter().filter_map(Value::as_str).collect();
    if required.is_empty() {
        return None;
    }
    let mut body = Map::new();
    for name in required {
        let p = resolve(&cx.doc, &schema["properties"][name]);
        let v = match (p["enum"].get(0), p["format"].as_str()) {
            (Some(first), _) => first.clone(),
            (None, Some("date-time")) => json!((cx.app.clock.now() - chrono::Duration::hours(1)).to_rfc3339()),
            (None, Some("uuid")) => json!(Uuid::now_v7().to_string()),
            _ => json!("served"),
        };
        body.insert(name.to_string(), v);
    }
    Some(Value::Object(body))
}

/// `409` of a command: a test event sent to a disabled subscription, the one state that
/// refuses it.
async fn command_conflict(cx: &mut Ctx<'_>, op: &Op) -> Option<Res> {
    if op.path != "/v1/webhooks/{id}/test" {
        return None;
    }
    let webhooks = collection("webhooks").expect("webhooks");
    let mut body = copy_body(cx, webhooks)?;
    body["status"] = json!("disabled");
    let made = cx.send(Some(&cx.key), "post", "/v1/webhooks", Some(&body)).await;
    let Some(id) = made.body["data"]["id"].as_str().map(String::from) else {
        cx.fail(format!("{}: could not make a disabled webhook: {}", op.name(), trim(&made.text)));
        return None;
    };
    Some(cx.send(Some(&cx.key), op.method, &concrete(op, &id), command_body(cx, op).as_ref()).await)
}

/// A body for PATCH (metadata, which every updatable collection has, or the first
/// documented field sent back unchanged); `None` for operations without a body.
fn update_body(op: &Op) -> Option<Value> {
    if op.kind != Kind::Update {
        return None;
    }
    let schema = op.body_schema.as_ref()?;
    if schema["properties"].get("metadata").is_some() {
        return Some(json!({ "metadata": { "served": "yes" } }));
    }
    None
}

/// A valid create body: the world record's values of the fields the create schema lists.
/// A payment leaves out its invoice: a second payment would settle the world's invoice,
/// which then takes no more payments.
fn copy_body(cx: &Ctx<'_>, c: &Collection) -> Option<Value> {
    let schema_name = cx.doc["paths"][format!("/v1/{}", c.name)]["post"]["requestBody"]["content"]["application/json"]["schema"].clone();
    let schema = resolve(&cx.doc, &schema_name).clone();
    let record = cx.records.get(c.name)?;
    let mut body = Map::new();
    for name in schema["properties"].as_object()?.keys() {
        if (c.name, name.as_str()) == ("payments", "invoice_id") {
            continue;
        }
        if let Some(v) = record.get(name).filter(|v| !v.is_null()) {
            body.insert(name.clone(), v.clone());
        }
    }
    Some(Value::Object(body))
}

/// A create body whose reference names no record: the first reference field, or, for a
/// report, the property its parameters name.
fn dangling_reference(cx: &Ctx<'_>, c: &Collection) -> Option<Value> {
    let mut body = copy_body(cx, c)?;
    let missing = Uuid::now_v7().to_string();
    if let Some(f) = c.fields.iter().find(|f| matches!(f.ty, Ty::Ref(_)) && body.get(f.name).is_some()) {
        body[f.name] = json!(missing);
    } else if let Some(f) = c.fields.iter().find(|f| matches!(f.ty, Ty::RefList(_)) && body.get(f.name).is_some()) {
        body[f.name] = json!([missing]);
    } else if let Some(f) = c.fields.iter().find(|f| matches!(f.ty, Ty::Ref(_))) {
        body[f.name] = json!(missing);
    } else if c.name == "reports" {
        body["parameters"] = json!({ "property_id": missing });
    } else {
        return None;
    }
    Some(body)
}

/// `409` on an update: the `external_id` another record of the collection holds.
async fn update_conflict(cx: &mut Ctx<'_>, op: &Op) -> Option<Res> {
    let taken = format!("taken-{}", Uuid::now_v7());
    let mut body = copy_body(cx, op.c())?;
    body["external_id"] = json!(taken);
    let key = cx.key.clone();
    let made = cx.send(Some(&key), "post", &format!("/v1/{}", op.c().name), Some(&body)).await;
    if made.status != 201 {
        cx.fail(format!("{}: could not make a record holding an external_id: {}", op.name(), trim(&made.text)));
        return None;
    }
    let path = concrete(op, &cx.world_id(op.c().name));
    Some(cx.send(Some(&key), "patch", &path, Some(&json!({ "external_id": taken }))).await)
}

/// `409` on a create: a manual journal entry reversing one that is already reversed.
async fn create_conflict(cx: &mut Ctx<'_>, op: &Op) -> Option<Res> {
    if op.c().name == "flow-tokens" {
        // The world's listing is a draft: no flow takes applications for it.
        let body = json!({ "flow": "rental-application", "origin": "https://www.example.com", "listing_id": cx.world_id("listings") });
        let key = cx.key.clone();
        return Some(cx.send(Some(&key), "post", &op.path, Some(&body)).await);
    }
    if op.c().name != "accounting-entries" {
        return None;
    }
    let original = cx.records["accounting-entries"].clone();
    let lines: Vec<Value> = original["lines"]
        .as_array()?
        .iter()
        .map(|l| json!({ "account": l["account"], "debit": l["credit"], "credit": l["debit"] }))
        .collect();
    let body = json!({
        "lines": lines, "currency": original["currency"], "posted_on": original["posted_on"],
        "property_id": original["property_id"], "reverses_id": original["id"],
    });
    let key = cx.key.clone();
    let first = cx.send(Some(&key), "post", &op.path, Some(&body)).await;
    if first.status != 201 {
        cx.fail(format!("{}: the first reversal is refused: {}", op.name(), trim(&first.text)));
    }
    Some(cx.send(Some(&key), "post", &op.path, Some(&body)).await)
}

/// The id of a world record of `c` that another record references: an existing reference
/// in the world, or a new copy of a referring record made to point at it.
async fn referenced_record(cx: &mut Ctx<'_>, c: &Collection) -> Option<String> {
    let id = cx.world_id(c.name);
    let referrers: Vec<(&'static Collection, &'static str)> =
        COLLECTIONS.iter().flat_map(|o| o.fields.iter().filter(|f| f.ty == Ty::Ref(c.name)).map(move |f| (o, f.name))).collect();
    if referrers.iter().any(|(o, f)| cx.records.get(o.name).is_some_and(|r| r[*f] == json!(id))) {
        return Some(id);
    }
    let key = cx.key.clone();
    for (o, f) in referrers {
        let Some(mut body) = copy_body(cx, o) else { continue };
        body[f] = json!(id);
        if cx.send(Some(&key), "post", &format!("/v1/{}", o.name), Some(&body)).await.status == 201 {
            return Some(id);
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Actions: a fresh record brought to a state the action leaves, the action, then again
// ---------------------------------------------------------------------------------------------

/// One step towards a state: an action of the record's own machine, or something done to
/// other records (the last signature signed makes a sent lease `signed`).
#[derive(Debug, Clone)]
enum Step {
    Act(&'static workflow::Action),
    SignLease,
}

/// Ways a record changes state besides its own actions (`ops::effects`).
fn external_steps(c: &str) -> Vec<(&'static str, &'static str, Step)> {
    match c {
        "leases" => vec![("sent", "signed", Step::SignLease)],
        _ => vec![],
    }
}

/// The shortest list of steps from `from` to a state in `targets`.
fn route(c: &Collection, from: &str, targets: &[&str]) -> Option<Vec<Step>> {
    let m = workflow::machine(c.name)?;
    let mut edges: Vec<(&str, &str, Step)> = vec![];
    for a in m.actions {
        for f in a.from {
            edges.push((*f, a.to, Step::Act(a)));
        }
    }
    edges.extend(external_steps(c.name));
    let mut seen: HashMap<String, Vec<Step>> = HashMap::from([(from.to_string(), vec![])]);
    let mut queue = VecDeque::from([from.to_string()]);
    while let Some(state) = queue.pop_front() {
        let steps = seen[&state].clone();
        if targets.contains(&state.as_str()) {
            return Some(steps);
        }
        for (_, to, step) in edges.iter().filter(|(f, _, _)| *f == state) {
            if !seen.contains_key(*to) {
                let mut next = steps.clone();
                next.push(step.clone());
                seen.insert(to.to_string(), next);
                queue.push_back(to.to_string());
            }
        }
    }
    None
}

/// A body for an action: its required parameters, from its documented schema.
fn action_body(doc: &Value, schema: Option<&Value>) -> Option<Value> {
    let schema = schema?;
    let required: Vec<&str> = schema["required"].as_array()?.iter().filter_map(Value::as_str).collect();
    if required.is_empty() {
        return None;
    }
    let mut body = Map::new();
    for name in required {
        let p = resolve(doc, &schema["properties"][name]);
        let v = match (p["enum"].get(0), p["format"].as_str()) {
            (Some(first), _) => first.clone(),
            (None, Some("date")) => json!("2027-03-01"),
            _ => json!("served"),
        };
        body.insert(name.to_string(), v);
    }
    Some(Value::Object(body))
}

/// Runs an action with the body its own documented schema calls for.
async fn act(cx: &Ctx<'_>, c: &Collection, id: &str, a: &workflow::Action) -> Res {
    let schema = cx.doc["paths"][format!("/v1/{}/{{id}}/{}", c.name, a.name)]["post"]
        .pointer("/requestBody/content/application~1json/schema")
        .map(|s| resolve(&cx.doc, s).clone());
    cx.send(Some(&cx.key), "post", &format!("/v1/{}/{id}/{}", c.name, a.name), action_body(&cx.doc, schema.as_ref()).as_ref()).await
}

/// A new record of `c` in its first state, made like the world's: signatures belong to a
/// fresh sent lease, since only those can be signed.
async fn fresh(cx: &mut Ctx<'_>, c: &Collection) -> Result<Value, String> {
    if is_uploaded(c) {
        let (path, file) = a_file();
        let r = cx.send_raw("post", path, "text/csv", file).await;
        return if r.status == 201 { Ok(r.body["data"].clone()) } else { Err(format!("uploading failed: {}", trim(&r.text))) };
    }
    let mut body = copy_body(cx, c).ok_or("no create body")?;
    if c.name == "signatures" {
        let leases = collection("leases").expect("leases");
        let lease = fresh_in(cx, leases, &["sent"]).await?;
        body["lease_id"] = lease["id"].clone();
    }
    if c.name == "payments" && cx.live {
        // A live payment records money received outside Gable: no scenario (the sandbox's),
        // no lease of the sandbox's world.
        body = json!({ "amount": body["amount"], "currency": body["currency"], "method": "cash" });
    }
    let r = cx.send(Some(&cx.key), "post", &format!("/v1/{}", c.name), Some(&body)).await;
    if r.status != 201 {
        return Err(format!("creating {} failed: {}", c.name, trim(&r.text)));
    }
    Ok(r.body["data"].clone())
}

/// A new record of `c` brought to one of `states`.
async fn fresh_in(cx: &mut Ctx<'_>, c: &Collection, states: &[&str]) -> Result<Value, String> {
    // Boxed: `fresh` makes a sent lease for a signature through this function.
    let made: Pin<Box<dyn Future<Output = Result<Value, String>> + '_>> = Box::pin(fresh(cx, c));
    let mut rec = made.await?;
    let start = rec["status"].as_str().unwrap_or_default().to_string();
    let steps = route(c, &start, states).ok_or_else(|| format!("no way from {start} to {states:?}"))?;
    let id = rec["id"].as_str().unwrap_or_default().to_string();
    for step in steps {
        match step {
            Step::Act(a) => {
                let r = act(cx, c, &id, a).await;
                if r.status != 200 {
                    return Err(format!("{} {} on the way: {}", c.name, a.name, trim(&r.text)));
                }
                rec = r.body["data"].clone();
            }
            Step::SignLease => {
                let signatures = collection("signatures").expect("signatures");
                let mut body = copy_body(cx, signatures).ok_or("no signature body")?;
                body["lease_id"] = json!(id);
                let made = cx.send(Some(&cx.key), "post", "/v1/signatures", Some(&body)).await;
                let sig = made.body["data"]["id"].as_str().ok_or_else(|| format!("signature: {}", trim(&made.text)))?.to_string();
                let sign = workflow::machine("signatures").and_then(|m| m.action("sign")).expect("sign");
                let r = act(cx, signatures, &sig, sign).await;
                if r.status != 200 {
                    return Err(format!("signing: {}", trim(&r.text)));
                }
                let r = cx.send(Some(&cx.key), "get", &format!("/v1/leases/{id}"), None).await;
                rec = r.body["data"].clone();
            }
        }
    }
    Ok(rec)
}

/// `200` and `409` of an action: a fresh record in a state the action leaves, the action
/// (200, to its target state), and the same action again (409, since it is not allowed from
/// its own target state). A payment's actions from `pending` run in live mode: the sandbox
/// settles a test payment as it is created, so none is ever pending there.
async fn provoke_action(cx: &mut Ctx<'_>, op: &Op, statuses: &[u16]) {
    let (c, a) = (op.c(), op.action.expect("an action"));
    cx.set_live(c.name == "payments" && a.from.contains(&"pending"));
    provoke_action_here(cx, op, statuses).await;
    cx.set_live(false);
}

/// `provoke_action` in the environment `cx` sends to.
async fn provoke_action_here(cx: &mut Ctx<'_>, op: &Op, statuses: &[u16]) {
    let (c, a) = (op.c(), op.action.expect("an action"));
    let rec = match fresh_in(cx, c, a.from).await {
        Ok(r) => r,
        Err(e) => {
            for s in statuses {
                cx.checked += 1;
                cx.fail(format!("{}: documents {s}; no record could be brought to {:?}: {e}", op.name(), a.from));
            }
            return;
        }
    };
    let id = rec["id"].as_str().unwrap_or_default().to_string();
    let first = act(cx, c, &id, a).await;
    if statuses.contains(&200) {
        if first.status == 200 && first.body["data"]["status"] != json!(a.to) {
            cx.fail(format!("{}: 200, but the record is {} rather than {}", op.name(), first.body["data"]["status"], a.to));
        }
        judge(cx, op, 200, Some(first));
    }
    if statuses.contains(&409) {
        let again = if a.from.contains(&a.to) { None } else { Some(act(cx, c, &id, a).await) };
        judge(cx, op, 409, again);
    }
}
