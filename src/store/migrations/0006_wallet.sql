-- Remote play (issue #15): players, the embedded wallet's ledger, the service's journal of
-- wallet requests, and players' launch sessions. Written by `croupier player ...` and the
-- web side's pool in short BEGIN IMMEDIATE transactions; never by the engine, never read
-- back into it.

-- Remote players. `balance` is the embedded wallet's balance in minor units (an HTTP
-- wallet keeps its own; the column is then unused).
CREATE TABLE players (
    id          TEXT PRIMARY KEY NOT NULL,
    name        TEXT NOT NULL,
    balance     INTEGER NOT NULL DEFAULT 0 CHECK (balance >= 0),
    created_ms  INTEGER NOT NULL
) WITHOUT ROWID;

-- The embedded wallet's ledger: one row per transaction id, ever. A repeated request
-- with the same id answers from its row and changes nothing (idempotency); a rollback
-- names the debit it undoes (`ref_tx`), and a rollback that arrives before (or instead
-- of) its debit leaves a row that makes the later debit refuse.
CREATE TABLE wallet_ledger (
    tx_id         TEXT PRIMARY KEY NOT NULL,
    player_id     TEXT NOT NULL REFERENCES players(id),
    kind          TEXT NOT NULL CHECK (kind IN ('debit', 'credit', 'rollback', 'deposit', 'withdrawal')),
    amount        INTEGER NOT NULL CHECK (amount >= 0),
    ref_tx        TEXT,
    balance_after INTEGER NOT NULL,
    at_ms         INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX wallet_ledger_by_player ON wallet_ledger(player_id);

-- The service's journal of what it asked the wallet (whichever wallet): written as
-- `pending` BEFORE the debit is sent, so a crash anywhere after leaves a row that the
-- reconciliation at start (and after every committed round change) resolves against the
-- event log: `committed` once the stake is in the log, `rolled_back`, or `settled` once
-- the round's returns were credited (credit tx `<table>:<round>:<seat>:settle:credit`).
CREATE TABLE wallet_journal (
    tx_id       TEXT PRIMARY KEY NOT NULL,
    player_id   TEXT NOT NULL,
    table_id    TEXT NOT NULL,
    round       INTEGER NOT NULL,
    seat        INTEGER NOT NULL,
    line        TEXT NOT NULL,
    amount      INTEGER NOT NULL CHECK (amount >= 0),
    state       TEXT NOT NULL CHECK (state IN ('pending', 'committed', 'rolled_back', 'settled')),
    at_ms       INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX wallet_journal_open ON wallet_journal(table_id, round, seat) WHERE state IN ('pending', 'committed');

-- Players' launch sessions: sha256 of the launch token only. Opened by `croupier player
-- add` (a local launch link) or by the platform's API; ends at `expires_ms`.
CREATE TABLE player_sessions (
    token_hash  BLOB PRIMARY KEY NOT NULL,
    player_id   TEXT NOT NULL REFERENCES players(id),
    table_id    TEXT NOT NULL,
    created_ms  INTEGER NOT NULL,
    expires_ms  INTEGER NOT NULL
) WITHOUT ROWID;
