//! A player's own history at the table (`GET /api/play/history`): the last rounds they had
//! money in, each bet line with its stake, its return and the net, read from the table's
//! database — the journal says which seats and lines were the player's, the settlements
//! (written from the event log, rewritten when a dispute corrects a round) say how each
//! line ended. Also the session's net result for the reality check, from the wallet's
//! ledger since the session began.

use crate::wallet::Owner;
use serde::Serialize;
use sqlx::{Row, SqlitePool};
use std::collections::BTreeMap;

/// Why the history could not be read.
#[derive(Debug, thiserror::Error)]
#[error("the player's history could not be read: {0}")]
pub struct HistoryError(#[from] sqlx::Error);

/// One settled bet line of the player's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HistoryLine {
    /// The seat (a common draw's box) it was on.
    pub seat: u8,
    /// Whether the player bet behind the seat rather than on it.
    pub behind: bool,
    /// `main`, `insurance`, or the side bet's name.
    pub kind: String,
    /// Everything staked on it (doubles and splits included), minor units.
    pub staked: i64,
    /// Everything paid back on it (stake included; 0 when lost).
    pub returned: i64,
    /// `returned − staked`.
    pub net: i64,
}

/// One round the player had money in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HistoryRound {
    /// The round's number.
    pub round: u64,
    /// The round was cancelled and every stake returned.
    pub cancelled: bool,
    /// Whether the round is settled (its lines are known).
    pub settled: bool,
    /// Everything the player staked in it: its lines' stakes once settled; while it is in
    /// play (no lines yet), what the wallet took for it (the journal's committed debits).
    pub staked: i64,
    /// Its lines, in the order of the round's result.
    pub lines: Vec<HistoryLine>,
    /// The sum of the lines' nets.
    pub net: i64,
}

/// What `player` staked on `round` at `table` while it is in play: the wallet's committed
/// debits — the bets, and the splits, doubles and insurance taken as the hands went.
pub async fn round_staked(
    pool: &SqlitePool,
    table: &str,
    player: &str,
    round: i64,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COALESCE(SUM(amount), 0) FROM wallet_journal \
         WHERE table_id = ? AND player_id = ? AND round = ? \
         AND state IN ('committed', 'settled')",
    )
    .bind(table)
    .bind(player)
    .bind(round)
    .fetch_one(pool)
    .await
}

/// The player's last `limit` rounds at `table`, newest first.
pub async fn rounds(
    pool: &SqlitePool,
    table: &str,
    player: &str,
    limit: u32,
) -> Result<Vec<HistoryRound>, HistoryError> {
    // Which (round, seat) the player staked on, and as whom: the journal's lines name the
    // owner (the seat's player, a player behind it, a box's player).
    let rows = sqlx::query(
        "SELECT round, seat, line FROM wallet_journal \
         WHERE table_id = ? AND player_id = ? AND state IN ('committed', 'settled') \
         AND round IN (SELECT DISTINCT round FROM wallet_journal \
                       WHERE table_id = ? AND player_id = ? AND state IN ('committed', 'settled') \
                       ORDER BY round DESC LIMIT ?)",
    )
    .bind(table)
    .bind(player)
    .bind(table)
    .bind(player)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    // (round) -> {(seat, settlement player)}
    let mut places: BTreeMap<i64, Vec<(i64, String)>> = BTreeMap::new();
    for row in rows {
        let round: i64 = row.try_get(0)?;
        let seat: i64 = row.try_get(1)?;
        let line: String = row.try_get(2)?;
        let who = Owner::of_line(&line).player().unwrap_or("").to_string();
        let list = places.entry(round).or_default();
        if !list.contains(&(seat, who.clone())) {
            list.push((seat, who));
        }
    }
    let mut out = Vec::with_capacity(places.len());
    for (round, list) in places.into_iter().rev() {
        let head = sqlx::query(
            "SELECT settled_seq IS NOT NULL, COALESCE(json_extract(result, '$.cancelled'), 0) \
             FROM rounds WHERE table_id = ? AND round = ?",
        )
        .bind(table)
        .bind(round)
        .fetch_optional(pool)
        .await?;
        let (settled, cancelled) = match head {
            Some(r) => (r.try_get::<bool, _>(0)?, r.try_get::<i64, _>(1)? != 0),
            None => (false, false),
        };
        let mut lines = Vec::new();
        for (seat, who) in &list {
            let behind = !who.is_empty() && is_behind(pool, table, round, *seat, who).await?;
            let settled_lines = sqlx::query(
                "SELECT kind, staked, returned FROM settlements \
                 WHERE table_id = ? AND round = ? AND seat = ? AND player = ? ORDER BY line",
            )
            .bind(table)
            .bind(round)
            .bind(seat)
            .bind(who)
            .fetch_all(pool)
            .await?;
            for l in settled_lines {
                let staked: i64 = l.try_get(1)?;
                let returned: i64 = l.try_get(2)?;
                lines.push(HistoryLine {
                    seat: u8::try_from(*seat).unwrap_or(0),
                    behind,
                    kind: l.try_get(0)?,
                    staked,
                    returned,
                    net: returned - staked,
                });
            }
        }
        let staked = if settled {
            lines.iter().map(|l| l.staked).sum()
        } else {
            round_staked(pool, table, player, round).await?
        };
        out.push(HistoryRound {
            round: u64::try_from(round).unwrap_or(0),
            cancelled,
            settled,
            staked,
            net: lines.iter().map(|l| l.net).sum(),
            lines,
        });
    }
    Ok(out)
}

/// Whether `who`'s lines at (`round`, `seat`) were bets behind a seated player (their
/// journal lines say `behind-`), rather than a common draw's box.
async fn is_behind(
    pool: &SqlitePool,
    table: &str,
    round: i64,
    seat: i64,
    who: &str,
) -> Result<bool, HistoryError> {
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM wallet_journal WHERE table_id = ? AND round = ? AND seat = ? \
         AND player_id = ? AND line LIKE 'behind-%'",
    )
    .bind(table)
    .bind(round)
    .bind(seat)
    .bind(who)
    .fetch_one(pool)
    .await?;
    Ok(n > 0)
}

/// The session's net result: what the wallet paid the player back minus what it took,
/// since `since_ms` (deposits and withdrawals are not play).
pub async fn session_net(
    pool: &SqlitePool,
    player: &str,
    since_ms: i64,
) -> Result<i64, HistoryError> {
    let net: i64 = sqlx::query_scalar(
        "SELECT COALESCE(SUM(CASE kind WHEN 'debit' THEN -amount \
                                       WHEN 'credit' THEN amount \
                                       WHEN 'rollback' THEN amount ELSE 0 END), 0) \
         FROM wallet_ledger WHERE player_id = ? AND at_ms >= ?",
    )
    .bind(player)
    .bind(since_ms)
    .fetch_one(pool)
    .await?;
    Ok(net)
}
