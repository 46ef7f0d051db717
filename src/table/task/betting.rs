//! The betting window: `OpenBetting`, `PlaceBet`, `CloseBetting`. Bets are checked by trying
//! the whole window on a copy of the engine; closing sends one `Input::Bets`.

use super::errors::{BetError, SubmitError};
use super::table::Table;
use crate::engine::{Event, Expectation, Input, SeatBets};
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

    pub(super) async fn on_open_betting(&mut self) -> Result<(), BetError> {
        self.taking_bets()?;
        if !self.betting.open {
            self.betting = BettingView {
                open: true,
                bets: Vec::new(),
            };
            info!(table = %self.id, "betting open");
            // With remote players seated the window is a countdown, logged before anyone
            // sees it (without them the dealer closes it, as at any table).
            let remote_seated = self.remote.as_ref().is_some_and(|r| !r.seats().is_empty());
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

    pub(super) fn on_place_bet(&mut self, bet: SeatBets) -> Result<Option<u64>, BetError> {
        self.taking_bets()?;
        if !self.betting.open {
            return Err(BetError::BettingClosed);
        }
        let mut bets: Vec<SeatBets> = self
            .betting
            .bets
            .iter()
            .filter(|b| b.seat != bet.seat)
            .cloned()
            .collect();
        let withdraw = bet.main == 0 && bet.side.is_empty() && bet.behind.is_empty();
        let mut round = None;
        if !withdraw {
            bets.push(bet);
            bets.sort_by_key(|b| b.seat);
            // The engine is the one judge of a bet: try the whole window on a copy.
            let mut trial = self.engine.clone();
            let mut events = Vec::new();
            trial
                .apply(&Input::Bets(bets.clone()), &mut events)
                .map_err(|r| BetError::InvalidBet(r.message))?;
            round = events.iter().find_map(|e| match e {
                Event::RoundOpened { round } => Some(*round),
                _ => None,
            });
        }
        self.betting.bets = bets;
        self.publish_state();
        Ok(round)
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
        if window.bets.is_empty() {
            self.publish_state();
            return Ok(None);
        }
        let mut bets = window.bets.clone();
        self.time_remote_seats(&mut bets);
        let input = Input::Bets(bets);
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
