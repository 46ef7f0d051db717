//! The HTTP seamless-wallet adapter against a small wallet server the test starts (axum on
//! a free port, balances in memory, every transaction id applied once, requests signed):
//! a response lost to a timeout is retried with the same id and applied once; duplicate
//! credits pay once; a short balance, an unknown player, a rolled-back debit are refused
//! with their codes; a server that is down or refuses the signature answers
//! `wallet_unavailable` and nothing is applied; a debit whose answer never came is rolled
//! back by the journal's reconciliation once the server is back.

use crate::wallet_server;

use croupier::wallet::http::{HttpWallet, HttpWalletSection};
use croupier::wallet::journal::{Entry, Journal};
use croupier::wallet::{TxId, TxKind, Wallet, WalletError, WalletRequest};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use wallet_server::{start, Server, SECRET};

fn adapter(dir: &std::path::Path, url: &str, secret: &str) -> HttpWallet {
    let file = dir.join("wallet.secret");
    std::fs::write(&file, format!("{secret}\n")).expect("secret");
    HttpWallet::new(&HttpWalletSection {
        url: url.to_string(),
        secret_file: file,
        cert: None,
        timeout_ms: 300,
        retries: 3,
    })
    .expect("adapter")
}

fn req(line: &str, kind: TxKind, amount: i64) -> WalletRequest {
    WalletRequest {
        tx: TxId {
            table: "t".into(),
            round: 9,
            seat: 4,
            line: line.into(),
            kind,
        },
        player: "alice".into(),
        amount,
    }
}

/// A wallet server where Alice holds €100.00 and the adapter to it (its secret file in a
/// fresh directory): the directory, the server, its URL and the adapter.
async fn alice_at_a_wallet() -> (tempfile::TempDir, Arc<Server>, String, HttpWallet) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Arc::new(Server::default());
    server
        .balances
        .lock()
        .expect("lock")
        .insert("alice".into(), 10_000);
    let url = start(Arc::clone(&server)).await;
    let w = adapter(dir.path(), &url, SECRET);
    (dir, server, url, w)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_answers_are_retried_with_the_same_id_and_applied_once() {
    let (dir, server, url, w) = alice_at_a_wallet().await;
    assert_eq!(w.balance("alice").await, Ok(10_000));

    // The first answer is lost (too late): retried with the same id, applied once.
    server.slow.store(1, Ordering::SeqCst);
    let bet = req("main.1", TxKind::Debit, 2_500);
    assert_eq!(w.debit(&bet).await, Ok(7_500));
    assert_eq!(server.seen.lock().expect("lock")[&bet.tx.to_string()], 2);
    // A duplicate credit pays once.
    let win = req("settle", TxKind::Credit, 5_000);
    assert_eq!(w.credit(&win).await, Ok(12_500));
    assert_eq!(w.credit(&win).await, Ok(12_500));
    // The refusals, with their codes; nothing applied.
    let big = req("main.2", TxKind::Debit, 99_999);
    assert!(matches!(
        w.debit(&big).await,
        Err(WalletError::InsufficientFunds {
            balance: 12_500,
            ..
        })
    ));
    let mut stranger = req("main.3", TxKind::Debit, 1);
    stranger.player = "mallory".into();
    assert!(matches!(
        w.debit(&stranger).await,
        Err(WalletError::UnknownPlayer(_))
    ));
    // A rollback gives the stake back once, and the debit stays refused.
    let second = req("double.1", TxKind::Debit, 2_500);
    assert_eq!(w.debit(&second).await, Ok(10_000));
    assert_eq!(w.rollback(&second).await, Ok(12_500));
    assert_eq!(w.rollback(&second).await, Ok(12_500));
    assert!(matches!(
        w.debit(&second).await,
        Err(WalletError::RolledBack(_))
    ));
    assert_eq!(w.balance("alice").await, Ok(12_500));

    // A wrong secret: refused by the server, reported as no usable answer, nothing applied.
    let forged = adapter(dir.path(), &url, "not-the-wallet-secret-at-all");
    assert!(matches!(
        forged.debit(&req("main.4", TxKind::Debit, 100)).await,
        Err(WalletError::Unavailable(_))
    ));
    assert_eq!(w.balance("alice").await, Ok(12_500));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_is_down_refuses_the_bet_and_the_journal_settles_it_when_back() {
    let (dir, server, _url, w) = alice_at_a_wallet().await;
    let pool = croupier::auth::open_pool(&dir.path().join("t.db"))
        .await
        .expect("pool");
    let journal = Journal::new(pool, "t", false);

    // Nothing listening at all: unavailable after the retries.
    let nowhere = adapter(dir.path(), "http://127.0.0.1:9/wallet", SECRET);
    assert!(matches!(
        nowhere.balance("alice").await,
        Err(WalletError::Unavailable(_))
    ));

    // The server answers 503 to everything: the bet is refused, and the rollback cannot be
    // sent either, so the journal keeps the debit open.
    server.down.store(true, Ordering::SeqCst);
    let entry = Entry {
        tx: journal.next_debit(9, 4, "main").await.expect("id"),
        player: "alice".into(),
        amount: 2_500,
    };
    assert!(journal.debit(&w, &entry).await.is_err());
    // Back: at the next start the open debit (its round never opened) is rolled back, by
    // id — had the debit been applied, its stake would come back; it was not, so the
    // rollback only makes a late copy of it refuse.
    server.down.store(false, Ordering::SeqCst);
    let done = journal.reconcile(&w, true).await.expect("reconcile");
    assert_eq!(done.rolled_back, 1);
    assert_eq!(w.balance("alice").await, Ok(10_000));
    let late = WalletRequest {
        tx: entry.tx.clone(),
        player: "alice".into(),
        amount: 2_500,
    };
    assert!(matches!(
        w.debit(&late).await,
        Err(WalletError::RolledBack(_))
    ));
    assert_eq!(
        journal
            .reconcile(&w, true)
            .await
            .expect("again")
            .rolled_back,
        0
    );
}

/// No file of the database `db` (nor its `-wal`, `-shm`) is open in this process any more
/// once `who` closed it — as in a stopped service — checked for up to a second. A
/// connection still closing after its pool said it was closed (sqlx's `Pool::close` can
/// return early, hence `store::close_pool`) checkpoints into whatever files are there when
/// it finally closes: into a restore's (seen under load: "database disk image is
/// malformed", "database is locked").
async fn assert_closed(db: &std::path::Path, who: &str) {
    let name = db.display().to_string();
    for _ in 0..20 {
        let open = std::fs::read_dir("/proc/self/fd")
            .expect("/proc/self/fd")
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .any(|p| p.display().to_string().starts_with(&name));
        if !open {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("{name} is still open after {who} closed it");
}

/// Issue #31: a database restored from a backup plays its round numbers again. The
/// restored table is on a new timeline, and its wallet ids carry it: the round's stake is
/// really taken from the wallet again, where the id the lost round used would have been
/// answered from the lost round's record (no money taken) — the defect this closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_restore_the_same_round_number_is_a_new_transaction_at_the_wallet() {
    let (dir, server, _url, w) = alice_at_a_wallet().await;
    let db = dir.path().join("t.db");
    let copy = dir.path().join("backup.db");
    // Closed, not just dropped: its connections must be gone before the files are
    // replaced below, as a stopped service's are.
    croupier::store::Store::open(&db, "t", "t", "deluxe")
        .await
        .expect("store")
        .store
        .close()
        .await
        .expect("close");
    assert_closed(&db, "the store").await;
    croupier::store::backup(&db, &copy).await.expect("backup");
    // After the backup: round 1's stake, which the restore will lose.
    let pool = croupier::auth::open_pool(&db).await.expect("pool");
    let journal = Journal::new(pool.clone(), "t", false);
    let lost = Entry {
        tx: journal.next_debit(1, 4, "main").await.expect("id"),
        player: "alice".into(),
        amount: 1_000,
    };
    assert_eq!(journal.debit(&w, &lost).await, Ok(9_000));
    croupier::store::close_pool(&pool).await;
    assert_closed(&db, "the pool").await;
    // The restore: the backup and its anchor over the live files.
    for ext in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
    }
    std::fs::copy(&copy, &db).expect("restore");
    std::fs::copy(
        croupier::store::anchor::path_for(&copy),
        croupier::store::anchor::path_for(&db),
    )
    .expect("anchor");
    let opened = croupier::store::Store::open(&db, "t", "t", "deluxe")
        .await
        .expect("store");
    let timeline = opened.store.timeline().clone();
    assert_eq!(timeline.epoch, 1, "a restore begins a new timeline");
    opened.store.close().await.expect("close");
    let pool = croupier::auth::open_pool(&db).await.expect("pool");
    let mut journal = Journal::new(pool.clone(), "t", false);
    // Without the timeline, round 1's stake would get the lost one's id, and the wallet
    // would answer it from the lost round's record: no money taken.
    let stale = journal.next_debit(1, 4, "main").await.expect("id");
    assert_eq!(stale, lost.tx, "the restored journal forgot the lost debit");
    journal.on_timeline(&timeline);
    let again = Entry {
        tx: journal.next_debit(1, 4, "main").await.expect("id"),
        player: "alice".into(),
        amount: 1_000,
    };
    assert_eq!(
        again.tx.to_string(),
        format!("t~{}:1:4:main.1:debit", &timeline.id[..8])
    );
    assert_eq!(journal.debit(&w, &again).await, Ok(8_000), "taken again");
    let applied = server.applied.lock().expect("lock").clone();
    assert_eq!(
        applied.get(&lost.tx.to_string()),
        Some(&("debit".into(), 1_000))
    );
    assert_eq!(
        applied.get(&again.tx.to_string()),
        Some(&("debit".into(), 1_000))
    );
    pool.close().await;
}
