//! Settings, layered: built-in defaults, then `GABLE_…` environment variables, then
//! command-line flags (clap reads both; a flag wins over its variable).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// Directory of the embedded database and generated secrets.
    #[arg(long, env = "GABLE_DATA_DIR", default_value = "./gable-data", global = true)]
    pub data_dir: PathBuf,
    /// A `postgres://` URL to use PostgreSQL instead of the embedded SQLite.
    #[arg(long, env = "DATABASE_URL", global = true)]
    pub database_url: Option<String>,
}

impl StoreArgs {
    /// The database URL: the given one, else SQLite in the data directory.
    pub fn url(&self) -> anyhow::Result<String> {
        if let Some(url) = &self.database_url {
            return Ok(url.clone());
        }
        std::fs::create_dir_all(&self.data_dir)?;
        Ok(format!("sqlite://{}", self.data_dir.join("gable.db").display()))
    }
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Production listener.
    #[arg(long, env = "GABLE_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// Sandbox listener.
    #[arg(long, env = "GABLE_SANDBOX_ADDR", default_value = "127.0.0.1:8081")]
    pub sandbox_addr: SocketAddr,
    /// Production base address written into links and the API description.
    #[arg(long, env = "GABLE_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Sandbox base address.
    #[arg(long, env = "GABLE_SANDBOX_PUBLIC_URL")]
    pub sandbox_public_url: Option<String>,
    /// Where the console's built assets are (cargo-leptos writes them to target/site).
    #[arg(long, env = "LEPTOS_SITE_ROOT", default_value = "target/site")]
    pub site_root: String,
    /// Seconds between scheduler rounds (rent due, leases and documents expiring); 0 runs
    /// no scheduler in this process (another process of the deployment runs it).
    #[arg(long, env = "GABLE_SCHEDULER_INTERVAL", default_value_t = 60)]
    pub scheduler_interval_secs: u64,
}

/// What the running server needs to know beyond its store.
#[derive(Debug, Clone)]
pub struct Settings {
    pub public_url: String,
    pub sandbox_public_url: String,
}
