//! `gable trigger EVENT`: makes an event fire in the sandbox the way an integration would,
//! by creating (through the public API, with the key given) the smallest set of records
//! that causes it, never by writing an event. `gable trigger --list` names the types.
//!
//! Each type has a recipe (`recipes`): the records to create and the actions to take, and
//! for what the scheduler causes (`rent.due`, `lease.expiring`, `document.expiring`) the
//! sandbox clock advanced just far enough. `--set` changes the body of the record the
//! event is about (`set`). After the last write trigger finds the event the writes caused
//! (`GET /v1/events`, by type and record) and prints it with what it made: a line each in
//! text, or `{"event": …, "made": [{object, id, action}]}` with `--format json`.
//!
//! A live key is refused before anything is done: trigger writes, and only the sandbox is
//! a place to write test records.

use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use clap::Args;
use reqwest::Method;
use serde_json::{json, Value};

use super::profiles::{self, Profiles, Source};
use super::{say, ApiError, Client, Format, Target};
use crate::domain::events::{event_type, EventType, EVENT_TYPES};

mod recipes;
mod set;

use recipes::{words, Recipe, Role, Step, World};

/// How long trigger looks for the event after its last write (it is written in the same
/// transaction, so it is usually there at once).
const EVENT_WAIT: Duration = Duration::from_secs(10);
/// How far past the sandbox's time the clock is moved when the record is due already.
const A_MOMENT: chrono::Duration = chrono::Duration::seconds(2);
/// How often a request refused for the key's rate limit (`429`) is sent again.
const RATE_LIMIT_RETRIES: u32 = 10;

#[derive(Args)]
pub struct TriggerArgs {
    #[command(flatten)]
    target: Target,
    /// The event type to fire, e.g. `payment.succeeded` (`--list` names them all).
    #[arg(value_name = "EVENT", required_unless_present = "list")]
    event: Option<String>,
    /// List the event types `trigger` fires, and what it makes for each, and exit.
    #[arg(long)]
    list: bool,
    /// Sets a field of the record the event is about (repeatable): `--set amount=12.50`;
    /// a dotted field is nested: `--set metadata.order=42`. A value that reads as JSON is taken as JSON, except
    /// that a number stays text in a field that holds text (`--set number=101`).
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    set: Vec<String>,
    /// `text`: a line per record made, then the event, for people; `json`: one JSON object
    /// `{"event": …, "made": [{"object", "id", "action"}, …]}`, for scripts.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

pub async fn run(args: TriggerArgs) -> anyhow::Result<()> {
    if args.list {
        return crate::cli::print_out(&list());
    }
    // Everything that can be wrong with the command is found before anything is written.
    let name = args.event.as_deref().unwrap_or_default().trim();
    let (kind, recipe) = lookup(name)?;
    let sets = set::parse(&args.set, kind.collection)?;
    let subject = subject(recipe, kind)?;
    set::apply(&mut subject.body(&World::new(Utc::now()), |_| Ok(String::new()))?, &sets)?;
    let target = profiles::resolve(&args.target, &Profiles::load()?)?;
    if target.livemode() == Some(true) {
        let whose = match &target.source {
            Source::Given => "the key given".to_string(),
            Source::Profile(name) => format!("the key of profile `{name}`"),
        };
        anyhow::bail!(
            "`gable trigger` makes test records and works in the sandbox only, but {whose} is a live key (`gbl_live_…`, \
             PRODUCTION): nothing was done. Use a sandbox key (`gbl_test_…`) and the sandbox's address"
        );
    }
    let client = Client::new(target)?;
    say(&format!("Triggering {name} in {}.", client.target.describe()));
    // The sandbox's time dates the records; reading it also checks the address and key.
    let now = match call(&client, Method::GET, "/sandbox/clock", None).await {
        Ok(clock) => time(&clock["data"]["now"]).context("reading the sandbox clock: its answer has no time")?,
        Err(e) if e.status() == Some(404) => {
            anyhow::bail!("{} has no sandbox clock ({e}): `gable trigger` works on the sandbox's address only", client.target.api_url)
        }
        Err(e) => return Err(e).context("reading the sandbox clock"),
    };
    let mut t = Trigger { client, format: args.format, world: World::new(now), records: vec![], made: vec![] };
    let fired = t.fire(kind, recipe, &sets).await;
    let event = match fired {
        Ok(event) => event,
        Err(e) => {
            if t.format == Format::Json && !t.made.is_empty() {
                let made: Vec<String> = t.made.iter().map(|(_, line)| line.clone()).collect();
                say(&format!("Made before the failure: {}.", made.join("; ")));
            }
            return Err(e);
        }
    };
    let id = event["id"].as_str().unwrap_or_default();
    match t.format {
        Format::Text => crate::cli::print_out(&format!("fired {name}: event {id} (GET /v1/events/{id})\n")),
        Format::Json => {
            let made: Vec<Value> = t.made.into_iter().map(|(entry, _)| entry).collect();
            crate::cli::print_out(&format!("{}\n", serde_json::to_string_pretty(&json!({ "event": event, "made": made }))?))
        }
    }
}

/// The event type and its recipe, or an error naming the closest types.
fn lookup(name: &str) -> anyhow::Result<(&'static EventType, &'static Recipe)> {
    let Some(kind) = event_type(name) else {
        let hint = match suggest(name).as_slice() {
            [] => String::new(),
            [one] => format!(" Did you mean `{one}`?"),
            many => format!(" Did you mean one of {}?", many.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")),
        };
        anyhow::bail!("`{name}` is not an event type.{hint} `gable trigger --list` names them all");
    };
    let recipe = recipes::recipe(name).with_context(|| format!("`gable trigger` cannot make {name} yet"))?;
    Ok((kind, recipe))
}

/// The record of the recipe that the event is about (the one `--set` changes).
fn subject(recipe: &Recipe, kind: &EventType) -> anyhow::Result<Role> {
    recipe
        .plan()
        .into_iter()
        .find_map(|s| match s {
            Step::Make(role) if role.collection() == kind.collection => Some(role),
            _ => None,
        })
        .with_context(|| format!("the recipe of {} makes no {} record", kind.name, kind.collection))
}

/// The types a mistyped name may have meant: those it begins (`payment.succ`), else the
/// nearest by spelling, else those of its first part (`payment.refunded`).
fn suggest(name: &str) -> Vec<&'static str> {
    let name = name.to_ascii_lowercase();
    let all = || EVENT_TYPES.iter().map(|t| t.name);
    let mut found: Vec<&str> = match name.len() >= 3 {
        true => all().filter(|t| t.starts_with(&name)).collect(),
        false => vec![],
    };
    if found.is_empty() {
        let nearest = all().map(|t| (distance(&name, t), t)).min_by_key(|(d, _)| *d).map_or(usize::MAX, |(d, _)| d);
        found = all().filter(|t| nearest <= 3 && distance(&name, t) == nearest).collect();
    }
    if found.is_empty() {
        let first = name.split('.').next().unwrap_or_default();
        found = all().filter(|t| !first.is_empty() && t.split('.').next() == Some(first)).collect();
    }
    found.truncate(4);
    found
}

/// Levenshtein distance, by characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1).min(row[j] + 1).min(prev + usize::from(ca != *cb));
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// `--list`: every type, what it means, and what trigger makes for it.
fn list() -> String {
    let width = EVENT_TYPES.iter().map(|t| t.name.len()).max().unwrap_or(0) + 2;
    let mut out = String::from("The event types `gable trigger EVENT` fires in the sandbox, and what it makes for each:\n\n");
    for t in EVENT_TYPES {
        let makes = recipes::recipe(t.name).map_or_else(|| "(no recipe yet)".to_string(), |r| r.phrase());
        out.push_str(&format!("{:<width$}{}\n{:<width$}makes: {makes}\n", t.name, t.doc, ""));
    }
    out
}

/// One run: the records made so far and what to print of them.
struct Trigger {
    client: Client,
    format: Format,
    world: World,
    /// The records made, by collection, as their last answer showed them.
    records: Vec<(&'static str, Value)>,
    /// For the output: each record made or changed (its JSON entry and its line).
    made: Vec<(Value, String)>,
}

impl Trigger {
    /// Runs the recipe; the event it caused.
    async fn fire(&mut self, kind: &EventType, recipe: &Recipe, sets: &[set::Set]) -> anyhow::Result<Value> {
        for step in recipe.plan() {
            match step {
                Step::Make(role) => self.make(role, kind, sets).await?,
                Step::Act(role, action, body) => self.act(role, action, body).await?,
                Step::Advance { field, days_before } => self.advance(kind, field, days_before).await?,
            }
        }
        let id = self.id(kind.collection)?;
        self.find_event(kind, &id).await
    }

    fn record(&self, collection: &str) -> anyhow::Result<&Value> {
        self.records
            .iter()
            .rev()
            .find(|(c, _)| *c == collection)
            .map(|(_, r)| r)
            .with_context(|| format!("no {collection} record was made"))
    }

    fn id(&self, collection: &str) -> anyhow::Result<String> {
        let record = self.record(collection)?;
        record["id"].as_str().map(String::from).with_context(|| format!("the {collection} record made has no id"))
    }

    fn keep(&mut self, collection: &'static str, record: Value) {
        self.records.retain(|(c, _)| *c != collection);
        self.records.push((collection, record));
    }

    /// Notes a record made or changed, printed at once in text.
    fn note(&mut self, entry: Value, line: String) -> anyhow::Result<()> {
        if self.format == Format::Text {
            crate::cli::print_out(&format!("{line}\n"))?;
        }
        self.made.push((entry, line));
        Ok(())
    }

    async fn make(&mut self, role: Role, kind: &EventType, sets: &[set::Set]) -> anyhow::Result<()> {
        let doing = || format!("creating the {}", role.noun());
        let mut body = role.body(&self.world, |c| self.id(c)).with_context(doing)?;
        if role.collection() == kind.collection {
            set::apply(&mut body, sets)?;
        }
        let answer = match role {
            // An import is made by uploading its file: here one line, the body.
            Role::Import => self.client.upload("/imports?collection=owners", "application/x-ndjson", format!("{body}\n")).await,
            _ => call(&self.client, Method::POST, &format!("/{}", role.collection()), Some(&body)).await,
        }
        .with_context(doing)?;
        let record = answer["data"].clone();
        let (object, id) = (record["object"].as_str().unwrap_or(role.noun()).to_string(), record["id"].clone());
        self.keep(role.collection(), record);
        let line = format!("created {object} {}", id.as_str().unwrap_or("?"));
        self.note(json!({ "object": object, "id": id, "action": "created" }), line)
    }

    async fn act(&mut self, role: Role, action: &str, body: Option<&str>) -> anyhow::Result<()> {
        let (_, past, gerund) = words(action);
        let doing = || format!("{gerund} the {}", role.noun());
        let id = self.id(role.collection()).with_context(doing)?;
        let body: Option<Value> = body.map(serde_json::from_str).transpose().with_context(doing)?;
        let path = format!("/{}/{id}/{action}", role.collection());
        let answer = call(&self.client, Method::POST, &path, body.as_ref()).await.with_context(doing)?;
        let record = answer["data"].clone();
        let object = record["object"].as_str().unwrap_or(role.noun()).to_string();
        self.keep(role.collection(), record);
        let entry = json!({ "object": object, "id": id, "action": past.replace(' ', "_") });
        self.note(entry, format!("{past} {object} {id}"))
    }

    /// Moves the sandbox clock to when the event's record falls due (`field` less
    /// `days_before` days), or a moment on when it is due already.
    async fn advance(&mut self, kind: &EventType, field: &str, days_before: i64) -> anyhow::Result<()> {
        let record = self.record(kind.collection)?;
        let object = record["object"].as_str().unwrap_or(kind.collection).to_string();
        let due = time(&record[field]).with_context(|| format!("the {object} has no {field}: {} falls due from it", kind.name))?
            - chrono::Duration::days(days_before);
        let clock = call(&self.client, Method::GET, "/sandbox/clock", None).await.context("reading the sandbox clock")?;
        let now = time(&clock["data"]["now"]).context("reading the sandbox clock: its answer has no time")?;
        let to = due.max(now + A_MOMENT).to_rfc3339_opts(SecondsFormat::Millis, true);
        let answer = call(&self.client, Method::POST, "/sandbox/clock/advance", Some(&json!({ "to": to })))
            .await
            .with_context(|| format!("advancing the sandbox clock to {to}"))?;
        let advanced = answer["data"]["advanced"].clone();
        let fired = advanced["events_fired"].as_u64().unwrap_or(0);
        let line = format!("advanced the sandbox clock to {to} ({fired} event(s) fired on the way)");
        self.note(json!({ "object": "sandbox_clock", "action": "advanced", "to": to, "advanced": advanced }), line)
    }

    /// The event of `kind` about the record `id`, newest first, waiting up to `EVENT_WAIT`.
    async fn find_event(&self, kind: &EventType, id: &str) -> anyhow::Result<Value> {
        let path = format!("/events?filter[type]={}&filter[related_object_id]={id}&limit=10", kind.name);
        let deadline = Instant::now() + EVENT_WAIT;
        loop {
            let page =
                call(&self.client, Method::GET, &path, None).await.with_context(|| format!("looking for the {} event", kind.name))?;
            let found = page["data"].as_array().and_then(|events| events.iter().find(|e| e["data"]["object"]["id"] == id));
            if let Some(event) = found {
                return Ok(event.clone());
            }
            if Instant::now() >= deadline {
                anyhow::bail!(
                    "{} did not fire: no such event about {} {id} appeared within {} s of the last step (a `--set` value can keep it \
                     from firing; see `gable trigger --list` and docs/workflows.md for what causes it)",
                    kind.name,
                    crate::domain::collections::collection(kind.collection).map_or(kind.collection, |c| c.object),
                    EVENT_WAIT.as_secs()
                );
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

/// One API call; a `429` (the key's rate limit) is sent again after a second.
async fn call(client: &Client, method: Method, path: &str, body: Option<&Value>) -> Result<Value, ApiError> {
    let mut tries = 0;
    loop {
        match client.call(method.clone(), path, body).await {
            Err(e) if e.status() == Some(429) && tries < RATE_LIMIT_RETRIES => {
                tries += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            answer => return answer,
        }
    }
}

/// A date-time or a date (its start, UTC) of an answer.
fn time(v: &Value) -> Option<DateTime<Utc>> {
    let s = v.as_str()?;
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .ok()
        .or_else(|| NaiveDate::parse_from_str(s, "%Y-%m-%d").ok().and_then(|d| d.and_hms_opt(0, 0, 0)).map(|t| t.and_utc()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mistyped_type_gets_the_nearest_names() {
        assert_eq!(suggest("payment.succeed"), vec!["payment.succeeded"]);
        assert_eq!(suggest("payment"), vec!["payment.succeeded", "payment.failed", "payment.reversed"]);
        assert_eq!(suggest("paymnet.failed"), vec!["payment.failed"]);
        assert_eq!(suggest("payment_failed"), vec!["payment.failed"]);
        assert_eq!(suggest("lease.terminated"), vec!["lease.sent", "lease.signed", "lease.expiring"]);
        assert!(suggest("zebra").is_empty());
        let e = lookup("payment.succeed").unwrap_err().to_string();
        assert_eq!(e, "`payment.succeed` is not an event type. Did you mean `payment.succeeded`? `gable trigger --list` names them all");
    }

    #[test]
    fn the_list_names_every_type_with_what_trigger_makes() {
        let text = list();
        for t in EVENT_TYPES {
            let line = text.lines().find(|l| l.starts_with(&format!("{} ", t.name))).unwrap_or_else(|| panic!("{}: {text}", t.name));
            assert!(line.ends_with(t.doc), "{line}");
        }
        assert_eq!(text.matches("makes: ").count(), EVENT_TYPES.len());
        assert!(!text.contains("no recipe"), "{text}");
    }

    #[test]
    fn due_moments_read_dates_and_times() {
        assert_eq!(time(&json!("2027-02-01")).unwrap().to_rfc3339(), "2027-02-01T00:00:00+00:00");
        assert_eq!(time(&json!("2027-02-01T10:30:00.123456Z")).unwrap().to_rfc3339(), "2027-02-01T10:30:00.123456+00:00");
        assert!(time(&json!(null)).is_none() && time(&json!("soon")).is_none());
        for t in EVENT_TYPES {
            let (kind, recipe) = lookup(t.name).unwrap();
            assert!(subject(recipe, kind).is_ok());
        }
    }
}
