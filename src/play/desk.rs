//! The balance rules in front of an engine without a wallet: the replay's `funds` events
//! give accounts a balance, and this desk applies `[funds]` (`play::rules`, `play::funds`)
//! to every input for an account whose balance is known, tracking the balance through the
//! round's debits (bets, doubles, splits, insurance), follow reservations and settlement, so
//! a second double in the same round sees what the first left. Accounts without a known
//! balance are unlimited: their inputs pass unchanged.

use super::funds::{self, seat_account, Note};
use super::rules::{decision_cost, funded_decision};
use crate::engine::variant::RebetBelowMinimum;
use crate::engine::{
    Action, Engine, Expectation, Input, RoundResult, SeatBets, SeatId, Total, Variant,
};
use crate::money::Amount;
use std::collections::{BTreeMap, HashMap};

/// Balances and the round's money, per account (a player id, or a seat number for a seat
/// without one).
#[derive(Debug, Clone, Default)]
pub struct FundsDesk {
    /// Known balances, after this round's debits.
    known: BTreeMap<String, Amount>,
    /// Kept back this round for follow instructions.
    reserved: HashMap<String, Amount>,
    /// Debited this round (every account, known or not).
    debited: HashMap<String, Amount>,
    /// The last settled round and what it returned per account (a cancellation after
    /// settlement replaces it).
    last: Option<(u64, HashMap<String, Amount>)>,
    /// The bets that last reached the engine (a re-bet repeats them).
    last_bets: Option<Input>,
    /// This round: the account and main bet of each seat.
    seats: HashMap<SeatId, (String, Amount)>,
    /// This round: the main bet of each (player, seat) — bets behind and common-draw boxes.
    players: HashMap<(String, SeatId), Amount>,
    /// What each (player, box) returned on its main bet last round (Let it play).
    wins: HashMap<(String, SeatId), Amount>,
}

impl FundsDesk {
    /// Sets accounts' balances as of now (stakes already placed this round are not in them).
    pub fn set(&mut self, balances: &[(String, Amount)]) {
        for (account, amount) in balances {
            self.known.insert(account.clone(), *amount);
        }
    }

    /// Whether any balance is known.
    pub fn active(&self) -> bool {
        !self.known.is_empty()
    }

    /// What `account` can still stake (`None`: unknown, unlimited).
    pub fn available(&self, account: &str) -> Option<Amount> {
        let reserved = self.reserved.get(account).copied().unwrap_or(0);
        self.known.get(account).map(|b| b - reserved)
    }

    /// Every known balance.
    pub fn balances(&self) -> &BTreeMap<String, Amount> {
        &self.known
    }

    fn debit(&mut self, account: &str, amount: Amount) {
        if let Some(b) = self.known.get_mut(account) {
            *b -= amount;
        }
        *self.debited.entry(account.to_string()).or_default() += amount;
    }

    /// The previous bets again (`{"bets": "rebet"}`), clipped by `funds.short_rebet`; the
    /// caller then funds them as any bets (`before`). `None` without previous bets.
    /// A seat whose re-bet falls below the table minimum is forgotten under
    /// `funds.rebet_below_minimum = "stop"` (no later re-bet repeats it).
    pub fn rebet(&mut self, v: &Variant, notes: &mut Vec<Note>) -> Option<Input> {
        match self.last_bets.clone()? {
            Input::Bets(prev) => {
                let mut stopped: Vec<SeatId> = Vec::new();
                let mut by_account: Vec<(String, Vec<SeatBets>)> = Vec::new();
                for b in prev {
                    let a = seat_account(&b);
                    match by_account.iter_mut().find(|(x, _)| *x == a) {
                        Some((_, seats)) => seats.push(b),
                        None => by_account.push((a, vec![b])),
                    }
                }
                let mut bets = Vec::new();
                for (account, mut seats) in by_account {
                    if let Some(avail) = self.available(&account) {
                        let before: Vec<SeatBets> = seats.clone();
                        notes.extend(funds::rebet(v, &account, avail, &mut seats));
                        for gone in before
                            .iter()
                            .filter(|b| !seats.iter().any(|s| s.seat == b.seat))
                        {
                            stopped.push(gone.seat);
                            for bb in &gone.behind {
                                notes.push(Note {
                                    account: bb.player.clone(),
                                    seat: Some(gone.seat),
                                    rule: "short_rebet",
                                    result: "returned",
                                    bet: None,
                                    amount: None,
                                });
                            }
                        }
                    }
                    bets.extend(seats);
                }
                bets.sort_by_key(|b| b.seat);
                if v.funds.rebet_below_minimum == RebetBelowMinimum::Stop {
                    if let Some(Input::Bets(last)) = &mut self.last_bets {
                        last.retain(|b| !stopped.contains(&b.seat));
                        if last.is_empty() {
                            self.last_bets = None;
                        }
                    }
                }
                Some(Input::Bets(bets))
            }
            Input::PlayerBets(prev) => {
                let mut bets = Vec::with_capacity(prev.len());
                for mut p in prev {
                    if let Some(avail) = self.available(&p.player) {
                        notes.extend(funds::rebet(v, &p.player, avail, &mut p.boxes));
                    }
                    if !p.boxes.is_empty() {
                        bets.push(p);
                    }
                }
                Some(Input::PlayerBets(bets))
            }
            _ => None,
        }
    }

    /// What reaches the engine for `input` (`None`: nothing), with what the rules did in
    /// `notes`. Bets are remembered (for the next re-bet) and debited.
    pub fn before(
        &mut self,
        engine: &Engine,
        input: &Input,
        notes: &mut Vec<Note>,
    ) -> Option<Input> {
        let v = engine.variant();
        match input {
            Input::Bets(bets) => {
                let f = funds::seat_bets(v, &|a| self.available(a), bets.clone());
                notes.extend(f.notes);
                if f.bets.is_empty() {
                    return None;
                }
                self.open(f.debits, f.reserved);
                for b in &f.bets {
                    self.seats.insert(b.seat, (seat_account(b), b.main));
                    for bb in &b.behind {
                        self.players.insert((bb.player.clone(), b.seat), bb.main);
                    }
                }
                let input = Input::Bets(f.bets);
                self.last_bets = Some(input.clone());
                Some(input)
            }
            Input::PlayerBets(bets) => {
                let wins = self.wins.clone();
                let ride = |p: &str, s: SeatId| wins.get(&(p.to_string(), s)).copied().unwrap_or(0);
                let f = funds::player_bets(v, &|a| self.available(a), &ride, bets.clone());
                notes.extend(f.notes);
                if f.bets.is_empty() {
                    return None;
                }
                self.open(f.debits, f.reserved);
                for p in &f.bets {
                    for b in &p.boxes {
                        let main = if b.let_it_play {
                            ride(&p.player, b.seat)
                        } else {
                            b.main
                        };
                        self.players.insert((p.player.clone(), b.seat), main);
                    }
                }
                let input = Input::PlayerBets(f.bets);
                self.last_bets = Some(input.clone());
                Some(input)
            }
            Input::Decision { seat, action } => {
                let Some((account, main)) = self.seats.get(seat).cloned() else {
                    return Some(input.clone());
                };
                let allowed = match engine.active_hand() {
                    Some(h) if h.seat == *seat => h.allowed.contains(action),
                    _ => {
                        action.is_insurance_answer()
                            && engine.allows_insurance_answer(*seat, *action)
                    }
                };
                let hand = engine.active_hand().map_or(0, |h| h.hand);
                let total = engine.hand_score(*seat, hand).unwrap_or_default();
                if !allowed {
                    return Some(input.clone());
                }
                let played = self.decide(v, &account, *seat, *action, main, total, notes)?;
                match played {
                    // At a seat a hit is the next card: nothing reaches the engine.
                    Action::Hit => None,
                    Action::Double | Action::Split => {
                        let short = self.follow(engine, *seat, played, notes);
                        Some(match played {
                            _ if short.is_empty() => Input::Decision {
                                seat: *seat,
                                action: played,
                            },
                            Action::Double => Input::DoubleShort { seat: *seat, short },
                            _ => Input::SplitShort { seat: *seat, short },
                        })
                    }
                    action => Some(Input::Decision {
                        seat: *seat,
                        action,
                    }),
                }
            }
            Input::PlayerDecision {
                player,
                seat,
                action,
            } => {
                let key = (player.clone(), *seat);
                let Some(&main) = self.players.get(&key) else {
                    return Some(input.clone());
                };
                let (allowed, total) = match engine.expectation() {
                    Expectation::InsuranceAnswers { behind, .. } => {
                        let answers = action.is_insurance_answer();
                        (behind.contains(&key) && answers, Total::default())
                    }
                    Expectation::PlayersInsurance { .. } => (
                        action.is_insurance_answer() && engine.open_insurance().contains(&key),
                        Total::default(),
                    ),
                    Expectation::PlayerDecisions { .. } => engine
                        .open_decisions()
                        .into_iter()
                        .find(|d| d.player == *player && d.seat == *seat)
                        .map_or((false, Total::default()), |d| {
                            let total = Total {
                                best: d.total,
                                soft: d.soft,
                            };
                            (d.allowed.contains(action), total)
                        }),
                    _ => (false, Total::default()),
                };
                if !allowed {
                    return Some(input.clone());
                }
                let action = self.decide(v, player, *seat, *action, main, total, notes)?;
                Some(Input::PlayerDecision {
                    player: player.clone(),
                    seat: *seat,
                    action,
                })
            }
            other => Some(other.clone()),
        }
    }

    /// The seat doubles or splits: each player behind it who follows it pays another main
    /// bet now, from what the bet kept back for it and what the balance holds beyond; one
    /// who cannot is returned — the double's card is a hit for them, their stake unchanged;
    /// a split's second hand is not theirs (they play the first only) — as the live table
    /// does (`web::play::decide`): one rule for both.
    fn follow(
        &mut self,
        engine: &Engine,
        seat: SeatId,
        action: Action,
        notes: &mut Vec<Note>,
    ) -> Vec<String> {
        let result = match action {
            Action::Double => "hit",
            _ => "first_hand",
        };
        let mut short = Vec::new();
        for player in engine.followers(seat, action) {
            let Some(&main) = self.players.get(&(player.clone(), seat)) else {
                continue;
            };
            let kept = self.reserved.get(&player).copied().unwrap_or(0).min(main);
            let pays = self.known.get(&player).is_none_or(|balance| {
                balance - self.reserved.get(&player).copied().unwrap_or(0) + kept >= main
            });
            if pays {
                if let Some(r) = self.reserved.get_mut(&player) {
                    *r -= kept;
                }
                self.debit(&player, main);
            } else {
                notes.push(Note {
                    account: player.clone(),
                    seat: Some(seat),
                    rule: "short_follow",
                    result,
                    bet: None,
                    amount: None,
                });
                short.push(player);
            }
        }
        short
    }

    /// The decision that is played for `account` (debited), or `None` when refused.
    #[allow(clippy::too_many_arguments)]
    fn decide(
        &mut self,
        v: &Variant,
        account: &str,
        seat: SeatId,
        action: Action,
        main: Amount,
        total: Total,
        notes: &mut Vec<Note>,
    ) -> Option<Action> {
        let cost = decision_cost(v, action, main);
        let Some(avail) = self.available(account) else {
            self.debit(account, cost);
            return Some(action);
        };
        let rule = match action {
            Action::Double => "short_double",
            Action::Split => "short_split",
            _ => "insufficient_funds",
        };
        let note = |result| Note {
            account: account.to_string(),
            seat: Some(seat),
            rule,
            result,
            bet: None,
            amount: None,
        };
        match funded_decision(&v.funds, action, cost, avail, total) {
            Ok(played) if played == action => {
                self.debit(account, cost);
                Some(action)
            }
            Ok(played) => {
                notes.push(note(played.name()));
                Some(played)
            }
            Err(_) => {
                notes.push(note("refused"));
                None
            }
        }
    }

    fn open(&mut self, debits: Vec<(String, Amount)>, reserved: Vec<(String, Amount)>) {
        self.seats.clear();
        self.players.clear();
        for (account, amount) in debits {
            self.debit(&account, amount);
        }
        for (account, amount) in reserved {
            *self.reserved.entry(account).or_default() += amount;
        }
    }

    /// A settled round: returns credited, reservations released, and any stake the engine
    /// took beyond what was debited (none while every decision and follow goes through
    /// `before`) debited. A cancellation
    /// replacing the last settled round's result credits the difference.
    pub fn settle(&mut self, r: &RoundResult) {
        let tally = funds::round_by_account(r, |s| self.seats.get(&s).map(|(a, _)| a.clone()));
        let staked = |a: &str| tally.get(a).map_or(0, |t| t.0);
        let returned: HashMap<String, Amount> =
            tally.iter().map(|(a, t)| (a.clone(), t.1)).collect();
        let replaces = self.last.as_ref().filter(|(round, _)| *round == r.round);
        if let Some((_, before)) = replaces {
            for (account, balance) in &mut self.known {
                let now = returned.get(account).copied().unwrap_or(0);
                *balance += now - before.get(account).copied().unwrap_or(0);
            }
        } else {
            for (account, balance) in &mut self.known {
                let s = staked(account);
                let d = self.debited.get(account).copied().unwrap_or(0);
                *balance += d - s + returned.get(account).copied().unwrap_or(0);
            }
        }
        self.debited.clear();
        self.reserved.clear();
        self.wins.clear();
        for b in &r.bets {
            if let (Some(p), crate::engine::BetKind::Main) = (&b.player, &b.kind) {
                if b.returned > b.staked {
                    self.wins.insert((p.to_string(), b.seat), b.returned);
                }
            }
        }
        self.last = Some((r.round, returned));
    }
}
