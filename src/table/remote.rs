//! Remote players' seats and their windows: which seats players hold (kept in the table's
//! database, `remote_seats`, so a restart keeps them), the betting countdown, the decision
//! timer of the hand the table waits on, a player's request for a card, and the last close
//! of each window (its log position and time, which a late bet or decision is answered
//! with).
//!
//! The table task runs the windows on its clock (`table::clock`, `task/timers.rs`): it logs
//! the countdown's opening, closes it with a tick at its deadline, marks the seats held here
//! as timed in the bets that open the round, and ticks the engine at each decision's
//! deadline, where the engine plays the sheet's timeout rule. It writes each window here as
//! it opens and closes; the players' API (`web::play`) reads them to refuse what comes
//! late, and the demo dealer to know whose seats to leave to their players.
//!
//! The table task also publishes all of it to its staff ([`RemoteSeats::view`] in
//! `Snapshot::remote`, the dealer's panel). What the players' API changes here (a seat
//! taken or freed, a bet, a request for a card) wakes the table task
//! ([`RemoteSeats::changed`]), which publishes a fresh snapshot: the panel learns of a
//! request for a card the moment it is made, on a table without the demo dealer too.

use super::clock::TableClock;
use super::state::{
    HitRequest, RemotePlayerView, RemoteSeatView, RemoteView, RoundView, Snapshot, TimerView,
};
use crate::engine::{Expectation, SeatId};
use sqlx::SqlitePool;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `[play]` in `table.toml`: remote players (docs/src/remote-play.md).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlaySection {
    /// Let remote players join (`/play`, the players' API).
    pub enabled: bool,
    /// The betting countdown, seconds (1..=300).
    pub betting_seconds: u64,
    /// Each decision's timer, seconds (1..=300); at its end the sheet's timeout rule plays
    /// the hand (Deluxe: auto-play; an insurance question: declined).
    pub decision_seconds: u64,
    /// How long a launch link works, hours.
    pub launch_hours: u64,
    /// Show the player's page a clock of the time played since the session began (the
    /// regulated markets' session clock).
    pub session_clock: bool,
    /// The reality check: every this many minutes of a session the player's page stops
    /// to show the time played and the net result, and asks to continue or leave
    /// (0: never; at most 1,440).
    pub reality_check_minutes: u64,
    /// A player's game session ends when their page has not been heard from (no request on
    /// any player route) for this many rounds — a betting window and the round it opens —
    /// in a row: no automatic stake moves for them any more (a re-bet, a followed double or
    /// split) and their seats are freed; the page says why when they come back (1..=1000;
    /// the Ultimate sheet's "within the same game session": a round without the page).
    pub away_after_rounds: u64,
    /// The start of the launch links `croupier player add` prints (default: `http://` and
    /// `[http] bind`).
    pub base_url: Option<String>,
    /// `[play.http_wallet]`: the operator's seamless-wallet server (absent: the embedded
    /// ledger).
    pub http_wallet: Option<crate::wallet::http::HttpWalletSection>,
}

impl Default for PlaySection {
    fn default() -> PlaySection {
        PlaySection {
            enabled: true,
            betting_seconds: 15,
            decision_seconds: 20,
            launch_hours: 12,
            session_clock: true,
            reality_check_minutes: 60,
            away_after_rounds: 1,
            base_url: None,
            http_wallet: None,
        }
    }
}

impl PlaySection {
    /// The setting that cannot be used, as (key, why): the reality check's interval, the
    /// rounds after which a silent player is away.
    pub fn unusable(&self) -> Option<(&'static str, String)> {
        if self.reality_check_minutes > 1_440 {
            return Some((
                "reality_check_minutes",
                format!(
                    "play.reality_check_minutes = {}: at most 1440 (a day); 0 turns it off",
                    self.reality_check_minutes
                ),
            ));
        }
        (!(1..=1_000).contains(&self.away_after_rounds)).then(|| {
            (
                "away_after_rounds",
                format!(
                    "play.away_after_rounds = {}: between 1 and 1000 (a player silent that many rounds is away)",
                    self.away_after_rounds
                ),
            )
        })
    }

    /// The timers.
    pub fn timing(&self) -> Timing {
        Timing {
            betting: Duration::from_secs(self.betting_seconds.clamp(1, 300)),
            decision: Duration::from_secs(self.decision_seconds.clamp(1, 300)),
        }
    }
}

/// Remote play's timing settings (`[play]` in `table.toml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// The betting countdown.
    pub betting: Duration,
    /// The decision timer of each decision (insurance included).
    pub decision: Duration,
}

/// A window that closed: where the log stood, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Closed {
    /// The round it was for.
    pub round: u64,
    /// The log's sequence number of the close: the tick row that closed it (a betting
    /// countdown, a timed decision), or the last row before it (a late request that came
    /// before the tick was written).
    pub seq: u64,
    /// The close's time, Unix ms (for people).
    pub at_ms: i64,
    /// The close's time on the table's clock, ms (what the log holds).
    pub clock_ms: u64,
}

/// An open window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The round.
    pub round: u64,
    /// The seat (decisions only; 0 for betting).
    pub seat: SeatId,
    /// The log row that opened it (decisions: the snapshot's `seq` when it opened — a new
    /// card or decision opens a new window).
    pub at_seq: u64,
    /// When it closes (monotonic).
    pub deadline: Instant,
    /// When it closes, Unix ms (what players are shown).
    pub deadline_ms: i64,
    /// When it closes, on the table's clock.
    pub clock_ms: u64,
}

/// What a decision timer that ran out made the table do, as the player's page says it
/// (`GET /api/play/state` `timeouts`): the rule's decision, and once the table is done with
/// the hand (`done`: an auto-play's cards dealt, the hand standing) the cards it took after
/// the timer (`hits`) and what it ended on.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TimeoutView {
    /// The round.
    pub round: u64,
    /// The tick row that ran the timer out.
    pub seq: u64,
    /// The seat.
    pub seat: SeatId,
    /// The hand.
    pub hand: u8,
    /// What the timeout rule decided: `stand`, `auto_play` or `no_insurance`.
    pub action: crate::engine::Action,
    /// Whether the table is done with the hand (nothing more will be dealt to it).
    pub done: bool,
    /// The cards the hand took after the timer ran out (an auto-play's hits).
    pub hits: usize,
    /// The hand's cards now.
    pub cards: Vec<crate::cards::Card>,
    /// Their best total.
    pub total: u8,
    /// Whether an ace counts 11 in it.
    pub soft: bool,
}

impl TimedOut {
    /// What it made the table do, with the table at `round`, waiting for `expectation`.
    pub fn view(&self, round: &RoundView, expectation: &Expectation) -> TimeoutView {
        let hand = round
            .hands
            .iter()
            .find(|h| h.seat == self.seat && h.hand == self.hand);
        let is_it = |seat: &SeatId, hand: &u8| *seat == self.seat && *hand == self.hand;
        // An auto-play waits on the dealer's cards for the hand (at a seat a card is the
        // hit); the table is done with it once it waits on anything else.
        let waiting = match expectation {
            Expectation::Decision { seat, hand, .. } | Expectation::HandCard { seat, hand } => {
                is_it(seat, hand)
            }
            _ => false,
        };
        let on_hand = self.action != crate::engine::Action::NoInsurance;
        let cards = hand.map(|h| h.cards.clone()).unwrap_or_default();
        TimeoutView {
            round: self.round,
            seq: self.seq,
            seat: self.seat,
            hand: self.hand,
            action: self.action,
            done: !(on_hand && waiting && round.number == self.round && !round.settled),
            hits: if on_hand {
                cards.len().saturating_sub(self.cards)
            } else {
                0
            },
            cards,
            total: hand.map_or(0, |h| h.total),
            soft: hand.is_some_and(|h| h.soft),
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    seats: BTreeMap<SeatId, String>,
    /// Players at the table without a seat (betting behind; a common draw's players).
    present: BTreeSet<String>,
    betting: Option<Window>,
    bet: BTreeSet<SeatId>,
    /// Players without a seat who bet in the open window.
    bet_players: BTreeSet<String>,
    betting_closed: Option<Closed>,
    decision: Option<Window>,
    decision_closed: Option<Closed>,
    hit: Option<(SeatId, u64)>,
    /// How many betting windows have opened since the start (the players' presence is
    /// counted in them, `play::presence`).
    windows: u64,
    /// What each decision timer that ran out in the round in play made the table do.
    timed_out: Vec<TimedOut>,
}

/// What the table did when a remote player's decision timer ran out: the tick row's
/// decision for the hand (or the insurance question), and the hand as it was then. The
/// cards it took after (an auto-play's hits) are the hand's in the round view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimedOut {
    /// The round.
    pub round: u64,
    /// The tick row that ran the timer out.
    pub seq: u64,
    /// The seat.
    pub seat: SeatId,
    /// The hand.
    pub hand: u8,
    /// The player whose insurance question it was — behind the seat, or on a common
    /// draw's box (`None`: the seat's own).
    pub player: Option<String>,
    /// What the timeout rule decided: `stand`, `auto_play` or `no_insurance`.
    pub action: crate::engine::Action,
    /// The hand's cards when the timer ran out.
    pub cards: usize,
}

/// The registry, shared by the table task, the demo dealer and the players' API.
#[derive(Debug)]
pub struct RemoteSeats {
    timing: Timing,
    clock: Arc<TableClock>,
    /// The table's database, where the seats are kept (`None`: memory only, for tests).
    pool: Option<SqlitePool>,
    inner: Mutex<Inner>,
    /// Wakes the table task when the players' API changed something here.
    changed: tokio::sync::Notify,
}

/// A window the table does not time ends "never": a year from now.
const UNTIMED: u64 = 365 * 24 * 3600 * 1000;

/// Unix milliseconds now.
pub fn wall_ms() -> i64 {
    crate::wallet::now_ms()
}

/// Why a seat could not be taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeatError {
    /// Another player holds it.
    #[error("the seat is held by {0}")]
    Taken(String),
    /// The table's database did not take the change.
    #[error("the seat could not be recorded: {0}")]
    Store(String),
}

impl RemoteSeats {
    /// An empty registry on the table's clock, kept in memory only.
    pub fn new(timing: Timing, clock: Arc<TableClock>) -> RemoteSeats {
        RemoteSeats {
            timing,
            clock,
            pool: None,
            inner: Mutex::new(Inner::default()),
            changed: tokio::sync::Notify::new(),
        }
    }

    /// The registry kept in the table's database (migrated): the seats held before a
    /// restart are held again.
    pub async fn load(
        timing: Timing,
        clock: Arc<TableClock>,
        pool: SqlitePool,
    ) -> Result<RemoteSeats, sqlx::Error> {
        let rows: Vec<(i64, String)> =
            sqlx::query_as("SELECT seat, player FROM remote_seats ORDER BY seat")
                .fetch_all(&pool)
                .await?;
        let seats = rows
            .into_iter()
            .filter_map(|(seat, player)| Some((SeatId::try_from(seat).ok()?, player)))
            .collect();
        Ok(RemoteSeats {
            timing,
            clock,
            pool: Some(pool),
            inner: Mutex::new(Inner {
                seats,
                ..Inner::default()
            }),
            changed: tokio::sync::Notify::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Tells the table task that the players' API changed what its staff are shown.
    fn touch(&self) {
        // A permit is kept when the task is busy: the change is never missed.
        self.changed.notify_one();
    }

    /// Completes when the players' API has changed something since the last call (a
    /// seat, a bet, a request for a card): the table task then publishes again. The
    /// table task's own changes (the windows) do not wake it: it publishes after them.
    pub async fn changed(&self) {
        self.changed.notified().await;
    }

    /// Everything here as the table's staff see it (`Snapshot::remote`).
    pub fn view(&self) -> RemoteView {
        let i = self.lock();
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let timer = |w: &Window, length: Duration| TimerView {
            round: w.round,
            seat: w.seat,
            deadline_ms: w.deadline_ms,
            clock_ms: w.clock_ms,
            length_ms: ms(length),
        };
        RemoteView {
            seats: i
                .seats
                .iter()
                .map(|(&seat, player)| RemoteSeatView {
                    seat,
                    player: player.clone(),
                    bet: i.betting.is_some() && i.bet.contains(&seat),
                })
                .collect(),
            unseated: i
                .present
                .iter()
                .map(|player| RemotePlayerView {
                    player: player.clone(),
                    bet: i.betting.is_some() && i.bet_players.contains(player),
                })
                .collect(),
            countdown: i.betting.as_ref().map(|w| timer(w, self.timing.betting)),
            decision: i.decision.as_ref().map(|w| timer(w, self.timing.decision)),
            hit: i.hit.map(|(seat, at_seq)| HitRequest { seat, at_seq }),
        }
    }

    /// The settings.
    pub fn timing(&self) -> Timing {
        self.timing
    }

    /// The table's clock.
    pub fn clock(&self) -> &Arc<TableClock> {
        &self.clock
    }

    /// Seats `player` at `seat` (free, or theirs already), recorded before it is answered.
    pub async fn join(&self, seat: SeatId, player: &str) -> Result<(), SeatError> {
        if let Some(p) = self.lock().seats.get(&seat).filter(|p| *p != player) {
            return Err(SeatError::Taken(p.clone()));
        }
        if let Some(pool) = &self.pool {
            // The primary key refuses a second player on the seat, whoever raced first.
            let done = sqlx::query(
                "INSERT INTO remote_seats (seat, player) VALUES (?, ?) \
                 ON CONFLICT (seat) DO UPDATE SET player = excluded.player WHERE player = excluded.player",
            )
            .bind(i64::from(seat))
            .bind(player)
            .execute(pool)
            .await
            .map_err(|e| SeatError::Store(e.to_string()))?;
            if done.rows_affected() == 0 {
                let holder: Option<String> =
                    sqlx::query_scalar("SELECT player FROM remote_seats WHERE seat = ?")
                        .bind(i64::from(seat))
                        .fetch_optional(pool)
                        .await
                        .map_err(|e| SeatError::Store(e.to_string()))?;
                return Err(SeatError::Taken(holder.unwrap_or_default()));
            }
        }
        let mut i = self.lock();
        match i.seats.get(&seat) {
            Some(p) if p != player => Err(SeatError::Taken(p.clone())),
            _ => {
                i.seats.insert(seat, player.to_string());
                drop(i);
                self.touch();
                Ok(())
            }
        }
    }

    /// Frees `player`'s seats, every one (recorded first; memory follows even if the store fails, and
    /// the next start holds the seat again).
    pub async fn leave(&self, player: &str) -> Result<(), SeatError> {
        let result = match &self.pool {
            Some(pool) => sqlx::query("DELETE FROM remote_seats WHERE player = ?")
                .bind(player)
                .execute(pool)
                .await
                .map(|_| ())
                .map_err(|e| SeatError::Store(e.to_string())),
            None => Ok(()),
        };
        let mut i = self.lock();
        i.seats.retain(|_, p| p != player);
        i.present.remove(player);
        drop(i);
        self.touch();
        result
    }

    /// `player` is at the table without a seat: they bet behind seats, or on a common
    /// draw's boxes. The betting window waits for them as for a seated player. (Kept in
    /// memory only: after a restart the page joins again.)
    pub fn join_unseated(&self, player: &str) {
        if self.lock().present.insert(player.to_string()) {
            self.touch();
        }
    }

    /// Whether `player` is at the table without a seat.
    pub fn is_unseated(&self, player: &str) -> bool {
        self.lock().present.contains(player)
    }

    /// Whether any remote player is at the table (seated or not).
    pub fn anyone(&self) -> bool {
        let i = self.lock();
        !i.seats.is_empty() || !i.present.is_empty()
    }

    /// Every remote player at the table, seated or not.
    pub fn players(&self) -> BTreeSet<String> {
        let i = self.lock();
        i.seats.values().chain(i.present.iter()).cloned().collect()
    }

    /// Whether `player` plays here remotely (seated or not).
    pub fn is_remote_player(&self, player: &str) -> bool {
        let i = self.lock();
        i.present.contains(player) || i.seats.values().any(|p| p == player)
    }

    /// `player` (without a seat) has a bet in the window (or withdrew it).
    pub fn set_player_bet(&self, player: &str, placed: bool) {
        let mut i = self.lock();
        if placed {
            i.bet_players.insert(player.to_string());
        } else {
            i.bet_players.remove(player);
        }
        drop(i);
        self.touch();
    }

    /// The (lowest) seat `player` holds.
    pub fn seat_of(&self, player: &str) -> Option<SeatId> {
        self.seats_of(player).first().copied()
    }

    /// The seats `player` holds, lowest first (two where the variant lets a player hold
    /// two, `betting.seats_per_player`).
    pub fn seats_of(&self, player: &str) -> Vec<SeatId> {
        self.lock()
            .seats
            .iter()
            .filter(|(_, p)| *p == player)
            .map(|(s, _)| *s)
            .collect()
    }

    /// Who holds each seat.
    pub fn seats(&self) -> BTreeMap<SeatId, String> {
        self.lock().seats.clone()
    }

    /// Whether `seat` is a remote player's.
    pub fn is_remote(&self, seat: SeatId) -> bool {
        self.lock().seats.contains_key(&seat)
    }

    /// A window ending at `clock_ms` on the table's clock.
    pub fn window(&self, round: u64, seat: SeatId, at_seq: u64, clock_ms: u64) -> Window {
        Window {
            round,
            seat,
            at_seq,
            deadline: self.clock.instant_at(clock_ms),
            deadline_ms: self.clock.wall_ms_at(clock_ms),
            clock_ms,
        }
    }

    /// A close at `clock_ms`, row `seq`.
    pub fn closed(&self, round: u64, seq: u64, clock_ms: u64) -> Closed {
        Closed {
            round,
            seq,
            at_ms: self.clock.wall_ms_at(clock_ms),
            clock_ms,
        }
    }

    /// The table opened (`Some`) or closed (`None`) the betting countdown.
    pub fn set_betting(&self, window: Option<Window>, closed: Option<Closed>) {
        let mut i = self.lock();
        if window.map(|w| w.round) != i.betting.map(|w| w.round) {
            i.bet.clear();
            i.bet_players.clear();
        }
        let key = |w: Option<Window>| w.map(|w| (w.round, w.at_seq));
        if window.is_some() && key(window) != key(i.betting) {
            i.windows += 1;
        }
        i.betting = window;
        if closed.is_some() {
            i.betting_closed = closed;
        }
    }

    /// The open betting window.
    pub fn betting(&self) -> Option<Window> {
        self.lock().betting
    }

    /// How many betting windows have opened since the start (the one open now included).
    pub fn windows_opened(&self) -> u64 {
        self.lock().windows
    }

    /// `seat` has a bet in the window (or withdrew it).
    pub fn set_bet(&self, seat: SeatId, placed: bool) {
        let mut i = self.lock();
        if placed {
            i.bet.insert(seat);
        } else {
            i.bet.remove(&seat);
        }
        drop(i);
        self.touch();
    }

    /// Whether every remote player (seated or not) has bet in the open window (the demo
    /// dealer then closes it early).
    pub fn all_bet(&self) -> bool {
        let i = self.lock();
        i.betting.is_some()
            && i.seats.keys().all(|s| i.bet.contains(s))
            && i.present.iter().all(|p| i.bet_players.contains(p))
    }

    /// The last betting close.
    pub fn betting_closed(&self) -> Option<Closed> {
        self.lock().betting_closed
    }

    /// The table's wait on a remote seat's decision opened (`Some`) or ended (`None`);
    /// `closed`: it ended by its timer.
    pub fn set_decision(&self, window: Option<Window>, closed: Option<Closed>) {
        let mut i = self.lock();
        i.decision = window;
        if closed.is_some() {
            // The timeout played the hand: a request for a card is moot.
            i.hit = None;
            i.decision_closed = closed;
        }
    }

    /// The decision window for `seat` while the table is at `snap`: the table's, or — for
    /// a seat the round does not time (it joined after the bets) — one that never closes.
    pub fn decision_window(&self, snap: &Snapshot, seat: SeatId) -> Window {
        match self.lock().decision {
            // Seat 0: insurance, which every timed seat answers within one window.
            Some(w) if (w.seat == seat || w.seat == 0) && w.round == snap.round.number => w,
            _ => {
                let never = self.clock.now_ms().saturating_add(UNTIMED);
                self.window(snap.round.number, seat, snap.seq, never)
            }
        }
    }

    /// The last decision close.
    pub fn decision_closed(&self) -> Option<Closed> {
        self.lock().decision_closed
    }

    /// Row `seq` of `round` was written with `events`: the decisions its timeouts made for
    /// remote players (`view`: the round after it, for the hands' cards then). A new round
    /// forgets the last one's.
    pub fn note_timeouts(
        &self,
        round: u64,
        seq: u64,
        events: &[crate::engine::Event],
        view: &RoundView,
    ) {
        use crate::engine::Event;
        let mut i = self.lock();
        i.timed_out.retain(|t| t.round == round);
        if !events.iter().any(|e| matches!(e, Event::DecisionTimeout)) {
            return;
        }
        let cards = |seat: SeatId, hand: u8| {
            view.hands
                .iter()
                .find(|h| h.seat == seat && h.hand == hand)
                .map_or(0, |h| h.cards.len())
        };
        for e in events {
            let (seat, hand, player, action) = match e {
                Event::Decided { seat, hand, action } if i.seats.contains_key(seat) => {
                    (*seat, *hand, None, *action)
                }
                Event::PlayerDecided {
                    player,
                    seat,
                    hand,
                    action: action @ crate::engine::Action::NoInsurance,
                } => (*seat, *hand, Some(player.to_string()), *action),
                _ => continue,
            };
            let noted = TimedOut {
                round,
                seq,
                seat,
                hand,
                player,
                action,
                cards: cards(seat, hand),
            };
            i.timed_out.push(noted);
        }
    }

    /// What the decision timers that ran out in the round in play made the table do.
    pub fn timed_out(&self) -> Vec<TimedOut> {
        self.lock().timed_out.clone()
    }

    /// The player at `seat` asks for a card (at a seat, a card is the hit).
    pub fn request_hit(&self, seat: SeatId, at_seq: u64) {
        self.lock().hit = Some((seat, at_seq));
        self.touch();
    }

    /// The table moved on after a row (`events`, then waiting for `expectation`): a
    /// request for a card is consumed once a card or a decision reached its seat, or the
    /// table no longer waits on that seat's decision (its timer played the hand, the
    /// round ended). The dealer who deals the card needs nothing else.
    pub fn settle_hit(&self, events: &[crate::engine::Event], expectation: &Expectation) {
        use crate::engine::{Event, Place};
        let mut i = self.lock();
        let Some((seat, _)) = i.hit else { return };
        let reached = events.iter().any(|e| match e {
            Event::CardDealt {
                to: Place::Hand { seat: s, .. },
                ..
            }
            | Event::Decided { seat: s, .. } => *s == seat,
            Event::DecisionTimeout | Event::RoundSettled(_) => true,
            _ => false,
        });
        let waiting = matches!(expectation, Expectation::Decision { seat: s, .. } if *s == seat);
        if reached || !waiting {
            i.hit = None;
        }
    }

    /// Takes a pending request for a card for `seat` at log position `at_seq`.
    pub fn take_hit(&self, seat: SeatId, at_seq: u64) -> bool {
        let mut i = self.lock();
        if i.hit == Some((seat, at_seq)) {
            i.hit = None;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn seats_are_kept_in_the_tables_database_across_a_restart() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("t.db");
        let timing = PlaySection::default().timing();
        let clock = Arc::new(TableClock::new());
        let pool = crate::auth::open_pool(&db).await.expect("pool");
        let seats = RemoteSeats::load(timing, Arc::clone(&clock), pool.clone())
            .await
            .expect("load");
        seats.join(4, "alice").await.expect("free");
        seats.join(4, "alice").await.expect("hers already");
        seats.join(5, "bob").await.expect("free");
        assert_eq!(
            seats.join(4, "bob").await,
            Err(SeatError::Taken("alice".into()))
        );
        seats.leave("bob").await.expect("left");
        drop(seats);
        // Another process (a restart) reads the same rows.
        let again = RemoteSeats::load(timing, clock, pool).await.expect("load");
        assert_eq!(again.seats(), BTreeMap::from([(4, "alice".to_string())]));
        assert_eq!(
            again.join(4, "carol").await,
            Err(SeatError::Taken("alice".into()))
        );
    }
    #[tokio::test]
    async fn a_timeout_says_what_the_table_did_once_it_is_done_with_the_hand() {
        use crate::engine::{Action, Event, Place};
        let clock = Arc::new(TableClock::new());
        let seats = RemoteSeats::new(PlaySection::default().timing(), clock);
        seats.join(4, "alice").await.expect("free");
        let card = |c: &str| c.parse::<crate::cards::Card>().expect("card");
        let mut round = RoundView::default();
        for e in [
            Event::RoundOpened { round: 7 },
            Event::CardDealt {
                card: card("5H"),
                to: Place::Hand { seat: 4, hand: 0 },
            },
            Event::CardDealt {
                card: card("3D"),
                to: Place::Hand { seat: 4, hand: 0 },
            },
        ] {
            round.on_event(&e);
        }
        // Seat 5 is not a remote player's: its decisions are nobody's timeout here.
        let tick = [
            Event::DecisionTimeout,
            Event::Decided {
                seat: 4,
                hand: 0,
                action: Action::AutoPlay,
            },
            Event::Decided {
                seat: 5,
                hand: 0,
                action: Action::Stand,
            },
        ];
        seats.note_timeouts(7, 30, &tick, &round);
        let noted = seats.timed_out();
        assert_eq!(noted.len(), 1, "{noted:?}");
        // The auto-play waits on the dealer's cards for the hand: not done yet.
        let hitting = decision(4);
        let v = noted[0].view(&round, &hitting);
        assert_eq!((v.action, v.done, v.hits), (Action::AutoPlay, false, 0));
        // Two hits, then the hand stands: the table waits on the dealer.
        for c in ["2C", "4D"] {
            round.on_event(&Event::CardDealt {
                card: card(c),
                to: Place::Hand { seat: 4, hand: 0 },
            });
        }
        let v = noted[0].view(&round, &Expectation::DealerCard);
        assert_eq!((v.done, v.hits, v.cards.len(), v.seq), (true, 2, 4, 30));
        // Rows without a timeout keep them; the next round forgets them.
        seats.note_timeouts(7, 31, &[], &round);
        assert_eq!(seats.timed_out().len(), 1);
        seats.note_timeouts(8, 40, &[], &round);
        assert!(seats.timed_out().is_empty());
    }

    fn decision(seat: SeatId) -> Expectation {
        Expectation::Decision {
            seat,
            hand: 0,
            allowed: vec![crate::engine::Action::Stand],
        }
    }

    #[tokio::test]
    async fn the_staffs_view_shows_seats_bets_windows_and_a_card_asked_for_until_it_is_dealt() {
        let timing = Timing {
            betting: Duration::from_secs(15),
            decision: Duration::from_secs(20),
        };
        let clock = Arc::new(TableClock::new());
        let seats = RemoteSeats::new(timing, Arc::clone(&clock));
        assert_eq!(seats.view(), RemoteView::default());
        seats.join(4, "alice").await.expect("free");
        // The players' API's change wakes the table task (a permit is kept meanwhile).
        tokio::time::timeout(Duration::from_secs(1), seats.changed())
            .await
            .expect("woken");
        seats.join_unseated("bob");

        // The countdown: its deadline on the wall clock, its length, who has bet.
        let now = clock.now_ms();
        let betting = seats.window(7, 0, 10, now + 15_000);
        seats.set_betting(Some(betting), None);
        seats.set_bet(4, true);
        let v = seats.view();
        let countdown = v.countdown.expect("open");
        assert_eq!((countdown.round, countdown.seat), (7, 0));
        assert_eq!(countdown.clock_ms, now + 15_000);
        assert!((countdown.deadline_ms - clock.wall_ms_at(now + 15_000)).abs() < 1_000);
        assert_eq!(countdown.length_ms, 15_000);
        assert_eq!(
            v.seats,
            vec![RemoteSeatView {
                seat: 4,
                player: "alice".into(),
                bet: true
            }]
        );
        assert_eq!(
            v.unseated,
            vec![RemotePlayerView {
                player: "bob".into(),
                bet: false
            }]
        );
        seats.set_betting(None, Some(seats.closed(7, 11, now + 15_000)));
        let v = seats.view();
        assert_eq!(v.countdown, None);
        assert!(!v.seats[0].bet, "no window, no bet in it");

        // The decision timer of seat 4, and its request for a card.
        seats.set_decision(Some(seats.window(7, 4, 14, now + 20_000)), None);
        seats.request_hit(4, 14);
        let v = seats.view();
        assert_eq!(v.decision.map(|d| (d.seat, d.length_ms)), Some((4, 20_000)));
        assert_eq!(
            v.hit,
            Some(HitRequest {
                seat: 4,
                at_seq: 14
            })
        );
        // Another seat's card, or a row that leaves seat 4 deciding, keeps it.
        let other = crate::engine::Event::CardDealt {
            card: "2C".parse().expect("card"),
            to: crate::engine::Place::Hand { seat: 5, hand: 0 },
        };
        seats.settle_hit(&[other], &decision(4));
        seats.settle_hit(&[], &decision(4));
        assert!(seats.view().hit.is_some());
        // The card the dealer deals to seat 4 consumes it.
        let card = crate::engine::Event::CardDealt {
            card: "2C".parse().expect("card"),
            to: crate::engine::Place::Hand { seat: 4, hand: 0 },
        };
        seats.settle_hit(&[card], &decision(4));
        assert_eq!(seats.view().hit, None);
        // So does the table moving on without it (the timer played the hand).
        seats.request_hit(4, 15);
        seats.settle_hit(&[], &Expectation::DealerCard);
        assert_eq!(seats.view().hit, None);
    }
}
