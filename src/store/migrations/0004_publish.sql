-- The broker publisher's progress (`croupier run` with `[publish]`): the last log row and
-- the last public message the broker acknowledged, per table. Written by the publisher's
-- own connection, never by the table task; read at start-up so the lag is known before
-- the broker answers. The broker's streams stay the authority on what they hold.

CREATE TABLE publish_progress (
    table_id    TEXT PRIMARY KEY REFERENCES tables(id),
    -- The last row acknowledged on croupier.<table>.log (0: none).
    log_seq     INTEGER NOT NULL,
    -- The last message acknowledged on croupier.<table>.public: its id (seq.sub) and n.
    public_seq  INTEGER NOT NULL,
    public_sub  INTEGER NOT NULL,
    public_n    INTEGER NOT NULL,
    -- When this was written (Unix ms, for people).
    at_ms       INTEGER NOT NULL
);
