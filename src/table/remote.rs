//! Remote players' seats and their windows: which seats players hold, the betting
//! countdown, the decision timer of the hand the table waits on, a player's request for a
//! card, and the last close of each window (its log position and time, which a late bet or
//! decision is answered with).
//!
//! The demo dealer (`demo.rs`) runs the windows: it opens the betting window with a
//! countdown, closes it when the countdown ends (or every remote player has bet), waits on
//! a remote seat's decision until its timer ends and then plays the sheet's timeout rule.
//! The players' API (`web::play`) reads the windows to refuse what comes late.

use super::state::Snapshot;
use crate::engine::SeatId;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// `[play]` in `table.toml`: remote players (README "Remote play").
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
            base_url: None,
            http_wallet: None,
        }
    }
}

impl PlaySection {
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

/// A window that closed: where the log stood, and when (Unix ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Closed {
    /// The round it was for.
    pub round: u64,
    /// The log's sequence number at the close (for the betting window: the row that opened
    /// the round; for a decision: the last row before the timer ran out).
    pub seq: u64,
    /// The table's time of the close, Unix ms.
    pub at_ms: i64,
}

/// An open window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The round.
    pub round: u64,
    /// The seat (decisions only; 0 for betting).
    pub seat: SeatId,
    /// What it waits on (decisions: the snapshot's `seq` when it opened — a new card or
    /// decision opens a new window).
    pub at_seq: u64,
    /// When it closes (monotonic).
    pub deadline: Instant,
    /// When it closes, Unix ms (what players are shown).
    pub deadline_ms: i64,
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
}

/// The registry, shared by the demo dealer and the players' API.
#[derive(Debug)]
pub struct RemoteSeats {
    timing: Timing,
    inner: Mutex<Inner>,
}

/// Unix milliseconds now.
pub fn wall_ms() -> i64 {
    crate::wallet::now_ms()
}

impl RemoteSeats {
    /// An empty registry.
    pub fn new(timing: Timing) -> RemoteSeats {
        RemoteSeats {
            timing,
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The settings.
    pub fn timing(&self) -> Timing {
        self.timing
    }

    /// Seats `player` at `seat` (free, or theirs already). `Err`: who holds it.
    pub fn join(&self, seat: SeatId, player: &str) -> Result<(), String> {
        let mut i = self.lock();
        match i.seats.get(&seat) {
            Some(p) if p != player => Err(p.clone()),
            _ => {
                i.seats.insert(seat, player.to_string());
                Ok(())
            }
        }
    }

    /// Frees `player`'s seat (or their place without one).
    pub fn leave(&self, player: &str) {
        let mut i = self.lock();
        i.seats.retain(|_, p| p != player);
        i.present.remove(player);
    }

    /// `player` is at the table without a seat: they bet behind seats, or on a common
    /// draw's boxes. The betting window waits for them as for a seated player.
    pub fn join_unseated(&self, player: &str) {
        self.lock().present.insert(player.to_string());
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

    /// `player` (without a seat) has a bet in the window (or withdrew it).
    pub fn set_player_bet(&self, player: &str, placed: bool) {
        let mut i = self.lock();
        if placed {
            i.bet_players.insert(player.to_string());
        } else {
            i.bet_players.remove(player);
        }
    }

    /// The seat `player` holds.
    pub fn seat_of(&self, player: &str) -> Option<SeatId> {
        self.lock()
            .seats
            .iter()
            .find(|(_, p)| *p == player)
            .map(|(s, _)| *s)
    }

    /// Who holds each seat.
    pub fn seats(&self) -> BTreeMap<SeatId, String> {
        self.lock().seats.clone()
    }

    /// Whether `seat` is a remote player's.
    pub fn is_remote(&self, seat: SeatId) -> bool {
        self.lock().seats.contains_key(&seat)
    }

    /// Opens the betting countdown for `round`.
    pub fn open_betting(&self, round: u64, at_seq: u64) -> Window {
        let w = Window {
            round,
            seat: 0,
            at_seq,
            deadline: Instant::now() + self.timing.betting,
            deadline_ms: wall_ms() + ms(self.timing.betting),
        };
        let mut i = self.lock();
        i.betting = Some(w);
        i.bet.clear();
        i.bet_players.clear();
        w
    }

    /// The open betting window.
    pub fn betting(&self) -> Option<Window> {
        self.lock().betting
    }

    /// `seat` has a bet in the window (or withdrew it).
    pub fn set_bet(&self, seat: SeatId, placed: bool) {
        let mut i = self.lock();
        if placed {
            i.bet.insert(seat);
        } else {
            i.bet.remove(&seat);
        }
    }

    /// Whether the countdown is over, or every remote player (seated or not) has bet.
    pub fn betting_done(&self) -> bool {
        let i = self.lock();
        match i.betting {
            None => true,
            Some(w) => {
                Instant::now() >= w.deadline
                    || (i.seats.keys().all(|s| i.bet.contains(s))
                        && i.present.iter().all(|p| i.bet_players.contains(p)))
            }
        }
    }

    /// The betting window closed at `seq`.
    pub fn close_betting(&self, seq: u64) {
        let mut i = self.lock();
        if let Some(w) = i.betting.take() {
            i.betting_closed = Some(Closed {
                round: w.round,
                seq,
                at_ms: wall_ms(),
            });
        }
        i.bet.clear();
        i.bet_players.clear();
    }

    /// The last betting close.
    pub fn betting_closed(&self) -> Option<Closed> {
        self.lock().betting_closed
    }

    /// The decision window for `seat` while the table is at `snap` (opened on first ask,
    /// a new one whenever the log has moved on).
    pub fn decision_window(&self, snap: &Snapshot, seat: SeatId) -> Window {
        let mut i = self.lock();
        match i.decision {
            Some(w) if w.seat == seat && w.at_seq == snap.seq && w.round == snap.round.number => w,
            _ => {
                let w = Window {
                    round: snap.round.number,
                    seat,
                    at_seq: snap.seq,
                    deadline: Instant::now() + self.timing.decision,
                    deadline_ms: wall_ms() + ms(self.timing.decision),
                };
                i.decision = Some(w);
                w
            }
        }
    }

    /// One window for everyone a step waits on (a common draw's decision step or
    /// insurance, keyed by the engine's deadline for it; players behind seats answering
    /// insurance, key 0): answers inside the step keep it, a new step opens a new one.
    pub fn step_window(&self, round: u64, step: u64) -> Window {
        let mut i = self.lock();
        match i.decision {
            Some(w) if w.seat == 0 && w.at_seq == step && w.round == round => w,
            _ => {
                let w = Window {
                    round,
                    seat: 0,
                    at_seq: step,
                    deadline: Instant::now() + self.timing.decision,
                    deadline_ms: wall_ms() + ms(self.timing.decision),
                };
                i.decision = Some(w);
                w
            }
        }
    }

    /// The open decision window, if it is still open for `seat` at `snap`.
    pub fn open_decision(&self, snap: &Snapshot, seat: SeatId) -> Option<Window> {
        let i = self.lock();
        i.decision.filter(|w| {
            w.seat == seat
                && w.at_seq == snap.seq
                && w.round == snap.round.number
                && Instant::now() < w.deadline
        })
    }

    /// The decision window ran out: recorded as closed at the log position it waited at.
    pub fn close_decision(&self) -> Option<Closed> {
        let mut i = self.lock();
        let w = i.decision.take()?;
        let c = Closed {
            round: w.round,
            seq: w.at_seq,
            at_ms: w.deadline_ms,
        };
        i.decision_closed = Some(c);
        i.hit = None;
        Some(c)
    }

    /// The last decision close.
    pub fn decision_closed(&self) -> Option<Closed> {
        self.lock().decision_closed
    }

    /// The player at `seat` asks for a card (at a seat, a card is the hit).
    pub fn request_hit(&self, seat: SeatId, at_seq: u64) {
        self.lock().hit = Some((seat, at_seq));
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

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
