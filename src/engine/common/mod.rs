//! The common draw (Multi-hand Blackjack): any number of players share each box's cards.
//!
//! The boxes (1 or 3) are dealt once, like seats; every player's hand on a box starts with
//! the box's two cards. Play then goes in *steps*: every current hand (one per player box;
//! split hands play in turn) decides — `hit` is an explicit decision here — until all have
//! decided or the decision timer runs out. At the timeout the two-strike rule applies: a
//! player with more than one hand to decide may let the first timer pass; otherwise (or the
//! second time in a row) each undecided hand gets the automatic action, right to left: with
//! `hit_on_timeout`, a hit below hard 12 or soft 17, else stand. The next card out of the shoe
//! then goes to every hand that asked for one; if none did, it is burned. Time enters only as
//! `Tick` inputs; a step's deadline is the last tick's time plus the timer.

use super::io::{Action, Code, Event, EventSink, Place, PlayerBets, PlayerId, Rejection, SeatId};
use super::rules::{
    after_card, dealer_rules_draw, double_hand, hand_depends_on_dealer, initial_deal_target,
    may_double, may_split, may_surrender, player_natural, side_bets_need_second_card, split_hand,
};
use super::state::{
    reject, Engine, Hand, HandState, Handled, Insurance, Phase, PlayerPlay, SeatPlay,
};
use super::variant::{FirstStrike, InsuranceStrikes};
use crate::cards::{Card, Rank};
use crate::money::Amount;
use smallvec::SmallVec;

/// A hand that owes a decision in a common draw's open step.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OpenDecision {
    /// The player.
    pub player: String,
    /// The box.
    pub seat: SeatId,
    /// The hand within the player's box.
    pub hand: u8,
    /// Its best total.
    pub total: u8,
    /// Whether an ace counts 11 in `total`.
    pub soft: bool,
    /// The decisions it may take.
    pub allowed: Vec<Action>,
}

/// One player's hand on a box in a common draw (for players' pages).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlayerHand {
    /// The player.
    pub player: String,
    /// The box.
    pub seat: SeatId,
    /// The hand within the player's box.
    pub hand: u8,
    /// Its cards (the box's two, then what it drew).
    pub cards: Vec<Card>,
    /// Its best total.
    pub total: u8,
    /// Everything staked on it.
    pub stake: Amount,
    /// Whether it is still in play (it may decide or take a card).
    pub live: bool,
}

/// The hand a box is playing now: split hands play in turn.
fn current(sp: &SeatPlay) -> Option<usize> {
    sp.hands
        .iter()
        .position(|h| matches!(h.state, HandState::Live | HandState::AwaitingDoubleCard))
}

/// Whether a current hand still owes a decision this step.
fn needs_decision(h: &Hand) -> bool {
    h.state == HandState::Live && h.cards.len() >= 2 && !h.hit_requested
}

/// Whether a current hand takes the next card.
fn wants_card(h: &Hand) -> bool {
    h.state == HandState::AwaitingDoubleCard
        || (h.state == HandState::Live && (h.hit_requested || h.cards.len() < 2))
}

impl Engine {
    fn timer_ms(&self) -> u64 {
        self.variant.timers.as_ref().map_or(0, |t| t.decision_ms)
    }

    fn player_index(&self, player: &str) -> Option<usize> {
        self.common
            .players
            .binary_search_by(|p| (*p.id).cmp(player))
            .ok()
    }

    fn current_hands(&self) -> impl Iterator<Item = &Hand> {
        self.common
            .players
            .iter()
            .flat_map(|p| p.boxes.iter())
            .filter_map(|sp| current(sp).map(|i| &sp.hands[i]))
    }

    /// Hands still owing a decision in the open step.
    pub(crate) fn common_pending_decisions(&self) -> usize {
        self.common.undecided
    }

    /// Marks the hands that owe a decision in the step now opening, and counts them.
    fn mark_step(&mut self) -> usize {
        let mut owing = 0;
        for sp in self
            .common
            .players
            .iter_mut()
            .flat_map(|p| p.boxes.iter_mut())
        {
            let current = current(sp);
            for (i, h) in sp.hands.iter_mut().enumerate() {
                h.in_step = Some(i) == current && needs_decision(h);
                owing += usize::from(h.in_step);
            }
        }
        owing
    }

    /// Hands that take the next card (0: it will be burned).
    pub(crate) fn common_wanting_card(&self) -> usize {
        self.current_hands().filter(|h| wants_card(h)).count()
    }

    /// Player boxes whose insurance question is open.
    pub(crate) fn common_pending_insurance(&self) -> usize {
        self.common
            .players
            .iter()
            .flat_map(|p| p.boxes.iter())
            .filter(|sp| sp.insurance == Insurance::Pending)
            .count()
    }

    /// Every hand owing a decision in the open step, with what it may do (for panels,
    /// seat terminals and simulated players).
    pub fn open_decisions(&self) -> Vec<OpenDecision> {
        if self.phase != Phase::Deciding {
            return Vec::new();
        }
        let v = &*self.variant;
        let up = self.round.dealer[0];
        let mut out = Vec::new();
        for p in &self.common.players {
            for sp in &p.boxes {
                let Some(hi) = current(sp) else { continue };
                let h = &sp.hands[hi];
                if !needs_decision(h) {
                    continue;
                }
                let insured = matches!(sp.insurance, Insurance::Bought(_));
                let mut allowed = vec![Action::Hit, Action::Stand];
                if may_double(v, h) {
                    allowed.push(Action::Double);
                }
                if may_split(v, h, sp.hands.len(), insured) {
                    allowed.push(Action::Split);
                }
                if may_surrender(v, h, sp.hands.len(), up) {
                    allowed.push(Action::Surrender);
                }
                let total = h.cards.total(v.hand.ace);
                out.push(OpenDecision {
                    player: p.id.to_string(),
                    seat: sp.seat,
                    hand: hi as u8,
                    total: total.best,
                    soft: total.soft,
                    allowed,
                });
            }
        }
        out
    }

    /// Every player's hands in the round, player by player, box by box.
    pub fn player_hands(&self) -> Vec<PlayerHand> {
        let ace = self.variant.hand.ace;
        let mut out = Vec::new();
        for p in &self.common.players {
            for sp in &p.boxes {
                for (hi, h) in sp.hands.iter().enumerate() {
                    if h.state == HandState::NoBet {
                        continue;
                    }
                    out.push(PlayerHand {
                        player: p.id.to_string(),
                        seat: sp.seat,
                        // At most 4 hands a box (validated variant).
                        hand: hi as u8,
                        cards: h.cards.to_vec(),
                        total: h.cards.total(ace).best,
                        stake: h.stake,
                        live: matches!(h.state, HandState::Live | HandState::AwaitingDoubleCard),
                    });
                }
            }
        }
        out
    }

    /// Every player box's side bets staked this round, as (player, box, total), boxes
    /// without any left out. They stay staked after they are settled (a 21+3 at the first
    /// three cards), so a player's stake in the round is these plus the hands' stakes.
    pub fn player_specials(&self) -> Vec<(String, SeatId, Amount)> {
        self.common
            .players
            .iter()
            .flat_map(|p| {
                p.boxes.iter().filter_map(|sp| {
                    let total: Amount = sp.side.iter().map(|(_, stake)| *stake).sum();
                    (total > 0).then(|| (p.id.to_string(), sp.seat, total))
                })
            })
            .collect()
    }

    /// Every player box whose insurance question is open.
    pub fn open_insurance(&self) -> Vec<(String, SeatId)> {
        self.common
            .players
            .iter()
            .flat_map(|p| {
                p.boxes
                    .iter()
                    .filter(|sp| sp.insurance == Insurance::Pending)
                    .map(|sp| (p.id.to_string(), sp.seat))
            })
            .collect()
    }

    /// When the open step times out, on the table's tick clock.
    pub(crate) fn common_deadline(&self) -> u64 {
        self.common.deadline
    }

    // ----- betting ----------------------------------------------------------------------

    #[inline(never)]
    pub(crate) fn on_player_bets(
        &mut self,
        bets: &[PlayerBets],
        events: &mut impl EventSink,
    ) -> Handled {
        self.check_bets_open()?;
        if bets.is_empty() {
            return reject(
                Code::InvalidBet,
                "no bets: a round needs at least one player",
            );
        }
        let mut players: Vec<PlayerPlay> = Vec::with_capacity(bets.len());
        let mut scratch = Vec::new();
        let mut boxes_bet = Vec::new();
        for pb in bets {
            if pb.player.is_empty() {
                return reject(Code::InvalidBet, "a player needs a non-empty id");
            }
            if pb
                .boxes
                .iter()
                .any(|b| b.player.is_some() || !b.behind.is_empty())
            {
                return reject(
                    Code::InvalidBet,
                    format!(
                        "player {}: a common draw has no seated players or bets behind",
                        pb.player
                    ),
                );
            }
            let let_it_play = pb.boxes.iter().any(|b| b.let_it_play);
            let boxes = if let_it_play {
                boxes_bet.clear();
                for b in &pb.boxes {
                    let mut b = b.clone();
                    if b.let_it_play {
                        b.main = self.let_it_play_bet(&pb.player, b.seat)?;
                    }
                    boxes_bet.push(b);
                }
                &boxes_bet[..]
            } else {
                &pb.boxes[..]
            };
            self.validate_bets(boxes, &mut scratch).map_err(|r| {
                Rejection::new(r.code, format!("player {}: {}", pb.player, r.message))
            })?;
            players.push(PlayerPlay {
                id: PlayerId::from(pb.player.as_str()),
                boxes: scratch.drain(..).collect(),
            });
        }
        players.sort_by(|a, b| a.id.cmp(&b.id));
        if let Some(w) = players.windows(2).find(|w| w[0].id == w[1].id) {
            return reject(Code::InvalidBet, format!("player {} bet twice", w[0].id));
        }
        let seat_order = self.variant.deal.seat_order;
        let mut boxes: SmallVec<[(SeatId, SmallVec<[Card; 2]>); 3]> = (1..=self.variant.deal.seats)
            .map(|b| (b, SmallVec::new()))
            .collect();
        if seat_order == super::variant::SeatOrder::Descending {
            boxes.reverse();
        }
        self.open_round(events);
        self.common.players = players;
        self.common.boxes = boxes;
        self.common.burned.clear();
        self.common.insurance_struck = false;
        Ok(())
    }

    /// The main bet "Let it play" places on a box: what it returned last round.
    fn let_it_play_bet(&self, player: &str, seat: SeatId) -> Result<Amount, Rejection> {
        let max = self.variant.betting.let_it_play_max;
        if max == 0 {
            return reject(Code::InvalidBet, "this game has no Let it play");
        }
        let win = self
            .common
            .last_wins
            .iter()
            .find(|((p, s), _)| &**p == player && *s == seat)
            .map(|(_, w)| *w);
        match win {
            None => reject(
                Code::InvalidBet,
                format!(
                    "player {player}, box {seat}: Let it play needs a win on this box last round"
                ),
            ),
            Some(w) if w > max => reject(
                Code::InvalidBet,
                format!(
                    "player {player}, box {seat}: Let it play would bet {w}, over its limit {max}"
                ),
            ),
            Some(w) => Ok(w),
        }
    }

    /// Records what each player box won last round (Let it play may bet it).
    pub(crate) fn remember_wins(&mut self, result: &super::io::RoundResult) {
        self.common.last_wins.clear();
        for b in &result.bets {
            if let (Some(player), super::io::BetKind::Main) = (&b.player, &b.kind) {
                if b.returned > b.staked {
                    self.common
                        .last_wins
                        .insert((PlayerId::clone(player), b.seat), b.returned);
                }
            }
        }
    }

    // ----- cards ------------------------------------------------------------------------

    /// The place the common draw's initial deal `step` goes to (every box is dealt).
    pub(crate) fn common_deal_target(&self, step: u8) -> Option<Place> {
        let boxes = &self.common.boxes;
        initial_deal_target(boxes.len(), step, self.variant.deal.dealer_cards, |i| {
            boxes[i].0
        })
    }

    pub(crate) fn common_card(&mut self, card: Card, events: &mut impl EventSink) -> Handled {
        match self.phase {
            Phase::Dealing(step) => {
                let to = self.common_deal_target(step).unwrap_or(Place::Dealer);
                match to {
                    Place::Hand { seat, .. } => {
                        if let Some((_, cards)) = self.common.boxes.iter_mut().find(|(b, _)| *b == seat) {
                            cards.push(card);
                        }
                    }
                    _ => self.round.dealer.push(card),
                }
                self.shoe.take(card);
                events.push(Event::CardDealt { card, to });
                if self.common_deal_target(step + 1).is_some() {
                    self.phase = Phase::Dealing(step + 1);
                } else {
                    self.common_initial_deal_done(events);
                }
                Ok(())
            }
            Phase::Drawing => {
                self.shoe.take(card);
                let v = &*self.variant;
                let mut given = 0usize;
                for p in &mut self.common.players {
                    for sp in &mut p.boxes {
                        let Some(i) = current(sp) else { continue };
                        let h = &mut sp.hands[i];
                        if !wants_card(h) {
                            continue;
                        }
                        h.cards.push(card);
                        h.hit_requested = false;
                        h.state = after_card(v, h, h.state);
                        given += 1;
                    }
                }
                if given == 0 {
                    self.common.burned.push(card);
                    events.push(Event::Burned { card });
                } else {
                    events.push(Event::CardDrawn { card, hands: given });
                }
                self.open_step(events);
                Ok(())
            }
            Phase::Deciding => reject(
                Code::CardNotExpected,
                format!(
                    "{card}: {} hand(s) are still deciding; the card comes when all have decided or the timer runs out",
                    self.common_pending_decisions()
                ),
            ),
            Phase::Insurance => reject(
                Code::CardNotExpected,
                format!("{card}: insurance is open until every box has answered or the timer runs out"),
            ),
            Phase::Dealer => {
                self.round.dealer.push(card);
                self.shoe.take(card);
                events.push(Event::CardDealt { card, to: Place::Dealer });
                if !self.common_dealer_must_draw() {
                    self.settle_when_ready(events);
                }
                Ok(())
            }
            _ => reject(Code::CardNotExpected, format!("{card}: no card is due")),
        }
    }

    fn common_initial_deal_done(&mut self, events: &mut impl EventSink) {
        let v = &*self.variant;
        let up = self.round.dealer[0];
        let offer = v.insurance.offered && up.rank == Rank::Ace;
        let boxes = &self.common.boxes;
        for p in &mut self.common.players {
            for sp in &mut p.boxes {
                let Some((_, cards)) = boxes.iter().find(|(b, _)| *b == sp.seat) else {
                    continue;
                };
                let h = &mut sp.hands[0];
                h.cards.extend(cards.iter().copied());
                if h.state == HandState::NoBet {
                    continue;
                }
                if h.cards.total(v.hand.ace).best == 21 {
                    h.state = HandState::Stood;
                }
                if offer {
                    sp.insurance = Insurance::Pending;
                }
            }
        }
        if offer && self.common_pending_insurance() > 0 {
            self.common.deadline = self.common.now + self.timer_ms();
            self.common.armed += 1;
            self.phase = Phase::Insurance;
        } else {
            self.common_begin_play(events);
        }
    }

    fn common_begin_play(&mut self, events: &mut impl EventSink) {
        if !self.peek(events) {
            self.open_step(events);
        }
    }

    /// Opens the next decision step, or moves on to the card or the dealer.
    fn open_step(&mut self, events: &mut impl EventSink) {
        self.common.undecided = self.mark_step();
        if self.common.undecided > 0 {
            self.common.deadline = self.common.now + self.timer_ms();
            self.common.armed += 1;
            self.phase = Phase::Deciding;
        } else if self.common_wanting_card() > 0 {
            self.phase = Phase::Drawing;
        } else if self.common_dealer_must_draw() {
            self.phase = Phase::Dealer;
        } else {
            self.settle_when_ready(events);
        }
    }

    /// After a decision: once no hand owes one, the step closes.
    fn close_step_if_decided(&mut self, events: &mut impl EventSink) {
        if self.common_pending_decisions() == 0 {
            self.open_step(events);
        }
    }

    // ----- decisions --------------------------------------------------------------------

    #[inline(never)]
    pub(crate) fn on_player_decision(
        &mut self,
        player: &str,
        seat: SeatId,
        action: Action,
        events: &mut impl EventSink,
    ) -> Handled {
        let Some(pi) = self.player_index(player) else {
            return reject(
                Code::NotYourTurn,
                format!("player {player} has no bet in this round"),
            );
        };
        let Some(bi) = self.common.players[pi]
            .boxes
            .iter()
            .position(|b| b.seat == seat)
        else {
            return reject(
                Code::NotYourTurn,
                format!("player {player} has no bet on box {seat}"),
            );
        };
        if action.is_insurance_answer() {
            return self.player_insurance(pi, bi, action, events);
        }
        if self.phase != Phase::Deciding {
            let why = match self.phase {
                Phase::Insurance => "insurance is open",
                Phase::Drawing => "the step is closed: the next card is due",
                _ => "no decision is due",
            };
            return reject(
                Code::ActionNotAllowed,
                format!("player {player}, box {seat}: {why}"),
            );
        }
        let v = &*self.variant;
        let up = self.round.dealer[0];
        let sp = &self.common.players[pi].boxes[bi];
        let Some(hi) = current(sp) else {
            return reject(
                Code::ActionNotAllowed,
                format!("player {player}, box {seat}: the hand is finished"),
            );
        };
        let h = &sp.hands[hi];
        if !needs_decision(h) {
            return reject(
                Code::ActionNotAllowed,
                format!("player {player}, box {seat}: already decided for this card"),
            );
        }
        let insured = matches!(sp.insurance, Insurance::Bought(_));
        let allowed = match action {
            Action::Hit | Action::Stand => true,
            Action::Double => may_double(v, h),
            Action::Split => may_split(v, h, sp.hands.len(), insured),
            Action::Surrender => may_surrender(v, h, sp.hands.len(), up),
            _ => false,
        };
        if !allowed {
            return reject(
                Code::ActionNotAllowed,
                format!(
                    "player {player}, box {seat}, hand {}: cannot {}",
                    hi + 1,
                    action.name()
                ),
            );
        }
        let sp = &mut self.common.players[pi].boxes[bi];
        let main = sp.main;
        let h = &mut sp.hands[hi];
        h.strikes = 0;
        match action {
            Action::Hit => h.hit_requested = true,
            Action::Stand => h.state = HandState::Stood,
            Action::Surrender => h.state = HandState::Surrendered,
            Action::Double => double_hand(h, main),
            Action::Split => split_hand(&mut sp.hands, hi, main),
            _ => {}
        }
        events.push(Event::PlayerDecided {
            player: PlayerId::clone(&self.common.players[pi].id),
            seat,
            hand: hi as u8,
            action,
        });
        // A split's first hand now waits for its card; every other decision is final too.
        self.common.undecided -= 1;
        self.close_step_if_decided(events);
        Ok(())
    }

    fn player_insurance(
        &mut self,
        pi: usize,
        bi: usize,
        action: Action,
        events: &mut impl EventSink,
    ) -> Handled {
        let v = &*self.variant;
        let p = &self.common.players[pi];
        let sp = &p.boxes[bi];
        let who = format!("player {}, box {}", p.id, sp.seat);
        if self.phase != Phase::Insurance || sp.insurance != Insurance::Pending {
            return reject(
                Code::ActionNotAllowed,
                format!("{who}: no insurance question is open"),
            );
        }
        let answer = match action {
            Action::Insurance => match v.insurance.cost.fraction_of(sp.main) {
                cost if cost > 0 => Insurance::Bought(cost),
                _ => {
                    return reject(
                        Code::ActionNotAllowed,
                        format!("{who}: the bet is too small to insure"),
                    )
                }
            },
            Action::EvenMoney if v.insurance.even_money && player_natural(v, &sp.hands[0]) => {
                Insurance::EvenMoney
            }
            Action::EvenMoney => {
                return reject(
                    Code::ActionNotAllowed,
                    format!("{who}: even money is only for a natural"),
                )
            }
            _ => Insurance::Declined,
        };
        let (player, seat) = (p.id.clone(), sp.seat);
        let sp = &mut self.common.players[pi].boxes[bi];
        sp.insurance = answer;
        if answer == Insurance::EvenMoney {
            sp.hands[0].state = HandState::EvenMoney;
        }
        events.push(Event::PlayerDecided {
            player,
            seat,
            hand: 0,
            action,
        });
        if self.common_pending_insurance() == 0 {
            self.common_close_insurance(events);
        }
        Ok(())
    }

    fn common_close_insurance(&mut self, events: &mut impl EventSink) {
        for sp in self
            .common
            .players
            .iter_mut()
            .flat_map(|p| p.boxes.iter_mut())
        {
            if sp.insurance == Insurance::Pending {
                sp.insurance = Insurance::Declined;
            }
        }
        events.push(Event::InsuranceClosed);
        self.common_begin_play(events);
    }

    // ----- time -------------------------------------------------------------------------

    #[inline(never)]
    pub(crate) fn on_tick(&mut self, now_ms: u64, events: &mut impl EventSink) {
        // The clock only moves forward: a late tick changes nothing.
        self.common.now = self.common.now.max(now_ms);
        if self.common.now < self.common.deadline {
            return;
        }
        match self.phase {
            Phase::Insurance => self.common_insurance_timeout(events),
            Phase::Deciding => self.decision_timeout(events),
            _ => {}
        }
    }

    /// The insurance question ran out: declined for every box still pending, except under
    /// `timers.insurance_timeout = "two_strike"` the first time, when a player with more
    /// than one box pending is asked again on a new timer (the others declined).
    fn common_insurance_timeout(&mut self, events: &mut impl EventSink) {
        let two_strike = self
            .variant
            .timers
            .as_ref()
            .is_some_and(|t| t.insurance_timeout == InsuranceStrikes::TwoStrike);
        let pending = |p: &PlayerPlay| {
            p.boxes
                .iter()
                .filter(|sp| sp.insurance == Insurance::Pending)
                .count()
        };
        if two_strike
            && !self.common.insurance_struck
            && self.common.players.iter().any(|p| pending(p) > 1)
        {
            self.common.insurance_struck = true;
            events.push(Event::DecisionTimeout);
            for p in &mut self.common.players {
                if pending(p) > 1 {
                    continue;
                }
                for sp in &mut p.boxes {
                    if sp.insurance == Insurance::Pending {
                        sp.insurance = Insurance::Declined;
                    }
                }
            }
            self.common.deadline = self.common.now + self.timer_ms();
            self.common.armed += 1;
            return;
        }
        self.common_close_insurance(events);
    }

    /// The decision timer ran out: the two-strike rule, then the automatic actions.
    fn decision_timeout(&mut self, events: &mut impl EventSink) {
        let v = &*self.variant;
        let hit_on_timeout = v.timers.as_ref().is_some_and(|t| t.hit_on_timeout);
        events.push(Event::DecisionTimeout);
        for p in &mut self.common.players {
            // Hands that owed a decision when the step began, decided since or not.
            let requiring = p
                .boxes
                .iter()
                .flat_map(|sp| sp.hands.iter())
                .filter(|h| h.in_step)
                .count();
            let undecided: SmallVec<[usize; 3]> = (0..p.boxes.len())
                .filter(|&b| {
                    current(&p.boxes[b]).is_some_and(|i| needs_decision(&p.boxes[b].hands[i]))
                })
                .collect();
            let first_strike = requiring > 1
                && undecided.iter().all(|&b| {
                    let sp = &p.boxes[b];
                    current(sp).is_some_and(|i| sp.hands[i].strikes == 0)
                });
            // Right to left: the highest box first.
            for &b in undecided.iter().rev() {
                let sp = &mut p.boxes[b];
                let Some(i) = current(sp) else { continue };
                let h = &mut sp.hands[i];
                if first_strike {
                    h.strikes += 1;
                    continue;
                }
                let t = h.cards.total(v.hand.ace);
                let hit = hit_on_timeout && ((!t.soft && t.best < 12) || (t.soft && t.best < 17));
                h.strikes = 0;
                let action = if hit {
                    h.hit_requested = true;
                    Action::Hit
                } else {
                    h.state = HandState::Stood;
                    Action::Stand
                };
                events.push(Event::PlayerDecided {
                    player: p.id.clone(),
                    seat: sp.seat,
                    hand: i as u8,
                    action,
                });
            }
        }
        // The card comes now, whether any hand asked for it or not (then it is burned) —
        // unless the variant reads a first strike as another decision at once.
        self.common.undecided = self.current_hands().filter(|h| needs_decision(h)).count();
        let burn = self.common.undecided > 0
            && v.timers
                .as_ref()
                .is_none_or(|t| t.first_strike == FirstStrike::BurnCard);
        if self.common_wanting_card() > 0 || burn {
            self.phase = Phase::Drawing;
        } else {
            self.open_step(events);
        }
    }

    // ----- the dealer -------------------------------------------------------------------

    pub(crate) fn common_dealer_must_draw(&self) -> bool {
        let v = &*self.variant;
        let d = &self.round.dealer;
        if !dealer_rules_draw(v, d) {
            return false;
        }
        if v.dealer.always_draws {
            return true;
        }
        let natural_open = !self.round.peeked_clear
            && d.len() < v.hand.natural.cards()
            && d.natural_still_possible();
        self.common
            .players
            .iter()
            .flat_map(|p| p.boxes.iter())
            .any(|sp| {
                (d.len() < 2 && side_bets_need_second_card(v, &sp.side))
                    || (matches!(sp.insurance, Insurance::Bought(_)) && natural_open)
                    || sp
                        .hands
                        .iter()
                        .any(|h| hand_depends_on_dealer(v, h, natural_open))
            })
    }
}
