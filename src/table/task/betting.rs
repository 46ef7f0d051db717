//! The betting window: `OpenBetting`, `PlaceBet`, `PlaceBehind`, `PlacePlayerBets`,
//! `CloseBetting`. Bets are checked by trying the whole window on a copy of the engine;
//! closing sends one `Input::Bets` (seat by seat) or `Input::PlayerBets` (a common draw).

use super::errors::{BetError, SubmitError};
use super::table::Table;
use crate::engine::variant::DealMode;
use crate::engine::{BehindBet, Event, Expectation, Input, PlayerBets, SeatBets, SeatId};
use crate::store::Source;
use crate::table::state::BettingView;
use tracing::info;

impl Table {
    pub(super) fn taking_bets(&self) -> Result<(), BetError> {
        if let Some(why) = &self.broken {
            return Err(SubmitError::Broken(why.clone()).into());
        }
        if let Some(alarm) = &self.alarm {
            return Err(SubmitError::Locked(alarm.reason.clone()).into());
        }
        match self.engine.expectation() {
            Expectation::Bets => Ok(()),
            other => Err(BetError::NotTakingBets(other.to_string())),
        }
    }

    fn common_draw(&self) -> bool {
        self.engine.variant().deal.mode == DealMode::CommonDraw
    }

    pub(super) async fn on_open_betting(&mut self) -> Result<(), BetError> {
        self.taking_bets()?;
        if !self.betting.open {
            self.betting = BettingView {
                open: true,
                ..BettingView::default()
            };
            info!(table = %self.id, "betting open");
            // With remote players seated the window is a countdown, logged before anyone
            // sees it (without them the dealer closes it, as at any table).
            let remote_seated = self.remote.as_ref().is_some_and(|r| r.anyone());
            if self.countdown_len.is_some() && remote_seated {
                let round = self.view.number + 1;
                match self.open_countdown(round).await {
                    Some(_) => {}
                    None if self.broken.is_some() => {
                        self.betting = BettingView::default();
                        let why = self.broken.clone().unwrap_or_default();
                        return Err(SubmitError::Broken(why).into());
                    }
                    None => self.publish_state(),
                }
            } else {
                self.publish_state();
            }
        }
        Ok(())
    }

    /// The window's round-opening input with `bets` and `players` in it.
    fn window_input(&self, bets: &[SeatBets], players: &[PlayerBets]) -> Input {
        if self.common_draw() {
            Input::PlayerBets(players.to_vec())
        } else {
            Input::Bets(bets.to_vec())
        }
    }

    /// Tries the window as it would be with `bets` and `players` on a copy of the engine
    /// (the engine is the one judge of a bet); takes it if the engine would, and answers
    /// the round it opens. An empty window is taken as it is.
    fn take_window(
        &mut self,
        bets: Vec<SeatBets>,
        players: Vec<PlayerBets>,
    ) -> Result<Option<u64>, BetError> {
        let mut round = None;
        if !bets.is_empty() || !players.is_empty() {
            if let Some(why) = self.off_unit(&self.window_input(&bets, &players)) {
                return Err(BetError::InvalidBet(why));
            }
            let mut trial = self.engine.clone();
            let mut events = Vec::new();
            trial
                .apply(&self.window_input(&bets, &players), &mut events)
                .map_err(|r| BetError::InvalidBet(r.message))?;
            round = events.iter().find_map(|e| match e {
                Event::RoundOpened { round } => Some(*round),
                _ => None,
            });
        }
        if self.checking {
            return Ok(round);
        }
        self.betting.bets = bets;
        self.betting.players = players;
        self.publish_state();
        Ok(round)
    }

    /// `Command::CheckWindow`: the change judged as placing it would judge it, the window
    /// left as it was.
    pub(super) fn check_window(
        &mut self,
        change: super::command::WindowChange,
    ) -> Result<Option<u64>, BetError> {
        use super::command::WindowChange;
        self.checking = true;
        let answer = match change {
            WindowChange::Seats(bets) => self.on_place_bets(bets),
            WindowChange::Behind(seat, bet) => self.on_place_behind(seat, bet),
            WindowChange::Players(bets) => self.on_place_player_bets(bets),
        };
        self.checking = false;
        answer
    }

    /// Why `input`'s bets are not whole multiples of the table's betting unit (the
    /// smallest chip). The table's own intake, not a rule of the game: a log replays
    /// under any later unit.
    pub(super) fn off_unit(&self, input: &Input) -> Option<String> {
        let unit = self.bet_unit;
        if unit <= 1 {
            return None;
        }
        let seat = |b: &SeatBets| -> Vec<(String, crate::money::Amount)> {
            let mut all = vec![(format!("seat {} main bet", b.seat), b.main)];
            for (name, a) in &b.side {
                all.push((format!("seat {} {name} bet", b.seat), *a));
            }
            for bb in &b.behind {
                all.push((format!("the bet behind seat {}", b.seat), bb.main));
                for (name, a) in &bb.side {
                    all.push((format!("the {name} bet behind seat {}", b.seat), *a));
                }
            }
            all
        };
        let amounts: Vec<(String, crate::money::Amount)> = match input {
            Input::Bets(bets) => bets.iter().flat_map(seat).collect(),
            Input::PlayerBets(players) => players
                .iter()
                .flat_map(|p| p.boxes.iter().filter(|b| !b.let_it_play).flat_map(seat))
                .collect(),
            _ => Vec::new(),
        };
        let (what, amount) = amounts.into_iter().find(|(_, a)| a % unit != 0)?;
        Some(format!(
            "{what} {amount} is not a multiple of the table's betting unit {unit} (table.bet_unit)"
        ))
    }

    fn window_open(&self) -> Result<(), BetError> {
        self.taking_bets()?;
        if self.betting.open {
            Ok(())
        } else {
            Err(BetError::BettingClosed)
        }
    }

    /// A seat's bets replace its last. Bets behind the seat stay unless the new bet names
    /// its own; a withdrawal takes them off too (no seated bet, nothing to follow).
    pub(super) fn on_place_bet(&mut self, bet: SeatBets) -> Result<Option<u64>, BetError> {
        self.on_place_bets(vec![bet])
    }

    /// Several seats' bets at once, as `on_place_bet` each, judged as one window: a player
    /// on two seats changes both seat plays together (the engine holds them equal).
    pub(super) fn on_place_bets(&mut self, new: Vec<SeatBets>) -> Result<Option<u64>, BetError> {
        self.window_open()?;
        let withdraw = |b: &SeatBets| b.main == 0 && b.side.is_empty() && b.behind.is_empty();
        let all_withdrawn = new.iter().all(withdraw);
        let mut bets = Vec::with_capacity(self.betting.bets.len() + new.len());
        for b in &self.betting.bets {
            if !new.iter().any(|n| n.seat == b.seat) {
                bets.push(b.clone());
            }
        }
        for mut bet in new {
            // A withdrawal takes the bets behind the seat off too.
            if withdraw(&bet) {
                continue;
            }
            if bet.behind.is_empty() {
                if let Some(b) = self.betting.bets.iter().find(|b| b.seat == bet.seat) {
                    bet.behind = b.behind.clone();
                }
            }
            bets.push(bet);
        }
        bets.sort_by_key(|b| b.seat);
        let players = self.betting.players.clone();
        let round = self.take_window(bets, players)?;
        Ok(round.filter(|_| !all_withdrawn))
    }

    /// One player's bet behind `seat` replaces their last there; a main bet of 0 (and no
    /// side bets) withdraws it.
    pub(super) fn on_place_behind(
        &mut self,
        seat: SeatId,
        bet: BehindBet,
    ) -> Result<Option<u64>, BetError> {
        self.window_open()?;
        let withdraw = bet.main == 0 && bet.side.is_empty();
        let mut bets = self.betting.bets.clone();
        let Some(at) = bets.iter().position(|b| b.seat == seat) else {
            if withdraw {
                return Ok(None);
            }
            return Err(BetError::InvalidBet(format!(
                "seat {seat} has no bet to play behind"
            )));
        };
        bets[at].behind.retain(|b| b.player != bet.player);
        if !withdraw {
            bets[at].behind.push(bet);
        }
        let players = self.betting.players.clone();
        let round = self.take_window(bets, players)?;
        Ok(round.filter(|_| !withdraw))
    }

    /// One player's boxes (a common draw) replace their last; no boxes withdraws them.
    pub(super) fn on_place_player_bets(
        &mut self,
        bet: PlayerBets,
    ) -> Result<Option<u64>, BetError> {
        self.window_open()?;
        if !self.common_draw() {
            return Err(BetError::InvalidBet(
                "this game is played seat by seat: bets come from seats".into(),
            ));
        }
        let withdraw = bet.boxes.is_empty();
        let mut players: Vec<PlayerBets> = self
            .betting
            .players
            .iter()
            .filter(|p| p.player != bet.player)
            .cloned()
            .collect();
        if !withdraw {
            players.push(bet);
            players.sort_by(|a, b| a.player.cmp(&b.player));
        }
        let bets = self.betting.bets.clone();
        let round = self.take_window(bets, players)?;
        Ok(round.filter(|_| !withdraw))
    }

    pub(super) async fn on_close_betting(
        &mut self,
        source: Source,
    ) -> Result<Option<u64>, BetError> {
        if !self.betting.open {
            return Err(BetError::BettingClosed);
        }
        // Closed before the input is applied, so the published snapshot never shows an
        // open window beside the round it opened; reopened if the input fails.
        let window = std::mem::take(&mut self.betting);
        // A countdown closes with a tick row on the table's clock: the close's position
        // and time in the log, which late bets are answered with.
        if self.countdown.is_some() && self.close_countdown().await.is_none() {
            self.betting = window;
            let why = self.broken.clone().unwrap_or_default();
            return Err(SubmitError::Broken(why).into());
        }
        if window.bets.is_empty() && window.players.is_empty() {
            self.publish_state();
            return Ok(None);
        }
        let mut bets = window.bets.clone();
        self.time_remote_seats(&mut bets);
        let input = self.window_input(&bets, &window.players);
        match self.on_input(input, source).await {
            Ok(seq) => Ok(Some(seq)),
            Err(e) => {
                self.betting = window;
                self.publish_state();
                Err(e.into())
            }
        }
    }
}
