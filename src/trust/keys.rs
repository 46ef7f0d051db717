//! The table's keys, in `<db>.key` (mode 0600, beside the database): an Ed25519 signing
//! key for results and a 32-byte secret the hole-card nonces are derived from
//! (`seal::nonce`). Both are drawn from the OS random number generator at the table's
//! first start and never change; the file is written to a temporary name and renamed, so
//! a crash leaves either no key or a whole one.
//!
//! File format (text): `croupier-table-key/1`, then `ed25519 <64 hex>` (the signing key's
//! 32-byte seed) and `seal <64 hex>`, one per line.

use ed25519_dalek::{Signer, SigningKey};
use std::path::{Path, PathBuf};

const MAGIC: &str = "croupier-table-key/1";

/// The key file that belongs to the database at `db`.
pub fn path_for(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".key");
    PathBuf::from(name)
}

/// The key file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// Reading or writing failed.
    #[error("table key {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a table key file.
    #[error("table key {path} is damaged: {why}")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: &'static str,
    },
    /// The OS random number generator failed.
    #[error("no randomness for a new table key: {0}")]
    Random(String),
}

/// A table's signing key and seal secret.
pub struct TableKeys {
    signing: SigningKey,
    seal: [u8; 32],
    /// Derived from `seal` once: every public view names players through it.
    pseudonyms: super::Pseudonyms,
}

impl std::fmt::Debug for TableKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secrets.
        write!(f, "TableKeys({})", self.public_hex())
    }
}

impl TableKeys {
    /// Keys from their secrets (tests; `load_or_create` otherwise).
    pub fn from_secrets(signing: [u8; 32], seal: [u8; 32]) -> TableKeys {
        TableKeys {
            signing: SigningKey::from_bytes(&signing),
            seal,
            pseudonyms: super::Pseudonyms::of_seal_secret(&seal),
        }
    }

    /// How players are named in public at this table (`super::pseudonym`).
    pub fn pseudonyms(&self) -> &super::Pseudonyms {
        &self.pseudonyms
    }

    /// Reads the key file at `path` (never creating it).
    pub fn load(path: &Path) -> Result<TableKeys, KeyError> {
        let text = std::fs::read_to_string(path).map_err(|source| KeyError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        parse(path, &text)
    }

    /// Reads the key file at `path`, creating it (0600) with fresh keys when there is none.
    pub fn load_or_create(path: &Path) -> Result<TableKeys, KeyError> {
        match std::fs::read_to_string(path) {
            Ok(text) => return parse(path, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(KeyError::Io {
                    path: path.to_path_buf(),
                    source,
                })
            }
        }
        let mut secrets = [0u8; 64];
        getrandom::fill(&mut secrets).map_err(|e| KeyError::Random(e.to_string()))?;
        let text = format!(
            "{MAGIC}\ned25519 {}\nseal {}\n",
            hex::encode(&secrets[..32]),
            hex::encode(&secrets[32..])
        );
        let io = |source| KeyError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".new");
        let tmp = PathBuf::from(tmp);
        let _ = std::fs::remove_file(&tmp);
        {
            use std::io::Write;
            let mut f = crate::store::private_file(&tmp).map_err(io)?;
            f.write_all(text.as_bytes()).map_err(io)?;
            f.sync_all().map_err(io)?;
        }
        // Never replace a key another start wrote meanwhile: hard-link, not rename.
        match std::fs::hard_link(&tmp, path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io(e)),
        }
        let _ = std::fs::remove_file(&tmp);
        let text = std::fs::read_to_string(path).map_err(io)?;
        parse(path, &text)
    }

    /// The public key.
    pub fn verifying_key(&self) -> ed25519_dalek::VerifyingKey {
        self.signing.verifying_key()
    }

    /// The public key, 32 bytes as 64 lowercase hex digits.
    pub fn public_hex(&self) -> String {
        hex::encode(self.signing.verifying_key().as_bytes())
    }

    /// The Ed25519 signature of `message`, as 128 lowercase hex digits.
    pub fn sign(&self, message: &[u8]) -> String {
        hex::encode(self.signing.sign(message).to_bytes())
    }

    /// The seal secret (for `seal::nonce`).
    pub(crate) fn seal_secret(&self) -> &[u8; 32] {
        &self.seal
    }
}

fn parse(path: &Path, text: &str) -> Result<TableKeys, KeyError> {
    let damaged = |why| KeyError::Damaged {
        path: path.to_path_buf(),
        why,
    };
    let mut lines = text.lines();
    if lines.next() != Some(MAGIC) {
        return Err(damaged("not a croupier table key file"));
    }
    let mut field = |name: &str| -> Result<[u8; 32], KeyError> {
        let line = lines.next().ok_or_else(|| damaged("a line is missing"))?;
        let value = line
            .strip_prefix(name)
            .and_then(|v| v.strip_prefix(' '))
            .ok_or_else(|| damaged("a line is not the one expected"))?;
        let bytes = hex::decode(value.trim()).map_err(|_| damaged("a key is not hex"))?;
        bytes
            .try_into()
            .map_err(|_| damaged("a key is not 32 bytes"))
    };
    let signing = field("ed25519")?;
    let seal = field("seal")?;
    Ok(TableKeys::from_secrets(signing, seal))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn created_once_private_and_read_back_the_same() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = path_for(&dir.path().join("t.db"));
        let a = TableKeys::load_or_create(&path).expect("create");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let b = TableKeys::load_or_create(&path).expect("load");
        assert_eq!(a.public_hex(), b.public_hex());
        assert_eq!(a.seal_secret(), b.seal_secret());
        assert_eq!(a.sign(b"x"), b.sign(b"x"));
        std::fs::write(&path, "croupier-table-key/1\ned25519 zz\n").expect("scribble");
        assert!(matches!(
            TableKeys::load_or_create(&path),
            Err(KeyError::Damaged { .. })
        ));
    }
}
