//! The tables' public keys as the studio's operator pinned them: a TOML file of
//! `table-id = "<64 hex>"` lines (`croupier studio nats-config` writes it, from each
//! table's `croupier table-key`). A relay serves a table only with its key here, and
//! checks every message against it — never against a key a message offers.

use ed25519_dalek::VerifyingKey;
use std::collections::BTreeMap;
use std::path::Path;

/// The pinned keys, by table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PinnedKeys {
    keys: BTreeMap<String, VerifyingKey>,
}

/// The file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PinnedError {
    /// It cannot be read.
    #[error("table keys {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// It is not a TOML map of table ids to keys.
    #[error("table keys {path}: {why}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        why: String,
    },
}

impl PinnedKeys {
    /// Reads `path`.
    pub fn load(path: &Path) -> Result<PinnedKeys, PinnedError> {
        let text = std::fs::read_to_string(path).map_err(|source| PinnedError::Io {
            path: path.display().to_string(),
            source,
        })?;
        PinnedKeys::parse(&text).map_err(|why| PinnedError::Invalid {
            path: path.display().to_string(),
            why,
        })
    }

    /// Parses the file's text.
    pub fn parse(text: &str) -> Result<PinnedKeys, String> {
        let map: BTreeMap<String, String> = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut keys = BTreeMap::new();
        for (table, hex_key) in map {
            let key = super::attest::verifying_key(&hex_key)
                .map_err(|e| format!("table {table:?}: {e}"))?;
            keys.insert(table, key);
        }
        Ok(PinnedKeys { keys })
    }

    /// The file's text (sorted by table).
    pub fn to_text(&self) -> String {
        let mut out = String::from(
            "# croupier: each table's Ed25519 public key (`croupier table-key` on the table).\n\
             # The relays serve a table only with its key pinned here.\n",
        );
        for (table, key) in &self.keys {
            out.push_str(&format!(
                "{} = \"{}\"\n",
                toml::Value::String(table.clone()),
                hex::encode(key.as_bytes())
            ));
        }
        out
    }

    /// Pins `key` for `table` (replacing any).
    pub fn insert(&mut self, table: &str, key: VerifyingKey) {
        self.keys.insert(table.to_string(), key);
    }

    /// `table`'s key.
    pub fn get(&self, table: &str) -> Option<&VerifyingKey> {
        self.keys.get(table)
    }

    /// The tables with a key.
    pub fn tables(&self) -> impl Iterator<Item = &str> {
        self.keys.keys().map(String::as_str)
    }
}

/// A keys file as last read, read again when it changes (the operator pins a new table's
/// key while the relays and the floor run).
#[derive(Debug)]
pub struct KeysFile {
    path: std::path::PathBuf,
    read: std::sync::RwLock<(Option<std::time::SystemTime>, PinnedKeys)>,
}

impl KeysFile {
    /// Reads `path` (a file that cannot be used is an error: nothing is trusted without it).
    pub fn open(path: &Path) -> Result<KeysFile, PinnedError> {
        let modified = modified(path);
        let keys = PinnedKeys::load(path)?;
        Ok(KeysFile {
            path: path.to_path_buf(),
            read: std::sync::RwLock::new((modified, keys)),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the file again if it changed since: `Ok(true)` when it did and its keys are
    /// now in use; an error when it changed but cannot be used (the keys in use are kept,
    /// and it is not read again until it changes once more).
    pub fn reload(&self) -> Result<bool, PinnedError> {
        let modified = modified(&self.path);
        if modified == self.lock_read().0 {
            return Ok(false);
        }
        let loaded = PinnedKeys::load(&self.path);
        let mut read = self.read.write().unwrap_or_else(|e| e.into_inner());
        read.0 = modified;
        read.1 = loaded?;
        Ok(true)
    }

    /// The keys in use.
    pub fn keys(&self) -> PinnedKeys {
        self.lock_read().1.clone()
    }

    /// `table`'s key.
    pub fn get(&self, table: &str) -> Option<VerifyingKey> {
        self.lock_read().1.get(table).copied()
    }

    fn lock_read(
        &self,
    ) -> std::sync::RwLockReadGuard<'_, (Option<std::time::SystemTime>, PinnedKeys)> {
        self.read.read().unwrap_or_else(|e| e.into_inner())
    }
}

fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trust::TableKeys;

    #[test]
    fn a_file_round_trips_and_a_bad_key_is_named() {
        let a = TableKeys::from_secrets([1; 32], [0; 32]);
        let mut pinned = PinnedKeys::default();
        pinned.insert(
            "t-1",
            crate::trust::attest::verifying_key(&a.public_hex()).expect("key"),
        );
        let text = pinned.to_text();
        assert_eq!(PinnedKeys::parse(&text).expect("parses"), pinned);
        let e = PinnedKeys::parse("t2 = \"abcd\"\n").expect_err("short key");
        assert!(e.contains("table \"t2\""), "{e}");
        assert!(PinnedKeys::parse("t2 = 3\n").is_err());
    }
}
