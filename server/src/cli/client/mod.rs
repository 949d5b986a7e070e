//! The integrator's commands: `gable login`, `logout`, `listen`, `trigger`, `logs tail` and
//! `import`.
//! Unlike the operator's commands beside them they never open a database: they act on any
//! Gable, local or remote, through its public API with an API key, exactly as an
//! integration would (`docs/cli.md`).
//!
//! Every command says first, on standard error, which environment it acts on (the sandbox
//! or production, at which address, through which profile), so a live key is never used
//! by mistake. The key itself is never printed.

use clap::{Args, Subcommand, ValueEnum};

mod api;
mod follow;
mod import;
mod listen;
mod login;
mod logs;
pub mod profiles;
mod trigger;

pub use api::{ApiError, Client};

#[derive(Subcommand)]
pub enum ClientCommand {
    /// Saves an API address and key as a profile (in your config directory, readable by you
    /// alone) for the commands below.
    Login(login::LoginArgs),
    /// Forgets a saved profile.
    Logout(login::LogoutArgs),
    /// Streams the environment's events and forwards each, signed as a webhook delivery,
    /// to a local address (or prints them).
    Listen(listen::ListenArgs),
    /// Makes an event fire in the sandbox the way an integration would: creates the
    /// smallest set of records that causes it, through the API (`--list` for the types).
    Trigger(trigger::TriggerArgs),
    /// Reads the request log.
    Logs {
        #[command(subcommand)]
        command: logs::LogsCommand,
    },
    /// Brings records in from a file: `gable import FILE --collection units` checks every
    /// row, then writes them (`--dry-run`: checks only); `gable import template COLLECTION`
    /// prints a collection's CSV template.
    Import(import::ImportArgs),
}

/// Which Gable and which key a command uses. Each setting comes from its flag, else its
/// environment variable, else the profile (`gable login`); the address defaults to the
/// local server of `make run` for the key's environment.
#[derive(Args, Clone, Debug, Default)]
pub struct Target {
    /// The saved profile to use. [env: GABLE_PROFILE] [default: default]
    #[arg(long, env = "GABLE_PROFILE", hide_env = true)]
    pub profile: Option<String>,
    /// Gable's API address, e.g. https://sandbox.gable.example or http://127.0.0.1:8081 (a
    /// trailing `/v1` is fine). [env: GABLE_API_URL]
    #[arg(long, env = "GABLE_API_URL", hide_env = true)]
    pub api_url: Option<String>,
    /// The API key (`gbl_test_…` or `gbl_live_…`). Prefer a profile or the environment:
    /// a flag stays in the shell's history. [env: GABLE_API_KEY]
    #[arg(long, env = "GABLE_API_KEY", hide_env = true)]
    pub api_key: Option<String>,
}

pub async fn run(command: ClientCommand) -> anyhow::Result<()> {
    match command {
        ClientCommand::Login(args) => login::login(args).await,
        ClientCommand::Logout(args) => login::logout(args),
        ClientCommand::Listen(args) => listen::run(args).await,
        ClientCommand::Trigger(args) => trigger::run(args).await,
        ClientCommand::Logs { command } => logs::run(command).await,
        ClientCommand::Import(args) => import::run(args).await,
    }
}

/// How a command prints what it found: `text`, a line for people; `json`, one JSON value per
/// line, for scripts.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// One line to standard error: what a command is doing, for the person running it (its
/// output proper goes to standard output, for scripts).
pub(crate) fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
