//! The `users` table. Every change is written with its audit row in one `BEGIN IMMEDIATE`
//! transaction: a change without its audit row never commits.

use super::{now_ms, secret, AuthError, Role};
use crate::store::audit::{self, actions, AuditEntry};
use serde::Serialize;
use sqlx::{Connection, Row, SqliteConnection, SqlitePool};

/// One account (never its secret or hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct User {
    /// Badge id: letters, digits, `-`, `_` (1–32).
    pub badge: String,
    /// The person's name.
    pub name: String,
    /// The role.
    pub role: Role,
    /// A disabled account cannot log in and has no sessions.
    pub disabled: bool,
    /// Consecutive failed logins.
    pub failed_attempts: u32,
    /// Locked until (Unix ms), if locked now or recently.
    pub locked_until_ms: Option<i64>,
    /// When it was created (RFC 3339).
    pub created_at: String,
}

impl User {
    /// Whether the account is locked at `now_ms`.
    pub fn locked_at(&self, now_ms: i64) -> bool {
        self.locked_until_ms.is_some_and(|t| t > now_ms)
    }
}

/// A user with the stored hash (for logins only).
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    pub id: i64,
    pub user: User,
    pub secret_hash: String,
}

fn check_badge(badge: &str) -> Result<(), AuthError> {
    let ok = (1..=32).contains(&badge.len())
        && badge
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(AuthError::Invalid(format!(
            "a badge id is 1 to 32 letters, digits, '-' or '_': {badge:?}"
        )))
    }
}

fn check_name(name: &str) -> Result<(), AuthError> {
    let n = name.trim().chars().count();
    if (1..=64).contains(&n) && !name.chars().any(char::is_control) {
        Ok(())
    } else {
        Err(AuthError::Invalid(
            "a name has 1 to 64 printable characters".into(),
        ))
    }
}

/// Hashes off the async threads (argon2 is slow on purpose).
async fn hash(secret_text: &str) -> Result<String, AuthError> {
    let s = secret_text.to_string();
    tokio::task::spawn_blocking(move || secret::hash(&s))
        .await
        .map_err(|e| AuthError::Hash(e.to_string()))?
}

fn decode(row: &sqlx::sqlite::SqliteRow) -> Result<Stored, AuthError> {
    let role: String = row.try_get("role")?;
    Ok(Stored {
        id: row.try_get("id")?,
        secret_hash: row.try_get("secret_hash")?,
        user: User {
            badge: row.try_get("badge")?,
            name: row.try_get("name")?,
            role: role.parse()?,
            disabled: row.try_get::<i64, _>("disabled")? != 0,
            failed_attempts: u32::try_from(row.try_get::<i64, _>("failed_attempts")?)
                .unwrap_or(u32::MAX),
            locked_until_ms: row.try_get("locked_until_ms")?,
            created_at: row.try_get("created_at")?,
        },
    })
}

const SELECT: &str = "SELECT id, badge, name, role, secret_hash, disabled, failed_attempts, \
                      locked_until_ms, created_at FROM users";

/// The user with `badge`, with the stored hash.
pub(crate) async fn find(
    conn: &mut SqliteConnection,
    badge: &str,
) -> Result<Option<Stored>, AuthError> {
    let row = sqlx::query(&format!("{SELECT} WHERE badge = ?"))
        .bind(badge)
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(decode).transpose()
}

/// The user with `badge`, or [`AuthError::NoSuchUser`]: for a change to an account that
/// must be there.
async fn existing(conn: &mut SqliteConnection, badge: &str) -> Result<Stored, AuthError> {
    find(conn, badge)
        .await?
        .ok_or_else(|| AuthError::NoSuchUser(badge.to_string()))
}

/// Every user, by badge.
pub async fn list(pool: &SqlitePool) -> Result<Vec<User>, AuthError> {
    let rows = sqlx::query(&format!("{SELECT} ORDER BY badge"))
        .fetch_all(pool)
        .await?;
    rows.iter().map(|r| decode(r).map(|s| s.user)).collect()
}

/// Adds a user; `actor` is recorded in the audit log.
pub async fn add(
    pool: &SqlitePool,
    actor: &str,
    badge: &str,
    name: &str,
    role: Role,
    secret_text: &str,
) -> Result<User, AuthError> {
    add_as(
        pool,
        actor,
        actions::USER_ADD,
        badge,
        name,
        role,
        secret_text,
    )
    .await
}

async fn add_as(
    pool: &SqlitePool,
    actor: &str,
    action: &str,
    badge: &str,
    name: &str,
    role: Role,
    secret_text: &str,
) -> Result<User, AuthError> {
    check_badge(badge)?;
    check_name(name)?;
    secret::check_policy(secret_text)?;
    let phc = hash(secret_text).await?;
    let mut conn = pool.acquire().await?;
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
    if find(&mut tx, badge).await?.is_some() {
        return Err(AuthError::Invalid(format!(
            "badge {badge:?} already exists"
        )));
    }
    let at = audit::now_rfc3339();
    sqlx::query(
        "INSERT INTO users (badge, name, role, secret_hash, created_at, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(badge)
    .bind(name.trim())
    .bind(role.as_str())
    .bind(&phc)
    .bind(&at)
    .bind(&at)
    .execute(&mut *tx)
    .await?;
    let value = serde_json::json!({"name": name.trim(), "role": role, "disabled": false});
    audit::append(
        &mut tx,
        &AuditEntry::new(actor, action)
            .subject(badge)
            .values(None, Some(value.to_string())),
    )
    .await?;
    let stored = existing(&mut tx, badge).await?;
    tx.commit().await?;
    tracing::info!(badge, role = %role, actor, "user added");
    Ok(stored.user)
}

/// Disables (`disabled = true`) or re-enables a user; disabling ends their sessions.
pub async fn set_disabled(
    pool: &SqlitePool,
    actor: &str,
    badge: &str,
    disabled: bool,
    reason: &str,
) -> Result<User, AuthError> {
    let mut conn = pool.acquire().await?;
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
    let old = existing(&mut tx, badge).await?;
    let word = |d: bool| if d { "disabled" } else { "enabled" }.to_string();
    sqlx::query("UPDATE users SET disabled = ?, updated_at = ? WHERE id = ?")
        .bind(i64::from(disabled))
        .bind(audit::now_rfc3339())
        .bind(old.id)
        .execute(&mut *tx)
        .await?;
    let ended = if disabled {
        end_sessions(&mut tx, old.id).await?
    } else {
        0
    };
    audit::append(
        &mut tx,
        &AuditEntry::new(
            actor,
            if disabled {
                actions::USER_DISABLE
            } else {
                actions::USER_ENABLE
            },
        )
        .subject(badge)
        .values(Some(word(old.user.disabled)), Some(word(disabled)))
        .reason(reason)
        .detail(serde_json::json!({"sessions_ended": ended})),
    )
    .await?;
    tx.commit().await?;
    tracing::info!(badge, disabled, actor, "user {}", word(disabled));
    Ok(User {
        disabled,
        ..old.user
    })
}

/// Gives a user a new secret; also unlocks the account and ends their sessions.
pub async fn passwd(
    pool: &SqlitePool,
    actor: &str,
    badge: &str,
    secret_text: &str,
    reason: &str,
) -> Result<(), AuthError> {
    secret::check_policy(secret_text)?;
    let phc = hash(secret_text).await?;
    let mut conn = pool.acquire().await?;
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
    let old = existing(&mut tx, badge).await?;
    sqlx::query(
        "UPDATE users SET secret_hash = ?, failed_attempts = 0, locked_until_ms = NULL, \
         updated_at = ? WHERE id = ?",
    )
    .bind(&phc)
    .bind(audit::now_rfc3339())
    .bind(old.id)
    .execute(&mut *tx)
    .await?;
    let ended = end_sessions(&mut tx, old.id).await?;
    // The secret and its hash never go into the audit log: old/new say only what changed.
    audit::append(
        &mut tx,
        &AuditEntry::new(actor, actions::USER_PASSWD)
            .subject(badge)
            .values(Some("secret".into()), Some("new secret".into()))
            .reason(reason)
            .detail(serde_json::json!({
                "sessions_ended": ended,
                "was_locked": old.user.locked_at(now_ms()),
            })),
    )
    .await?;
    tx.commit().await?;
    tracing::info!(badge, actor, "user secret changed");
    Ok(())
}

/// Unlocks an account locked by failed logins (resets the count).
pub async fn unlock(
    pool: &SqlitePool,
    actor: &str,
    badge: &str,
    reason: &str,
) -> Result<(), AuthError> {
    let mut conn = pool.acquire().await?;
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
    let old = existing(&mut tx, badge).await?;
    sqlx::query(
        "UPDATE users SET failed_attempts = 0, locked_until_ms = NULL, updated_at = ? WHERE id = ?",
    )
    .bind(audit::now_rfc3339())
    .bind(old.id)
    .execute(&mut *tx)
    .await?;
    let before = match old.user.locked_until_ms {
        Some(t) if t > now_ms() => format!("locked until {}", audit::rfc3339(t)),
        _ => format!("{} failed attempts", old.user.failed_attempts),
    };
    audit::append(
        &mut tx,
        &AuditEntry::new(actor, actions::USER_UNLOCK)
            .subject(badge)
            .values(Some(before), Some("unlocked".into()))
            .reason(reason),
    )
    .await?;
    tx.commit().await?;
    tracing::info!(badge, actor, "user unlocked");
    Ok(())
}

/// Deletes a user's sessions; returns how many.
pub(crate) async fn end_sessions(conn: &mut SqliteConnection, user: i64) -> Result<u64, AuthError> {
    Ok(sqlx::query("DELETE FROM sessions WHERE user_id = ?")
        .bind(user)
        .execute(&mut *conn)
        .await?
        .rows_affected())
}

/// The demo accounts: created only on a demo start (simulated shoe and demo players) when
/// the database has no users at all. (badge, name, role, PIN)
pub const DEMO_USERS: [(&str, &str, Role, &str); 2] = [
    ("101", "Demo dealer", Role::Dealer, "1111"),
    ("201", "Demo supervisor", Role::Supervisor, "2222"),
];

/// Creates [`DEMO_USERS`] if there are no users; returns whether it did.
pub async fn seed_demo(pool: &SqlitePool) -> Result<bool, AuthError> {
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM users")
        .fetch_one(pool)
        .await?;
    if n > 0 {
        return Ok(false);
    }
    for (badge, name, role, pin) in DEMO_USERS {
        add_as(pool, "system", actions::USER_SEED, badge, name, role, pin).await?;
    }
    Ok(true)
}
