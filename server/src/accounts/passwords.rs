//! Passwords: the rules a new password must meet, and argon2id hashing and
//! verification off the async runtime.
//!
//! Parameters are OWASP's current minimum for argon2id: m = 19456 KiB (19 MiB), t = 2,
//! p = 1. Hashes are PHC strings (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`), so a
//! hash made under older parameters still verifies and is replaced at the next sign-in.

use std::sync::{Arc, LazyLock};

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use gable_app::service::ConsoleError;
use rand::rngs::OsRng;
use tokio::sync::Semaphore;

pub const MIN_LEN: usize = 12;
pub const MAX_LEN: usize = 128;

/// OWASP Password Storage Cheat Sheet, argon2id minimum configuration.
pub const M_COST_KIB: u32 = 19_456;
pub const T_COST: u32 = 2;
pub const P_COST: u32 = 1;

/// The 20 most common passwords of the public breach lists, and the common ones long
/// enough to pass the length rule. Compared case-insensitively.
const COMMON: &[&str] = &[
    // The 20 most common.
    "123456",
    "123456789",
    "12345678",
    "password",
    "qwerty123",
    "qwerty1",
    "111111",
    "12345",
    "secret",
    "123123",
    "1234567890",
    "1234567",
    "000000",
    "qwerty",
    "abc123",
    "password1",
    "iloveyou",
    "11111111",
    "dragon",
    "monkey",
    // Common ones of 12 characters or more.
    "123456789012",
    "1234567890123",
    "12345678901234",
    "password1234",
    "password12345",
    "password123456",
    "passwordpassword",
    "qwertyuiop12",
    "qwerty123456",
    "qwertyuiopasdf",
    "qwertyuiopasdfghjkl",
    "1q2w3e4r5t6y",
    "1qaz2wsx3edc",
    "zaq12wsxcde3",
    "111111111111",
    "000000000000",
    "123123123123",
    "abcdefghijkl",
    "abc123456789",
    "iloveyou1234",
    "administrator",
    "changeme1234",
    "welcome12345",
    "letmein12345",
    "football1234",
    "sunshine1234",
];

fn invalid(message: impl Into<String>) -> ConsoleError {
    ConsoleError::Invalid { field: "password".into(), message: message.into() }
}

/// Checks a new password: 12 to 128 characters, not a common password, not the email,
/// not one character repeated.
pub fn check_rules(password: &str, email: &str) -> Result<(), ConsoleError> {
    let n = password.chars().count();
    if n < MIN_LEN {
        return Err(invalid(format!("Use a password of at least {MIN_LEN} characters.")));
    }
    if n > MAX_LEN {
        return Err(invalid(format!("Use a password of at most {MAX_LEN} characters.")));
    }
    let lower = password.to_lowercase();
    if COMMON.contains(&lower.as_str()) {
        return Err(invalid("This password is one of the most common ones. Choose another."));
    }
    if lower.trim() == email.trim().to_lowercase() {
        return Err(invalid("Do not use your email address as the password."));
    }
    let mut chars = password.chars();
    if let Some(first) = chars.next() {
        if chars.all(|c| c == first) {
            return Err(invalid("A password of one repeated character is too easy to guess."));
        }
    }
    Ok(())
}

fn argon2() -> Argon2<'static> {
    let params = Params::new(M_COST_KIB, T_COST, P_COST, None).expect("the argon2 parameters are valid");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

fn hash_now(password: &str) -> Result<String, argon2::password_hash::Error> {
    let salt = SaltString::generate(&mut OsRng);
    Ok(argon2().hash_password(password.as_bytes(), &salt)?.to_string())
}

/// A hash of a random password, verified against when the email is unknown, so an
/// unknown email costs what a wrong password costs (no timing oracle).
static DUMMY_HASH: LazyLock<String> = LazyLock::new(|| {
    let random: String = rand::Rng::sample_iter(OsRng, &rand::distributions::Alphanumeric).take(32).map(char::from).collect();
    hash_now(&random).expect("hashing a random password works")
});

/// The outcome of a verification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verified {
    pub ok: bool,
    /// The stored hash was made with other parameters: store a new one.
    pub needs_rehash: bool,
}

/// Hashes and verifies on the blocking pool, at most a few at a time: each argon2id
/// run holds 19 MiB, so a burst of sign-ins must not hold hundreds of them at once.
#[derive(Clone)]
pub struct Hasher {
    permits: Arc<Semaphore>,
}

impl Hasher {
    pub fn new() -> Self {
        let n = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).clamp(2, 8);
        // Compute the dummy hash early, so the first unknown email is not slower.
        std::thread::spawn(|| {
            LazyLock::force(&DUMMY_HASH);
            crate::observe::memory::release_unused();
        });
        Hasher { permits: Arc::new(Semaphore::new(n)) }
    }

    async fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> Result<T, ConsoleError> {
        let _permit = self.permits.acquire().await.map_err(|_| ConsoleError::Internal)?;
        let f = move || {
            let done = f();
            // Each run held 19 MiB; a quiet console must not keep it.
            crate::observe::memory::release_unused();
            done
        };
        tokio::task::spawn_blocking(f).await.map_err(|e| {
            tracing::error!(error = %e, "console: a password task failed");
            ConsoleError::Internal
        })
    }

    /// The PHC string of a new password.
    pub async fn hash(&self, password: &str) -> Result<String, ConsoleError> {
        let password = password.to_string();
        self.run(move || hash_now(&password)).await?.map_err(|e| {
            tracing::error!(error = %e, "console: hashing a password failed");
            ConsoleError::Internal
        })
    }

    /// Verifies a password against a stored hash, or against the dummy hash when there
    /// is none (an unknown email), which then never succeeds.
    pub async fn verify(&self, password: &str, stored: Option<String>) -> Result<Verified, ConsoleError> {
        let password = password.to_string();
        self.run(move || {
            let real = stored.is_some();
            let phc = stored.unwrap_or_else(|| DUMMY_HASH.clone());
            let parsed = match PasswordHash::new(&phc) {
                Ok(p) => p,
                Err(e) => {
                    tracing::error!(error = %e, "console: a stored password hash does not parse");
                    return Verified { ok: false, needs_rehash: false };
                }
            };
            let ok = argon2().verify_password(password.as_bytes(), &parsed).is_ok() && real;
            Verified { ok, needs_rehash: ok && needs_rehash(&parsed) }
        })
        .await
    }
}

impl Default for Hasher {
    fn default() -> Self {
        Self::new()
    }
}

fn needs_rehash(h: &PasswordHash<'_>) -> bool {
    if h.algorithm != Algorithm::Argon2id.ident() || h.version != Some(Version::V0x13 as u32) {
        return true;
    }
    match Params::try_from(h) {
        Ok(p) => p.m_cost() != M_COST_KIB || p.t_cost() != T_COST || p.p_cost() != P_COST,
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        assert!(check_rules("short", "a@b.co").is_err());
        assert!(check_rules(&"x".repeat(129), "a@b.co").is_err());
        assert!(check_rules("Password1234", "a@b.co").is_err());
        assert!(check_rules("owner@acme.com", "Owner@Acme.com").is_err());
        assert!(check_rules("aaaaaaaaaaaaaa", "a@b.co").is_err());
        assert!(check_rules("correct horse battery", "a@b.co").is_ok());
    }

    #[tokio::test]
    async fn hashes_verify_and_carry_the_parameters() {
        let h = Hasher::new();
        let phc = h.hash("correct horse battery").await.unwrap();
        assert!(phc.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{phc}");
        assert_eq!(h.verify("correct horse battery", Some(phc.clone())).await.unwrap(), Verified { ok: true, needs_rehash: false });
        assert!(!h.verify("wrong horse battery", Some(phc)).await.unwrap().ok);
        assert!(!h.verify("anything at all", None).await.unwrap().ok);
        // A hash made with weaker parameters verifies and asks to be replaced.
        let weak = Argon2::new(Algorithm::Argon2id, Version::V0x13, Params::new(8192, 1, 1, None).unwrap())
            .hash_password(b"correct horse battery", &SaltString::generate(&mut OsRng))
            .unwrap()
            .to_string();
        assert_eq!(h.verify("correct horse battery", Some(weak)).await.unwrap(), Verified { ok: true, needs_rehash: true });
    }
}
