//! The pit page's supervisors, in the floor's PostgreSQL: accounts (argon2id through
//! `auth::secret`, as at the table), the table's lockout rule (3 consecutive failures
//! lock an account for 300 s) with the table's throttles ([`Gate`]), sessions (12 h at most, 60 min idle; only sha256(token)
//! stored) and the audit rows.

use crate::auth::secret;
use crate::auth::throttle::Throttle;
use sha2::{Digest, Sha256};
use sqlx::postgres::PgPool;
use sqlx::Row;
use std::net::IpAddr;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Consecutive failures that lock an account (the table's default).
pub const MAX_FAILED: i32 = 3;
/// How long a lock lasts.
pub const LOCKOUT_MS: i64 = 300_000;
/// A session's absolute lifetime.
pub const SESSION_MS: i64 = 12 * 3_600_000;
/// A session ends after this long without a request.
pub const IDLE_MS: i64 = 60 * 60_000;

/// A login or account change failed.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    /// Unknown badge or wrong secret (not told apart).
    #[error("bad badge or secret")]
    BadCredentials,
    /// Locked after repeated failures.
    #[error("the account is locked for {0} s after repeated failures")]
    Locked(i64),
    /// Too many failed logins from this address, on any badges.
    #[error("too many failed logins from this address; try again in {0} s")]
    Throttled(i64),
    /// The secret breaks the policy.
    #[error("{0}")]
    Policy(String),
    /// The database.
    #[error("PostgreSQL: {0}")]
    Sql(#[from] sqlx::Error),
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Appends an audit row.
pub async fn audit(
    pool: &PgPool,
    actor: &str,
    action: &str,
    detail: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO floor_audit (at_ms, actor, action, detail) VALUES ($1, $2, $3, $4)")
        .bind(now_ms())
        .bind(actor)
        .bind(action)
        .bind(detail)
        .execute(pool)
        .await?;
    Ok(())
}

/// Adds (or replaces the secret of) supervisor `badge`.
pub async fn add(
    pool: &PgPool,
    badge: &str,
    name: &str,
    secret_text: &str,
) -> Result<(), AccountError> {
    secret::check_policy(secret_text).map_err(|e| AccountError::Policy(e.to_string()))?;
    let text = secret_text.to_string();
    let phc = tokio::task::spawn_blocking(move || secret::hash(&text))
        .await
        .map_err(|e| AccountError::Policy(e.to_string()))?
        .map_err(|e| AccountError::Policy(e.to_string()))?;
    sqlx::query(
        "INSERT INTO floor_accounts (badge, name, phc, created_ms) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (badge) DO UPDATE SET name = excluded.name, phc = excluded.phc, \
         failed = 0, locked_until_ms = 0",
    )
    .bind(badge)
    .bind(name)
    .bind(&phc)
    .bind(now_ms())
    .execute(pool)
    .await?;
    audit(pool, "cli", "account_set", badge).await?;
    Ok(())
}

/// The name `badge` was given (`croupier floor user add --name`), if the account exists:
/// the pit page greets people by name, not by badge number.
pub async fn name(pool: &PgPool, badge: &str) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar("SELECT name FROM floor_accounts WHERE badge = $1")
        .bind(badge)
        .fetch_optional(pool)
        .await
}

fn token_hash(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// The login throttles of the pit page, in memory, as the table's (`auth::throttle`):
/// per badge and address, per badge across addresses (unless the address logged into it
/// since the start), per address; unknown badges lock like real ones, so the answers never
/// tell which badges exist (issue #32 item 10).
#[derive(Debug, Default)]
pub struct Gate {
    throttle: Mutex<Throttle>,
    started: OnceLock<Instant>,
}

impl Gate {
    fn now(&self) -> Duration {
        self.started.get_or_init(Instant::now).elapsed()
    }

    fn throttle(&self) -> std::sync::MutexGuard<'_, Throttle> {
        // A poisoned lock only means a panic elsewhere mid-update: the counts stay usable.
        self.throttle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn seconds(left: Duration) -> i64 {
    i64::try_from(left.as_secs().max(1)).unwrap_or(i64::MAX)
}

/// Checks `badge`'s secret from `ip`; on success a new session token. Every attempt is
/// audited. A failure answers [`AccountError::BadCredentials`]; from the attempt after the
/// one that locks (the badge's stored lockout, or the throttles of `gate`), known and
/// unknown badges alike answer [`AccountError::Locked`], and an address with too many
/// failures on any badges [`AccountError::Throttled`].
pub async fn login(
    pool: &PgPool,
    gate: &Gate,
    ip: Option<IpAddr>,
    badge: &str,
    secret_text: &str,
) -> Result<String, AccountError> {
    let now = now_ms();
    let mono = gate.now();
    let lockout = Duration::from_millis(LOCKOUT_MS.unsigned_abs());
    let blocked = gate.throttle().peer_blocked(ip, mono);
    if let Some(left) = blocked {
        audit(
            pool,
            badge,
            "login_refused",
            "too many failures from this address",
        )
        .await?;
        return Err(AccountError::Throttled(seconds(left)));
    }
    let row = sqlx::query(
        "SELECT id, phc, failed, locked_until_ms, disabled FROM floor_accounts WHERE badge = $1",
    )
    .bind(badge)
    .fetch_optional(pool)
    .await?;
    // This process's own locks first, for known and unknown badges alike.
    let locked = gate.throttle().locked_for(badge, ip, mono);
    if let Some(left) = locked {
        audit(pool, badge, "login_refused", "locked").await?;
        return Err(AccountError::Locked(seconds(left)));
    }
    let failed = |ok: bool| {
        if !ok {
            let mut t = gate.throttle();
            t.peer_failed(ip, mono, lockout);
            t.failed(badge, ip, mono, MAX_FAILED.unsigned_abs(), lockout);
        }
    };
    let Some(row) = row else {
        // As slow as a known badge's check.
        let text = secret_text.to_string();
        let _ = tokio::task::spawn_blocking(move || secret::verify(&text, secret::decoy())).await;
        failed(false);
        audit(pool, badge, "login_failed", "unknown badge").await?;
        return Err(AccountError::BadCredentials);
    };
    let id: i64 = row.try_get("id")?;
    let locked_until: i64 = row.try_get("locked_until_ms")?;
    // The stored lockout (it outlives a restart) holds where the throttles say it applies.
    let applies = gate.throttle().lock_applies(badge, ip, mono);
    if locked_until > now && applies {
        audit(pool, badge, "login_refused", "locked").await?;
        return Err(AccountError::Locked((locked_until - now + 999) / 1000));
    }
    let phc: String = row.try_get("phc")?;
    let disabled: bool = row.try_get("disabled")?;
    let text = secret_text.to_string();
    let ok = tokio::task::spawn_blocking(move || secret::verify(&text, &phc))
        .await
        .unwrap_or(false);
    if !ok || disabled {
        failed(false);
        let failed: i32 = row.try_get::<i32, _>("failed")? + 1;
        let lock = if failed >= MAX_FAILED {
            now + LOCKOUT_MS
        } else {
            0
        };
        sqlx::query("UPDATE floor_accounts SET failed = $2, locked_until_ms = $3 WHERE id = $1")
            .bind(id)
            .bind(if lock > 0 { 0 } else { failed })
            .bind(lock)
            .execute(pool)
            .await?;
        let what = if disabled { "disabled" } else { "bad secret" };
        audit(pool, badge, "login_failed", what).await?;
        if lock > 0 {
            audit(pool, badge, "locked", &format!("{MAX_FAILED} failures")).await?;
        }
        return Err(AccountError::BadCredentials);
    }
    gate.throttle().succeeded(badge, ip);
    let mut raw = [0u8; 32];
    getrandom::fill(&mut raw).map_err(|e| AccountError::Policy(e.to_string()))?;
    let token = hex::encode(raw);
    let mut tx = pool.begin().await?;
    sqlx::query("UPDATE floor_accounts SET failed = 0, locked_until_ms = 0 WHERE id = $1")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO floor_sessions (token_hash, account_id, created_ms, seen_ms) VALUES ($1, $2, $3, $3)",
    )
    .bind(token_hash(&token))
    .bind(id)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    audit(pool, badge, "login", "pit page").await?;
    Ok(token)
}

/// The badge of a live session (its idle clock restarted), or `None`.
pub async fn session(pool: &PgPool, token: &str) -> Result<Option<String>, sqlx::Error> {
    let now = now_ms();
    let badge: Option<String> = sqlx::query_scalar(
        "UPDATE floor_sessions s SET seen_ms = $2 FROM floor_accounts a \
         WHERE s.token_hash = $1 AND a.id = s.account_id AND NOT s.ended AND NOT a.disabled \
         AND s.created_ms > $2 - $3 AND s.seen_ms > $2 - $4 RETURNING a.badge",
    )
    .bind(token_hash(token))
    .bind(now)
    .bind(SESSION_MS)
    .bind(IDLE_MS)
    .fetch_optional(pool)
    .await?;
    Ok(badge)
}

/// Ends a session.
pub async fn logout(pool: &PgPool, token: &str, badge: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE floor_sessions SET ended = true WHERE token_hash = $1")
        .bind(token_hash(token))
        .execute(pool)
        .await?;
    audit(pool, badge, "logout", "pit page").await
}
