-- Superseding is transitive (issue #58). A table continued over a history that was itself
-- a branch — a restore after a restore, `croupier run --init` beside the old key, an older
-- backup, in any order — reads its history along the whole line of branches from the
-- current one back to the first: each branch's own rows, then each ancestor's only up to
-- the lowest common row of the branches below it. (0003's view took out only the rows the
-- direct child superseded: a grandparent's rows after the newer common row stayed beside
-- the new branch's rows of the same numbers, and the pit's pages answered
-- `does_not_replay`.)
CREATE OR REPLACE VIEW floor_history AS
WITH RECURSIVE line (table_id, branch, upto, depth) AS (
    SELECT table_id, branch, NULL::BIGINT, 0 FROM floor_tables
  UNION ALL
    -- LEAST ignores NULL: the current branch's parent is read up to its common row.
    SELECT l.table_id, b.parent, LEAST(l.upto, b.common_seq), l.depth + 1
    FROM line l
    JOIN floor_branches b ON b.table_id = l.table_id AND b.branch = l.branch
    -- A branch is never its own ancestor (a left branch's rows are passed over); bounded
    -- all the same.
    WHERE l.depth < 10000
)
SELECT e.* FROM floor_events e
JOIN line l ON l.table_id = e.table_id AND l.branch = e.branch
WHERE l.upto IS NULL OR e.seq <= l.upto;
