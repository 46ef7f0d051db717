//! Players' launch sessions: a random token (32 bytes, hex) handed to the player in a
//! launch link (`/play#t=TOKEN`, in the fragment so it reaches no server log), of which the
//! database keeps only the sha256. Separate from staff accounts: a player token opens the
//! players' API for that player at that table and nothing else.

use sha2::{Digest, Sha256};
use sqlx::{Row, SqlitePool};

/// Opens a session for `player` at `table` lasting `hours`; answers the token.
pub async fn open(
    pool: &SqlitePool,
    player: &str,
    table: &str,
    hours: u64,
) -> Result<String, String> {
    let mut raw = [0u8; 32];
    getrandom::fill(&mut raw).map_err(|e| format!("random: {e}"))?;
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
    .map_err(|e| e.to_string())?;
    Ok(token)
}

/// The player a live token belongs to at `table`.
pub async fn player(pool: &SqlitePool, token: &str, table: &str) -> Option<String> {
    let row = sqlx::query(
        "SELECT player_id FROM player_sessions WHERE token_hash = ? AND table_id = ? AND expires_ms > ?",
    )
    .bind(Sha256::digest(token.as_bytes()).to_vec())
    .bind(table)
    .bind(crate::wallet::now_ms())
    .fetch_optional(pool)
    .await
    .ok()??;
    row.try_get(0).ok()
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
