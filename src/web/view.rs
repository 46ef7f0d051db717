//! What people see: the dealer's view and the public (remote players') view, each a pure
//! function of the table's [`Snapshot`].
//!
//! The public view is the security boundary. It is built field by field from the snapshot
//! (never by copying it and deleting fields), so a field added to the snapshot later does
//! not reach remote players unless it is added here on purpose. Hidden: the face-down card
//! and the dealer's total until the reveal, what the engine expects next, alarm details
//! (a refused card may be the face-down card), the serial link, unrecorded shoe items.
//! The dealer's panel sees the table through the same redaction (players can see the
//! screen too) plus what the dealer needs to act.

use crate::cards::Card;
use crate::engine::{Action, Expectation, RoundResult, SeatBets, SeatId, Variant};
use crate::table::{Alarm, BettingView, HandView, Snapshot, TableState};
use serde::{Deserialize, Serialize};

/// The round as anyone may see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicRound {
    /// The round's number.
    pub number: u64,
    /// Whether it is settled.
    pub settled: bool,
    /// The bets it opened with, per seat.
    pub bets: Vec<SeatBets>,
    /// Hands per seat, in seat order.
    pub hands: Vec<HandView>,
    /// The dealer's cards; `null` is a card lying face down.
    pub dealer: Vec<Option<Card>>,
    /// The dealer's total of the face-up cards.
    pub dealer_total: u8,
    /// Whether an ace counts 11 in `dealer_total`.
    pub dealer_soft: bool,
    /// The peek's answer once known (`false`: the dealer has no natural).
    pub peeked: Option<bool>,
}

/// The shoe as anyone may see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicShoe {
    /// The shoe's number.
    pub number: u32,
    /// Cards out (burns included).
    pub dealt: u16,
    /// Cards burned.
    pub burned: u16,
    /// Cards left.
    pub remaining: u16,
    /// Whether the cut card came out (the shoe's last round).
    pub cut_seen: bool,
}

/// The table as a remote player sees it: nothing hidden, nothing the engine expects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicView {
    /// The table id.
    pub table: String,
    /// Its display name.
    pub name: String,
    /// The game.
    pub variant: String,
    /// The last log row reflected.
    pub seq: u64,
    /// `open`, or `locked` / `disputed` / `broken` (play is paused; no details).
    pub state: TableState,
    /// The betting window.
    pub betting: BettingView,
    /// The shoe.
    pub shoe: PublicShoe,
    /// The current (or last) round.
    pub round: PublicRound,
    /// Rounds settled so far.
    pub rounds_settled: u64,
    /// The last settlement.
    pub last_result: Option<RoundResult>,
    /// The settled round whose result is still provisional (open to disputes).
    pub provisional: Option<u64>,
}

/// The public view of `s`: a pure function that copies only what may be shown.
pub fn public_view(s: &Snapshot) -> PublicView {
    let r = &s.round;
    let (dealer, dealer_total, dealer_soft) = if r.hole_hidden {
        // Only the up card, and its own total.
        let shown: Vec<Option<Card>> = r
            .dealer
            .iter()
            .enumerate()
            .map(|(i, c)| (i == 0).then_some(*c))
            .collect();
        (shown, r.up_total, r.up_soft)
    } else {
        (
            r.dealer.iter().copied().map(Some).collect(),
            r.dealer_total,
            r.dealer_soft,
        )
    };
    PublicView {
        table: s.table.clone(),
        name: s.name.clone(),
        variant: s.variant.clone(),
        seq: s.seq,
        state: s.state,
        betting: s.betting.clone(),
        shoe: PublicShoe {
            number: s.shoe.number,
            dealt: s.shoe.dealt,
            burned: s.shoe.burned,
            remaining: s.shoe.remaining,
            cut_seen: s.shoe.cut_seen,
        },
        round: PublicRound {
            number: r.number,
            settled: r.settled,
            bets: r.bets.clone(),
            hands: r.hands.clone(),
            dealer,
            dealer_total,
            dealer_soft,
            peeked: r.peeked,
        },
        rounds_settled: s.rounds_settled,
        last_result: s.last_result.clone(),
        provisional: s.provisional,
    }
}

/// Where the next card goes, for the panel's big indicator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NextCard {
    /// `"seat 3, hand 2"`, `"dealer"`, `"burn"`; absent when no card is due.
    pub to: Option<String>,
    /// The seat, when a player's hand takes it.
    pub seat: Option<SeatId>,
    /// The hand index (0-based), when a player's hand takes it.
    pub hand: Option<u8>,
}

/// The betting limits the panel shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitsView {
    /// Seats at the table.
    pub seats: u8,
    /// Main bet minimum (minor units).
    pub min: i64,
    /// Main bet maximum.
    pub max: i64,
    /// Side bets by name with their (min, max).
    pub side_bets: Vec<(String, i64, i64)>,
}

impl LimitsView {
    /// The limits of `variant`.
    pub fn of(variant: &Variant) -> LimitsView {
        LimitsView {
            seats: variant.deal.seats,
            min: variant.limits.min,
            max: variant.limits.max,
            side_bets: variant
                .side_bets
                .iter()
                .map(|b| (b.name.clone(), b.limits.min, b.limits.max))
                .collect(),
        }
    }
}

/// The dealer panel's view: the redacted table plus what the dealer acts on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DealerView {
    /// The last log row reflected.
    pub seq: u64,
    /// The table, through the public redaction (the face-down card stays a card back).
    pub table: PublicView,
    /// What the engine waits for, for people.
    pub expecting: String,
    /// The same, machine-readable.
    pub expectation: Expectation,
    /// The big indicator.
    pub next: NextCard,
    /// The active hand's decision, when one is due: seat, hand and the legal actions.
    pub decision: Option<(SeatId, u8, Vec<Action>)>,
    /// Seats asked for insurance / even money.
    pub insurance: Vec<SeatId>,
    /// The alarm, when locked.
    pub alarm: Option<Alarm>,
    /// Why the table is out of service.
    pub broken: Option<String>,
    /// The serial link.
    pub link: String,
    /// The limits.
    pub limits: LimitsView,
    /// Whether a simulated shoe is attached (the panel then offers "deal a card").
    pub simulated: bool,
}

/// The dealer's view of `s`.
pub fn dealer_view(s: &Snapshot, limits: &LimitsView, simulated: bool) -> DealerView {
    let next = match &s.expectation {
        Expectation::DealCard(place) => match place {
            crate::engine::Place::Hand { seat, hand } => NextCard {
                to: Some(format!("seat {seat}, hand {}", hand + 1)),
                seat: Some(*seat),
                hand: Some(*hand),
            },
            crate::engine::Place::Dealer => NextCard {
                to: Some("dealer".into()),
                seat: None,
                hand: None,
            },
            crate::engine::Place::Burn => NextCard {
                to: Some("burn".into()),
                seat: None,
                hand: None,
            },
        },
        Expectation::HandCard { seat, hand } | Expectation::Decision { seat, hand, .. } => {
            NextCard {
                to: Some(format!("seat {seat}, hand {}", hand + 1)),
                seat: Some(*seat),
                hand: Some(*hand),
            }
        }
        Expectation::DealerCard => NextCard {
            to: Some("dealer".into()),
            seat: None,
            hand: None,
        },
        Expectation::RevealCard | Expectation::BurnCards(_) => NextCard {
            to: Some("burn".into()),
            seat: None,
            hand: None,
        },
        _ => NextCard {
            to: None,
            seat: None,
            hand: None,
        },
    };
    let decision = match &s.expectation {
        Expectation::Decision {
            seat,
            hand,
            allowed,
        } => Some((*seat, *hand, allowed.clone())),
        _ => None,
    };
    let insurance = match &s.expectation {
        Expectation::InsuranceAnswers { seats, .. } => seats.clone(),
        _ => Vec::new(),
    };
    DealerView {
        seq: s.seq,
        table: public_view(s),
        expecting: s.expecting.clone(),
        expectation: s.expectation.clone(),
        next,
        decision,
        insurance,
        alarm: s.alarm.clone(),
        broken: s.broken.clone(),
        link: s.shoe.link.clone(),
        limits: limits.clone(),
        simulated,
    }
}
