//! The local token: how commands on the table's own machine (`croupier alarm clear`, the
//! deployment checks) authenticate to the running service without a person's PIN.
//!
//! At start the service writes 256 random bits, hex-encoded, to `<db>.token` beside the
//! database (mode 0600, replaced at every start, removed at a clean stop). A request with
//! `Authorization: Bearer <token>` acts with the **admin** role; whoever can read that file
//! can already write the database itself, so this adds no power. Every use of the token is
//! recorded as one and the same actor, [`LOCAL_ACTOR`]: the token says nothing about which
//! person holds it, so nothing a client sends (no header) may name one. For the same
//! reason the token is never a person under the two-person rule: it can neither confirm a
//! resolution that needs a second person nor have its proposal confirmed (`table::dispute`).

use super::{random, AuthError};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The audit actor of every request made with the local token.
pub const LOCAL_ACTOR: &str = "local";

/// The token file of the database at `db`.
pub fn path_for(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".token");
    PathBuf::from(name)
}

/// The service's token (only its hash is kept in memory).
#[derive(Debug)]
pub struct LocalToken {
    path: PathBuf,
    hash: [u8; 32],
}

impl LocalToken {
    /// Writes a fresh token file for the database at `db`.
    pub fn create(db: &Path) -> Result<LocalToken, AuthError> {
        let path = path_for(db);
        let token = hex::encode(random::<32>()?);
        let io = |source| AuthError::Io {
            path: path.display().to_string(),
            source,
        };
        // Never write through an old file (or a link planted in its place): remove it and
        // create a new one, readable by this user only.
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(io)?;
        file.write_all(token.as_bytes()).map_err(io)?;
        file.sync_all().map_err(io)?;
        Ok(LocalToken {
            hash: Sha256::digest(token.as_bytes()).into(),
            path,
        })
    }

    /// Whether `given` is the token (compares hashes, so timing reveals nothing useful).
    pub fn matches(&self, given: &str) -> bool {
        let h: [u8; 32] = Sha256::digest(given.trim().as_bytes()).into();
        h.iter()
            .zip(self.hash.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the file (clean shutdown).
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Reads the token of the database at `db` (the CLI).
pub fn read(db: &Path) -> Result<String, AuthError> {
    let path = path_for(db);
    std::fs::read_to_string(&path)
        .map(|t| t.trim().to_string())
        .map_err(|source| AuthError::Io {
            path: path.display().to_string(),
            source,
        })
}
