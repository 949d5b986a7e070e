//! Saved profiles: an API address and key per name, in `profiles.toml` of the user's config
//! directory (`$XDG_CONFIG_HOME/gable`, else `~/.config/gable`; `GABLE_CLI_HOME` names
//! another directory). The file holds keys, so it is the user's alone: the directory is
//! made 0700, the file 0600, and a file others can read is refused rather than used, as
//! ssh does with a private key. Writes replace the file whole (a new file, renamed over).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::Target;
use crate::private_files;

/// The profile a command uses when none is named.
pub const DEFAULT: &str = "default";
const FILE: &str = "profiles.toml";
const HEADER: &str = "# Gable CLI profiles, written by `gable login`. They hold API keys: keep this file private.\n\n";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub api_url: String,
    pub api_key: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profiles {
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
}

/// The directory of the CLI's own files.
pub fn home() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("GABLE_CLI_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    use etcetera::BaseStrategy;
    let base = etcetera::choose_base_strategy().context("finding your config directory (set GABLE_CLI_HOME)")?;
    Ok(base.config_dir().join("gable"))
}

impl Profiles {
    pub fn path() -> anyhow::Result<PathBuf> {
        Ok(home()?.join(FILE))
    }

    /// The saved profiles; none when the file does not exist yet.
    pub fn load() -> anyhow::Result<Profiles> {
        Self::load_from(&Self::path()?)
    }

    pub fn load_from(path: &Path) -> anyhow::Result<Profiles> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Profiles::default()),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
            anyhow::ensure!(
                mode & 0o077 == 0,
                "{} holds API keys but others may read it (mode {mode:o}); run `chmod 600 {}` and try again",
                path.display(),
                path.display()
            );
        }
        toml::from_str(&text).with_context(|| format!("{} is not a profiles file", path.display()))
    }

    /// Writes the profiles in place of the file, mode 0600 from its first byte.
    pub fn save_to(&self, path: &Path) -> anyhow::Result<()> {
        let dir = path.parent().context("the profiles file has no directory")?;
        private_files::create_private_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
        let text = format!("{HEADER}{}", toml::to_string(self)?);
        let new = dir.join(format!(".{FILE}.{}", std::process::id()));
        let _ = std::fs::remove_file(&new);
        private_files::write_private(&new, &text).with_context(|| format!("writing {}", new.display()))?;
        std::fs::rename(&new, path).with_context(|| format!("replacing {}", path.display()))?;
        private_files::sync_dir(dir);
        Ok(())
    }
}

/// Where a command's key came from, to say so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `--api-key` or `GABLE_API_KEY`.
    Given,
    Profile(String),
}

/// What a command acts on: the address (without `/v1`), the key, where they came from.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub api_url: String,
    pub api_key: String,
    pub source: Source,
}

impl Resolved {
    /// `Some(true)` for a live key, `Some(false)` for a sandbox key, by its prefix; `None`
    /// for another kind of token (an OAuth access token says nothing of its environment).
    pub fn livemode(&self) -> Option<bool> {
        livemode_of(&self.api_key)
    }

    /// The environment, the address and where the key came from, in words (never the key).
    pub fn describe(&self) -> String {
        let env = match self.livemode() {
            Some(true) => "PRODUCTION (live mode)",
            Some(false) => "the sandbox (test mode)",
            None => "the token's environment",
        };
        let from = match &self.source {
            Source::Given => "the key given".to_string(),
            Source::Profile(name) => format!("profile `{name}`"),
        };
        format!("{env} at {} with {from}", self.api_url)
    }
}

pub fn livemode_of(key: &str) -> Option<bool> {
    if key.starts_with("gbl_live_") {
        Some(true)
    } else if key.starts_with("gbl_test_") {
        Some(false)
    } else {
        None
    }
}

/// The address of a local `gable serve` (`make run`) for a key's environment.
pub fn local_url(livemode: Option<bool>) -> &'static str {
    match livemode {
        Some(true) => "http://127.0.0.1:8080",
        _ => "http://127.0.0.1:8081",
    }
}

/// An address as typed, without a trailing `/` or `/v1`; it must be http(s).
pub fn normalize_url(url: &str) -> anyhow::Result<String> {
    let trimmed = url.trim().trim_end_matches('/');
    let trimmed = trimmed.strip_suffix("/v1").unwrap_or(trimmed);
    let parsed = url::Url::parse(trimmed).with_context(|| format!("`{url}` is not an address (e.g. http://127.0.0.1:8081)"))?;
    anyhow::ensure!(matches!(parsed.scheme(), "http" | "https"), "`{url}` is not an http or https address");
    anyhow::ensure!(parsed.query().is_none() && parsed.fragment().is_none(), "`{url}`: give the API's address without a query");
    Ok(trimmed.to_string())
}

/// Each setting from its flag or environment variable, else the profile, else (the
/// address) the local server of the key's environment.
pub fn resolve(target: &Target, profiles: &Profiles) -> anyhow::Result<Resolved> {
    let named = target.profile.clone().filter(|p| !p.is_empty());
    let name = named.clone().unwrap_or_else(|| DEFAULT.to_string());
    let profile = profiles.profiles.get(&name);
    if let (Some(n), None) = (&named, profile) {
        anyhow::bail!("there is no profile `{n}`; save one with `gable login --profile {n} --api-key …`");
    }
    let given = target.api_key.clone().filter(|k| !k.trim().is_empty());
    let (api_key, source) = match (given, profile) {
        (Some(key), _) => (key.trim().to_string(), Source::Given),
        (None, Some(p)) => (p.api_key.clone(), Source::Profile(name)),
        (None, None) => anyhow::bail!(
            "no API key: run `gable login --api-key gbl_test_…` once, or set GABLE_API_KEY (the console's API access page makes keys)"
        ),
    };
    let api_url = match (target.api_url.as_deref().filter(|u| !u.trim().is_empty()), profile) {
        (Some(url), _) => normalize_url(url)?,
        (None, Some(p)) => p.api_url.clone(),
        (None, None) => local_url(livemode_of(&api_key)).to_string(),
    };
    Ok(Resolved { api_url, api_key, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profiles() -> Profiles {
        let mut p = Profiles::default();
        p.profiles.insert("default".into(), Profile { api_url: "https://sandbox.example".into(), api_key: "gbl_test_saved".into() });
        p.profiles.insert("prod".into(), Profile { api_url: "https://api.example".into(), api_key: "gbl_live_saved".into() });
        p
    }

    fn target(profile: Option<&str>, url: Option<&str>, key: Option<&str>) -> Target {
        Target { profile: profile.map(String::from), api_url: url.map(String::from), api_key: key.map(String::from) }
    }

    #[test]
    fn flags_override_the_profile_which_overrides_the_defaults() {
        let saved = resolve(&target(None, None, None), &profiles()).unwrap();
        assert_eq!((saved.api_url.as_str(), saved.api_key.as_str()), ("https://sandbox.example", "gbl_test_saved"));
        assert_eq!(saved.source, Source::Profile("default".into()));
        let prod = resolve(&target(Some("prod"), None, None), &profiles()).unwrap();
        assert_eq!((prod.api_url.as_str(), prod.livemode()), ("https://api.example", Some(true)));
        assert!(prod.describe().starts_with("PRODUCTION"), "{}", prod.describe());
        let url = resolve(&target(Some("prod"), Some("http://localhost:9/v1/"), None), &profiles()).unwrap();
        assert_eq!((url.api_url.as_str(), url.api_key.as_str()), ("http://localhost:9", "gbl_live_saved"));
        // Each setting on its own: a key given overrides the profile's, its address stays.
        let key = resolve(&target(None, None, Some("gbl_test_given")), &profiles()).unwrap();
        assert_eq!((key.api_url.as_str(), key.source), ("https://sandbox.example", Source::Given));
        // Without a profile, the local server of the key's environment (`make run`).
        let none = resolve(&target(None, None, Some("gbl_test_given")), &Profiles::default()).unwrap();
        assert_eq!(none.api_url, "http://127.0.0.1:8081");
        let live = resolve(&target(None, None, Some("gbl_live_given")), &Profiles::default()).unwrap();
        assert_eq!(live.api_url, "http://127.0.0.1:8080");
        assert!(!none.describe().contains("gbl_test_given"), "the key is never shown");
    }

    #[test]
    fn missing_and_bad_settings_are_clear_errors() {
        let missing = resolve(&target(None, None, None), &Profiles::default()).unwrap_err().to_string();
        assert!(missing.contains("gable login"), "{missing}");
        let unknown = resolve(&target(Some("staging"), None, None), &profiles()).unwrap_err().to_string();
        assert!(unknown.contains("no profile `staging`"), "{unknown}");
        assert!(normalize_url("ftp://x").is_err());
        assert!(normalize_url("not a url").is_err());
        assert!(normalize_url("http://x/?a=b").is_err());
    }

    #[test]
    fn the_file_is_private_and_a_readable_one_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gable").join(FILE);
        profiles().save_to(&path).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(Profiles::load_from(&path).unwrap().profiles, profiles().profiles);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let refused = Profiles::load_from(&path).unwrap_err().to_string();
        assert!(refused.contains("chmod 600"), "{refused}");
        assert!(Profiles::load_from(&dir.path().join("none.toml")).unwrap().profiles.is_empty());
    }
}
