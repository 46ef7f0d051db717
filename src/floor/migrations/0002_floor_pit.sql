-- The pit page's supervisors: the floor's own accounts (argon2id PHC strings, as the
-- table's), lockout after repeated failures, sessions (only sha256(token) stored) and an
-- append-only audit of every login, logout and export.

CREATE TABLE floor_accounts (
    id               BIGSERIAL PRIMARY KEY,
    badge            TEXT NOT NULL UNIQUE,
    name             TEXT NOT NULL,
    phc              TEXT NOT NULL,
    failed           INTEGER NOT NULL DEFAULT 0,
    locked_until_ms  BIGINT NOT NULL DEFAULT 0,
    disabled         BOOLEAN NOT NULL DEFAULT false,
    created_ms       BIGINT NOT NULL
);

CREATE TABLE floor_sessions (
    token_hash  BYTEA PRIMARY KEY,
    account_id  BIGINT NOT NULL REFERENCES floor_accounts(id),
    created_ms  BIGINT NOT NULL,
    seen_ms     BIGINT NOT NULL,
    ended       BOOLEAN NOT NULL DEFAULT false
);

CREATE TABLE floor_audit (
    seq     BIGSERIAL PRIMARY KEY,
    at_ms   BIGINT NOT NULL,
    actor   TEXT NOT NULL,
    action  TEXT NOT NULL,
    detail  TEXT NOT NULL
);

CREATE TRIGGER floor_audit_no_change BEFORE UPDATE OR DELETE ON floor_audit
    FOR EACH ROW EXECUTE FUNCTION floor_events_append_only();

-- The pit page counts open disputes per table.
CREATE INDEX floor_events_disputes ON floor_events (table_id, kind)
    WHERE kind IN ('dispute', 'resolve');
