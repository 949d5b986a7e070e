//! Settings, layered: built-in defaults, then a TOML file (`--config FILE` or
//! `GABLE_CONFIG`), then environment variables, then command-line flags; each layer
//! overrides only the settings it gives. `figment` merges the layers into one `Config`.
//!
//! clap parses the flags (and shows the defaults in `--help`), but only the flags
//! actually typed on the command line become the top layer: clap's defaults would
//! otherwise hide the file (`ArgMatches::value_source`). The environment is read here,
//! not by clap, so that an error names the variable, not a flag that was not typed.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{ArgMatches, Args};
use figment::value::{Dict, Map, Value};
use figment::{Figment, Metadata, Profile, Provider};
use ipnet::IpNet;
use serde::{Deserialize, Deserializer, Serialize};

const DEFAULT_ADDR: &str = "127.0.0.1:8080";
const DEFAULT_SANDBOX_ADDR: &str = "127.0.0.1:8081";
const DEFAULT_DATA_DIR: &str = "./gable-data";
const DEFAULT_SITE_ROOT: &str = "target/site";
const DEFAULT_SCHEDULER_INTERVAL_SECS: u64 = 60;
const DEFAULT_DELIVERY_CONCURRENCY: usize = 64;
const DEFAULT_REQUEST_LOG_RETENTION_DAYS: u32 = crate::domain::request_log::DEFAULT_RETENTION_DAYS;
/// Requests per second per credential (`http::rate_limit`); the burst is one second's worth.
pub const DEFAULT_RATE_LIMIT_LIVE: u32 = 100;
pub const DEFAULT_RATE_LIMIT_TEST: u32 = 25;
const DEFAULT_HEADER_READ_TIMEOUT_SECS: u64 = 10;
const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = 30;
const DEFAULT_WRITE_TIMEOUT_SECS: u64 = 30;
const DEFAULT_MAX_CONNECTIONS: usize = 1024;
const DEFAULT_MAX_CONNECTIONS_PER_CLIENT: usize = 128;
const DEFAULT_MAX_HEADER_BYTES: usize = 32 * 1024;
const DEFAULT_SHUTDOWN_TIMEOUT_SECS: u64 = 30;

/// The environment variable of each setting. The names predate the file (and
/// `DATABASE_URL`, `LEPTOS_SITE_ROOT` are what other tools already set), so they are
/// listed rather than derived from a prefix; other `GABLE_*` variables (`GABLE_LOG`,
/// the test harness's) are not settings.
pub const ENVIRONMENT: [(&str, &str); 23] = [
    ("addr", "GABLE_ADDR"),
    ("sandbox_addr", "GABLE_SANDBOX_ADDR"),
    ("public_url", "GABLE_PUBLIC_URL"),
    ("sandbox_public_url", "GABLE_SANDBOX_PUBLIC_URL"),
    ("data_dir", "GABLE_DATA_DIR"),
    ("database_url", "DATABASE_URL"),
    ("scheduler_interval_secs", "GABLE_SCHEDULER_INTERVAL"),
    ("site_root", "LEPTOS_SITE_ROOT"),
    ("trusted_proxies", "GABLE_TRUSTED_PROXIES"),
    ("webhook_allow_cidrs", "GABLE_WEBHOOK_ALLOW_CIDRS"),
    ("master_key", "GABLE_MASTER_KEY"),
    ("delivery_concurrency", "GABLE_DELIVERY_CONCURRENCY"),
    ("request_log_retention_days", "GABLE_REQUEST_LOG_RETENTION_DAYS"),
    ("rate_limit_live", "GABLE_RATE_LIMIT_LIVE"),
    ("rate_limit_test", "GABLE_RATE_LIMIT_TEST"),
    ("header_read_timeout_secs", "GABLE_HEADER_READ_TIMEOUT"),
    ("request_timeout_secs", "GABLE_REQUEST_TIMEOUT"),
    ("write_timeout_secs", "GABLE_WRITE_TIMEOUT"),
    ("max_connections", "GABLE_MAX_CONNECTIONS"),
    ("max_connections_per_client", "GABLE_MAX_CONNECTIONS_PER_CLIENT"),
    ("max_header_bytes", "GABLE_MAX_HEADER_BYTES"),
    ("shutdown_timeout_secs", "GABLE_SHUTDOWN_TIMEOUT"),
    ("metrics_addr", "GABLE_METRICS_ADDR"),
];

/// Where `--help` lists the store's settings (and the settings file), which every command
/// takes and the integrator's commands (`login`, `listen`, …) ignore.
pub const STORE_HEADING: &str = "Server settings (the operator's commands; login, logout, listen, trigger, logs and import ignore them)";

#[derive(Debug, Clone, Args, Serialize)]
pub struct StoreArgs {
    /// Directory of the embedded database and generated secrets. [env: GABLE_DATA_DIR]
    #[arg(long, default_value = DEFAULT_DATA_DIR, global = true, help_heading = STORE_HEADING)]
    pub data_dir: PathBuf,
    /// A `postgres://` URL to use PostgreSQL instead of the embedded SQLite. [env: DATABASE_URL]
    #[arg(long, global = true, help_heading = STORE_HEADING)]
    pub database_url: Option<String>,
}

impl StoreArgs {
    /// The database URL: the given one, else SQLite in the data directory (created 0700
    /// when missing: `private_files`).
    pub fn url(&self) -> anyhow::Result<String> {
        if let Some(url) = &self.database_url {
            return Ok(url.clone());
        }
        crate::private_files::create_private_dir(&self.data_dir)?;
        Ok(format!("sqlite://{}", self.data_dir.join("gable.db").display()))
    }
}

#[derive(Debug, Clone, Args, Serialize)]
pub struct ServeArgs {
    /// Production listener. [env: GABLE_ADDR]
    #[arg(long, default_value = DEFAULT_ADDR)]
    pub addr: SocketAddr,
    /// Sandbox listener. [env: GABLE_SANDBOX_ADDR]
    #[arg(long, default_value = DEFAULT_SANDBOX_ADDR)]
    pub sandbox_addr: SocketAddr,
    /// Production base address written into links and the API description. [env: GABLE_PUBLIC_URL]
    #[arg(long)]
    pub public_url: Option<String>,
    /// Sandbox base address. [env: GABLE_SANDBOX_PUBLIC_URL]
    #[arg(long)]
    pub sandbox_public_url: Option<String>,
    /// Where the console's built assets are (.ci/build-site writes them to target/site). [env: LEPTOS_SITE_ROOT]
    #[arg(long, default_value = DEFAULT_SITE_ROOT)]
    pub site_root: String,
    /// Seconds between scheduler rounds (rent due, leases and documents expiring); 0 runs
    /// no scheduler in this process (another process of the deployment runs it). [env: GABLE_SCHEDULER_INTERVAL]
    #[arg(long, default_value_t = DEFAULT_SCHEDULER_INTERVAL_SECS)]
    pub scheduler_interval_secs: u64,
    /// A reverse proxy (IP address or CIDR range) whose `X-Forwarded-For`, `Forwarded`
    /// and `X-Forwarded-Proto` headers are believed; repeat the flag, or separate with
    /// commas. None by default: the client is the TCP peer. [env: GABLE_TRUSTED_PROXIES]
    #[arg(long = "trusted-proxy", value_name = "IP_OR_CIDR", value_delimiter = ',', value_parser = parse_proxy)]
    pub trusted_proxies: Vec<IpNet>,
    /// Ranges (CIDR, or one IP address) that webhook deliveries may reach although the
    /// SSRF guard refuses them (loopback, private …), e.g. 127.0.0.0/8 for a receiver on
    /// this machine; comma-separated. None by default. [env: GABLE_WEBHOOK_ALLOW_CIDRS]
    #[arg(long = "webhook-allow-cidrs", value_name = "CIDR", value_delimiter = ',', value_parser = parse_proxy)]
    pub webhook_allow_cidrs: Vec<IpNet>,
    /// Webhook delivery attempts this process makes at once (8 at most per subscription);
    /// 0 runs no delivery worker here (other processes of the deployment deliver).
    /// [env: GABLE_DELIVERY_CONCURRENCY]
    #[arg(long, default_value_t = DEFAULT_DELIVERY_CONCURRENCY)]
    pub delivery_concurrency: usize,
    /// Days the request log keeps each API call; older records are purged by the
    /// scheduler. 0 records no call (and purges what was). [env: GABLE_REQUEST_LOG_RETENTION_DAYS]
    #[arg(long, default_value_t = DEFAULT_REQUEST_LOG_RETENTION_DAYS, value_parser = clap::value_parser!(u32).range(0..=366))]
    pub request_log_retention_days: u32,
    /// Requests per second each live key may make on the `/v1` API (bursts of one second's
    /// worth); 0 = unlimited. Per process. [env: GABLE_RATE_LIMIT_LIVE]
    #[arg(long, default_value_t = DEFAULT_RATE_LIMIT_LIVE)]
    pub rate_limit_live: u32,
    /// As `--rate-limit-live`, for test (sandbox) keys. [env: GABLE_RATE_LIMIT_TEST]
    #[arg(long, default_value_t = DEFAULT_RATE_LIMIT_TEST)]
    pub rate_limit_test: u32,
    /// Seconds a client has to send a request's head (the request line and headers), on a
    /// new connection and between requests on a kept-alive one; then the connection is
    /// closed. [env: GABLE_HEADER_READ_TIMEOUT]
    #[arg(long, default_value_t = DEFAULT_HEADER_READ_TIMEOUT_SECS)]
    pub header_read_timeout_secs: u64,
    /// Seconds a request may take, its body included, before it is answered `503
    /// service_unavailable`. [env: GABLE_REQUEST_TIMEOUT]
    #[arg(long, default_value_t = DEFAULT_REQUEST_TIMEOUT_SECS)]
    pub request_timeout_secs: u64,
    /// Seconds a client may leave an answer unread: once the connection stops taking
    /// bytes, the answer must move at 4 KiB/s on average after this long, or the
    /// connection is closed. [env: GABLE_WRITE_TIMEOUT]
    #[arg(long, default_value_t = DEFAULT_WRITE_TIMEOUT_SECS)]
    pub write_timeout_secs: u64,
    /// Connections each listener holds open at once; beyond them a reserve of 16 answers
    /// the health checks and refuses other requests 503, then further clients wait to be
    /// accepted. [env: GABLE_MAX_CONNECTIONS]
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS)]
    pub max_connections: usize,
    /// Connections one client address (an IPv6 /64) may hold on a listener; more are
    /// answered 503 and closed. Trusted proxies are not limited; 0 = no limit.
    /// [env: GABLE_MAX_CONNECTIONS_PER_CLIENT]
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS_PER_CLIENT)]
    pub max_connections_per_client: usize,
    /// Bytes a request's head may have (at least 8192); more is answered 431.
    /// [env: GABLE_MAX_HEADER_BYTES]
    #[arg(long, default_value_t = DEFAULT_MAX_HEADER_BYTES)]
    pub max_header_bytes: usize,
    /// Seconds a shutdown (SIGTERM) waits for requests in flight and delivery attempts
    /// under way before it closes what is left. [env: GABLE_SHUTDOWN_TIMEOUT]
    #[arg(long, default_value_t = DEFAULT_SHUTDOWN_TIMEOUT_SECS)]
    pub shutdown_timeout_secs: u64,
    /// An address for Prometheus metrics (`/metrics`) and health checks, e.g.
    /// 127.0.0.1:9090. Unset: no metrics listener. [env: GABLE_METRICS_ADDR]
    #[arg(long)]
    pub metrics_addr: Option<SocketAddr>,
}

/// What the running server needs to know beyond its store.
#[derive(Debug, Clone)]
pub struct Settings {
    pub public_url: String,
    pub sandbox_public_url: String,
    /// Peers whose forwarding headers are believed (`http::caller`).
    pub trusted_proxies: Vec<IpNet>,
    /// Addresses webhook deliveries may reach despite the SSRF guard (`outbound::Guard`).
    pub webhook_allow_cidrs: Vec<IpNet>,
    /// How long a request may take before it is answered 503 (`http::deadline`).
    pub request_timeout: std::time::Duration,
}

/// Every setting of `serve` and of the store, as the layers give them; the file's keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub addr: SocketAddr,
    pub sandbox_addr: SocketAddr,
    pub public_url: Option<String>,
    pub sandbox_public_url: Option<String>,
    pub data_dir: PathBuf,
    pub database_url: Option<String>,
    pub scheduler_interval_secs: u64,
    pub site_root: String,
    #[serde(deserialize_with = "proxies")]
    pub trusted_proxies: Vec<IpNet>,
    #[serde(deserialize_with = "proxies")]
    pub webhook_allow_cidrs: Vec<IpNet>,
    /// The key sealing webhook secrets (file or `GABLE_MASTER_KEY`, never a flag: command
    /// lines are visible to every user of the machine). Absent: generated into the data
    /// directory for SQLite; required for PostgreSQL.
    pub master_key: Option<crate::crypto::KeyText>,
    pub delivery_concurrency: usize,
    pub request_log_retention_days: u32,
    pub rate_limit_live: u32,
    pub rate_limit_test: u32,
    pub header_read_timeout_secs: u64,
    pub request_timeout_secs: u64,
    pub write_timeout_secs: u64,
    pub max_connections: usize,
    pub max_connections_per_client: usize,
    pub max_header_bytes: usize,
    pub shutdown_timeout_secs: u64,
    pub metrics_addr: Option<SocketAddr>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            sandbox_addr: SocketAddr::from(([127, 0, 0, 1], 8081)),
            public_url: None,
            sandbox_public_url: None,
            data_dir: PathBuf::from(DEFAULT_DATA_DIR),
            database_url: None,
            scheduler_interval_secs: DEFAULT_SCHEDULER_INTERVAL_SECS,
            site_root: DEFAULT_SITE_ROOT.into(),
            trusted_proxies: Vec::new(),
            webhook_allow_cidrs: Vec::new(),
            master_key: None,
            delivery_concurrency: DEFAULT_DELIVERY_CONCURRENCY,
            request_log_retention_days: DEFAULT_REQUEST_LOG_RETENTION_DAYS,
            rate_limit_live: DEFAULT_RATE_LIMIT_LIVE,
            rate_limit_test: DEFAULT_RATE_LIMIT_TEST,
            header_read_timeout_secs: DEFAULT_HEADER_READ_TIMEOUT_SECS,
            request_timeout_secs: DEFAULT_REQUEST_TIMEOUT_SECS,
            write_timeout_secs: DEFAULT_WRITE_TIMEOUT_SECS,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_client: DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            shutdown_timeout_secs: DEFAULT_SHUTDOWN_TIMEOUT_SECS,
            metrics_addr: None,
        }
    }
}

impl Config {
    /// Merges the layers: defaults < `file` < environment (read through `var`) < `flags`.
    /// A missing or malformed file, an unknown key in it, or a value of the wrong kind
    /// anywhere is an error that names the setting and where it came from.
    pub fn load(file: Option<&Path>, var: impl Fn(&str) -> Option<String>, flags: Dict) -> anyhow::Result<Config> {
        let mut figment = Figment::from(figment::providers::Serialized::defaults(Config::default()));
        if let Some(path) = file {
            // Checked here: figment's own message for a missing file names no file.
            std::fs::metadata(path).map_err(|e| anyhow::anyhow!("cannot read the configuration file {}: {e}", path.display()))?;
            use figment::providers::Format;
            figment = figment.merge(figment::providers::Toml::file_exact(path));
        }
        let environment: Dict = ENVIRONMENT
            .iter()
            .filter_map(|(key, name)| var(name).filter(|v| !v.is_empty()).map(|v| (key.to_string(), Value::from(v))))
            .collect();
        figment = figment.merge(Layer { name: "the environment", values: environment, key_name: |key| env_name(key).to_string() });
        figment = figment.merge(Layer { name: "the command line", values: flags, key_name: |key| format!("--{}", flag_name(key)) });
        // Lossy: an environment variable is text, and `GABLE_SCHEDULER_INTERVAL=30` is a number.
        figment.extract_lossy().map_err(|e| anyhow::anyhow!("invalid configuration: {e}"))
    }

    /// The layers as the `gable` command sees them: the file given by `--config` (or
    /// `GABLE_CONFIG`), the process environment, and the flags typed in `matches`
    /// (`serve`'s from its subcommand).
    pub fn from_command_line(
        file: Option<&Path>,
        matches: &ArgMatches,
        store: &StoreArgs,
        serve: Option<&ServeArgs>,
    ) -> anyhow::Result<Config> {
        Config::load(file, |name| std::env::var(name).ok(), typed_flags(matches, store, serve)?)
    }

    pub fn store(&self) -> StoreArgs {
        StoreArgs { data_dir: self.data_dir.clone(), database_url: self.database_url.clone() }
    }

    pub fn serve(&self) -> ServeArgs {
        ServeArgs {
            addr: self.addr,
            sandbox_addr: self.sandbox_addr,
            public_url: self.public_url.clone(),
            sandbox_public_url: self.sandbox_public_url.clone(),
            site_root: self.site_root.clone(),
            scheduler_interval_secs: self.scheduler_interval_secs,
            trusted_proxies: self.trusted_proxies.clone(),
            webhook_allow_cidrs: self.webhook_allow_cidrs.clone(),
            delivery_concurrency: self.delivery_concurrency,
            request_log_retention_days: self.request_log_retention_days,
            rate_limit_live: self.rate_limit_live,
            rate_limit_test: self.rate_limit_test,
            header_read_timeout_secs: self.header_read_timeout_secs,
            request_timeout_secs: self.request_timeout_secs,
            write_timeout_secs: self.write_timeout_secs,
            max_connections: self.max_connections,
            max_connections_per_client: self.max_connections_per_client,
            max_header_bytes: self.max_header_bytes,
            shutdown_timeout_secs: self.shutdown_timeout_secs,
            metrics_addr: self.metrics_addr,
        }
    }
}

fn env_name(key: &str) -> &str {
    ENVIRONMENT.iter().find(|(k, _)| *k == key).map_or(key, |(_, name)| name)
}

fn flag_name(key: &str) -> String {
    match key {
        "trusted_proxies" => "trusted-proxy".into(),
        other => other.replace('_', "-"),
    }
}

/// The settings whose values were typed on the command line (`serve`'s in its subcommand).
pub fn typed_flags(matches: &ArgMatches, store: &StoreArgs, serve: Option<&ServeArgs>) -> anyhow::Result<Dict> {
    let mut flags = typed(matches, store)?;
    if let (Some(serve), Some(sub)) = (serve, matches.subcommand_matches("serve")) {
        flags.extend(typed(sub, serve)?);
    }
    Ok(flags)
}

/// The settings among `parsed` whose values were typed on the command line.
fn typed(matches: &ArgMatches, parsed: &impl Serialize) -> anyhow::Result<Dict> {
    let Value::Dict(_, all) = Value::serialize(parsed)? else { anyhow::bail!("settings serialize as a table") };
    Ok(all.into_iter().filter(|(id, _)| matches!(matches.value_source(id), Some(ValueSource::CommandLine))).collect())
}

/// One layer of settings, with errors naming the variable or flag a key came from.
struct Layer {
    name: &'static str,
    values: Dict,
    key_name: fn(&str) -> String,
}

impl Provider for Layer {
    fn metadata(&self) -> Metadata {
        let key_name = self.key_name;
        Metadata::named(self.name).interpolater(move |_: &Profile, keys: &[&str]| keys.first().map_or_else(String::new, |k| key_name(k)))
    }

    fn data(&self) -> Result<Map<Profile, Dict>, figment::Error> {
        Ok(Profile::Default.collect(self.values.clone()))
    }
}

/// A trusted proxy: an IP address (one host) or a CIDR range.
pub fn parse_proxy(s: &str) -> Result<IpNet, String> {
    let s = s.trim();
    s.parse::<IpNet>()
        .or_else(|_| s.parse::<IpAddr>().map(IpNet::from))
        .map_err(|_| format!("`{s}` is not an IP address or a CIDR range (like 10.0.0.0/8)"))
}

/// Trusted proxies from a list (file) or a comma-separated string (environment).
fn proxies<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<IpNet>, D::Error> {
    struct Visitor;
    impl<'de> serde::de::Visitor<'de> for Visitor {
        type Value = Vec<IpNet>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of IP addresses or CIDR ranges, or one comma-separated string of them")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            v.split(',').filter(|s| !s.trim().is_empty()).map(|s| parse_proxy(s).map_err(E::custom)).collect()
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(s) = seq.next_element::<String>()? {
                out.push(parse_proxy(&s).map_err(serde::de::Error::custom)?);
            }
            Ok(out)
        }
    }
    d.deserialize_any(Visitor)
}
