//! Players' dispute tokens: a player whose bet was accepted gets a token for that table,
//! round and seat, and presents it to raise a dispute about that round without an account.
//!
//! token = hex(HMAC-SHA256(key, "croupier-dispute-v1" 0 table 0 round (8 bytes BE) seat)),
//! with a 256-bit key generated from the OS random number generator at the database's
//! first start and kept in the `secrets` table. Tokens cannot be forged without the key, are
//! bound to one (table, round, seat), and verify with a constant-time comparison. They do not
//! expire by themselves: the dispute endpoint decides how long a round may be disputed.

use super::{random, AuthError};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use sqlx::SqlitePool;

type HmacSha256 = Hmac<Sha256>;

/// The key's name in `secrets`.
const KEY_NAME: &str = "player_token";

/// Loads the key, creating it on first use.
pub async fn key(pool: &SqlitePool) -> Result<[u8; 32], AuthError> {
    let fresh = random::<32>()?;
    sqlx::query("INSERT OR IGNORE INTO secrets (name, value) VALUES (?, ?)")
        .bind(KEY_NAME)
        .bind(&fresh[..])
        .execute(pool)
        .await?;
    let stored: Vec<u8> = sqlx::query_scalar("SELECT value FROM secrets WHERE name = ?")
        .bind(KEY_NAME)
        .fetch_one(pool)
        .await?;
    stored.try_into().map_err(|_| {
        AuthError::Invalid("the player-token key in the database is not 32 bytes".into())
    })
}

fn mac(key: &[u8; 32], table: &str, round: u64, seat: u8) -> HmacSha256 {
    // HMAC zero-pads a key shorter than the hash's block (64 bytes), so padding it here
    // gives the same MAC through the infallible fixed-size constructor.
    let mut block = [0u8; 64];
    block[..32].copy_from_slice(key);
    let mut m = <HmacSha256 as hmac::digest::KeyInit>::new(&block.into());
    m.update(b"croupier-dispute-v1\0");
    m.update(table.as_bytes());
    m.update(&[0]);
    m.update(&round.to_be_bytes());
    m.update(&[seat]);
    m
}

/// The token for (`table`, `round`, `seat`).
pub fn issue(key: &[u8; 32], table: &str, round: u64, seat: u8) -> String {
    hex::encode(mac(key, table, round, seat).finalize().into_bytes())
}

/// Whether `token` is the one issued for (`table`, `round`, `seat`) (constant time).
pub fn verify(key: &[u8; 32], table: &str, round: u64, seat: u8, token: &str) -> bool {
    match hex::decode(token.trim()) {
        Ok(bytes) => mac(key, table, round, seat).verify_slice(&bytes).is_ok(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_bound_to_its_table_round_and_seat() {
        let key = [7u8; 32];
        let t = issue(&key, "table-1", 12, 3);
        assert_eq!(t.len(), 64);
        assert!(verify(&key, "table-1", 12, 3, &t));
        assert!(!verify(&key, "table-1", 12, 4, &t));
        assert!(!verify(&key, "table-1", 13, 3, &t));
        assert!(!verify(&key, "table-2", 12, 3, &t));
        assert!(!verify(&[8u8; 32], "table-1", 12, 3, &t));
        assert!(!verify(&key, "table-1", 12, 3, "zz"));
    }
}
