//! `gable listen`: the environment's events on a developer's machine, from the server's
//! event stream (`GET /v1/events/stream`), each forwarded to a local address signed exactly
//! as a webhook delivery (same body, `Gable-Event-Id`, `Gable-Timestamp`,
//! `Gable-Signature` under the stream's signing secret), or printed.
//!
//! The connection is held, and resumed when it drops, by `follow`. A forward that fails is
//! shown, not retried: the developer sees their endpoint's answer at once and can make the
//! event again (`gable trigger`) or resend it from the console.

use std::time::{Duration, Instant};

use clap::Args;
use serde_json::{json, Value};

use super::follow::{follow, Follower};
use super::profiles::{self, Profiles};
use super::{say, Client, Format, Target};
use crate::domain::webhooks;

/// How long a forward may take (a delivery's own limit).
const FORWARD_TIMEOUT: Duration = crate::outbound::DEFAULT_TIMEOUT;

#[derive(Args)]
pub struct ListenArgs {
    #[command(flatten)]
    target: Target,
    /// Where to POST each event, e.g. http://localhost:4242/webhooks (any address: the
    /// forwarding happens on this machine). Without it the events are printed.
    #[arg(long, short = 'f', value_name = "URL")]
    forward_to: Option<String>,
    /// The event types to listen to, comma-separated (default: every type the key may read).
    #[arg(long, short = 'e', value_delimiter = ',', value_name = "TYPES")]
    events: Vec<String>,
    /// `text`: one line per event for people; `json`: one JSON object per line for scripts
    /// (the event itself, with the forward's outcome under `forward` when forwarding).
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Print the signing secret and exit (`export WEBHOOK_SECRET=$(gable listen --print-secret)`).
    #[arg(long, conflicts_with_all = ["forward_to", "format"])]
    print_secret: bool,
}

#[derive(Default)]
struct Tally {
    events: u64,
    delivered: u64,
    failed: u64,
}

struct Listener {
    format: Format,
    print_secret: bool,
    forward: Option<Forwarder>,
    secret: Option<String>,
    tally: Tally,
}

pub async fn run(args: ListenArgs) -> anyhow::Result<()> {
    let target = profiles::resolve(&args.target, &Profiles::load()?)?;
    let forward = args.forward_to.as_deref().map(Forwarder::new).transpose()?;
    let client = Client::new(target)?;
    say(&format!("Listening to {}.", client.target.describe()));
    let mut path = "/events/stream".to_string();
    if !args.events.is_empty() {
        path.push_str(&format!("?events={}", args.events.join(",")));
    }
    let mut listener = Listener { format: args.format, print_secret: args.print_secret, forward, secret: None, tally: Tally::default() };
    follow(&client, &path, &mut listener).await.map_err(|e| anyhow::anyhow!("the server refused to stream events: {e}"))
}

impl Follower for Listener {
    /// The stream's first event: the secret, said once.
    fn ready(&mut self, ready: &Value, again: bool) -> bool {
        let secret = ready["signing_secret"].as_str().unwrap_or_default().to_string();
        if self.print_secret {
            let _ = crate::cli::print_out(&format!("{secret}\n"));
            return true;
        }
        if again {
            say("Connected again; no event was missed.");
            return false;
        }
        let env = match ready["livemode"].as_bool() {
            Some(true) => "PRODUCTION (live) events",
            Some(false) => "sandbox (test) events",
            None => "events",
        };
        let types = match ready["events"].as_array() {
            Some(t) if t.iter().any(|t| t != "*") => t.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "),
            _ => "all types".into(),
        };
        say(&format!("Ready: {env} ({types}). Your webhook signing secret is {secret} (the same at every start for this key)."));
        match &self.forward {
            Some(f) => say(&format!("Forwarding each event to {}. Ctrl-C to quit.", f.url)),
            None => say("Printing each event (--forward-to URL posts them to your app). Ctrl-C to quit."),
        }
        self.secret = Some(secret);
        false
    }

    /// One event: forwarded and reported, or printed.
    async fn message(&mut self, body: &str) {
        self.tally.events += 1;
        let event: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let kind = event["type"].as_str().unwrap_or("?");
        let id = event["id"].as_str().unwrap_or("?");
        let now = chrono::Local::now().format("%Y-%m-%d %H:%M:%S");
        let forwarded = match (&self.forward, &self.secret) {
            (Some(f), Some(secret)) => Some(f.send(body, id, secret).await),
            _ => None,
        };
        if let Some(f) = &forwarded {
            match f.status {
                Some(s) if (200..300).contains(&s) => self.tally.delivered += 1,
                _ => self.tally.failed += 1,
            }
        }
        let line = match (self.format, forwarded) {
            (Format::Json, None) => body.to_string(),
            (Format::Json, Some(f)) => json!({ "event": event, "forward": f.json() }).to_string(),
            (Format::Text, None) => format!("{now}  {kind:<28} {id}"),
            (Format::Text, Some(f)) => format!("{now}  {kind:<28} {id}  -> {}", f.text()),
        };
        let _ = crate::cli::print_out(&format!("{line}\n"));
    }

    fn summary(&self) -> String {
        let t = &self.tally;
        let forwarded = match self.forward {
            Some(_) => format!(": {} forwarded with a 2xx answer, {} not", t.delivered, t.failed),
            None => String::new(),
        };
        format!("Stopped after {} event(s){forwarded}.", t.events)
    }
}

/// The local endpoint events are forwarded to.
struct Forwarder {
    url: String,
    http: reqwest::Client,
}

/// What the local endpoint made of one event.
struct Forwarded {
    status: Option<u16>,
    latency: Duration,
    error: Option<String>,
}

impl Forwarded {
    fn text(&self) -> String {
        let ms = self.latency.as_millis();
        match (self.status, &self.error) {
            (Some(s), _) => format!("{s} ({ms} ms)"),
            (None, Some(e)) => format!("failed: {e} ({ms} ms)"),
            (None, None) => format!("failed ({ms} ms)"),
        }
    }

    fn json(&self) -> Value {
        json!({ "status": self.status, "latency_ms": self.latency.as_millis() as u64, "error": self.error })
    }
}

impl Forwarder {
    fn new(url: &str) -> anyhow::Result<Forwarder> {
        let parsed = url::Url::parse(url)
            .map_err(|_| anyhow::anyhow!("--forward-to `{url}` is not an address (e.g. http://localhost:4242/webhooks)"))?;
        anyhow::ensure!(matches!(parsed.scheme(), "http" | "https"), "--forward-to `{url}` must be an http or https address");
        // As a delivery: its user agent, its time limit, and no redirect followed.
        let http = reqwest::Client::builder()
            .user_agent(crate::outbound::USER_AGENT)
            .timeout(FORWARD_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Forwarder { url: parsed.to_string(), http })
    }

    async fn send(&self, body: &str, event_id: &str, secret: &str) -> Forwarded {
        let ts = chrono::Utc::now().timestamp();
        let started = Instant::now();
        let sent = self
            .http
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Gable-Event-Id", event_id)
            .header("Gable-Timestamp", ts.to_string())
            .header("Gable-Signature", webhooks::signature_header(&[secret], ts, body.as_bytes()))
            .body(body.to_string())
            .send()
            .await;
        let status = sent.as_ref().ok().map(|r| r.status().as_u16());
        // The time to the answer's head, as a delivery's latency.
        let latency = started.elapsed();
        let error = sent.err().map(|e| match e.is_timeout() {
            true => format!("no answer within {} s", FORWARD_TIMEOUT.as_secs()),
            false => super::api::reason(&e),
        });
        Forwarded { status, latency, error }
    }
}
