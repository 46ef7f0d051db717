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
use crate::table::dispute::Resolution;
use crate::table::{
    Alarm, BettingView, DisputeHead, HandView, ProposalView, RoundView, Snapshot, TableState,
};
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
    /// The face-down card's seal: its commitment while it lies face down, then the card
    /// and nonce that open it (`crate::trust::seal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seal: Option<crate::trust::Seal>,
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
    /// The table's currency: every amount here is a whole number of its minor unit.
    pub currency: crate::currency::Currency,
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
    /// The table's Ed25519 public key (hex) that signs its results (`crate::trust`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_key: Option<String>,
    /// The timeline the table's log is on, after its first (a restore, an operator's
    /// `croupier timeline continue`): round numbers start over from where it began, and
    /// viewers' checks take the change as one, not as a cut log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<crate::store::Timeline>,
    /// The table's limits and the seats a remote player could take (the relay's lobby);
    /// absent from the messages of a table before it published them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offer: Option<crate::table::TableOffer>,
}

/// The public view of `s`: a pure function that copies only what may be shown.
pub fn public_view(s: &Snapshot) -> PublicView {
    let names = &s.pseudonyms;
    let mut betting = s.betting.clone();
    betting.bets.iter_mut().for_each(|b| names.seat_bets(b));
    betting
        .players
        .iter_mut()
        .for_each(|p| names.player_bets(p));
    let mut round = public_round(&s.round);
    round.bets.iter_mut().for_each(|b| names.seat_bets(b));
    let last_result = s.last_result.clone().map(|mut r| {
        names.result(&mut r);
        r
    });
    PublicView {
        table: s.table.clone(),
        name: s.name.clone(),
        variant: s.variant.clone(),
        currency: s.currency.clone(),
        seq: s.seq,
        state: s.state,
        betting,
        shoe: PublicShoe {
            number: s.shoe.number,
            dealt: s.shoe.dealt,
            burned: s.shoe.burned,
            remaining: s.shoe.remaining,
            cut_seen: s.shoe.cut_seen,
        },
        round,
        rounds_settled: s.rounds_settled,
        last_result,
        provisional: s.provisional,
        table_key: s.table_key.clone(),
        timeline: s.timeline.clone(),
        offer: Some(s.offer.clone()),
    }
}

/// A round as anyone may see it: while the hole card lies face down, only the up card and
/// its own total.
pub fn public_round(r: &RoundView) -> PublicRound {
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
    PublicRound {
        number: r.number,
        settled: r.settled,
        bets: r.bets.clone(),
        hands: r.hands.clone(),
        dealer,
        dealer_total,
        dealer_soft,
        peeked: r.peeked,
        // Only the commitment while the card lies face down, whatever the table built.
        seal: r.seal.clone().map(|mut seal| {
            if r.hole_hidden {
                seal.card = None;
                seal.nonce = None;
            }
            seal
        }),
    }
}

/// One of the round's cards on the dispute screen; `card` is `null` for the hole card
/// while it lies face down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisputeCard {
    /// Its position among the round's cards (what a resolution names).
    pub index: usize,
    /// The card, unless it is the face-down hole card.
    pub card: Option<Card>,
    /// Where it went; `null` while held.
    pub place: Option<String>,
    /// Held during the halt.
    pub held: bool,
}

/// A proposed resolution as the panel shows it (the corrected round redacted like the
/// table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PanelProposal {
    /// The dispute.
    pub dispute: u64,
    /// What is proposed.
    pub resolution: Resolution,
    /// Why.
    pub reason: String,
    /// Who proposed it.
    pub proposed_by: String,
    /// Whether another supervisor must confirm it.
    pub second_person: bool,
    /// The corrected round.
    pub round: PublicRound,
    /// Its result, when the corrected round is settled.
    pub result: Option<RoundResult>,
    /// What the table would expect next.
    pub expecting: String,
    /// Held items that would be taken out of play.
    pub voided: Vec<String>,
    /// The proposal's hash: what a confirmation or a withdrawal names.
    pub proposal: String,
}

/// The open dispute as the panel shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PanelDispute {
    /// Its id, who raised it, about what.
    #[serde(flatten)]
    pub head: DisputeHead,
    /// The round as it stood when it was raised.
    pub frozen: PublicRound,
    /// Shoe items held since.
    pub held: Vec<String>,
    /// The round's cards and where each went.
    pub cards: Vec<DisputeCard>,
    /// The proposal waiting for confirmation.
    pub proposal: Option<PanelProposal>,
    /// The resolutions the round takes as it stands (the face-down card never among a
    /// card operation's cards: the panel cannot name it).
    pub offers: Vec<crate::table::dispute::Offer>,
}

/// The proposal as the panel shows it.
pub fn panel_proposal(p: &ProposalView) -> PanelProposal {
    PanelProposal {
        dispute: p.dispute,
        resolution: p.resolution.clone(),
        reason: p.reason.clone(),
        proposed_by: p.proposed_by.clone(),
        second_person: p.second_person,
        round: public_round(&p.round),
        result: p.result.clone(),
        expecting: p.expecting.clone(),
        voided: p.voided.clone(),
        proposal: p.proposal.clone(),
    }
}

/// The open dispute as the panel shows it: the face-down card stays hidden.
pub fn panel_dispute(s: &Snapshot) -> Option<PanelDispute> {
    let d = s.dispute.as_ref()?;
    // The hole card is the dealer's second card; it is hidden as long as the table hides it.
    let mut dealer_cards = 0;
    let cards = d
        .cards
        .iter()
        .map(|c| {
            let to_dealer = c.place.as_deref() == Some("the dealer");
            if to_dealer {
                dealer_cards += 1;
            }
            let hidden = to_dealer && dealer_cards == 2 && s.round.hole_hidden;
            DisputeCard {
                index: c.index,
                card: (!hidden).then_some(c.card),
                place: c.place.clone(),
                held: c.held,
            }
        })
        .collect::<Vec<DisputeCard>>();
    let hidden: Vec<usize> = cards
        .iter()
        .filter(|c| c.card.is_none())
        .map(|c| c.index)
        .collect();
    let offers = d
        .offers
        .iter()
        .cloned()
        .map(|mut o| {
            if let Some(list) = o.cards.as_mut() {
                list.retain(|i| !hidden.contains(i));
                if list.is_empty() && o.possible {
                    o.possible = false;
                    o.why = Some("no_card".into());
                }
            }
            o
        })
        .collect();
    Some(PanelDispute {
        head: d.head.clone(),
        frozen: public_round(&d.frozen),
        held: d.held.clone(),
        cards,
        proposal: d.proposal.as_ref().map(panel_proposal),
        offers,
    })
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

/// Remote play as the dealer's panel shows it: which seats play from afar, the windows the
/// table runs for them (with the time left when the view was built, so the panel counts
/// down on its own clock whatever the two clocks say), and a card a remote player asked
/// for. No player ids: players can see the screen too.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PanelRemote {
    /// The seats remote players hold, in seat order.
    pub seats: Vec<SeatId>,
    /// Those of them with a bet in the open betting window.
    pub bet: Vec<SeatId>,
    /// Remote players at the table without a seat (betting behind, a common draw).
    pub unseated: usize,
    /// How many of them have a bet in the open window.
    pub unseated_bet: usize,
    /// The betting countdown, while it is open.
    pub countdown: Option<PanelTimer>,
    /// The decision timer of the wait the table is in (seat 0: insurance).
    pub decision: Option<PanelTimer>,
    /// The seat whose remote player asked for a card: the dealer deals it from the shoe.
    pub hit: Option<SeatId>,
}

/// A window the table times, as the panel draws it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PanelTimer {
    /// The seat it waits on (0: the betting countdown, or an insurance question).
    pub seat: SeatId,
    /// The time left when this view was built, ms.
    pub remaining_ms: u64,
    /// The window's whole length, ms.
    pub length_ms: u64,
}

/// The panel's remote play from the snapshot's, the table's clock reading `clock_now`
/// (`table::clock`: monotonic, so a wall clock set meanwhile does not move a deadline).
pub fn panel_remote(r: &crate::table::RemoteView, clock_now: u64) -> PanelRemote {
    let timer = |t: &crate::table::TimerView| PanelTimer {
        seat: t.seat,
        remaining_ms: t.clock_ms.saturating_sub(clock_now),
        length_ms: t.length_ms,
    };
    PanelRemote {
        seats: r.seats.iter().map(|s| s.seat).collect(),
        bet: r.seats.iter().filter(|s| s.bet).map(|s| s.seat).collect(),
        unseated: r.unseated.len(),
        unseated_bet: r.unseated.iter().filter(|p| p.bet).count(),
        countdown: r.countdown.as_ref().map(timer),
        decision: r.decision.as_ref().map(timer),
        hit: r.hit.map(|h| h.seat),
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
    /// The answers the engine takes from the first of them (even money only for a
    /// natural).
    pub insurance_allowed: Vec<Action>,
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
    /// The open dispute.
    pub dispute: Option<PanelDispute>,
    /// The settled round whose result is still provisional.
    pub provisional: Option<u64>,
    /// The last finished shoe's integrity verdict when it is suspicious: a notice for the
    /// supervisor until the next shoe is judged (not a lock, not part of `/readyz`).
    pub shoe_alert: Option<crate::integrity::shoe::Verdict>,
    /// Remote play (`None` without it): seats, countdown, decision timer, a card asked
    /// for.
    #[serde(default)]
    pub remote: Option<PanelRemote>,
}

/// The dealer's view of `s`; `clock_now`: the table's clock now, which the remote timers'
/// time left is counted from (`None` without remote play: no remote part).
pub fn dealer_view(
    s: &Snapshot,
    limits: &LimitsView,
    simulated: bool,
    clock_now: Option<u64>,
) -> DealerView {
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
    let insurance_allowed = insurance
        .first()
        .and_then(|seat| s.insurance_answers.get(seat))
        .cloned()
        .unwrap_or_default();
    DealerView {
        insurance_allowed,
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
        dispute: panel_dispute(s),
        provisional: s.provisional,
        shoe_alert: s.shoe_integrity.clone().filter(|v| v.suspicious()),
        // The time left is the one thing here not read off the snapshot: as of
        // `clock_now`, when the view is built (and sent).
        remote: s
            .remote
            .as_ref()
            .zip(clock_now)
            .map(|(r, now)| panel_remote(r, now)),
    }
}
