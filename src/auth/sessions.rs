//! Logins and cookie sessions.
//!
//! A login checks the badge's secret (argon2id, off the async threads). Lockout is per
//! account: after `max_failed_attempts` consecutive failures the account is locked for
//! `lockout_seconds`, and while locked even the right secret is refused. Every attempt —
//! unknown badges, disabled accounts and locked accounts included — writes an audit row
//! (never the secret). A session is 256 random bits from the OS; the cookie carries them
//! hex-encoded and the database only their sha256.

use super::accounts::{self, end_sessions};
use super::{random, secret, Auth, AuthError, Principal, Role};
use crate::store::audit::{self, actions, AuditEntry};
use sha2::{Digest, Sha256};
use sqlx::{Connection, Row};
use std::time::Duration;

/// The session cookie's name.
pub const COOKIE: &str = "croupier_session";

/// How often an open stream re-checks its session (a primary-key lookup): a session
/// ended from another process (`croupier user disable`, `passwd`) or by time is noticed
/// within this.
pub const SESSION_RECHECK: std::time::Duration = std::time::Duration::from_secs(1);

/// Why a login failed.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// Unknown badge, wrong secret or disabled account (one answer for all three).
    #[error("badge or secret not accepted")]
    Invalid,
    /// Too many failed attempts: locked until then (RFC 3339).
    #[error("too many failed attempts: the account is locked until {until}")]
    Locked {
        /// When it unlocks.
        until: String,
    },
    /// Too many logins are in progress: try again in a moment (nothing was checked).
    #[error("too many logins at once: try again in a second")]
    Busy,
    /// Too many failed logins from this address: it may try again after `seconds`.
    #[error("too many failed logins from this address: try again in {seconds} s")]
    Throttled {
        /// How long until it may.
        seconds: u64,
    },
    /// Accounts are unavailable.
    #[error(transparent)]
    Auth(#[from] AuthError),
}

impl From<sqlx::Error> for LoginError {
    fn from(e: sqlx::Error) -> LoginError {
        LoginError::Auth(e.into())
    }
}

impl From<crate::store::audit::AuditError> for LoginError {
    fn from(e: crate::store::audit::AuditError) -> LoginError {
        LoginError::Auth(e.into())
    }
}

/// A new session.
#[derive(Debug, Clone)]
pub struct Session {
    /// The cookie value (hex, 64 characters). Shown once: only its hash is stored.
    pub token: String,
    /// Who.
    pub principal: Principal,
    /// When it ends at the latest (Unix ms).
    pub expires_ms: i64,
}

/// sha256 of a token.
pub fn token_hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn principal(badge: String, name: String, role: Role, session: [u8; 32]) -> Principal {
    Principal {
        actor: format!("user:{badge}"),
        badge,
        name,
        role,
        via: "session",
        session: Some(session),
    }
}

impl Auth {
    /// Logs in `badge` with `secret`; `peer` (the client's address) goes into the audit row.
    pub async fn login(
        &self,
        badge: &str,
        secret_text: &str,
        peer: &str,
    ) -> Result<Session, LoginError> {
        // Admitted or refused before anything is read or written: a flood costs nothing.
        let Ok(_admitted) = self.admitted.clone().try_acquire_owned() else {
            tracing::warn!(badge, peer, "login refused: too many logins at once");
            return Err(LoginError::Busy);
        };
        let cfg = self.config().clone();
        let detail = |why: &str| serde_json::json!({"peer": peer, "why": why});
        let ip = peer.parse::<std::net::SocketAddr>().map(|a| a.ip()).ok();
        let lockout = Duration::from_secs(cfg.lockout_seconds);
        let wall_in = |left: Duration| {
            let ms = i64::try_from(left.as_millis()).unwrap_or(i64::MAX);
            audit::rfc3339(self.clock().wall_ms().saturating_add(ms))
        };
        // An address that failed too often is refused before any account is looked at.
        if let Some(left) = self.throttle().peer_blocked(ip, self.clock().monotonic()) {
            tracing::warn!(
                badge,
                peer,
                "login refused: too many failures from this address"
            );
            return Err(LoginError::Throttled {
                seconds: left.as_secs().max(1),
            });
        }
        let mut conn = self.pool().acquire().await?;
        let found = accounts::find(&mut conn, badge).await?;
        drop(conn);
        // An unknown badge that failed as often as locks an account answers as locked.
        if found.is_none() {
            let left = self
                .throttle()
                .locked_for(badge, ip, self.clock().monotonic());
            if let Some(left) = left {
                audit::append_now(
                    self.pool(),
                    &AuditEntry::new("anonymous", actions::LOGIN_FAILED)
                        .subject(badge)
                        .detail(detail("unknown badge (answered as locked)")),
                )
                .await?;
                return Err(LoginError::Locked {
                    until: wall_in(left),
                });
            }
        }
        // A locked account is refused before its secret is even checked — for the
        // addresses the lock applies to (`throttle.rs`).
        if let Some(s) = &found {
            if self.locked(s.id, s.user.locked_until_ms)
                && self
                    .throttle()
                    .lock_applies(badge, ip, self.clock().monotonic())
            {
                let until = audit::rfc3339(s.user.locked_until_ms.unwrap_or(0));
                audit::append_now(
                    self.pool(),
                    &AuditEntry::new(format!("user:{badge}"), actions::LOGIN_LOCKED)
                        .subject(badge)
                        .detail(detail("account locked")),
                )
                .await?;
                tracing::warn!(badge, peer, "login refused: account locked");
                return Err(LoginError::Locked { until });
            }
        }
        let phc = found
            .as_ref()
            .map_or_else(|| secret::decoy().to_string(), |s| s.secret_hash.clone());
        let permit = self
            .hashing
            .acquire()
            .await
            .map_err(|e| AuthError::Hash(e.to_string()))?;
        let given = secret_text.to_string();
        let matches = tokio::task::spawn_blocking(move || secret::verify(&given, &phc))
            .await
            .map_err(|e| AuthError::Hash(e.to_string()))?;
        drop(permit);

        let Some(stored) = found else {
            audit::append_now(
                self.pool(),
                &AuditEntry::new("anonymous", actions::LOGIN_FAILED)
                    .subject(badge)
                    .detail(detail("unknown badge")),
            )
            .await?;
            tracing::warn!(badge, peer, "login failed: unknown badge");
            let now = self.clock().monotonic();
            let mut throttle = self.throttle();
            throttle.peer_failed(ip, now, lockout);
            return Err(
                match throttle.failed(badge, ip, now, cfg.max_failed_attempts, lockout) {
                    Some(left) => {
                        drop(throttle);
                        LoginError::Locked {
                            until: wall_in(left),
                        }
                    }
                    None => LoginError::Invalid,
                },
            );
        };
        let actor = format!("user:{badge}");
        let now = self.clock().wall_ms();
        let mut conn = self.pool().acquire().await?;
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        // Re-read inside the write lock: concurrent attempts each count.
        let row = sqlx::query("SELECT failed_attempts, locked_until_ms FROM users WHERE id = ?")
            .bind(stored.id)
            .fetch_one(&mut *tx)
            .await?;
        let mut failed: i64 = row.try_get("failed_attempts")?;
        let locked_until: Option<i64> = row.try_get("locked_until_ms")?;
        if self.locked(stored.id, locked_until)
            && self
                .throttle()
                .lock_applies(badge, ip, self.clock().monotonic())
        {
            audit::append(
                &mut tx,
                &AuditEntry::new(&actor, actions::LOGIN_LOCKED)
                    .subject(badge)
                    .detail(detail("account locked")),
            )
            .await?;
            tx.commit().await?;
            return Err(LoginError::Locked {
                until: audit::rfc3339(locked_until.unwrap_or(0)),
            });
        }
        if locked_until.is_some() && !self.locked(stored.id, locked_until) {
            // The lockout has run out: a fresh count. (One in force that does not apply to
            // this address keeps counting.)
            failed = 0;
        }
        if !matches || stored.user.disabled {
            let why = if stored.user.disabled {
                "account disabled"
            } else {
                "wrong secret"
            };
            failed += 1;
            // Whether this address is now locked out of the badge: its own failures, or
            // the badge's across addresses (`throttle.rs`).
            let lock = {
                let mut throttle = self.throttle();
                throttle.peer_failed(ip, self.clock().monotonic(), lockout);
                let locked = throttle.failed(
                    badge,
                    ip,
                    self.clock().monotonic(),
                    cfg.max_failed_attempts,
                    lockout,
                );
                !stored.user.disabled && locked.is_some()
            };
            // The wall time is for the record; the lockout's length runs on monotonic time.
            let until = lock.then(|| {
                now.saturating_add(
                    i64::try_from(cfg.lockout_seconds.saturating_mul(1000)).unwrap_or(i64::MAX),
                )
            });
            // A lock in force for other addresses stays recorded.
            let stored_until =
                until.or(locked_until.filter(|_| self.locked(stored.id, locked_until)));
            sqlx::query("UPDATE users SET failed_attempts = ?, locked_until_ms = ? WHERE id = ?")
                .bind(failed)
                .bind(stored_until)
                .bind(stored.id)
                .execute(&mut *tx)
                .await?;
            let entry = if let Some(until) = until {
                AuditEntry::new(&actor, actions::LOGIN_LOCKED)
                    .subject(badge)
                    .values(
                        Some("unlocked".into()),
                        Some(format!("locked until {}", audit::rfc3339(until))),
                    )
                    .detail(
                        serde_json::json!({"peer": peer, "why": why, "failed_attempts": failed}),
                    )
            } else {
                AuditEntry::new(&actor, actions::LOGIN_FAILED)
                    .subject(badge)
                    .detail(
                        serde_json::json!({"peer": peer, "why": why, "failed_attempts": failed}),
                    )
            };
            audit::append(&mut tx, &entry).await?;
            tx.commit().await?;
            if let Some(until) = until {
                let lengths = self.lengths();
                self.timers()
                    .lock(stored.id, until, self.clock().monotonic(), &lengths);
            }
            tracing::warn!(
                badge,
                peer,
                failed,
                locked = until.is_some(),
                "login failed: {why}"
            );
            return Err(match until {
                Some(until) => LoginError::Locked {
                    until: audit::rfc3339(until),
                },
                None => LoginError::Invalid,
            });
        }
        let token = hex::encode(random::<32>()?);
        let hash = token_hash(&token);
        let expires = now.saturating_add(
            i64::try_from(cfg.session_hours.saturating_mul(3_600_000)).unwrap_or(i64::MAX),
        );
        // The account's lockout stays recorded while another address's is in force: a
        // login here lifts no one else's (issue #59: the owner's login at the terminal
        // let the guesser's right PIN in). `croupier user unlock` still lifts every one.
        let mono = self.clock().monotonic();
        let kept = self.locked(stored.id, locked_until)
            && self.throttle().locked_elsewhere(badge, ip, mono);
        sqlx::query("UPDATE users SET failed_attempts = 0, locked_until_ms = ? WHERE id = ?")
            .bind(locked_until.filter(|_| kept))
            .bind(stored.id)
            .execute(&mut *tx)
            .await?;
        self.throttle().succeeded(badge, ip);
        // Housekeeping: sessions past a deadline (monotonic) go when someone logs in.
        let swept = self.timers().sweep(self.clock().monotonic());
        for old in &swept {
            sqlx::query("DELETE FROM sessions WHERE token_hash = ?")
                .bind(&old[..])
                .execute(&mut *tx)
                .await?;
        }
        sqlx::query(
            "INSERT INTO sessions (token_hash, user_id, created_ms, last_seen_ms, expires_ms) \
             VALUES (?, ?, ?, ?, ?)",
        )
        .bind(&hash[..])
        .bind(stored.id)
        .bind(now)
        .bind(now)
        .bind(expires)
        .execute(&mut *tx)
        .await?;
        audit::append(
            &mut tx,
            &AuditEntry::new(&actor, actions::LOGIN)
                .subject(badge)
                .detail(serde_json::json!({"peer": peer, "role": stored.user.role})),
        )
        .await?;
        tx.commit().await?;
        let lengths = self.lengths();
        self.timers()
            .started(hash, self.clock().monotonic(), &lengths);
        tracing::info!(badge, role = %stored.user.role, peer, "login");
        Ok(Session {
            token,
            principal: principal(stored.user.badge, stored.user.name, stored.user.role, hash),
            expires_ms: expires,
        })
    }

    /// Whether the account `user` (stored as locked until `until_ms`) is locked now, on
    /// monotonic time.
    fn locked(&self, user: i64, until_ms: Option<i64>) -> bool {
        let lengths = self.lengths();
        let (now, wall) = (self.clock().monotonic(), self.clock().wall_ms());
        self.timers().locked(user, until_ms, now, wall, &lengths)
    }

    /// The principal of a live session token (`None`: unknown, expired, idle too long, or
    /// its user disabled). Every use moves the idle deadline on (monotonic, in memory);
    /// the stored `last_seen_ms` follows at most every quarter of the idle limit.
    pub async fn session(&self, token: &str) -> Result<Option<Principal>, AuthError> {
        if token.len() != 64 {
            return Ok(None);
        }
        self.session_by_hash(&token_hash(token), true).await
    }

    /// Whether the session with this hash is still live (an open WebSocket re-checks it;
    /// watching does not count as activity).
    pub async fn session_alive(&self, hash: &[u8; 32]) -> Result<bool, AuthError> {
        Ok(self.session_by_hash(hash, false).await?.is_some())
    }

    async fn session_by_hash(
        &self,
        hash: &[u8; 32],
        touch: bool,
    ) -> Result<Option<Principal>, AuthError> {
        // Whether it exists is the database's (logout, disable and passwd delete or
        // disable, some from another process); how long it lasts is monotonic time's.
        let row = sqlx::query(
            "SELECT s.expires_ms, s.last_seen_ms, u.badge, u.name, u.role FROM sessions s \
             JOIN users u ON u.id = s.user_id \
             WHERE s.token_hash = ? AND u.disabled = 0",
        )
        .bind(&hash[..])
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else {
            self.timers().forget(hash);
            return Ok(None);
        };
        let stored = super::timers::Stored {
            expires_ms: row.try_get("expires_ms")?,
            last_seen_ms: row.try_get("last_seen_ms")?,
        };
        let lengths = self.lengths();
        let (now, wall) = (self.clock().monotonic(), self.clock().wall_ms());
        let checked = self
            .timers()
            .check(*hash, stored, now, wall, &lengths, touch);
        match checked {
            super::timers::Checked::Ended => {
                // Gone for good: a restart must not bring it back from its wall times.
                sqlx::query("DELETE FROM sessions WHERE token_hash = ?")
                    .bind(&hash[..])
                    .execute(self.pool())
                    .await?;
                return Ok(None);
            }
            super::timers::Checked::Live { write: true } => {
                sqlx::query("UPDATE sessions SET last_seen_ms = ? WHERE token_hash = ?")
                    .bind(wall)
                    .bind(&hash[..])
                    .execute(self.pool())
                    .await?;
            }
            super::timers::Checked::Live { write: false } => {}
        }
        let role: String = row.try_get("role")?;
        Ok(Some(principal(
            row.try_get("badge")?,
            row.try_get("name")?,
            role.parse()?,
            *hash,
        )))
    }

    /// Ends the session of `who` (a no-op for the local token) and records the logout.
    pub async fn logout(&self, who: &Principal, peer: &str) -> Result<(), AuthError> {
        let Some(hash) = who.session else {
            return Ok(());
        };
        let mut conn = self.pool().acquire().await?;
        let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
        let n = sqlx::query("DELETE FROM sessions WHERE token_hash = ?")
            .bind(&hash[..])
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if n > 0 {
            audit::append(
                &mut tx,
                &AuditEntry::new(&who.actor, actions::LOGOUT)
                    .subject(&who.badge)
                    .detail(serde_json::json!({"peer": peer})),
            )
            .await?;
        }
        tx.commit().await?;
        self.timers().forget(&hash);
        // Streams of this session end now rather than at their next re-check.
        let _ = self.ended.send(hash);
        tracing::info!(badge = %who.badge, peer, "logout");
        Ok(())
    }

    /// Completes when the session `hash` has ended — logout (at once), or at the next
    /// re-check (every [`SESSION_RECHECK`]): expiry, idle expiry, the account disabled or
    /// its secret changed (`croupier user`, another process, deletes or disables in the
    /// database). Every long-lived response of a session (`/ws/dealer`, `/api/stream`, the
    /// long poll) ends with it. Watching is not activity: it does not move the idle
    /// deadline. A database error is not an end: the next re-check decides.
    pub async fn session_ended(&self, hash: [u8; 32]) {
        let mut ended = self.ended.subscribe();
        let mut recheck = crate::clock::every(SESSION_RECHECK);
        loop {
            tokio::select! {
                gone = ended.recv() => match gone {
                    Ok(h) if h == hash => return,
                    Ok(_) => continue,
                    // Missed some: look it up.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    // Never while `self` holds the sender; if it were, the re-checks go on.
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                        recheck.tick().await;
                    }
                },
                _ = recheck.tick() => {}
            }
            if let Ok(false) = self.session_alive(&hash).await {
                return;
            }
        }
    }

    /// Ends every session of the user `badge` (tests, tools).
    pub async fn end_sessions_of(&self, badge: &str) -> Result<u64, AuthError> {
        let mut conn = self.pool().acquire().await?;
        let Some(u) = accounts::find(&mut conn, badge).await? else {
            return Err(AuthError::NoSuchUser(badge.to_string()));
        };
        end_sessions(&mut conn, u.id).await
    }
}
