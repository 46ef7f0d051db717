//! A common draw's bets: every player's boxes validated and the round opened, and Let it
//! play (a box's last win bet again). Apart from the play because bets are taken once, as
//! the round opens.

use crate::cards::Card;
use crate::engine::io::{
    BetKind, Code, EventSink, PlayerBets, PlayerId, Rejection, RoundResult, SeatId,
};
use crate::engine::state::{reject, Engine, Handled, PlayerPlay};
use crate::engine::variant::SeatOrder;
use crate::money::Amount;
use smallvec::SmallVec;

impl Engine {
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
        if seat_order == SeatOrder::Descending {
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
    pub(crate) fn remember_wins(&mut self, result: &RoundResult) {
        self.common.last_wins.clear();
        for b in &result.bets {
            if let (Some(player), BetKind::Main) = (&b.player, &b.kind) {
                if b.returned > b.staked {
                    self.common
                        .last_wins
                        .insert((PlayerId::clone(player), b.seat), b.returned);
                }
            }
        }
    }
}
