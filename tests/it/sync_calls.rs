//! How the store makes a commit durable: the bundled SQLite is built with `HAVE_FDATASYNC`
//! (`.cargo/config.toml`), so a commit syncs its WAL with `fdatasync` — the data and the
//! file's size — and not with `fsync`, which would also write the WAL's inode for its new
//! modification time on every commit (a second disk write, and a journal commit on a
//! journalled ext4).
//!
//! This test binary defines `fsync` and `fdatasync` itself: the bundled SQLite is linked
//! into it statically, so its calls bind to these, which count the calls per file and then
//! make the system call. The rows are appended by the real store (the direct connection and
//! sqlx) on a real file system.

use croupier::engine::{Engine, Input, Variant};
use croupier::sim::{Style, TableSim};
use croupier::store::{Record, Source, Store};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// `fsync` calls on the database's files (the database and its WAL).
static FSYNC_ON_DB: AtomicUsize = AtomicUsize::new(0);
/// `fdatasync` calls on the WAL.
static FDATASYNC_ON_WAL: AtomicUsize = AtomicUsize::new(0);

/// The file `fd` is open on, as `/proc` names it.
fn path_of(fd: c_int) -> String {
    std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

fn is_database_file(path: &str) -> bool {
    path.ends_with("sync.db") || path.ends_with("sync.db-wal")
}

/// # Safety
/// As libc's `fsync`: `fd` is any integer; the kernel checks it.
#[no_mangle]
pub unsafe extern "C" fn fsync(fd: c_int) -> c_int {
    if is_database_file(&path_of(fd)) {
        FSYNC_ON_DB.fetch_add(1, Ordering::SeqCst);
    }
    libc::syscall(libc::SYS_fsync, libc::c_long::from(fd)) as c_int
}

/// # Safety
/// As libc's `fdatasync`.
#[no_mangle]
pub unsafe extern "C" fn fdatasync(fd: c_int) -> c_int {
    if path_of(fd).ends_with("sync.db-wal") {
        FDATASYNC_ON_WAL.fetch_add(1, Ordering::SeqCst);
    }
    libc::syscall(libc::SYS_fdatasync, libc::c_long::from(fd)) as c_int
}

#[tokio::test]
async fn every_commit_syncs_the_wal_with_fdatasync_never_fsync() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = Store::open(&dir.path().join("sync.db"), "t1", "Sync", "ultimate")
        .await
        .expect("store")
        .store;
    let variant = Arc::new(
        Variant::built_in("ultimate")
            .expect("known")
            .expect("valid"),
    );
    let mut engine = Engine::new(Arc::clone(&variant));
    let mut sim = TableSim::new(variant, 7, Style::Steady { seats: 2 });
    let (fsync0, fdatasync0) = (
        FSYNC_ON_DB.load(Ordering::SeqCst),
        FDATASYNC_ON_WAL.load(Ordering::SeqCst),
    );
    let mut events = Vec::new();
    let mut rows = 0;
    let mut settled = 0;
    while rows < 200 {
        let input = sim.next_input(&engine);
        events.clear();
        engine.apply(&input, &mut events).expect("legal session");
        settled += events
            .iter()
            .filter(|e| matches!(e, croupier::engine::Event::RoundSettled(_)))
            .count();
        let source = match input {
            Input::Card(_) => Source::Shoe,
            _ => Source::Api,
        };
        let shoe = engine.shoe().number();
        store
            .append(&Record::Input { source, input }, &events, shoe)
            .await
            .expect("append");
        rows += 1;
    }
    assert!(
        settled > 0,
        "the session settles rounds (their rows carry projections)"
    );
    let fdatasyncs = FDATASYNC_ON_WAL.load(Ordering::SeqCst) - fdatasync0;
    let fsyncs = FSYNC_ON_DB.load(Ordering::SeqCst) - fsync0;
    assert!(
        fdatasyncs >= rows,
        "{rows} commits made only {fdatasyncs} fdatasync calls on the WAL: a commit is not synced"
    );
    assert_eq!(
        fsyncs, 0,
        "the database's files were synced with fsync {fsyncs} times: the bundled SQLite was built without HAVE_FDATASYNC (.cargo/config.toml)"
    );
}
