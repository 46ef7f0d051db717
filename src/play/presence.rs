//! Who is still playing (issue #58 item 4): a session that ended moves no money.
//!
//! A player's game session at the table ends when their launch session does (revoked,
//! expired, the player disabled: `play::sessions::ended`) or when their page has not been
//! heard from for `[play] away_after_rounds` rounds in a row. From then on nothing moves
//! money for them by itself — the automatic re-bet (`web::play::rebet`), a followed
//! double or split behind a seat (`web::play::decide`) — and at the next betting window
//! their seats are freed (`run`), with a note their page shows when they come back.
//!
//! Rounds are counted in betting windows (`RemoteSeats::windows_opened`): every request a
//! player makes stamps them, and the session it came with, with the number of windows
//! opened so far. An open page asks for the table's state twice a second, so a page that
//! is there is heard in every window; one whose tab closed is heard in none. The stamps
//! live in memory: after a restart every player counts as heard at the start, so a seat
//! whose player never comes back is freed after `away_after_rounds` rounds.

use super::sessions::{Ended, SessionKey};
use super::Play;
use crate::engine::{SeatBets, SeatId};
use crate::table::{Snapshot, TableHandle};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tracing::{info, warn};

/// The players' and sessions' last requests, in betting windows, and the seats freed.
#[derive(Debug)]
pub struct Presence {
    /// `[play] away_after_rounds`.
    away_after: u64,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Each player's last request: the windows opened by then.
    players: HashMap<String, u64>,
    /// Each session's last request, the same way.
    sessions: HashMap<SessionKey, u64>,
    /// Why each player's place at the table was given up, until they join again.
    released: HashMap<String, Released>,
}

/// Why a player's seats (or place without a seat) were freed, as their page is told
/// (`GET /api/play/state` `released`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Released {
    /// The seats freed (none: a place at the table without a seat).
    pub seats: Vec<SeatId>,
    /// The last round the table played before.
    pub round: u64,
    /// Why: the session ended (`revoked`, `expired`, `disabled`) or the page went quiet
    /// (`away`).
    pub reason: Ended,
    /// How many rounds in a row the page was not heard from.
    pub rounds: u64,
}

impl Presence {
    /// Nobody heard yet; a player is away after `away_after` rounds without a request.
    pub fn new(away_after: u64) -> Presence {
        Presence {
            away_after: away_after.max(1),
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `player` made a request with `session` when `windows` betting windows had opened.
    pub fn heard(&self, player: &str, session: &SessionKey, windows: u64) {
        let mut i = self.lock();
        i.players.insert(player.to_string(), windows);
        i.sessions.insert(*session, windows);
    }

    /// How many rounds (a window and the round it opened) went by, whole, without a
    /// request from `player`, when `windows` windows have opened.
    pub fn missed(&self, player: &str, windows: u64) -> u64 {
        let last = self.lock().players.get(player).copied().unwrap_or(0);
        windows.saturating_sub(last.saturating_add(1))
    }

    /// Whether `player` has been quiet for `[play] away_after_rounds` rounds.
    pub fn is_away(&self, player: &str, windows: u64) -> bool {
        self.missed(player, windows) >= self.away_after
    }

    /// Whether `session` has made a request since the `windows`-th window opened (its page
    /// is back at the betting stage).
    pub fn heard_in(&self, session: &SessionKey, windows: u64) -> bool {
        self.lock()
            .sessions
            .get(session)
            .is_some_and(|w| *w >= windows)
    }

    /// Why `player`'s place at the table was given up, if it was and they have not joined
    /// again.
    pub fn released(&self, player: &str) -> Option<Released> {
        self.lock().released.get(player).cloned()
    }

    /// `player` joined again: the note is read.
    pub fn forget_release(&self, player: &str) {
        self.lock().released.remove(player);
    }

    fn note_release(&self, player: &str, note: Released) {
        self.lock().released.insert(player.to_string(), note);
    }
}

impl Play {
    /// Whether money may move for `player` without them asking now (a followed double or
    /// split): their launch session is live and their page has not gone quiet. A database
    /// that does not answer says no.
    pub async fn in_session(&self, player: &str) -> bool {
        if self.presence.is_away(player, self.remote.windows_opened()) {
            return false;
        }
        matches!(
            super::sessions::ended(&self.pool, player, &self.table).await,
            Ok(None)
        )
    }
}

/// Whether `me` has a stake in the open window or the round in play (on `seats`, behind a
/// seat, on a common draw's boxes).
pub fn has_stake(snap: &Snapshot, me: &str, seats: &[SeatId]) -> bool {
    let in_play = !snap.round.settled && snap.round.number > 0;
    let at_seat = |s: SeatId| {
        snap.betting.bets.iter().any(|b| b.seat == s)
            || (in_play && snap.round.hands.iter().any(|h| h.seat == s))
    };
    let behind = |bets: &[SeatBets]| {
        bets.iter()
            .any(|b| b.behind.iter().any(|bb| bb.player == me))
    };
    seats.iter().copied().any(at_seat)
        || behind(&snap.betting.bets)
        || (in_play && behind(&snap.round.bets))
        || snap.betting.players.iter().any(|p| p.player == me)
        || (in_play && snap.common.hands.iter().any(|h| h.player == me))
}

/// Frees the places of players whose game session ended, at each betting window, until
/// the table stops: the window then waits for nobody who is gone, and nobody is staked or
/// timed on a seat whose player left. A player with a stake in the window (their own bet,
/// placed before the session ended) keeps the seat until the next window.
pub async fn run(play: Arc<Play>, table: TableHandle) {
    let mut sub = table.watch();
    let mut seen = 0;
    loop {
        let changed = tokio::time::timeout(Duration::from_secs(1), sub.changed()).await;
        if let Ok(Err(_)) = changed {
            return;
        }
        let windows = play.remote.windows_opened();
        if windows == seen || play.remote.betting().is_none() {
            continue;
        }
        seen = windows;
        for player in play.remote.players() {
            release_if_gone(&play, &table, &player, windows).await;
        }
    }
}

/// Frees `player`'s place if their game session ended and nothing of theirs is at stake.
async fn release_if_gone(play: &Play, table: &TableHandle, player: &str, windows: u64) {
    // Decided under the lock the players' money paths hold: not against a bet, a join or
    // a new session of theirs seen a moment ago.
    let _money = play.money.lock().await;
    let reason = if play.presence.is_away(player, windows) {
        Ended::Away
    } else {
        match super::sessions::ended(&play.pool, player, &play.table).await {
            Ok(Some(reason)) => reason,
            Ok(None) => return,
            Err(e) => {
                warn!(player, error = %e, "presence: the sessions could not be read; the seat stays");
                return;
            }
        }
    };
    let snap = table.snapshot();
    let seats = play.remote.seats_of(player);
    if has_stake(&snap, player, &seats) {
        return;
    }
    if let Err(e) = play.remote.leave(player).await {
        warn!(player, error = %e, "presence: the freed seat could not be recorded; the next start holds it again");
    }
    let rounds = play.presence.missed(player, windows);
    info!(
        player,
        ?seats,
        ?reason,
        rounds,
        round = snap.round.number,
        "the player's game session ended: their place at the table is freed"
    );
    play.presence.note_release(
        player,
        Released {
            seats,
            round: snap.round.number,
            reason,
            rounds,
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_player_is_away_after_whole_rounds_without_a_request() {
        let p = Presence::new(1);
        let (s1, s2) = ([1u8; 32], [2u8; 32]);
        // Heard during window 3: windows 3 and 4 are not whole rounds missed.
        p.heard("ann", &s1, 3);
        assert_eq!((p.missed("ann", 3), p.is_away("ann", 3)), (0, false));
        assert!(!p.is_away("ann", 4), "window 3's round may still be going");
        // Window 5 opens: the whole of window 4 and its round went by without a word.
        assert_eq!((p.missed("ann", 5), p.is_away("ann", 5)), (1, true));
        // Her page in window 3 is not back at the betting stage of window 4.
        assert!(p.heard_in(&s1, 3) && !p.heard_in(&s1, 4));
        // Another tab of hers, in window 5: she is back; that session is, the first not.
        p.heard("ann", &s2, 5);
        assert!(!p.is_away("ann", 6) && p.heard_in(&s2, 5) && !p.heard_in(&s1, 5));
        // Never heard (a seat kept across a restart): counted from the start.
        assert!(!p.is_away("bob", 1) && p.is_away("bob", 2));
        let patient = Presence::new(3);
        assert!(!patient.is_away("bob", 3) && patient.is_away("bob", 4));
    }
}
