//! Secrets Gable must be able to read back (webhook signing secrets), sealed with an AEAD
//! (XChaCha20-Poly1305) under the deployment's master key.
//!
//! The master key is 32 random bytes: `GABLE_MASTER_KEY` (64 hex characters or base64),
//! or, for the embedded database, a file `master.key` generated into the data directory
//! with 0600 permissions. Each sealed value is bound to where it belongs (the associated
//! data names the tenant, environment and record), so a ciphertext copied into another
//! row does not open. Nothing here logs a key or a plaintext.

use std::path::Path;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use rand::RngCore;

use crate::private_files::{create_private_dir, sync_dir, write_private};

/// The generated key's file in the data directory (SQLite without `GABLE_MASTER_KEY`).
pub const KEY_FILE: &str = "master.key";

/// The version prefix of sealed values, so the scheme can change without ambiguity.
const SEALED_PREFIX: &str = "v1.";

/// The master key as configured (text), redacted from `Debug` so settings can be logged.
#[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct KeyText(pub String);

impl std::fmt::Debug for KeyText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyText(…)")
    }
}

/// The master key of a deployment: the configured one; else, for the embedded database,
/// the one generated into the data directory. A shared database (PostgreSQL) has several
/// processes that must share the key, so there it must be configured.
pub fn master_key(configured: Option<&KeyText>, data_dir: &Path, shared: bool) -> anyhow::Result<MasterKey> {
    match configured {
        Some(text) => MasterKey::parse(&text.0).map_err(|e| anyhow::anyhow!("GABLE_MASTER_KEY: {e}")),
        None if shared => anyhow::bail!(
            "GABLE_MASTER_KEY is required with PostgreSQL: 32 random bytes as 64 hex characters or base64 \
             (e.g. `openssl rand -hex 32`), the same for every process of the deployment"
        ),
        None => MasterKey::load_or_generate(data_dir),
    }
}

/// The deployment's master key.
#[derive(Clone)]
pub struct MasterKey(chacha20poly1305::Key);

impl std::fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MasterKey(…)")
    }
}

impl MasterKey {
    /// Parses 32 bytes written as 64 hex characters or as base64.
    pub fn parse(text: &str) -> anyhow::Result<MasterKey> {
        let text = text.trim();
        let bytes = if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            hex::decode(text)?
        } else {
            B64.decode(text).map_err(|_| anyhow::anyhow!("the master key must be 32 bytes as 64 hex characters or base64"))?
        };
        let bytes: [u8; 32] =
            bytes.try_into().map_err(|_| anyhow::anyhow!("the master key must be exactly 32 bytes (64 hex characters or base64)"))?;
        Ok(MasterKey(bytes.into()))
    }

    /// A fresh random key (tests; and the generated file).
    pub fn generate() -> MasterKey {
        let mut bytes = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        MasterKey(bytes.into())
    }

    /// The key as 64 hex characters, for writing the generated file.
    fn to_hex(&self) -> String {
        hex::encode(self.0.as_slice())
    }

    /// The key in `dir/master.key`, generated there (0600) when the file does not exist.
    /// Written atomically: a crash mid-write leaves no file (never an empty or partial
    /// key), and of two processes generating at once, the first to link its file wins and
    /// the other reads it.
    pub fn load_or_generate(dir: &Path) -> anyhow::Result<MasterKey> {
        let path = dir.join(KEY_FILE);
        let read = |path: &Path| -> anyhow::Result<Option<MasterKey>> {
            match std::fs::read_to_string(path) {
                Ok(text) => MasterKey::parse(&text).map(Some).map_err(|e| anyhow::anyhow!("{}: {e}", path.display())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(anyhow::anyhow!("reading {}: {e}", path.display())),
            }
        };
        if let Some(key) = read(&path)? {
            return Ok(key);
        }
        create_private_dir(dir)?;
        let key = MasterKey::generate();
        let temporary = dir.join(format!(".master.key.{:016x}.tmp", rand::random::<u64>()));
        write_private(&temporary, &key.to_hex())?;
        // A hard link appears whole or not at all, and never replaces an existing file.
        let linked = std::fs::hard_link(&temporary, &path);
        let _ = std::fs::remove_file(&temporary);
        match linked {
            Ok(()) => {
                sync_dir(dir);
                tracing::info!(path = %path.display(), "generated a master key for sealed secrets");
                Ok(key)
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                read(&path)?.ok_or_else(|| anyhow::anyhow!("{} vanished while it was being read", path.display()))
            }
            Err(e) => Err(anyhow::anyhow!("writing {}: {e}", path.display())),
        }
    }

    /// Seals `plaintext` for the place named by `context`; the result is printable text.
    pub fn seal(&self, plaintext: &str, context: &str) -> String {
        let mut nonce = [0u8; 24];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let cipher = XChaCha20Poly1305::new(&self.0);
        // Encryption with a valid key and nonce cannot fail; an empty result would not open.
        let sealed =
            cipher.encrypt(XNonce::from_slice(&nonce), Payload { msg: plaintext.as_bytes(), aad: context.as_bytes() }).unwrap_or_default();
        let mut out = nonce.to_vec();
        out.extend(sealed);
        format!("{SEALED_PREFIX}{}", B64.encode(out))
    }

    /// 32 bytes derived from the key for the use `context` names (HKDF-SHA256): the same
    /// at every start for one context, unrelated for two, and telling nothing of the key.
    pub fn derive(&self, context: &str) -> [u8; 32] {
        let mut out = [0u8; 32];
        // HKDF's output may be up to 255 hashes long; 32 bytes always fit.
        let _ = hkdf::Hkdf::<sha2::Sha256>::new(None, self.0.as_slice()).expand(context.as_bytes(), &mut out);
        out
    }

    /// Opens what `seal` made for the same `context`; `None` when it was made under
    /// another key or context, or was altered.
    pub fn open(&self, sealed: &str, context: &str) -> Option<String> {
        let raw = B64.decode(sealed.strip_prefix(SEALED_PREFIX)?).ok()?;
        if raw.len() < 24 {
            return None;
        }
        let (nonce, body) = raw.split_at(24);
        let cipher = XChaCha20Poly1305::new(&self.0);
        let plain = cipher.decrypt(XNonce::from_slice(nonce), Payload { msg: body, aad: context.as_bytes() }).ok()?;
        String::from_utf8(plain).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_values_open_only_with_their_key_and_context() {
        let key = MasterKey::generate();
        let sealed = key.seal("whsec_abc", "webhook:t:true:1");
        assert!(!sealed.contains("whsec_abc"));
        assert_eq!(key.open(&sealed, "webhook:t:true:1").as_deref(), Some("whsec_abc"));
        assert_eq!(key.open(&sealed, "webhook:t:true:2"), None, "bound to its row");
        assert_eq!(key.derive("a"), key.derive("a"), "a derived secret is stable");
        assert_ne!(key.derive("a"), key.derive("b"));
        assert_ne!(key.derive("a"), MasterKey::generate().derive("a"), "and belongs to its key");
        assert_eq!(MasterKey::generate().open(&sealed, "webhook:t:true:1"), None, "bound to its key");
        let mut tampered = sealed.clone();
        tampered.pop();
        tampered.push(if sealed.ends_with('A') { 'B' } else { 'A' });
        assert_eq!(key.open(&tampered, "webhook:t:true:1"), None);
        assert_ne!(key.seal("x", "c"), key.seal("x", "c"), "a fresh nonce each time");
    }

    #[test]
    fn keys_parse_from_hex_or_base64_of_32_bytes() {
        let hex_key = "00".repeat(32);
        assert!(MasterKey::parse(&hex_key).is_ok());
        assert!(MasterKey::parse(&B64.encode([7u8; 32])).is_ok());
        assert!(MasterKey::parse(&"00".repeat(31)).is_err());
        assert!(MasterKey::parse("not a key").is_err());
    }

    #[test]
    fn postgres_needs_a_configured_key_and_sqlite_generates_one() {
        let dir = tempfile::tempdir().unwrap();
        let err = master_key(None, dir.path(), true).unwrap_err().to_string();
        assert!(err.contains("GABLE_MASTER_KEY is required with PostgreSQL"), "{err}");
        assert!(!dir.path().join("master.key").exists(), "nothing generated for PostgreSQL");
        let configured = KeyText("11".repeat(32));
        let key = master_key(Some(&configured), dir.path(), true).unwrap();
        assert_eq!(key.to_hex(), "11".repeat(32));
        assert!(master_key(Some(&KeyText("short".into())), dir.path(), false).is_err());
        master_key(None, dir.path(), false).unwrap();
        assert!(dir.path().join("master.key").exists());
        // Settings can be logged: the key never shows in them.
        assert!(!format!("{configured:?}").contains("1111"));
    }

    #[test]
    fn the_generated_key_file_is_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let a = MasterKey::load_or_generate(dir.path()).unwrap();
        let b = MasterKey::load_or_generate(dir.path()).unwrap();
        assert_eq!(a.to_hex(), b.to_hex());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("master.key")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, ["master.key"], "no temporary file is left behind");
    }

    #[test]
    fn processes_generating_at_once_all_get_the_one_key_written() {
        let dir = tempfile::tempdir().unwrap();
        let keys: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8).map(|_| s.spawn(|| MasterKey::load_or_generate(dir.path()).unwrap().to_hex())).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let on_disk = MasterKey::load_or_generate(dir.path()).unwrap().to_hex();
        assert!(keys.iter().all(|k| *k == on_disk), "every caller uses the key on disk");
    }
}
