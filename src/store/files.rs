//! The files of a database: created private to their owner whatever the umask, the
//! single writer's lock beside it, the refusal of an empty or missing database whose history
//! should be there, and a pool closed for good before anyone may replace the files. Apart
//! from the writer because the anchor, the spill file, the backup and the accounts' pool
//! use them too.

use super::{anchor, StoreError};
use nix::fcntl::{Flock, FlockArg};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Opens (creating if needed, never truncating) a file only its owner may read or write:
/// what sits beside the database is as private as the database.
pub fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
}

/// Closes `pool` for good: every connection closed when this returns. `Pool::close` alone
/// may return with one still open — a connection handed back is returned by a task
/// spawned from its drop, and can reach the idle queue after the close drained it, where
/// nothing closes it (sqlx issue #3217). A SQLite connection left open holds the files and,
/// as the last one, checkpoints into them when it finally closes: after a restore put
/// other files in place, that wrote "database disk image is malformed".
pub async fn close_pool(pool: &sqlx::SqlitePool) {
    // Returns in flight land first (bounded: a connection someone still holds is theirs).
    for _ in 0..200 {
        if pool.num_idle() as u32 >= pool.size() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    pool.close().await;
    // A return that landed after the drain: closing again closes it.
    for _ in 0..200 {
        if pool.size() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        pool.close().await;
    }
    tracing::warn!(
        open = pool.size(),
        "a database pool still holds connections after its close"
    );
}

/// Creates the database file, if there is none, private to its owner (SQLite then gives
/// its `-wal` and `-shm` files the same mode), whatever the umask.
pub fn create_private(path: &Path) -> Result<(), StoreError> {
    if path.exists() {
        return Ok(());
    }
    private_file(path)
        .map(drop)
        .map_err(|source| StoreError::Dir {
            path: path.to_path_buf(),
            source,
        })
}

/// Refuses a database file of 0 bytes, and a missing one whose anchor says it held a log:
/// opening either would create a new, empty table where a history should be.
pub fn check_file(path: &Path) -> Result<(), StoreError> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() && m.len() == 0 => Err(StoreError::EmptyFile {
            path: path.to_path_buf(),
        }),
        Ok(_) => Ok(()),
        Err(_) => match anchor::read(&anchor::path_for(path))? {
            Some(head) if head.seq > 0 => Err(StoreError::Missing {
                path: path.to_path_buf(),
                table: head.table,
                seq: head.seq,
            }),
            _ => Ok(()),
        },
    }
}

/// ends, however it ends).
pub(super) fn lock(path: &Path) -> Result<Flock<std::fs::File>, StoreError> {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let lock_path = PathBuf::from(name);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|source| StoreError::Dir {
            path: lock_path.clone(),
            source,
        })?;
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|_| StoreError::InUse {
        path: path.to_path_buf(),
        lock: lock_path.display().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::{anchor, spill, Record, Store};
    use std::path::PathBuf;

    #[tokio::test]
    async fn the_database_and_every_file_beside_it_are_private_to_their_owner() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("t.db");
        // A permissive umask, as outside systemd.
        let old = nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o022));
        let opened = Store::open(&db, "t", "t", "deluxe").await.expect("open");
        let mut store = opened.store;
        store
            .append(&Record::Held { item: "7H".into() }, &[], 1)
            .await
            .expect("append");
        let _spill = spill::Spill::open(&spill::path_for(&db)).expect("spill");
        let token = crate::auth::local_token::LocalToken::create(&db).expect("token");
        let pool = crate::auth::open_pool(&db).await.expect("accounts pool");
        nix::sys::stat::umask(old);
        let mut files = vec![
            db.clone(),
            anchor::path_for(&db),
            spill::path_for(&db),
            token.path().to_path_buf(),
        ];
        for suffix in ["-wal", "-shm"] {
            let mut name = db.as_os_str().to_owned();
            name.push(suffix);
            files.push(PathBuf::from(name));
        }
        for f in files {
            let mode = std::fs::metadata(&f).expect("exists").permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{}", f.display());
        }
        pool.close().await;
    }
}
