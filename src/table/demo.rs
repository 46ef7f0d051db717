//! The built-in demo (`[demo] players = true`): players who bet and decide through the
//! same input path as the seat terminals' API, and a dealer who deals from the simulated
//! shoe whenever the table expects a card and starts a new shoe when one is finished.
//!
//! It only ever acts on what the published snapshot says the table expects, so it is a
//! subscriber like any other and never touches the engine.

use super::config::DemoSection;
use super::remote::RemoteSeats;
use super::state::{Snapshot, TableState};
use super::task::{SubmitError, TableHandle};
use crate::cards::Card;
use crate::engine::{Action, Engine, Event, Expectation, Input, SeatBets, SeatId, Variant};
use crate::money::Amount;
use crate::store::Source;
use croupier_drivers::sim::deck::shuffled_shoe;
use croupier_drivers::sim::SimShoe;
use croupier_drivers::ShoeItem;
use std::sync::Arc;
use std::time::Duration;
use tracing::warn;

/// A seat's main bet and nothing else (`None` only if the engine's bet type stopped
/// reading that shape).
pub fn main_bet(seat: SeatId, main: Amount) -> Option<SeatBets> {
    // Through serde rather than a struct literal: the bet gains optional fields (players,
    // bets behind) in the engine's multi-hand work, all defaulted when absent.
    serde_json::from_value(serde_json::json!({ "seat": seat, "main": main, "side": [] })).ok()
}

/// How the demo's fresh shoes are made.
#[derive(Debug, Clone, Copy)]
pub struct ShoeMaking {
    /// Decks in a shoe (`[shoe.sim] decks`, else the game's).
    pub decks: u8,
    /// Where the cut card goes, as a share of the shoe (`[shoe.sim] penetration`).
    pub penetration: f64,
}

impl ShoeMaking {
    /// The table's `[shoe.sim]` for `variant` (a deck count of 0 is the game's).
    pub fn of(sim: &crate::table::config::SimSection, variant: &Variant) -> ShoeMaking {
        ShoeMaking {
            decks: match sim.decks {
                0 => variant.shoe.decks,
                n => n,
            },
            penetration: sim.penetration,
        }
    }
}

/// The demo's players and dealer.
pub struct Demo {
    rng: fastrand::Rng,
    /// Remote players' seats and windows (`[play]`).
    remote: Option<Arc<RemoteSeats>>,
    handle: TableHandle,
    sim: Arc<SimShoe>,
    variant: Arc<Variant>,
    config: DemoSection,
    shoe: ShoeMaking,
}

impl Demo {
    /// A demo over `handle`, dealing from `sim`.
    pub fn new(
        handle: TableHandle,
        sim: Arc<SimShoe>,
        variant: Arc<Variant>,
        config: DemoSection,
        shoe: ShoeMaking,
        seed: u64,
    ) -> Demo {
        Demo {
            handle,
            sim,
            variant,
            config,
            shoe,
            rng: fastrand::Rng::with_seed(seed),
            remote: None,
        }
    }

    /// Deals for remote players too: their seats are left free and their choices to them
    /// (the table runs the countdown and the decision timers, `task/timers.rs`).
    pub fn with_remote(mut self, remote: Arc<RemoteSeats>) -> Demo {
        self.remote = Some(remote);
        self
    }

    /// A freshly shuffled shoe for the simulator (no cut card if the game has none).
    pub fn fresh_shoe(
        variant: &Variant,
        shoe: ShoeMaking,
        rng: &mut fastrand::Rng,
    ) -> Vec<ShoeItem> {
        let mut items = shuffled_shoe(shoe.decks, shoe.penetration, rng).unwrap_or_default();
        if !variant.shoe.cut_card {
            items.retain(|i| *i != ShoeItem::CutCard);
        }
        items
    }

    /// The rest of the shoe in play after the logged `inputs`: every card the engine has
    /// not seen out of the current shoe, shuffled, with the cut card where it belongs if it
    /// has not come out. `None` when the log is empty or the shoe is finished. After a
    /// restart the simulator continues the same shoe, so the engine never sees a card it
    /// knows is exhausted.
    pub fn continue_shoe<'a>(
        variant: &Arc<Variant>,
        inputs: impl IntoIterator<Item = &'a Input>,
        penetration: f64,
        rng: &mut fastrand::Rng,
    ) -> Option<Vec<ShoeItem>> {
        let mut engine = Engine::new(Arc::clone(variant));
        let mut events = Vec::new();
        let mut out = [0u8; 52];
        let mut cut_seen = false;
        let mut any = false;
        for input in inputs {
            any = true;
            events.clear();
            if engine.apply(input, &mut events).is_err() {
                return None;
            }
            for event in &events {
                match event {
                    Event::ShoeShuffled { .. } => {
                        out = [0; 52];
                        cut_seen = false;
                    }
                    Event::CardDealt { card, .. } | Event::Burned { card } => {
                        out[card.index()] = out[card.index()].saturating_add(1);
                    }
                    Event::CutCard => cut_seen = true,
                    _ => {}
                }
            }
        }
        if !any || engine.expectation() == Expectation::Shuffle {
            return None;
        }
        let decks = variant.shoe.decks;
        let mut items: Vec<ShoeItem> = (0..52)
            .flat_map(|i| {
                let left = decks.saturating_sub(out[i]);
                Card::from_index(i)
                    .map(ShoeItem::Card)
                    .into_iter()
                    .cycle()
                    .take(usize::from(left))
            })
            .collect();
        rng.shuffle(&mut items);
        if variant.shoe.cut_card && !cut_seen && !items.is_empty() {
            let total = usize::from(decks) * 52;
            let dealt = total - items.len();
            let cut_at = (total as f64 * penetration).round() as usize;
            let at = cut_at.saturating_sub(dealt).clamp(1, items.len());
            items.insert(at, ShoeItem::CutCard);
        }
        Some(items)
    }

    async fn reload(&mut self) {
        let items = Demo::fresh_shoe(&self.variant, self.shoe, &mut self.rng);
        if let Err(e) = self.sim.load(items).await {
            warn!(error = %e, "demo: cannot load the simulated shoe");
        }
    }

    /// Plays until the table stops.
    pub async fn run(mut self) {
        let pace = Duration::from_millis(self.config.pace_ms);
        let mut watch = self.handle.watch();
        let mut shoe = self.handle.snapshot().shoe.number;
        // Its own timerfd: tokio's timer would wake the runtime twice for every action.
        let alarm = crate::clock::Alarm::new();
        loop {
            alarm.sleep(pace).await;
            let snap = Arc::clone(&watch.borrow_and_update());
            if snap.shoe.number != shoe {
                shoe = snap.shoe.number;
                self.reload().await;
            }
            if snap.state != TableState::Open {
                if watch.changed().await.is_err() {
                    return;
                }
                continue;
            }
            let before = snap.seq;
            match self.act(&snap).await {
                Ok(true) => {}
                Ok(false) => continue,
                Err(SubmitError::Stopped) => return,
                Err(e) => warn!(error = %e, "demo: input refused"),
            }
            // Wait for the table to take it (a card goes through the serial link).
            let waited = tokio::time::timeout(
                Duration::from_secs(5),
                watch.wait_for(|s| s.seq > before || s.state != TableState::Open),
            )
            .await;
            match waited {
                Ok(Ok(_)) => {}
                Ok(Err(_)) => return,
                Err(_) => warn!("demo: the table did not take the last action within 5 s"),
            }
        }
    }

    /// A demo player's bets on `seat`: a multiple of the usual bet (players bet different
    /// amounts), and each side bet, at a fifth of the usual bet within its limits, with
    /// `[demo] side_bets` percent chance —
    /// never one whose required bet was left out.
    fn seat_bet(&mut self, seat: SeatId) -> Option<SeatBets> {
        let limits = self.variant.limits;
        let main = self.config.bet.saturating_mul(self.rng.i64(1..=4));
        let mut bet = main_bet(seat, main.clamp(limits.min, limits.max))?;
        let chance = u32::from(self.config.side_bets);
        let mut side: Vec<&crate::engine::variant::SideBetRules> = self
            .variant
            .side_bets
            .iter()
            .filter(|_| self.rng.u32(0..100) < chance)
            .collect();
        // Dropping one may leave another without its requirement: until nothing changes.
        loop {
            let before = side.len();
            let names: Vec<&str> = side.iter().map(|sb| sb.name.as_str()).collect();
            side.retain(|sb| {
                sb.requires_bet
                    .as_deref()
                    .is_none_or(|r| names.contains(&r))
            });
            if side.len() == before {
                break;
            }
        }
        bet.side = side
            .into_iter()
            .map(|sb| {
                let amount = (self.config.bet / 5).clamp(sb.limits.min, sb.limits.max);
                (sb.name.clone(), amount)
            })
            .collect();
        Some(bet)
    }

    /// Does the next thing the table expects. `Ok(false)`: nothing done.
    async fn act(&mut self, snap: &Snapshot) -> Result<bool, SubmitError> {
        if let Some(remote) = self.remote.clone() {
            if let Some(done) = self.act_remote(&remote, snap).await {
                return done;
            }
        }
        let input = match &snap.expectation {
            // The last round's dispute window is open: the next round waits for it.
            Expectation::Bets if snap.provisional.is_some() => return Ok(false),
            Expectation::Bets => {
                let seats = self.config.seats.min(self.variant.deal.seats);
                // Players bet different amounts, in multiples of the usual bet.
                let bets = (1..=seats).filter_map(|seat| self.seat_bet(seat)).collect();
                Input::Bets(bets)
            }
            Expectation::Shuffle => Input::Shuffle,
            Expectation::InsuranceAnswers { .. } => match snap.insurance_seats.first() {
                Some(&seat) => Input::Decision {
                    seat,
                    action: Action::NoInsurance,
                },
                None => return Ok(false),
            },
            Expectation::Decision {
                seat,
                hand,
                allowed,
            } => {
                let h = snap
                    .round
                    .hands
                    .iter()
                    .find(|h| h.seat == *seat && h.hand == *hand);
                let total = h.map_or(0, |h| h.total);
                let pair =
                    h.is_some_and(|h| h.cards.len() == 2 && h.cards[0].rank == h.cards[1].rank);
                let pick = if pair && allowed.contains(&Action::Split) && self.rng.bool() {
                    Some(Action::Split)
                } else if (10..=11).contains(&total) && allowed.contains(&Action::Double) {
                    Some(Action::Double)
                } else if total >= 17 {
                    Some(Action::Stand)
                } else {
                    None
                };
                match pick {
                    Some(action) => Input::Decision {
                        seat: *seat,
                        action,
                    },
                    None => return self.deal().await,
                }
            }
            Expectation::Bonus(seats) => match seats.first() {
                Some(&seat) => {
                    let options = snap.bonus_options.get(&seat).cloned().unwrap_or_default();
                    let multiplier = if options.is_empty() {
                        1
                    } else {
                        options[self.rng.usize(..options.len())]
                    };
                    Input::Bonus { seat, multiplier }
                }
                None => return Ok(false),
            },
            // Burns, the initial deal, a hand's card, the dealer's cards; and anything
            // later issues add: the dealer deals.
            _ => return self.deal().await,
        };
        self.handle.submit(input, Source::Demo).await.map(|_| true)
    }

    /// What the dealer does when remote players are seated; `None`: as without them. The
    /// table runs their windows (`task/timers.rs`): the dealer only leaves their seats'
    /// choices to them, deals the cards they ask for and the cards an auto-played hand
    /// takes, and closes the betting countdown early once every remote player has bet.
    async fn act_remote(
        &mut self,
        remote: &RemoteSeats,
        snap: &Snapshot,
    ) -> Option<Result<bool, SubmitError>> {
        let seated = remote.seats();
        let common = self.variant.deal.mode == crate::engine::variant::DealMode::CommonDraw;
        match &snap.expectation {
            // The demo's players play seat by seat only: a common draw waits for remote
            // players.
            Expectation::Bets if snap.provisional.is_none() && common && !remote.anyone() => {
                Some(Ok(false))
            }
            Expectation::Bets if snap.provisional.is_some() || !remote.anyone() => None,
            Expectation::Bets => Some(self.run_betting(remote, snap).await),
            // A common draw's step (or its insurance) runs on the table's timer for every
            // hand; the table tells the engine the time at its end, and the engine applies
            // the sheet's timeout rule (two-strike, hit on timeout).
            Expectation::PlayersInsurance { .. } | Expectation::PlayerDecisions { .. } => {
                Some(Ok(false))
            }
            // Players behind seats answer insurance once every seat has; the table's
            // insurance timer declines for those who do not.
            Expectation::InsuranceAnswers { behind, .. }
                if snap.insurance_seats.is_empty() && !behind.is_empty() =>
            {
                Some(Ok(false))
            }
            Expectation::InsuranceAnswers { .. } => {
                let seat = *snap.insurance_seats.first()?;
                // The table's timer answers for a remote player who does not.
                seated.contains_key(&seat).then_some(Ok(false))
            }
            Expectation::Decision { seat, allowed, .. } if seated.contains_key(seat) => {
                // A card is the hit the player asked for, or one an auto-played hand
                // (the sheet's timeout rule) takes while it is 11 or less.
                let auto_played = !allowed.contains(&Action::AutoPlay);
                if auto_played || remote.take_hit(*seat, snap.seq) {
                    return Some(self.deal().await);
                }
                Some(Ok(false))
            }
            _ => None,
        }
    }

    /// The betting window: opened (the table runs its countdown) with the demo players'
    /// bets, closed early once every remote player has bet; otherwise the table closes it
    /// when the countdown ends.
    async fn run_betting(
        &mut self,
        remote: &RemoteSeats,
        snap: &Snapshot,
    ) -> Result<bool, SubmitError> {
        let refused = |e: super::task::BetError| match e {
            super::task::BetError::Submit(SubmitError::Stopped) => Err(SubmitError::Stopped),
            e => {
                warn!(error = %e, "demo: betting window");
                Ok(false)
            }
        };
        if !snap.betting.open {
            if let Err(e) = self.handle.open_betting().await {
                return refused(e);
            }
            let seats = self.config.seats.min(self.variant.deal.seats);
            let common = self.variant.deal.mode == crate::engine::variant::DealMode::CommonDraw;
            let seats = if common { 0 } else { seats };
            for seat in (1..=seats).filter(|s| !remote.is_remote(*s)) {
                if let Some(bet) = self.seat_bet(seat) {
                    if let Err(e) = self.handle.place_bet(bet).await {
                        return refused(e);
                    }
                }
            }
            return Ok(false);
        }
        if !remote.all_bet() {
            return Ok(false);
        }
        match self.handle.close_betting(Source::Demo).await {
            Ok(Some(_)) => Ok(true),
            Ok(None) => Ok(false),
            Err(e) => refused(e),
        }
    }

    async fn deal(&mut self) -> Result<bool, SubmitError> {
        match self.sim.deal(1).await {
            Ok(dealt) if dealt.is_empty() => {
                warn!("demo: the simulated shoe ran out; loading a new one");
                self.reload().await;
                Ok(false)
            }
            Ok(_) => Ok(true),
            Err(_) => Err(SubmitError::Stopped),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{Style, TableSim};

    #[test]
    fn a_continued_shoe_holds_exactly_the_cards_the_engine_has_not_seen() {
        let variant = Arc::new(Variant::built_in("deluxe").expect("known").expect("valid"));
        let mut engine = Engine::new(Arc::clone(&variant));
        let mut sim = TableSim::new(Arc::clone(&variant), 3, Style::Random);
        let mut inputs = Vec::new();
        let mut events = Vec::new();
        // Stop in the middle of a round, well into the shoe.
        while inputs.len() < 700 || engine.expectation() == Expectation::Bets {
            let input = sim.next_input(&engine);
            engine.apply(&input, &mut events).expect("legal");
            inputs.push(input);
        }
        let mut rng = fastrand::Rng::with_seed(1);
        let items = Demo::continue_shoe(&variant, &inputs, 0.75, &mut rng).expect("mid-shoe");
        let cards: Vec<Card> = items
            .iter()
            .filter_map(|i| match i {
                ShoeItem::Card(c) => Some(*c),
                ShoeItem::CutCard => None,
            })
            .collect();
        assert_eq!(cards.len(), usize::from(engine.shoe().remaining()));
        // Dealing all of them in any order never meets an exhausted card.
        let mut shoe = engine.shoe().clone();
        for card in cards {
            assert!(shoe.check(card).is_ok(), "{card} is exhausted");
            shoe.take(card);
        }
    }
}
