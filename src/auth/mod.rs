//! Accounts, roles and sessions (issue #6).
//!
//! - [`Role`]: `dealer < supervisor < admin`; a route needs a minimum role.
//! - [`secret`]: the secret policy (a PIN of 4–12 digits or a password of 8–128
//!   characters) and argon2id hashing.
//! - [`accounts`]: the `users` table (`croupier user add | disable | enable | passwd |
//!   unlock | list`), every change with its audit row in the same transaction.
//! - [`sessions`]: logins with per-account lockout, cookie sessions stored hashed.
//! - [`local_token`]: the service's local token file (the CLI on the same machine).
//! - [`player_token`]: the players' per-(table, round, seat) dispute tokens.
//!
//! [`Auth`] is the handle the web side holds (with the local token beside it, which works
//! even when the database does not): its own small pool on the table's database
//! (the event log keeps its single writer; accounts, sessions and the audit log are written
//! here with a busy timeout, each write a short `BEGIN IMMEDIATE` transaction).

pub mod accounts;
pub mod local_token;
pub mod player_token;
pub mod secret;
pub mod sessions;
pub mod throttle;
pub mod time;
pub mod timers;

use crate::store::audit::AuditError;
use serde::{Deserialize, Serialize};
use sqlx::sqlite::SqliteSynchronous;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::ConnectOptions;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What a user may do. Ordered: a route that needs `Dealer` admits every role.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Runs the game: betting window, decisions, shuffles, the dealer views.
    Dealer,
    /// Also clears alarms and overrides (raw inputs).
    Supervisor,
    /// Also reads the audit log over the API.
    Admin,
}

impl Role {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Dealer => "dealer",
            Role::Supervisor => "supervisor",
            Role::Admin => "admin",
        }
    }

    /// Every role, lowest first.
    pub const ALL: [Role; 3] = [Role::Dealer, Role::Supervisor, Role::Admin];
}

impl std::str::FromStr for Role {
    type Err = AuthError;

    fn from_str(s: &str) -> Result<Role, AuthError> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| {
                AuthError::Invalid(format!("unknown role {s:?} (dealer, supervisor, admin)"))
            })
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who is making a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Principal {
    /// The badge id (`local` for the local token).
    pub badge: String,
    /// The person's name.
    pub name: String,
    /// Their role.
    pub role: Role,
    /// How they authenticated: `session` or `local_token`.
    pub via: &'static str,
    /// The audit actor: `user:<badge>`, or `local:<who>` for the local token.
    pub actor: String,
    /// sha256 of the session token (sessions only), to re-check an open WebSocket.
    #[serde(skip)]
    pub session: Option<[u8; 32]>,
}

impl Principal {
    /// Whether the principal has at least `role`.
    pub fn has(&self, role: Role) -> bool {
        self.role >= role
    }
}

/// `[auth]` in `table.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuthConfig {
    /// Consecutive failed logins that lock an account.
    pub max_failed_attempts: u32,
    /// How long a locked account stays locked.
    pub lockout_seconds: u64,
    /// A session's absolute lifetime.
    pub session_hours: u64,
    /// A session ends after this long without an authenticated request.
    pub idle_minutes: u64,
}

impl Default for AuthConfig {
    fn default() -> AuthConfig {
        AuthConfig {
            max_failed_attempts: 3,
            lockout_seconds: 300,
            session_hours: 12,
            idle_minutes: 60,
        }
    }
}

impl AuthConfig {
    /// The first setting that would leave no one able to operate the table, as (key, why):
    /// a session that ends at once (`session_hours = 0`: login answers 200, every later
    /// request 401), an idle limit of zero, or a lockout after zero failures.
    pub fn unusable(&self) -> Option<(&'static str, String)> {
        if self.session_hours == 0 {
            return Some((
                "session_hours",
                "auth.session_hours = 0: every session would end at login; use at least 1".into(),
            ));
        }
        if self.idle_minutes == 0 {
            return Some((
                "idle_minutes",
                "auth.idle_minutes = 0: every session would end before its first request; \
                 use at least 1"
                    .into(),
            ));
        }
        if self.max_failed_attempts == 0 {
            return Some((
                "max_failed_attempts",
                "auth.max_failed_attempts = 0: an account would lock before any attempt; \
                 use at least 1"
                    .into(),
            ));
        }
        None
    }
}

/// Accounts and sessions failed.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// A query failed.
    #[error("accounts: database error: {0}")]
    Sql(#[from] sqlx::Error),
    /// The migrations could not be applied.
    #[error("accounts: cannot migrate the database: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The audit row could not be written (the change was not made).
    #[error(transparent)]
    Audit(#[from] AuditError),
    /// A bad argument (badge, name, secret policy, role).
    #[error("{0}")]
    Invalid(String),
    /// No such user.
    #[error("no user with badge {0:?}")]
    NoSuchUser(String),
    /// Hashing failed (never for valid input).
    #[error("password hashing: {0}")]
    Hash(String),
    /// The OS random number generator failed.
    #[error("the OS random number generator failed: {0}")]
    Random(String),
    /// A file could not be written or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Opens a small read-write pool on the table's database for accounts, sessions and the
/// audit log (creating the file and schema if needed) — the same settings as the event
/// log's writer, so commits are as durable.
pub async fn open_pool(path: &Path) -> Result<SqlitePool, AuthError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| AuthError::Io {
            path: dir.display().to_string(),
            source,
        })?;
    }
    // An empty file is a lost history, not a new database (see `Store::open`).
    crate::store::check_file(path).map_err(|e| AuthError::Invalid(e.to_string()))?;
    crate::store::create_private(path).map_err(|e| AuthError::Invalid(e.to_string()))?;
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .foreign_keys(true)
        // Waits for the table task's commits (a few ms each) instead of failing.
        .busy_timeout(Duration::from_secs(5))
        .disable_statement_logging();
    let pool = SqlitePoolOptions::new()
        .max_connections(2)
        .connect_with(options)
        .await?;
    sqlx::migrate!("src/store/migrations").run(&pool).await?;
    Ok(pool)
}

/// Logins in progress at once (two hashing, the rest queued behind them): a flood beyond
/// this is refused with `too_many_logins` instead of queueing, so a real login waits for at
/// most a few hashes.
pub const LOGINS_ADMITTED: usize = 6;

/// The web side's handle: the pool, the settings, the player-token key, the local token.
#[derive(Clone)]
pub struct Auth {
    pool: SqlitePool,
    config: Arc<AuthConfig>,
    secure_cookie: bool,
    player_key: Arc<[u8; 32]>,
    hashing: Arc<tokio::sync::Semaphore>,
    /// Logins admitted at once (hashing or waiting to): the excess is answered at once.
    admitted: Arc<tokio::sync::Semaphore>,
    /// Per-address and unknown-badge throttles (`throttle.rs`).
    throttle: Arc<std::sync::Mutex<throttle::Throttle>>,
    clock: Arc<dyn time::Clock>,
    timers: Arc<std::sync::Mutex<timers::Timers>>,
    /// Sessions ended in this process (logout), for the streams waiting on them.
    ended: tokio::sync::broadcast::Sender<[u8; 32]>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("config", &self.config)
            .field("secure_cookie", &self.secure_cookie)
            .finish_non_exhaustive()
    }
}

impl Auth {
    /// Opens accounts on the database at `path`. `secure_cookie`: the panel is served over
    /// TLS (cookies get `Secure`).
    pub async fn open(
        path: &Path,
        config: AuthConfig,
        secure_cookie: bool,
    ) -> Result<Auth, AuthError> {
        Auth::open_with_clock(path, config, secure_cookie, time::SystemClock::shared()).await
    }

    /// [`Auth::open`] on `clock` (tests move a [`time::ManualClock`]).
    pub async fn open_with_clock(
        path: &Path,
        config: AuthConfig,
        secure_cookie: bool,
        clock: Arc<dyn time::Clock>,
    ) -> Result<Auth, AuthError> {
        let pool = open_pool(path).await?;
        let player_key = player_token::key(&pool).await?;
        // Sessions past their stored end by the wall clock — the only clock that spans a
        // restart — go now; from here on their length is measured on `clock.monotonic()`.
        sqlx::query("DELETE FROM sessions WHERE expires_ms <= ?")
            .bind(clock.wall_ms())
            .execute(&pool)
            .await?;
        Ok(Auth {
            pool,
            config: Arc::new(config),
            secure_cookie,
            player_key: Arc::new(player_key),
            // argon2 takes ~20 MB and tens of ms per login: at most two at once, so a burst
            // of logins cannot starve the table or exhaust a Pi's memory.
            hashing: Arc::new(tokio::sync::Semaphore::new(2)),
            admitted: Arc::new(tokio::sync::Semaphore::new(LOGINS_ADMITTED)),
            throttle: Arc::default(),
            clock,
            timers: Arc::default(),
            ended: tokio::sync::broadcast::channel(64).0,
        })
    }

    /// The clock durations are measured on.
    pub fn clock(&self) -> &Arc<dyn time::Clock> {
        &self.clock
    }

    /// The login throttles (a short lock: never held across an await).
    fn throttle(&self) -> std::sync::MutexGuard<'_, throttle::Throttle> {
        self.throttle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The deadlines (a short lock: never held across an await).
    fn timers(&self) -> std::sync::MutexGuard<'_, timers::Timers> {
        self.timers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The configured lengths.
    fn lengths(&self) -> timers::Lengths {
        let c = &self.config;
        timers::Lengths {
            life: Duration::from_secs(c.session_hours.saturating_mul(3600)),
            idle: Duration::from_secs(c.idle_minutes.saturating_mul(60)),
            lockout: Duration::from_secs(c.lockout_seconds),
        }
    }

    /// The pool (accounts, sessions, audit).
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// The settings.
    pub fn config(&self) -> &AuthConfig {
        &self.config
    }

    /// Whether cookies are marked `Secure`.
    pub fn secure_cookie(&self) -> bool {
        self.secure_cookie
    }

    /// The key of the players' dispute tokens.
    pub fn player_key(&self) -> &[u8; 32] {
        &self.player_key
    }
}

/// Unix milliseconds now.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// `n` bytes from the OS random number generator.
pub(crate) fn random<const N: usize>() -> Result<[u8; N], AuthError> {
    let mut out = [0u8; N];
    getrandom::fill(&mut out).map_err(|e| AuthError::Random(e.to_string()))?;
    Ok(out)
}

/// Unix milliseconds now (for callers computing a cookie's Max-Age).
pub fn sessions_now_ms() -> i64 {
    now_ms()
}
