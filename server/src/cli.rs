//! The `gable` command.

use std::process::ExitCode;

use std::path::PathBuf;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use uuid::Uuid;

use crate::config::{Config, ServeArgs, StoreArgs, STORE_HEADING};
use crate::startup::{shutdown_signal, Application};
use crate::store::{schema, Dialect, Store};

mod backup;
pub mod client;
mod collections;
mod migration;

#[derive(Parser)]
#[command(name = "gable", version, about = "Gable: tenant-scoped property operations (API, console, flows)")]
struct Cli {
    /// A TOML file of settings (any `serve` or store setting, by its flag's name with
    /// underscores: `addr`, `database_url`, `trusted_proxies`, …). Precedence:
    /// defaults < this file < environment variables < flags. See gable.example.toml.
    #[arg(long, env = "GABLE_CONFIG", value_name = "FILE", global = true, help_heading = STORE_HEADING)]
    config: Option<PathBuf>,
    #[command(flatten)]
    store: StoreArgs,
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the size of `serve`'s settings beside the small commands costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Runs the API (production and sandbox listeners) and the console.
    Serve(ServeArgs),
    /// Applies the database migrations and exits.
    Migrate,
    /// Manages tenants.
    Tenant {
        #[command(subcommand)]
        command: TenantCommand,
    },
    /// Manages API keys.
    Key {
        #[command(subcommand)]
        command: KeyCommand,
    },
    /// Manages console users.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Manages OAuth apps (third-party clients; docs/oauth.md).
    #[command(name = "oauth-client")]
    OauthClient {
        #[command(subcommand)]
        command: OauthClientCommand,
    },
    /// Fills a tenant's environment with a realistic generated portfolio.
    Seed {
        #[arg(long)]
        tenant: Uuid,
        #[arg(long, value_enum, default_value = "test")]
        env: Env,
        /// Number of units; the other records come in proportion.
        #[arg(long, default_value_t = 100)]
        size: u64,
        /// Seed of the random generator, for repeatable portfolios.
        #[arg(long, default_value_t = 1)]
        random_seed: u64,
    },
    /// Manages a tenant's sandbox.
    Sandbox {
        #[command(subcommand)]
        command: SandboxCommand,
    },
    /// Writes a consistent backup of the embedded SQLite database (and its master key)
    /// into a new directory, while Gable serves (docs/backups.md).
    Backup(backup::BackupArgs),
    /// Brings a backup back into the data directory (what is there is moved aside);
    /// refuses while a server uses the directory.
    Restore(backup::RestoreArgs),
    /// Prints the collections of the registry (`--format json` for generators).
    Collections(collections::CollectionsArgs),
    /// Prints a new collection's migration for each database, or writes it (`--write`).
    Migration(migration::MigrationArgs),
    /// The integrator's commands (`login`, `logout`, `listen`, `trigger`, `logs`): they use a
    /// Gable's API with a key, never a database.
    #[command(flatten)]
    Client(client::ClientCommand),
    /// Prints the schema the registry implies (how the first migrations were made).
    #[command(hide = true)]
    Schema {
        #[arg(long)]
        dialect: Dialect,
    },
}

#[derive(Subcommand)]
enum TenantCommand {
    /// Creates a tenant and prints it as JSON.
    Create {
        #[arg(long)]
        name: String,
    },
}

#[derive(Subcommand)]
enum SandboxCommand {
    /// Deletes every sandbox record of a tenant and its sandbox clock (never live data,
    /// never keys), and prints what was deleted as JSON.
    Reset {
        #[arg(long)]
        tenant: Uuid,
        /// Then make the demo portfolio (a property, units, a listing, a lease and its rent).
        #[arg(long)]
        demo: bool,
    },
}

#[derive(Subcommand)]
enum KeyCommand {
    /// Creates an API key and prints it, secret included, once.
    Create {
        #[arg(long)]
        tenant: Uuid,
        #[arg(long, value_enum)]
        env: Env,
        /// Comma-separated scopes: `{collection}:read`, `{collection}:write`, `*:read`, `*`.
        #[arg(long, value_delimiter = ',', required = true)]
        scopes: Vec<String>,
        /// Comma-separated property ids the key is limited to.
        #[arg(long, value_delimiter = ',')]
        properties: Option<Vec<Uuid>>,
        /// The service account the key belongs to (created if missing).
        #[arg(long, default_value = "default")]
        service_account: String,
    },
    /// Revokes an API key at once.
    Revoke {
        #[arg(long)]
        tenant: Uuid,
        #[arg(long)]
        id: Uuid,
    },
}

#[derive(Subcommand)]
enum UserCommand {
    /// Creates a console user and prints them as JSON with a one-time password (or takes
    /// the password from standard input with --password-stdin).
    Create {
        #[arg(long)]
        tenant: Uuid,
        #[arg(long)]
        email: String,
        /// The person's name (default: the part of the email before `@`).
        #[arg(long)]
        name: Option<String>,
        #[arg(long, value_parser = ["owner", "admin", "read-only"])]
        role: String,
        /// Read the password from standard input (its first line) instead of generating one.
        #[arg(long)]
        password_stdin: bool,
    },
}

#[derive(Subcommand)]
enum OauthClientCommand {
    /// Registers an app for a tenant and prints it as JSON, with `client_id` and, for a
    /// confidential client, `client_secret` (shown this once).
    Create {
        /// The tenant registering the app (users of any tenant may authorize it).
        #[arg(long)]
        tenant: Uuid,
        #[arg(long)]
        name: String,
        /// A redirect URI (https, or http on a loopback host); repeat for more, up to 10.
        #[arg(long = "redirect-uri", required = true)]
        redirect_uris: Vec<String>,
        /// A public client (a native or single-page app): no secret, PKCE alone.
        #[arg(long)]
        public: bool,
        /// The environment its tokens act in.
        #[arg(long, value_enum, default_value = "live")]
        env: Env,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Env {
    Live,
    Test,
}

impl Env {
    pub fn livemode(self) -> bool {
        matches!(self, Env::Live)
    }
}

pub fn main() -> ExitCode {
    // The matches as well as the parsed values: they tell which flags were typed.
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: could not start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The client commands read no settings and open no store: they speak to an API.
    let command = match cli.command {
        Command::Client(command) => return exit_code(rt.block_on(client::run(command))),
        other => other,
    };
    let log = init_tracing();
    let serve = match &command {
        Command::Serve(args) => Some(args),
        _ => None,
    };
    let config = match Config::from_command_line(cli.config.as_deref(), &matches, &cli.store, serve) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = rt.block_on(run(command, config));
    // Every line logged is out before the last word (and before the process ends).
    drop(log);
    exit_code(outcome)
}

fn exit_code(outcome: anyhow::Result<()>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Logs to stderr through a writer thread: a request's task formats its line and hands
/// it over, and the thread writes whatever has gathered in one `write`. Written on the
/// task itself, every access-log line was a system call on the request path: a
/// single-record read served about a quarter fewer requests per second at the default
/// `info` than at `warn` (`docs/benchmarks.md`). Nothing is dropped: when the thread falls
/// behind by the builder's line limit, a logging task waits. The guard flushes on drop.
fn init_tracing() -> tracing_appender::non_blocking::WorkerGuard {
    use tracing_subscriber::EnvFilter;
    let (writer, guard) =
        tracing_appender::non_blocking::NonBlockingBuilder::default().lossy(false).finish(std::io::BufWriter::new(std::io::stderr()));
    let filter = EnvFilter::try_from_env("GABLE_LOG").unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn"));
    let json = std::env::var("GABLE_LOG_FORMAT").is_ok_and(|v| v == "json");
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer);
    if json {
        let _ = builder.json().try_init();
    } else {
        let _ = builder.try_init();
    }
    guard
}

/// The SQLite database file, when the store is SQLite.
fn sqlite_file(args: &StoreArgs) -> anyhow::Result<Option<PathBuf>> {
    let url = args.url()?;
    let Some(path) = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")) else { return Ok(None) };
    Ok(Some(PathBuf::from(path.split('?').next().unwrap_or(path))))
}

/// The directory of the SQLite database, when the store is SQLite.
fn sqlite_dir(args: &StoreArgs) -> anyhow::Result<Option<PathBuf>> {
    Ok(sqlite_file(args)?.map(|file| match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }))
}

async fn open(args: &StoreArgs) -> anyhow::Result<Store> {
    let url = args.url()?;
    // SQLite's files are private from the start, and an older build's are made so.
    if let Some(db) = sqlite_file(args)?.filter(|_| !url.contains(":memory:") && !url.contains("mode=memory")) {
        crate::store::data_dir::secure(&args.data_dir, &db)?;
    }
    let store = Store::connect(&url).await?;
    store.migrate().await?;
    Ok(store)
}

fn print_json(v: &impl serde::Serialize) -> anyhow::Result<()> {
    print_out(&format!("{}\n", serde_json::to_string_pretty(v)?))
}

/// Writes a command's output to stdout. A reader that went away (`gable … | head`) is not
/// an error of ours: `print!` would panic there.
pub(crate) fn print_out(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

async fn run(command: Command, config: Config) -> anyhow::Result<()> {
    let store_args = config.store();
    match command {
        Command::Client(command) => client::run(command).await,
        Command::Schema { dialect } => print_out(&schema::init_ddl(dialect)),
        Command::Collections(args) => collections::run(&args),
        Command::Migration(args) => migration::run(&args),
        Command::Backup(args) => print_json(&backup::backup(&args, &config, sqlite_file(&store_args)?)?),
        Command::Restore(args) => {
            let restored = backup::restore(&args, &config, sqlite_file(&store_args)?)?;
            eprintln!("restored; start `gable serve` on the data directory (it applies newer migrations)");
            print_json(&restored)
        }
        Command::Migrate => {
            open(&store_args).await?;
            eprintln!("migrations applied");
            Ok(())
        }
        Command::Tenant { command: TenantCommand::Create { name } } => {
            let store = open(&store_args).await?;
            let id = store.create_tenant(&name).await?;
            print_json(&serde_json::json!({ "object": "tenant", "id": id, "name": name }))
        }
        Command::Key { command: KeyCommand::Create { tenant, env, scopes, properties, service_account } } => {
            let store = open(&store_args).await?;
            anyhow::ensure!(store.tenant_exists(tenant).await?, "no tenant {tenant}");
            let sa = store.service_account(tenant, &service_account).await?;
            let key = store.create_key(tenant, sa, env.livemode(), scopes, properties).await?;
            print_json(&key)?;
            eprintln!("The secret is shown this once; Gable keeps only its SHA-256.");
            Ok(())
        }
        Command::Key { command: KeyCommand::Revoke { tenant, id } } => {
            let store = open(&store_args).await?;
            anyhow::ensure!(store.revoke_key(tenant, id).await?, "no active key {id} in tenant {tenant}");
            eprintln!("revoked");
            Ok(())
        }
        Command::User { command: UserCommand::Create { tenant, email, name, role, password_stdin } } => {
            let store = open(&store_args).await?;
            anyhow::ensure!(store.tenant_exists(tenant).await?, "no tenant {tenant}");
            let key = crate::crypto::master_key(config.master_key.as_ref(), &store_args.data_dir, store.is_shared())?;
            let ops = crate::ops::Operations::new(store.clone(), crate::clock::Clock::system(), key);
            let password = if password_stdin {
                let mut line = String::new();
                std::io::stdin().read_line(&mut line)?;
                line.trim_end_matches(['\r', '\n']).to_string()
            } else {
                crate::accounts::sessions::random_token()
            };
            let name = name.unwrap_or_else(|| email.split('@').next().unwrap_or_default().to_string());
            let user = crate::accounts::AccountService::new(ops)
                .create_user_as_operator(tenant, &email, &name, &role, &password)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let mut out = serde_json::to_value(&user)?;
            if !password_stdin {
                out["password"] = serde_json::json!(password);
                eprintln!("The password is shown this once; ask the user to change it.");
            }
            print_json(&out)
        }
        Command::OauthClient { command: OauthClientCommand::Create { tenant, name, redirect_uris, public, env } } => {
            let store = open(&store_args).await?;
            anyhow::ensure!(store.tenant_exists(tenant).await?, "no tenant {tenant}");
            let (client, secret) =
                crate::ops::oauth::register_client(&store, tenant, &name, &redirect_uris, public, env.livemode(), chrono::Utc::now())
                    .await?;
            let mut out = crate::ops::oauth::client_json(&client);
            if let Some(secret) = secret {
                out["client_secret"] = serde_json::json!(secret);
                eprintln!("The client secret is shown this once; Gable keeps only its SHA-256.");
            }
            print_json(&out)
        }
        Command::Seed { tenant, env, size, random_seed } => {
            let store = open(&store_args).await?;
            anyhow::ensure!(store.tenant_exists(tenant).await?, "no tenant {tenant}");
            let counts = crate::seed::seed(&store, tenant, env.livemode(), size, random_seed, true).await?;
            print_json(&counts)
        }
        Command::Sandbox { command: SandboxCommand::Reset { tenant, demo } } => {
            let store = open(&store_args).await?;
            anyhow::ensure!(store.tenant_exists(tenant).await?, "no tenant {tenant}");
            // A reset alone seals and opens nothing: the deployment's master key is asked
            // for (and required with PostgreSQL) only when the demo is made.
            let key = match demo {
                true => crate::crypto::master_key(config.master_key.as_ref(), &store_args.data_dir, store.is_shared())?,
                false => crate::crypto::MasterKey::generate(),
            };
            let ops = crate::ops::Operations::new(store, crate::clock::Clock::system(), key);
            let reset = ops.reset_sandbox(tenant, demo).await?;
            print_json(
                &serde_json::json!({ "object": "sandbox_reset", "tenant_id": tenant, "rows_deleted": reset.rows_deleted, "demo": reset.demo }),
            )
        }
        Command::Serve(_) => {
            // One serving process per SQLite database (`store::data_dir`); held until exit.
            let _lock = match sqlite_dir(&store_args)? {
                Some(dir) => Some(crate::store::data_dir::lock(&dir, "`gable serve`")?),
                None => None,
            };
            let store = open(&store_args).await?;
            let key = crate::crypto::master_key(config.master_key.as_ref(), &store_args.data_dir, store.is_shared())?;
            let app = Application::build(store, &config.serve(), key).await?;
            if let Some(first) = app.state.ops.first_start().await? {
                welcome(&app.state.settings, &first);
            }
            match app.metrics_addr {
                Some(metrics) => tracing::info!(live = %app.live_addr, sandbox = %app.test_addr, %metrics, "listening"),
                None => tracing::info!(live = %app.live_addr, sandbox = %app.test_addr, "listening"),
            }
            app.run(shutdown_signal()).await
        }
    }
}

/// What a first start prints: where everything is, and the sandbox key (once).
fn welcome(settings: &crate::config::Settings, first: &crate::ops::setup::FirstStart) {
    // A closed stdout must not stop the server (println! would panic).
    use std::io::Write;
    let _ = writeln!(
        std::io::stdout().lock(),
        "\nWelcome to Gable. A demo tenant was created ({tenant}).\n\n  \
         Console:     {live}/\n  API:         {live}/v1\n  Sandbox API: {sandbox}/v1\n  API description: {live}/v1/openapi.json\n\n  \
         Sandbox key (shown once): {key}\n\n  Its sandbox holds a demo portfolio: a property, units, a listing and an active lease \
         whose rent ({billed} period(s)) is invoiced.\n\n  Try:  curl -H 'Authorization: Bearer {key}' {sandbox}/v1/properties\n",
        tenant = first.tenant,
        live = settings.public_url,
        sandbox = settings.sandbox_public_url,
        key = first.sandbox_key,
        billed = first.demo.rent_billed,
    );
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::io::Write;

    use super::*;

    /// The configuration `gable <args>` would run with, in an environment of `env` only.
    fn resolve(args: &[&str], file: Option<&str>, env: &[(&str, &str)]) -> anyhow::Result<Config> {
        let matches = Cli::command().try_get_matches_from(std::iter::once("gable").chain(args.iter().copied()))?;
        let cli = Cli::from_arg_matches(&matches)?;
        let serve = match &cli.command {
            Command::Serve(args) => Some(args),
            _ => None,
        };
        let flags = crate::config::typed_flags(&matches, &cli.store, serve)?;
        let mut toml = tempfile::NamedTempFile::new()?;
        let path = file.map(|text| toml.write_all(text.as_bytes()).map(|_| toml.path().to_path_buf())).transpose()?;
        let env: HashMap<String, String> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::load(path.as_deref(), |name| env.get(name).cloned(), flags)
    }

    const FILE: &str = r#"
        addr = "127.0.0.1:9000"
        sandbox_addr = "127.0.0.1:9001"
        public_url = "https://file.example"
        sandbox_public_url = "https://sandbox.file.example"
        data_dir = "/srv/file"
        database_url = "postgres://file/db"
        scheduler_interval_secs = 5
        site_root = "/srv/site"
        trusted_proxies = ["10.0.0.0/8", "192.0.2.1"]
    "#;

    #[test]
    fn defaults_then_file_then_environment_then_flags() {
        let defaults = resolve(&["serve"], None, &[]).unwrap();
        assert_eq!(defaults, Config::default());
        assert_eq!(defaults.addr.to_string(), "127.0.0.1:8080");
        assert!(defaults.trusted_proxies.is_empty(), "no proxy is trusted by default");

        // The file overrides every default.
        let file = resolve(&["serve"], Some(FILE), &[]).unwrap();
        assert_eq!(file.addr.to_string(), "127.0.0.1:9000");
        assert_eq!(file.sandbox_addr.to_string(), "127.0.0.1:9001");
        assert_eq!(file.public_url.as_deref(), Some("https://file.example"));
        assert_eq!(file.sandbox_public_url.as_deref(), Some("https://sandbox.file.example"));
        assert_eq!(file.data_dir.to_str(), Some("/srv/file"));
        assert_eq!(file.database_url.as_deref(), Some("postgres://file/db"));
        assert_eq!(file.scheduler_interval_secs, 5);
        assert_eq!(file.site_root, "/srv/site");
        assert_eq!(file.trusted_proxies.iter().map(|n| n.to_string()).collect::<Vec<_>>(), ["10.0.0.0/8", "192.0.2.1/32"]);

        // The environment overrides the file, setting by setting.
        let env = [
            ("GABLE_ADDR", "127.0.0.1:7000"),
            ("GABLE_PUBLIC_URL", "https://env.example"),
            ("DATABASE_URL", "postgres://env/db"),
            ("GABLE_SCHEDULER_INTERVAL", "30"),
            ("LEPTOS_SITE_ROOT", "/env/site"),
            ("GABLE_TRUSTED_PROXIES", "172.16.0.0/12, 2001:db8::1"),
            // Empty is unset, not "the empty string".
            ("GABLE_SANDBOX_PUBLIC_URL", ""),
        ];
        let over = resolve(&["serve"], Some(FILE), &env).unwrap();
        assert_eq!(over.addr.to_string(), "127.0.0.1:7000");
        assert_eq!(over.sandbox_addr.to_string(), "127.0.0.1:9001", "not in the environment: the file's");
        assert_eq!(over.public_url.as_deref(), Some("https://env.example"));
        assert_eq!(over.sandbox_public_url.as_deref(), Some("https://sandbox.file.example"));
        assert_eq!(over.database_url.as_deref(), Some("postgres://env/db"));
        assert_eq!(over.scheduler_interval_secs, 30);
        assert_eq!(over.site_root, "/env/site");
        assert_eq!(over.data_dir.to_str(), Some("/srv/file"));
        assert_eq!(over.trusted_proxies.iter().map(|n| n.to_string()).collect::<Vec<_>>(), ["172.16.0.0/12", "2001:db8::1/128"]);

        // Flags typed on the command line override both; global flags on either side of `serve`.
        let flags = resolve(
            &[
                "--data-dir",
                "/flag/data",
                "serve",
                "--addr",
                "127.0.0.1:6000",
                "--scheduler-interval-secs",
                "0",
                "--trusted-proxy",
                "127.0.0.1",
                "--trusted-proxy",
                "::1",
                "--database-url",
                "postgres://flag/db",
            ],
            Some(FILE),
            &env,
        )
        .unwrap();
        assert_eq!(flags.addr.to_string(), "127.0.0.1:6000");
        assert_eq!(flags.data_dir.to_str(), Some("/flag/data"));
        assert_eq!(flags.database_url.as_deref(), Some("postgres://flag/db"));
        assert_eq!(flags.scheduler_interval_secs, 0);
        assert_eq!(flags.trusted_proxies.iter().map(|n| n.to_string()).collect::<Vec<_>>(), ["127.0.0.1/32", "::1/128"]);
        // Flags not typed leave the lower layers alone (clap's defaults do not count).
        assert_eq!(flags.public_url.as_deref(), Some("https://env.example"));
        assert_eq!(flags.sandbox_addr.to_string(), "127.0.0.1:9001");

        // Commands other than serve read the store settings the same way.
        let migrate = resolve(&["migrate"], Some(FILE), &[("GABLE_DATA_DIR", "/env/data")]).unwrap();
        assert_eq!((migrate.data_dir.to_str(), migrate.database_url.as_deref()), (Some("/env/data"), Some("postgres://file/db")));
    }

    #[test]
    fn the_webhook_allow_list_comes_from_each_layer() {
        let cidrs = |c: &Config| c.webhook_allow_cidrs.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert!(resolve(&["serve"], None, &[]).unwrap().webhook_allow_cidrs.is_empty(), "nothing is allowed by default");
        let file = "webhook_allow_cidrs = [\"127.0.0.0/8\", \"::1\"]";
        assert_eq!(cidrs(&resolve(&["serve"], Some(file), &[]).unwrap()), ["127.0.0.0/8", "::1/128"]);
        let env = [("GABLE_WEBHOOK_ALLOW_CIDRS", "10.0.0.0/8, fd00::/8")];
        assert_eq!(cidrs(&resolve(&["serve"], Some(file), &env).unwrap()), ["10.0.0.0/8", "fd00::/8"]);
        let flags = resolve(&["serve", "--webhook-allow-cidrs", "127.0.0.0/8,192.168.0.0/16"], Some(file), &env).unwrap();
        assert_eq!(cidrs(&flags), ["127.0.0.0/8", "192.168.0.0/16"]);
        let bad = format!("{:#}", resolve(&["serve"], None, &[("GABLE_WEBHOOK_ALLOW_CIDRS", "10.0.0.0/33")]).unwrap_err());
        assert!(bad.contains("10.0.0.0/33") && bad.contains("GABLE_WEBHOOK_ALLOW_CIDRS"), "{bad}");
        assert!(resolve(&["serve", "--webhook-allow-cidrs", "nonsense"], None, &[]).is_err());
    }

    #[test]
    fn rate_limits_come_from_each_layer() {
        let limits = |c: Config| (c.rate_limit_live, c.rate_limit_test);
        assert_eq!(limits(resolve(&["serve"], None, &[]).unwrap()), (100, 25), "the documented defaults");
        let file = "rate_limit_live = 500\nrate_limit_test = 50";
        assert_eq!(limits(resolve(&["serve"], Some(file), &[]).unwrap()), (500, 50));
        let env = [("GABLE_RATE_LIMIT_TEST", "0")];
        assert_eq!(limits(resolve(&["serve"], Some(file), &env).unwrap()), (500, 0));
        let flags = resolve(&["serve", "--rate-limit-live", "7", "--rate-limit-test", "3"], Some(file), &env).unwrap();
        assert_eq!(limits(flags.clone()), (7, 3));
        assert_eq!((flags.serve().rate_limit_live, flags.serve().rate_limit_test), (7, 3));
        let bad = format!("{:#}", resolve(&["serve"], None, &[("GABLE_RATE_LIMIT_LIVE", "-1")]).unwrap_err());
        assert!(bad.contains("GABLE_RATE_LIMIT_LIVE"), "{bad}");
    }

    #[test]
    fn the_example_file_is_valid_and_says_the_defaults() {
        let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../gable.example.toml");
        let config = Config::load(Some(std::path::Path::new(example)), |_| None, Default::default()).unwrap();
        assert_eq!(config, Config::default());
    }

    #[test]
    fn a_bad_file_or_value_is_a_clear_error() {
        let err = |args: &[&str], file: Option<&str>, env: &[(&str, &str)]| format!("{:#}", resolve(args, file, env).unwrap_err());
        let unknown = err(&["serve"], Some("adress = \"127.0.0.1:1\""), &[]);
        assert!(unknown.contains("adress") && unknown.contains("TOML file"), "{unknown}");
        let malformed = err(&["serve"], Some("addr = "), &[]);
        assert!(malformed.contains("TOML"), "{malformed}");
        let wrong_type = err(&["serve"], Some("scheduler_interval_secs = \"often\""), &[]);
        assert!(wrong_type.contains("scheduler_interval_secs"), "{wrong_type}");
        let bad_proxy = err(&["serve"], Some("trusted_proxies = [\"10.0.0.0/33\"]"), &[]);
        assert!(bad_proxy.contains("10.0.0.0/33"), "{bad_proxy}");
        let bad_env = err(&["serve"], None, &[("GABLE_ADDR", "not an address")]);
        assert!(bad_env.contains("GABLE_ADDR"), "{bad_env}");
        let missing = Config::load(Some(std::path::Path::new("/no/such/gable.toml")), |_| None, Default::default()).unwrap_err();
        assert!(format!("{missing:#}").contains("/no/such/gable.toml"), "{missing:#}");
        assert!(resolve(&["serve", "--trusted-proxy", "nonsense"], None, &[]).is_err());
    }
}
