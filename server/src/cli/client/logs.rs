//! `gable logs tail`: the environment's calls, one line each, as the request log records
//! them (`GET /v1/request-logs/stream`, followed and resumed as `listen` follows events).
//! The filters are the API's (`filter[status_class]`, `filter[path][contains]`,
//! `filter[method]`), so the server sends only what is asked for; an exact status is
//! narrowed by its class on the server, then here.

use clap::{Args, Subcommand};
use serde_json::Value;

use super::follow::{follow, Follower};
use super::profiles::{self, Profiles};
use super::{say, Client, Format, Target};

#[derive(Subcommand)]
pub enum LogsCommand {
    /// Prints each call of the API as the request log records it, until Ctrl-C.
    Tail(TailArgs),
}

#[derive(Args)]
pub struct TailArgs {
    #[command(flatten)]
    target: Target,
    /// Only calls answered with this status or class: `4xx`, `5xx`, `2xx`, or e.g. `404`.
    #[arg(long, value_name = "STATUS")]
    status: Option<String>,
    /// Only calls whose path contains this, e.g. `/v1/leases`.
    #[arg(long, value_name = "PATH")]
    path: Option<String>,
    /// Only calls of this method, e.g. `POST`.
    #[arg(long, value_name = "METHOD")]
    method: Option<String>,
    /// `text`: one line per call; `json`: the call as the API shows it, one per line.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

pub async fn run(command: LogsCommand) -> anyhow::Result<()> {
    let LogsCommand::Tail(args) = command;
    let (class, exact) = status_filter(args.status.as_deref())?;
    let target = profiles::resolve(&args.target, &Profiles::load()?)?;
    let client = Client::new(target)?;
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    if let Some(class) = &class {
        query.append_pair("filter[status_class]", class);
    }
    if let Some(path) = args.path.as_deref().filter(|p| !p.is_empty()) {
        query.append_pair("filter[path][contains]", path);
    }
    if let Some(method) = &args.method {
        query.append_pair("filter[method]", &method.to_ascii_uppercase());
    }
    let query = query.finish();
    let path = match query.is_empty() {
        true => "/request-logs/stream".to_string(),
        false => format!("/request-logs/stream?{query}"),
    };
    say(&format!("Tailing the request log of {}.", client.target.describe()));
    let mut tail = Tail { format: args.format, exact, shown: 0 };
    follow(&client, &path, &mut tail).await.map_err(|e| anyhow::anyhow!("the server refused to stream the request log: {e}"))
}

/// `--status` as the API's class filter and, for an exact status, the status itself.
fn status_filter(status: Option<&str>) -> anyhow::Result<(Option<String>, Option<u16>)> {
    let Some(s) = status.map(str::trim).filter(|s| !s.is_empty()) else { return Ok((None, None)) };
    let s = s.to_ascii_lowercase();
    if let [d @ b'1'..=b'5', b'x', b'x'] = s.as_bytes() {
        return Ok((Some(format!("{}xx", *d as char)), None));
    }
    match s.parse::<u16>() {
        Ok(n) if (100..=599).contains(&n) => Ok((Some(format!("{}xx", n / 100)), Some(n))),
        _ => anyhow::bail!("--status `{s}` is not a status or a class (e.g. 404, 4xx, 5xx)"),
    }
}

struct Tail {
    format: Format,
    exact: Option<u16>,
    shown: u64,
}

impl Follower for Tail {
    fn ready(&mut self, _ready: &Value, again: bool) -> bool {
        match again {
            false => say("Ready: each call is shown as it is recorded (within about a second). Ctrl-C to quit."),
            true => say("Connected again."),
        }
        false
    }

    async fn message(&mut self, data: &str) {
        let call: Value = serde_json::from_str(data).unwrap_or(Value::Null);
        let status = call["status"].as_u64().unwrap_or(0);
        if self.exact.is_some_and(|n| u64::from(n) != status) {
            return;
        }
        self.shown += 1;
        let line = match self.format {
            Format::Json => data.to_string(),
            Format::Text => line(&call),
        };
        let _ = crate::cli::print_out(&format!("{line}\n"));
    }

    fn summary(&self) -> String {
        format!("Stopped after {} call(s).", self.shown)
    }
}

/// `2026-12-06 12:40:01  POST   /v1/properties  400 validation_failed  3.2 ms  0193…`
fn line(call: &Value) -> String {
    let s = |k: &str| call[k].as_str().unwrap_or_default();
    let at = chrono::DateTime::parse_from_rfc3339(s("created_at"))
        .map(|t| t.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_default();
    let path = match s("query") {
        "" => s("path").to_string(),
        q => format!("{}?{q}", s("path")),
    };
    let status = match (call["status"].as_u64(), s("error_code")) {
        (Some(n), "") => n.to_string(),
        (Some(n), code) => format!("{n} {code}"),
        (None, _) => "?".into(),
    };
    let ms = call["duration_ms"].as_f64().map(|ms| format!("{ms:.1} ms")).unwrap_or_default();
    format!("{at}  {:<6} {path}  {status}  {ms}  {}", s("method"), s("id"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_is_a_class_or_an_exact_status() {
        assert_eq!(status_filter(Some("4xx")).unwrap(), (Some("4xx".into()), None));
        assert_eq!(status_filter(Some("5XX")).unwrap(), (Some("5xx".into()), None));
        assert_eq!(status_filter(Some("404")).unwrap(), (Some("4xx".into()), Some(404)));
        assert_eq!(status_filter(None).unwrap(), (None, None));
        assert!(status_filter(Some("4x")).is_err());
        assert!(status_filter(Some("600")).is_err());
        assert!(status_filter(Some("ok")).is_err());
    }

    #[test]
    fn a_call_is_one_line() {
        let call = serde_json::json!({ "id": "0193", "method": "POST", "path": "/v1/properties", "query": null, "status": 400,
            "error_code": "validation_failed", "duration_ms": 3.21, "created_at": "2026-12-06T12:40:01Z" });
        let l = line(&call);
        assert!(l.contains("POST   /v1/properties  400 validation_failed  3.2 ms  0193"), "{l}");
    }
}
