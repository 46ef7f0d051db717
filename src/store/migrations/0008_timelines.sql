-- Timelines (issue #31): a table's history gets a new identity whenever it can diverge
-- from what others saw. `tables.timeline` is the first timeline's id (random, made when
-- the database is); a restore or an operator's `croupier timeline continue` begins a new
-- one with a `timeline` row in the event log (store/timeline.rs).
ALTER TABLE tables ADD COLUMN timeline TEXT;
UPDATE tables SET timeline = lower(hex(randomblob(16))) WHERE timeline IS NULL;

-- Written into a backup's copy only (store/backup.rs), never into a live database: a
-- database that opens with this row was restored from a backup, and its history begins a
-- new timeline before anything else is written. The row is then deleted.
CREATE TABLE backup_marker (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    -- When the backup was taken (Unix ms) and the log's last row then.
    taken_ms  INTEGER NOT NULL,
    seq       INTEGER NOT NULL
);
