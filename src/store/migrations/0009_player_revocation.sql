-- Revoking players' access (issue #32 item 4). A launch token lives until `expires_ms`
-- unless revoked: one link (`croupier player revoke --link`), every link of a player
-- (`croupier player revoke ID`), or the player disabled (`croupier player disable ID`,
-- which also refuses new sessions until `enable`). Rows stay, for the record.
ALTER TABLE player_sessions ADD COLUMN revoked_ms INTEGER;
ALTER TABLE players ADD COLUMN disabled_ms INTEGER;
