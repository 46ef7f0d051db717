//! Players' launch sessions: a random token (32 bytes, hex) handed to the player in a
//! launch link (`/play#t=TOKEN`, in the fragment so it reaches no server log), of which the
//! database keeps only the sha256. Separate from staff accounts: a player token opens the
//! players' API for that player at that table and nothing else.

use sha2::{Digest, Sha256};
use sqlx::{Row, SqlitePool};

/// Why a session was not opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The player is disabled (`croupier player enable` lifts it).
    #[error("player {0:?} is disabled")]
    Disabled(String),
    /// The database or the random number generator failed.
    #[error("{0}")]
    Failed(String),
}

/// Opens a session for `player` at `table` lasting `hours`; answers the token. A disabled
/// player gets none.
pub async fn open(
    pool: &SqlitePool,
    player: &str,
    table: &str,
    hours: u64,
) -> Result<String, OpenError> {
    if is_disabled(pool, player).await.map_err(OpenError::Failed)? == Some(true) {
        return Err(OpenError::Disabled(player.to_string()));
    }
    let mut raw = [0u8; 32];
    getrandom::fill(&mut raw).map_err(|e| OpenError::Failed(format!("random: {e}")))?;
    let token = hex::encode(raw);
    let now = crate::wallet::now_ms();
    let life = i64::try_from(hours.saturating_mul(3_600_000)).unwrap_or(i64::MAX);
    sqlx::query(
        "INSERT INTO player_sessions (token_hash, player_id, table_id, created_ms, expires_ms) \
         VALUES (?, ?, ?, ?, ?)",
    )
    .bind(Sha256::digest(token.as_bytes()).to_vec())
    .bind(player)
    .bind(table)
    .bind(now)
    .bind(now.saturating_add(life))
    .execute(pool)
    .await
    .map_err(|e| OpenError::Failed(e.to_string()))?;
    Ok(token)
}

/// The player a live token belongs to at `table`: not expired, not revoked, its player
/// not disabled. Asked on every request, so a revocation holds from the next one.
pub async fn player(pool: &SqlitePool, token: &str, table: &str) -> Option<String> {
    let row = sqlx::query(
        "SELECT s.player_id FROM player_sessions s JOIN players p ON p.id = s.player_id \
         WHERE s.token_hash = ? AND s.table_id = ? AND s.expires_ms > ? \
         AND s.revoked_ms IS NULL AND p.disabled_ms IS NULL",
    )
    .bind(Sha256::digest(token.as_bytes()).to_vec())
    .bind(table)
    .bind(crate::wallet::now_ms())
    .fetch_optional(pool)
    .await
    .ok()??;
    row.try_get(0).ok()
}

/// A session as the service knows it in memory: the sha256 of its token (what the
/// database keeps), never the token.
pub type SessionKey = [u8; 32];

/// The key of the session `token` opens.
pub fn key(token: &str) -> SessionKey {
    Sha256::digest(token.as_bytes()).into()
}

/// Whether the session `key` is live at `table`: not expired, not revoked, its player
/// not disabled. A database that does not answer counts as ended: no money moves on a
/// session nobody can vouch for.
pub async fn is_live(pool: &SqlitePool, key: &SessionKey, table: &str) -> bool {
    sqlx::query_scalar::<_, i64>(
        "SELECT 1 FROM player_sessions s JOIN players p ON p.id = s.player_id \
         WHERE s.token_hash = ? AND s.table_id = ? AND s.expires_ms > ? \
         AND s.revoked_ms IS NULL AND p.disabled_ms IS NULL",
    )
    .bind(key.as_slice())
    .bind(table)
    .bind(crate::wallet::now_ms())
    .fetch_optional(pool)
    .await
    .is_ok_and(|row| row.is_some())
}

/// How a player's game session at a table ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// Every launch link of theirs here was revoked (the last one they opened was).
    Revoked,
    /// Their last launch link here ran out (`[play] launch_hours`).
    Expired,
    /// The player is disabled.
    Disabled,
    /// Their page was not heard from for `[play] away_after_rounds` rounds (the
    /// presence's verdict, `play::presence`; never this module's).
    Away,
}

/// Whether `player` has no live session at `table` any more, and why (`None`: one is
/// live). A database that does not answer is an error: nothing is decided on it.
pub async fn ended(pool: &SqlitePool, player: &str, table: &str) -> Result<Option<Ended>, String> {
    if is_disabled(pool, player).await? == Some(true) {
        return Ok(Some(Ended::Disabled));
    }
    let now = crate::wallet::now_ms();
    // The live one if any, else the one that ended last: its end is the game session's.
    let row: Option<(Option<i64>, i64)> = sqlx::query_as(
        "SELECT revoked_ms, expires_ms FROM player_sessions WHERE player_id = ? AND table_id = ? \
         ORDER BY (revoked_ms IS NULL AND expires_ms > ?) DESC, \
         MIN(COALESCE(revoked_ms, expires_ms), expires_ms) DESC, created_ms DESC LIMIT 1",
    )
    .bind(player)
    .bind(table)
    .bind(now)
    .fetch_optional(pool)
    .await
    .map_err(|e| e.to_string())?;
    Ok(match row {
        Some((None, expires)) if expires > now => None,
        Some((Some(revoked), expires)) if revoked < expires => Some(Ended::Revoked),
        // Expired, or no session here at all (a seat kept from another table's links).
        _ => Some(Ended::Expired),
    })
}

/// When the session of `token` began and when it ends (ms since the epoch), for the
/// player's session clock and reality check.
pub async fn times(pool: &SqlitePool, token: &str) -> Option<(i64, i64)> {
    let row =
        sqlx::query("SELECT created_ms, expires_ms FROM player_sessions WHERE token_hash = ?")
            .bind(Sha256::digest(token.as_bytes()).to_vec())
            .fetch_optional(pool)
            .await
            .ok()??;
    Some((row.try_get(0).ok()?, row.try_get(1).ok()?))
}

/// The token in `link_or_token`: a launch link (`…/play#t=TOKEN`) or the bare token.
pub fn token_of(link_or_token: &str) -> &str {
    let s = link_or_token.trim();
    s.rsplit_once("#t=").map_or(s, |(_, t)| t)
}

/// Revokes one launch token (a link or the bare token, at any table of this database);
/// answers whether a live one was revoked.
pub async fn revoke_token(pool: &SqlitePool, link_or_token: &str) -> Result<bool, String> {
    let token = token_of(link_or_token);
    let done = sqlx::query(
        "UPDATE player_sessions SET revoked_ms = ? WHERE token_hash = ? AND revoked_ms IS NULL",
    )
    .bind(crate::wallet::now_ms())
    .bind(Sha256::digest(token.as_bytes()).to_vec())
    .execute(pool)
    .await
    .map_err(|e| e.to_string())?;
    Ok(done.rows_affected() > 0)
}

/// Revokes every live session of `player`; answers how many.
pub async fn revoke_player(pool: &SqlitePool, player: &str) -> Result<u64, String> {
    let now = crate::wallet::now_ms();
    let done = sqlx::query(
        "UPDATE player_sessions SET revoked_ms = ? \
         WHERE player_id = ? AND revoked_ms IS NULL AND expires_ms > ?",
    )
    .bind(now)
    .bind(player)
    .bind(now)
    .execute(pool)
    .await
    .map_err(|e| e.to_string())?;
    Ok(done.rows_affected())
}

/// Disables `player` (every session revoked, no new one opened) or enables them again;
/// answers the sessions revoked. `Err` for an unknown player.
pub async fn set_disabled(pool: &SqlitePool, player: &str, disabled: bool) -> Result<u64, String> {
    let now = crate::wallet::now_ms();
    // Disabling keeps the first time it was disabled; enabling clears it.
    let done = sqlx::query(
        "UPDATE players SET disabled_ms = CASE WHEN ? THEN COALESCE(disabled_ms, ?) END \
         WHERE id = ?",
    )
    .bind(disabled)
    .bind(now)
    .bind(player)
    .execute(pool)
    .await
    .map_err(|e| e.to_string())?;
    if done.rows_affected() == 0 {
        return Err(format!("unknown player {player:?}"));
    }
    if disabled {
        revoke_player(pool, player).await
    } else {
        Ok(0)
    }
}

/// Whether `player` is disabled (`None`: no such player).
pub async fn is_disabled(pool: &SqlitePool, player: &str) -> Result<Option<bool>, String> {
    let row: Option<Option<i64>> =
        sqlx::query_scalar("SELECT disabled_ms FROM players WHERE id = ?")
            .bind(player)
            .fetch_optional(pool)
            .await
            .map_err(|e| e.to_string())?;
    Ok(row.map(|d| d.is_some()))
}

/// The launch link for `token` under `base` (`http://host:port`).
pub fn link(base: &str, token: &str) -> String {
    format!("{}/play#t={token}", base.trim_end_matches('/'))
}

/// Makes a new platform credential (replacing the last): the operator's platform sends it
/// as `Authorization: Bearer KEY` to open players' sessions (`POST /api/play/sessions`).
/// Only its sha256 is stored (`secrets`, name `platform_key`).
pub async fn new_platform_key(pool: &SqlitePool) -> Result<String, String> {
    let mut raw = [0u8; 32];
    getrandom::fill(&mut raw).map_err(|e| format!("random: {e}"))?;
    let key = format!("plat_{}", hex::encode(raw));
    sqlx::query("INSERT OR REPLACE INTO secrets (name, value) VALUES ('platform_key', ?)")
        .bind(Sha256::digest(key.as_bytes()).to_vec())
        .execute(pool)
        .await
        .map_err(|e| e.to_string())?;
    Ok(key)
}

/// Whether `key` is the platform credential.
pub async fn is_platform(pool: &SqlitePool, key: &str) -> bool {
    let stored: Option<Vec<u8>> =
        sqlx::query_scalar("SELECT value FROM secrets WHERE name = 'platform_key'")
            .fetch_optional(pool)
            .await
            .ok()
            .flatten();
    let given = Sha256::digest(key.as_bytes());
    // Compared as hashes: equal length, and the stored value is not secret-equivalent.
    stored.is_some_and(|s| s.as_slice() == given.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sets `column` of the session of `token` (its end, written as the test wants it).
    async fn set(pool: &SqlitePool, token: &str, column: &str, ms: i64) {
        sqlx::query(&format!(
            "UPDATE player_sessions SET {column} = ? WHERE token_hash = ?"
        ))
        .bind(ms)
        .bind(key(token).as_slice())
        .execute(pool)
        .await
        .expect("update");
    }

    #[tokio::test]
    async fn a_players_game_session_ends_with_their_last_link_and_says_how() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = crate::auth::open_pool(&dir.path().join("t.db"))
            .await
            .expect("pool");
        let ledger = crate::wallet::ledger::Ledger::new(pool.clone());
        ledger.add_player("ann", "Ann", 0).await.expect("add");
        let first = open(&pool, "ann", "t1", 12).await.expect("open");
        let second = open(&pool, "ann", "t1", 12).await.expect("open");
        assert!(is_live(&pool, &key(&first), "t1").await);
        assert!(!is_live(&pool, &key(&first), "t2").await, "another table's");
        assert_eq!(ended(&pool, "ann", "t1").await, Ok(None));
        // One link of two revoked: her game session goes on; that session does not.
        assert!(revoke_token(&pool, &first).await.expect("revoke"));
        assert!(!is_live(&pool, &key(&first), "t1").await);
        assert!(is_live(&pool, &key(&second), "t1").await);
        assert_eq!(ended(&pool, "ann", "t1").await, Ok(None));
        // Then the other ran out, after the revocation: it ran out.
        set(&pool, &first, "revoked_ms", 1_000).await;
        set(&pool, &second, "expires_ms", 2_000).await;
        assert_eq!(ended(&pool, "ann", "t1").await, Ok(Some(Ended::Expired)));
        // A new one, revoked with every other live one: revoked, the last end.
        open(&pool, "ann", "t1", 12).await.expect("open");
        assert_eq!(ended(&pool, "ann", "t1").await, Ok(None));
        assert_eq!(revoke_player(&pool, "ann").await, Ok(1));
        assert_eq!(ended(&pool, "ann", "t1").await, Ok(Some(Ended::Revoked)));
        // Disabled outranks both; enabled again, her links stay ended.
        set_disabled(&pool, "ann", true).await.expect("disable");
        assert_eq!(ended(&pool, "ann", "t1").await, Ok(Some(Ended::Disabled)));
        set_disabled(&pool, "ann", false).await.expect("enable");
        assert_eq!(ended(&pool, "ann", "t1").await, Ok(Some(Ended::Revoked)));
        assert_eq!(
            ended(&pool, "ann", "t2").await,
            Ok(Some(Ended::Expired)),
            "none at t2"
        );
    }
}
