//! `gable login` and `gable logout`: profiles saved for the other commands.
//!
//! Login checks the key against the server before saving it (a typo is found now, not at
//! the first `listen`), says what the key may not do that the CLI needs, and never prints
//! the key back.

use clap::Args;

use super::profiles::{self, Profile, Profiles};
use super::{say, Client, Target};

#[derive(Args)]
pub struct LoginArgs {
    #[command(flatten)]
    target: Target,
    /// Read the API key from standard input (its first line) instead of a flag, so it stays
    /// out of the shell's history.
    #[arg(long, conflicts_with = "api_key")]
    api_key_stdin: bool,
    /// Save without checking the key against the server (e.g. while it is down).
    #[arg(long)]
    no_check: bool,
}

#[derive(Args)]
pub struct LogoutArgs {
    /// The profile to forget. [default: default]
    #[arg(long, env = "GABLE_PROFILE", hide_env = true)]
    profile: Option<String>,
}

pub async fn login(args: LoginArgs) -> anyhow::Result<()> {
    let mut target = args.target;
    if args.api_key_stdin {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line)?;
        target.api_key = Some(line.trim().to_string());
    }
    let key = target
        .api_key
        .clone()
        .filter(|k| !k.trim().is_empty())
        .ok_or_else(|| anyhow::anyhow!("give the key to save: --api-key gbl_test_…, --api-key-stdin, or GABLE_API_KEY"))?;
    let name = target.profile.clone().filter(|p| !p.is_empty()).unwrap_or_else(|| profiles::DEFAULT.to_string());
    anyhow::ensure!(
        name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') && name.len() <= 64,
        "a profile's name is letters, digits, `-` and `_` (at most 64)"
    );
    let path = Profiles::path()?;
    let mut saved = Profiles::load_from(&path)?;
    // The address given, else the one this profile had, else the local server.
    let api_url = match (target.api_url.as_deref(), saved.profiles.get(&name)) {
        (Some(url), _) => profiles::normalize_url(url)?,
        (None, Some(p)) => p.api_url.clone(),
        (None, None) => profiles::local_url(profiles::livemode_of(&key)).to_string(),
    };
    let profile = Profile { api_url, api_key: key.trim().to_string() };
    let resolved = profiles::Resolved {
        api_url: profile.api_url.clone(),
        api_key: profile.api_key.clone(),
        source: profiles::Source::Profile(name.clone()),
    };
    if !args.no_check {
        check(&Client::new(resolved.clone())?).await?;
    }
    saved.profiles.insert(name.clone(), profile);
    saved.save_to(&path)?;
    say(&format!("Saved profile `{name}`: {}.", resolved.describe()));
    say(&format!("It is in {} (readable by you alone); `gable logout --profile {name}` forgets it.", path.display()));
    Ok(())
}

/// The key works at that address: an events read answers (or is refused for its scope
/// only, which `listen` will say again).
async fn check(client: &Client) -> anyhow::Result<()> {
    match client.get("/events?limit=1").await {
        Ok(_) => Ok(()),
        Err(e) if e.code() == Some("insufficient_scope") || e.code() == Some("property_forbidden") => {
            say(&format!("Note: this key may not read events, so `gable listen` will be refused ({e})."));
            Ok(())
        }
        Err(e) if e.status() == Some(401) => {
            anyhow::bail!("{} refused the key ({e}); nothing was saved. Is it the right key for that address?", client.target.api_url)
        }
        Err(e) => anyhow::bail!("{e}; nothing was saved (`--no-check` saves without asking the server)"),
    }
}

pub fn logout(args: LogoutArgs) -> anyhow::Result<()> {
    let name = args.profile.filter(|p| !p.is_empty()).unwrap_or_else(|| profiles::DEFAULT.to_string());
    let path = Profiles::path()?;
    let mut saved = Profiles::load_from(&path)?;
    anyhow::ensure!(saved.profiles.remove(&name).is_some(), "there is no profile `{name}` in {}", path.display());
    saved.save_to(&path)?;
    say(&format!("Forgot profile `{name}` (its key is still valid on the server: revoke it in the console if it leaked)."));
    Ok(())
}
