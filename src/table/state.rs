//! What the table publishes: the full [`Snapshot`] (a `watch`), sequenced [`Delta`]s (a
//! `broadcast`), and the [`Subscription`] that turns a lag into a resync snapshot.

use crate::cards::Card;
use crate::engine::{Action, Event, Expectation, Place, RoundResult, SeatBets, SeatId};
use crate::metrics::{Feed, Metrics};
use crate::store::Record;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::{broadcast, watch};

/// Whether the table takes inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TableState {
    /// Taking inputs.
    Open,
    /// In alarm: no input is applied until the alarm is cleared.
    Locked,
    /// A dispute halts the round: no input is applied until a supervisor resolves it.
    Disputed,
    /// The store is unusable (damaged, unreadable, a failed write): nothing can be
    /// recorded, so nothing is applied; fix the database and restart.
    Broken,
}

/// The alarm a locked table is in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alarm {
    /// The log row that raised it.
    pub seq: u64,
    /// Why.
    pub reason: String,
    /// What must happen before it is cleared.
    pub expected: String,
    /// Refused and held shoe items, in arrival order; clearing voids them.
    pub held: Vec<String>,
    /// Further faults reported while locked.
    pub also: Vec<String>,
}

/// A hand on the table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandView {
    /// The seat.
    pub seat: SeatId,
    /// The hand index within the seat.
    pub hand: u8,
    /// Its cards.
    pub cards: Vec<Card>,
    /// Its best total.
    pub total: u8,
    /// Whether an ace counts 11 in `total`.
    #[serde(default)]
    pub soft: bool,
}

/// The round on the table, as built from the engine's events.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundView {
    /// The round's number (0 before the first).
    pub number: u64,
    /// Whether it is settled.
    pub settled: bool,
    /// Hands per seat, in seat order.
    pub hands: Vec<HandView>,
    /// The dealer's cards.
    pub dealer: Vec<Card>,
    /// The dealer's best total (of every card, the face-down one included).
    pub dealer_total: u8,
    /// Whether an ace counts 11 in `dealer_total`.
    #[serde(default)]
    pub dealer_soft: bool,
    /// The total of the dealer's first card alone (what players see while the second
    /// lies face down).
    #[serde(default)]
    pub up_total: u8,
    /// Whether an ace counts 11 in `up_total`.
    #[serde(default)]
    pub up_soft: bool,
    /// The bets the round opened with, per seat.
    #[serde(default)]
    pub bets: Vec<SeatBets>,
    /// The peek's answer: `Some(false)` once the dealer looked and has no natural.
    #[serde(default)]
    pub peeked: Option<bool>,
    /// Whether the dealer's second card is face down (games with a hole card, from the
    /// initial deal until the dealer's turn or the end of the round). Every view for
    /// people shows it as a card back while this is true.
    #[serde(default)]
    pub hole_hidden: bool,
    /// The face-down card's seal (`trust::seal`): its commitment from the deal, the card
    /// and nonce once it is turned over; `None` without one or without table keys.
    #[serde(default)]
    pub seal: Option<crate::trust::Seal>,
}

impl RoundView {
    /// Followers short at a split (`Input::SplitShort`, accepted) no longer follow this
    /// seat's splits: the bets shown (and read by the players' service before a double on
    /// the second hand) say what the engine now plays.
    pub(crate) fn on_split_short(&mut self, seat: SeatId, short: &[String]) {
        for b in self.bets.iter_mut().filter(|b| b.seat == seat) {
            for bb in b.behind.iter_mut().filter(|bb| short.contains(&bb.player)) {
                bb.follow_split = false;
            }
        }
    }

    /// Follows one engine event.
    pub(crate) fn on_event(&mut self, event: &Event) {
        match event {
            Event::RoundOpened { round } => {
                *self = RoundView {
                    number: *round,
                    ..RoundView::default()
                };
            }
            Event::CardDealt { card, to } => match to {
                Place::Hand { seat, hand } => {
                    if let Some(h) = self
                        .hands
                        .iter_mut()
                        .find(|h| h.seat == *seat && h.hand == *hand)
                    {
                        h.cards.push(*card);
                    } else {
                        let at = self
                            .hands
                            .iter()
                            .position(|h| (h.seat, h.hand) > (*seat, *hand))
                            .unwrap_or(self.hands.len());
                        self.hands.insert(
                            at,
                            HandView {
                                seat: *seat,
                                hand: *hand,
                                cards: vec![*card],
                                total: 0,
                                soft: false,
                            },
                        );
                    }
                }
                Place::Dealer => self.dealer.push(*card),
                Place::Burn => {}
            },
            Event::Decided {
                seat,
                hand,
                action: Action::Split,
            } => {
                // The engine moves the second card into a new hand right after this one.
                let Some(i) = self
                    .hands
                    .iter()
                    .position(|h| h.seat == *seat && h.hand == *hand)
                else {
                    return;
                };
                let Some(card) = self.hands[i].cards.pop() else {
                    return;
                };
                for h in self
                    .hands
                    .iter_mut()
                    .filter(|h| h.seat == *seat && h.hand > *hand)
                {
                    h.hand += 1;
                }
                self.hands.insert(
                    i + 1,
                    HandView {
                        seat: *seat,
                        hand: hand + 1,
                        cards: vec![card],
                        total: 0,
                        soft: false,
                    },
                );
            }
            Event::DealerPeeked { natural } => self.peeked = Some(*natural),
            Event::RoundSettled(_) => self.settled = true,
            _ => {}
        }
    }
}

/// The betting window: bets collected per seat while it is open, handed to the engine
/// as one round-opening input when it closes. It lives only in memory: a restart with an
/// open window reopens nothing (the seats bet again).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BettingView {
    /// Whether bets are being taken.
    pub open: bool,
    /// The bets placed so far, one entry per seat, in seat order (bets behind a seat
    /// inside its entry).
    pub bets: Vec<SeatBets>,
    /// A common draw's bets so far, one entry per player, in player order (`bets` stays
    /// empty there).
    #[serde(default)]
    pub players: Vec<crate::engine::PlayerBets>,
}

/// Remote play as the table's staff see it (`Snapshot::remote`): who plays from afar, the
/// windows the table runs for them, and a card a remote player asked for. Built by the
/// table task from `table::remote::RemoteSeats` each time it publishes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteView {
    /// The seats remote players hold, in seat order.
    pub seats: Vec<RemoteSeatView>,
    /// Remote players at the table without a seat (betting behind, a common draw's
    /// players), in player order.
    pub unseated: Vec<RemotePlayerView>,
    /// The betting countdown, while it is open.
    pub countdown: Option<TimerView>,
    /// The decision timer of the wait the table is in (seat 0: an insurance question
    /// every timed seat answers within it).
    pub decision: Option<TimerView>,
    /// A remote player's pending request for a card: the dealer deals it from the shoe.
    /// Gone once a card (or any decision) reaches that seat, or its timer plays the hand.
    pub hit: Option<HitRequest>,
}

/// A seat a remote player holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteSeatView {
    /// The seat.
    pub seat: SeatId,
    /// The player (the platform's id).
    pub player: String,
    /// Whether they have a bet in the open betting window.
    pub bet: bool,
}

/// A remote player at the table without a seat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemotePlayerView {
    /// The player (the platform's id).
    pub player: String,
    /// Whether they have a bet in the open betting window.
    pub bet: bool,
}

/// A window the table times for remote players.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimerView {
    /// The round.
    pub round: u64,
    /// The seat it waits on (0: the betting countdown, or an insurance question).
    pub seat: SeatId,
    /// When it closes, Unix ms (for people: the wall clock may jump).
    pub deadline_ms: i64,
    /// When it closes, on the table's clock (monotonic): what the time left is counted
    /// from.
    pub clock_ms: u64,
    /// Its whole length, ms (`[play] betting_seconds` / `decision_seconds`).
    pub length_ms: u64,
}

/// A remote player's request for a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HitRequest {
    /// The seat the card goes to.
    pub seat: SeatId,
    /// The log row the request was made after.
    pub at_seq: u64,
}

/// A common draw's round for players' pages (`Snapshot::common`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommonView {
    /// Hands owing a decision in the open step.
    pub decisions: Vec<crate::engine::OpenDecision>,
    /// Player boxes whose insurance question is open: (player, box).
    pub insurance: Vec<(String, SeatId)>,
    /// Every player's hands.
    pub hands: Vec<crate::engine::PlayerHand>,
    /// Every player box's side bets this round: (player, box, total staked).
    #[serde(default)]
    pub specials: Vec<(String, SeatId, crate::money::Amount)>,
}

/// The shoe as the table sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShoeView {
    /// The shoe's number.
    pub number: u32,
    /// Cards dealt from it (burns included).
    pub dealt: u16,
    /// Cards burned.
    pub burned: u16,
    /// Cards left.
    pub remaining: u16,
    /// Whether the cut card came out.
    pub cut_seen: bool,
    /// The serial link: `connected` ([`LINK_CONNECTED`]), `disconnected: ...`, or
    /// `waiting`.
    pub link: String,
}

/// [`ShoeView::link`] while the shoe's port is open.
pub const LINK_CONNECTED: &str = "connected";

impl ShoeView {
    /// Whether the shoe's link is up.
    pub fn connected(&self) -> bool {
        self.link == LINK_CONNECTED
    }
}

/// What a player may stake at the table and where a remote player may sit: the table's
/// offer, published with its public view (the relay's lobby shows it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableOffer {
    /// The smallest main bet, in minor units.
    pub min: crate::money::Amount,
    /// The largest main bet, in minor units.
    pub max: crate::money::Amount,
    /// Each side bet's limits, in the variant's order (empty: the game has none).
    #[serde(default)]
    pub side_bets: Vec<SideLimits>,
    /// The seats at the table (a common draw: its boxes, which every player plays).
    pub seats: u8,
    /// The seats a remote player could take: the seats nobody played in the round as last
    /// opened (the demo's players, remote players and players at the table take theirs by
    /// betting; a seat held without a bet is not in the log, and counts as free); 0
    /// without remote play. `None`: the game has no seats to take (a common draw: every
    /// player at the table plays every box).
    #[serde(default)]
    pub seats_free: Option<u8>,
}

/// One side bet's limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideLimits {
    /// Its name (the engine's id: `"21+3"`, `"pair"`).
    pub name: String,
    /// The smallest stake, in minor units.
    pub min: crate::money::Amount,
    /// The largest stake, in minor units.
    pub max: crate::money::Amount,
}

/// Everything about the table, after the log row `seq`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The table id.
    pub table: String,
    /// Its display name.
    pub name: String,
    /// The game.
    pub variant: String,
    /// The last log row reflected here (0: empty log).
    pub seq: u64,
    /// Inputs accepted so far (log rows of kind `input`).
    pub inputs: u64,
    /// Open, locked, or broken.
    pub state: TableState,
    /// The alarm, when locked.
    pub alarm: Option<Alarm>,
    /// Why the store is unusable, when broken.
    pub broken: Option<String>,
    /// What the engine waits for, for people (`"card for seat 3, hand 2"`).
    pub expecting: String,
    /// The same, machine-readable.
    pub expectation: Expectation,
    /// Bonus-game multipliers the pending seats may draw.
    pub bonus_options: BTreeMap<SeatId, Vec<u32>>,
    /// Seats that may still answer the insurance offer (while it is open).
    pub insurance_seats: Vec<SeatId>,
    /// The answers the engine would take from each of them (even money only for a
    /// natural, insurance only where the bet can be insured).
    #[serde(default)]
    pub insurance_answers: BTreeMap<SeatId, Vec<Action>>,
    /// A common draw's open step: the hands owing a decision, the boxes owing an
    /// insurance answer, and every player's hands (empty in a seat-by-seat game).
    #[serde(default)]
    pub common: CommonView,
    /// The table's currency, for writing amounts for people.
    #[serde(default)]
    pub currency: crate::currency::Currency,
    /// The betting window.
    #[serde(default)]
    pub betting: BettingView,
    /// The shoe.
    pub shoe: ShoeView,
    /// The current (or last) round.
    pub round: RoundView,
    /// Rounds settled since the table's log began.
    pub rounds_settled: u64,
    /// The last settlement.
    pub last_result: Option<RoundResult>,
    /// Shoe items that arrived while the store was unusable and could not be recorded.
    pub unrecorded: Vec<String>,
    /// The open dispute (every alarm opens one too).
    #[serde(default)]
    pub dispute: Option<DisputeView>,
    /// The settled round whose result is still provisional (its dispute window is open).
    #[serde(default)]
    pub provisional: Option<u64>,
    /// The last finished shoe's integrity verdict (a supervisor alert when suspicious).
    #[serde(default)]
    pub shoe_integrity: Option<crate::integrity::shoe::Verdict>,
    /// The table's public key (Ed25519, hex) that signs its results (`trust`).
    #[serde(default)]
    pub table_key: Option<String>,
    /// The timeline the log is on, after its first (`store/timeline.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<crate::store::Timeline>,
    /// Remote play (`[play] enabled`): seats, countdown, decision timer, a card asked for;
    /// `None` without remote play.
    #[serde(default)]
    pub remote: Option<RemoteView>,
    /// The table's limits and seats ([`TableOffer`]).
    #[serde(default)]
    pub offer: TableOffer,
    /// How players are named in everything public (`trust::pseudonym`): the public view
    /// and feed never carry the platform's player ids. Never serialized.
    #[serde(skip)]
    pub pseudonyms: crate::trust::Pseudonyms,
}

/// What names an open dispute wherever it is shown: the table's own record of it, its view
/// for the dealer and supervisor, and the panel's. Flattened into each view's JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisputeHead {
    /// Its id: the log row that opened it.
    pub id: u64,
    /// Who raised it.
    pub origin: crate::table::dispute::Origin,
    /// The seat it concerns.
    pub seat: Option<SeatId>,
    /// The round it concerns.
    pub round: u64,
    /// The complaint (or the alarm's reason).
    pub reason: String,
    /// Who raised it.
    pub by: String,
}

/// An open dispute, as the dealer and the supervisor see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisputeView {
    /// Its id, who raised it, about what.
    #[serde(flatten)]
    pub head: DisputeHead,
    /// The round as it stood when the dispute was raised, frozen for the record.
    pub frozen: RoundView,
    /// Shoe items held since, not in play (the alarm's included).
    pub held: Vec<String>,
    /// The round's cards in order, with where each went: what a resolution names.
    pub cards: Vec<crate::table::dispute::CardPlace>,
    /// The resolution proposed and waiting for confirmation, with its preview.
    pub proposal: Option<ProposalView>,
    /// The resolutions the round takes as it stands (`dispute::offers`): the screen
    /// offers only these, so a supervisor never meets a refusal Preview would give.
    #[serde(default)]
    pub offers: Vec<crate::table::dispute::Offer>,
}

/// A proposed resolution and the round it would give.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProposalView {
    /// The dispute.
    pub dispute: u64,
    /// What is proposed.
    pub resolution: crate::table::dispute::Resolution,
    /// Why.
    pub reason: String,
    /// The supervisor who proposed it.
    pub proposed_by: String,
    /// Whether another supervisor must confirm it (the two-person rule).
    pub second_person: bool,
    /// The round after the correction.
    pub round: RoundView,
    /// Its result, if the corrected round is settled.
    pub result: Option<RoundResult>,
    /// What the table would expect next.
    pub expecting: String,
    /// The corrected inputs, for people.
    pub inputs: Vec<String>,
    /// Held items that would be taken out of play.
    pub voided: Vec<String>,
    /// What a confirmation (or a withdrawal) names: the sha256 (hex) of everything above,
    /// i.e. of the preview as shown. A confirmation naming another hash is refused
    /// (`proposal_changed`), so a supervisor only ever approves what they reviewed.
    #[serde(default)]
    pub proposal: String,
}

impl ProposalView {
    /// The sha256 (hex) of this preview without its `proposal` field.
    pub fn digest(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut unnamed = self.clone();
        unnamed.proposal.clear();
        // Serialising these plain data types cannot fail; an empty text would still be a
        // distinct (and never matching) input.
        let text = serde_json::to_string(&unnamed).unwrap_or_default();
        hex::encode(Sha256::digest(text.as_bytes()))
    }
}

/// One published change: the log row `seq` and what it caused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    /// The log row.
    pub seq: u64,
    /// What was recorded.
    pub record: Record,
    /// What the engine said (accepted inputs only).
    pub events: Vec<Event>,
    /// The table's state after it.
    pub state: TableState,
    /// What the engine waits for after it.
    pub expecting: String,
    /// The settled round still open to disputes after it, if any.
    #[serde(default)]
    pub provisional: Option<u64>,
    /// The signed statement of each round this row settled, in the order of their
    /// `RoundSettled` events (`trust::attest`; empty without table keys).
    #[serde(default)]
    pub signed: Vec<crate::trust::Signed>,
}

/// What a subscriber receives next.
#[derive(Debug, Clone, PartialEq)]
pub enum Update {
    /// The next change, in sequence.
    Delta(Arc<Delta>),
    /// The subscriber fell behind (or just started): the whole state; deltas continue
    /// after its `seq`.
    Resync(Arc<Snapshot>),
}

/// A subscriber to the table: a snapshot first, then sequenced deltas; a lag yields a
/// resync snapshot, never silence and never a gap.
#[derive(Debug)]
pub struct Subscription {
    snapshot: watch::Receiver<Arc<Snapshot>>,
    deltas: broadcast::Receiver<Arc<Delta>>,
    after: u64,
    started: bool,
    metrics: Arc<Metrics>,
}

impl Subscription {
    pub(crate) fn new(
        snapshot: watch::Receiver<Arc<Snapshot>>,
        deltas: broadcast::Receiver<Arc<Delta>>,
        metrics: Arc<Metrics>,
    ) -> Subscription {
        Subscription {
            snapshot,
            deltas,
            after: 0,
            started: false,
            metrics,
        }
    }

    /// The next update; `None` once the table has stopped.
    pub async fn next(&mut self) -> Option<Update> {
        if !self.started {
            self.started = true;
            return Some(self.resync());
        }
        loop {
            match self.deltas.recv().await {
                Ok(delta) if delta.seq <= self.after => continue,
                Ok(delta) => {
                    self.after = delta.seq;
                    return Some(Update::Delta(delta));
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    // Start again from the tail: everything sent before now is in the
                    // snapshot read next (the snapshot is replaced before each send), so
                    // this neither leaves a gap nor replays stale deltas.
                    self.deltas = self.deltas.resubscribe();
                    self.metrics.lagged(Feed::Table);
                    return Some(self.resync());
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    fn resync(&mut self) -> Update {
        let snapshot = Arc::clone(&self.snapshot.borrow_and_update());
        self.after = snapshot.seq;
        Update::Resync(snapshot)
    }
}
