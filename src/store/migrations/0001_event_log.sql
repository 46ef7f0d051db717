-- The table service's store. The event log is the truth: every other table is a projection
-- written in the same transaction as the event row that caused it, for recall and audit.

CREATE TABLE tables (
    id          TEXT PRIMARY KEY NOT NULL,
    name        TEXT NOT NULL,
    variant     TEXT NOT NULL,
    created_ms  INTEGER NOT NULL
);

-- Append-only: one row per accepted input, alarm, held card or alarm clearing, numbered
-- per table without gaps from 1. hash = sha256(prev_hash || seq (8 bytes BE) ||
-- at_ms (8 bytes BE) || kind || 0x00 || payload), the first row chained to 32 zero bytes.
CREATE TABLE events (
    table_id    TEXT NOT NULL REFERENCES tables(id),
    seq         INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    payload     TEXT NOT NULL,
    at_ms       INTEGER NOT NULL,
    hash        BLOB NOT NULL,
    PRIMARY KEY (table_id, seq)
) WITHOUT ROWID;

CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;

CREATE TABLE shoes (
    table_id    TEXT NOT NULL REFERENCES tables(id),
    shoe        INTEGER NOT NULL,
    started_seq INTEGER NOT NULL,
    PRIMARY KEY (table_id, shoe)
);

CREATE TABLE rounds (
    table_id    TEXT NOT NULL REFERENCES tables(id),
    round       INTEGER NOT NULL,
    shoe        INTEGER NOT NULL,
    opened_seq  INTEGER NOT NULL,
    settled_seq INTEGER,
    result      TEXT,
    PRIMARY KEY (table_id, round)
);

-- One line per bet placed (main, each side bet), in the order of the input. `player` is ''
-- for the seat's own bet, else the player betting behind the seat or, in a common draw, the
-- player on that box.
CREATE TABLE bets (
    table_id    TEXT NOT NULL,
    round       INTEGER NOT NULL,
    line        INTEGER NOT NULL,
    seat        INTEGER NOT NULL,
    player      TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL,
    amount      INTEGER NOT NULL,
    PRIMARY KEY (table_id, round, line),
    FOREIGN KEY (table_id, round) REFERENCES rounds(table_id, round)
);

-- One line per settled bet, in the order of the round's result; `detail` is the engine's
-- whole bet result as JSON (it may carry more than seat and kind, e.g. who bet behind).
CREATE TABLE settlements (
    table_id    TEXT NOT NULL,
    round       INTEGER NOT NULL,
    line        INTEGER NOT NULL,
    seat        INTEGER NOT NULL,
    player      TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL,
    staked      INTEGER NOT NULL,
    returned    INTEGER NOT NULL,
    detail      TEXT NOT NULL,
    PRIMARY KEY (table_id, round, line),
    FOREIGN KEY (table_id, round) REFERENCES rounds(table_id, round)
);

CREATE TABLE alarms (
    table_id    TEXT NOT NULL REFERENCES tables(id),
    raised_seq  INTEGER NOT NULL,
    reason      TEXT NOT NULL,
    expected    TEXT NOT NULL,
    cleared_seq INTEGER,
    PRIMARY KEY (table_id, raised_seq)
);
