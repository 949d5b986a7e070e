//! The `gable` command.

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use uuid::Uuid;

use crate::config::{ServeArgs, StoreArgs};
use crate::startup::{shutdown_signal, Application};
use crate::store::{schema, Dialect, Store};

#[derive(Parser)]
#[command(name = "gable", version, about = "Gable: tenant-scoped property operations (API, console, flows)")]
struct Cli {
    #[command(flatten)]
    store: StoreArgs,
    #[command(subcommand)]
    command: Command,
}

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
    let cli = Cli::parse();
    init_tracing();
    let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: could not start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn init_tracing() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("GABLE_LOG").unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn"));
    let json = std::env::var("GABLE_LOG_FORMAT").is_ok_and(|v| v == "json");
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    if json {
        let _ = builder.json().try_init();
    } else {
        let _ = builder.try_init();
    }
}

async fn open(args: &StoreArgs) -> anyhow::Result<Store> {
    let store = Store::connect(&args.url()?).await?;
    store.migrate().await?;
    Ok(store)
}

fn print_json(v: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Schema { dialect } => {
            print!("{}", schema::init_ddl(dialect));
            Ok(())
        }
        Command::Migrate => {
            open(&cli.store).await?;
            eprintln!("migrations applied");
            Ok(())
        }
        Command::Tenant { command: TenantCommand::Create { name } } => {
            let store = open(&cli.store).await?;
            let id = store.create_tenant(&name).await?;
            print_json(&serde_json::json!({ "object": "tenant", "id": id, "name": name }))
        }
        Command::Key { command: KeyCommand::Create { tenant, env, scopes, properties, service_account } } => {
            let store = open(&cli.store).await?;
            anyhow::ensure!(store.tenant_exists(tenant).await?, "no tenant {tenant}");
            let sa = store.service_account(tenant, &service_account).await?;
            let key = store.create_key(tenant, sa, env.livemode(), scopes, properties).await?;
            print_json(&key)?;
            eprintln!("The secret is shown this once; Gable keeps only its SHA-256.");
            Ok(())
        }
        Command::Key { command: KeyCommand::Revoke { tenant, id } } => {
            let store = open(&cli.store).await?;
            anyhow::ensure!(store.revoke_key(tenant, id).await?, "no active key {id} in tenant {tenant}");
            eprintln!("revoked");
            Ok(())
        }
        Command::Seed { tenant, env, size, random_seed } => {
            let store = open(&cli.store).await?;
            anyhow::ensure!(store.tenant_exists(tenant).await?, "no tenant {tenant}");
            let counts = crate::seed::seed(&store, tenant, env.livemode(), size, random_seed, true).await?;
            print_json(&counts)
        }
        Command::Serve(args) => {
            let store = open(&cli.store).await?;
            let first_run = store.count_tenants().await? == 0;
            let app = Application::build(store, &args).await?;
            let settings = app.state.settings.clone();
            if first_run {
                let store = &app.state.store;
                let tenant = store.create_tenant("Demo Properties").await?;
                let sa = store.service_account(tenant, "default").await?;
                let key = store.create_key(tenant, sa, false, vec!["*".into()], None).await?;
                // A closed stdout must not stop the server (println! would panic).
                use std::io::Write;
                let _ = writeln!(
                    std::io::stdout().lock(),
                    "\nWelcome to Gable. A demo tenant was created ({tenant}).\n\n  \
                     Console:     {}/\n  API:         {}/v1\n  Sandbox API: {}/v1\n  API description: {}/v1/openapi.json\n\n  \
                     Sandbox key (shown once): {}\n\n  Try:  curl -H 'Authorization: Bearer {}' {}/v1/properties\n",
                    settings.public_url,
                    settings.public_url,
                    settings.sandbox_public_url,
                    settings.public_url,
                    key.secret,
                    key.secret,
                    settings.sandbox_public_url,
                );
            }
            tracing::info!(live = %app.live_addr, sandbox = %app.test_addr, "listening");
            app.run(shutdown_signal()).await
        }
    }
}
