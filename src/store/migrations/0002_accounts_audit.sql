-- Accounts, sessions and the audit log (issue #6). Written by the web side (logins,
-- sessions), the `croupier user` / `audit` commands and the table task (alarm clears, in
-- the same transaction as their event row); never by the engine.

-- People who operate the table. `secret_hash` is an argon2id PHC string (the secret itself
-- is never stored). `failed_attempts` counts consecutive failed logins; at
-- auth.max_failed_attempts the account is locked until `locked_until_ms` (Unix ms).
CREATE TABLE users (
    id              INTEGER PRIMARY KEY,
    badge           TEXT NOT NULL UNIQUE,
    name            TEXT NOT NULL,
    role            TEXT NOT NULL CHECK (role IN ('dealer', 'supervisor', 'admin')),
    secret_hash     TEXT NOT NULL,
    disabled        INTEGER NOT NULL DEFAULT 0,
    failed_attempts INTEGER NOT NULL DEFAULT 0,
    locked_until_ms INTEGER,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);

-- Panel sessions. Only sha256(token) is stored: a copy of the database gives no usable
-- cookie. A session ends at `expires_ms`, after auth.idle_minutes without a request, at
-- logout, or when its user is disabled or given a new secret.
CREATE TABLE sessions (
    token_hash   BLOB PRIMARY KEY NOT NULL,
    user_id      INTEGER NOT NULL REFERENCES users(id),
    created_ms   INTEGER NOT NULL,
    last_seen_ms INTEGER NOT NULL,
    expires_ms   INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX sessions_by_user ON sessions(user_id);

-- Per-database secret keys (e.g. `player_token`: the HMAC key of the players' dispute
-- tokens), generated at first use from the OS random number generator.
CREATE TABLE secrets (
    name  TEXT PRIMARY KEY NOT NULL,
    value BLOB NOT NULL
) WITHOUT ROWID;

-- Append-only audit log: logins, user changes, alarm clears, overrides, config changes.
-- `seq` counts from 1 without gaps; `at` is wall-clock RFC 3339 UTC from the service's
-- shell. hash = sha256(prev_hash || seq (8 bytes BE) || for each of at, actor, action,
-- subject, old_value, new_value, reason, detail: a presence byte (0 = NULL, 1 = text),
-- then the text's length (8 bytes BE) and its UTF-8 bytes); the first row's prev_hash is
-- 32 zero bytes. `croupier audit verify` checks it (src/store/audit.rs).
CREATE TABLE audit (
    seq        INTEGER PRIMARY KEY NOT NULL,
    at         TEXT NOT NULL,
    actor      TEXT NOT NULL,
    action     TEXT NOT NULL,
    subject    TEXT NOT NULL DEFAULT '',
    old_value  TEXT,
    new_value  TEXT,
    reason     TEXT NOT NULL DEFAULT '',
    detail     TEXT NOT NULL DEFAULT '{}',
    prev_hash  BLOB NOT NULL,
    hash       BLOB NOT NULL
);

CREATE INDEX audit_by_action ON audit(action, seq);

CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
