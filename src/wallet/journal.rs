//! The service's journal of wallet requests (`wallet_journal`) and the reconciliation
//! against the event log's projections (`rounds`, `bets`, `settlements`).
//!
//! A stake is journalled `pending` before its debit is sent. From then on the log decides:
//! a round that opened without the seat's bet, or (at start) a round that never opened,
//! rolls the seat's debits back; a round whose result is final credits the seat's returns
//! once (tx `<table>:<round>:<seat>:settle:credit`; a player behind the seat or on a common
//! draw's box is settled apart, `…:behind-settle@P:credit`, `…:settle@P:credit`) after rolling back whatever was debited
//! beyond what the log staked (a double whose input never committed). Every step is
//! idempotent at the wallet, and the journal row moves on only after the wallet answered,
//! so a crash at any point repeats a step — never doubles it.

use super::{now_ms, Owner, TxId, TxKind, Wallet, WalletError, WalletRequest};
use sqlx::{Row, SqlitePool};
use tracing::{info, warn};

/// The journal on the table's database.
#[derive(Clone, Debug)]
pub struct Journal {
    pool: SqlitePool,
    table: String,
    /// The table part of the ids of new transactions: `<id>~<timeline>` (`on_timeline`;
    /// the plain id until it is called), so a round number played again after a restore
    /// never reuses an id the wallet already applied.
    tx_table: String,
    /// `[disputes] window_seconds = 0`: a settled round is final at once (no `final` row).
    final_when_settled: bool,
    /// Whether the journal may hold open debits: set by every journalled debit (and at
    /// the start), cleared by a reconciliation that found none. Without remote bets the
    /// reconciler that runs after every committed row then reads nothing.
    maybe_open: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// One journalled debit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The debit's id.
    pub tx: TxId,
    /// The player.
    pub player: String,
    /// The stake.
    pub amount: i64,
}

impl Entry {
    fn request(&self) -> WalletRequest {
        WalletRequest {
            tx: self.tx.clone(),
            player: self.player.clone(),
            amount: self.amount,
        }
    }
}

/// What a reconciliation did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reconciled {
    /// Debits rolled back.
    pub rolled_back: usize,
    /// Seats' rounds credited.
    pub settled: usize,
}

fn db(e: sqlx::Error) -> WalletError {
    WalletError::Unavailable(format!("journal: {e}"))
}

/// The rows of one reconciliation group's table, round and seat (`Journal::group_row`
/// binds them, then the owner's player for the condition that follows).
const OF_GROUP: &str = "table_id = ? AND round = ? AND seat = ?";

impl Journal {
    /// The one row `sql` selects from a reconciliation group's rows: its `?`s are this
    /// table, then the group's round, seat and owner's player (see [`OF_GROUP`]).
    async fn group_row<T>(
        &self,
        sql: &str,
        (round, seat, player): (i64, u8, &str),
    ) -> Result<T, WalletError>
    where
        T: for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow> + Send + Unpin,
    {
        sqlx::query_as(sql)
            .bind(&self.table)
            .bind(round)
            .bind(i64::from(seat))
            .bind(player)
            .fetch_one(&self.pool)
            .await
            .map_err(db)
    }

    /// The journal of table `table`.
    pub fn new(pool: SqlitePool, table: &str, final_when_settled: bool) -> Journal {
        Journal {
            pool,
            table: table.to_string(),
            tx_table: table.to_string(),
            final_when_settled,
            maybe_open: std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true)),
        }
    }

    /// New transactions are the table's on `timeline` (`store/timeline.rs`): their ids
    /// carry it. Journalled ones keep the ids they were sent with.
    pub fn on_timeline(&mut self, timeline: &crate::store::Timeline) {
        self.tx_table = tx_table(&self.table, timeline);
    }

    /// The id of the next debit of `line` (`main`, `double`, `split`, `insurance`, a side
    /// bet's `side-…`, any of them with its owner: `Owner::line`) for
    /// `seat` in `round`: attempts are numbered, so a stake asked again after a rollback
    /// (a bet changed, a restart) is a new transaction.
    pub async fn next_debit(&self, round: u64, seat: u8, line: &str) -> Result<TxId, WalletError> {
        // An exact prefix, not LIKE: `_` (in player ids) is LIKE's wildcard.
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM wallet_journal WHERE table_id = ? AND round = ? AND seat = ? \
             AND substr(line, 1, length(?4)) = ?4",
        )
        .bind(&self.table)
        .bind(i64::try_from(round).unwrap_or(i64::MAX))
        .bind(i64::from(seat))
        .bind(format!("{line}."))
        .fetch_one(&self.pool)
        .await
        .map_err(db)?;
        Ok(TxId {
            table: self.tx_table.clone(),
            round,
            seat,
            line: format!("{line}.{}", n + 1),
            kind: TxKind::Debit,
        })
    }

    /// The open (pending or committed) debits of `line` for `seat` in `round`.
    pub async fn open_stakes(
        &self,
        round: u64,
        seat: u8,
        line: &str,
    ) -> Result<Vec<Entry>, WalletError> {
        self.open_where(round, seat, |l| l.split('.').next() == Some(line))
            .await
    }

    /// The open (pending or committed) debits of `owner` at `seat` in `round`, every
    /// line of theirs.
    pub async fn open_stakes_of(
        &self,
        round: u64,
        seat: u8,
        owner: &Owner,
    ) -> Result<Vec<Entry>, WalletError> {
        self.open_where(round, seat, |l| Owner::of_line(l) == *owner)
            .await
    }

    /// The open debits at `seat` in `round` whose line `keep` takes.
    async fn open_where(
        &self,
        round: u64,
        seat: u8,
        keep: impl Fn(&str) -> bool,
    ) -> Result<Vec<Entry>, WalletError> {
        Ok(self
            .open_entries()
            .await?
            .into_iter()
            .filter(|e| e.tx.round == round && e.tx.seat == seat && keep(&e.tx.line))
            .collect())
    }

    /// Journals a debit as pending (before it is sent).
    pub async fn pending(&self, entry: &Entry) -> Result<(), WalletError> {
        sqlx::query(
            "INSERT INTO wallet_journal (tx_id, player_id, table_id, round, seat, line, amount, state, at_ms) \
             VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?)",
        )
        .bind(entry.tx.to_string())
        .bind(&entry.player)
        // The table's id, not the id's table part (which carries the timeline).
        .bind(&self.table)
        .bind(i64::try_from(entry.tx.round).unwrap_or(i64::MAX))
        .bind(i64::from(entry.tx.seat))
        .bind(&entry.tx.line)
        .bind(entry.amount)
        .bind(now_ms())
        .execute(&self.pool)
        .await
        .map_err(db)?;
        // Once the row is committed: a reconciliation that cleared the flag before it
        // could read the row looks again at the next one.
        self.maybe_open
            .store(true, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    async fn set_state(&self, tx: &TxId, state: &str) -> Result<(), WalletError> {
        sqlx::query("UPDATE wallet_journal SET state = ? WHERE tx_id = ?")
            .bind(state)
            .bind(tx.to_string())
            .execute(&self.pool)
            .await
            .map_err(db)?;
        Ok(())
    }

    /// Debits, then marks the stake debited (`committed` means: the wallet took it; the
    /// log has it or will decide otherwise). On any refusal the debit is rolled back (a
    /// timeout may have applied it) and the refusal returned.
    pub async fn debit(&self, wallet: &dyn Wallet, entry: &Entry) -> Result<i64, WalletError> {
        self.pending(entry).await?;
        match wallet.debit(&entry.request()).await {
            Ok(balance) => {
                self.set_state(&entry.tx, "committed").await?;
                Ok(balance)
            }
            Err(e) => {
                self.roll_back(wallet, entry).await?;
                Err(e)
            }
        }
    }

    /// Rolls one debit back (the bet was refused or withdrawn).
    pub async fn roll_back(&self, wallet: &dyn Wallet, entry: &Entry) -> Result<i64, WalletError> {
        let balance = wallet.rollback(&entry.request()).await?;
        self.set_state(&entry.tx, "rolled_back").await?;
        Ok(balance)
    }

    /// The open (pending or committed) debits, oldest first.
    async fn open_entries(&self) -> Result<Vec<Entry>, WalletError> {
        let rows = sqlx::query(
            "SELECT player_id, round, seat, line, amount, tx_id FROM wallet_journal \
             WHERE table_id = ? AND state IN ('pending', 'committed') ORDER BY round, seat, at_ms, tx_id",
        )
        .bind(&self.table)
        .fetch_all(&self.pool)
        .await
        .map_err(db)?;
        Ok(rows
            .into_iter()
            .map(|r| Entry {
                player: r.get(0),
                amount: r.get(4),
                tx: TxId {
                    // The id it was sent with: its timeline's, whatever the current one.
                    table: r
                        .get::<String, _>(5)
                        .split(':')
                        .next()
                        .unwrap_or(&self.table)
                        .to_string(),
                    round: u64::try_from(r.get::<i64, _>(1)).unwrap_or(0),
                    seat: u8::try_from(r.get::<i64, _>(2)).unwrap_or(0),
                    line: r.get(3),
                    kind: TxKind::Debit,
                },
            })
            .collect())
    }

    /// Brings every open debit as far as the log allows. `at_start`: no betting window is
    /// open (the service just started), so a debit whose round never opened is rolled back.
    pub async fn reconcile(
        &self,
        wallet: &dyn Wallet,
        at_start: bool,
    ) -> Result<Reconciled, WalletError> {
        let mut done = Reconciled::default();
        // Cleared before the read: a debit journalled after it sets it again.
        if !self
            .maybe_open
            .swap(false, std::sync::atomic::Ordering::SeqCst)
            && !at_start
        {
            return Ok(done);
        }
        let entries = match self.open_entries().await {
            Ok(entries) => entries,
            Err(e) => {
                self.maybe_open
                    .store(true, std::sync::atomic::Ordering::SeqCst);
                return Err(e);
            }
        };
        if !entries.is_empty() {
            // Some stay open until their round is final: looked at again after each row.
            self.maybe_open
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
        // One group per round, seat and owner: a seat's own player, each player behind it
        // and each player's box in a common draw settle apart (oldest first within).
        let mut groups: std::collections::BTreeMap<(u64, u8, Owner), Vec<Entry>> =
            std::collections::BTreeMap::new();
        for e in entries {
            let key = (e.tx.round, e.tx.seat, Owner::of_line(&e.tx.line));
            groups.entry(key).or_default().push(e);
        }
        for ((round, seat, owner), group) in groups {
            let r = i64::try_from(round).unwrap_or(i64::MAX);
            // The log's rows of this owner: the seat's own player's are written without a
            // player (or with theirs, in a common draw); everyone else's with theirs.
            let of_owner = match owner {
                Owner::Seat => "player IN ('', ?)",
                Owner::Behind(_) | Owner::Box(_) => "player = ?",
            };
            let row = sqlx::query(
                "SELECT settled_seq, final_seq FROM rounds WHERE table_id = ? AND round = ?",
            )
            .bind(&self.table)
            .bind(r)
            .fetch_optional(&self.pool)
            .await
            .map_err(db)?;
            let Some(row) = row else {
                if at_start {
                    for e in &group {
                        self.roll_back(wallet, e).await?;
                        done.rolled_back += 1;
                        info!(tx = %e.tx, "wallet: the bet never reached the log; rolled back");
                    }
                }
                continue;
            };
            let settled: Option<i64> = row.get(0);
            let fin: Option<i64> = row.get(1);
            let is_final = fin.is_some() || (self.final_when_settled && settled.is_some());
            if !is_final {
                // In play: the main stake stays only if the round holds the seat's bet.
                let (placed,): (i64,) = self
                    .group_row(
                        &format!("SELECT COUNT(*) FROM bets WHERE {OF_GROUP} AND {of_owner}"),
                        (r, seat, &group[0].player),
                    )
                    .await?;
                if placed == 0 {
                    for e in &group {
                        self.roll_back(wallet, e).await?;
                        done.rolled_back += 1;
                        info!(tx = %e.tx, "wallet: the round opened without this bet; rolled back");
                    }
                }
                continue;
            }
            let (staked, returned): (i64, i64) = self
                .group_row(
                    &format!(
                        "SELECT COALESCE(SUM(staked), 0), COALESCE(SUM(returned), 0) \
                         FROM settlements WHERE {OF_GROUP} AND {of_owner}"
                    ),
                    (r, seat, &group[0].player),
                )
                .await?;
            let debited: i64 = group.iter().map(|e| e.amount).sum();
            // Stakes the wallet took but the log never played (newest first).
            let mut excess = debited - staked;
            let mut kept = Vec::new();
            for e in group.iter().rev() {
                if excess >= e.amount && e.amount > 0 {
                    self.roll_back(wallet, e).await?;
                    excess -= e.amount;
                    done.rolled_back += 1;
                } else {
                    kept.push(e);
                }
            }
            if excess != 0 {
                warn!(table = %self.table, round, seat, excess, "wallet: debits and the log's stakes differ");
            }
            let Some(player) = kept.first().map(|e| e.player.clone()) else {
                continue;
            };
            let credit = WalletRequest {
                tx: TxId::settlement_of(&self.tx_table, round, seat, &owner),
                player,
                amount: returned,
            };
            wallet.credit(&credit).await?;
            for e in kept {
                self.set_state(&e.tx, "settled").await?;
            }
            done.settled += 1;
            info!(tx = %credit.tx, returned, "wallet: round settled");
        }
        Ok(done)
    }
}

/// The table part of transaction ids on `timeline`: `<id>~<first eight hex digits of the
/// timeline>`. Every timeline's own — a restored database's, and a second table's that
/// was given an id already in use — so no two histories share an id at the wallet.
pub fn tx_table(table: &str, timeline: &crate::store::Timeline) -> String {
    format!("{table}~{}", timeline.short())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wallet::ledger::Ledger;

    async fn setup() -> (tempfile::TempDir, SqlitePool, Ledger, Journal) {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = crate::auth::open_pool(&dir.path().join("t.db"))
            .await
            .expect("pool");
        sqlx::query(
            "INSERT INTO tables (id, name, variant, created_ms) VALUES ('t', 't', 'deluxe', 0)",
        )
        .execute(&pool)
        .await
        .expect("table");
        let ledger = Ledger::new(pool.clone());
        ledger
            .add_player("alice", "Alice", 10_000)
            .await
            .expect("add");
        let journal = Journal::new(pool.clone(), "t", false);
        (dir, pool, ledger, journal)
    }

    async fn stake(j: &Journal, l: &Ledger, round: u64, line: &str, amount: i64) -> Entry {
        let e = Entry {
            tx: j.next_debit(round, 4, line).await.expect("id"),
            player: "alice".into(),
            amount,
        };
        j.debit(l, &e).await.expect("debit");
        e
    }

    #[tokio::test]
    async fn on_a_later_timeline_new_ids_carry_it_and_journalled_ones_keep_theirs() {
        let (_d, pool, l, mut j) = setup().await;
        // Staked on the first timeline: the plain form.
        let before = stake(&j, &l, 1, "main", 1_000).await;
        assert_eq!(before.tx.to_string(), "t:1:4:main.1:debit");
        // The database restored: round 1 plays again on a new timeline.
        j.on_timeline(&crate::store::Timeline {
            id: "3fa9c2d1aabbccddeeff001122334455".into(),
            epoch: 1,
            from_seq: 9,
        });
        let again = j.next_debit(2, 4, "main").await.expect("id");
        assert_eq!(again.to_string(), "t~3fa9c2d1:2:4:main.1:debit");
        // Journalled under the table, found again by its round and seat.
        let entry = Entry {
            tx: again.clone(),
            player: "alice".into(),
            amount: 500,
        };
        j.debit(&l, &entry).await.expect("debit");
        assert_eq!(
            j.open_stakes(2, 4, "main").await.expect("open"),
            vec![entry]
        );
        // The journalled debit keeps the id it was sent with (its rollback must match).
        let open = j.open_stakes(1, 4, "main").await.expect("open");
        assert_eq!(open, vec![before.clone()]);
        // Its round settles on the new timeline: the credit is the new timeline's.
        let run = |sql: &'static str| sqlx::query(sql).execute(&pool);
        run("INSERT INTO rounds (table_id, round, shoe, opened_seq, settled_seq, final_seq) VALUES ('t', 1, 1, 5, 20, 21)").await.expect("round");
        run("INSERT INTO bets (table_id, round, line, seat, player, kind, amount) VALUES ('t', 1, 1, 4, '', 'main', 1000)").await.expect("bet");
        run("INSERT INTO settlements (table_id, round, line, seat, player, kind, staked, returned, detail) VALUES ('t', 1, 1, 4, '', 'main', 1000, 2000, '{}')").await.expect("settled");
        assert_eq!(j.reconcile(&l, false).await.map(|r| r.settled), Ok(1));
        let credited: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM wallet_ledger WHERE tx_id = 't~3fa9c2d1:1:4:settle:credit'",
        )
        .fetch_one(&pool)
        .await
        .expect("count");
        assert_eq!(credited, 1);
    }

    #[tokio::test]
    async fn a_final_round_credits_its_returns_once_and_gives_back_what_the_log_never_staked() {
        let (_d, pool, l, j) = setup().await;
        stake(&j, &l, 1, "main", 1_000).await;
        // The double was debited, but its input never committed (a crash): the log stakes
        // only the main bet.
        stake(&j, &l, 1, "double", 1_000).await;
        assert_eq!(l.balance("alice").await, Ok(8_000));
        let run = |sql: &'static str| sqlx::query(sql).execute(&pool);
        run("INSERT INTO rounds (table_id, round, shoe, opened_seq) VALUES ('t', 1, 1, 5)")
            .await
            .expect("round");
        run("INSERT INTO bets (table_id, round, line, seat, player, kind, amount) VALUES ('t', 1, 1, 4, '', 'main', 1000)").await.expect("bet");
        // In play: nothing moves.
        assert_eq!(j.reconcile(&l, false).await, Ok(Reconciled::default()));
        assert_eq!(l.balance("alice").await, Ok(8_000));
        run("INSERT INTO settlements (table_id, round, line, seat, player, kind, staked, returned, detail) VALUES ('t', 1, 1, 4, '', 'main', 1000, 2000, '{}')").await.expect("settled");
        run("UPDATE rounds SET settled_seq = 20, final_seq = 21 WHERE round = 1")
            .await
            .expect("final");
        let done = j.reconcile(&l, false).await.expect("reconcile");
        assert_eq!(
            done,
            Reconciled {
                rolled_back: 1,
                settled: 1
            }
        );
        // 10,000 - 1,000 staked + 2,000 returned; the double's 1,000 back.
        assert_eq!(l.balance("alice").await, Ok(11_000));
        // Again (a restart, the next row): nothing more.
        assert_eq!(j.reconcile(&l, true).await, Ok(Reconciled::default()));
        assert_eq!(l.balance("alice").await, Ok(11_000));
    }

    #[tokio::test]
    async fn players_behind_a_seat_settle_apart_from_the_seated_player() {
        let (_d, pool, l, j) = setup().await;
        l.add_player("bob", "Bob", 10_000).await.expect("add");
        l.add_player("carol", "Carol", 10_000).await.expect("add");
        let take = |player: &str, line: String, amount: i64| {
            let (j, l, player) = (j.clone(), l.clone(), player.to_string());
            async move {
                let e = Entry {
                    tx: j.next_debit(1, 4, &line).await.expect("id"),
                    player,
                    amount,
                };
                j.debit(&l, &e).await.expect("debit");
                e
            }
        };
        // Alice holds seat 4; bob plays behind it (main, pair, a followed double).
        take("alice", Owner::Seat.line("main"), 1_000).await;
        let bob = Owner::Behind("bob".into());
        let b1 = take("bob", bob.line("main"), 500).await;
        take("bob", bob.line(&super::super::side_line("pair")), 100).await;
        take("bob", bob.line("double"), 500).await;
        let c1 = take("carol", Owner::Behind("carol".into()).line("main"), 200).await;
        assert_eq!(b1.tx.to_string(), "t:1:4:behind-main@bob.1:debit");
        assert_eq!(c1.tx.line, "behind-main@carol.1");
        let run = |sql: &'static str| sqlx::query(sql).execute(&pool);
        run("INSERT INTO rounds (table_id, round, shoe, opened_seq) VALUES ('t', 1, 1, 5)")
            .await
            .expect("round");
        for sql in [
            "INSERT INTO settlements (table_id, round, line, seat, player, kind, staked, returned, detail) VALUES ('t', 1, 1, 4, '', 'main', 2000, 4000, '{}')",
            "INSERT INTO settlements (table_id, round, line, seat, player, kind, staked, returned, detail) VALUES ('t', 1, 2, 4, 'bob', 'main', 1000, 2000, '{}')",
            "INSERT INTO settlements (table_id, round, line, seat, player, kind, staked, returned, detail) VALUES ('t', 1, 3, 4, 'bob', 'pair', 100, 0, '{}')",
            // Carol's bet behind never made it into the round: it comes back.
            "UPDATE rounds SET settled_seq = 20, final_seq = 21 WHERE round = 1",
        ] {
            run(sql).await.expect("row");
        }
        let done = j.reconcile(&l, false).await.expect("reconcile");
        assert_eq!(done.settled, 2, "alice and bob, each once");
        // Alice: 10,000 - 1,000 + 4,000 (her double was never debited: the log's excess
        // stake is warned about, not taken).
        assert_eq!(l.balance("alice").await, Ok(13_000));
        // Bob: 10,000 - 500 - 100 - 500 + 2,000.
        assert_eq!(l.balance("bob").await, Ok(10_900));
        assert_eq!(done.rolled_back, 1, "carol's stake, never played");
        assert_eq!(l.balance("carol").await, Ok(10_000));
        let credits: Vec<String> = sqlx::query_scalar(
            "SELECT tx_id FROM wallet_ledger WHERE kind = 'credit' ORDER BY tx_id",
        )
        .fetch_all(&pool)
        .await
        .expect("credits");
        assert_eq!(
            credits,
            ["t:1:4:behind-settle@bob:credit", "t:1:4:settle:credit"]
        );
        assert_eq!(j.reconcile(&l, true).await, Ok(Reconciled::default()));
        assert_eq!(l.balance("bob").await, Ok(10_900));
    }

    #[tokio::test]
    async fn at_start_a_stake_whose_round_never_opened_comes_back_and_the_next_attempt_is_new() {
        let (_d, _pool, l, j) = setup().await;
        let first = stake(&j, &l, 7, "main", 2_500).await;
        // Live, the window may still be open: nothing happens.
        assert_eq!(j.reconcile(&l, false).await, Ok(Reconciled::default()));
        assert_eq!(l.balance("alice").await, Ok(7_500));
        let done = j.reconcile(&l, true).await.expect("reconcile");
        assert_eq!(done.rolled_back, 1);
        assert_eq!(l.balance("alice").await, Ok(10_000));
        // The round's number comes again after a restart: the next stake is a new id.
        let again = j.next_debit(7, 4, "main").await.expect("id");
        assert_ne!(again, first.tx);
        assert_eq!(again.line, "main.2");
    }
}
