-- Timelines on the floor (issue #31). A table that the operator continued over another
-- history (`croupier timeline continue`) publishes its log again after the last row both
-- share, each row marked with its `branch` (the continue's timeline id; '' before any).
-- The floor keeps every branch's rows apart — the superseded rows stay, as published —
-- and reads a table's history along its current branch.
ALTER TABLE floor_events ADD COLUMN branch TEXT NOT NULL DEFAULT '';
ALTER TABLE floor_events DROP CONSTRAINT floor_events_pkey;
ALTER TABLE floor_events ADD PRIMARY KEY (table_id, branch, seq);

-- The branch the table's head is on.
ALTER TABLE floor_tables ADD COLUMN branch TEXT NOT NULL DEFAULT '';

-- Each branch: the branch it left, after which row, and the parent's last row it
-- supersedes (what the floor held of the parent then).
CREATE TABLE floor_branches (
    table_id        TEXT NOT NULL REFERENCES floor_tables(table_id),
    branch          TEXT NOT NULL,
    parent          TEXT NOT NULL,
    common_seq      BIGINT NOT NULL,
    superseded_seq  BIGINT NOT NULL,
    began_ms        BIGINT NOT NULL,
    PRIMARY KEY (table_id, branch)
);

-- A table's history as it stands: every row but those a later branch superseded (a row
-- of branch P after the common row of a branch that left P).
CREATE VIEW floor_history AS
SELECT e.* FROM floor_events e
WHERE NOT EXISTS (
    SELECT 1 FROM floor_branches b
    WHERE b.table_id = e.table_id AND b.parent = e.branch AND e.seq > b.common_seq
);

-- The stream sequence of the last message the ingest handled: the lag is the stream's
-- last sequence less this (rows are not messages once a branch publishes numbers again).
ALTER TABLE floor_tables ADD COLUMN stream_seq BIGINT NOT NULL DEFAULT 0;
