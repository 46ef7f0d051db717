//! Bets on a seat-by-seat round: seated players' main and side bets, bets behind, and the
//! two-seat rule, all checked before the round opens.

use super::io::{Code, EventSink, PlayerId, Rejection, SeatBets};
use super::state::{
    reject, BehindPlay, Bonus, Engine, Hand, HandState, Handled, Insurance, SeatPlay,
};
use super::variant::{DealMode, SideWithoutMain};
use crate::money::Amount;
use smallvec::SmallVec;

/// The longest decision timer a seat's bets may carry, ms (five minutes).
const MAX_TIMER_MS: u64 = 300_000;

/// `a == b`, the plain fields first: a seat without side bets, bets behind or a named
/// player (every simulated round) is compared without walking its lists.
#[inline]
fn same_bets(a: &[SeatBets], b: &[SeatBets]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_seat_bets(x, y))
}

#[inline]
fn same_seat_bets(x: &SeatBets, y: &SeatBets) -> bool {
    // Every field named: a field added to `SeatBets` must be added here.
    let SeatBets {
        seat,
        main,
        side,
        player,
        behind,
        let_it_play,
        timer_ms,
    } = x;
    let plain = *seat == y.seat
        && *main == y.main
        && *timer_ms == y.timer_ms
        && *let_it_play == y.let_it_play
        && side.len() == y.side.len()
        && behind.len() == y.behind.len();
    if !plain {
        return false;
    }
    let lists = !side.is_empty() || !behind.is_empty() || player.is_some() || y.player.is_some();
    !lists || same_lists(x, y)
}

/// The whole comparison, for seats with lists or a named player.
#[cold]
#[inline(never)]
fn same_lists(x: &SeatBets, y: &SeatBets) -> bool {
    x == y
}

impl Engine {
    #[inline(never)]
    pub(super) fn on_bets(&mut self, bets: &[SeatBets], events: &mut impl EventSink) -> Handled {
        self.check_bets_open()?;
        // Bets equal to those the round's seats were built from pass validation again
        // (it reads only the bets and the variant): the seats are reset in place.
        if !self.last_bets.0.is_empty() && same_bets(&self.last_bets.0, bets) {
            self.reopen_with_last_bets(events);
            return Ok(());
        }
        let mut seats = std::mem::take(&mut self.spare_seats);
        if let Err(r) = self.validate_bets(bets, &mut seats) {
            self.spare_seats = seats;
            return Err(r);
        }
        // The last round's seats become the next spare buffer: no allocation per round.
        self.spare_seats = std::mem::replace(&mut self.round.seats, seats);
        self.last_bets.0 = bets.to_vec();
        self.open_round(events);
        Ok(())
    }

    /// The last round's bets again: what `on_bets` does with bets equal to the last
    /// round's, without building or comparing them (the simulator bets the same every
    /// round). Refused before any round has been bet.
    #[inline(never)]
    pub(super) fn on_repeat_bets(&mut self, events: &mut impl EventSink) -> Handled {
        self.check_bets_open()?;
        if self.last_bets.0.is_empty() {
            return reject(
                Code::InvalidBet,
                "no bets to repeat: no round has been bet yet",
            );
        }
        self.reopen_with_last_bets(events);
        Ok(())
    }

    /// Opens a round on the seats of the last one, reset in place: bets equal to those the
    /// seats were built from pass validation again (it reads only the bets and the
    /// variant).
    fn reopen_with_last_bets(&mut self, events: &mut impl EventSink) {
        self.reopen_seats();
        #[cfg(debug_assertions)]
        {
            let mut fresh = Vec::new();
            debug_assert!(self.validate_bets(&self.last_bets.0, &mut fresh).is_ok());
            debug_assert_eq!(fresh, self.round.seats, "seats reset in place");
        }
        self.open_round(events);
    }

    /// Returns the last round's seats to what `validate_bets` builds from the same bets:
    /// one hand, no cards, nothing bought or drawn (what a round changes in a seat).
    fn reopen_seats(&mut self) {
        for sp in &mut self.round.seats {
            sp.hands.truncate(1);
            if let Some(h) = sp.hands.first_mut() {
                h.cards.clear();
                h.stake = sp.main;
                h.doubles = 0;
                h.from_split = false;
                h.split_aces = false;
                h.hit_requested = false;
                h.strikes = 0;
                h.in_step = false;
                if h.state != HandState::NoBet {
                    h.state = HandState::Live;
                }
            }
            sp.insurance = Insurance::NotOffered;
            sp.bonus = Bonus::None;
            sp.auto_play = false;
            sp.resuming = false;
            for b in &mut sp.behind {
                b.insurance = Insurance::NotOffered;
            }
        }
    }

    /// Checks the bets and fills `seats` (cleared first) with the round's seats.
    pub(crate) fn validate_bets(&self, bets: &[SeatBets], seats: &mut Vec<SeatPlay>) -> Handled {
        let v = &self.variant;
        if bets.is_empty() {
            return reject(Code::InvalidBet, "no bets: a round needs at least one seat");
        }
        seats.clear();
        for b in bets {
            if b.seat == 0 || b.seat > v.deal.seats {
                return reject(
                    Code::InvalidBet,
                    format!(
                        "seat {} does not exist: seats are 1 to {}",
                        b.seat, v.deal.seats
                    ),
                );
            }
            if seats.iter().any(|s| s.seat == b.seat) {
                return reject(Code::InvalidBet, format!("seat {} bet twice", b.seat));
            }
            let limits = v.limits;
            let side_only = b.main == 0
                && !b.side.is_empty()
                && v.betting.side_bets_without_main == SideWithoutMain::Allowed;
            if b.let_it_play && v.deal.mode != DealMode::CommonDraw {
                return reject(
                    Code::InvalidBet,
                    format!("seat {}: Let it play belongs to a common draw", b.seat),
                );
            }
            // A Let-it-play bet is capped by its own limit (checked by the common draw).
            if !side_only && !b.let_it_play && (b.main < limits.min || b.main > limits.max) {
                return reject(
                    Code::InvalidBet,
                    format!(
                        "seat {}: main bet {} is outside the limits {} to {}",
                        b.seat, b.main, limits.min, limits.max
                    ),
                );
            }
            let behind_timer = b.behind.iter().map(|x| x.timer_ms).max().unwrap_or(0);
            if b.timer_ms.max(behind_timer) > MAX_TIMER_MS
                || (b.timer_ms > 0 && v.deal.mode == DealMode::CommonDraw)
            {
                return reject(
                    Code::InvalidBet,
                    format!(
                        "seat {}: a decision timer is 1 to {MAX_TIMER_MS} ms, at a seat-by-seat game (a common draw's is [timers])",
                        b.seat
                    ),
                );
            }
            let side = self.validate_side_bets(&|| format!("seat {}", b.seat), b.main, &b.side)?;
            if !b.behind.is_empty() && (!v.betting.play_behind || side_only) {
                return reject(
                    Code::InvalidBet,
                    format!("seat {}: no bets behind here (the game has no play-behind, or the seat has no main bet)", b.seat),
                );
            }
            let mut behind = Vec::with_capacity(b.behind.len());
            for bb in &b.behind {
                let who = format!("{} behind seat {}", bb.player, b.seat);
                if bb.player.is_empty() {
                    return reject(
                        Code::InvalidBet,
                        format!("seat {}: a player behind needs an id", b.seat),
                    );
                }
                if b.player.as_deref() == Some(bb.player.as_str()) {
                    return reject(
                        Code::InvalidBet,
                        format!("{who}: a seated player cannot play behind their own seat"),
                    );
                }
                if behind.iter().any(|p: &BehindPlay| *p.player == *bb.player) {
                    return reject(Code::InvalidBet, format!("{who}: bet twice"));
                }
                if bb.main < limits.min || bb.main > limits.max {
                    return reject(
                        Code::InvalidBet,
                        format!(
                            "{who}: main bet {} is outside the limits {} to {}",
                            bb.main, limits.min, limits.max
                        ),
                    );
                }
                behind.push(BehindPlay {
                    player: PlayerId::from(bb.player.as_str()),
                    main: bb.main,
                    side: self.validate_side_bets(&|| who.clone(), bb.main, &bb.side)?,
                    follow_double: bb.follow_double,
                    follow_split: bb.follow_split,
                    insurance: Insurance::NotOffered,
                    timer_ms: bb.timer_ms,
                    unfollowed: SmallVec::new(),
                });
            }
            if let Some(player) = &b.player {
                let mut same = bets
                    .iter()
                    .filter(|o| o.player.as_deref() == Some(player.as_str()));
                let held = same.clone().count();
                if held > 2 {
                    return reject(
                        Code::InvalidBet,
                        format!("player {player} holds {held} seats: at most two"),
                    );
                }
                if same.any(|o| o.main != b.main) {
                    return reject(
                        Code::InvalidBet,
                        format!("player {player}: both seats must carry the same main bet"),
                    );
                }
            }
            let mut hands = super::state::Hands::new();
            hands.push(Hand {
                cards: Default::default(),
                stake: b.main,
                doubles: 0,
                from_split: false,
                split_aces: false,
                hit_requested: false,
                strikes: 0,
                in_step: false,
                state: if side_only {
                    HandState::NoBet
                } else {
                    HandState::Live
                },
            });
            seats.push(SeatPlay {
                seat: b.seat,
                main: b.main,
                side,
                hands,
                insurance: Insurance::NotOffered,
                bonus: Bonus::None,
                player: b.player.clone(),
                behind,
                auto_play: false,
                timer_ms: b.timer_ms,
                resuming: false,
            });
        }
        seats.sort_by_key(|s| s.seat);
        if v.deal.seat_order == super::variant::SeatOrder::Descending {
            seats.reverse();
        }
        Ok(())
    }

    /// Checks one bettor's side bets against the variant: known, within limits, placed with
    /// what they require.
    pub(super) fn validate_side_bets(
        &self,
        who: &dyn Fn() -> String,
        main: Amount,
        bets: &[(String, Amount)],
    ) -> Result<SmallVec<[(u8, Amount); 2]>, Rejection> {
        let v = &self.variant;
        let mut side: SmallVec<[(u8, Amount); 2]> = SmallVec::new();
        if bets.is_empty() {
            return Ok(side);
        }
        for (name, amount) in bets {
            let Some(index) = v.side_bet_index(name) else {
                let offered: Vec<&str> = v.side_bets.iter().map(|s| s.name.as_str()).collect();
                return reject(
                    Code::InvalidBet,
                    format!(
                        "{}: this game has no {name:?} bet (side bets: {offered:?})",
                        who()
                    ),
                );
            };
            let limits = v.side_bets[index].limits;
            if v.betting.side_bets_without_main == SideWithoutMain::UpToMain && *amount > main {
                return reject(
                    Code::InvalidBet,
                    format!("{}: {name} bet {amount} is over the main bet {main}", who()),
                );
            }
            if *amount < limits.min || *amount > limits.max {
                return reject(
                    Code::InvalidBet,
                    format!(
                        "{}: {name} bet {amount} is outside the limits {} to {}",
                        who(),
                        limits.min,
                        limits.max
                    ),
                );
            }
            // At most 16 side bets fit a u8 index many times over; the variant file is
            // validated, so this cannot truncate.
            let index = u8::try_from(index).unwrap_or(u8::MAX);
            if side.iter().any(|(i, _)| *i == index) {
                return reject(Code::InvalidBet, format!("{}: {name} bet twice", who()));
            }
            side.push((index, *amount));
        }
        for &(index, _) in &side {
            let rules = &v.side_bets[usize::from(index)];
            if let Some(required) = &rules.requires_bet {
                let placed = side
                    .iter()
                    .any(|(j, _)| v.side_bets[usize::from(*j)].name == *required);
                if !placed {
                    return reject(
                        Code::InvalidBet,
                        format!("{}: a {} bet needs a {required} bet too", who(), rules.name),
                    );
                }
            }
        }
        Ok(side)
    }
}
