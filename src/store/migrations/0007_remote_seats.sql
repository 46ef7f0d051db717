-- Remote play (issue #15): the seats remote players hold, so a restart keeps who holds
-- which seat. Written by the web side's pool when a player joins or leaves (before the
-- answer); read once at start (`table::remote::RemoteSeats::load`); never read by the engine.
-- Which seats a round times is in the log (the bets' `timer_ms`), not here.
CREATE TABLE remote_seats (
    seat    INTEGER PRIMARY KEY NOT NULL CHECK (seat BETWEEN 1 AND 255),
    player  TEXT NOT NULL
);
