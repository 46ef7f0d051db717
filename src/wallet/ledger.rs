//! The embedded wallet: balances in `players`, one `wallet_ledger` row per transaction id,
//! each change and its row in one `BEGIN IMMEDIATE` transaction on the table's database
//! (beside the event log, never in it: ARCHITECTURE.md invariant 9, "One writer of the event
//! log").

use super::{now_ms, TxKind, Wallet, WalletError, WalletRequest};
use futures::future::BoxFuture;
use sqlx::{Connection, Row, SqliteConnection, SqlitePool};

/// A player as `croupier player` lists them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Player {
    /// The id (the platform's player id, or one `player add` made).
    pub id: String,
    /// The name shown.
    pub name: String,
    /// The embedded wallet's balance, minor units.
    pub balance: i64,
}

/// The embedded SQLite wallet.
#[derive(Clone, Debug)]
pub struct Ledger {
    pool: SqlitePool,
}

fn db(e: sqlx::Error) -> WalletError {
    WalletError::Unavailable(format!("database: {e}"))
}

impl Ledger {
    /// The ledger on `pool` (migrated by `auth::open_pool`).
    pub fn new(pool: SqlitePool) -> Ledger {
        Ledger { pool }
    }

    /// The pool.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Adds a player with an opening balance (a `deposit` row `open:<id>`).
    pub async fn add_player(&self, id: &str, name: &str, balance: i64) -> Result<Player, String> {
        if id.is_empty()
            || id.len() > 64
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(format!(
                "player id {id:?}: 1-64 letters, digits, '-' or '_'"
            ));
        }
        if balance < 0 {
            return Err("the opening balance cannot be negative".into());
        }
        let mut conn = self.pool.acquire().await.map_err(|e| e.to_string())?;
        let mut tx = conn
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(|e| e.to_string())?;
        let exists = sqlx::query("SELECT 1 FROM players WHERE id = ?")
            .bind(id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| e.to_string())?;
        if exists.is_some() {
            return Err(format!("player {id:?} already exists"));
        }
        let now = now_ms();
        sqlx::query("INSERT INTO players (id, name, balance, created_ms) VALUES (?, ?, ?, ?)")
            .bind(id)
            .bind(name.trim())
            .bind(balance)
            .bind(now)
            .execute(&mut *tx)
            .await
            .map_err(|e| e.to_string())?;
        sqlx::query(
            "INSERT INTO wallet_ledger (tx_id, player_id, kind, amount, balance_after, at_ms) \
             VALUES (?, ?, 'deposit', ?, ?, ?)",
        )
        .bind(format!("open:{id}"))
        .bind(id)
        .bind(balance)
        .bind(balance)
        .bind(now)
        .execute(&mut *tx)
        .await
        .map_err(|e| e.to_string())?;
        tx.commit().await.map_err(|e| e.to_string())?;
        Ok(Player {
            id: id.to_string(),
            name: name.trim().to_string(),
            balance,
        })
    }

    /// A deposit (positive) or withdrawal (negative) by the operator, under `tx_id`
    /// (idempotent like every other request).
    pub async fn adjust(&self, tx_id: &str, player: &str, amount: i64) -> Result<i64, WalletError> {
        let kind = if amount >= 0 { "deposit" } else { "withdrawal" };
        self.apply(tx_id, player, kind, amount, None).await
    }

    /// The player, if known.
    pub async fn player(&self, id: &str) -> Result<Option<Player>, WalletError> {
        let row = sqlx::query("SELECT id, name, balance FROM players WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(db)?;
        Ok(row.map(|r| Player {
            id: r.get(0),
            name: r.get(1),
            balance: r.get(2),
        }))
    }

    /// Every player, by id.
    pub async fn players(&self) -> Result<Vec<Player>, WalletError> {
        let rows = sqlx::query("SELECT id, name, balance FROM players ORDER BY id")
            .fetch_all(&self.pool)
            .await
            .map_err(db)?;
        Ok(rows
            .into_iter()
            .map(|r| Player {
                id: r.get(0),
                name: r.get(1),
                balance: r.get(2),
            })
            .collect())
    }

    /// One request, once: a repeated id answers from its row; `delta` moves the balance.
    async fn apply(
        &self,
        tx_id: &str,
        player: &str,
        kind: &str,
        delta: i64,
        ref_tx: Option<&str>,
    ) -> Result<i64, WalletError> {
        let mut conn = self.pool.acquire().await.map_err(db)?;
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await.map_err(db)?;
        let result = apply_in(&mut tx, tx_id, player, kind, delta, ref_tx).await;
        match result {
            Ok((balance, true)) => {
                tx.commit().await.map_err(db)?;
                Ok(balance)
            }
            Ok((balance, false)) => Ok(balance),
            Err(e) => Err(e),
        }
    }
}

/// The balance after, and whether anything was written.
async fn apply_in(
    conn: &mut SqliteConnection,
    tx_id: &str,
    player: &str,
    kind: &str,
    delta: i64,
    ref_tx: Option<&str>,
) -> Result<(i64, bool), WalletError> {
    let balance: i64 = match sqlx::query("SELECT balance FROM players WHERE id = ?")
        .bind(player)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db)?
    {
        Some(r) => r.get(0),
        None => return Err(WalletError::UnknownPlayer(player.to_string())),
    };
    // A debit that was rolled back (before or after it arrived) stays undone, retried or not.
    if kind == "debit" {
        let rollback = format!("{}rollback", tx_id.trim_end_matches("debit"));
        let undone = sqlx::query("SELECT 1 FROM wallet_ledger WHERE tx_id = ?")
            .bind(&rollback)
            .fetch_optional(&mut *conn)
            .await
            .map_err(db)?;
        if undone.is_some() {
            return Err(WalletError::RolledBack(tx_id.to_string()));
        }
    }
    if let Some(row) =
        sqlx::query("SELECT player_id, kind, amount FROM wallet_ledger WHERE tx_id = ?")
            .bind(tx_id)
            .fetch_optional(&mut *conn)
            .await
            .map_err(db)?
    {
        let (p, k, a): (String, String, i64) = (row.get(0), row.get(1), row.get(2));
        // A rollback's amount is what it gave back, not what was asked: only the player and
        // kind identify it.
        if p == player && k == kind && (kind == "rollback" || a == delta.abs()) {
            return Ok((balance, false));
        }
        return Err(WalletError::Conflict(tx_id.to_string()));
    }
    let after = balance
        .checked_add(delta)
        .ok_or_else(|| WalletError::Unavailable("the balance would overflow".into()))?;
    if after < 0 {
        return Err(WalletError::InsufficientFunds {
            balance,
            amount: -delta,
        });
    }
    sqlx::query("UPDATE players SET balance = ? WHERE id = ?")
        .bind(after)
        .bind(player)
        .execute(&mut *conn)
        .await
        .map_err(db)?;
    sqlx::query(
        "INSERT INTO wallet_ledger (tx_id, player_id, kind, amount, ref_tx, balance_after, at_ms) \
         VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(tx_id)
    .bind(player)
    .bind(kind)
    .bind(delta.abs())
    .bind(ref_tx)
    .bind(after)
    .bind(now_ms())
    .execute(&mut *conn)
    .await
    .map_err(db)?;
    Ok((after, true))
}

impl Wallet for Ledger {
    fn balance<'a>(&'a self, player: &'a str) -> BoxFuture<'a, Result<i64, WalletError>> {
        Box::pin(async move {
            self.player(player)
                .await?
                .map(|p| p.balance)
                .ok_or_else(|| WalletError::UnknownPlayer(player.to_string()))
        })
    }

    fn debit<'a>(&'a self, req: &'a WalletRequest) -> BoxFuture<'a, Result<i64, WalletError>> {
        Box::pin(async move {
            if req.amount < 0 || req.tx.kind != TxKind::Debit {
                return Err(WalletError::Conflict(req.tx.to_string()));
            }
            self.apply(&req.tx.to_string(), &req.player, "debit", -req.amount, None)
                .await
        })
    }

    fn credit<'a>(&'a self, req: &'a WalletRequest) -> BoxFuture<'a, Result<i64, WalletError>> {
        Box::pin(async move {
            if req.amount < 0 || req.tx.kind != TxKind::Credit {
                return Err(WalletError::Conflict(req.tx.to_string()));
            }
            self.apply(&req.tx.to_string(), &req.player, "credit", req.amount, None)
                .await
        })
    }

    fn rollback<'a>(&'a self, req: &'a WalletRequest) -> BoxFuture<'a, Result<i64, WalletError>> {
        Box::pin(async move {
            let debit = req.tx.to_string();
            let id = req.tx.rollback().to_string();
            let mut conn = self.pool.acquire().await.map_err(db)?;
            let mut tx = conn.begin_with("BEGIN IMMEDIATE").await.map_err(db)?;
            // What the debit took, if it arrived: that (and only that) goes back.
            let taken: i64 = sqlx::query(
                "SELECT amount FROM wallet_ledger WHERE tx_id = ? AND kind = 'debit' AND player_id = ?",
            )
            .bind(&debit)
            .bind(&req.player)
            .fetch_optional(&mut *tx)
            .await
            .map_err(db)?
            .map_or(0, |r| r.get(0));
            let (balance, wrote) =
                apply_in(&mut tx, &id, &req.player, "rollback", taken, Some(&debit)).await?;
            if wrote {
                tx.commit().await.map_err(db)?;
            }
            Ok(balance)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wallet::TxId;

    async fn ledger() -> (tempfile::TempDir, Ledger) {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = crate::auth::open_pool(&dir.path().join("t.db"))
            .await
            .expect("pool");
        (dir, Ledger::new(pool))
    }

    fn req(line: &str, kind: TxKind, amount: i64) -> WalletRequest {
        WalletRequest {
            tx: TxId {
                table: "t".into(),
                round: 3,
                seat: 2,
                line: line.into(),
                kind,
            },
            player: "alice".into(),
            amount,
        }
    }

    #[tokio::test]
    async fn every_request_applies_once_whatever_the_repeats() {
        let (_d, l) = ledger().await;
        l.add_player("alice", "Alice", 50_000).await.expect("add");
        let bet = req("main.1", TxKind::Debit, 2_500);
        assert_eq!(l.debit(&bet).await, Ok(47_500));
        assert_eq!(
            l.debit(&bet).await,
            Ok(47_500),
            "a retried debit takes nothing"
        );
        let win = req("settle", TxKind::Credit, 5_000);
        assert_eq!(l.credit(&win).await, Ok(52_500));
        assert_eq!(
            l.credit(&win).await,
            Ok(52_500),
            "a duplicate callback pays nothing"
        );
        // The same id for another amount is a conflict, and changes nothing.
        let other = req("settle", TxKind::Credit, 9_000);
        assert!(matches!(
            l.credit(&other).await,
            Err(WalletError::Conflict(_))
        ));
        assert_eq!(l.balance("alice").await, Ok(52_500));
        let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM wallet_ledger")
            .fetch_one(l.pool())
            .await
            .expect("count");
        assert_eq!(rows, 3, "opening deposit, one debit, one credit");
    }

    #[tokio::test]
    async fn a_rollback_returns_what_was_taken_once_and_blocks_a_late_debit() {
        let (_d, l) = ledger().await;
        l.add_player("alice", "Alice", 10_000).await.expect("add");
        let bet = req("main.1", TxKind::Debit, 4_000);
        assert_eq!(l.debit(&bet).await, Ok(6_000));
        assert_eq!(l.rollback(&bet).await, Ok(10_000));
        assert_eq!(l.rollback(&bet).await, Ok(10_000), "twice is once");
        assert!(matches!(
            l.debit(&bet).await,
            Err(WalletError::RolledBack(_))
        ));
        // A rollback that arrives before its debit (the debit was lost in flight) gives
        // nothing back, and the debit arriving later is refused.
        let lost = req("main.2", TxKind::Debit, 1_000);
        assert_eq!(l.rollback(&lost).await, Ok(10_000));
        assert!(matches!(
            l.debit(&lost).await,
            Err(WalletError::RolledBack(_))
        ));
        assert_eq!(l.balance("alice").await, Ok(10_000));
    }

    #[tokio::test]
    async fn a_short_balance_refuses_the_debit_and_takes_nothing() {
        let (_d, l) = ledger().await;
        l.add_player("alice", "Alice", 1_000).await.expect("add");
        let bet = req("main.1", TxKind::Debit, 1_001);
        assert_eq!(
            l.debit(&bet).await,
            Err(WalletError::InsufficientFunds {
                balance: 1_000,
                amount: 1_001
            })
        );
        assert_eq!(l.balance("alice").await, Ok(1_000));
        // Refused, not recorded: the same id may be tried again once funds arrive.
        l.adjust("top-up-1", "alice", 500).await.expect("deposit");
        assert_eq!(l.debit(&bet).await, Ok(499));
        assert!(matches!(
            l.balance("bob").await,
            Err(WalletError::UnknownPlayer(_))
        ));
    }
}
