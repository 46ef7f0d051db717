//! The secret policy and argon2id hashing.
//!
//! One `secret` field serves both kinds: a secret of digits only is a **PIN** and needs 4 to
//! 12 digits (the panel's keypad; three wrong tries lock the account, so 4 digits is
//! enough at a table under camera); anything else is a **password** of 8 to 128
//! characters. Leading and trailing spaces are part of the secret (never trimmed).
//!
//! Hashes are argon2id PHC strings with the `argon2` crate's defaults (19 MiB, 2 passes,
//! 1 lane: OWASP's minimum), a random salt from the OS; the parameters travel in the string,
//! so raising them later only affects new hashes.

use super::AuthError;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use password_hash::rand_core::OsRng;

/// Checks `secret` against the policy; the error says what is wrong (never the secret).
pub fn check_policy(secret: &str) -> Result<(), AuthError> {
    let n = secret.chars().count();
    if !secret.is_empty() && secret.chars().all(|c| c.is_ascii_digit()) {
        if !(4..=12).contains(&n) {
            return Err(AuthError::Invalid(format!(
                "a PIN has 4 to 12 digits (this one has {n})"
            )));
        }
        return Ok(());
    }
    if !(8..=128).contains(&n) {
        return Err(AuthError::Invalid(format!(
            "a password has 8 to 128 characters (this one has {n}); or use a PIN of 4 to 12 digits"
        )));
    }
    if secret.chars().any(char::is_control) {
        return Err(AuthError::Invalid(
            "a password cannot contain control characters".into(),
        ));
    }
    Ok(())
}

/// Hashes `secret` (argon2id, random salt). Slow on purpose: call it off the async threads.
pub fn hash(secret: &str) -> Result<String, AuthError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(secret.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| AuthError::Hash(e.to_string()))
}

/// Whether `secret` matches the stored `phc` hash (false for a malformed hash).
pub fn verify(secret: &str, phc: &str) -> bool {
    match PasswordHash::new(phc) {
        Ok(parsed) => Argon2::default()
            .verify_password(secret.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

/// A hash of no one's secret: unknown badges are verified against it, so an attempt takes
/// as long whether the badge exists or not.
pub fn decoy() -> &'static str {
    static DECOY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DECOY.get_or_init(|| hash("decoy-secret-never-valid").unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_takes_pins_and_passwords() {
        for ok in ["1234", "123456789012", "correct horse", "12345678a"] {
            assert!(check_policy(ok).is_ok(), "{ok}");
        }
        for bad in ["", "123", "1234567890123", "short", "pass\nword1"] {
            assert!(check_policy(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_hash_verifies_only_its_secret() {
        let h = hash("4321").expect("hash");
        assert!(h.starts_with("$argon2id$"), "{h}");
        assert!(verify("4321", &h));
        assert!(!verify("4322", &h));
        assert!(!verify("4321", "not a hash"));
    }
}
