//! The anchor: the head of a table's event log (its last sequence number and hash) kept
//! outside the database, in `<db>.anchor`, and beside every backup. The hash chain proves
//! that no row was changed or removed *inside* the log, but not that rows were not cut off
//! its end: the anchor does. At start-up the log must reach the anchor's sequence number
//! with the anchor's hash there; a shorter log, or another row there, refuses to start.
//!
//! The writer updates it after every commit with one `pwrite` and no `fsync` (the commit is
//! already on disk; the anchor may only lag behind it, which the check accepts as a prefix).
//! It has two slots, written alternately (by sequence parity) and each with its own
//! checksum, so a write torn by a power cut leaves the other slot whole.
//! It is not signed: someone who can write both files can cut both. Keeping the backups'
//! anchors elsewhere is what catches that.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// One slot's size in bytes (a JSON line padded with spaces).
const SLOT: usize = 256;

/// The anchor file that belongs to the database at `db`.
pub fn path_for(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".anchor");
    PathBuf::from(name)
}

/// A table's log head.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    /// The table.
    pub table: String,
    /// Its last sequence number.
    pub seq: u64,
    /// That row's chain hash (hex).
    pub hash: String,
}

#[derive(Serialize, Deserialize)]
struct Slot {
    #[serde(flatten)]
    head: Head,
    check: String,
}

fn check(head: &Head) -> String {
    let digest = Sha256::digest(format!("{}\n{}\n{}", head.table, head.seq, head.hash));
    hex::encode(&digest[..8])
}

fn encode(head: &Head) -> Option<[u8; SLOT]> {
    let slot = Slot {
        head: head.clone(),
        check: check(head),
    };
    let json = serde_json::to_vec(&slot).ok()?;
    if json.len() >= SLOT {
        return None;
    }
    let mut out = [b' '; SLOT];
    out[..json.len()].copy_from_slice(&json);
    out[SLOT - 1] = b'\n';
    Some(out)
}

/// The anchor could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum AnchorError {
    /// The file could not be read or written.
    #[error("anchor {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file exists but neither slot holds a valid head.
    #[error("anchor {path} is damaged: neither slot holds a valid log head")]
    Damaged {
        /// The file.
        path: PathBuf,
    },
}

/// Reads the newest valid head in the anchor file at `path`: `None` when there is no file.
pub fn read(path: &Path) -> Result<Option<Head>, AnchorError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(AnchorError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let best = bytes
        .chunks(SLOT)
        .filter_map(|slot| serde_json::from_slice::<Slot>(slot.trim_ascii()).ok())
        .filter(|s| s.check == check(&s.head))
        .map(|s| s.head)
        .max_by_key(|h| h.seq);
    match best {
        Some(head) => Ok(Some(head)),
        None => Err(AnchorError::Damaged {
            path: path.to_path_buf(),
        }),
    }
}

/// Writes `head` as a fresh anchor file at `path` (both slots), synced: a backup's anchor.
pub fn write_new(path: &Path, head: &Head) -> Result<(), AnchorError> {
    let mut anchor = Anchor::create(path)?;
    anchor.set(head)?;
    anchor.set(head)?;
    anchor.file.sync_all().map_err(|source| AnchorError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The live anchor, open for writing by the store's writer.
#[derive(Debug)]
pub struct Anchor {
    file: File,
    path: PathBuf,
    next: u64,
}

impl Anchor {
    /// Opens (creating, mode 0600) the anchor file at `path`.
    pub fn create(path: &Path) -> Result<Anchor, AnchorError> {
        let file = super::private_file(path).map_err(|source| AnchorError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Anchor {
            file,
            path: path.to_path_buf(),
            next: 0,
        })
    }

    /// Records `head` in the next slot.
    pub fn set(&mut self, head: &Head) -> Result<(), AnchorError> {
        let Some(slot) = encode(head) else {
            return Ok(());
        };
        let at = (self.next % 2) * SLOT as u64;
        self.next += 1;
        self.file
            .write_all_at(&slot, at)
            .map_err(|source| AnchorError::Io {
                path: self.path.clone(),
                source,
            })
    }
}

/// The anchor's view of a log head: `table`'s row `seq` and its chain hash.
pub(super) fn head(table: &str, seq: u64, hash: &[u8; 32]) -> Head {
    Head {
        table: table.to_string(),
        seq,
        hash: hex::encode(hash),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_whole_slot_wins_and_a_torn_one_is_ignored() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = path_for(&dir.path().join("t.db"));
        assert_eq!(read(&path).expect("no file"), None);
        let head = |seq| Head {
            table: "t".into(),
            seq,
            hash: format!("{seq:064x}"),
        };
        let mut a = Anchor::create(&path).expect("create");
        a.set(&head(1)).expect("set");
        a.set(&head(2)).expect("set");
        a.set(&head(3)).expect("set");
        assert_eq!(read(&path).expect("read"), Some(head(3)));
        // Slot 0 holds seq 3: tear it; slot 1 (seq 2) is what is left.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open");
        f.write_all_at(b"{\"table\":\"t\",\"seq\":9", 0)
            .expect("tear");
        assert_eq!(read(&path).expect("read"), Some(head(2)));
        // An edited slot fails its check.
        f.write_all_at(&[b'x'; SLOT], SLOT as u64)
            .expect("scribble");
        assert!(matches!(read(&path), Err(AnchorError::Damaged { .. })));
    }
}
