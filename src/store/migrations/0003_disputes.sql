-- Disputes and their resolutions (projections of the `dispute`, `resolve` and `final` log
-- rows), and when a round's result became final.

ALTER TABLE rounds ADD COLUMN final_seq INTEGER;

CREATE TABLE disputes (
    table_id        TEXT NOT NULL REFERENCES tables(id),
    raised_seq      INTEGER NOT NULL,
    round           INTEGER NOT NULL,
    origin          TEXT NOT NULL,
    seat            INTEGER,
    reason          TEXT NOT NULL,
    raised_by       TEXT NOT NULL,
    -- The round as it stood when the dispute was raised (JSON), frozen for the record.
    frozen          TEXT,
    resolved_seq    INTEGER,
    resolution      TEXT,
    resolve_reason  TEXT,
    proposed_by     TEXT,
    confirmed_by    TEXT,
    PRIMARY KEY (table_id, raised_seq)
);
