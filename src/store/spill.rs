//! The spill file: a small append-only file beside the database (`<db>.spill`) for what came
//! off the shoe while the database could not take it — the card whose commit failed, the
//! items and alarms after it — so that nothing read is known only to memory or stderr.
//!
//! The file is **preallocated** (`posix_fallocate`, [`RESERVE`] bytes past its content) when
//! it is opened, at start-up, while the disk still has room: on a full disk an entry is then
//! written into space the file already owns. Entries are JSON lines written with `pwrite` and
//! `fdatasync` each; the unused tail is zeros, so reading stops at the first NUL (and a line
//! torn by a crash is dropped: its entry was never reported as kept). Entries are numbered
//! from 1 for the life of the file; the event log's `recovered` rows say up to which number
//! they took entries into the log (`spill_through`), so reconciliation is exactly once across
//! crashes and the file itself is never rewritten.

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Bytes kept allocated past the last entry: about 600 entries of a card each.
pub const RESERVE: u64 = 64 * 1024;

/// The longest line written (a longer alarm reason is cut).
const MAX_LINE: usize = 1024;

/// The spill file could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
#[error("spill file {path}: {source}")]
pub struct SpillError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// What was spilled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Spilled {
    /// A shoe item (`"7H"`, `"CUT"`) that came off the shoe and is in no log row.
    Item(String),
    /// An alarm that could not be recorded (its reason).
    Alarm(String),
}

/// One entry of the spill file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpillEntry {
    /// Its number, from 1 for the life of the file.
    pub n: u64,
    /// When it was spilled (Unix milliseconds, for people).
    pub at_ms: i64,
    /// The table.
    pub table: String,
    /// What.
    #[serde(flatten)]
    pub what: Spilled,
    /// Why it could not be recorded (the store's error).
    pub why: String,
}

/// The spill file of one database, open for appending.
#[derive(Debug)]
pub struct Spill {
    file: File,
    path: PathBuf,
    /// Where the next entry goes.
    end: u64,
    /// Every entry in the file, in order.
    entries: Vec<SpillEntry>,
}

/// The spill file that belongs to the database at `db`.
pub fn path_for(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".spill");
    PathBuf::from(name)
}

/// Reads the entries of the spill file at `path` (none when there is no file).
pub fn read(path: &Path) -> Result<Vec<SpillEntry>, SpillError> {
    let err = |source| SpillError {
        path: path.to_path_buf(),
        source,
    };
    let mut bytes = Vec::new();
    match File::open(path) {
        Ok(mut f) => {
            f.read_to_end(&mut bytes).map_err(err)?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(err(e)),
    }
    Ok(parse(&bytes).0)
}

/// The entries in `bytes`, and how many bytes they take (where the next one goes).
fn parse(bytes: &[u8]) -> (Vec<SpillEntry>, u64) {
    let content = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let mut entries = Vec::new();
    let mut end = 0;
    let mut start = 0;
    while let Some(nl) = bytes[start..content].iter().position(|&b| b == b'\n') {
        let line = &bytes[start..start + nl];
        if let Ok(entry) = serde_json::from_slice::<SpillEntry>(line) {
            entries.push(entry);
        }
        start += nl + 1;
        end = start as u64;
    }
    (entries, end)
}

impl Spill {
    /// Opens (creating, mode 0600) the spill file at `path` and allocates [`RESERVE`] bytes
    /// past its entries.
    pub fn open(path: &Path) -> Result<Spill, SpillError> {
        let err = |source| SpillError {
            path: path.to_path_buf(),
            source,
        };
        let mut file = super::private_file(path).map_err(err)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(err)?;
        let (entries, end) = parse(&bytes);
        let want = end + RESERVE;
        let len = i64::try_from(want).unwrap_or(i64::MAX);
        nix::fcntl::posix_fallocate(&file, 0, len)
            .map_err(|e| err(std::io::Error::from_raw_os_error(e as i32)))?;
        Ok(Spill {
            file,
            path: path.to_path_buf(),
            end,
            entries,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every entry, in order.
    pub fn entries(&self) -> &[SpillEntry] {
        &self.entries
    }

    /// Appends one entry and waits until it is on disk; returns it.
    pub fn append(
        &mut self,
        table: &str,
        what: Spilled,
        why: &str,
        at_ms: i64,
    ) -> Result<SpillEntry, SpillError> {
        let err = |source| SpillError {
            path: self.path.clone(),
            source,
        };
        let n = self.entries.last().map_or(1, |e| e.n + 1);
        let mut entry = SpillEntry {
            n,
            at_ms,
            table: table.to_string(),
            what,
            why: why.chars().take(300).collect(),
        };
        let mut line = serde_json::to_vec(&entry).map_err(|e| err(e.into()))?;
        if line.len() > MAX_LINE {
            if let Spilled::Alarm(reason) = &mut entry.what {
                *reason = reason.chars().take(300).collect();
            }
            line = serde_json::to_vec(&entry).map_err(|e| err(e.into()))?;
        }
        line.push(b'\n');
        self.file.write_all_at(&line, self.end).map_err(err)?;
        self.file.sync_data().map_err(err)?;
        self.end += line.len() as u64;
        self.entries.push(entry.clone());
        Ok(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_survive_reopening_and_a_torn_last_line_is_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = path_for(&dir.path().join("t.db"));
        let mut spill = Spill::open(&path).expect("open");
        assert!(spill.entries().is_empty());
        spill
            .append("t", Spilled::Item("7H".into()), "disk full", 1)
            .expect("append");
        spill
            .append("t", Spilled::Alarm("lid open".into()), "disk full", 2)
            .expect("append");
        // Preallocated: the file owns room for more than it holds.
        let len = std::fs::metadata(&path).expect("meta").len();
        assert!(len >= RESERVE, "{len}");
        drop(spill);
        // A crash in the middle of a third line.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open");
        let entries = read(&path).expect("read");
        let end: u64 = entries
            .iter()
            .map(|e| serde_json::to_vec(e).expect("json").len() as u64 + 1)
            .sum();
        f.write_all_at(b"{\"n\":3,\"at_", end).expect("torn");
        drop(f);
        let mut spill = Spill::open(&path).expect("reopen");
        assert_eq!(spill.entries().len(), 2);
        assert_eq!(spill.entries()[1].what, Spilled::Alarm("lid open".into()));
        let third = spill
            .append("t", Spilled::Item("CUT".into()), "disk full", 3)
            .expect("append");
        assert_eq!(third.n, 3);
        let again = read(&path).expect("read");
        assert_eq!(
            again.iter().map(|e| e.n).collect::<Vec<_>>(),
            [1, 2, 3],
            "the torn line is overwritten, not kept"
        );
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&path).expect("meta").permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
    }
}
