-- The casino floor's record (PostgreSQL): every table's published log in one database.
-- Written only by `croupier floor`'s ingest; each batch of a table's rows, its alarms and
-- the table's new head commit in one transaction, before the broker is acknowledged.

-- One row per table seen on the broker: the head of its verified chain (the last row the
-- floor holds and that row's published hash; seq 0 and 32 zero bytes before the first).
CREATE TABLE floor_tables (
    table_id      TEXT PRIMARY KEY,
    head_seq      BIGINT NOT NULL DEFAULT 0,
    head_hash     BYTEA NOT NULL DEFAULT decode(repeat('00', 32), 'hex'),
    -- The table's own commit time of its head row (Unix ms, the table's clock).
    head_at_ms    BIGINT NOT NULL DEFAULT 0,
    -- The last card the shoe read (Unix ms, the table's clock), if any.
    last_card_ms  BIGINT,
    -- The floor's clock: first seen, last batch committed.
    first_ms      BIGINT NOT NULL,
    ingested_ms   BIGINT NOT NULL
);

-- Every published row exactly as published; idempotent on (table_id, seq). `verified`:
-- 'ok' (its hash follows from the row before), 'break' (it does not), 'gap' (rows are
-- missing before it, so it could not be checked).
CREATE TABLE floor_events (
    table_id     TEXT NOT NULL REFERENCES floor_tables(table_id),
    seq          BIGINT NOT NULL,
    kind         TEXT NOT NULL,
    at_ms        BIGINT NOT NULL,
    hash         BYTEA NOT NULL,
    payload      TEXT NOT NULL,
    verified     TEXT NOT NULL CHECK (verified IN ('ok', 'break', 'gap')),
    ingested_ms  BIGINT NOT NULL,
    PRIMARY KEY (table_id, seq)
);

CREATE FUNCTION floor_events_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'the floor''s event log is append-only';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER floor_events_no_change BEFORE UPDATE OR DELETE ON floor_events
    FOR EACH ROW EXECUTE FUNCTION floor_events_append_only();

-- Floor alarms: a break or a gap in a table's published chain, a message that is not a
-- log row. Raised once per (table, row, kind).
CREATE TABLE floor_alarms (
    id          BIGSERIAL PRIMARY KEY,
    table_id    TEXT NOT NULL,
    seq         BIGINT NOT NULL,
    kind        TEXT NOT NULL,
    detail      TEXT NOT NULL,
    raised_ms   BIGINT NOT NULL,
    UNIQUE (table_id, seq, kind)
);
